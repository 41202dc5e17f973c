package core

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

func str(s string) *string { return &s }

func op(old, new string) EditOp { return EditOp{OldText: old, NewText: str(new)} }

// planBoth plans a batch twice, scanning and through the index, and fails
// unless both give the same content, outcomes and error. 64 searches make
// a text indexed (editmatch's TestIndexedWithinSearches holds it to that).
func planBoth(t testing.TB, src string, edits []EditOp) (string, []EditOutcome, error) {
	t.Helper()
	out, outcomes, err := plan(editmatch.New(src), edits)
	ix := editmatch.New(src)
	for range 64 {
		ix.Exact("\x00")
	}
	ixOut, ixOutcomes, ixErr := plan(ix, edits)
	if ixOut != out || !reflect.DeepEqual(ixOutcomes, outcomes) || !reflect.DeepEqual(ixErr, err) {
		t.Fatalf("indexed plan differs:\n%q %+v %v\nscanned:\n%q %+v %v", ixOut, ixOutcomes, ixErr, out, outcomes, err)
	}
	return out, outcomes, err
}

func TestPlanEdits(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		edits []EditOp
		want  string
		rungs []string // per edit; "" for already applied
	}{
		{"exact", "a\nb\nc\n", []EditOp{op("b", "B")}, "a\nB\nc\n", []string{editmatch.RungExact}},
		{"exact mid-line", "let x = 1;\n", []EditOp{op("x = 1", "y = 2")}, "let y = 2;\n", []string{editmatch.RungExact}},
		{"delete", "a\nb\nc\n", []EditOp{op("b\n", "")}, "a\nc\n", []string{editmatch.RungExact}},
		{"crlf file, lf oldText and newText", "a\r\nb\r\nc\r\n", []EditOp{op("a\nb", "x\ny")}, "x\r\ny\r\nc\r\n", []string{editmatch.RungExact}},
		{"crlf newText in crlf file", "a\r\nb\r\n", []EditOp{op("a", "x\r\ny")}, "x\r\ny\r\nb\r\n", []string{editmatch.RungExact}},
		{"mixed: lf line", "a\r\nb\nc\r\n", []EditOp{op("b", "b1\nb2")}, "a\r\nb1\nb2\nc\r\n", []string{editmatch.RungExact}},
		{"mixed: crlf line", "a\r\nb\nc\r\n", []EditOp{op("a", "a1\na2")}, "a1\r\na2\r\nb\nc\r\n", []string{editmatch.RungExact}},
		{"no final newline kept", "a\nb", []EditOp{op("b", "c")}, "a\nc", []string{editmatch.RungExact}},
		{"no final newline, crlf file", "a\r\nb", []EditOp{op("b", "c\nd")}, "a\r\nc\r\nd", []string{editmatch.RungExact}},
		{"tabs kept", "\tx\n\t\ty\n", []EditOp{op("y", "z")}, "\tx\n\t\tz\n", []string{editmatch.RungExact}},
		{"against the original", "a b", []EditOp{op("a", "b"), op("b", "a")}, "b a", []string{editmatch.RungExact, editmatch.RungExact}},
		// A fragment within an uneven window is the place (oldText copied
		// from mid-line); an uneven window overlapping a match is none.
		{"unicode fragment inside an uneven window", "def f():\n    msg = \u201chello\u201d\n    return msg\n", []EditOp{op("msg = \"hello\"\n    return msg", "msg = \"bye\"\n    return msg")}, "def f():\n    msg = \u201cbye\u201d\n    return msg\n", []string{editmatch.RungUnicode}},
		{"uneven window overlapping a match", "x\nx\n  x\n", []EditOp{{OldText: " x\n x", NewText: str(" y\n y"), ReplaceAll: true}}, "y\ny\n  x\n", []string{editmatch.RungIndentation}},
		{"replaceAll unicode, a line and a fragment", "print('hi')\nlog = print('hi') or 1\n", []EditOp{{OldText: "print(\u2018hi\u2019)", NewText: str("print(\u2018bye\u2019)"), ReplaceAll: true}}, "print('bye')\nlog = print('bye') or 1\n", []string{editmatch.RungUnicode}},
		{"unicode fragment from a CRLF line's end", "Intro\r\n\u201cHello\u201d she said\r\nEnd\r\n", []EditOp{op("\n\"Hello\" she said", "\n\"Hi\" she said")}, "Intro\r\n\u201cHi\u201d she said\r\nEnd\r\n", []string{editmatch.RungUnicode}},
		{"replaceAll fuzzy, adjacent windows", "x \nx\t\n", []EditOp{{OldText: "x\n", NewText: str("z\n"), ReplaceAll: true}}, "z\nz\n", []string{editmatch.RungTrailingWhitespace}},
		{"a mark newText puts at the start dropped", "hello\n", []EditOp{op("hello", "\uFEFFHELLO")}, "HELLO\n", []string{editmatch.RungExact}},
		{"the file's own U+FEFF brought to the start kept", "\n\uFEFFb", []EditOp{op("\n", "")}, "\uFEFFb", []string{editmatch.RungExact}},
		{"adjacent edits", "abcdef\n", []EditOp{op("abc", "1"), op("def", "2")}, "12\n", []string{editmatch.RungExact, editmatch.RungExact}},
		{"trailing whitespace", "func f() {  \n\treturn 1\t\n}\n",
			[]EditOp{op("func f() {\n\treturn 1\n}\n", "func f() {\n\treturn 2\n}\n")},
			"func f() {  \n\treturn 2\n}\n", []string{editmatch.RungTrailingWhitespace}},
		{"trailing whitespace keeps the rest", "x\na  \nb\ny\n", []EditOp{op("a\nb", "c")}, "x\nc\ny\n", []string{editmatch.RungTrailingWhitespace}},
		{"indentation: spaces for tabs", "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			[]EditOp{op("    if x {\n        return 1\n    }", "    if y {\n        return 2\n    }")},
			"func f() {\n\tif y {\n\t\treturn 2\n\t}\n}\n", []string{editmatch.RungIndentation}},
		{"indentation: uniform shift", "class A:\n    def f(self):\n        return 1\n",
			[]EditOp{op("def f(self):\n    return 1\n", "def f(self):\n    x = 2\n\n    return x\n")},
			"class A:\n    def f(self):\n        x = 2\n\n        return x\n", []string{editmatch.RungIndentation}},
		{"unicode quotes and dashes", "say(\u201chello\u201d) \u2014 ok\n", []EditOp{op(`say("hello") - ok`, `say("bye") - ok`)},
			"say(\u201cbye\u201d) \u2014 ok\n", []string{editmatch.RungUnicode}},
		{"unicode nbsp", "a\u00a0=\u00a01\nb\n", []EditOp{op("a = 1", "a = 2")}, "a\u00a0=\u00a02\nb\n", []string{editmatch.RungUnicode}},
		{"unicode nfkc", "\uff21\uff22\n", []EditOp{op("AB", "ab")}, "ab\n", []string{editmatch.RungUnicode}},
		{"unicode fragment of a line", "\tmsg := \u201chello\u201d + name // \u2014 greet\n", []EditOp{op(`"hello" + name`, `"bye" + name`)},
			"\tmsg := \u201cbye\u201d + name // \u2014 greet\n", []string{editmatch.RungUnicode}},
		{"unicode fragment across crlf", "a \u2018x\u2019\r\nb\r\n", []EditOp{op("'x'\nb", "y\nz")}, "a y\r\nz\r\n", []string{editmatch.RungUnicode}},
		{"replaceAll", "x\ny\nx\n", []EditOp{{OldText: "x", NewText: str("z"), ReplaceAll: true}}, "z\ny\nz\n", []string{editmatch.RungExact}},
		{"replaceAll fuzzy", "x \ny\nx\t\n", []EditOp{{OldText: "x\n", NewText: str("z\n"), ReplaceAll: true}}, "z\ny\nz\n", []string{editmatch.RungTrailingWhitespace}},
		{"already applied", "a\nBETA\nc\n", []EditOp{op("beta", "BETA")}, "a\nBETA\nc\n", []string{""}},
		// Lines added around oldText found at the indentation rung, as
		// that rung wrote them: a retry, which added them again.
		{"added around at the indentation rung", "def f():\n    if a:\n        x = 1\n        return x\n", []EditOp{op("    return x\n", "    log(x)\n    return x\n")},
			"def f():\n    if a:\n        x = 1\n        log(x)\n        return x\n", []string{editmatch.RungIndentation}},
		{"added around at the indentation rung, retried", "def f():\n    if a:\n        x = 1\n        log(x)\n        return x\n", []EditOp{op("    return x\n", "    log(x)\n    return x\n")},
			"def f():\n    if a:\n        x = 1\n        log(x)\n        return x\n", []string{""}},
		// replaceAll of an indented oldText at a line's start and inside a
		// deeper indentation: newText's later lines follow each place's
		// indentation (the nested log(x) was left outside its if).
		{"replaceAll at a line's start and inside an indentation", "def f():\n    return x\n\ndef g():\n    if a:\n        return x\n",
			[]EditOp{{OldText: "    return x\n", NewText: str("    log(x)\n    return x\n"), ReplaceAll: true}},
			"def f():\n    log(x)\n    return x\n\ndef g():\n    if a:\n        log(x)\n        return x\n", []string{editmatch.RungExact}},
		{"replaceAll inside indentations, tabs", "\tx()\n\t\tx()\n",
			[]EditOp{{OldText: "\tx()", NewText: str("\tw()\n\tx()"), ReplaceAll: true}},
			"\tw()\n\tx()\n\t\tw()\n\t\tx()\n", []string{editmatch.RungExact}},
		{"unicode fragment inside an indentation", "def f():\n    if a:\n        print(\"hi\") or die()\n",
			[]EditOp{op("    print(\u201chi\u201d)", "    log()\n    print(\u201chi\u201d)")},
			"def f():\n    if a:\n        log()\n        print(\"hi\") or die()\n", []string{editmatch.RungUnicode}},
		{"added around at the unicode rung, retried", "def f():\n    print(\"hi\")\n    print(\"bye\")\n", []EditOp{op("    print(\u201chi\u201d)\n", "    print(\u201chi\u201d)\n    print(\u201cbye\u201d)\n")},
			"def f():\n    print(\"hi\")\n    print(\"bye\")\n", []string{""}},
		{"added around with tabs, retried", "func f() {\n\tif a {\n\t\tlog(x)\n\t\treturn x\n\t}\n}\n", []EditOp{op("    return x\n", "    log(x)\n    return x\n")},
			"func f() {\n\tif a {\n\t\tlog(x)\n\t\treturn x\n\t}\n}\n", []string{""}},
		{"gutter tab", "one\ntwo\nthree\n", []EditOp{op("     2\ttwo\n     3\tthree", "     2\tTWO\n     3\tthree")}, "one\nTWO\nthree\n", []string{editmatch.RungExact}},
		{"gutter colon", "one\ntwo\n\nfour\n", []EditOp{op("2: two\n3:\n4: four\n", "2: TWO\n3:\n4: four\n")}, "one\nTWO\n\nfour\n", []string{editmatch.RungExact}},
		{"gutter arrow", "one\ntwo\n", []EditOp{op("1→one", "1→ONE")}, "ONE\ntwo\n", []string{editmatch.RungExact}},
		// The gutter tells apart copies of the block: the one it names.
		{"gutter on a repeated block", "start\nfoo()\nbar()\nmid\nfoo()\nbar()\n", []EditOp{op("5\tfoo()\n6\tbar()", "5\tfoo(1)\n6\tbar(1)")}, "start\nfoo()\nbar()\nmid\nfoo(1)\nbar(1)\n", []string{editmatch.RungExact}},
		{"gutter on a repeated line, CRLF", "a\r\nfoo\r\nbar\r\nfoo\r\nbar\r\n", []EditOp{op("4\tfoo\n5\tbar", "4\tFOO\n5\tBAR")}, "a\r\nfoo\r\nbar\r\nFOO\r\nBAR\r\n", []string{editmatch.RungExact}},
		// The gutter names the place: newText standing elsewhere (a sibling
		// made so before) is no sign of a retry, whose oldText would be gone
		// from the line the gutter names.
		{"gutter on a loose sibling of newText", "[a]\nkey = new_value\nmode = fast\n[b]\nkey = old_value  \nmode = fast\n",
			[]EditOp{op("5\tkey = old_value\n6\tmode = fast", "5\tkey = new_value\n6\tmode = fast")},
			"[a]\nkey = new_value\nmode = fast\n[b]\nkey = new_value\nmode = fast\n", []string{editmatch.RungTrailingWhitespace}},
		// The gutter names the line meant, though oldText stands byte for
		// byte inside a deeper indentation elsewhere (which Locate takes
		// over the line the gutter names, at the indentation rung).
		{"gutter on a line beside a nested copy", "def f():\n    if a:\n        return x\n\ndef g():\n  return x\n", []EditOp{op("6\t    return x\n", "6\t    return y\n")},
			"def f():\n    if a:\n        return x\n\ndef g():\n  return y\n", []string{editmatch.RungIndentation}},
		{"numbers that are content", "2: two\n", []EditOp{op("2: two", "2: deux")}, "2: deux\n", []string{editmatch.RungExact}},
		{"adjacent edits", "abcdef\n", []EditOp{op("def", "2"), op("abc", "1")}, "12\n", []string{editmatch.RungExact, editmatch.RungExact}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, outcomes, err := planBoth(t, tc.src, tc.edits)
			if err != nil {
				t.Fatalf("planEdits: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			var rungs []string
			for _, o := range outcomes {
				rungs = append(rungs, o.Rung)
				if (o.Rung == "") != o.AlreadyApplied {
					t.Errorf("outcome %+v: a rung iff applied", o)
				}
			}
			if !reflect.DeepEqual(rungs, tc.rungs) {
				t.Errorf("rungs %q, want %q", rungs, tc.rungs)
			}
		})
	}
}

