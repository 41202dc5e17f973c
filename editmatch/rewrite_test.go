package editmatch

import (
	"strings"
	"testing"
)

// TestRewrite: newText is written as the rung that located oldText asks
// (restyled for the unicode rung, re-indented for the indentation rung) and
// in the line endings of the region it replaces.
func TestRewrite(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		rung                string
		want                string
		restyled, reindent  bool
	}{
		{"exact, as given", "a\nb\n", "b", "c\nd", RungExact, "c\nd", false, false},
		{"exact in a CRLF file", "a\r\nb\r\n", "b", "c\r\nd", RungExact, "c\r\nd", false, false},
		{"a mixed file: the region's endings", "a\r\nb\nc\r\n", "b", "x\ny", RungExact, "x\ny", false, false},
		// Each line ending of newText takes the region's in its place: one
		// ending for the whole region made a CRLF line before an LF line LF.
		{"a mixed region keeps each line's ending", "a\r\nb\nc\r\n", "a\r\nb", "a\r\nB", RungExact, "a\r\nB", false, false},
		{"a mixed region, its endings in order", "a\r\nb\nc\r\n", "a\r\nb\nc\r\n", "A\nB\nC\n", RungExact, "A\r\nB\nC\r\n", false, false},
		// A line added or taken off shifted the endings of those after it.
		{"a line added above keeps the others' endings", "a\r\nb\n", "a\nb\n", "X\na\nb\n", RungExact, "X\na\r\nb\n", false, false},
		{"a line taken off keeps the others'", "a\r\nb\nc\r\n", "a\nb\nc", "a\nc", RungExact, "a\r\nc", false, false},
		{"a line added below keeps the others'", "a\r\nb\nc\r\n", "b\nc", "b\nc\nd", RungExact, "b\nc\r\nd", false, false},
		{"a line added takes the region's usual ending, the last its last", "a\r\nb\nc\r\nd\r\n", "b\nc\r\n", "B\nX\nC\n", RungExact, "B\nX\nC\r\n", false, false},
		{"a line taken off: the last ending stays", "a\nb\r\nc\nd\r\n", "b\r\nc\nd\r\n", "B\nD\n", RungExact, "B\r\nD\r\n", false, false},
		// At a fuzzy rung the lines are paired by the rung's key: as
		// written, none was equal, all were paired in order, and the
		// endings shifted as they did at the exact rung before.
		{"trailing-whitespace: a line added keeps the others' endings", "a  \r\nb  \nc  \r\nz\n", "a\nb\nc\n", "a\nNEW\nb\nc\n", RungTrailingWhitespace, "a  \r\nNEW\r\nb  \nc  \r\n", false, false},
		{"trailing-whitespace: a line taken off keeps the others'", "a \r\nb \nc \r\nd \nz\n", "a\nb\nc\nd\n", "a\nc\nd\n", RungTrailingWhitespace, "a \r\nc \r\nd \n", false, false},
		{"indentation: a line added keeps the others' endings", "  a\r\n  b\n  c\r\nz\n", "a\nb\nc\n", "a\nNEW\nb\nc\n", RungIndentation, "  a\r\n  NEW\r\n  b\n  c\r\n", false, true},
		{"unicode: a line taken off keeps the others'", "\u201ca\u201d \r\nb\n\u201cc\u201d\r\nd\nz\n", "\"a\"\nb\n\"c\"\nd\n", "\"a\"\n\"c\"\nd\n", RungUnicode, "\u201ca\u201d \r\n\u201cc\u201d\r\nd\n", true, false},
		{"a line without terminator takes the file's usual ending", "a\r\nb\r\nc", "c", "x\ny", RungExact, "x\r\ny", false, false},
		{"a one-line file without one is LF", "abc", "b", "x\ny", RungExact, "x\ny", false, false},
		// A file with no line ending has no style to impose: newText's
		// CRLF stands, as write keeps a new file's.
		{"a file without one keeps newText's CRLF", "abc", "b", "x\r\ny", RungExact, "x\r\ny", false, false},
		{"a file without one, newText's endings mixed: LF", "abc", "b", "x\r\ny\nz", RungExact, "x\ny\nz", false, false},
		{"unicode: the file's quotes", "say \u201chi\u201d\n", `say "hi"`, `say "bye"`, RungUnicode, "say \u201cbye\u201d", true, false},
		{"unicode: nothing to restyle", "say \u201chi\u201d\n", `say "hi"`, "x", RungUnicode, "x", false, false},
		{"oldText's final newline at a file's end without one: newText's goes", "a\nlast", "last\n", "LAST\n", RungTrailingWhitespace, "LAST", false, false},
		{"indentation: tabs for spaces", "\tif x {\n\t\ty()\n\t}\n", "  if x {\n    y()\n  }", "  if z {\n    y()\n  }", RungIndentation, "\tif z {\n\t\ty()\n\t}", false, true},
		// A line newText keeps of oldText (an equal run of their line
		// diff) is written as the region spells it, with what the rung
		// ignored: newText as written dropped a Markdown hard break, a
		// form feed, a trailing NBSP or U+2028, which apply-patch keeps.
		{"trailing-whitespace: a kept line keeps its trailing spaces", "# T\nRoses are red,  \nViolets are blue.\n", "Roses are red,\nViolets are blue.", "Roses are red,\nViolets are purple.", RungTrailingWhitespace, "Roses are red,  \nViolets are purple.", false, false},
		{"trailing-whitespace: a kept form feed line", "int a;\n\f\nint b;\n", "int a;\n\nint b;", "int a;\n\nint c;", RungTrailingWhitespace, "int a;\n\f\nint c;", false, false},
		{"trailing-whitespace: kept tabs, a line added", "a\t\nb \t\nc\n", "a\nb\nc", "a\nb\nX\nc", RungTrailingWhitespace, "a\t\nb \t\nX\nc", false, false},
		{"trailing-whitespace: a changed line as newText writes it", "a  \nb  \n", "a\nb", "a\nB", RungTrailingWhitespace, "a  \nB", false, false},
		{"trailing-whitespace: a kept line in a CRLF file", "a  \r\nb\r\n", "a\nb\n", "a\nc\n", RungTrailingWhitespace, "a  \r\nc\r\n", false, false},
		{"trailing-whitespace: at a file's end without a newline", "x\na \nb ", "a\nb\n", "a\nc\n", RungTrailingWhitespace, "a \nc", false, false},
		// A line newText moves is no line kept in place: as written.
		{"trailing-whitespace: a moved line as written", "a \nb \nc\n", "a\nb\nc", "b\nc\na", RungTrailingWhitespace, "b \nc\na", false, false},
		{"whitespace: a kept trailing NBSP", "x = 1\u00a0\ny = 2\n", "x = 1\ny = 2", "x = 1\ny = 3", RungWhitespace, "x = 1\u00a0\ny = 3", false, false},
		{"whitespace: a kept trailing U+2028", "x = 1\u2028\ny = 2\n", "x = 1\ny = 2", "x = 1\ny = 3", RungWhitespace, "x = 1\u2028\ny = 3", false, false},
		{"whitespace: a kept blank line's spaces", "a\n  \nb\u00a0\n", "a\n\nb", "a\n\nc", RungWhitespace, "a\n  \nc", false, false},
		{"indentation: a kept line keeps its trailing spaces", "\tif x {  \n\t\ty()\n\t}\n", "  if x {\n    y()\n  }", "  if x {\n    z()\n  }", RungIndentation, "\tif x {  \n\t\tz()\n\t}", false, true},
		{"unicode: a kept line keeps its trailing spaces", "Don\u2019t stop  \nnow\n", "Don't stop\nnow", "Don't stop\nthen", RungUnicode, "Don\u2019t stop  \nthen", true, false},
		{"unicode: a kept line keeps its trailing NBSP and tab", "say \u201chi\u201d\u00a0\t\nend\n", "say \"hi\"\nend", "say \"hi\"\nstop", RungUnicode, "say \u201chi\u201d\u00a0\t\nstop", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := New(tc.src)
			ms := tx.Locate(tc.old)
			if len(ms) != 1 || ms[0].Rung != tc.rung {
				t.Fatalf("Locate(%q) = %+v, want one match at %s", tc.old, ms, tc.rung)
			}
			repl, restyled, reindented, err := tx.Rewriter(tc.old, tc.new, ms[0].Rung).Rewrite(ms[0])
			if err != nil {
				t.Fatal(err)
			}
			if repl != tc.want || restyled != tc.restyled || reindented != tc.reindent {
				t.Fatalf("Rewrite = %q, restyled %v, reindented %v; want %q, %v, %v", repl, restyled, reindented, tc.want, tc.restyled, tc.reindent)
			}
		})
	}
}

