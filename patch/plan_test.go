package patch

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// files is a tree for Plan to read, counting the reads of each path.
type files struct {
	content map[string]string
	reads   map[string]int
}

func (f *files) read(name string) (string, bool, error) {
	if f.reads == nil {
		f.reads = map[string]int{}
	}
	f.reads[name]++
	c, ok := f.content[name]
	return c, ok, nil
}

// planText parses text and plans it against content.
func planText(t *testing.T, content map[string]string, text string) ([]Change, error) {
	t.Helper()
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	fs := &files{content: content}
	changes, err := p.Plan(fs.read, nil)
	for name, n := range fs.reads {
		if n != 1 {
			t.Errorf("%s read %d times", name, n)
		}
	}
	return changes, err
}

// updateF plans an update of file f, holding src, by the chunk lines given.
func updateF(t *testing.T, src string, chunk ...string) (Change, error) {
	t.Helper()
	text := lines(append(append([]string{"*** Begin Patch", "*** Update File: f"}, chunk...), "*** End Patch")...)
	changes, err := planText(t, map[string]string{"f": src}, text)
	if err != nil {
		return Change{}, err
	}
	if len(changes) != 1 || changes[0].Kind != Update || changes[0].From != "f" {
		t.Fatalf("changes %+v", changes)
	}
	return changes[0], nil
}

