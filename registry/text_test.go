package registry

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
)

// listings are ls, find, grep and grep --mode files of a workspace of one
// file, name, holding word.
func listings(t *testing.T, name, word string) (*core.LsResult, *core.FindResult, *core.GrepResult, *core.GrepResult) {
	t.Helper()
	tl := &core.Tools{FS: memfs.New(map[string]string{name: word + "\n"})}
	ctx := context.Background()
	ls, err := tl.Ls(ctx, core.LsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	find, err := tl.Find(ctx, core.FindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	grep, err := tl.Grep(ctx, core.GrepRequest{Query: word})
	if err != nil {
		t.Fatal(err)
	}
	files, err := tl.Grep(ctx, core.GrepRequest{Query: word, Mode: core.ModeFiles})
	if err != nil {
		t.Fatal(err)
	}
	return ls, find, grep, files
}

// A name that is not UTF-8 is printed as its bytes, as fd, rg and ls print
// it: with U+FFFD in their place, a name named a file that does not exist,
// and n\xfe and n\xff printed alike.
func TestTextNamesAreTheirBytes(t *testing.T) {
	name := "n\xff.txt"
	ls, find, grep, files := listings(t, name, "foo")
	grepLines, _ := grepText(grep, Palette{})
	grepFiles, _ := grepText(files, Palette{})
	for _, tc := range []struct{ what, got, want string }{
		{"ls", lsText(ls, Palette{}), name + "\n"},
		{"find", findText(find, Palette{}), name + "\n"},
		{"grep", grepLines, name + ":1:foo\n"},
		{"grep --mode files", grepFiles, name + "\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}

// On a terminal, a control character of a walked name or link target is
// shown escaped, as ls quotes it: a file named with an escape sequence set
// the window's title and cleared the screen. A pipe gets the bytes.
func TestTextNamesOnATerminal(t *testing.T) {
	name := "x\x1b]0;PWNED\a\x1b[2J\u0085\x9b.txt"
	ls, find, grep, _ := listings(t, name, "hit")
	shown := `x\x1b]0;PWNED\x07\x1b[2J\u0085\x9b.txt`
	term := Palette{Terminal: true}
	grepTerm, _ := grepText(grep, term)
	grepPipe, _ := grepText(grep, Palette{})
	for _, tc := range []struct{ what, got, want string }{
		{"ls", lsText(ls, term), shown + "\n"},
		{"find", findText(find, term), shown + "\n"},
		{"grep", grepTerm, shown + ":1:hit\n"},
		{"grep to a pipe", grepPipe, name + ":1:hit\n"},
		{"find to a pipe", findText(find, Palette{}), name + "\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}
