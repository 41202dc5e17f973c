package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

const multiPatch = `*** Begin Patch
*** Update File: src/a.go
@@ func a() {
-	return 1
+	return 2
 }
*** Add File: docs/new.md
+# New
*** Delete File: old.txt
*** Update File: tool.sh
*** Move to: bin/tool.sh
@@
-echo old
+echo new
*** End Patch
`

func patchFS() *memfs.FS {
	m := memfs.New(map[string]string{
		"src/a.go": "package a\n\nfunc a() {\r\n\treturn 1\r\n}\r\n",
		"old.txt":  "bye\n",
	})
	if _, err := m.WriteFile(context.Background(), "tool.sh", []byte("#!/bin/sh\necho old\n"), backend.WriteOptions{Executable: true}); err != nil {
		panic(err)
	}
	m.ResetStats()
	return m
}

// A patch over several files applies every section, keeping line endings
// and modes, and reports each file with its action, diff and version.
func TestApplyPatchAppliesEverySection(t *testing.T) {
	m := patchFS()
	res, err := (&Tools{FS: m}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: multiPatch})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"src/a.go":    "package a\n\nfunc a() {\r\n\treturn 2\r\n}\r\n",
		"docs/new.md": "# New\n",
		"bin/tool.sh": "#!/bin/sh\necho new\n",
		"old.txt":     "<missing>",
		"tool.sh":     "<missing>",
	} {
		if got := fileText(m, p); got != want {
			t.Errorf("%s is %q, want %q", p, got, want)
		}
	}
	if fi, _ := m.Stat(context.Background(), "bin/tool.sh"); fi.Mode != 0o755 {
		t.Errorf("the moved script has mode %o, want 0755", fi.Mode)
	}
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Action+" "+f.Path+" "+f.From)
		if f.Action != ActionDelete && f.Version != versionOf(m, f.Path) {
			t.Errorf("%s: version %q, the file's is %q", f.Path, f.Version, versionOf(m, f.Path))
		}
		if (f.Diff == "") != (f.Action == ActionDelete) {
			t.Errorf("%s (%s) has diff %q: a delete has none, every other change one", f.Path, f.Action, f.Diff)
		}
	}
	if want := "update src/a.go |add docs/new.md |delete old.txt |move bin/tool.sh tool.sh"; strings.Join(got, "|") != want {
		t.Errorf("files %q, want %q", strings.Join(got, "|"), want)
	}
}

// A patch that fails anywhere changes nothing; a dry run writes nothing.
func TestApplyPatchAllOrNothing(t *testing.T) {
	bad := strings.Replace(multiPatch, "-echo old", "-echo missing", 1)
	for name, req := range map[string]ApplyPatchRequest{
		"a chunk not found": {Patch: bad},
		"a dry run":         {Patch: multiPatch, DryRun: true},
	} {
		m := patchFS()
		res, err := (&Tools{FS: m}).ApplyPatch(context.Background(), req)
		if req.DryRun && (err != nil || !res.DryRun || len(res.Files) != 4) {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
		if !req.DryRun {
			if e := fault.AsError(err); e == nil || e.Code != fault.CodePatchVerify || e.Path != "tool.sh" {
				t.Errorf("%s: %v, want PATCH_VERIFY naming tool.sh", name, err)
			}
		}
		if m.Stats().Writes != 0 || fileText(m, "old.txt") != "bye\n" || fileText(m, "docs/new.md") != "<missing>" {
			t.Errorf("%s changed files", name)
		}
	}
}

// A patch whose files change while it is planned runs again on the new
// content: the other writer's change is kept.
func TestApplyPatchRetriesALostRace(t *testing.T) {
	fsys := &interferingFS{FS: memfs.New(map[string]string{"f": "a\n"}), n: 1}
	tl := &Tools{FS: txnInterfering{fsys}}
	_, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-a\n+A\n*** End Patch\n"})
	if err != nil || fileText(fsys.FS, "f") != "A\nother 1\n" || fsys.done != 1 {
		t.Fatalf("%v; the file is %q after %d races", err, fileText(fsys.FS, "f"), fsys.done)
	}
}

// txnInterfering changes the file before a transaction commits, as
// interferingFS does before a write.
type txnInterfering struct{ *interferingFS }

func (f txnInterfering) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	f.interfere(ctx, ops[0].Path)
	return f.FS.Commit(ctx, ops)
}