func TestPlanEditsOutcomeDetails(t *testing.T) {
	_, o, err := planBoth(t, "x\ny\nx\n", []EditOp{{OldText: "x", NewText: str("z"), ReplaceAll: true}})
	if err != nil || o[0].Replacements != 2 || !reflect.DeepEqual(o[0].Lines, []int{1, 3}) {
		t.Fatalf("replaceAll outcome %+v, %v", o, err)
	}
	// A line of several regions is listed once: lines, not matches.
	_, o, err = planBoth(t, "x x x\ny\nx\n", []EditOp{{OldText: "x", NewText: str("z"), ReplaceAll: true}})
	if err != nil || o[0].Replacements != 4 || !reflect.DeepEqual(o[0].Lines, []int{1, 3}) {
		t.Fatalf("replaceAll on one line thrice: outcome %+v, %v", o, err)
	}
	_, _, err = planBoth(t, "x x\ny\nx\n", []EditOp{op("x", "z")})
	if e := fault.AsError(err); e.Code != fault.CodeAmbiguousMatch || !reflect.DeepEqual(e.Details["lines"], []int{1, 3}) ||
		e.Details["count"] != 3 || !strings.Contains(e.Message, "matches 3 places, at lines 1 (twice), 3.") {
		t.Fatalf("ambiguous on one line twice: %v", err)
	}
	// Overlapping places on one line: "2 places, at lines 1" said one.
	_, _, err = planBoth(t, "x aaa y\n", []EditOp{op("aa", "b")})
	if e := fault.AsError(err); e.Code != fault.CodeAmbiguousMatch || !strings.Contains(e.Message, "matches 2 places, at line 1 (twice), some overlapping: --replace-all replaces 1 of them.") {
		t.Fatalf("ambiguous, overlapping on one line: %v", err)
	}
	// --replace-all, which the hint offers, takes overlapping places first
	// come first: told of 4 places, a caller was answered 2 replacements.
	for _, tc := range []struct{ content, old, says string }{
		{"aaaaa\n", "aa", "--replace-all replaces 2 of them"},
		{"if a {\n  x\n}\n}\n}\n", "}\n}", "--replace-all replaces 1 of them"},
	} {
		_, _, err = planBoth(t, tc.content, []EditOp{op(tc.old, "b")})
		_, o, all := planBoth(t, tc.content, []EditOp{{OldText: tc.old, NewText: str("b"), ReplaceAll: true}})
		if e := fault.AsError(err); e.Code != fault.CodeAmbiguousMatch || !strings.Contains(e.Message, tc.says) ||
			all != nil || !strings.Contains(tc.says, fmt.Sprintf("replaces %d ", o[0].Replacements)) {
			t.Errorf("%q in %q: %v; with --replace-all %+v, %v", tc.old, tc.content, err, o, all)
		}
	}
	_, o, err = planBoth(t, "\tif x {\n\t}\n", []EditOp{op("  if x {\n  }", "  if y {\n  }")})
	if err != nil || !o[0].Reindented || o[0].Rung != editmatch.RungIndentation {
		t.Fatalf("indentation outcome %+v, %v", o, err)
	}
	_, o, err = planBoth(t, "one\ntwo\n", []EditOp{op("2\ttwo", "2\tTWO")})
	if err != nil || !o[0].GutterStripped {
		t.Fatalf("gutter outcome %+v, %v", o, err)
	}
}

// The lines of an outcome, and those of an AMBIGUOUS_MATCH, stop at
// maxOutcomeLines; the error counts the rest ("and N more").
func TestPlanEditsLineListsBounded(t *testing.T) {
	for _, n := range []int{maxOutcomeLines - 1, maxOutcomeLines, maxOutcomeLines + 1} {
		src := strings.Repeat("x\n", n)
		want := make([]int, min(n, maxOutcomeLines))
		for i := range want {
			want[i] = i + 1
		}
		_, o, err := planBoth(t, src, []EditOp{{OldText: "x", NewText: str("y"), ReplaceAll: true}})
		if err != nil || o[0].Replacements != n || !reflect.DeepEqual(o[0].Lines, want) {
			t.Errorf("%d matches: replaceAll outcome %+v, %v", n, o, err)
		}
		_, _, err = planBoth(t, src, []EditOp{op("x", "y")})
		var e *fault.Error
		if !errors.As(err, &e) || !reflect.DeepEqual(e.Details["lines"], want) || e.Details["count"] != n {
			t.Fatalf("%d matches: %v", n, err)
		}
		if more := strings.Contains(e.Message, " more"); more != (n > maxOutcomeLines) ||
			more && !strings.Contains(e.Message, fmt.Sprintf(" and %d more.", n-maxOutcomeLines)) {
			t.Errorf("%d matches: %q", n, e.Message)
		}
	}
}