func TestPlanUpdate(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		chunk []string
		want  string
		rungs []string
	}{
		{"replace", "a\nb\nc\n", []string{"@@", " a", "-b", "+B", " c"}, "a\nB\nc\n", []string{RungExact}},
		// A blank line after an added one (before *** End Patch), in a
		// file without one: the final line ending, as a chunk that adds
		// alone goes (it went to the top of the file).
		{"adds then a blank line", "one\ntwo\nthree\n", []string{"@@", "+four", ""}, "one\ntwo\nthree\nfour\n", []string{""}},
		// Found only loosely, a chunk whose result is a common line further
		// on is no retry: "pass" is unlike what it replaces, "return nil"
		// stands in several places (edit's rule).
		{"loose, a result unlike the old lines further on", "def f():\n    raise NotImplementedError  \n\ndef g():\n    pass\n",
			[]string{"@@", "-    raise NotImplementedError", "+    pass"}, "def f():\n    pass\n\ndef g():\n    pass\n", []string{RungTrailingWhitespace}},
		{"loose, a result standing twice further on", "\tif a() {\n\t\treturn err  \n\t}\n\tif b() {\n\t\treturn nil\n\t}\n\tif c() {\n\t\treturn nil\n\t}\n",
			[]string{"@@", "-\t\treturn err", "+\t\treturn nil"}, "\tif a() {\n\t\treturn nil\n\t}\n\tif b() {\n\t\treturn nil\n\t}\n\tif c() {\n\t\treturn nil\n\t}\n", []string{RungTrailingWhitespace}},
		// A chunk may begin with its @@ line: at or after that line (the
		// search after it edited the next def f()).
		{"begins with its @@ line", "def f():\n    return 1\n\ndef f():\n    return 1\n", []string{"@@ def f():", " def f():", "-    return 1", "+    return 2"}, "def f():\n    return 2\n\ndef f():\n    return 1\n", []string{RungExact}},
		// An @@ line may name a line inside the chunk: the chunk is where
		// its old lines span that line (it went to the next look-alike).
		{"its @@ line inside it", pyAB, []string{"@@         x = clean(x)", "         x = load()", "-        x = clean(x)", "+        x = normalize(x)", "         return x"},
			strings.Replace(pyAB, "clean", "normalize", 1), []string{RungExact}},
		{"its @@ line its last", pyAB, []string{"@@         return x", "         x = load()", "-        x = clean(x)", "+        x = normalize(x)", "         return x"},
			strings.Replace(pyAB, "clean", "normalize", 1), []string{RungExact}},
		{"lines above its @@ line, holding it", "package p\n\n// A does x.\nfunc A() {\n\tx()\n}\n", []string{"@@ func A() {", " // A does x.", " func A() {", "-\tx()", "+\ty()", " }"},
			"package p\n\n// A does x.\nfunc A() {\n\ty()\n}\n", []string{RungExact}},
		// A removal's lines left that are a part of its old lines, but
		// for white space at the end of a line, prove no retry where they
		// stand before them (as they do without it).
		{"removes under its @@ line, lines left a loose part of the old", "func A() {\n\tlog()\n}\n\nfunc B() {\n\tlog()\n\tlog()\n}\n",
			[]string{"@@ \tlog()", " \tlog()", "-\tlog()  ", " }"}, "func A() {\n\tlog()\n}\n\nfunc B() {\n\tlog()\n}\n", []string{RungTrailingWhitespace}},
		// An @@ line found only loosely, at two places, names no place:
		// the chunk is placed as without it (it went after the first).
		{"begins with its @@ line, a blank line after", "def f():\n    return 1\ndef f():\n    return 1\n", []string{"@@ def f():", " def f():", "-    return 1", "+    return 2", ""}, "def f():\n    return 2\ndef f():\n    return 1\n", []string{RungExact}},
		{"added lines at the end under a loose @@ line at two places", "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n", []string{"@@ def f():", "+# end", "*** End of File"}, "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n# end\n", []string{""}},
		// @@ lines in a row narrow, outermost first: B's f, not A's.
		{"@@ lines in a row", "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n", []string{"@@ class B:", "@@     def f(self):", "-        return 1", "+        return 2"},
			"class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 2\n", []string{RungExact}},
		// A scope found loosely at two places is its first.
		{"a loose scope at two places", "  x\nclass A: \n  x\nclass A: \n  x\n", []string{"@@ class A:", "@@   x", "-  x", "+  y"},
			"  x\nclass A: \n  y\nclass A: \n  x\n", []string{RungExact}},
		{"loose @@ line at two places", "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n", []string{"@@ def f(self):", "     def f(self):", "-        return 1", "+        return 2"}, "class A:\n    def f(self):\n        return 2\nclass B:\n    def f(self):\n        return 1\n", []string{RungExact}},
		// What a chunk writes may stand before its old lines and still
		// not be a retry: under an @@ line past it, with no added text,
		// or found only more loosely than the old lines.
		{"its new lines before its @@ line", retriedSrc, []string{"@@ func Post() {", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}"}, strings.ReplaceAll(retriedSrc, "return err", "return wrap(err)"), []string{RungExact}},
		// A sibling's fix before it, where the chunk adds lines only
		// (Codex applies it at its first match), and a result overlapping
		// the old lines, are no retries.
		{"adds only, the result in a sibling", "func Get() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\nfunc Post() {\n\tresp, err := c.Do(req)\n\tif err != nil {\n}\n",
			[]string{"@@", " \tresp, err := c.Do(req)", "+\tdefer resp.Body.Close()", " \tif err != nil {"},
			"func Get() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\nfunc Post() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\n", []string{RungExact}},
		{"gives back its removed line, the result in a sibling", "func Get() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\nfunc Post() {\n\tresp, err := c.Do(req)\n\tif err != nil {\n}\n",
			[]string{"@@", "-\tresp, err := c.Do(req)", "+\tresp, err := c.Do(req)", "+\tdefer resp.Body.Close()", " \tif err != nil {"},
			"func Get() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\nfunc Post() {\n\tresp, err := c.Do(req)\n\tdefer resp.Body.Close()\n\tif err != nil {\n}\n", []string{RungExact}},
		// Lines added that stand elsewhere, or too slight to tell a retry
		// (a lone brace), are added again.
		{"adds lines that stand elsewhere", "x = 1\ny\n", []string{"@@", "+x = 1"}, "x = 1\ny\nx = 1\n", []string{""}},
		{"adds after its context, half of it there", "f(x)\nlog(x)\n", []string{"@@", " f(x)", "+log(x)", "+log(y)"}, "f(x)\nlog(x)\nlog(y)\nlog(x)\n", []string{RungExact}},
		{"adds a slight line that stands there", "a\n}\n", []string{"@@", "+}"}, "a\n}\n}\n", []string{""}},
		{"adds a slight line back with its removed one", "    a = 1\n    b = 2\n", []string{"@@", "-    a = 1", "+    a = 1", "+    b = 2"}, "    a = 1\n    b = 2\n    b = 2\n", []string{RungExact}},
		// A line added before the context that follows it, a copy of that
		// context, stands there only once the chunk is applied: the file
		// line is the context the chunk names, not the line it adds.
		{"adds a copy of the context that follows", "func f() {\n\twg.Add(1)\n\tgo a()\n\tgo b()\n}\n", []string{"@@", " func f() {", "+\twg.Add(1)", " \twg.Add(1)", " \tgo a()"},
			"func f() {\n\twg.Add(1)\n\twg.Add(1)\n\tgo a()\n\tgo b()\n}\n", []string{RungExact}},
		// Lines alone under their @@ line go after it: the lines before
		// it, the @@ line last, are not where they would stand.
		{"adds under its @@ line what ends with that line", "x := 1\nfoo()\nbar\n", []string{"@@ foo()", "+x := 1", "+foo()"}, "x := 1\nfoo()\nx := 1\nfoo()\nbar\n", []string{""}},
		{"the result overlapping the old lines", "q\nq\nz\n", []string{"@@", " q", "-z", "+q"}, "q\nq\nq\n", []string{RungExact}},
		{"removes lines only", "a\nb\nc\na\nx\nb\n", []string{"@@", " a", "-x", " b"}, "a\nb\nc\na\nb\n", []string{RungExact}},
		{"its new lines before only loosely", "    x\n  x\n", []string{"@@", "-  x", "+x"}, "    x\nx\n", []string{RungExact}},
		{"CRLF file", "a\r\nb\r\nc\r\n", []string{"@@", " a", "-b", "+B1", "+B2"}, "a\r\nB1\r\nB2\r\nc\r\n", []string{RungExact}},
		{"mixed endings: the replaced lines'", "a\r\nb\nc\r\n", []string{"@@", "-b", "+b1", "+b2"}, "a\r\nb1\nb2\nc\r\n", []string{RungExact}},
		{"mixed endings: kept lines keep theirs", "a\r\nb\nc\r\nd\r\n", []string{"@@", " b", "-c", "+x", " d"}, "a\r\nb\nx\r\nd\r\n", []string{RungExact}},
		{"mixed endings: a line replaced between others takes its own", "a\r\nb\nc\r\nd\n", []string{"@@", " a", "-b", "+B", " c"}, "a\r\nB\nc\r\nd\n", []string{RungExact}},
		{"mixed endings: lines replaced take theirs in their places", "x\r\na\nb\r\n", []string{"@@", "-a", "-b", "+A", "+B"}, "x\r\nA\nB\r\n", []string{RungExact}},
		{"mixed endings: more added than removed take the last one's", "a\r\nb\nc\r\n", []string{"@@", "-a", "-b", "+1", "+2", "+3", " c"}, "1\r\n2\n3\nc\r\n", []string{RungExact}},
		{"BOM kept", "\uFEFFa\nb\n", []string{"@@", "-a", "+A"}, "\uFEFFA\nb\n", []string{RungExact}},
		{"BOM and CRLF", "\uFEFFa\r\nb\r\n", []string{"@@", " a", "+x"}, "\uFEFFa\r\nx\r\nb\r\n", []string{RungExact}},
		// Line 1 of a file with a BOM as a diff or cat shows it, the mark
		// in front: the mark, not text of the line.
		{"BOM shown in a context line", "\uFEFFa\nb\n", []string{"@@", " \uFEFFa", "-b", "+B"}, "\uFEFFa\nB\n", []string{RungExact}},
		{"BOM shown in a replaced line", "\uFEFFa\nb\n", []string{"@@", "-\uFEFFa", "+\uFEFFA"}, "\uFEFFA\nb\n", []string{RungExact}},
		{"BOM shown in the @@ line", "\uFEFFdef f():\n  pass\n", []string{"@@ \uFEFFdef f():", "-  pass", "+  return"}, "\uFEFFdef f():\n  return\n", []string{RungExact}},
		// A line of the file that itself starts with U+FEFF (a zero-width
		// no-break space) is matched with it, as in a file without a BOM.
		{"a line starting with U+FEFF in a file with a BOM", "\uFEFFa\n\uFEFFb\nc\n", []string{"@@", " \uFEFFb", "-c", "+C"}, "\uFEFFa\n\uFEFFb\nC\n", []string{RungExact}},
		{"BOM shown beside a line starting with U+FEFF", "\uFEFFa\n\uFEFFb\nc\n", []string{"@@", "-\uFEFFa", "+A", "@@", " \uFEFFb", "-c", "+C"}, "\uFEFFA\n\uFEFFb\nC\n", []string{RungExact, RungExact}},
		{"a final newline is added, as Codex does", "a\nb", []string{"@@", "-b", "+c"}, "a\nc\n", []string{RungExact}},
		{"a CRLF ends a line added after the last", "a\r\nb", []string{"@@", " b", "+x"}, "a\r\nb\r\nx\r\n", []string{RungExact}},
		// Far from the chunks, the bytes stay: a final newline was added.
		{"an untouched last line keeps having none", "a\r\nb", []string{"@@", " a", "+x"}, "a\r\nx\r\nb", []string{RungExact}},
		{"an untouched last line keeps having none, far off", "a\nb\nc", []string{"@@", "-a", "+A"}, "A\nb\nc", []string{RungExact}},
		// Under an @@ line naming its function, a loose chunk's first place
		// after it is the one, as Codex has it (it was AMBIGUOUS_MATCH).
		{"loose, under an @@ line", "def a():\n    return 1\ndef b():\n\treturn 1\n", []string{"@@ def a():", "-return 1", "+return 2"}, "def a():\n    return 2\ndef b():\n\treturn 1\n", []string{RungWhitespace}},
		{"loose, under an @@ line found loosely once", "  def a():\n    return 1\ndef b():\n\treturn 1\n", []string{"@@ def a():", "-return 1", "+return 2"}, "  def a():\n    return 2\ndef b():\n\treturn 1\n", []string{RungWhitespace}},
		{"exact: the first place after the chunk before, as Codex", "x\na\ny\nx\na\ny\n", []string{"@@", " x", "-a", "+A", " y"}, "x\nA\ny\nx\na\ny\n", []string{RungExact}},
		{"only additions go at the end", "a\nb\n", []string{"@@", "+c", "+d"}, "a\nb\nc\nd\n", []string{""}},
		{"before a last blank line, as Codex", "a\n\n", []string{"@@", "+c"}, "a\nc\n\n", []string{""}},
		{"after the @@ context line", "def f():\n  pass\ndef g():\n", []string{"@@ def f():", "+  x = 1"}, "def f():\n  x = 1\n  pass\ndef g():\n", []string{""}},
		{"into an empty file", "", []string{"@@", "+a"}, "a\n", []string{""}},
		{"every line removed", "a\nb\n", []string{"@@", "-a", "-b"}, "", []string{RungExact}},
		{"a blank line added at the end", "a\n", []string{"@@", " a", "+"}, "a\n\n", []string{RungExact}},
		{"end of file", "x\ny\nx\ny\n", []string{"@@", " x", "-y", "+Y", "*** End of File"}, "x\ny\nx\nY\n", []string{RungExact}},
		{"@@ context narrows", "def f():\n  return 1\ndef g():\n  return 1\n", []string{"@@ def g():", "-  return 1", "+  return 2"}, "def f():\n  return 1\ndef g():\n  return 2\n", []string{RungExact}},
		{"chunks move forward", "x\nx\n", []string{"@@", "-x", "+1", "@@", "-x", "+2"}, "1\n2\n", []string{RungExact, RungExact}},
		{"a last blank old line is the end of the file", "a\nb\n", []string{"@@", " a", "-b", "+B", ""}, "a\nB\n", []string{RungExact}},
		// Indentation off by different amounts: the added lines take the
		// removed lines' change (they were written flush left).
		{"uneven indentation, the removed lines' change", "def f(x):\n    if x:\n        y = 1\n    return y\n", []string{"@@ def f(x):", " if x:", "-y = 1", "+y = 2", " return y"}, "def f(x):\n    if x:\n        y = 2\n    return y\n", []string{RungWhitespace}},
		// Two spaces for four: each level stands for the file's, the
		// added lines' too (all took the removed line's shift, "z = 4"
		// 6 columns in).
		{"uneven indentation, level by level", "def f(a):\n    if a:\n        x = 1\n    y = 2\n    return y\n", []string{"@@", "   if a:", "-    x = 1", "+    x = 3", "+  z = 4", "   y = 2"}, "def f(a):\n    if a:\n        x = 3\n    z = 4\n    y = 2\n    return y\n", []string{RungWhitespace}},
		// A tab written as four spaces in a file that mixes them: no
		// change of columns, the lines as given (they were refused).
		{"tabs and spaces mixed, the same columns", "int f() {\n\tint a = 1;\n    int b = 2;\n    return a + b;\n}\n", []string{"@@", "     int a = 1;", "     int b = 2;", "+    int c = 3;", "     return a + b;"}, "int f() {\n\tint a = 1;\n    int b = 2;\n    int c = 3;\n    return a + b;\n}\n", []string{RungWhitespace}},
		// GNU style, tabs of 8 among spaces, a patch of the tabbed lines
		// in spaces: each level stands for the file's (taken for the
		// same columns at a tab of 4, the added lines went in at the if's
		// level).
		{"GNU style, tabs of 8", "void f(int a)\n{\n  if (a)\n    {\n      x = 1;\n\tif (x)\n\t  {\n\t    g ();\n\t  }\n    }\n}\n", []string{"@@", "       x = 1;", "     if (x)", "       {", "-        g ();", "+        g (1);", "+        h ();", "       }"}, "void f(int a)\n{\n  if (a)\n    {\n      x = 1;\n\tif (x)\n\t  {\n\t    g (1);\n\t    h ();\n\t  }\n    }\n}\n", []string{RungWhitespace}},
		{"uneven indentation, halved", "a:\n  b:\n    c: 1\n  d: 2\n", []string{"@@", "     b:", "-        c: 1", "+        c: 3", "+        e: 4", "     d: 2"}, "a:\n  b:\n    c: 3\n    e: 4\n  d: 2\n", []string{RungWhitespace}},
		{"context lines keep the file's text", "  foo  \nbar\n", []string{"@@", " foo", "-bar", "+baz"}, "  foo  \nbaz\n", []string{RungWhitespace}},
		{"trailing whitespace", "a \nb\n", []string{"@@", "-a", "+A"}, "A\nb\n", []string{RungTrailingWhitespace}},
		{"unicode punctuation", "say \u201chi\u201d \u2014 ok\n", []string{"@@", "-say \"hi\" - ok", "+say bye"}, "say bye\n", []string{RungUnicode}},
		// As edit's unicode rung: NFD against NFC, a ligature, an ellipsis.
		{"NFD context against NFC text", "caf\u00e9\nnext\n", []string{"@@", " cafe\u0301", "-next", "+NEXT"}, "caf\u00e9\nNEXT\n", []string{RungUnicode}},
		{"letters against a ligature", "\ufb01le\nx\n", []string{"@@", "-file", "+FILE"}, "FILE\nx\n", []string{RungUnicode}},
		// A line removed for one like the @@ line, which the chunk does
		// not begin with: the @@ line standing there is no retry's result.
		{"a line removed for the @@ line's text", "def f():\n    return 1\ndef g():\n    pass\n", []string{"@@     return 1", "-    pass", "+    return 1"}, "def f():\n    return 1\ndef g():\n    return 1\n", []string{RungExact}},
		// So too when the line removed is like the one added (a retry's
		// result would prove it): the @@ line is added, no context kept.
		{"a line replaced by the @@ line's text", "def f():\n    return 1\ndef g():\n    return 2\n", []string{"@@     return 1", "-    return 2", "+    return 1"}, "def f():\n    return 1\ndef g():\n    return 1\n", []string{RungExact}},
		{"three dots against an ellipsis", "wait\u2026\n", []string{"@@", "-wait...", "+go"}, "go\n", []string{RungUnicode}},
		// As many lines of each ending around an inserted line: "\n" (it
		// took the file's usual "\r\n").
		{"mixed endings: a line inserted among as many of each", "a\r\nb\nc\r\nd\r\n", []string{"@@", " a", " b", "+x"}, "a\r\nb\nx\nc\r\nd\r\n", []string{RungExact}},
		// A chunk that adds at the end, then one at the top: applied in
		// the file's order.
		{"adds at the end, then changes the top", "a\nb\n", []string{"@@", "+c", "@@", "-a", "+A"}, "A\nb\nc\n", []string{"", RungExact}},
		// A blank context line first, standing for the final line ending:
		// the chunk adds at the end.
		{"a blank context line, then adds", "a\n", []string{"@@", "", "+xyzw"}, "a\nxyzw\n", []string{""}},
		// Found only loosely right after the chunk before, the lines it
		// leaves standing exactly as that chunk's old line: no retry, that
		// line is changed by the chunk before.
		{"loose, its result the chunk before's old line", "key = new_value\nkey = old_value  \n", []string{"@@", "-key = new_value", "+key = newer_value", "@@", "-key = old_value", "+key = new_value"},
			"key = newer_value\nkey = new_value\n", []string{RungExact, RungTrailingWhitespace}},
		// A loose chunk that adds lines only, its result exactly further
		// on: added again, as without an @@ line it says nothing of a retry.
		{"loose, adds only, its result further on", "log a  \nlog b\nx\nlog a\nlog(y)\nlog b\n", []string{"@@", " log a", "+log(y)", " log b"},
			"log a  \nlog(y)\nlog b\nx\nlog a\nlog(y)\nlog b\n", []string{RungTrailingWhitespace}},
		// Without an @@ line, a chunk that removes lines only proves no
		// retry by what it leaves standing before its old lines.
		{"removes lines only, what it leaves before", "foo()\nbar()\nx\nfoo()\ndebug()\nbar()\n", []string{"@@", " foo()", "-debug()", " bar()"}, "foo()\nbar()\nx\nfoo()\nbar()\n", []string{RungExact}},
		// What it leaves, a retry's text, stands before only more loosely
		// than its old lines are found: no retry.
		{"its result before only loosely", "    return wrap(err)\n\treturn err\n", []string{"@@", "-\treturn err", "+\treturn wrap(err)"}, "    return wrap(err)\n\treturn wrap(err)\n", []string{RungExact}},
		{"unicode rung re-indents", "\tsay \u201chi\u201d\n", []string{"@@", "-    say \"hi\"", "+    say bye"}, "\tsay bye\n", []string{RungUnicode}},
		// Re-indented, the lines inside a literal that the added lines
		// open and close are left as given, as edit leaves newText's: a
		// here-document's body and terminator ("    EOF" ended none: bash
		// said syntax error), a raw string's; a docstring, whose
		// indentation is none of its value, is shifted with its code.
		{"re-indented, a here-document left as given", shMissing, []string{"@@", " if [ -z \"$1\" ]; then", "     echo missing", "+    cat <<EOF", "+usage: x", "+EOF", "     exit 1"},
			strings.Replace(shMissing, "        exit 1", "        cat <<EOF\nusage: x\nEOF\n        exit 1", 1), []string{RungWhitespace}},
		{"re-indented, a docstring shifted", "class A:\n    def f(self):\n        return 1\n", []string{"@@", " def f(self):", "+    \"\"\"Return one.", "+", "+    Details.", "+    \"\"\"", "     return 1"},
			"class A:\n    def f(self):\n        \"\"\"Return one.\n\n        Details.\n        \"\"\"\n        return 1\n", []string{RungWhitespace}},
		{"re-indented with tabs, a raw string left as given", "func f() {\n\tx := 1\n\treturn x\n}\n", []string{"@@", " x := 1", "+q := `", "+  a", "+`", " return x"},
			"func f() {\n\tx := 1\n\tq := `\n  a\n`\n\treturn x\n}\n", []string{RungWhitespace}},
		// A PHP heredoc's body and terminator, a C++ and a Rust raw
		// string's inside (the body was shifted, its value changed).
		{"re-indented, a PHP heredoc left as given", "<?php\nfunction f() {\n    if ($x) {\n        return 1;\n    }\n}\n", []string{"@@", " if ($x) {", "+    $s = <<<\"EOT\"", "+  a", "+EOT;", "     return 1;"},
			"<?php\nfunction f() {\n    if ($x) {\n        $s = <<<\"EOT\"\n  a\nEOT;\n        return 1;\n    }\n}\n", []string{RungWhitespace}},
		{"re-indented, C++ and Rust raw strings left as given", "fn f() {\n    if x {\n        return;\n    }\n}\n", []string{"@@", " if x {", "+    let s = r##\"", "+  \"#", "+\"##;", "+    g(R\"x(", "+  )\"", "+)x\");", "     return;"},
			"fn f() {\n    if x {\n        let s = r##\"\n  \"#\n\"##;\n        g(R\"x(\n  )\"\n)x\");\n        return;\n    }\n}\n", []string{RungWhitespace}},
		// Old lines inside a string opened above them: its closing quotes,
		// which an added line copies, open none (read as an opener, they
		// paired with the docstring's and left "return" 4 columns left).
		{"a string opened above the chunk: shifted whole", "class A:\n    def f(self):\n        s = \"\"\"\n        one\n        two\"\"\".strip()\n        return s\n", []string{"@@", "-    two\"\"\".strip()", "-    return s", "+    two, changed\"\"\".strip()", "+    return s.upper()", "+", "+def g(self):", "+    \"\"\"G.\"\"\"", "+    return 1"},
			"class A:\n    def f(self):\n        s = \"\"\"\n        one\n        two, changed\"\"\".strip()\n        return s.upper()\n\n    def g(self):\n        \"\"\"G.\"\"\"\n        return 1\n", []string{RungWhitespace}},
		// Shifted left, a literal's line at column 0 would go left of the
		// margin (it was PATCH_VERIFY); level by level, its column is no
		// level of the old lines' (it was PATCH_VERIFY, uneven).
		{"shifted left, a literal's line at column 0", "if x:\n    y = 1\n", []string{"@@", "     if x:", "-        y = 1", "+        run('''", "+a", "+''')"},
			"if x:\n    run('''\na\n''')\n", []string{RungWhitespace}},
		{"level by level, a literal's line at column 0", "def f(a):\n    if a:\n        x = 1\n    return x\n", []string{"@@", "   if a:", "-    x = 1", "+    os.system('''", "+echo hi", "+''')", "   return x"},
			"def f(a):\n    if a:\n        os.system('''\necho hi\n''')\n    return x\n", []string{RungWhitespace}},
		// A removed line between added ones: they land together, one run.
		{"a literal's lines around a removed line", "main() {\n    if x; then\n        exit 1\n    fi\n}\n", []string{"@@", " if x; then", "+    cat <<EOF", "-    exit 1", "+usage", "+EOF", "+    exit 2", " fi"},
			"main() {\n    if x; then\n        cat <<EOF\nusage\nEOF\n        exit 2\n    fi\n}\n", []string{RungWhitespace}},
		// A docstring a context line opens, which an added line closes:
		// its closing quotes open no literal (scanned without the context,
		// the added lines read "return 2" up to the next docstring as one,
		// and left it 4 columns left of its block).
		{"a literal a context line opens", "class A:\n    def f(self):\n        \"\"\"Doc.\n        \"\"\"\n        return 1\n", []string{"@@", "     \"\"\"Doc.", "-    \"\"\"", "+    More.", "+    \"\"\"", "+    return 2", "+", "+def g(self):", "+    \"\"\"G.", "+", "+    Details.", "+    \"\"\"", "-    return 1"},
			"class A:\n    def f(self):\n        \"\"\"Doc.\n        More.\n        \"\"\"\n        return 2\n\n    def g(self):\n        \"\"\"G.\n\n        Details.\n        \"\"\"\n", []string{RungWhitespace}},
		// A context line between the added lines that open and close a
		// literal is the file's, matched in the chunk's frame: the
		// literal is shifted whole, as edit shifts one that keeps a line
		// of oldText.
		{"a literal holding a context line is shifted whole", "class A:\n    def f(self):\n        x = 1\n        return x\n", []string{"@@", " def f(self):", "+    s = \"\"\"", "     x = 1", "+    \"\"\"", "     return x"},
			"class A:\n    def f(self):\n        s = \"\"\"\n        x = 1\n        \"\"\"\n        return x\n", []string{RungWhitespace}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := updateF(t, tt.src, tt.chunk...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Content != tt.want {
				t.Errorf("content %q, want %q", c.Content, tt.want)
			}
			var rungs []string
			for _, l := range c.Chunks {
				rungs = append(rungs, l.Rung)
			}
			if !reflect.DeepEqual(rungs, tt.rungs) {
				t.Errorf("rungs %q, want %q", rungs, tt.rungs)
			}
		})
	}
}