func TestLines(t *testing.T) {
	tx := New("ab\r\ncd\nef")
	for n, want := range map[int][3]int{1: {0, 2, 4}, 2: {4, 6, 7}, 3: {7, 9, 9}} {
		if s, e, nx := tx.Line(n); [3]int{s, e, nx} != want {
			t.Errorf("Line(%d) = %d, %d, %d; want %v", n, s, e, nx, want)
		}
	}
	for pos, want := range map[int]int{0: 1, 3: 1, 4: 2, 6: 2, 7: 3, 9: 4} {
		if got := tx.LineAt(pos); got != want {
			t.Errorf("LineAt(%d) = %d, want %d", pos, got, want)
		}
	}
	if tx.Content() != "ab\r\ncd\nef" {
		t.Errorf("Content() = %q", tx.Content())
	}
}

func TestStripGutterLines(t *testing.T) {
	for _, tc := range []struct {
		in          string
		first, last int
		want        string
	}{
		{"2\tb\nnew\n3\tc", 2, 3, "b\nnew\nc"},
		{"2\tb\n  8080: web", 2, 3, "b\n  8080: web"},
		{"2: b\n4: d", 2, 3, "b\n4: d"},
	} {
		if got := StripGutterLines(tc.in, tc.first, tc.last); got != tc.want {
			t.Errorf("StripGutterLines(%q, %d, %d) = %q, want %q", tc.in, tc.first, tc.last, got, tc.want)
		}
	}
}