func TestPlanEditsErrors(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		edits   []EditOp
		code    fault.Code
		details map[string]any
	}{
		{"ambiguous exact", "x\ny\nx\n", []EditOp{op("x", "z")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{1, 3}, "count": 2, "rung": editmatch.RungExact, "edit": 0}},
		{"ambiguous fuzzy", "foo  \nbar\nfoo\t\n", []EditOp{op("foo\n", "baz\n")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{1, 3}, "rung": editmatch.RungTrailingWhitespace}},
		{"ambiguous second edit", "a\nx\nx\n", []EditOp{op("a", "b"), op("x", "y")}, fault.CodeAmbiguousMatch, map[string]any{"edit": 1, "lines": []int{2, 3}}},
		{"overlap", "abcdef\n", []EditOp{op("abc", "1"), op("cde", "2")}, fault.CodeOverlap, map[string]any{"edits": []int{0, 1}}},
		{"overlap in reverse order", "abcdef\n", []EditOp{op("cde", "2"), op("abc", "1")}, fault.CodeOverlap, map[string]any{"edits": []int{0, 1}}},
		{"same region twice", "abc\n", []EditOp{op("b", "1"), op("b", "2")}, fault.CodeOverlap, nil},
		{"no match", "a\nb\n", []EditOp{op("zzz", "y")}, fault.CodeNoMatch, map[string]any{"edit": 0}},
		{"gutter not consecutive", "one\ntwo\n", []EditOp{op("1\tone\n5\ttwo", "x")}, fault.CodeNoMatch, nil},
		{"ambiguous unicode fragment", "\u201ca\u201d \u201ca\u201d\n", []EditOp{op(`"a"`, "b")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{1}, "count": 2, "rung": editmatch.RungUnicode}},
		{"no match inside one rune's folding", "\uFB01\n", []EditOp{op("i", "x")}, fault.CodeNoMatch, nil},
		// Of two places a rung matches, one was taken: a whole line and a
		// fragment of another, overlapping fragments, a window of even
		// indentation beside one of uneven (which replaceAll cannot
		// re-indent either).
		{"unicode line and fragment", "print('hi')\nlog = print('hi') or 1\n", []EditOp{op("print(\u2018hi\u2019)", "print(\u2018bye\u2019)")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{1, 2}, "count": 2, "rung": editmatch.RungUnicode}},
		{"overlapping unicode fragments", "x = \uff21\uff21\uff21;\n", []EditOp{op("AA", "B")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{1}, "count": 2}},
		{"uneven beside even indentation", "def f():\n  if x:\n     y()\n\nclass C:\n    def g(self):\n        if x:\n            y()\n", []EditOp{op("if x:\n    y()", "if x:\n    z()")}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{2, 7}, "count": 2}},
		{"uneven beside even, replaceAll", "def f():\n  if x:\n     y()\n\nclass C:\n    def g(self):\n        if x:\n            y()\n", []EditOp{{OldText: "if x:\n    y()", NewText: str("if x:\n    z()"), ReplaceAll: true}}, fault.CodeAmbiguousMatch, map[string]any{"lines": []int{2, 7}, "unevenLines": []int{2, 3}, "count": 2, "rung": editmatch.RungIndentation}},
		{"whitespace-only oldText never fuzzy", "a\n\t\nb\n", []EditOp{op("  \n", "x")}, fault.CodeNoMatch, nil},
		// Retried, an edit whose newText stands after a line's
		// indentation, where it landed, finds its oldText only loosely in
		// a sibling: refused, never a change of the sibling, with success.
		{"retried inside an indentation, a sibling loosely", "def f():\n    if a:\n        return y\n\ndef g():\n  return x\n", []EditOp{op("    return x\n", "    return y\n")}, fault.CodeNoMatch, map[string]any{"newTextLine": 3}},
		{"retried after an indentation, a sibling loosely", "if a:\n    retries = 5\nretries = 3 \n", []EditOp{op("retries = 3\n", "retries = 5\n")}, fault.CodeNoMatch, map[string]any{"newTextLine": 2}},
		// A line can prove one retried edit, not two (both were taken for
		// applied, with success, and the file holds one change).
		// Retried, an edit whose newText stands where it landed finds its
		// oldText only loosely, in a sibling: it changed the sibling, with
		// success (indentation, trailing white space, typography).
		{"retried, a sibling at the indentation rung", "def a():\n    if x:\n        y = 5\n        z = 2\n\nclass K:\n    def b(self):\n        if x:\n            y = 1\n            z = 2\n",
			[]EditOp{op("    if x:\n        y = 1\n        z = 2", "    if x:\n        y = 5\n        z = 2")}, fault.CodeNoMatch, map[string]any{"edit": 0, "newTextLine": 2, "lines": []int{8}, "rung": editmatch.RungIndentation}},
		{"retried, a sibling at the trailing-whitespace rung", "[a]\nkey = new_value\nmode = fast\n[b]\nkey = old_value  \nmode = fast\n",
			[]EditOp{op("key = old_value\nmode = fast", "key = new_value\nmode = fast")}, fault.CodeNoMatch, map[string]any{"edit": 0, "newTextLine": 2, "lines": []int{5}, "rung": editmatch.RungTrailingWhitespace}},
		{"retried, a sibling at the unicode rung", "say(\"Don't stop now\")\nx = 1\nsay(\"Don\u2019t stop\")\n",
			[]EditOp{op("say(\"Don't stop\")", "say(\"Don't stop now\")")}, fault.CodeNoMatch, map[string]any{"edit": 0, "newTextLine": 1, "lines": []int{3}, "rung": editmatch.RungUnicode}},
		// The first call found a loosely (tabs for spaces) and wrote
		// newText in its tabs; retried, it found b at the unicode rung,
		// newText standing nowhere byte for byte.
		{"retried, newText in the file's style, a looser sibling", "func a() {\n\tsay(\"it's\")\n\tn = 2\n}\n\nfunc b() {\n    say(\"it\u2019s\")\n    n = 1\n}\n",
			[]EditOp{op("    say(\"it's\")\n    n = 1", "    say(\"it's\")\n    n = 2")}, fault.CodeNoMatch, map[string]any{"edit": 0, "newTextLine": 2, "lines": []int{7}, "rung": editmatch.RungUnicode}},
		{"the same edit twice, retried", "x\nvalue = 2\ny\n", []EditOp{op("value = 1", "value = 2"), op("value = 1", "value = 2")}, fault.CodeNoMatch, map[string]any{"edits": []int{0, 1}, "newTextLine": 2}},
		{"two edits' newText on one line", "x\nvalue = 2\ny\n", []EditOp{op("value = 1", "value = 2"), op("valve = 1", "value = 2")}, fault.CodeNoMatch, map[string]any{"edits": []int{0, 1}, "newTextLine": 2}},
		{"one newText inside another's", "a\nkey = 2\nother = 3\nb\n", []EditOp{op("other = 4", "other = 3"), op("key = 1\nother = 3", "key = 2\nother = 3")}, fault.CodeNoMatch, map[string]any{"edits": []int{0, 1}, "newTextLine": 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := planBoth(t, tc.src, tc.edits)
			var e *fault.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
			for k, v := range tc.details {
				if !reflect.DeepEqual(e.Details[k], v) {
					t.Errorf("details[%s] = %#v, want %#v", k, e.Details[k], v)
				}
			}
		})
	}
}

// A NO_MATCH with nothing like oldText in the file names no closest region
// and says to copy oldText from the file; in an empty file, which has
// nothing to copy, to give it content with write.
func TestNoMatchNothingClose(t *testing.T) {
	for _, tc := range []struct{ src, message, hint string }{
		{"a\nb\n", "oldText was not found in the file.", "read the file and copy oldText from it exactly"},
		{"", "oldText was not found: the file is empty.", "the file is empty, nothing to copy oldText from: give it content with write (or write --append)"},
	} {
		_, _, err := planBoth(t, tc.src, []EditOp{op("zzz", "y")})
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeNoMatch {
			t.Fatalf("%q: err %v, want NO_MATCH", tc.src, err)
		}
		if _, ok := e.Details["closest"]; ok || e.Message != tc.message || e.Hint != tc.hint {
			t.Errorf("%q: closest %v, message %q, hint %q", tc.src, e.Details["closest"], e.Message, e.Hint)
		}
	}
}

func TestNoMatchClosestRegion(t *testing.T) {
	src := "package p\n\nfunc alpha() int {\n\treturn 1\n}\n\nfunc beta() int {\n\treturn 2\n}\n"
	_, _, err := planBoth(t, src, []EditOp{op("func beta() int {\n\treturn 3\n}", "x")})
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeNoMatch {
		t.Fatalf("err %v, want NO_MATCH", err)
	}
	c, ok := e.Details["closest"].(editmatch.ClosestRegion)
	if !ok {
		t.Fatalf("no closest region in %+v", e.Details)
	}
	if c.StartLine != 7 || c.EndLine != 9 || c.Similarity < 0.8 || c.Similarity >= 1 {
		t.Errorf("closest %+v, want lines 7-9 with similarity in [0.8,1)", c)
	}
	if c.Text != "func beta() int {\n\treturn 2\n}" {
		t.Errorf("closest text %q", c.Text)
	}
	if !strings.Contains(e.Hint, "lines 7-9") {
		t.Errorf("hint %q does not name the lines", e.Hint)
	}
}

