package editmatch

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestIndentTransform(t *testing.T) {
	line := func(f Reindent, l string) string {
		out, ok := f(l)
		if !ok {
			return "(left of the margin)"
		}
		return out
	}
	f, fits := IndentTransform([]string{"a", "  b"}, []string{"\ta", "\t  b"}, nil)
	if !fits || f == nil || line(f, "    c") != "\t\tc" || line(f, "") != "" {
		t.Fatalf("shift under a tab: fits=%v", fits)
	}
	// one tab is one level of a file indented by two spaces.
	f, fits = IndentTransform([]string{"\tif x {", "\t\ty()"}, []string{"  if x {", "    y()"}, nil)
	if !fits || f == nil || line(f, "\t\t\tz()") != "      z()" {
		t.Fatalf("tabs to two spaces: fits=%v", fits)
	}
	if _, fits := indentTransform([]string{"a", "b"}, []string{"  a", "    b"}); fits {
		t.Fatal("a non-uniform change was taken for a uniform one")
	}
	if f, fits := indentTransform([]string{" a"}, []string{" a"}); !fits || f != nil {
		t.Fatal("identical indentation is a fit that changes nothing")
	}
	// A region without indentation: the file's lines tell tabs from
	// spaces, tabs only when none starts with a space; a line left of
	// oldText's goes left of the margin.
	f, fits = IndentTransform([]string{"    var y"}, []string{"var y"}, []string{"func a() {", "\tx := 1", "\ty := 2", "}"})
	if !fits || line(f, "        z") != "\tz" || line(f, "    }") != "}" || line(f, "w") != "(left of the margin)" {
		t.Fatalf("a region at column 0 of a tab-indented file: fits=%v", fits)
	}
	f, fits = IndentTransform([]string{"    var y"}, []string{"var y"}, []string{"func a() {", "\tx := 1", "\ty := 2", "}", " * odd"})
	if !fits || line(f, "        z") != "    z" {
		t.Fatalf("a region at column 0 of a file with tabs and a space-led line: fits=%v", fits)
	}
}

// TestReindent: newText re-indented for a region indented less than
// oldText, or not at all: a line that would go left of the margin fails
// the rewrite (it was flattened to column 0, with success), and a region
// without indentation takes tabs or spaces from the file (a tab-indented
// Go file got spaces).
func TestReindent(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		want                string
		line, columns       int // the MarginError, 0 for none
	}{
		{"a line left of oldText's goes left of the margin", "import os\n\ndef f():\n    return 1\n",
			"    def f():\n        return 1\n", "    def f():\n        return 1\n\ndef g():\n    return 2\n", "", 4, 4},
		{"tab-indented oldText, a line at column 0", "def f():\n    return 1\n",
			"\tdef f():\n\t\treturn 1", "\tdef f():\n\t\treturn 1\nx = 1", "", 3, 4},
		{"shifted by less than the margin allows", "class C:\n  def f(self):\n    pass\n",
			"      def f(self):\n        pass", "    def g(self):\n      pass\n\n      def f(self):\n        pass", "def g(self):\n  pass\n\n  def f(self):\n    pass", 0, 0},
		{"at the margin exactly", "def f():\n    return 1\n",
			"    def f():\n        return 1\n", "    def f():\n        return 2\n", "def f():\n    return 2\n", 0, 0},
		{"a region at column 0 of a tab-indented file: tabs", "package p\n\nfunc a() {\n\tx := 1\n}\n\nvar y = 1\n",
			"    var y = 1\n", "    var y = func() int {\n        return 1\n    }()\n", "var y = func() int {\n\treturn 1\n}()\n", 0, 0},
		{"a region at column 0 of a space-indented file: spaces", "def a():\n    x = 1\n\ny = 1\n",
			"\ty = 1\n", "\tdef y():\n\t\treturn 1\n", "def y():\n    return 1\n", 0, 0},
		// YAML in a Go raw string: tabs there are invalid YAML, spaces
		// stray in Go are not.
		{"a region at column 0 of a file with both: spaces", "func a() {\n\tx := 1\n\ty := `\nname: x\nspec:\n  a: 1\n`\n}\n",
			"    spec:\n", "    spec:\n        replicas: 2\n", "spec:\n    replicas: 2\n", 0, 0},
		{"an indented region tells for itself", "\ta\n\tb\n\tc\nx:\n  y\n",
			"    y", "    y\n        z", "  y\n      z", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := New(tc.src)
			ms := tx.Locate(tc.old)
			if len(ms) != 1 || ms[0].Rung != RungIndentation {
				t.Fatalf("Locate(%q) = %+v, want one match at the indentation rung", tc.old, ms)
			}
			repl, _, reindented, err := tx.Rewriter(tc.old, tc.new, ms[0].Rung).Rewrite(ms[0])
			if tc.line > 0 {
				var me *MarginError
				if !errors.As(err, &me) || *me != (MarginError{Line: tc.line, Columns: tc.columns}) {
					t.Fatalf("Rewrite = %q, %v; want a MarginError at newText's line %d, %d columns", repl, err, tc.line, tc.columns)
				}
				return
			}
			if err != nil || repl != tc.want || !reindented {
				t.Fatalf("Rewrite = %q, reindented %v, %v; want %q", repl, reindented, err, tc.want)
			}
		})
	}
}