func TestPlanLocated(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		chunk []string
		want  []Located
	}{
		{"replaced, then added", "a\nb\nc\nd\n", []string{"@@", "-b", "+B", "@@", "+e"}, []Located{{PatchLine: 3, Line: 2, Rung: RungExact}, {PatchLine: 6, Line: 5}}},
		// A last blank line, the final line ending: added at the end.
		{"added, then a blank line", "one\ntwo\nthree\n", []string{"@@", "+four", ""}, []Located{{PatchLine: 3, Line: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := updateF(t, tt.src, tt.chunk...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Chunks, tt.want) {
				t.Errorf("located %+v, want %+v", c.Chunks, tt.want)
			}
		})
	}
}

func TestPlanOps(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		body  []string
		want  []Change
	}{
		{"add, then update", nil,
			[]string{"*** Add File: a", "+x", "*** Update File: a", "@@", "-x", "+y"},
			[]Change{{Path: "a", Kind: Add, Content: "y\n", Chunks: []Located{{PatchLine: 5, Line: 1, Rung: RungExact}}}}},
		{"add over a file", map[string]string{"a": "old\n"},
			[]string{"*** Add File: a", "+new"},
			[]Change{{Path: "a", Kind: Update, Content: "new\n"}}},
		{"move", map[string]string{"a": "x\n"},
			[]string{"*** Update File: a", "*** Move to: d/b", "@@", "-x", "+y"},
			[]Change{{Path: "a", Kind: Delete}, {Path: "d/b", Kind: Add, Content: "y\n", From: "a", Chunks: []Located{{PatchLine: 4, Line: 1, Rung: RungExact}}}}},
		{"move over a file", map[string]string{"a": "x\n", "b": "z\n"},
			[]string{"*** Update File: a", "*** Move to: b", "@@", "-x", "+y"},
			[]Change{{Path: "a", Kind: Delete}, {Path: "b", Kind: Update, Content: "y\n", From: "a", Chunks: []Located{{PatchLine: 4, Line: 1, Rung: RungExact}}}}},
		{"move to itself", map[string]string{"a": "x\n"},
			[]string{"*** Update File: a", "*** Move to: ./a", "@@", "-x", "+y"},
			[]Change{{Path: "a", Kind: Update, Content: "y\n", From: "a", Chunks: []Located{{PatchLine: 4, Line: 1, Rung: RungExact}}}}},
		{"added, then moved: no mode to keep", nil,
			[]string{"*** Add File: a", "+x", "*** Update File: a", "*** Move to: b", "@@", "+y"},
			[]Change{{Path: "b", Kind: Add, Content: "x\ny\n", Chunks: []Located{{PatchLine: 6, Line: 2}}}}},
		{"deleted, then added", map[string]string{"a": "x\n"},
			[]string{"*** Delete File: a", "*** Add File: a", "+y"},
			[]Change{{Path: "a", Kind: Update, Content: "y\n"}}},
		{"added lines take the file's indentation", map[string]string{"t.go": "f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n"},
			[]string{"*** Update File: t.go", "@@", "     if x {", "-        return 1", "+        return 2", "+        // done", "     }"},
			[]Change{{Path: "t.go", Kind: Update, Content: "f() {\n\tif x {\n\t\treturn 2\n\t\t// done\n\t}\n}\n", From: "t.go", Chunks: []Located{{PatchLine: 3, Line: 2, Rung: RungWhitespace}}}}},
		// Matched at column 0 of a tab-indented file: the added lines it
		// indents are indented with tabs, as the file is.
		{"a region at column 0 takes the file's tabs", map[string]string{"t.go": "f() {\n\tx := 1\n}\n\nvar y = 1\n"},
			[]string{"*** Update File: t.go", "@@", "-    var y = 1", "+    var y = func() int {", "+        return 1", "+    }()"},
			[]Change{{Path: "t.go", Kind: Update, Content: "f() {\n\tx := 1\n}\n\nvar y = func() int {\n\treturn 1\n}()\n", From: "t.go", Chunks: []Located{{PatchLine: 3, Line: 5, Rung: RungWhitespace}}}}},
		// Absolute paths: the check for a file below a file walked up
		// from "/" for ever.
		{"absolute paths", map[string]string{"/w/a": "x\n"},
			[]string{"*** Add File: /w/n", "+y", "*** Update File: /w/a", "@@", "-x", "+z"},
			[]Change{{Path: "/w/n", Kind: Add, Content: "y\n"}, {Path: "/w/a", Kind: Update, Content: "z\n", From: "/w/a", Chunks: []Located{{PatchLine: 5, Line: 1, Rung: RungExact}}}}},
		{"two updates, one path however written", map[string]string{"d/a": "1\n2\n"},
			[]string{"*** Update File: d/a", "@@", "-1", "+one", "*** Update File: ./d//a", "@@", "-2", "+two"},
			[]Change{{Path: "d/a", Kind: Update, Content: "one\ntwo\n", From: "d/a", Chunks: []Located{{PatchLine: 3, Line: 1, Rung: RungExact}, {PatchLine: 7, Line: 2, Rung: RungExact}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := lines(append(append([]string{"*** Begin Patch"}, tt.body...), "*** End Patch")...)
			changes, err := planText(t, tt.files, text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(changes, tt.want) {
				t.Errorf("changes %+v\nwant %+v", changes, tt.want)
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		body   []string
		code   fault.Code
		detail map[string]any
		hint   string // part of the hint
	}{
		{"delete a missing file", nil, []string{"*** Delete File: a"},
			fault.CodeNotFound, map[string]any{"patchLine": 2}, "check the path"},
		{"update a missing file", nil, []string{"*** Update File: a", "@@", "+x"},
			fault.CodeNotFound, map[string]any{"patchLine": 2}, "*** Add File: a"},
		{"update a deleted file", map[string]string{"a": "x\n"}, []string{"*** Delete File: a", "*** Update File: a", "@@", "+x"},
			fault.CodeNotFound, map[string]any{"patchLine": 3}, "check the path"},
		{"update a moved file", map[string]string{"a": "x\n"}, []string{"*** Update File: a", "*** Move to: b", "@@", "+y", "*** Update File: a", "@@", "+z"},
			fault.CodeNotFound, map[string]any{"patchLine": 6}, "check the path"},
		// A move sent again: the file is gone, and its destination holds
		// the change (the hint sent the caller to add the old file again).
		{"update and move, retried", map[string]string{"pkg/new.py": "x = 2\n"}, []string{"*** Update File: old.py", "*** Move to: pkg/new.py", "@@", "-x = 1", "+x = 2"},
			fault.CodeNotFound, map[string]any{"patchLine": 2, "movedTo": "pkg/new.py", "newAt": 1}, "looks applied already"},
		// Its destination holding a part of the change only: the hint
		// names the chunks pending (it said nothing was left to do).
		{"update and move, half of it in the destination", map[string]string{"pkg/new.py": "x = 2\ny = 1\n"}, []string{"*** Update File: old.py", "*** Move to: pkg/new.py", "@@", "-x = 1", "+x = 2", "@@", "-y = 1", "+y = 2"},
			fault.CodeNotFound, map[string]any{"patchLine": 2, "movedTo": "pkg/new.py", "newAt": 1, "pending": []int{2}}, "chunk 2 is not"},
		{"update and move onto a file without the change", map[string]string{"pkg/new.py": "y = 2\n"}, []string{"*** Update File: old.py", "*** Move to: pkg/new.py", "@@", "-x = 1", "+x = 2"},
			fault.CodeNotFound, map[string]any{"patchLine": 2}, "*** Add File: old.py"},
		{"adds under a loose @@ line at two places", map[string]string{"c.py": "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n"}, []string{"*** Update File: c.py", "@@ def f():", "+    x = 1"},
			fault.CodeAmbiguousMatch, map[string]any{"path": "c.py", "chunk": 1, "patchLine": 3, "lines": []int{2, 5}, "rung": RungWhitespace}, "give the @@ line as the file spells it"},
		{"adds then a blank line under a loose @@ line at two places", map[string]string{"c.py": "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n"}, []string{"*** Update File: c.py", "@@ def f():", "+    x = 1", ""},
			fault.CodeAmbiguousMatch, map[string]any{"path": "c.py", "chunk": 1, "patchLine": 3, "lines": []int{2, 5}, "rung": RungWhitespace}, "give the @@ line as the file spells it"},
		{"a scope not found", map[string]string{"a.py": "class A:\n    def f(self):\n        return 1\n"}, []string{"*** Update File: a.py", "@@ class B:", "@@     def f(self):", "-        return 1", "+        return 2"},
			fault.CodePatchVerify, map[string]any{"path": "a.py", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 1, EndLine: 1, Similarity: 0.71, Text: "class A:"}}, "read the file there"},
		{"chunk not found", map[string]string{"a": "one\ntwo\nthree\n"}, []string{"*** Update File: a", "@@", "-one", "+1", "@@", "-tree", "+3"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 2, "patchLine": 6,
				"closest": Region{StartLine: 3, EndLine: 3, Similarity: 0.57, Text: "three"}}, "closest is line 3 "},
		{"context not found", map[string]string{"a": "def f():\n  pass\n"}, []string{"*** Update File: a", "@@ def g():", "-  pass"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 1, EndLine: 1, Similarity: 0.71, Text: "def f():"}}, "closest is line 1 "},
		{"chunks out of order", map[string]string{"a": "one\ntwo\n"}, []string{"*** Update File: a", "@@", "-two", "+2", "@@", "-one", "+1"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 2, "patchLine": 6,
				"closest": Region{StartLine: 1, EndLine: 1, Similarity: 1, Text: "one"}}, "order of the file"},
		// Found alike where it cannot stand: the hint says why, where
		// "copy them exactly" sent the caller back to lines it had copied.
		{"end of file elsewhere", map[string]string{"a": "x\ny\nend\n"}, []string{"*** Update File: a", "@@", "-x", "-y", "+z", "*** End of File"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 1, EndLine: 2, Similarity: 1, Text: "x\ny"}}, "must be the file's last lines"},
		{"chunk longer than the file", map[string]string{"a": "one\ntwo\n"}, []string{"*** Update File: a", "@@", "-one", "-two", "-three", "+x"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 1, EndLine: 2, Similarity: 0.55, Text: "one\ntwo"}}, "3 lines to find and the file has 2"},
		// Two chunks that share a context line overlap: not out of order.
		{"chunks sharing a line", map[string]string{"a": "1\n2\n3\n4\n5\n6\n"}, []string{"*** Update File: a", "@@", " 1", "-2", "+two", " 3", "@@", " 3", "-4", "+four", " 5"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 2, "patchLine": 8,
				"closest": Region{StartLine: 3, EndLine: 5, Similarity: 1, Text: "3\n4\n5"}}, "overlap the chunk before"},
		{"nothing alike", map[string]string{"a": "xyz\n"}, []string{"*** Update File: a", "@@", "-abc"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3}, "read the file"},
		{"empty file", map[string]string{"a": ""}, []string{"*** Update File: a", "@@", "-abc"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3}, "read the file"},
		{"overlap", map[string]string{"a": "x\ny\n"}, []string{"*** Update File: a", "@@", "-y", "+Y", "@@", " x", "-y", "+Z", "*** End of File"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunks": []int{1, 2}, "patchLine": 2}, "merge the two chunks"},
		{"two moves to one path", map[string]string{"a": "a1\n", "b": "b1\n"}, []string{"*** Update File: a", "*** Move to: c", "@@", "-a1", "+A1", "*** Update File: b", "*** Move to: c", "@@", "-b1", "+B1"},
			fault.CodePatchVerify, map[string]any{"patchLine": 7, "wroteAt": 2}, "write each path once"},
		{"a move onto an added file", map[string]string{"a": "a1\n"}, []string{"*** Add File: c", "+new", "*** Update File: a", "*** Move to: c", "@@", "-a1", "+A1"},
			fault.CodePatchVerify, map[string]any{"patchLine": 4, "wroteAt": 2}, "write each path once"},
		// A file changed in place, then written whole: the change is lost.
		{"a move onto an updated file", map[string]string{"a": "a1\n", "c": "c1\n"}, []string{"*** Update File: c", "@@", "-c1", "+C1", "*** Update File: a", "*** Move to: c", "@@", "-a1", "+A1"},
			fault.CodePatchVerify, map[string]any{"patchLine": 6, "changedAt": 2}, "write each path once"},
		{"an add over an updated file", map[string]string{"c": "c1\n"}, []string{"*** Update File: c", "@@", "-c1", "+C1", "*** Add File: c", "+new"},
			fault.CodePatchVerify, map[string]any{"patchLine": 6, "changedAt": 2}, "write each path once"},
		// A file written or changed, then deleted: what the earlier section
		// did was dropped, with success and exit 0 (an add then a delete
		// answered no file at all).
		{"a delete of an added file", nil, []string{"*** Add File: a", "+x", "*** Delete File: a"},
			fault.CodePatchVerify, map[string]any{"patchLine": 4, "wroteAt": 2}, "leave out one of the two sections"},
		{"a delete of an updated file", map[string]string{"a": "one\n"}, []string{"*** Update File: a", "@@", "-one", "+ONE", "*** Delete File: a"},
			fault.CodePatchVerify, map[string]any{"patchLine": 6, "changedAt": 2}, "leave out one of the two sections"},
		{"a delete of a file moved there", map[string]string{"a": "one\n"}, []string{"*** Update File: a", "*** Move to: b", "@@", "-one", "+ONE", "*** Delete File: b"},
			fault.CodePatchVerify, map[string]any{"patchLine": 7, "wroteAt": 2}, "leave out one of the two sections"},
		{"a delete of a file added over one", map[string]string{"a": "one\n"}, []string{"*** Add File: a", "+new", "*** Delete File: ./a"},
			fault.CodePatchVerify, map[string]any{"patchLine": 4, "wroteAt": 2}, "leave out one of the two sections"},
		{"a file added below an added file", nil, []string{"*** Add File: d", "+y", "*** Add File: d/x", "+x"},
			fault.CodePatchVerify, map[string]any{"patchLine": 4, "fileAt": 2}, "another name"},
		{"a file added below an added file, absolute", nil, []string{"*** Add File: /d", "+y", "*** Add File: /d/x", "+x"},
			fault.CodePatchVerify, map[string]any{"patchLine": 4, "fileAt": 2}, "another name"},
		{"a file added above an added file", nil, []string{"*** Add File: d/e/x", "+x", "*** Add File: d", "+y"},
			fault.CodePatchVerify, map[string]any{"patchLine": 2, "fileAt": 4}, "another name"},
		{"a file moved above an added file", map[string]string{"a": "a1\n"}, []string{"*** Add File: d/x", "+x", "*** Update File: a", "*** Move to: d", "@@", "-a1", "+A1"},
			fault.CodePatchVerify, map[string]any{"patchLine": 2, "fileAt": 4}, "another name"},
		// A chunk found only loosely, at two places: a guess (edit's rule).
		{"ambiguous at a loose rung", map[string]string{"a": "fn a() {\n    return 1\n}\nfn b() {\n\treturn 1\n}\n"}, []string{"*** Update File: a", "@@", "-return 1", "+return 2"},
			fault.CodeAmbiguousMatch, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{2, 5}, "rung": RungWhitespace}, "tell the places apart"},
		// An @@ line found only loosely at two places names neither
		// (Codex took the first).
		{"ambiguous under an @@ line found loosely twice", map[string]string{"a": "    f\n  b\n\tf\n  b\n"}, []string{"*** Update File: a", "@@ f", "-b", "+B"},
			fault.CodeAmbiguousMatch, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{2, 4}, "rung": RungWhitespace}, "tell the places apart"},
		// Indentation off by different amounts on the removed lines too:
		// where the added lines go would be a guess (they were written
		// as given, at column 0, breaking the block).
		{"uneven indentation, no change fits", map[string]string{"a": "def f(x):\n    if x:\n        y = 1\n"}, []string{"*** Update File: a", "@@", "-if x:", "-y = 1", "+if x:", "+y = 2"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{2, 3}, "rung": RungWhitespace}, "with their indentation"},
		{"uneven indentation, an added level unknown", map[string]string{"a": "def f(a):\n    if a:\n        x = 1\n"}, []string{"*** Update File: a", "@@", "   if a:", "-    x = 1", "+      w = 2"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{2, 3}, "rung": RungWhitespace}, "with their indentation"},
		// Context indented more deeply than the file: an added line left of
		// it would go left of the margin (it was written at column 0).
		{"an added line left of the margin", map[string]string{"a": "def f():\n    return 1\n"}, []string{"*** Update File: a", "@@", "     def f():", "         return 1", "+def g():"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{1, 2}, "rung": RungWhitespace, "addedLine": "def g():"}, "read lines 1-2 and copy"},
		{"uneven indentation, nothing removed", map[string]string{"a": "if x:\n    y = 1\nz\n"}, []string{"*** Update File: a", "@@", " if x:", " y = 1", "+w = 2", " z"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "lines": []int{1, 3}, "rung": RungWhitespace}, "with their indentation"},
		{"lines above its @@ line", map[string]string{"h.go": "package p\n\n// A does x.\nfunc A() {\n\tx()\n}\n"}, []string{"*** Update File: h.go", "@@ func A() {", "-// A does x.", "+// A does y."},
			fault.CodePatchVerify, map[string]any{"path": "h.go", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 3, EndLine: 3, Similarity: 1, Text: "// A does x."}}, "sought after its @@ line, line 4"},
		// Above the chunk before, a chunk's lines are out of order, @@
		// line or none: its @@ line too is sought after that chunk.
		{"lines above the chunk before, under an @@ line", map[string]string{"a": "func A() {\n\ta()\n}\n\nfunc B() {\n\tb()\n}\n"}, []string{"*** Update File: a", "@@ func B() {", "-\tb()", "+\tbb()", "@@ }", " func A() {", "-\ta()", "+\taa()"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 2, "patchLine": 6,
				"closest": Region{StartLine: 1, EndLine: 2, Similarity: 1, Text: "func A() {\n\ta()"}}, "chunks must follow the order of the file"},
		{"all or nothing", map[string]string{"a": "x\n"}, []string{"*** Add File: b", "+new", "*** Update File: a", "@@", "-nope"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 5}, "read the file"},
		// A replacement whose result stands before its old lines, however
		// unlike them, is refused: retried, it changed the next place; a
		// first send meeting its result there by chance ("pass" in a
		// method above) is told to name its place.
		{"a common result unlike the old lines before them", map[string]string{"a": "class Base:\n    def a(self):\n        pass\n\n    def b(self):\n        raise NotImplementedError\n"}, []string{"*** Update File: a", "@@", "-        raise NotImplementedError", "+        pass"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 3, "oldAt": 6}, "give the chunk an @@ line naming the function or class there"},
		// A retried patch (the agent lost the answer): its lines are no
		// longer where its @@ line leads, the same lines are further on,
		// in another function, which it changed with success.
		{"retried under its @@ line", map[string]string{"a": retriedSrc}, []string{"*** Update File: a", "@@ func Get() {", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2, "oldAt": 7}, "looks applied already at line 2"},
		// A chunk that begins with its own @@ line, retried: its result
		// stands at the @@ line, which the search for its old lines
		// passed.
		{"retried, beginning with its @@ line", map[string]string{"a": "func A() {\n\tif err != nil {\n\t\tz()\n\t}\n}\n\nfunc B() {\n\tif err != nil {\n\t\tx()\n\t}\n}\n"}, []string{"*** Update File: a", "@@ \tif err != nil {", " \tif err != nil {", "-\t\tx()", "+\t\tz()", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2, "oldAt": 8}, "looks applied already at line 2"},
		{"retried, beginning with its @@ line, its old lines gone", map[string]string{"a": "func A() {\n\tif err != nil {\n\t\tz()\n\t}\n}\n"}, []string{"*** Update File: a", "@@ \tif err != nil {", " \tif err != nil {", "-\t\tx()", "+\t\tz()", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2,
				"closest": Region{StartLine: 2, EndLine: 4, Similarity: 0.93, Text: "\tif err != nil {\n\t\tz()\n\t}"}}, "looks applied already at line 2"},
		{"retried without an @@ line", map[string]string{"a": retriedSrc}, []string{"*** Update File: a", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2, "oldAt": 7}, "looks applied already at line 2"},
		// Retried, its old lines nowhere: still not found, but the hint
		// says where its result stands instead of sending the caller to
		// copy lines alike.
		{"retried, its old lines gone", map[string]string{"a": "func Get() {\n\tif err != nil {\n\t\treturn wrap(err)\n\t}\n}\n"}, []string{"*** Update File: a", "@@ func Get() {", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2,
				"closest": Region{StartLine: 2, EndLine: 4, Similarity: 0.88, Text: "\tif err != nil {\n\t\treturn wrap(err)\n\t}"}}, "looks applied already at line 2"},
		// A chunk that only adds lines, retried: its lines already stand
		// where it would add them (at the end, or after its @@ line), and
		// it added them again, with success.
		{"retried adds at the end", map[string]string{"a": "package a\n\nfunc A() {}\n\n// C is new.\nfunc C() {}\n"}, []string{"*** Update File: a", "@@", "+", "+// C is new.", "+func C() {}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 4}, "looks applied already at line 4"},
		{"retried adds under its @@ line", map[string]string{"a": "func B() {}\n\n// D is new.\nfunc D() {}\n\nfunc E() {}\n"}, []string{"*** Update File: a", "@@ func B() {}", "+", "+// D is new.", "+func D() {}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2}, "looks applied already at line 2"},
		{"retried adds then a blank line", map[string]string{"a": "one\ntwo\nfour\n"}, []string{"*** Update File: a", "@@", "+four", ""},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 3}, "looks applied already at line 3"},
		{"retried adds after its context", map[string]string{"a": "func A() {\n\tx := 1\n\tlog(x)\n}\n"}, []string{"*** Update File: a", "@@", " \tx := 1", "+\tlog(x)"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 3}, "looks applied already at line 3"},
		{"retried adds around its context", map[string]string{"a": "// A does a.\nfunc A() {}\n// B does b.\n"}, []string{"*** Update File: a", "@@", "+// A does a.", " func A() {}", "+// B does b."},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 1}, "looks applied already at line 1"},
		{"retried adds a copy of the context that follows", map[string]string{"a": "func f() {\n\twg.Add(1)\n\twg.Add(1)\n\tgo a()\n\tgo b()\n}\n"}, []string{"*** Update File: a", "@@", " func f() {", "+\twg.Add(1)", " \twg.Add(1)"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2}, "looks applied already at line 2"},
		// Retried, a chunk found only loosely before the place it changed,
		// whose result stands exactly after it: it changed the sibling.
		{"retried, a loose sibling before", map[string]string{"a": "[a]\nkey = old_value  \nmode = fast\n[b]\nkey = new_value\nmode = fast\n"}, []string{"*** Update File: a", "@@", "-key = old_value", "+key = new_value", " mode = fast"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 5, "oldAt": 2, "rung": RungTrailingWhitespace}, "looks applied already at line 5"},
		// Its removed line given back is no add-only chunk here: retried,
		// it would add its line to the loose sibling.
		{"retried, a loose sibling before, its removed line given back", map[string]string{"a": "a = 1  \n    return a\n\na = 1\n    log(a)\n    return a\n"}, []string{"*** Update File: a", "@@", " a = 1", "-    return a", "+    log(a)", "+    return a"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 4, "oldAt": 1, "rung": RungTrailingWhitespace}, "looks applied already at line 4"},
		// The @@ line as a line the chunk adds, not keeps: its result at
		// that line is no retry ("@@ }", "+}" leaves a second "}").
		{"@@ line only added, the result standing from it", map[string]string{"a": "x\nfoo\nbaz\n"}, []string{"*** Update File: a", "@@ foo", "-bar", "+foo", "+baz"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3,
				"closest": Region{StartLine: 3, EndLine: 3, Similarity: 0.5, Text: "baz"}}, "the closest is line 3 (similarity 0.50): read the file there"},
		{"retried, no @@ line nor context", map[string]string{"a": retriedSrc}, []string{"*** Update File: a", "@@", "-\t\treturn err", "+\t\treturn wrap(err)"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 3, "oldAt": 8}, "looks applied already at line 3"},
		// Its old lines found only loosely, the result exactly before them.
		{"retried, found loosely after its result", map[string]string{"a": "key = new_value\nkey = old_value  \n"}, []string{"*** Update File: a", "@@", "-key = old_value", "+key = new_value"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 1, "oldAt": 2}, "looks applied already at line 1"},
		// The lines around a chunk's @@ line begin inside the chunk before:
		// not found after it.
		{"lines around its @@ line over the chunk before", map[string]string{"a": "a\nb\nc\n"}, []string{"*** Update File: a", "@@", "-a", "+A", "@@ b", " a", " b", "-c", "+C"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 2, "patchLine": 6,
				"closest": Region{StartLine: 1, EndLine: 3, Similarity: 1, Text: "a\nb\nc"}}, "the chunk's lines are lines 1-3, but they overlap the chunk before, which ends at line 1"},
		{"retried whole, two chunks", map[string]string{"a": strings.ReplaceAll(retriedSrc, "return err", "return wrap(err)") + strings.ReplaceAll(retriedSrc, "return wrap(err)", "return err")}, []string{"*** Update File: a", "@@", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}", "@@", " \tif err != nil {", "-\t\treturn err", "+\t\treturn wrap(err)", " \t}"},
			fault.CodePatchVerify, map[string]any{"path": "a", "chunk": 1, "patchLine": 3, "newAt": 2, "oldAt": 12}, "looks applied already at line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := lines(append(append([]string{"*** Begin Patch"}, tt.body...), "*** End Patch")...)
			changes, err := planText(t, tt.files, text)
			fe := fault.AsError(err)
			if err == nil || fe.Code != tt.code || changes != nil {
				t.Fatalf("changes %+v, error %v; want %s", changes, err, tt.code)
			}
			if !reflect.DeepEqual(fe.Details, tt.detail) || !strings.Contains(fe.Hint, tt.hint) || fe.Path == "" {
				t.Errorf("details %+v, hint %q, path %q; want %+v and %q", fe.Details, fe.Hint, fe.Path, tt.detail, tt.hint)
			}
		})
	}
}

// TestPlanErrorText pins the message and hint of each refusal whole:
// the line numbers in them are where the caller reads the file next.
func TestPlanErrorText(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		chunk     []string
		msg, hint string
	}{
		{"result before the old lines", retriedSrc, []string{"@@", "-\t\treturn err", "+\t\treturn wrap(err)"},
			"chunk 1 of 'f' (patch line 3): the lines it would leave already stand at line 3, and its old lines are found only further on, at line 8: changing them there may not be what was meant.",
			"this patch looks applied already at line 3: if it was, nothing is left to do; if it is meant for line 8, give the chunk an @@ line naming the function or class there, or more context lines"},
		{"loose, result after the old lines", "[a]\nkey = old_value  \nmode = fast\n[b]\nkey = new_value\nmode = fast\n", []string{"@@", "-key = old_value", "+key = new_value", " mode = fast"},
			"chunk 1 of 'f' (patch line 3): its old lines are found only at the trailing-whitespace rung, at line 2, and the lines it would leave already stand at line 5: changing them there may not be what was meant.",
			"this patch looks applied already at line 5: if it was, nothing is left to do; if it is meant for line 2, copy the chunk's lines from there exactly"},
		{"ambiguous at a loose rung", "fn a() {\n    return 1\n}\nfn b() {\n\treturn 1\n}\n", []string{"@@", "-return 1", "+return 2"},
			"chunk 1 of 'f' (patch line 3) matches lines 2 and 5 of the file, at the whitespace rung only.",
			"give the chunk's lines as the file spells them, or an @@ line naming the function or class it is in (or more context lines) to tell the places apart"},
		{"an added line left of the margin", "def f():\n    return 1\n", []string{"@@", "     def f():", "         return 1", "+def g():"},
			"chunk 1 of 'f' (patch line 3) matches lines 1-2 only with less indentation than it gives, and its added line \"def g():\" would go left of the margin: whether its lines are meant where they stand or relative to the context cannot be told.",
			"read lines 1-2 and copy the chunk's context (' ') and removed ('-') lines from there with the file's indentation, and indent its added ('+') lines as the file does"},
		{"uneven indentation", "def f(x):\n    if x:\n        y = 1\n", []string{"@@", "-if x:", "-y = 1", "+if x:", "+y = 2"},
			"chunk 1 of 'f' (patch line 3) matches lines 2-3 but for indentation that differs from the file's by different amounts from line to line: where its added lines go cannot be told.",
			"copy the chunk's context (' ') and removed ('-') lines from those lines with their indentation, and indent its added ('+') lines as the file does"},
		{"added again after its context", "func A() {\n\tx := 1\n\tlog(x)\n}\n", []string{"@@", " \tx := 1", "+\tlog(x)"},
			"chunk 1 of 'f' (patch line 3) adds lines (any it removes it adds back), and they already stand at line 3, where it would add them.",
			"this patch looks applied already at line 3: if it was, nothing is left to do; if the lines are meant twice, give the chunk context lines (' ') from the file around where they go"},
		{"adds under a loose @@ line at two places", "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n", []string{"@@ def f():", "+    x = 1"},
			"chunk 1 of 'f' (patch line 3) adds lines after its @@ line, which matches lines 2 and 5 of the file, at the whitespace rung only.",
			"give the @@ line as the file spells it, or a context line before the added ones, to tell the places apart"},
		{"overlap", "x\ny\n", []string{"@@", "-y", "+Y", "@@", " x", "-y", "+Z", "*** End of File"},
			"chunks 1 and 2 of 'f' (patch line 2) overlap at line 2 of the file.",
			"merge the two chunks into one, with their lines in the order of the file"},
		{"context not found", "def f():\n  pass\n", []string{"@@ def g():", "-  pass"},
			"the context '@@ def g():' of chunk 1 of 'f' (patch line 3) was not found in the file.",
			"the closest is line 1 (similarity 0.71): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly"},
		// The closest region from the last line of the chunk before, past
		// it: they overlap, whether or not the chunk has an @@ line.
		{"closest from the chunk before's last line", "a1\nb1\nc1\nd1\n", []string{"@@", "-b1", "+B1", "@@ c1", "-b1", "-cc1"},
			"chunk 2 of 'f' (patch line 6) was not found in the file after line 3.",
			"the closest is lines 2-3 (similarity 0.80): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly; they overlap the chunk before, which ends at line 2: merge the two chunks into one"},
		// The closest region from the @@ line itself: after it is where
		// the lines were sought.
		{"closest from its @@ line", "def f():\n    return 2\n", []string{"@@ def f():", " def f():", "-    return 1", "+    return 3"},
			"chunk 1 of 'f' (patch line 3) was not found in the file after line 1.",
			"the closest is lines 1-2 (similarity 0.93): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly; a chunk's lines are sought after its @@ line, line 1 (or around it, when they hold it): give the chunk an @@ line above them, or none"},
		// Ending at the chunk before's last line, or being it: out of order.
		{"closest ends with the chunk before", "a1\nb1\nc1\n", []string{"@@", "-b1", "+B1", "@@", "-a1", "-b1", "+x"},
			"chunk 2 of 'f' (patch line 6) was not found in the file after line 2.",
			"the chunk's lines are lines 1-2, but chunks must follow the order of the file, each after the previous one"},
		{"closest is the chunk before's last line", "a1\nb1\nc1\n", []string{"@@", "-b1", "+B1", "@@", "-b1", "+C1"},
			"chunk 2 of 'f' (patch line 6) was not found in the file after line 2.",
			"the chunk's lines are line 2, but chunks must follow the order of the file, each after the previous one"},
		// Under '*** End of File', the closest region the file's last
		// lines: no word of the marker.
		{"end of file, closest at the end", "x\nvalue\n", []string{"@@", "-values", "+z", "*** End of File"},
			"chunk 1 of 'f' (patch line 3) was not found in the file.",
			"the closest is line 2 (similarity 0.89): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly"},
		{"as many lines as the file", "one\ntwo\n", []string{"@@", "-one", "-tow", "+x"},
			"chunk 1 of 'f' (patch line 3) was not found in the file.",
			"the closest is lines 1-2 (similarity 0.50): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly"},
		// Lines of the same bigrams, found alike by no rung.
		{"closest of similarity 1, no reason", "bcab\n", []string{"@@", "-abca", "+x"},
			"chunk 1 of 'f' (patch line 3) was not found in the file.",
			"the closest is line 1 (similarity 1.00): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := updateF(t, tt.src, tt.chunk...)
			fe := fault.AsError(err)
			if fe == nil {
				t.Fatalf("error %v, want a refusal", err)
			}
			if fe.Message != tt.msg || fe.Hint != tt.hint {
				t.Errorf("message %q\nhint %q\nwant %q\nand %q", fe.Message, fe.Hint, tt.msg, tt.hint)
			}
		})
	}
}