// A closest region of one line is named as one, not as lines 1-1.
func TestNoMatchClosestLine(t *testing.T) {
	_, _, err := planBoth(t, "alpha := beta(1)\n\nzzz\n", []EditOp{op("alpha := beta(2)", "x")})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeNoMatch {
		t.Fatalf("err %v, want NO_MATCH", err)
	}
	if !strings.HasPrefix(e.Hint, "the closest region is line 1 (similarity") || !strings.Contains(e.Hint, "read the region and copy oldText from it exactly") {
		t.Errorf("hint %q", e.Hint)
	}
}

// TestEditLadderRefusesLookAlikes: the second review's cases. Each was a
// silent success that changed the wrong bytes or none.
func TestUnevenIndentationHint(t *testing.T) {
	n := "if x {\ny()\nz()\n}"
	_, _, err := planBoth(t, "func f() {\n\tfor {\n\t\tif x {\n\t\t\ty()\n\t\t}\n\t}\n}\n", []EditOp{{OldText: "if x {\ny()\n}", NewText: &n}})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeNoMatch || !strings.Contains(e.Hint, "indentation") || !strings.Contains(e.Hint, "lines 3-5") {
		t.Fatalf("uneven indentation: %v (hint %q)", err, fault.AsError(err).Hint)
	}
}

func TestEditLadderRefusesLookAlikes(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name, src string
		edits     []EditOp
		want      string // the edited content, or "" for an error
		code      fault.Code
	}{
		{"a deleting edit whose old text is stale is NO_MATCH, not already applied",
			"a\nfoo()\nbar()\nc\n", []EditOp{{OldText: "foo(1)\nbar()\n", NewText: str("bar()\n")}}, "", fault.CodeNoMatch},
		{"a batch never half applies through already-applied",
			"import a\n\nfunc main() {\n\tlegacyInit()\n\trun()\n}\n",
			[]EditOp{{OldText: "import a", NewText: str("import b")}, {OldText: "\tlegacyInit(cfg)\n\trun()", NewText: str("\trun()")}}, "", fault.CodeNoMatch},
		{"already applied beside a real edit is a file in another state",
			"a\nB\nc\n", []EditOp{{OldText: "b", NewText: str("B")}, {OldText: "c", NewText: str("C")}}, "", fault.CodeNoMatch},
		{"a stale edit whose newText is a common line never half-applies a batch",
			"func f() error {\n\tx := 1\n\treturn nil\n}\n",
			[]EditOp{{OldText: "\tx := 2", NewText: str("\treturn nil")}, {OldText: "func f()", NewText: str("func g()")}}, "", fault.CodeNoMatch},
		{"a retried batch is already applied whole",
			"a\nBETA\nGAMMA\n", []EditOp{{OldText: "beta", NewText: str("BETA")}, {OldText: "gamma", NewText: str("GAMMA")}}, "a\nBETA\nGAMMA\n", ""},
		{"newText in several places is no proof of a retry",
			"x\nB\nB\n", []EditOp{{OldText: "b", NewText: str("B")}}, "", fault.CodeNoMatch},
		{"a line the model adds keeps a number that looks like a gutter",
			"ports:\n  web: 1\n  db: 2\nend\n", []EditOp{{OldText: "2\t  web: 1", NewText: str("2\t  web: 1\n  8080: web")}},
			"ports:\n  web: 1\n  8080: web\n  db: 2\nend\n", ""},
		{"a real retry is already applied",
			"x = foo(2)\n", []EditOp{{OldText: "x = foo(1)", NewText: str("x = foo(2)")}}, "x = foo(2)\n", ""},
		{"newText inside a longer line is no proof of a retry",
			"x = foo(2)\n", []EditOp{{OldText: "foo(1)", NewText: str("foo(2)")}}, "", fault.CodeNoMatch},
		{"a YAML key is not a gutter",
			"ports:\n  8080: web\n", []EditOp{{OldText: "9090: web", NewText: str("9090: api")}}, "", fault.CodeNoMatch},
		{"a TSV id is not a gutter",
			"id\tfruit\n1\tapple\n2\tbanana\n", []EditOp{{OldText: "3\tbanana", NewText: str("3\tcherry")}}, "", fault.CodeNoMatch},
		{"a real gutter, with an added line in newText",
			"a\nb\nc\n", []EditOp{{OldText: "2\tb\n3\tc", NewText: str("2\tb\nnew line\n3\tc")}}, "a\nb\nnew line\nc\n", ""},
		{"uneven indentation is not a whitespace match",
			"func f() {\n\tfor {\n\t\tif x {\n\t\t\ty()\n\t\t}\n\t}\n}\n",
			[]EditOp{{OldText: "if x {\ny()\n}", NewText: str("if x {\ny()\nz()\n}")}}, "", fault.CodeNoMatch},
		{"overlapping occurrences are ambiguous",
			"x\n\t}\n}\n}\ny\n", []EditOp{{OldText: "}\n}\n", NewText: str("}\n// end\n}\n")}}, "", fault.CodeAmbiguousMatch},
		{"overlapping occurrences within a line are ambiguous",
			"aaa\n", []EditOp{{OldText: "aa", NewText: str("X")}}, "", fault.CodeAmbiguousMatch},
		{"replaceAll rewrites non-overlapping occurrences",
			"aaa\n", []EditOp{{OldText: "aa", NewText: str("X"), ReplaceAll: true}}, "Xa\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := planBoth(t, tc.src, tc.edits)
			if tc.code != "" {
				if err == nil || fault.AsError(err).Code != tc.code {
					t.Fatalf("got %q, %v; want %s", out, err, tc.code)
				}
				return
			}
			if err != nil || out != tc.want {
				t.Fatalf("got %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}

// TestAlreadyApplied: a retried edit is recognised only when its newText
// stands whole (line start to line end) and once; the line is its first.
func TestAlreadyApplied(t *testing.T) {
	for _, tc := range []appliedCase{
		{"a whole line", "a\nkey = 2\nb\n", "key = 1", "key = 2", 2},
		{"whole lines with their newline", "a\nbeta 2\ngamma 2\n", "beta 1\ngamma 1\n", "beta 2\ngamma 2\n", 2},
		{"the last line without a newline", "a\nbeta 2", "beta 1", "beta 2", 2},
		{"the first line", "beta 2\nc\n", "beta 1", "beta 2", 1},
		{"CRLF lines", "a\r\nbeta 2\r\ngamma 2\r\n", "beta 1\ngamma 1\n", "beta 2\ngamma 2\n", 2},
		{"CRLF newText against CRLF lines", "a\r\nbeta 2\r\ngamma 2\r\n", "beta 1\r\ngamma 1", "beta 2\r\ngamma 2", 2},
		{"a line with a lone CR is still whole", "alpha 2\r\r\nb\n", "alpha 1\r", "alpha 2\r", 1},
		{"case changed", "a\nBETA\n", "beta", "BETA", 2},
		{"inside a word", "monkey = 2\n", "key = 1", "key = 2", 0},
		// Boilerplate that stands once: unlike an oldText never there.
		{"a line of boilerplate unlike oldText", "int f() {\n  if (a) {\n  } else {\n  }\n}\n", "while (z) {", "  } else {", 0},
		// Indentation alike on both sides made deep lines alike: "while
		// z:" passed for a retry of an edit to "else:" at 8 spaces.
		{"boilerplate, deeply indented", "class A:\n    def f(self):\n        if x:\n            a()\n        else:\n            b()\n", "        while z:", "        else:", 0},
		{"boilerplate, deeply indented, whole lines", "class A:\n    def f(self):\n        if x:\n            a()\n        else:\n            b()\n", "        while z:\n", "        else:\n", 0},
		{"unlike, deeply indented", "class A:\n    def f(self):\n        pass\n", "        raise NotImplementedError", "        pass", 0},
		{"a return unlike oldText", "def f(x):\n    if x:\n        pass\n    return x\n", "    if y > 3:", "    return x", 0},
		// Too slight to tell one edit from another: any oldText not found
		// passed for a retry, with success.
		{"a lone brace", "func f() {\n}\n", "unrelated text", "}", 0},
		{"no letter or digit", "f(\n});\n", "unrelated text", "});", 0},
		{"three letters", "if x\nend\n", "unrelated text", "end", 0},
		{"from a line start to mid-line", "def greet():\n", "def hi():", "def greet", 0},
		{"from mid-line to a line end", "def greet():\n", "hi():", "greet():", 0},
		{"across lines, ending mid-line", "alpha\nbeta gamma\n", "alpha\nbet", "alpha\nbeta", 0},
		{"indented, not from the line start", "\treturn 2\n", "return 1", "return 2", 0},
		{"twice, as whole lines", "beta\nbeta\n", "betas", "beta", 0},
		{"whole once, and inside another line", "x = 1\nmax_x = 1\n", "x = 0", "x = 1", 0},
		{"blank", "a\n\n", "x", "\n", 0},
		{"part of oldText (a deletion)", "beta\n", "alpha\nbeta", "beta", 0},
		// newText stands once, but other lines are more like oldText: the
		// edit was meant for them, and they are unchanged.
		{"the same key in another section", "[dev]\ntimeout = 30\nretries = 3\n[prod]\ntimeout = 60\nretries = 5\n", "timeout=60", "timeout = 30", 0},
		{"a stale value of another section", "[dev]\nretries = 3\n[prod]\nretries = 5\n", "retries = 4", "retries = 3", 0},
		{"the sibling function", "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a  -  b\n", "    return a - b\n", "    return a + b\n", 0},
		// As like oldText elsewhere: which was meant cannot be told.
		{"as like oldText elsewhere", "key = 2\nkey = 3\n", "key = 1", "key = 2", 0},
		{"a retry of a block among like lines", "x = 0\nbeta 2\ngamma 2\nx = 0\n", "beta 1\ngamma 1\n", "beta 2\ngamma 2\n", 2},
		{"newText's final newline at a file's end without one", "a\nLAST", "last\n", "LAST\n", 2},
		{"a final newline that is not at the file's end", "LAST\na", "last\n", "LAST\n", 1},
		// A loose rung wrote the lines newText keeps of oldText as the
		// file spells them: newText stands so, not byte for byte.
		{"a kept line with the file's trailing spaces", "# T\nRoses are red,  \nViolets are purple.\n", "Roses are red,\nViolets are blue.", "Roses are red,\nViolets are purple.", 2},
		{"a kept form feed line", "int a;\n\f\nint c;\n", "int a;\n\nint b;", "int a;\n\nint c;", 1},
		{"a kept line, at a file's end without a newline", "x\nalpha 1 \nbeta 2", "alpha 1\nbeta 1\n", "alpha 1\nbeta 2\n", 2},
		// A kept line at another column is no loose rung's writing: a
		// retry is not proven (it passed for one, the file unchanged).
		{"a kept line at another column", "import os\nif request.user.is_admin:\n        request.timeout = 60\n", "    if request.user.is_admin:\n        request.timeout = 30\n", "    if request.user.is_admin:\n        request.timeout = 60\n", 0},
		{"a kept YAML key at another level", "server:\n  port: 80\ncache:\n    enabled: true\n", "  cache:\n    enabled: false\n", "  cache:\n    enabled: true\n", 0},
		{"a kept line in tabs at newText's column", "\tif request.user.is_admin:\nrequest.timeout = 60\n", "    if request.user.is_admin:\nrequest.timeout = 30\n", "    if request.user.is_admin:\nrequest.timeout = 60\n", 1},
		// A line the edit changed is written as newText has it.
		{"a changed line but for its trailing spaces", "Roses are red,\nViolets are purple.  \n", "Roses are red,\nViolets are blue.", "Roses are red,\nViolets are purple.", 0},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, provenRetry) })
	}
}

// provenRetry is alreadyApplied's line when it proves the retry.
func provenRetry(t *editmatch.Text, oldText, newText string) (int, bool) {
	line, r := alreadyApplied(t, oldText, newText)
	return line, r == retried
}

// TestRetryVerdict: what a file says of an edit whose oldText is gone and
// whose newText stands once. Where oldText stands elsewhere but for its
// spacing, that is the target (it was taken for a retry at a sibling, with
// success, and the target kept its value); where other lines are only as
// like oldText, a retry is not proven, nor refuted (refused, a retry was
// pointed at a sibling's line to copy oldText from).
func TestRetryVerdict(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		want                retry
	}{
		{"unique", "a\nkey = 2\nb\n", "key = 1", "key = 2", retried},
		{"a sibling value, a tie", "[dev]\ntimeout = 30\n[prod]\ntimeout = 45\n", "timeout = 60", "timeout = 45", maybeRetried},
		{"a sibling variable", "DB_HOST=db.internal\nCACHE_HOST=localhost\n", "DB_HOST=localhost", "DB_HOST=db.internal", maybeRetried},
		// oldText elsewhere but for its spacing may be the target (it was
		// taken for a retry at a sibling, with success) or a sibling.
		{"the target without spaces", "[dev]\ntimeout = 30\n[prod]\ntimeout=60\n", "timeout = 60", "timeout = 30", maybeRetried},
		{"a Python keyword without spaces", "def f():\n    retries = 3\n\ndef g():\n    retries=5\n", "    retries = 5\n", "    retries = 3\n", maybeRetried},
		{"TOML without spaces", "[a]\nversion = \"1.0\"\n[b]\nversion=\"2.0\"\n", "version = \"2.0\"\n", "version = \"1.0\"\n", maybeRetried},
		{"the target in other case", "[dev]\nTimeout = 30\n[prod]\ntimeout = 60\n", "TIMEOUT = 60", "Timeout = 30", maybeRetried},
		{"gofmt's aligned field in another struct", "type A struct {\n\tName   string\n\tAge    int\n}\n\ntype B struct {\n\tName int\n}\n", "\tName string\n", "\tName int\n", maybeRetried},
		// oldText is still where newText stands, respaced: never made.
		{"oldText respaced at newText's place", "name = x\nage = 30\n", "name=x\nage=30\n", "age = 30\n", notRetried},
		{"an edit of spacing alone", "a\nkey=2\nb\n", "key = 2", "key=2", retried},
		{"respaced at newText's own place", "a\nkey=2\nb\n", "key = 1", "key=2", retried},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := alreadyApplied(editmatch.New(tc.src), tc.old, tc.new); got != tc.want {
				t.Fatalf("verdict %d, want %d", got, tc.want)
			}
		})
	}
}

