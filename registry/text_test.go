package registry

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
)

// A name that is not UTF-8 is printed as its bytes, as fd, rg and ls print
// it: with U+FFFD in their place, a name named a file that does not exist,
// and n\xfe and n\xff printed alike.
func TestTextNamesAreTheirBytes(t *testing.T) {
	name := "n\xff.txt"
	tl := &core.Tools{FS: memfs.New(map[string]string{name: "foo\n"})}
	ctx := context.Background()
	ls, err := tl.Ls(ctx, core.LsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	find, err := tl.Find(ctx, core.FindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	grep, err := tl.Grep(ctx, core.GrepRequest{Query: "foo"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := tl.Grep(ctx, core.GrepRequest{Query: "foo", Mode: core.ModeFiles})
	if err != nil {
		t.Fatal(err)
	}
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