func TestPlanReadError(t *testing.T) {
	p, err := Parse(lines("*** Begin Patch", "*** Delete File: d", "*** End Patch"))
	if err != nil {
		t.Fatal(err)
	}
	dir := fault.Errorf(fault.CodeNotAFile, "d is a directory.")
	_, err = p.Plan(func(string) (string, bool, error) { return "", false, dir }, nil)
	if !errors.Is(err, dir) {
		t.Errorf("error %v, want the read's", err)
	}
}

func TestClosestBounded(t *testing.T) {
	src := strings.Repeat("line\n", 100)
	chunk := []string{"@@"}
	for range 20 {
		chunk = append(chunk, "-lime")
	}
	_, err := updateF(t, src, chunk...)
	r, ok := fault.AsError(err).Details["closest"].(Region)
	if !ok || r.EndLine-r.StartLine != 19 || strings.Count(r.Text, "\n") != regionLines || !strings.HasSuffix(r.Text, "\n…") {
		t.Errorf("closest %+v", r)
	}
	// Exactly regionLines lines, exactly regionBytes bytes: whole.
	_, err = updateF(t, strings.Repeat("line\n", regionLines), slices.Repeat([]string{"-lime"}, regionLines)...)
	if r, ok = fault.AsError(err).Details["closest"].(Region); !ok || r.Text != strings.TrimSuffix(strings.Repeat("line\n", regionLines), "\n") {
		t.Errorf("closest of %d lines %+v", regionLines, r)
	}
	full := strings.Repeat("x", regionBytes)
	_, err = updateF(t, full+"\n", "@@", "-"+full[1:]+"y")
	if r, ok = fault.AsError(err).Details["closest"].(Region); !ok || r.Text != full {
		t.Errorf("closest of %d bytes: %d bytes", regionBytes, len(r.Text))
	}
	long := strings.Repeat("é", 2000)
	_, err = updateF(t, long+"\n", "@@", "-"+long+"x")
	r, ok = fault.AsError(err).Details["closest"].(Region)
	if !ok || len(r.Text) > regionBytes+len("…") || !strings.HasSuffix(r.Text, "é…") {
		t.Errorf("closest %d bytes, ends %q", len(r.Text), r.Text[len(r.Text)-8:])
	}
}