// TestUnprovenRetryNamesNewTextLine: a retry neither proven nor refuted
// is NO_MATCH naming newText's line, with a hint that says both.
func TestUnprovenRetryNamesNewTextLine(t *testing.T) {
	nt := "timeout = 45"
	_, _, err := planEdits("[dev]\ntimeout = 30\n[prod]\ntimeout = 45\n", []EditOp{{OldText: "timeout = 60", NewText: &nt}})
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeNoMatch || e.Details["newTextLine"] != 4 || !strings.Contains(e.Hint, "nothing is left to do") {
		t.Fatalf("err %v", err)
	}
}

// appliedCase is an edit old -> new retried on src, already applied at
// line (0: not applied).
type appliedCase struct {
	name, src, old, new string
	line                int
}

// check checks that applied finds tc's edit as tc says.
func (tc appliedCase) check(t *testing.T, applied func(*editmatch.Text, string, string) (int, bool)) {
	t.Helper()
	line, ok := applied(editmatch.New(tc.src), tc.old, tc.new)
	if ok != (tc.line > 0) || ok && line != tc.line {
		t.Fatalf("applied = %d, %v; want line %d", line, ok, tc.line)
	}
}

// TestAppliedBehindGutter: a retried edit copied with a line-number
// gutter is already applied when its stripped newText stands at the line
// the gutter names, and only there.
func TestAppliedBehindGutter(t *testing.T) {
	for _, tc := range []appliedCase{
		{"at the gutter's line", "line1\nLINE2\nline3\n", "2\tline2", "2\tLINE2", 2},
		{"two lines", "l1\nL2\nL3\n", "2\tl2\n3\tl3", "2\tL2\n3\tL3", 2},
		{"at another line", "L2\nl1\n", "2\tl2", "2\tL2", 0},
		{"no gutter", "l1\nL2\n", "l2", "L2", 0},
		{"oldText still there, at another line", "x\nif err != nil { return err }\nif err != nil { panic(err) }\n",
			"2\tif err != nil { panic(err) }", "2\tif err != nil { return err }", 0},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, appliedBehindGutter) })
	}
}

