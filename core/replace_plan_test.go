package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
)

// A dry run's plan, passed back as expectedPlan, lets the replace make the
// change it showed and nothing else: a file written since with as many
// matches (which expectedCount let through, with success), a file that
// gained or lost a match, or another replacement, is STALE with nothing
// changed. On the local backend (versions from stat) and on memfs alike.
func TestReplaceExpectedPlan(t *testing.T) {
	ctx := context.Background()
	base := map[string]string{"a.txt": "foo one\nkeep\n", "sub/b.txt": "x foo\n", "c.txt": "nothing\n"}
	for _, tc := range []struct {
		name string
		// between changes the files after the dry run (nil: not at all).
		between func(w func(p, text string), rm func(p string))
		req     func(ReplaceRequest) ReplaceRequest
		want    fault.Code
	}{
		{name: "nothing changed between"},
		{name: "a file changed with as many matches", want: fault.CodeStale,
			between: func(w func(p, text string), _ func(string)) { w("a.txt", "foo one\nrm -rf /\n") }},
		{name: "a file rewritten as it was", want: fault.CodeStale,
			between: func(w func(p, text string), _ func(string)) {
				w("a.txt", "foo two\nkeep\n")
				w("a.txt", "foo one\nkeep\n")
			}},
		{name: "a new file with a match", want: fault.CodeStale,
			between: func(w func(p, text string), _ func(string)) { w("new.txt", "foo\n") }},
		{name: "a file that gains a match", want: fault.CodeStale,
			between: func(w func(p, text string), _ func(string)) { w("c.txt", "foo\n") }},
		{name: "a file that loses its match", want: fault.CodeStale,
			between: func(w func(p, text string), _ func(string)) { w("sub/b.txt", "x\n") }},
		{name: "a file removed", want: fault.CodeStale,
			between: func(_ func(p, text string), rm func(string)) { rm("sub/b.txt") }},
		{name: "a file without a match changed", // not in the plan: no concern
			between: func(w func(p, text string), _ func(string)) { w("c.txt", "still nothing\n") }},
		{name: "another replacement", want: fault.CodeStale,
			req: func(r ReplaceRequest) ReplaceRequest { r.Replacement = str("baz"); return r }},
		{name: "a regex of the same text", want: fault.CodeStale,
			req: func(r ReplaceRequest) ReplaceRequest { r.Regex = true; return r }},
		{name: "the same replace through another path",
			req: func(r ReplaceRequest) ReplaceRequest { r.Path = "."; return r }},
	} {
		for _, which := range []string{"memfs", "local"} {
			t.Run(tc.name+"/"+which, func(t *testing.T) {
				var fs backend.MutableFS
				if which == "memfs" {
					fs = newLockedFS(nil)
				} else {
					fs = localFS(t)
				}
				write := func(p, text string) {
					t.Helper()
					if _, err := fs.WriteFile(ctx, p, []byte(text), backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for p, text := range base {
					write(p, text)
				}
				tl := &Tools{FS: fs}
				req := ReplaceRequest{Query: "foo", Replacement: str("bar")}
				dry := req
				dry.DryRun = true
				res, err := tl.Replace(ctx, dry)
				if err != nil || len(res.Plan) != len("plan-")+32 || res.Replacements != 2 {
					t.Fatalf("dry run: %+v, %v", res, err)
				}
				again, err := tl.Replace(ctx, dry)
				if err != nil || again.Plan != res.Plan {
					t.Fatalf("a second dry run gave plan %q, %v; the first %q", again.Plan, err, res.Plan)
				}
				if tc.between != nil {
					tc.between(write, func(p string) {
						if _, err := fs.Remove(ctx, p, backendRemove()); err != nil {
							t.Fatal(err)
						}
					})
				}
				before := snapshot(t, fs, "a.txt", "sub/b.txt", "c.txt", "new.txt")
				if tc.req != nil {
					req = tc.req(req)
				}
				req.ExpectedPlan = res.Plan
				got, err := tl.Replace(ctx, req)
				if tc.want == "" {
					if err != nil || got.Replacements == 0 {
						t.Fatalf("%+v, %v; want the change applied", got, err)
					}
					return
				}
				if e := fault.AsError(err); e == nil || e.Code != tc.want {
					t.Fatalf("%+v, %v; want %s", got, err, tc.want)
				}
				if after := snapshot(t, fs, "a.txt", "sub/b.txt", "c.txt", "new.txt"); after != before {
					t.Errorf("a refused replace changed files: %q, was %q", after, before)
				}
			})
		}
	}
}

// snapshot is the text of the files at paths, "-" for one missing.
func snapshot(t *testing.T, fs backend.FS, paths ...string) string {
	t.Helper()
	var s string
	for _, p := range paths {
		r, err := fs.Open(context.Background(), p)
		if err != nil {
			s += p + ": -\n"
			continue
		}
		data, err := readUpTo(r, nil, 1<<20)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		s += p + ": " + string(data) + "\n"
	}
	return s
}

// A plan names the files by path, version (or sha256 where there is no
// version) and count, and the request: each changes it, and the order of
// the files does not.
func TestReplacePlanDigest(t *testing.T) {
	req := ReplaceRequest{Query: "foo", Replacement: str("bar")}
	files := []plannedFile{{path: "a", version: "v1", count: 1}, {path: "b", version: "v2", count: 2}}
	plan := replacePlan(req, files, 3)
	if got := replacePlan(req, []plannedFile{files[1], files[0]}, 3); got != plan {
		t.Errorf("the order of the files changed the plan")
	}
	for name, other := range map[string]string{
		"another version":   replacePlan(req, []plannedFile{{path: "a", version: "v1", count: 1}, {path: "b", version: "v3", count: 2}}, 3),
		"a path for a path": replacePlan(req, []plannedFile{{path: "a", version: "v1", count: 1}, {path: "c", version: "v2", count: 2}}, 3),
		"a file fewer":      replacePlan(req, files[:1], 3),
		"another count":     replacePlan(req, files, 4),
		"a sum":             replacePlan(req, []plannedFile{files[0], {path: "b", sum: "v2", count: 2}}, 3),
		// Fields run together: a concatenation would give ab|c as a|bc.
		"fields shifted": replacePlan(req, []plannedFile{{path: "av", version: "1", count: 1}, files[1]}, 3),
		"ignoring case":  replacePlan(ReplaceRequest{Query: "foo", Replacement: str("bar"), IgnoreCase: true}, files, 3),
		"whole words":    replacePlan(ReplaceRequest{Query: "foo", Replacement: str("bar"), Word: true}, files, 3),
		"query shifted":  replacePlan(ReplaceRequest{Query: "foob", Replacement: str("ar")}, files, 3),
	} {
		if other == plan {
			t.Errorf("%s: the same plan", name)
		}
	}
}

// A plan names a local file by where it lies, so that a dry run and the
// replace agree from any working directory: with paths relative to it,
// the replace from the directory below was STALE.
func TestReplacePlanFromAnotherDirectory(t *testing.T) {
	ctx := context.Background()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("foo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plans := map[string]string{}
	for cwd, path := range map[string]string{dir: "sub", filepath.Join(dir, "sub"): "."} {
		lfs, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		defer lfs.Close()
		res, err := (&Tools{FS: lfs}).Replace(ctx, ReplaceRequest{Query: "foo", Replacement: str("bar"), Path: path, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		plans[res.Plan] = cwd
	}
	if len(plans) != 1 {
		t.Errorf("the same replace from two directories gave the plans %v", plans)
	}
}

// A replace applied with the plan of its dry run answers the files, their
// counts and the totals without the diffs, which the dry run showed and
// the plan proves the same, and says so (diffsInDryRun): each diff was
// answered twice, 11 kB for a rename of 27 matches. A dry run, and a
// replace without a plan, still answer the diffs.
func TestReplacePlannedLeavesDiffsOut(t *testing.T) {
	ctx := context.Background()
	for _, which := range []string{"memfs", "local"} {
		t.Run(which, func(t *testing.T) {
			var fs backend.MutableFS
			if which == "memfs" {
				fs = newLockedFS(nil)
			} else {
				fs = localFS(t)
			}
			reset := func() {
				t.Helper()
				for p, text := range map[string]string{"a.txt": "foo one\nkeep\nfoo two\n", "sub/b.txt": "x foo\n", "c.txt": "nothing\n"} {
					if _, err := fs.WriteFile(ctx, p, []byte(text), backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			reset()
			tl := &Tools{FS: fs}
			req := ReplaceRequest{Query: "foo", Replacement: str("bar")}
			dry := req
			dry.DryRun = true
			shown, err := tl.Replace(ctx, dry)
			if err != nil || shown.DiffsInDryRun || len(shown.Files) != 2 {
				t.Fatalf("dry run: %+v, %v", shown, err)
			}
			for _, f := range shown.Files {
				if f.Diff == "" {
					t.Fatalf("the dry run answered %s without its diff", f.Path)
				}
			}
			planned := req
			planned.ExpectedPlan = shown.Plan
			got, err := tl.Replace(ctx, planned)
			if err != nil {
				t.Fatal(err)
			}
			if !got.DiffsInDryRun || got.Replacements != 3 || got.FilesChanged != 2 || got.Truncated || got.Plan != "" || len(got.Files) != 2 {
				t.Errorf("the planned replace answered %+v; want 3 replacements in 2 files, diffsInDryRun", got)
			}
			for i, f := range got.Files {
				if f.Diff != "" || f.Path != shown.Files[i].Path || f.Count != shown.Files[i].Count {
					t.Errorf("file %d: %+v; want %s with count %d and no diff", i, f, shown.Files[i].Path, shown.Files[i].Count)
				}
			}
			if n := snapshot(t, fs, "a.txt", "sub/b.txt"); n != "a.txt: bar one\nkeep\nbar two\n\nsub/b.txt: x bar\n\n" {
				t.Errorf("the planned replace wrote %q", n)
			}
			reset()
			plain, err := tl.Replace(ctx, req)
			if err != nil || plain.DiffsInDryRun || len(plain.Files) != 2 || plain.Files[0].Diff == "" || plain.Files[1].Diff == "" {
				t.Errorf("a replace without a plan answered %+v, %v; want its diffs", plain, err)
			}
		})
	}
}

// A planned replace whose answer, without diffs, just fits the bound is
// not truncated: it has no diff to cut. Each file's empty diff was offered
// a room of its key alone, and a list of 60 files that fitted whole, all
// listed, said truncated.
func TestReplacePlannedFittedIsNotTruncated(t *testing.T) {
	ctx := context.Background()
	fs := newLockedFS(nil)
	reset := func() {
		t.Helper()
		for i := range 60 {
			if _, err := fs.WriteFile(ctx, fmt.Sprintf("f%02d.txt", i), []byte("foo line\nmore\n"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply := func(bound int) *ReplaceResult {
		t.Helper()
		reset()
		tl := &Tools{FS: fs, MaxBytes: bound}
		req := ReplaceRequest{Query: "foo", Replacement: str("bar")}
		dry := req
		dry.DryRun = true
		shown, err := (&Tools{FS: fs}).Replace(ctx, dry)
		if err != nil {
			t.Fatal(err)
		}
		req.ExpectedPlan = shown.Plan
		got, err := tl.Replace(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	size := jsonSize(apply(1 << 20))
	got := apply(size + 20)
	if got.Truncated || len(got.Files) != 60 || got.FilesOmitted != 0 || !got.DiffsInDryRun {
		t.Errorf("the planned replace of 60 files in %d bytes (its answer is %d) answered truncated %v, %d files (%d omitted); want all, not truncated",
			size+20, size, got.Truncated, len(got.Files), got.FilesOmitted)
	}
}
