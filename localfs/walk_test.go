package localfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

func walkPaths(t *testing.T, fsys *localfs.FS, path string, opts backend.WalkOptions, visit func(backend.WalkEntry)) []string {
	t.Helper()
	var got []string
	err := fsys.Walk(context.Background(), path, opts, func(e backend.WalkEntry) error {
		got = append(got, e.Rel)
		if visit != nil {
			visit(e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWalkSwappedDirectory swaps a directory for a link to outside the root
// between its visit and its descent: the walk opens it relative to its
// parent with O_NOFOLLOW, so it sees nothing of outside.
func TestWalkSwappedDirectory(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	writeFiles(t, base, map[string]string{"root/a/inner.txt": "", "root/b.txt": "", "outside/secret.txt": ""})
	fsys, err := localfs.New(localfs.Config{Roots: []string{root}, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got := walkPaths(t, fsys, ".", backend.WalkOptions{}, func(e backend.WalkEntry) {
		if e.Rel == "a" {
			if err := os.Rename(filepath.Join(root, "a"), filepath.Join(base, "a.moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
				t.Fatal(err)
			}
		}
	})
	if want := []string{"a", "b.txt"}; !slices.Equal(got, want) {
		t.Errorf("walk after the swap = %q, want %q", got, want)
	}
}

// TestWalkIgnorePrecedence checks the ranking of ignore files (ripgrep's:
// .agentfsignore over .ignore over .gitignore over .git/info/exclude; a
// deeper file over an outer one) and that a nested repository does not
// inherit the outer .gitignore.
func TestWalkIgnorePrecedence(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".git/info/exclude":  "*.ex\n!kept.ig\n",
		".gitignore":         "*.ig\n*.log\n",
		".ignore":            "!*.log\n",
		".agentfsignore":     "*.ex2\n",
		"a.ex":               "",
		"a.ig":               "",
		"kept.ig":            "",
		"a.log":              "",
		"x.ex2":              "",
		"sub/.gitignore":     "!b.ig\n",
		"sub/b.ig":           "",
		"sub/c.ig":           "",
		"nested/.git/HEAD":   "",
		"nested/n.ig":        "",
		"nested/.gitignore":  "n.txt\n",
		"nested/n.txt":       "",
		"nested/deep/m.ig":   "",
		".agentfsignore.bak": "",
	})
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got := walkPaths(t, fsys, ".", backend.WalkOptions{}, nil)
	want := []string{".agentfsignore", ".agentfsignore.bak", ".gitignore", ".ignore", "a.log",
		"nested", "nested/.gitignore", "nested/deep", "nested/deep/m.ig", "nested/n.ig",
		"sub", "sub/.gitignore", "sub/b.ig"}
	if !slices.Equal(got, want) {
		t.Errorf("walk = %q\nwant   %q", got, want)
	}
	// Walking from a subdirectory keeps the rules from above it.
	got = walkPaths(t, fsys, "sub", backend.WalkOptions{}, nil)
	if want := []string{".gitignore", "b.ig"}; !slices.Equal(got, want) {
		t.Errorf("walk sub = %q, want %q", got, want)
	}
	got = walkPaths(t, fsys, ".", backend.WalkOptions{NoIgnore: true, Exclude: []string{"nested", "*.ig"}}, nil)
	if slices.Contains(got, "nested/n.txt") || slices.Contains(got, "a.ig") || !slices.Contains(got, "a.ex") {
		t.Errorf("walk with noIgnore and exclude = %q", got)
	}
}

// TestWalkShowIgnored checks what ls relies on: under ShowIgnored the
// entries a search leaves out are visited with Ignored set and never
// descended into, and Info describes an entry without following it.
func TestWalkShowIgnored(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".git/HEAD":                         "",
		".gitignore":                        "build/\n*.log\n",
		"a.log":                             "",
		"build/out.bin":                     "",
		"src/main.go":                       "package main\n",
		"src/.agentfs-tmp-0123456789abcdef": "",
	})
	if err := os.Symlink("src/main.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	fsys := newTools(t, dir).FS.(*localfs.FS)
	var ignored []string
	infos := map[string]backend.FileInfo{}
	got := walkPaths(t, fsys, ".", backend.WalkOptions{ShowIgnored: true}, func(e backend.WalkEntry) {
		if e.Ignored {
			ignored = append(ignored, e.Rel)
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatalf("Info of %s: %v", e.Rel, err)
		}
		infos[e.Rel] = fi
	})
	want := []string{".git", ".gitignore", "a.log", "build", "link", "src", "src/.agentfs-tmp-0123456789abcdef", "src/main.go"}
	if !slices.Equal(got, want) {
		t.Errorf("walk = %q\nwant   %q", got, want)
	}
	if want := []string{".git", "a.log", "build", "src/.agentfs-tmp-0123456789abcdef"}; !slices.Equal(ignored, want) {
		t.Errorf("ignored = %q, want %q", ignored, want)
	}
	if fi := infos["link"]; fi.Type != backend.TypeSymlink || fi.Target != "src/main.go" || fi.Size != int64(len("src/main.go")) {
		t.Errorf("Info of the link = %+v", fi)
	}
	if fi := infos["src/main.go"]; fi.Type != backend.TypeFile || fi.Size != 13 || fi.Mode != 0o644 || fi.Target != "" {
		t.Errorf("Info of a file = %+v", fi)
	}
	// Without ShowIgnored nothing of that is visited.
	got = walkPaths(t, fsys, ".", backend.WalkOptions{}, nil)
	if want := []string{".gitignore", "link", "src", "src/main.go"}; !slices.Equal(got, want) {
		t.Errorf("walk = %q, want %q", got, want)
	}
}

// TestLsNonUTF8 checks that a name and a link's text that are not UTF-8
// come with their base64 twins, at any depth.
func TestLsNonUTF8(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"d\xff/a": ""})
	if err := os.Symlink("to\xfe", filepath.Join(dir, "d\xff", "l")); err != nil {
		t.Fatal(err)
	}
	tl := newTools(t, dir)
	res, err := tl.Ls(context.Background(), core.LsRequest{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 3 {
		t.Fatalf("ls = %+v", res.Entries)
	}
	d, l := res.Entries[0], res.Entries[2]
	if d.NameBase64 != "ZP8=" || d.PathBase64 != "ZP8=" || l.PathBase64 != "ZP8vbA==" || l.TargetBase64 != "dG/+" || l.Target != "to\uFFFD" {
		t.Errorf("ls = %+v", res.Entries)
	}
}

// TestGrepOrderIndependentOfWorkers runs the same search with one worker
// and with eight: the same page, in the same order.
func TestGrepOrderIndependentOfWorkers(t *testing.T) {
	dir := t.TempDir()
	genTree(t, dir, 300)
	tl := newTools(t, dir)
	run := func(procs int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := tl.Grep(context.Background(), core.GrepRequest{Query: "foo", Context: 1, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return b
	}
	if one, eight := run(1), run(8); !bytes.Equal(one, eight) {
		t.Errorf("grep with 1 and 8 workers differ:\n%.300s\n%.300s", one, eight)
	}
}

// TestGrepByteBound pages through searches under small byte bounds: every
// page that holds more than one item fits the bound as the CLI writes it,
// and the pages together hold every match of the unbounded search, in order.
// (Context that the bound cuts after a page's last match is not repeated.)
func TestGrepByteBound(t *testing.T) {
	dir := t.TempDir()
	genTree(t, dir, 300)
	tl := newTools(t, dir)
	all := func(req core.GrepRequest, maxBytes int) []line {
		tl.MaxBytes = maxBytes
		var out []line
		for {
			req.Limit = 1000
			res, err := tl.Grep(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(res)
			if buf.Len() > maxBytes && res.Count > 1 {
				t.Fatalf("%+v under %d bytes: a page of %d items is %d bytes", req, maxBytes, res.Count, buf.Len())
			}
			for _, f := range res.Files {
				if f.Blocks == nil { // files and count modes: the file is the item
					out = append(out, line{Path: f.Path, Line: f.Count})
				}
				for _, b := range f.Blocks {
					for i, text := range b.Lines {
						if n := b.Start + i; b.Matches == nil || slices.Contains(b.Matches, n) {
							out = append(out, line{f.Path, n, text, true})
						}
					}
				}
			}
			if res.NextOffset == nil {
				return out
			}
			req.Offset = *res.NextOffset
		}
	}
	for _, req := range []core.GrepRequest{
		{Query: "foo"},
		{Query: "foo", Context: 2},
		{Query: "e", Context: 1},
		{Query: "foo", Mode: core.ModeFiles},
		{Query: "foo", Mode: core.ModeCount},
	} {
		want := all(req, 64<<20)
		for _, maxBytes := range []int{1500, 4000, 20000} {
			if got := all(req, maxBytes); !slices.Equal(got, want) {
				t.Errorf("%+v under %d bytes: %d items, want %d", req, maxBytes, len(got), len(want))
			}
		}
	}
}

// TestGrepClosesDescriptors checks that the directories held open for the
// workers' opens are all closed after a full search, a first page that
// stops the walk, and a cancelled search.
func TestGrepClosesDescriptors(t *testing.T) {
	dir := t.TempDir()
	genTree(t, dir, 300)
	tl := newTools(t, dir)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	before := fds()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx context.Context
		req core.GrepRequest
	}{
		{context.Background(), core.GrepRequest{Query: "foo", Mode: core.ModeCount}},
		{context.Background(), core.GrepRequest{Query: "foo", Limit: 1}},
		{cancelled, core.GrepRequest{Query: "foo"}},
	} {
		tl.Grep(c.ctx, c.req)
		if n := fds(); n != before {
			t.Errorf("grep %+v: %d descriptors open, %d before", c.req, n, before)
		}
	}
}

// TestFindNonUTF8Name checks that a name that is not UTF-8 comes with its
// base64 twin, so that it can be told apart and passed back.
func TestFindNonUTF8Name(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a\xff.txt": "x\n", "a\xfe.txt": "x\n"})
	tl := newTools(t, dir)
	res, err := tl.Find(context.Background(), core.FindRequest{Pattern: "*.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || res.Results[0].PathBase64 == "" || res.Results[0].PathBase64 == res.Results[1].PathBase64 {
		t.Errorf("find = %+v", res.Results)
	}
	g, err := tl.Grep(context.Background(), core.GrepRequest{Query: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 2 || len(g.Files) != 2 || g.Files[0].PathBase64 == "" || g.Files[0].PathBase64 == g.Files[1].PathBase64 {
		t.Errorf("grep = %+v", g.Files)
	}
}

// TestWalkCancelledInsideMatching cancels a walk under an ignore file of
// 100,000 rules with nothing literal in them, which every entry is tested
// against one by one (seconds for the directory): the walk stops on time,
// not at the next directory. On time is against the whole walk timed in
// the same test, so that the bound holds on a loaded machine (a second
// fixed bound failed at load 18).
func TestWalkCancelledInsideMatching(t *testing.T) {
	dir := t.TempDir()
	var rules strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&rules, "[!a-z]*%d?\n", i%10)
	}
	files := map[string]string{".gitignore": rules.String()}
	for i := range 1000 {
		files[fmt.Sprintf("F%03d", i)] = ""
	}
	writeFiles(t, dir, files)
	fsys := newTools(t, dir).FS.(*localfs.FS)
	walk := func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		err := fsys.Walk(ctx, ".", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil })
		return time.Since(start), err
	}
	whole, err := walk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), whole/20)
	defer cancel()
	took, err := walk(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("walk = %v, want the deadline", err)
	}
	if took > whole/2 {
		t.Errorf("the walk stopped %v after it started, with a deadline of %v; the whole walk takes %v", took, whole/20, whole)
	}
}

// TestWalkIgnoreFileNotRegular checks that an ignore file that is a FIFO, a
// socket or a directory has no rules, as in git, and is no error.
func TestWalkIgnoreFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "", ".ignore/x": ""})
	if err := unix.Mkfifo(filepath.Join(dir, ".agentfsignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Skip("no unix socket:", err)
	}
	defer l.Close()
	fsys := newTools(t, dir).FS.(*localfs.FS)
	got := walkPaths(t, fsys, ".", backend.WalkOptions{}, nil)
	if want := []string{".agentfsignore", ".gitignore", ".ignore", ".ignore/x", "a.txt"}; !slices.Equal(got, want) {
		t.Errorf("walk = %q, want %q", got, want)
	}
}

// A walk tells RulesListed, per directory it lists, the names there that
// may hold rules, whatever they are (a directory named .gitignore too),
// and every directory it lists, so that an index may stat no others; not
// the directories it skips.
func TestWalkTellsTheRulesNamesItListed(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".gitignore":         "skipped/\n",
		".git/HEAD":          "ref\n",
		"a/.ignore":          "x\n",
		"a/.gitignore/f":     "a directory named .gitignore\n",
		"a/b/.agentfsignore": "y\n",
		"a/b/c.txt":          "c\n",
		"d/e.txt":            "e\n",
		"skipped/.ignore":    "z\n",
	})
	fsys := newFS(t, root)
	for _, noIgnore := range []bool{false, true} {
		listed := map[string][]string{}
		walkPaths(t, fsys, root, backend.WalkOptions{NoIgnore: noIgnore, RulesListed: func(dir string, names []string) {
			if _, twice := listed[dir]; twice {
				t.Errorf("%q listed twice", dir)
			}
			listed[dir] = names
		}}, nil)
		want := map[string][]string{"": {".git", ".gitignore"}, "a": {".gitignore", ".ignore"}, "a/.gitignore": nil, "a/b": {".agentfsignore"}, "d": nil}
		if noIgnore {
			want["skipped"] = []string{".ignore"}
		}
		if !maps.EqualFunc(listed, want, slices.Equal) {
			t.Errorf("noIgnore %v: the rules names listed %q, want %q", noIgnore, listed, want)
		}
	}
}