// TestRetriedAddition: an edit that adds whole lines around oldText
// (newText holds oldText) finds oldText still there when retried, and
// added its lines again, with success. Retried, it is already applied
// where newText stands around oldText's one exact match and the lines
// added tell one edit from another; a blank line, a lone brace or text
// added within a line may be meant twice, and is added again.
func TestRetriedAddition(t *testing.T) {
	const fold = "package json\n\nfunc foldRune(r rune) rune {\n\treturn r\n}\n"
	noinline := op("func foldRune(r rune) rune {", "//go:noinline\nfunc foldRune(r rune) rune {")
	docA, addC := op("func a() {}", "// a does.\nfunc a() {}"), op("func b() {}", "func b() {}\n\nfunc c() {}")
	ab := "import x\n\nfunc a() {}\n\nfunc b() {}\n"
	for _, tc := range []struct {
		name  string
		src   string
		edits []EditOp // made once, then again (retry, when set, instead)
		retry []EditOp
		want  string     // the content after the retry, when it is applied again
		lines []int      // the lines of a retry already applied
		code  fault.Code // the retry's error
	}{
		{name: "a directive before a function", src: fold, edits: []EditOp{noinline}, lines: []int{3}},
		{name: "a line after an indented anchor", src: "func f() {\n\tx := 1\n}\n", edits: []EditOp{op("x := 1", "x := 1\n\tlog(x)")}, lines: []int{2}},
		{name: "lines before and after", src: "a\nmid line\nz\n", edits: []EditOp{op("mid line", "// begin\nmid line\n// end")}, lines: []int{2}},
		{name: "after an oldText with its newline", src: "a\nmid line\nz\n", edits: []EditOp{op("mid line\n", "mid line\nmore text\n")}, lines: []int{2}},
		{name: "CRLF file", src: "a\r\nfunc f() {\r\n}\r\n", edits: []EditOp{op("func f() {", "// f does.\nfunc f() {")}, lines: []int{2}},
		{name: "CRLF newText in a CRLF file", src: "a\r\nfunc f() {\r\n}\r\n", edits: []EditOp{op("func f() {\r\n", "// f does.\r\nfunc f() {\r\n")}, lines: []int{2}},
		{name: "a batch retried whole", src: ab, edits: []EditOp{docA, addC}, lines: []int{3, 6}},
		{name: "lines before an anchor that ends mid-line", src: "a(b) c\n", edits: []EditOp{op("a(b)", "// calls a\na(b)")}, lines: []int{1}},
		{name: "lines before a unicode fragment inside a deeper indentation", src: "def f():\n    if a:\n        print(\"hi\") or die()\n",
			edits: []EditOp{op("    print(\u201chi\u201d)", "    log()\n    print(\u201chi\u201d)")}, lines: []int{3}},
		{name: "lines before a fragment inside a deeper indentation", src: "def f():\n    if a:\n        print(\"hi\") or die()\n",
			edits: []EditOp{op("    print(\"hi\")", "    log()\n    print(\"hi\")")}, lines: []int{3}},
		{name: "lines before a fragment inside a deeper tab indentation", src: "func f() {\n\tif a {\n\t\tx() || y()\n\t}\n}\n",
			edits: []EditOp{op("\tx()", "\tlog()\n\tx()")}, lines: []int{3}},
		{name: "lines after a unicode fragment inside a deeper indentation", src: "def f():\n    if a:\n        print(\"hi\")\n",
			edits: []EditOp{op("    print(\u201chi\u201d)", "    print(\u201chi\u201d)\n    log()")}, lines: []int{3}},
		// From the end of the line before (oldText and newText start
		// with its line ending): the lines added were added again.
		{name: "lines before, from the end of the line before", src: "package a\nfunc foo() {\n}\n", edits: []EditOp{op("\nfunc foo() {", "\n// foo does things.\nfunc foo() {")}, lines: []int{2}},
		{name: "lines before, from the end of a CRLF line", src: "a\r\nfunc f() {\r\n}\r\n", edits: []EditOp{op("\r\nfunc f() {", "\r\n// f does.\r\nfunc f() {")}, lines: []int{2}},
		{name: "lines after, from the end of the line before", src: "package a\nfunc foo() {\n}\n", edits: []EditOp{op("\nfunc foo() {", "\nfunc foo() {\n\tlog.Print(\"in foo\")")}, lines: []int{2}},
		{name: "a blank line from the end of the line before is added again", src: "a\nfoo()\n", edits: []EditOp{op("\nfoo()", "\n\nfoo()")}, want: "a\n\n\nfoo()\n"},
		{name: "lines added ending mid-line are added again", src: "a(b) c\n", edits: []EditOp{op("a(b)", "a(b)\nnew line")}, want: "a(b)\nnew line\nnew line c\n"},
		{name: "lines added starting mid-line are added again", src: "x := f(a)\n", edits: []EditOp{op("f(a)", "gg(1)\nf(a)")}, want: "x := gg(1)\ngg(1)\nf(a)\n"},
		{name: "a blank line is added again", src: "foo()\nbar()\n", edits: []EditOp{op("foo()", "foo()\n")}, want: "foo()\n\n\nbar()\n"},
		{name: "a lone brace is added again", src: "if x {\n\ty()\n", edits: []EditOp{op("\ty()", "\ty()\n}")}, want: "if x {\n\ty()\n}\n}\n"},
		{name: "text within a line is added again", src: "call(alpha)\n", edits: []EditOp{op("alpha", "alpha, beta")}, want: "call(alpha, beta, beta)\n"},
		{name: "oldText twice after an edit that doubles it", src: "item one\n", edits: []EditOp{op("item one", "item one\nitem one")}, code: fault.CodeAmbiguousMatch},
		{name: "one retried, one new", src: ab, edits: []EditOp{docA}, retry: []EditOp{docA, op("func b() {}", "func b() { return }")}, code: fault.CodeNoMatch},
		{name: "the same addition twice in a batch", src: ab, edits: []EditOp{docA}, retry: []EditOp{docA, docA}, code: fault.CodeNoMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, _, err := planBoth(t, tc.src, tc.edits)
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			retry := tc.edits
			if tc.retry != nil {
				retry = tc.retry
			}
			twice, outcomes, err := planBoth(t, once, retry)
			switch {
			case tc.code != "":
				if fault.AsError(err) == nil || fault.AsError(err).Code != tc.code {
					t.Fatalf("retry: %q, %v; want %s", twice, err, tc.code)
				}
			case err != nil:
				t.Fatalf("retry: %v", err)
			case tc.lines == nil:
				if twice != tc.want || outcomes[0].AlreadyApplied {
					t.Fatalf("retry: %q, %+v; want %q applied again", twice, outcomes, tc.want)
				}
			default:
				var lines []int
				for _, o := range outcomes {
					if !o.AlreadyApplied || len(o.Lines) != 1 {
						t.Fatalf("retry outcome %+v, want already applied", o)
					}
					lines = append(lines, o.Lines[0])
				}
				if twice != once || !reflect.DeepEqual(lines, tc.lines) {
					t.Fatalf("retry: %q, lines %v; want %q unchanged, lines %v", twice, lines, once, tc.lines)
				}
			}
		})
	}
}

// TestAdditionAboveANestedMatchByChance: oldText found inside a deeper
// indentation has newText's later lines written after that indentation;
// newText's first line at a line's start above it is the file's own line,
// which no edit there wrote: a first edit adds its lines, not
// alreadyApplied.
func TestAdditionAboveANestedMatchByChance(t *testing.T) {
	for _, tc := range []struct{ name, src, old, new, want string }{
		{"exact, spaces", "if a:\n    log()\n        print(\"hi\") or die()\n", "    print(\"hi\")", "    log()\n    print(\"hi\")",
			"if a:\n    log()\n        log()\n        print(\"hi\") or die()\n"},
		{"exact, tabs", "func f() {\n\tlog()\n\t\tx() || y()\n}\n", "\tx()", "\tlog()\n\tx()",
			"func f() {\n\tlog()\n\t\tlog()\n\t\tx() || y()\n}\n"},
		{"exact, the line at the first column", "bar()\n        x() || y()\n", "    x()", "bar()\n    x()",
			"bar()\n    bar()\n        x() || y()\n"},
		{"unicode fragment", "if a:\n    log()\n        print(\"hi\") or die()\n", "    print(\u201chi\u201d)", "    log()\n    print(\u201chi\u201d)",
			"if a:\n    log()\n        log()\n        print(\"hi\") or die()\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outcomes, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil || outcomes[0].AlreadyApplied || got != tc.want {
				t.Fatalf("got %q, %+v, %v; want %q", got, outcomes, err, tc.want)
			}
		})
	}
}

// TestRetriedLooseEdit: an edit located at a loose rung wrote the lines
// newText keeps of oldText as the file spells them; retried, its newText
// stands so, and it is already applied, the file unchanged.
func TestRetriedLooseEdit(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		once                string
		line                int
	}{
		{"a Markdown hard break", "# T\n\nRoses are red,  \nViolets are blue.\n", "Roses are red,\nViolets are blue.", "Roses are red,\nViolets are purple.", "# T\n\nRoses are red,  \nViolets are purple.\n", 3},
		{"a form feed line", "int a;\n\f\nint b;\n", "int a;\n\nint b;", "int a;\n\nint c;", "int a;\n\f\nint c;\n", 1},
		{"a trailing NBSP, CRLF", "x = 1\u00a0\r\ny = 2\r\n", "x = 1\ny = 2", "x = 1\ny = 3", "x = 1\u00a0\r\ny = 3\r\n", 1},
		// Lines added around oldText, which a retry still finds: they
		// were added again on every retry but on the exact rung.
		{"lines added after, trailing whitespace", "# Notes\nfirst point  \nsecond point\n", "first point\nsecond point", "first point\nsecond point\nthird point added", "# Notes\nfirst point  \nsecond point\nthird point added\n", 2},
		// oldText ending before a line's trailing spaces: the exact rung
		// matched it there, and the spaces went after the added line,
		// which then did not end a line: each retry added it again.
		{"lines added after, oldText before trailing spaces", "one\r\ntwo  \r\nthree\r\n", "one\ntwo", "one\ntwo\nadded line here", "one\r\ntwo\r\nadded line here  \r\nthree\r\n", 1},
		{"lines added before, a CRLF file", "a\r\nfoo = 1 \t\r\n", "foo = 1\n", "// the answer, said once\nfoo = 1\n", "a\r\n// the answer, said once\r\nfoo = 1 \t\r\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, _, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil || once != tc.once {
				t.Fatalf("first run: %q, %v; want %q", once, err, tc.once)
			}
			twice, outcomes, err := planBoth(t, once, []EditOp{op(tc.old, tc.new)})
			if err != nil || twice != once || !outcomes[0].AlreadyApplied || !reflect.DeepEqual(outcomes[0].Lines, []int{tc.line}) {
				t.Fatalf("retry: %q, %+v, %v; want already applied at line %d", twice, outcomes, err, tc.line)
			}
		})
	}
}