// The result fits its bound: diffs are cut at a line, never the list of
// files; a result that cannot fit even without diffs changes nothing.
func TestApplyPatchResultFitsItsBound(t *testing.T) {
	big := "*** Begin Patch\n*** Add File: big.txt\n" + strings.Repeat("+a line of the new file\n", 200) + "*** Add File: small.txt\n+x\n*** End Patch\n"
	m := memfs.New(nil)
	res, err := (&Tools{FS: m, MaxBytes: 1024}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: big})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Files) != 2 || jsonSize(res) > 1024 || !strings.Contains(res.Files[0].Diff, "diff truncated") || res.Files[1].Diff != "--- small.txt\n+++ small.txt\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("a cut result, its small diff whole: %d bytes, %+v", jsonSize(res), res)
	}
	_, err = (&Tools{FS: memfs.New(nil), MaxBytes: 512}).ApplyPatch(context.Background(),
		ApplyPatchRequest{Patch: "*** Begin Patch\n*** Add File: " + strings.Repeat("d/", 200) + "f\n+x\n*** End Patch\n"})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeTooLarge {
		t.Errorf("a result over the bound: %v", err)
	}
}

// A + line that read cut (its marker copied from a read) is refused, as
// write and edit refuse it: written, it destroyed the rest of the line.
// A marker the file itself held is its text.
func TestApplyPatchRefusesACutLine(t *testing.T) {
	cut := "x := 1" + lineCutMarker(5000)
	for _, tc := range []struct {
		name, file, patch string
		code              fault.Code
	}{
		{"added", "", "*** Begin Patch\n*** Add File: n.go\n+" + cut + "\n*** End Patch\n", fault.CodeInvalidArgument},
		{"updated", "a\n", "*** Begin Patch\n*** Update File: f.go\n@@\n-a\n+" + cut + "\n*** End Patch\n", fault.CodeInvalidArgument},
		{"the file's own", cut + "\na\n", "*** Begin Patch\n*** Update File: f.go\n@@\n-a\n+b\n*** End Patch\n", ""},
	} {
		m := memfs.New(map[string]string{"f.go": tc.file})
		_, err := (&Tools{FS: m}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: tc.patch})
		if e := fault.AsError(err); tc.code == "" && err != nil || tc.code != "" && (e == nil || e.Code != tc.code || m.Stats().Writes != 0) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
}

// A NUL in a patch is refused: written, it made the file binary, which
// apply-patch, edit and replace then refused and grep skipped.
func TestApplyPatchRefusesANUL(t *testing.T) {
	for _, p := range []string{
		"*** Begin Patch\n*** Add File: n.go\n+a\x00b\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: f.go\n@@\n-a\n+a\x00b\n*** End Patch\n",
	} {
		m := memfs.New(map[string]string{"f.go": "a\n"})
		_, err := (&Tools{FS: m}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: p})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || m.Stats().Writes != 0 {
			t.Errorf("%q: %v, want INVALID_ARGUMENT and nothing written", p, err)
		}
	}
}

// A patch of many files fits a bound its answer fits: the answer was sized
// with 64 bytes for each new version, where a disk's take 16, and a patch
// of 60 files whose answer took 5,608 bytes was TOO_LARGE under 8,489.
func TestApplyPatchSizedByTheBackendsVersions(t *testing.T) {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for i := range 60 {
		fmt.Fprintf(&b, "*** Add File: many/file_with_a_longish_name_%03d.txt\n+line\n", i)
	}
	b.WriteString("*** End Patch\n")
	lfs := localFS(t)
	res, err := (&Tools{FS: lfs, MaxBytes: 6500}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: b.String()})
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if n := jsonSize(res); len(res.Files) != 60 || n > 6500 {
		t.Errorf("%d files in %d bytes", len(res.Files), n)
	}
}