func TestStripGutter(t *testing.T) {
	for in, want := range map[string]string{
		"  12\tfoo\n  13\tbar\n": "foo\nbar\n",
		"12: foo\n13: bar":       "foo\nbar",
		"7→x":                    "x",
	} {
		if got, _, ok := StripGutter(in); !ok || got != want {
			t.Errorf("StripGutter(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, first, _ := StripGutter("  12\tfoo\n  13\tbar\n"); first != 12 {
		t.Errorf("first gutter number %d, want 12", first)
	}
	for _, in := range []string{"foo", "12 foo", "1\ta\n3\tb", "1\ta\nb"} {
		if _, _, ok := StripGutter(in); ok {
			t.Errorf("StripGutter(%q) found a gutter", in)
		}
	}
}

// TestIndexedWithinSearches: a text is indexed once searches have cost
// about what the index costs, and core's tests (planBoth) count on 64
// searches being enough to plan through the index.
func TestIndexedWithinSearches(t *testing.T) {
	tx := New("a\nb\n")
	for range 64 {
		tx.Exact("c")
	}
	if !tx.indexed {
		t.Fatalf("not indexed after 64 searches (indexAfterScans %d)", indexAfterScans)
	}
	few := New("a\nb\n")
	for range 3 {
		few.Locate("c")
	}
	if few.indexed {
		t.Fatal("a text searched a few times was indexed")
	}
}

// TestLargeBatchIndexes: the searches of a batch large enough to switch
// from scans to the index find what scanning alone finds, rung by rung.
func TestLargeBatchIndexes(t *testing.T) {
	var src strings.Builder
	var olds []string
	for i := range 300 {
		switch i % 4 {
		case 0: // exact
			fmt.Fprintf(&src, "exact %d\n", i)
			olds = append(olds, fmt.Sprintf("exact %d\n", i))
		case 1: // trailing whitespace, two lines
			fmt.Fprintf(&src, "ws %d  \nws %d\t\n", i, i)
			olds = append(olds, fmt.Sprintf("ws %d\nws %d\n", i, i))
		case 2: // unicode fragment
			fmt.Fprintf(&src, "say(\u201chi %d\u201d)\n", i)
			olds = append(olds, fmt.Sprintf(`"hi %d"`, i))
		case 3: // indentation
			fmt.Fprintf(&src, "\tif x%d {\n\t\treturn\n\t}\n", i)
			olds = append(olds, fmt.Sprintf("    if x%d {\n        return\n    }", i))
		}
	}
	src.WriteString("tail\ntail\n")
	olds = append(olds, "tail", "missing")
	scan, auto := New(src.String()), New(src.String())
	scan.scans = math.MinInt // never indexed
	rungs := map[string]int{}
	for _, old := range olds {
		want, got := scan.Locate(old), auto.Locate(old)
		if len(got) != len(want) {
			t.Fatalf("%q: indexed %d matches, scanned %d", old, len(got), len(want))
		}
		for k := range want {
			g, w := got[k], want[k]
			if g.Start != w.Start || g.End != w.End || g.Line != w.Line || g.Rung != w.Rung || (g.reindent == nil) != (w.reindent == nil) {
				t.Fatalf("%q: match %d indexed %+v, scanned %+v", old, k, g, w)
			}
		}
		if len(want) > 0 {
			rungs[want[0].Rung]++
		}
	}
	if scan.indexed || !auto.indexed {
		t.Fatalf("scanned text indexed %v, batch text indexed %v", scan.indexed, auto.indexed)
	}
	if !reflect.DeepEqual(rungs, map[string]int{RungExact: 76, RungTrailingWhitespace: 75, RungUnicode: 75, RungIndentation: 75}) {
		t.Errorf("rungs %v", rungs)
	}
	if n := len(auto.Locate("tail")); n != 2 {
		t.Errorf("tail: %d matches through the index, want 2", n)
	}
}

// TestLocate: the rung that locates oldText and the lines of its matches,
// the same scanning and through the index; nil where no rung may match.
func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name, src, old string
		rung           string
		lines          []int
	}{
		{"exact", "a\nb\nc\n", "b", RungExact, []int{2}},
		{"exact, overlapping", "aaa\n", "aa", RungExact, []int{1, 1}},
		{"exact beats a looser rung", "b \nb\n", "b", RungExact, []int{1, 2}},
		{"trailing whitespace", "a  \nb\t\n", "a\nb\n", RungTrailingWhitespace, []int{1}},
		{"whitespace", "a\u00a0\n", "a\n", RungWhitespace, []int{1}},
		{"indentation", "\tif x {\n\t\ty()\n\t}\n", "    if x {\n        y()\n    }", RungIndentation, []int{1}},
		{"indentation with a blank line", "\tif x {\n\n\t\ty()\n\t}\n", "    if x {\n\n        y()\n    }", RungIndentation, []int{1}},
		{"unicode lines", "say \u201chi\u201d\n", "say \"hi\"\n", RungUnicode, []int{1}},
		{"unicode fragment", "x = \u201ca\u201d\n", "\"a\"", RungUnicode, []int{1}},
		// Fragments overlap as exact matches do, and make the edit
		// ambiguous: the first alone was taken.
		{"unicode fragments overlap", "\u201c\u201c\u201c\n", "\"\"", RungUnicode, []int{1, 1}},
		{"fullwidth fragments overlap", "x = \uff21\uff21\uff21;\n", "AA", RungUnicode, []int{1, 1}},
		// A whole line and a fragment of another both match: of the
		// two, the whole line was taken, the fragment never counted.
		{"unicode line and fragment", "print('hi')\nlog = print('hi') or 1\n", "print(\u2018hi\u2019)", RungUnicode, []int{1, 2}},
		{"unicode fragment and line", "log = print('hi') or 1\nprint('hi')\n", "print(\u2018hi\u2019)", RungUnicode, []int{1, 2}},
		// A window of uneven indentation beside an even one: both given,
		// the uneven marked (the even one was taken alone).
		{"uneven beside even indentation", "def f():\n  if x:\n     y()\n\nclass C:\n    def g(self):\n        if x:\n            y()\n", "if x:\n    y()", RungWhitespace, []int{2, 7}},
		{"uneven indentation is no match", "\tif x {\n\t\t\ty()\n\t}\n", "if x {\ny()\n}", "", nil},
		{"whitespace-only oldText is never fuzzy", "a\n\t\nb\n", "  \n", "", nil},
		{"longer than the file", "a\n", "a\nb\nc", "", nil},
		{"inside one rune's folding", "\uFB01\n", "i", "", nil},
		{"a fold that is nothing", "a\n", "\u200b", "", nil},
		// Nor blank lines: the unicode rung's key of each was "" too, and
		// the edit went into an empty range.
		{"a fold that is nothing, beside blank lines", "a\n\n \nb\n", "\u200b", "", nil},
		{"empty oldText", "a\n", "", "", nil},
		// A match ends at a character's end, its combining marks with it.
		{"not before a combining mark", "cafe\u0301 au lait\n", "cafe", "", nil},
		{"the letter with its mark", "cafe\u0301 au lait\n", "cafe\u0301", RungExact, []int{1}},
		{"NFC for NFD", "cafe\u0301 au lait\n", "caf\u00e9", RungUnicode, []int{1}},
		{"an occurrence without a mark", "cafe\u0301\ncafe\n", "cafe", RungExact, []int{2}},
		{"not before a variation selector", "\u2764\ufe0f\n", "\u2764", "", nil},
		{"a line ending ends a character", "a = 1\n\u0301 mark\n", "a = 1\n", RungExact, []int{1}},
		{"a space ends a character", "x \u0301\n", "x ", RungExact, []int{1}},
		// oldText indented, found byte for byte only inside a deeper
		// line's indentation: the indentation given is not the line's,
		// so the match is the indentation rung's, after the stricter
		// rungs: it took the nested line, where the line meant differed
		// by a trailing space, and wrote newText's lines 4 columns short.
		{"inside an indentation, beside a trailing space", "def f():\n    if a:\n        return x\n\ndef g():\n    return x \n", "    return x\n", RungTrailingWhitespace, []int{6}},
		{"inside an indentation alone", "def f():\n    if a:\n        return x\n", "    return x\n", RungIndentation, []int{3}},
		{"inside a tab indentation", "\t\tx()\n", "\tx()", RungIndentation, []int{1}},
		// Elsewhere in another indentation is no likelier the place:
		// the nested one, re-indented, or as found.
		{"inside an indentation, beside another indentation", "def f():\n        return x\ndef g():\n  return x\n", "    return x", RungIndentation, []int{2}},
		{"inside an indentation, part of a line, beside another indentation", "def f():\n        return x + 1\ndef g():\n  return x\n", "    return x", RungExact, []int{2}},
		{"inside indentations twice, beside another indentation", "def f():\n    if a:\n        x()\n    if b:\n        x()\ndef g():\n  x()\n", "    x()", RungIndentation, []int{3, 5}},
		{"inside an uneven indentation, beside another indentation", "def f():\n    if c:\n        return x\n    return y\ndef g():\n  return x\n  return y\n", "    return x\n    return y", RungExact, []int{3}},
		// No rung but the exact finds it: found as before.
		{"inside an uneven indentation", "  if a:\n      b()\n", " if a:\n      b()", RungExact, []int{1}},
		// At a line's start too: exact, both (ambiguous).
		{"inside an indentation and at a line's start", "    return x\n        return x\n", "    return x\n", RungExact, []int{1, 2}},
		// Not indented: where it starts in a line is the caller's (str_replace's rule).
		{"after an indentation", "if a:\n    return x\n", "return x\n", RungExact, []int{2}},
		{"after other text", "x = a  + b\n", "  + b", RungExact, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, indexed := range []bool{false, true} {
				tx := New(tc.src)
				tx.indexed = indexed
				ms := tx.Locate(tc.old)
				var lines []int
				for _, m := range ms {
					lines = append(lines, m.Line)
				}
				if !reflect.DeepEqual(lines, tc.lines) || len(ms) > 0 && ms[0].Rung != tc.rung {
					t.Fatalf("indexed %v: %+v; want %s at lines %v", indexed, ms, tc.rung, tc.lines)
				}
			}
		})
	}
}