// TestRetryBeforeTrailingSpaces: an edit whose exact oldText ended before
// a line's trailing spaces left them after newText; retried, its oldText
// gone, it matched a sibling at a loose rung and changed it with success,
// newText standing there taken for no edit's writing, as it does not end
// where the line does. It is NO_MATCH naming newText's line, as for a
// line without the spaces.
func TestRetryBeforeTrailingSpaces(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		newAt               int // the NO_MATCH's newTextLine
	}{
		{"a sibling at the indentation rung", "def setup():\n    total = compute(a)  \n    return total\n\ntotal = compute(a)\n", "    total = compute(a)", "    total = compute(a, b)", 2},
		{"a sibling at the unicode rung", "x = 1\t\nmsg = \u201chi there\u201d\nmsg = \"hi there\" \n", "msg = \"hi there\"", "msg = \"hi again\"", 3},
		{"a sibling unindented, tabs", "func f() {\n\tname := load(id) \n}\n\nname := load(id)\n", "\tname := load(id)", "\tname := loadOnce(id)", 2},
		{"several lines", "if ok:\n    a = 1\n    b = 2 \nelse:\n  a = 1\n  b = 2\n", "    a = 1\n    b = 2", "    a = 1\n    b = 3", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, _, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			twice, outcomes, err := planBoth(t, once, []EditOp{op(tc.old, tc.new)})
			var e *fault.Error
			if !errors.As(err, &e) || e.Code != fault.CodeNoMatch || e.Details["newTextLine"] != tc.newAt {
				t.Fatalf("retry: %q, %+v, %v; want NO_MATCH naming line %d", twice, outcomes, err, tc.newAt)
			}
		})
	}
}

// TestEditEndingInCR: oldText and newText copied from CRLF lines without
// the last LF end in a CR, which is the line's ending: newText's was
// written before the file's own CRLF ("two\r\r\n"), with success.
func TestEditEndingInCR(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new, want string
	}{
		{"one CRLF line", "a\r\nkey = 1\r\nz\r\n", "key = 1\r", "key = 2\r", "a\r\nkey = 2\r\nz\r\n"},
		{"two CRLF lines", "a\r\nkey = 1\r\nval = 1\r\nz\r\n", "key = 1\r\nval = 1\r", "key = 2\r\nval = 2\r", "a\r\nkey = 2\r\nval = 2\r\nz\r\n"},
		{"the last line, no final line ending", "a\r\nkey = 1", "key = 1\r", "key = 2\r", "a\r\nkey = 2"},
		{"an LF file", "key = 1\nz\n", "key = 1\r", "key = 2\r", "key = 2\nz\n"},
		{"trailing spaces before the CRLF", "key = 1  \r\nz\r\n", "key = 1\r", "key = 2\r", "key = 2\r\nz\r\n"},
		{"newText without the CR", "key = 1\r\nz\r\n", "key = 1\r", "key = 2", "key = 2\r\nz\r\n"},
		// A lone CR the file holds is matched byte for byte.
		{"a lone CR in the file", "key = 1\rz\n", "key = 1\r", "key = 2\r", "key = 2\rz\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			// Retried, it is applied already.
			again, outcomes, err := planBoth(t, got, []EditOp{op(tc.old, tc.new)})
			if !strings.Contains(tc.name, "without the CR") && !strings.Contains(tc.name, "lone CR") && (err != nil || again != got || !outcomes[0].AlreadyApplied) {
				t.Fatalf("retry: %q, %+v, %v; want already applied", again, outcomes, err)
			}
		})
	}
}

// TestPlanLargeBatch: a batch large enough to switch from scans to the
// index gives what scanning alone gives, rung by rung (editmatch's
// TestLargeBatchIndexes shows the switch).
func TestPlanLargeBatch(t *testing.T) {
	var src strings.Builder
	var edits []EditOp
	for i := range 300 {
		switch i % 4 {
		case 0: // exact
			fmt.Fprintf(&src, "exact %d\n", i)
			edits = append(edits, op(fmt.Sprintf("exact %d\n", i), fmt.Sprintf("EXACT %d\n", i)))
		case 1: // trailing whitespace, two lines
			fmt.Fprintf(&src, "ws %d  \nws %d\t\n", i, i)
			edits = append(edits, op(fmt.Sprintf("ws %d\nws %d\n", i, i), fmt.Sprintf("WS %d\n", i)))
		case 2: // unicode fragment
			fmt.Fprintf(&src, "say(\u201chi %d\u201d)\n", i)
			edits = append(edits, op(fmt.Sprintf(`"hi %d"`, i), fmt.Sprintf(`"bye %d"`, i)))
		case 3: // indentation
			fmt.Fprintf(&src, "\tif x%d {\n\t\treturn\n\t}\n", i)
			edits = append(edits, op(fmt.Sprintf("    if x%d {\n        return\n    }", i), fmt.Sprintf("    if y%d {\n        return\n    }", i)))
		}
	}
	src.WriteString("tail\ntail\n")
	edits = append(edits, EditOp{OldText: "tail", NewText: str("end"), ReplaceAll: true})
	_, outcomes, err := planBoth(t, src.String(), edits)
	if err != nil {
		t.Fatalf("a batch of %d edits: %v", len(edits), err)
	}
	rungs := map[string]int{}
	for _, o := range outcomes {
		rungs[o.Rung]++
	}
	if !reflect.DeepEqual(rungs, map[string]int{editmatch.RungExact: 76, editmatch.RungTrailingWhitespace: 75, editmatch.RungUnicode: 75, editmatch.RungIndentation: 75}) {
		t.Errorf("rungs %v", rungs)
	}
	// An ambiguous edit late in the batch is found through the index.
	edits = append(edits, op("tail", "x"))
	_, _, err = planEdits(src.String(), edits)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeAmbiguousMatch || e.Details["edit"] != len(edits)-1 {
		t.Fatalf("ambiguous late edit: %v", err)
	}
}

// The U+FEFF at the start of a file after an edit: one a newText wrote is
// dropped (it would be read back as a byte-order mark), one of the file's
// own text brought to the start stays, byte for byte. Checked through
// Edit, where the drop was made: "\n\uFEFFb" less its first line lost
// its U+FEFF; two adjacent edits, the first deleting line 1, put a mark.
func TestEditMarksAtTheStart(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		edits     []EditOp
		want      string
	}{
		{"the file's own kept", "\n\uFEFFb", []EditOp{op("\n", "")}, "\uFEFFb"},
		{"one newText wrote dropped", "abc\n", []EditOp{op("abc", "\uFEFFABC")}, "ABC\n"},
		{"one an adjacent edit wrote dropped", "abc\ndef\n", []EditOp{op("abc\n", ""), op("def", "\uFEFFDEF")}, "DEF\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := memfs.New(map[string]string{"f": tc.src})
			if _, err := (&Tools{FS: fs, LockTimeout: time.Second}).Edit(context.Background(), EditRequest{Path: "f", Edits: tc.edits}); err != nil {
				t.Fatal(err)
			}
			if got := fileText(fs, "f"); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// TestRetryBesideAnExactMatchInsideIndentation: oldText found byte for
// byte only inside a deeper line's indentation is passed over for a
// whole-line match at a loose rung, which the first call changes;
// retried, that line's oldText gone, the exact match inside the
// indentation was taken and changed a second place, with success, as an
// exact match got no retry check. It is NO_MATCH naming newText's line,
// as for a loose match.
func TestRetryBesideAnExactMatchInsideIndentation(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		newAt               int // the first call's line, the NO_MATCH's newTextLine
	}{
		{"two lines", "        beta\n        x = 1\n    beta \n        x = 1\n", "    beta\n        x = 1", "    beta.v\n        x = 1", 3},
		{"one line", "        beta\n    beta \n", "    beta\n", "    beta.v\n", 2},
		{"two levels deeper", "class A:\n    def f(self):\n            beta\n        x = 1\n\n    beta \n        x = 1\n", "    beta\n        x = 1", "    beta.v\n        x = 1", 6},
		{"tabs", "\t\tbeta\n\tx = 1\n\tbeta \n\tx = 1\n", "\tbeta\n\tx = 1", "\tbeta.v\n\tx = 1", 3},
	} {
		t.Run(tc.name, func(t *testing.T) { retryRefused(t, tc.src, tc.old, tc.new, tc.newAt, "") })
	}
}

// retryRefused runs the edit of old to new over src, which must change
// line newAt (at rung, when given), then the same edit again, which must
// be NO_MATCH naming newAt as newText's line.
func retryRefused(t *testing.T, src, old, new string, newAt int, rung string) {
	t.Helper()
	once, outcomes, err := planBoth(t, src, []EditOp{op(old, new)})
	if err != nil || rung != "" && outcomes[0].Rung != rung || !reflect.DeepEqual(outcomes[0].Lines, []int{newAt}) {
		t.Fatalf("first run: %q, %+v, %v; want line %d changed (rung %q)", once, outcomes, err, newAt, rung)
	}
	twice, outcomes, err := planBoth(t, once, []EditOp{op(old, new)})
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeNoMatch || e.Details["newTextLine"] != newAt {
		t.Fatalf("retry: %q, %+v, %v; want NO_MATCH naming line %d", twice, outcomes, err, newAt)
	}
}

// TestRetryOfAUnicodeMatchBesideAHiddenFragment: oldText found only at the
// unicode rung, on whole lines, hides a fragment of lines that overlaps
// them (the rung counts a fragment only where no window of whole lines
// overlaps it); the first call changes the window, and retried, the
// fragment, a sibling alike but for its typography, was changed too, with
// success, as newText standing at the unicode rung was taken for no
// edit's writing. It is NO_MATCH naming newText's line.
func TestRetryOfAUnicodeMatchBesideAHiddenFragment(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		newAt               int // the first call's line, the NO_MATCH's newTextLine
	}{
		{"an NBSP", "retries = 3\nretries =\u00a03\nretries = 3 + extra\n", "retries = 3\nretries = 3", "retries = 5\nretries = 3", 1},
		{"tabs", "\tx = 1\n\tx =\u00a01\n\tx = 1 + 1\n", "\tx = 1\n\tx = 1", "\tx = 2\n\tx = 1", 1},
		{"a dash", "    return total - 1\n    return total \u2013 1\n    return total - 1 or 0\n", "    return total - 1\n    return total - 1", "    return total - 6\n    return total - 1", 1},
		{"curly quotes, the file's", "s = \u201chi\u201d\ns = \u201chi\u201d\ns = \"hi\" + x\n", "s = \"hi\"\ns = \u201chi\"", "s = \"bye\"\ns = \u201chi\"", 1},
	} {
		t.Run(tc.name, func(t *testing.T) { retryRefused(t, tc.src, tc.old, tc.new, tc.newAt, editmatch.RungUnicode) })
	}
}