// What apply-patch cannot update may still be deleted, or added over, as
// rm and write do: a file over its limit (it wrote a 3 MB file it then
// could not delete) and a link whose target is missing (its deletion was
// "does not exist"). An update of either is refused, nothing changed.
func TestApplyPatchDeletesWhatItCannotUpdate(t *testing.T) {
	lfs := localFS(t)
	dir := lfs.Roots()[0]
	tl := &Tools{FS: lfs}
	ctx := context.Background()
	big := strings.Repeat("y\n", MaxEditBytes)
	for _, name := range []string{"big.txt", "big2.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"dangling", "dangling2"} {
		if err := os.Symlink("missing.txt", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// An add through a link to a missing target writes the target, as
	// write does (it lost every race against the link's own version).
	if err := os.Symlink("target3.txt", filepath.Join(dir, "dangling3")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ patch, code string }{
		{"*** Update File: big.txt\n@@\n+x", string(fault.CodeTooLarge)},
		{"*** Update File: dangling\n@@\n+x", string(fault.CodeSymlink)},
		{"*** Delete File: big.txt", ""},
		{"*** Add File: big2.txt\n+small", ""},
		{"*** Delete File: dangling", ""},
		{"*** Add File: dangling3\n+hi", ""},
	} {
		_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n" + tc.patch + "\n*** End Patch\n"})
		if e := fault.AsError(err); (tc.code == "") != (err == nil) || err != nil && string(e.Code) != tc.code {
			t.Errorf("%q: %v; want %q", tc.patch, err, tc.code)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "dangling")); !os.IsNotExist(err) {
		t.Errorf("the link deleted is there: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "dangling2")); err != nil || target != "missing.txt" {
		t.Errorf("the link updated is %q, %v; want it kept", target, err)
	}
	for name, want := range map[string]string{"big.txt": "", "big2.txt": "small\n", "target3.txt": "hi\n"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if want == "" && !os.IsNotExist(err) || want != "" && string(got) != want {
			t.Errorf("%s: %.20q, %v; want %q", name, got, err, want)
		}
	}
}

// A section that leaves its file as it is (-a +a, context alone) writes
// nothing: the file keeps its version, and says noChange (it was
// rewritten, a new version, and a read's version went STALE).
func TestApplyPatchNoChangeWritesNothing(t *testing.T) {
	m := memfs.New(map[string]string{"a.txt": "a\nb\n", "b.txt": "x\n"})
	was := versionOf(m, "a.txt")
	res, err := (&Tools{FS: m}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+a\n*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || !res.Files[0].NoChange || res.Files[0].Version != was || res.Files[0].Diff != "" || res.Files[1].NoChange || res.Files[1].Version != versionOf(m, "b.txt") {
		t.Fatalf("%+v; want a.txt noChange at version %s, b.txt changed", res.Files, was)
	}
	if m.Stats().Writes != 1 || versionOf(m, "a.txt") != was || fileText(m, "b.txt") != "y\n" {
		t.Fatalf("%d writes, a.txt at %s; want one write, a.txt at %s", m.Stats().Writes, versionOf(m, "a.txt"), was)
	}
}

// A patch saved with a UTF-8 byte-order mark parses: the mark is no part
// of its first line, as read leaves it out of a file's content.
func TestApplyPatchAfterAByteOrderMark(t *testing.T) {
	m := memfs.New(map[string]string{"a.txt": "a\n"})
	if _, err := (&Tools{FS: m}).ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "\uFEFF*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n"}); err != nil {
		t.Fatal(err)
	}
	if got := fileText(m, "a.txt"); got != "A\n" {
		t.Fatalf("a.txt is %q", got)
	}
}

// foldTxn is foldFS whose transactions refuse two spellings of one entry,
// as localfs's do where the file system ignores case.
type foldTxn struct{ foldFS }

func (f foldTxn) twice(ops []backend.Op) error {
	seen := map[string]string{}
	for _, op := range ops {
		if other, ok := seen[f.stored(op.Path)]; ok {
			return backend.ChangedTwice(op.Path).WithDetail("sameAs", other)
		}
		seen[f.stored(op.Path)] = op.Path
	}
	return nil
}

func (f foldTxn) CheckCommit(_ context.Context, ops []backend.Op) error { return f.twice(ops) }

func (f foldTxn) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	if err := f.twice(ops); err != nil {
		return nil, err
	}
	return f.FS.Commit(ctx, ops)
}

// A patch that names one file by two spellings where case is ignored
// (adds Foo.go and deletes foo.go on macOS) is PATCH_VERIFY saying so,
// its dry run too (which passed, then INVALID_ARGUMENT "a transaction
// changes the file twice"), not a link on the way.
func TestApplyPatchTwoSpellingsOfOneName(t *testing.T) {
	for _, dry := range []bool{false, true} {
		m := memfs.New(map[string]string{"foo.go": "package foo\n"})
		tl := &Tools{FS: foldTxn{foldFS{m}}}
		_, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{DryRun: dry,
			Patch: "*** Begin Patch\n*** Add File: Foo.go\n+package Foo\n*** Delete File: foo.go\n*** End Patch\n"})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodePatchVerify || !strings.Contains(e.Message, "ignores case") || fileText(m, "foo.go") != "package foo\n" {
			t.Errorf("dry %v: %v; foo.go is %q", dry, err, fileText(m, "foo.go"))
		}
	}
}