// retriedSrc is a file a patch changed in Get (wrap(err)) whose lines
// before it, in Post, are as Get's were.
const retriedSrc = "func Get() {\n\tif err != nil {\n\t\treturn wrap(err)\n\t}\n}\nfunc Post() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n"

// TestPlanRetried applies a chunk, then plans it again on what it made,
// as an agent that lost the first answer does: the second plan must be
// PATCH_VERIFY saying where the result stands (newAt), never a change of
// a second place alike, nor lines added twice.
func TestPlanRetried(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		chunk []string
		want  string // after the first send
		newAt int
	}{
		// A removed line that comes back among the added lines is kept:
		// the chunk adds the others around it (it added them twice).
		{"removes a line and adds it back after a new one", pyFG, []string{"@@", "-    return a", "+    log(a)", "+    return a", " ", " ", " def g():"},
			strings.Replace(pyFG, "    return a", "    log(a)\n    return a", 1), 3},
		{"removes a line and adds it back under its @@ line", pyFG, []string{"@@ def f():", "-    return a", "+    log(a)", "+    return a"},
			strings.Replace(pyFG, "    return a", "    log(a)\n    return a", 1), 3},
		{"removes a line and adds it back before a new one", pyFG, []string{"@@", "-    a = 1", "+    a = 1", "+    b = a + 1"},
			strings.Replace(pyFG, "    a = 1", "    a = 1\n    b = a + 1", 1), 3},
		{"removes a line and adds it back, found by its indentation", "func f() {\n\treturn a\n}\n\nfunc g() {\n\treturn a\n}\n", []string{"@@ func f() {", "-    return a", "+    log(a)", "+    return a"},
			"func f() {\n\tlog(a)\n\treturn a\n}\n\nfunc g() {\n\treturn a\n}\n", 2},
		{"removes a line and adds it back, CRLF", "- item 1\r\n- item 2\r\n\r\nend\r\n", []string{"@@", "-- item 2", "+- item 2", "+- item 3"},
			"- item 1\r\n- item 2\r\n- item 3\r\n\r\nend\r\n", 3},
		// A replacement unlike its old line, with no context and no @@
		// line: retried, it changed the next look-alike.
		{"a rewrite with no context", "func A() {\n\tlog.Printf(\"handling\")\n}\n\nfunc B() {\n\tlog.Printf(\"handling\")\n}\n", []string{"@@", "-\tlog.Printf(\"handling\")", "+\tx.Validate()"},
			"func A() {\n\tx.Validate()\n}\n\nfunc B() {\n\tlog.Printf(\"handling\")\n}\n", 2},
		// An @@ line inside the chunk: retried, its result stands from
		// the line the @@ line named less its index, or the @@ line, a
		// removed one, is found only in the look-alike.
		{"its @@ line inside it", pyAB, []string{"@@         x = clean(x)", "         x = load()", "-        x = clean(x)", "+        x = normalize(x)", "         return x"},
			strings.Replace(pyAB, "clean", "normalize", 1), 3},
		{"its @@ line its last", pyAB, []string{"@@         return x", "         x = load()", "-        x = clean(x)", "+        x = normalize(x)", "         return x"},
			strings.Replace(pyAB, "clean", "normalize", 1), 3},
		// Under an @@ line naming its function, a chunk that adds lines
		// only, or removes them only, leaves lines that stand after that
		// line once applied: retried, it changed the sibling.
		{"adds only under its @@ line", goAB, []string{"@@ func A() error {", " \tif err != nil {", "+\t\tlog.Printf(\"A failed: %v\", err)", " \t\treturn err", " \t}"},
			strings.Replace(goAB, "\t\treturn err", "\t\tlog.Printf(\"A failed: %v\", err)\n\t\treturn err", 1), 5},
		{"adds only under its @@ line, found by its indentation", goAB, []string{"@@ func A() error {", "     if err != nil {", "+        log.Printf(\"A failed: %v\", err)", "         return err", "     }"},
			strings.Replace(goAB, "\t\treturn err", "\t\tlog.Printf(\"A failed: %v\", err)\n\t\treturn err", 1), 5},
		{"removes only under its @@ line", strings.ReplaceAll(goAB, "do()\n", "do()\n\tfmt.Println(\"debug\")\n"), []string{"@@ func A() error {", " \terr := do()", "-\tfmt.Println(\"debug\")", " \tif err != nil {"},
			strings.Replace(goAB, "B() error {\n\terr := do()\n", "B() error {\n\terr := do()\n\tfmt.Println(\"debug\")\n", 1), 4},
		// Under an @@ line naming its function, a chunk that replaces a
		// line with one unlike it, beside a context line, is held no
		// looser than one that adds the line: retried, it changed B.
		{"replaces a line with one unlike it under its @@ line", goAB, []string{"@@ func A() error {", "-\treturn nil", "+\tlog.Flush()", " }"},
			strings.Replace(goAB, "\treturn nil", "\tlog.Flush()", 1), 8},
		// A chunk at the end of the file, retried: its result stands as
		// the file's last lines (the hint said to drop the marker, which
		// added the lines again after the first look-alike).
		{"adds at the end of the file after its context", pyFG, []string{"@@", "     a = 1", "     return a", "+", "+", "+def h():", "+    return 3", "*** End of File"},
			pyFG + "\n\ndef h():\n    return 3\n", 7},
		// A here-document left as given (see TestPlanUpdate): retried, its
		// old lines are found no more, or its added lines stand after
		// them as written.
		{"a here-document in its middle, re-indented", shMissing, []string{"@@", " if [ -z \"$1\" ]; then", "     echo missing", "+    cat <<EOF", "+usage: x", "+EOF", "     exit 1"},
			strings.Replace(shMissing, "        exit 1", "        cat <<EOF\nusage: x\nEOF\n        exit 1", 1), 2},
		{"a here-document after its context, re-indented", "main() {\n    echo missing\n}\n", []string{"@@", " echo missing", "+cat <<EOF", "+usage: x", "+EOF"},
			"main() {\n    echo missing\n    cat <<EOF\nusage: x\nEOF\n}\n", 3},
		{"adds back its removed line at the end of the file", pyFG, []string{"@@", "-    return a", "+    return a", "+", "+", "+def h():", "+    return 3", "*** End of File"},
			pyFG + "\n\ndef h():\n    return 3\n", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := updateF(t, tt.src, tt.chunk...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Content != tt.want {
				t.Fatalf("first send: content %q, want %q", c.Content, tt.want)
			}
			again, err := updateF(t, c.Content, tt.chunk...)
			fe := fault.AsError(err)
			if err == nil || fe.Code != fault.CodePatchVerify {
				t.Fatalf("second send: content %q, error %v; want PATCH_VERIFY", again.Content, err)
			}
			if fe.Details["newAt"] != tt.newAt || !strings.Contains(fe.Hint, "looks applied already") {
				t.Errorf("second send: details %+v, hint %q; want newAt %d", fe.Details, fe.Hint, tt.newAt)
			}
		})
	}
}