// TestRetryFromALineEnd: oldText and newText that both start with a line
// ending (copied from the end of the line before) wrote newText's lines
// from the start of a line, but newText found there was taken for no
// whole lines: retried, the edit was NO_MATCH where it landed, and where
// a sibling alike but for its typography follows, changed that too, with
// success. It is already applied at newText's first line, or NO_MATCH
// naming it beside a sibling; text added within a line still applies
// again.
func TestRetryFromALineEnd(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		line                int    // the retry's alreadyApplied line
		newAt               int    // or the NO_MATCH's newTextLine
		twice               string // or the content after the retry, applied again
	}{
		{name: "alone", src: "def f():\n    count = 1\n    return count\n", old: "\n    count = 1", new: "\n    count = 2", line: 2},
		{name: "two lines, CRLF", src: "def f():\r\n    count = 1\r\n    y = 1\r\n", old: "\r\n    count = 1\r\n    y = 1", new: "\r\n    count = 2\r\n    y = 1", line: 2},
		{name: "with its line ending too", src: "a\nkey = 1\nb\n", old: "\nkey = 1\n", new: "\nkey = 2\n", line: 2},
		{name: "a sibling further on", src: "def f():\n    count = 1\ndef g():\n    count =\u00a01\n", old: "\n    count = 1", new: "\n    count = 2", newAt: 2},
		{name: "a sibling on the next line", src: "if a:\n    count = 1\n    count\u00a0= 1\n", old: "\n    count = 1", new: "\n    count = 2", newAt: 2},
		{name: "text added within the line", src: "def f():\n    count = 1\n", old: "\n    count = 1", new: "\n    count = 10", twice: "def f():\n    count = 100\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, _, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			twice, outcomes, err := planBoth(t, once, []EditOp{op(tc.old, tc.new)})
			var e *fault.Error
			switch {
			case tc.newAt > 0:
				if !errors.As(err, &e) || e.Code != fault.CodeNoMatch || e.Details["newTextLine"] != tc.newAt {
					t.Fatalf("retry: %q, %+v, %v; want NO_MATCH naming line %d", twice, outcomes, err, tc.newAt)
				}
			case tc.line > 0:
				if err != nil || twice != once || !outcomes[0].AlreadyApplied || !reflect.DeepEqual(outcomes[0].Lines, []int{tc.line}) {
					t.Fatalf("retry: %q, %+v, %v; want already applied at line %d", twice, outcomes, err, tc.line)
				}
			default:
				if err != nil || twice != tc.twice || outcomes[0].AlreadyApplied {
					t.Fatalf("retry: %q, %+v, %v; want %q applied again", twice, outcomes, err, tc.twice)
				}
			}
		})
	}
	t.Run("a batch of edits on lines one after the other", func(t *testing.T) {
		// Each claims its own line, not the line before too.
		edits := []EditOp{op("\nkey = 1", "\nkey = 2"), op("\nval = 1", "\nval = 2")}
		once, _, err := planBoth(t, "a\nkey = 1\nval = 1\n", edits)
		if err != nil {
			t.Fatalf("first run: %v", err)
		}
		twice, outcomes, err := planBoth(t, once, edits)
		if err != nil || twice != once || !outcomes[0].AlreadyApplied || !outcomes[1].AlreadyApplied || !reflect.DeepEqual(outcomes[1].Lines, []int{3}) {
			t.Fatalf("retry: %q, %+v, %v; want both already applied", twice, outcomes, err)
		}
	})
}

// TestKeptFlushAfterIndentation: a one-line oldText without indentation
// found after a line's indentation, that newText keeps at column 0 on a
// later line, had newText written in oldText's own frame: its later lines
// take the line's indentation (written as given, the line kept left its
// block), and a retry finds them so. newText that gives the kept line the
// file's indentation, or a match after text or at column 0, is written
// as given.
func TestKeptFlushAfterIndentation(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		ops       []EditOp
		want      string
		retried   bool // a retry is alreadyApplied; else it applies again, as the man page says of such edits
	}{
		{"a line added above, spaces", "def f():\n    print(x)\n", []EditOp{op("print(x)", "# note\nprint(x)")},
			"def f():\n    # note\n    print(x)\n", true},
		{"a decorator, CRLF", "class A:\r\n    def f(self):\r\n        pass\r\n", []EditOp{op("def f(self):", "@staticmethod\ndef f(self):")},
			"class A:\r\n    @staticmethod\r\n    def f(self):\r\n        pass\r\n", true},
		{"a line added above, tabs", "func f() {\n\tx()\n}\n", []EditOp{op("x()\n", "log()\nx()\n")},
			"func f() {\n\tlog()\n\tx()\n}\n", true},
		{"a block around it: not flush, as given", "func f() {\n\tx()\n}\n", []EditOp{op("x()\n", "if ok {\n\tx()\n}\n")},
			"func f() {\n\tif ok {\n\tx()\n}\n}\n", false},
		{"replaceAll in two indentations and at column 0", "a()\n  a()\n\ta()\n", []EditOp{{OldText: "a()", NewText: str("b()\na()"), ReplaceAll: true}},
			"b()\na()\n  b()\n  a()\n\tb()\n\ta()\n", false},
		{"the kept line given the file's indentation", "def f():\n    print(x)\n", []EditOp{op("print(x)", "# note\n    print(x)")},
			"def f():\n    # note\n    print(x)\n", true},
		{"after text", "y = print(x)\n", []EditOp{op("print(x)", "# note\nprint(x)")},
			"y = # note\nprint(x)\n", false},
		{"no later line kept", "if a:\n    if b:\n", []EditOp{op("if b:", "if b:\n    pass")},
			"if a:\n    if b:\n    pass\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outcomes, err := planBoth(t, tc.src, tc.ops)
			if err != nil || outcomes[0].AlreadyApplied || got != tc.want {
				t.Fatalf("got %q, %+v, %v; want %q", got, outcomes, err, tc.want)
			}
			if !tc.retried {
				return
			}
			again, outcomes, err := planBoth(t, got, tc.ops)
			if err != nil || again != got || !outcomes[0].AlreadyApplied {
				t.Fatalf("retry: %q, %+v, %v; want already applied", again, outcomes, err)
			}
		})
	}
}

// TestRetryAtEndWithoutNewline: oldText's final line ending matched the
// end of a file that has none, and newText, which keeps oldText, added
// lines after it: the file ends with them, without newText's final line
// ending, which stood for the end. A retry finds oldText exact, now
// followed by a line ending, and newText there but for that ending: it
// is alreadyApplied, where it added the lines a second time.
func TestRetryAtEndWithoutNewline(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		ops       []EditOp
		want      string
	}{
		{"at column 0", "top:\nx()", []EditOp{op("x()\n", "# note\nx()\nafter()\n")},
			"top:\n# note\nx()\nafter()"},
		{"after indentation", "top:\n    x()", []EditOp{op("x()\n", "# note\nx()\nafter()\n")},
			"top:\n    # note\n    x()\n    after()"},
		{"CRLF", "top:\r\n\tx()", []EditOp{op("x()\r\n", "# note\r\nx()\r\nafter()\r\n")},
			"top:\r\n\t# note\r\n\tx()\r\n\tafter()"},
		{"a line after only", "top:\nx()", []EditOp{op("x()\n", "x()\nafter_all()\n")},
			"top:\nx()\nafter_all()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outcomes, err := planBoth(t, tc.src, tc.ops)
			if err != nil || outcomes[0].AlreadyApplied || got != tc.want {
				t.Fatalf("got %q, %+v, %v; want %q", got, outcomes, err, tc.want)
			}
			again, outcomes, err := planBoth(t, got, tc.ops)
			if err != nil || again != got || !outcomes[0].AlreadyApplied {
				t.Fatalf("retry: %q, %+v, %v; want already applied", again, outcomes, err)
			}
		})
	}
}
