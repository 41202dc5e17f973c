package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
)

// globFromRootTree is the tree TestGlobAtAnyDepthFromRoot searches.
var globFromRootTree = []string{"src/main.go", "src/x/a.go", "src/x/src/deep.go", "src/lib/util.go",
	"lib/l.go", "lib/src/y.go", "a/src/z.go", "top.go"}

// globTreeTools are the tools of globFromRootTree (each file "hello") on
// a local directory and in memory, by backend name.
func globTreeTools(t *testing.T) map[string]*core.Tools {
	t.Helper()
	files := map[string]string{}
	for _, f := range globFromRootTree {
		files[f] = "hello\n"
	}
	local, _ := tools(t)
	for f, text := range files {
		if _, err := local.Write(context.Background(), core.WriteRequest{Path: f, Content: &text}); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]*core.Tools{"localfs": local, "memfs": {FS: memfs.New(files)}}
}

// TestGlobAtAnyDepthFromRoot: a glob that starts with **/ matches at any
// depth, so include, exclude and find's pattern match it against the path
// from the root, as the answers spell it, which a path below --path
// extends: rg -g matches a glob against the path as given, the path
// searched included. The sets below are rg 13's (rg --files PATH -g GLOB,
// and -g '!GLOB' for exclude, run in the tree), which are those the rule
// "the glob matched against the root-relative path" gives. Matched below
// --path alone, grep src/x --include '**/src/**' missed src/x/a.go, and
// grep src --include '**/{src,lib}/*.go' src/main.go, with exit 0.
func TestGlobAtAnyDepthFromRoot(t *testing.T) {
	cases := []struct{ glob, path, include, exclude string }{
		{"**/src/*.go", ".", "a/src/z.go lib/src/y.go src/main.go src/x/src/deep.go", "lib/l.go src/lib/util.go src/x/a.go top.go"},
		{"**/src/*.go", "src", "src/main.go src/x/src/deep.go", "src/lib/util.go src/x/a.go"},
		{"**/src/*.go", "src/x", "src/x/src/deep.go", "src/x/a.go"},
		{"**/src/*.go", "lib", "lib/src/y.go", "lib/l.go"},
		{"**/src/*.go", "a", "a/src/z.go", ""},
		{"**/src/**", ".", "a/src/z.go lib/src/y.go src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go", "lib/l.go top.go"},
		{"**/src/**", "src", "src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go", ""},
		{"**/src/**", "src/x", "src/x/a.go src/x/src/deep.go", ""},
		{"**/src/**", "lib", "lib/src/y.go", "lib/l.go"},
		{"**/src/**", "a", "a/src/z.go", ""},
		{"**/{src,lib}/*.go", ".", "a/src/z.go lib/l.go lib/src/y.go src/lib/util.go src/main.go src/x/src/deep.go", "src/x/a.go top.go"},
		{"**/{src,lib}/*.go", "src", "src/lib/util.go src/main.go src/x/src/deep.go", "src/x/a.go"},
		{"**/{src,lib}/*.go", "src/x", "src/x/src/deep.go", "src/x/a.go"},
		{"**/{src,lib}/*.go", "lib", "lib/l.go lib/src/y.go", ""},
		{"**/{src,lib}/*.go", "a", "a/src/z.go", ""},
		{"**/x/*.go", ".", "src/x/a.go", "a/src/z.go lib/l.go lib/src/y.go src/lib/util.go src/main.go src/x/src/deep.go top.go"},
		{"**/x/*.go", "src", "src/x/a.go", "src/lib/util.go src/main.go src/x/src/deep.go"},
		{"**/x/*.go", "src/x", "src/x/a.go", "src/x/src/deep.go"},
		{"**/x/*.go", "lib", "", "lib/l.go lib/src/y.go"},
		{"**/x/*.go", "a", "", "a/src/z.go"},
		{"**/a/src/*.go", ".", "a/src/z.go", "lib/l.go lib/src/y.go src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go top.go"},
		{"**/a/src/*.go", "src", "", "src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go"},
		{"**/a/src/*.go", "src/x", "", "src/x/a.go src/x/src/deep.go"},
		{"**/a/src/*.go", "lib", "", "lib/l.go lib/src/y.go"},
		{"**/a/src/*.go", "a", "a/src/z.go", ""},
		{"**/src/x/**", ".", "src/x/a.go src/x/src/deep.go", "a/src/z.go lib/l.go lib/src/y.go src/lib/util.go src/main.go top.go"},
		{"**/src/x/**", "src", "src/x/a.go src/x/src/deep.go", "src/lib/util.go src/main.go"},
		{"**/src/x/**", "src/x", "src/x/a.go src/x/src/deep.go", ""},
		{"**/src/x/**", "lib", "", "lib/l.go lib/src/y.go"},
		{"**/src/x/**", "a", "", "a/src/z.go"},
		{"**/src/x", ".", "", "a/src/z.go lib/l.go lib/src/y.go src/lib/util.go src/main.go top.go"},
		{"**/src/x", "src", "", "src/lib/util.go src/main.go"},
		{"**/src/x", "src/x", "", "src/x/a.go src/x/src/deep.go"},
		{"**/src/x", "lib", "", "lib/l.go lib/src/y.go"},
		{"**/src/x", "a", "", "a/src/z.go"},
		{"**/lib/**", ".", "lib/l.go lib/src/y.go src/lib/util.go", "a/src/z.go src/main.go src/x/a.go src/x/src/deep.go top.go"},
		{"**/lib/**", "src", "src/lib/util.go", "src/main.go src/x/a.go src/x/src/deep.go"},
		{"**/lib/**", "src/x", "", "src/x/a.go src/x/src/deep.go"},
		{"**/lib/**", "lib", "lib/l.go lib/src/y.go", ""},
		{"**/lib/**", "a", "", "a/src/z.go"},
		{"**/*.go", ".", "a/src/z.go lib/l.go lib/src/y.go src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go top.go", ""},
		{"**/*.go", "src", "src/lib/util.go src/main.go src/x/a.go src/x/src/deep.go", ""},
		{"**/*.go", "src/x", "src/x/a.go src/x/src/deep.go", ""},
		{"**/*.go", "lib", "lib/l.go lib/src/y.go", ""},
		{"**/*.go", "a", "a/src/z.go", ""},
		{"**/src/*/**", ".", "src/lib/util.go src/x/a.go src/x/src/deep.go", "a/src/z.go lib/l.go lib/src/y.go src/main.go top.go"},
		{"**/src/*/**", "src", "src/lib/util.go src/x/a.go src/x/src/deep.go", "src/main.go"},
		{"**/src/*/**", "src/x", "src/x/a.go src/x/src/deep.go", ""},
		{"**/src/*/**", "lib", "", "lib/l.go lib/src/y.go"},
		{"**/src/*/**", "a", "", "a/src/z.go"},
		// A leading ./ anchors the glob to the path searched, **/ and all,
		// as rg -g '/**/src/*.go' run in that path and git's pathspec
		// ./**/src/*.go there take it: matched from the root, find
		// './**/a/src/*.go' a answered a/src/z.go, and an exclude of it
		// left out what the glob, below a, does not name.
		{"./**/src/*.go", ".", "a/src/z.go lib/src/y.go src/main.go src/x/src/deep.go", "lib/l.go src/lib/util.go src/x/a.go top.go"},
		{"./**/src/*.go", "src", "src/x/src/deep.go", "src/lib/util.go src/main.go src/x/a.go"},
		{"./**/src/*.go", "a", "a/src/z.go", ""},
		{"./**/a/src/*.go", "a", "", "a/src/z.go"},
		{"./**/src/**", "src", "src/x/src/deep.go", "src/lib/util.go src/main.go src/x/a.go"},
		{"./**/src/**", "src/x", "src/x/src/deep.go", "src/x/a.go"},
		{"./**/{src,lib}/*.go", "src", "src/lib/util.go src/x/src/deep.go", "src/main.go src/x/a.go"},
	}
	for name, tl := range globTreeTools(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, c := range cases {
				want := strings.Fields(c.include)
				g, err := tl.Grep(ctx, core.GrepRequest{Query: "hello", Path: c.path, Include: core.Globs{c.glob}, Mode: core.ModeFiles})
				if err != nil {
					t.Fatalf("grep %s --include %s: %v", c.path, c.glob, err)
				}
				var got []string
				for _, f := range g.Files {
					got = append(got, f.Path)
				}
				sameFiles(t, "grep "+c.path+" --include "+c.glob, got, want)
				got = findFiles(t, tl, core.FindRequest{Pattern: c.glob, Path: c.path, Type: "file"})
				sameFiles(t, "find "+c.glob+" "+c.path, got, want)
				got = findFiles(t, tl, core.FindRequest{Path: c.path, Type: "file", Exclude: []string{c.glob}})
				sameFiles(t, "find --path "+c.path+" --exclude "+c.glob, got, strings.Fields(c.exclude))
				dry := ""
				for _, req := range []core.ReplaceRequest{{Include: core.Globs{c.glob}}, {Exclude: []string{c.glob}}} {
					req.Query, req.Replacement, req.Path, req.DryRun = "hello", &dry, c.path, true
					r, err := tl.Replace(ctx, req)
					if err != nil {
						t.Fatalf("replace %s %v %v: %v", c.path, req.Include, req.Exclude, err)
					}
					got = nil
					for _, f := range r.Files {
						got = append(got, f.Path)
					}
					if req.Include != nil {
						sameFiles(t, "replace "+c.path+" --include "+c.glob, got, want)
					} else {
						sameFiles(t, "replace "+c.path+" --exclude "+c.glob, got, strings.Fields(c.exclude))
					}
				}
			}
		})
	}
}

func findFiles(t *testing.T, tl *core.Tools, req core.FindRequest) []string {
	t.Helper()
	res, err := tl.Find(context.Background(), req)
	if err != nil {
		t.Fatalf("find %+v: %v", req, err)
	}
	var got []string
	for _, e := range res.Results {
		got = append(got, e.Path)
	}
	return got
}

func sameFiles(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}