// pyAB is a file of two classes alike.
const pyAB = "class A:\n    def run(self):\n        x = load()\n        x = clean(x)\n        return x\n\n\nclass B:\n    def run(self):\n        x = load()\n        x = clean(x)\n        return x\n"

// goAB is a file of two functions alike.
const goAB = "package m\n\nfunc A() error {\n\terr := do()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc B() error {\n\terr := do()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n"

// shMissing is a shell function that exits when given no argument.
const shMissing = "main() {\n    if [ -z \"$1\" ]; then\n        echo missing\n        exit 1\n    fi\n}\n"

// pyFG is a file of two functions alike.
const pyFG = "def f():\n    a = 1\n    return a\n\n\ndef g():\n    a = 1\n    return a\n"

// TestPlanPartlyApplied: a patch one of whose chunks looks applied
// already while the others would apply is refused whole, its hint naming
// the chunk that looks applied and those still pending (it said nothing
// was left to do, and the agent stopped with half the change).
func TestPlanPartlyApplied(t *testing.T) {
	const src = "package m\n\nfunc A() error {\n\tv, err := get()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn use(v)\n}\n\nfunc B() error {\n\tv, err := get()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn use(v)\n}\n\nfunc C() int {\n\treturn 1\n}\n"
	fixedA := strings.Replace(src, "\t\treturn err", "\t\treturn fmt.Errorf(\"A: %w\", err)", 1)
	chunks := []string{"@@ func A() error {", " \tv, err := get()", " \tif err != nil {", "-\t\treturn err", "+\t\treturn fmt.Errorf(\"A: %w\", err)", " \t}",
		"@@ func C() int {", "-\treturn 1", "+\treturn 2", " }"}
	tests := []struct {
		name    string
		src     string
		chunk   int
		pending []int
		hint    string
	}{
		{"the first applied", fixedA, 1, []int{2}, "chunk 1 looks applied already at line 4, and chunk 2 is not"},
		{"the last applied", strings.Replace(src, "return 1", "return 2", 1), 2, []int{1}, "chunk 2 looks applied already at line 20, and chunk 1 is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := updateF(t, tt.src, chunks...)
			fe := fault.AsError(err)
			if err == nil || fe.Code != fault.CodePatchVerify {
				t.Fatalf("error %v, want PATCH_VERIFY", err)
			}
			if fe.Details["chunk"] != tt.chunk || !reflect.DeepEqual(fe.Details["pending"], tt.pending) || !strings.Contains(fe.Hint, tt.hint) || strings.Contains(fe.Hint, "nothing is left") {
				t.Errorf("details %+v, hint %q; want chunk %d, pending %v, %q", fe.Details, fe.Hint, tt.chunk, tt.pending, tt.hint)
			}
		})
	}
	// Two of three applied, the middle one pending.
	three := append(slices.Clone(chunks[:6]), "@@ func B() error {", " \tv, err := get()", " \tif err != nil {", "-\t\treturn err", "+\t\treturn fmt.Errorf(\"B: %w\", err)", " \t}")
	three = append(three, chunks[6:]...)
	_, err := updateF(t, strings.Replace(fixedA, "return 1", "return 2", 1), three...)
	if fe := fault.AsError(err); fe == nil || !reflect.DeepEqual(fe.Details["pending"], []int{2}) || !strings.Contains(fe.Hint, "chunks 1 and 3 look applied already (chunk 1 at line 4), and chunk 2 is not") {
		t.Errorf("two of three applied: %v", err)
	}
	// Every chunk applied: nothing is left to do.
	_, err = updateF(t, strings.Replace(fixedA, "return 1", "return 2", 1), chunks...)
	if fe := fault.AsError(err); fe == nil || fe.Details["pending"] != nil || !strings.Contains(fe.Hint, "nothing is left to do") {
		t.Errorf("all applied: %v", err)
	}
}