// A fragment matched from a line's end, in a CRLF file, starts at its CR:
// it started at the LF, which the folding keeps alone, and newText's
// CRLF then followed the CR left before it (x\r\r\n).
func TestFoldedFromALineEnd(t *testing.T) {
	tx := New("x\r\n\uff26oo y\r\n")
	ms := tx.Locate("\nFoo")
	if len(ms) != 1 || ms[0].Start != 1 || ms[0].End != len("x\r\n\uff26oo") || ms[0].Rung != RungUnicode {
		t.Fatalf("%+v; want one unicode match from byte 1", ms)
	}
	even := New("def f():\n  if x:\n     y()\n\nclass C:\n    def g(self):\n        if x:\n            y()\n").Locate("if x:\n    y()")
	if len(even) != 2 || !even[0].Uneven || even[1].Uneven {
		t.Fatalf("%+v; want the uneven window at line 2 marked, the even one at line 7 not", even)
	}
}

func TestLineSpan(t *testing.T) {
	for _, tc := range []struct {
		first, last int
		want        string
	}{{1, 1, "line 1"}, {4, 6, "lines 4-6"}, {9, 10, "lines 9-10"}} {
		if got := LineSpan(tc.first, tc.last); got != tc.want {
			t.Errorf("LineSpan(%d, %d) = %q, want %q", tc.first, tc.last, got, tc.want)
		}
	}
}
