package registry

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func ptr(s string) *string { return &s }

// Colouring adds escape codes and nothing else: each rendering with
// Colors, its codes taken out, is the plain rendering byte for byte, and
// it holds the colour of each kind of thing it shows.
func TestPaletteOnlyAddsColour(t *testing.T) {
	tl := &core.Tools{FS: memfs.New(map[string]string{
		"a.txt": "alpha\nbeta\nalpha\n", "d/b.txt": "bravo\nalpha\n",
	})}
	ctx := context.Background()
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type render func(p Palette) string
	cases := []struct {
		name  string
		text  render
		codes []string
	}{
		{"ls", func(p Palette) string {
			return lsText(must(tl.Ls(ctx, core.LsRequest{Long: true})).(*core.LsResult), p)
		}, []string{Colors.Dir}},
		{"find", func(p Palette) string {
			return findText(must(tl.Find(ctx, core.FindRequest{Type: "dir"})).(*core.FindResult), p)
		}, []string{Colors.Dir}},
		{"grep", func(p Palette) string {
			s, _ := grepText(must(tl.Grep(ctx, core.GrepRequest{Query: "alpha", Context: 1})).(*core.GrepResult), p)
			return s
		}, []string{Colors.Path, Colors.Line}},
		{"grep files", func(p Palette) string {
			s, _ := grepText(must(tl.Grep(ctx, core.GrepRequest{Query: "alpha", Mode: core.ModeFiles})).(*core.GrepResult), p)
			return s
		}, []string{Colors.Path}},
		{"edit", func(p Palette) string {
			return editText(must(tl.Edit(ctx, core.EditRequest{Path: "a.txt", OldText: ptr("beta"), NewText: ptr("gamma"), DryRun: true})).(*core.EditResult), p)
		}, []string{Colors.Header, Colors.Hunk, Colors.Added, Colors.Removed}},
		{"replace", func(p Palette) string {
			s, _ := replaceText(must(tl.Replace(ctx, core.ReplaceRequest{Query: "alpha", Replacement: ptr("omega"), DryRun: true})).(*core.ReplaceResult), p)
			return s
		}, []string{Colors.Header, Colors.Hunk, Colors.Added, Colors.Removed}},
	}
	for _, tc := range cases {
		plain, colored := tc.text(Palette{}), tc.text(Colors)
		if ansi.MatchString(plain) {
			t.Errorf("%s: the plain rendering has escape codes: %q", tc.name, plain)
		}
		if got := ansi.ReplaceAllString(colored, ""); got != plain {
			t.Errorf("%s: the coloured rendering without its codes is\n%q\nwant\n%q", tc.name, got, plain)
		}
		for _, c := range tc.codes {
			if !strings.Contains(colored, c) {
				t.Errorf("%s: no %q in %q", tc.name, c, colored)
			}
		}
	}
}