// TestClosest: the window of lines most like oldText, its similarity, and
// its text cut to a bound; none in an empty file.
func TestClosest(t *testing.T) {
	src := "package p\n\nfunc alpha() int {\n\treturn 1\n}\n\nfunc beta() int {\n\treturn 2\n}\n"
	c, ok := New(src).Closest("func beta() int {\n\treturn 3\n}")
	if !ok || c.StartLine != 7 || c.EndLine != 9 || c.Similarity < 0.8 || c.Similarity >= 1 || c.Text != "func beta() int {\n\treturn 2\n}" {
		t.Errorf("Closest = %+v, %v; want lines 7-9 with similarity in [0.8,1)", c, ok)
	}
	// A CRLF file's region reads as read shows it, with LF.
	if c, ok := New(strings.ReplaceAll(src, "\n", "\r\n")).Closest("func beta() int {\n\treturn 3\n}"); !ok || c.Text != "func beta() int {\n\treturn 2\n}" {
		t.Errorf("Closest in a CRLF file = %+v, %v; want its text with LF", c, ok)
	}
	// oldText longer than the file: its lines past the end are unlike,
	// not left out (a similarity of 1 for lines the file lacks).
	if c, ok := New("one\ntwo\n").Closest("one\ntwo\nthree"); !ok || c.EndLine != 2 || c.Similarity != 0.55 {
		t.Errorf("Closest of three lines in two = %+v, %v; want lines 1-2 with similarity 0.55", c, ok)
	}
	if c, ok := New("").Closest("x"); ok {
		t.Errorf("Closest in an empty file = %+v", c)
	}
	// oldText the folding erases is like nothing: a blank line was
	// named equal to it (similarity 1, "match but for indentation").
	if c, ok := New("a\n\nb\n").Closest("\u200b"); ok {
		t.Errorf("Closest of a zero-width space = %+v", c)
	}
	long := strings.Repeat("é", closestTextBytes)
	c, ok = New(long + "\n").Closest(long)
	if !ok || len(c.Text) > closestTextBytes+len("…[truncated]") || !strings.HasSuffix(c.Text, "…[truncated]") || !strings.HasPrefix(long, strings.TrimSuffix(c.Text, "…[truncated]")) {
		t.Errorf("a long region's text: %d bytes, %q...", len(c.Text), c.Text[:min(len(c.Text), 20)])
	}
}