// Past partlyRounds chunks that look applied, which ones are pending is
// not worked out (each round locates the chunks again: a patch of 400,
// half applied, took 0.7 s), and the hint says so, never "nothing is
// left to do"; runs of chunks are named as ranges.
func TestPlanPartlyAppliedBounded(t *testing.T) {
	var src strings.Builder
	var chunks []string
	src.WriteString("package m\n")
	for i := range partlyRounds + 4 {
		v := 2 // applied, but for the last
		if i == partlyRounds+3 {
			v = 1
		}
		fmt.Fprintf(&src, "\nfunc F%d() int {\n\tx := load(%d)\n\treturn x + %d\n}\n", i, i, v)
		chunks = append(chunks, fmt.Sprintf("@@ func F%d() int {", i), fmt.Sprintf(" \tx := load(%d)", i), "-\treturn x + 1", "+\treturn x + 2", " }")
	}
	_, err := updateF(t, src.String(), chunks...)
	fe := fault.AsError(err)
	if fe == nil || fe.Details["pending"] != nil || strings.Contains(fe.Hint, "nothing is left") ||
		!strings.Contains(fe.Hint, fmt.Sprintf("chunks 1-%d look applied already (chunk 1 at line 4), and whether the others are was not worked out", partlyRounds+1)) {
		t.Errorf("%d of %d chunks applied: %v (hint %q)", partlyRounds+3, partlyRounds+4, err, fe.Hint)
	}
}
