package patch

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// lines joins its arguments into a text, one a line.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the parsed patch rendered by String
	}{
		{"add", lines("*** Begin Patch", "*** Add File: a.txt", "+x", "+", "+  y", "*** End Patch"),
			lines("*** Begin Patch", "*** Add File: a.txt", "+x", "+", "+  y", "*** End Patch")},
		{"add empty file", lines("*** Begin Patch", "*** Add File: e", "*** End Patch"),
			lines("*** Begin Patch", "*** Add File: e", "*** End Patch")},
		{"add without the space after the colon", lines("*** Begin Patch", "*** Add File:a", "+x", "*** End Patch"),
			lines("*** Begin Patch", "*** Add File: a", "+x", "*** End Patch")},
		{"delete", lines("*** Begin Patch", "*** Delete File: /abs/b.go", "*** End Patch"),
			lines("*** Begin Patch", "*** Delete File: /abs/b.go", "*** End Patch")},
		{"update, move, context, end of file",
			lines("*** Begin Patch", "*** Update File: a.py", "*** Move to: b.py", "@@ def f():", "-    pass", "+    return 1", " ", "*** End of File", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a.py", "*** Move to: b.py", "@@ def f():", "-    pass", "+    return 1", " ", "*** End of File", "*** End Patch")},
		{"first chunk without @@", lines("*** Begin Patch", "*** Update File: a", " import foo", "+bar", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", " import foo", "+bar", "*** End Patch")},
		{"several chunks", lines("*** Begin Patch", "*** Update File: a", "@@", "-1", "+one", "@@ class A", "-2", "+two", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "-1", "+one", "@@ class A", "-2", "+two", "*** End Patch")},
		{"an empty line is empty context", lines("*** Begin Patch", "*** Update File: a", "@@", " x", "", "-y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", " x", " ", "-y", "*** End Patch")},
		{"blank lines before a chunk and between chunks", lines("*** Begin Patch", "*** Update File: a", "", "@@", "-x", "\t", "@@", "-y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "@@", "-y", "*** End Patch")},
		{"blank lines between sections", lines("*** Begin Patch", "", "*** Add File: a", "+x", "  ", "*** Delete File: b", "", "*** End Patch"),
			lines("*** Begin Patch", "*** Add File: a", "+x", "*** Delete File: b", "*** End Patch")},
		{"an update ends at the next section", lines("*** Begin Patch", "*** Update File: a", "@@", "+x", "*** Add File: b", "+y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "+x", "*** Add File: b", "+y", "*** End Patch")},
		{"whitespace around markers", lines(" *** Begin Patch ", "  *** Update File:  a  ", "\t*** Move to: b ", "@@  ", "-x", "*** End of File  ", "*** End Patch\t"),
			lines("*** Begin Patch", "*** Update File: a", "*** Move to: b", "@@", "-x", "*** End of File", "*** End Patch")},
		{"a blank @@ context is none", lines("*** Begin Patch", "*** Update File: a", "@@    ", "-x", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "*** End Patch")},
		{"@@ context keeps its spaces", lines("*** Begin Patch", "*** Update File: a", "@@   if x:", "-x", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@   if x:", "-x", "*** End Patch")},
		{"a unified diff's header: its ranges are no context", lines("*** Begin Patch", "*** Update File: a", "@@ -951,7 +951,7 @@", "-x", "@@ -3 +3 @@", "-y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "@@", "-y", "*** End Patch")},
		{"a unified diff's header: its heading is", lines("*** Begin Patch", "*** Update File: a", "@@ -9,7 +9,8 @@ func (c *Client) Head(url string) {", "-x", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@ func (c *Client) Head(url string) {", "-x", "*** End Patch")},
		{"an indented header inside a chunk is context, as in Codex", lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "  *** Add File: b", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "  *** Add File: b", "*** End Patch")},
		// OpenAI's apply_patch instructions teach @@ lines in a row, outermost
		// first; a bare @@ among them names nothing and ends them.
		{"@@ lines in a row are scopes", lines("*** Begin Patch", "*** Update File: a.py", "@@ class B:", "@@     def f(self):", "-x", "@@", "@@ def g():", "-y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a.py", "@@ class B:", "@@     def f(self):", "-x", "@@ def g():", "-y", "*** End Patch")},
		{"a bare @@ then a scoped one: the second chunk's", lines("*** Begin Patch", "*** Update File: a", "@@ one", "-x", "@@", "-y", "*** End Patch"),
			lines("*** Begin Patch", "*** Update File: a", "@@ one", "-x", "@@", "-y", "*** End Patch")},
		{"CRLF", "*** Begin Patch\r\n*** Update File: a\r\n@@\r\n-x\r\n+y\r\n*** End Patch\r\n",
			lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "+y", "*** End Patch")},
		{"blank lines around the patch, no final newline", "\n \n*** Begin Patch\n*** Delete File: a\n*** End Patch\n\n\t",
			lines("*** Begin Patch", "*** Delete File: a", "*** End Patch")},
		{"heredoc", lines("<<EOF", "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"),
			lines("*** Begin Patch", "*** Delete File: a", "*** End Patch")},
		{"quoted heredoc", lines("<<'EOF'", "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"),
			lines("*** Begin Patch", "*** Delete File: a", "*** End Patch")},
		{"double-quoted heredoc", lines(`<<"EOF"`, "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"),
			lines("*** Begin Patch", "*** Delete File: a", "*** End Patch")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	in := lines("", "<<'EOF'", "*** Begin Patch", "*** Add File: a", "+x", "", "*** Update File: b",
		"", "-old", "+new", "@@ ctx", " c", "*** End Patch", "EOF")
	p, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &Patch{Ops: []Op{
		{Kind: Add, Path: "a", Line: 4, Content: "x\n"},
		{Kind: Update, Path: "b", Line: 7, Chunks: []Chunk{
			{Line: 9, Lines: []Line{{'-', "old"}, {'+', "new"}}},
			{Line: 11, Context: "ctx", Lines: []Line{{' ', "c"}}},
		}},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	if old, new := p.Ops[1].Chunks[0].Old(), p.Ops[1].Chunks[0].New(); !reflect.DeepEqual(old, []string{"old"}) || !reflect.DeepEqual(new, []string{"new"}) {
		t.Errorf("old %q new %q", old, new)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string // part of the message
	}{
		{"empty", "", 1, "empty"},
		{"blank", "\n \n", 1, "empty"},
		{"no begin", lines("hello", "*** End Patch"), 1, "must start with"},
		{"no end", lines("*** Begin Patch", "*** Add File: a", "+x"), 3, "must end with"},
		{"text after the end", lines("*** Begin Patch", "*** Delete File: a", "*** End Patch", "thanks"), 4, "must end with"},
		{"no sections", lines("", "*** Begin Patch", "*** End Patch"), 3, "no file sections"},
		{"unknown header", lines("*** Begin Patch", "*** Frobnicate File: foo", "*** End Patch"), 2, "not a file section header"},
		{"added line without +", lines("*** Begin Patch", "*** Add File: a", "+x", "y", "*** End Patch"), 4, "not a file section header"},
		{"end marker twice", lines("*** Begin Patch", "*** Delete File: a", "*** End Patch", "*** End Patch"), 3, "not a file section header"},
		{"add without path", lines("*** Begin Patch", "*** Add File:  ", "+x", "*** End Patch"), 2, "has no path"},
		{"delete without path", lines("*** Begin Patch", "*** Delete File:", "*** End Patch"), 2, "has no path"},
		{"move without path", lines("*** Begin Patch", "*** Update File: a", "*** Move to: ", "@@", "-x", "*** End Patch"), 3, "has no path"},
		{"update without chunks", lines("*** Begin Patch", "*** Update File: a", "*** End Patch"), 2, "has no chunks"},
		{"update with a move only", lines("*** Begin Patch", "*** Update File: a", "*** Move to: b", "*** End Patch"), 2, "has no chunks"},
		{"chunk without lines", lines("*** Begin Patch", "*** Update File: a", "@@", "*** End Patch"), 4, "has no lines"},
		{"chunk with only the end of file", lines("*** Begin Patch", "*** Update File: a", "@@", "*** End of File", "*** End Patch"), 4, "has no lines"},
		{"unprefixed line", lines("*** Begin Patch", "*** Update File: a", "@@", "bad", "*** End Patch"), 4, "not a line of a chunk"},
		{"unprefixed first line without @@", lines("*** Begin Patch", "*** Update File: a", "bad", "*** End Patch"), 3, "not a line of a chunk"},
		{"second chunk without @@", lines("*** Begin Patch", "*** Update File: a", "@@", "-x", "bad", "*** End Patch"), 5, "must start with '@@'"},
		{"heredoc without the end marker", lines("<<EOF", "*** Begin Patch", "*** Add File: a", "EOF"), 3, "must end with"},
		{"mismatched heredoc quotes", lines(`<<"EOF'`, "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"), 1, "must start with"},
		{"CRLF line numbers", "*** Begin Patch\r\n\r\n*** Update File: a\r\n*** End Patch\r\n", 3, "has no chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			fe := fault.AsError(err)
			if err == nil || fe.Code != fault.CodePatchParse {
				t.Fatalf("error %v, want PATCH_PARSE", err)
			}
			if fe.Details["line"] != tt.line || !strings.Contains(fe.Message, tt.msg) || fe.Hint == "" {
				t.Errorf("line %v, message %q, hint %q; want line %d and %q", fe.Details["line"], fe.Message, fe.Hint, tt.line, tt.msg)
			}
		})
	}
}