// A walk tells RulesRead the version of each rules file it reads, and of
// each .git directory, from the root down to the start and below it: the
// versions a stat gives, so that an index can tell a file read from one
// changed since.
func TestWalkTellsTheRulesItRead(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".gitignore":         "*.log\n",
		".git/info/exclude":  "*.tmp\n",
		"a/.ignore":          "x\n",
		"a/b/.agentfsignore": "y\n",
		"a/b/c.txt":          "c\n",
		"skipped/.gitignore": "z\n",
		".ignore":            "skipped/\n",
	})
	fsys := newFS(t, root)
	for _, start := range []string{root, filepath.Join(root, "a")} {
		var read []string
		walkPaths(t, fsys, start, backend.WalkOptions{RulesRead: func(v string) { read = append(read, v) }}, nil)
		var want []string
		for _, rel := range []string{".git", ".git/info/exclude", ".gitignore", ".ignore", "a/.ignore", "a/b/.agentfsignore"} {
			fi, err := fsys.Lstat(context.Background(), filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, fi.Version)
		}
		slices.Sort(read)
		slices.Sort(want)
		if !slices.Equal(read, want) {
			t.Errorf("walk of %s: the rules read %q, want %q", start, read, want)
		}
	}
}

// TestWalkNestedRootIgnores walks below a root nested in another: the
// ignore files from the outermost root that holds the start are read, so
// the walk visits what it would with the outer root alone. It once read
// those inside the inner root only. Roots side by side read nothing of
// the directory above them.
func TestWalkNestedRootIgnores(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"ws/.git/info/exclude":  "*.tmp\n",
		"ws/.gitignore":         "*.log\n/mid/sub/anch.txt\nside/\n",
		"ws/mid/.ignore":        "*.bak\nsub/rel.txt\n",
		"ws/mid/sub/code.txt":   "",
		"ws/mid/sub/debug.log":  "",
		"ws/mid/sub/x.tmp":      "",
		"ws/mid/sub/y.bak":      "",
		"ws/mid/sub/anch.txt":   "",
		"ws/mid/sub/rel.txt":    "",
		"ws/mid/sub/deep/k.txt": "",
		"ws/mid/sub/deep/z.log": "",
		"ws/side/s.txt":         "",
		"ws/side/s.log":         "",
		"ws/repo/.git/HEAD":     "",
		"ws/repo/.ignore":       "*.bak\n",
		"ws/repo/in/r.log":      "",
		"ws/repo/in/r.tmp":      "",
		"ws/repo/in/r.bak":      "",
		"ws/a/a.log":            "",
		"ws/b/b.log":            "",
	})
	ws := filepath.Join(dir, "ws")
	sub := filepath.Join(ws, "mid/sub")
	cases := []struct {
		name  string
		roots []string
		start string
		want  []string
	}{
		{"outer alone", []string{ws}, sub, []string{"code.txt", "deep", "deep/k.txt"}},
		{"nested", []string{ws, sub}, sub, []string{"code.txt", "deep", "deep/k.txt"}},
		{"nested, inner first", []string{sub, ws}, sub, []string{"code.txt", "deep", "deep/k.txt"}},
		{"nested, three deep", []string{ws, filepath.Join(ws, "mid"), sub}, sub, []string{"code.txt", "deep", "deep/k.txt"}},
		{"below the inner root", []string{ws, sub}, filepath.Join(sub, "deep"), []string{"k.txt"}},
		{"inner root itself ignored", []string{ws, filepath.Join(ws, "side")}, filepath.Join(ws, "side"), []string{"s.txt"}},
		// A repository between: the outer .gitignore and exclude are not
		// its, as with the outer root alone, and its .ignore is read.
		{"repository between", []string{ws, filepath.Join(ws, "repo/in")}, filepath.Join(ws, "repo/in"), []string{"r.log", "r.tmp"}},
		{"side by side", []string{filepath.Join(ws, "a"), filepath.Join(ws, "b")}, filepath.Join(ws, "b"), []string{"b.log"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys, err := localfs.New(localfs.Config{Roots: c.roots, Cwd: c.start})
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			for _, start := range []string{".", c.start} {
				if got := walkPaths(t, fsys, start, backend.WalkOptions{}, nil); !slices.Equal(got, c.want) {
					t.Errorf("walk of %s = %q, want %q", start, got, c.want)
				}
			}
		})
	}
}
