package core

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/bmatcuk/doublestar/v4"
)

// treeFS is an endless flat tree: file00000, file00001... each holding one
// matching line. It counts what the tools ask of it.
type treeFS struct {
	files                 int
	visited, opens, infos atomic.Int64
}

func (f *treeFS) Stat(context.Context, string) (backend.FileInfo, error) {
	return backend.FileInfo{Type: backend.TypeDir}, nil
}
func (f *treeFS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	return f.Stat(ctx, p)
}
func (f *treeFS) Open(context.Context, string) (backend.FileReader, error) {
	return nil, fault.Errorf(fault.CodeNotAFile, "a directory.")
}
func (f *treeFS) ReadDir(context.Context, string, int, int) (backend.DirPage, error) {
	return backend.DirPage{}, nil
}
func (f *treeFS) Display(p string) string { return p }

func (f *treeFS) Walk(ctx context.Context, _ string, _ backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	for i := 0; i < f.files; i++ {
		f.visited.Add(1)
		name := fmt.Sprintf("file%05d.txt", i)
		err := visit(backend.WalkEntry{Path: name, Rel: name, Name: name, Type: backend.TypeFile, Open: func() (io.ReadCloser, error) {
			f.opens.Add(1)
			return io.NopCloser(strings.NewReader("a match here\n")), nil
		}, Info: func() (backend.FileInfo, error) {
			f.infos.Add(1)
			return backend.FileInfo{Name: name, Size: 13}, nil
		}})
		if err == backend.ErrStopWalk {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// TestFirstPageCost checks that ls, find and grep stop walking once a page
// is known to be full: the cost of a first page does not grow with the tree.
func TestFirstPageCost(t *testing.T) {
	fs := &treeFS{files: 100000}
	tl := &Tools{FS: fs}
	res, err := tl.Find(t.Context(), FindRequest{Pattern: "*.txt", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 10 || res.NextOffset == nil || *res.NextOffset != 10 {
		t.Fatalf("find page: %d results, next %v", len(res.Results), res.NextOffset)
	}
	if v := fs.visited.Load(); v != 11 {
		t.Errorf("find visited %d entries for a page of 10", v)
	}
	fs.visited.Store(0)
	ls, err := tl.Ls(t.Context(), LsRequest{Limit: 10, Offset: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Entries) != 10 || ls.NextOffset == nil || *ls.NextOffset != 15 || ls.Entries[0].Name != "file00005.txt" {
		t.Fatalf("ls page: %+v next %v", ls.Entries, ls.NextOffset)
	}
	// Entries before the offset are counted, not described.
	if v, i := fs.visited.Load(), fs.infos.Load(); v != 16 || i != 10 {
		t.Errorf("ls visited %d entries and described %d for a page of 10 at offset 5", v, i)
	}
	fs.visited.Store(0)
	g, err := tl.Grep(t.Context(), GrepRequest{Query: "match", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 10 || g.NextOffset == nil || *g.NextOffset != 10 {
		t.Fatalf("grep page: count %d next %v", g.Count, g.NextOffset)
	}
	// The pool reads ahead by a bounded number of files, whatever the tree.
	if v := fs.opens.Load(); v > 200 {
		t.Errorf("grep opened %d files for a page of 10", v)
	}
}

func TestCheckGlob(t *testing.T) {
	for g, ok := range map[string]bool{"**/*.go": true, "./a/*": true, "{a,b}": true, "a[b": false, "{a": false, "/etc/*": false,
		// Braces that stand for too many patterns, or nest too deep, are
		// refused: doublestar tries every alternative with the rest of the
		// pattern, and "{a,a}" 24 times took seconds on one name.
		strings.Repeat("{a,a}", 8) + "x": true, strings.Repeat("{a,a}", 9) + "x": false, "*" + strings.Repeat("{a,a}", 24) + "x": false,
		"{" + strings.Repeat("a,", 255) + "a}": true, "{" + strings.Repeat("a,", 256) + "a}": false, "{a,{b,{c,d}}}{e,f}": true,
		strings.Repeat("{", 16) + "a" + strings.Repeat("}", 16): true, strings.Repeat("{", 17) + "a" + strings.Repeat("}", 17): false,
		strings.Repeat("{", 10000) + "a" + strings.Repeat("}", 10000): false,
		// Escaped braces and braces in a class are literals.
		strings.Repeat(`\{a,a\}`, 20): true, strings.Repeat("[{]a,a[}]", 20): true, "**/*.{js,jsx,ts,tsx,mjs,cjs,json,md}": true,
		// A class is one character of a name: a / in it matched across
		// segments (src[/]c.go found src/c.go); negated, it means what it
		// says.
		"src[/]c.go": false, "*[a/b]*": false, "[]/]x": false, "src/[!/]*.go": true, "src/[^/]*": true, `a\[/]b`: true, "[ab]/[cd]": true,
		// A POSIX class is refused: doublestar read [[:digit:]] as a class
		// of [, :, d, i, g, t then a ], matching d] and not 5. A [ or : in
		// a class, or an escaped one, is no POSIX class.
		"[[:digit:]]": false, "x[![:space:]]": false, "[a[:alpha:]]*": false, "[[]*": true, "[:]*": true, `\[[:x`: false,
		`\[:digit:]`: true, "[[:]": true, "[[:a-b:]]": true} {
		_, err := checkGlob("pattern", g)
		if (err == nil) != ok {
			t.Errorf("checkGlob(%.80q) = %v", g, err)
		}
		if err != nil && fault.AsError(err).Code != fault.CodeInvalidGlob {
			t.Errorf("checkGlob(%.80q) code %s", g, fault.AsError(err).Code)
		}
	}
}

// TestGlobFastPaths checks the fast paths against doublestar itself.
func TestGlobFastPaths(t *testing.T) {
	paths := []string{"a.go", "x/a.go", "x/y/b_test.go", ".go", "x/.go", "Makefile", "x/Makefile", "x/Makefile.bak", "go", "a.goo"}
	for _, p := range []string{"**/*.go", "**/*_test.go", "**/Makefile", "*.go", "x/*.go", "**/{a,b}*.go", `**/\*.go`, "**"} {
		for _, anyDepth := range []bool{false, true} {
			g := newGlob(p, anyDepth)
			for _, rel := range paths {
				name := rel[strings.LastIndexByte(rel, '/')+1:]
				want := doublestar.MatchUnvalidated(p, rel)
				if anyDepth && !strings.Contains(p, "/") {
					want = doublestar.MatchUnvalidated(p, name)
				}
				if got := g.match(rel, name); got != want {
					t.Errorf("glob %q (anyDepth %v) on %q = %v, want %v", p, anyDepth, rel, got, want)
				}
			}
		}
	}
}

// TestGlobTrailingDoubleStar: a pattern or include that ends with /**
// matches what is below what the rest names, as rg -g, fd and git read
// it; doublestar's /** also matches no name, so that find '*/**' -t f
// listed every file at the top and grep --include '.*/**' searched .env.
func TestGlobTrailingDoubleStar(t *testing.T) {
	for _, c := range []struct {
		pattern, rel string
		want         bool
	}{
		{"*/**", "a.go", false},
		{"*/**", "src/a.go", true},
		{"*/**", "src/sub/a.go", true},
		{".*/**", ".env", false},
		{".*/**", ".hidden/x", true},
		{"src/**", "src", false},
		{"src/**", "src/a", true},
		{"src/**", "src/sub/b", true},
		{"**/z/**", "x/z", false},
		{"**/z/**", "x/z/f", true},
		{"**", "a.go", true},
		{"**/**", "a.go", true},
		{"a/**/b", "a/b", true},
		// Braces as the union of the globs they stand for.
		{"{a/**,b/**}", "a", false},
		{"{a/**,b/**}", "a/x", true},
		{"{a/**,b}", "a", false},
		{"{a/**,b}", "b", true},
		{"{.*/**,b/**}", ".env", false},
		{"{.*/**,b/**}", ".h/x", true},
	} {
		name := c.rel[strings.LastIndexByte(c.rel, '/')+1:]
		for _, anyDepth := range []bool{false, true} {
			if got := newGlob(c.pattern, anyDepth).match(c.rel, name); got != c.want {
				t.Errorf("glob %q (anyDepth %v) on %q = %v, want %v", c.pattern, anyDepth, c.rel, got, c.want)
			}
		}
	}
}
