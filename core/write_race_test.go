package core

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// rewrittenFS rewrites its file with content, a new version, just before
// the first open, or with remove removes it (or gone): another writer's PUT or
// DELETE landing between a mutation's stat and its read, on a store whose
// reads take no lock.
type rewrittenFS struct {
	*memfs.FS
	path, content string
	remove, done  bool
	// gone, when set, is what the removal removes (path's directory).
	gone string
}

func (r *rewrittenFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	if !r.done && p == r.path {
		r.done = true
		var err error
		if r.remove {
			_, err = r.FS.Remove(ctx, cmp.Or(r.gone, p), backend.RemoveOptions{Recursive: true})
		} else {
			_, err = r.FS.WriteFile(ctx, p, []byte(r.content), backend.WriteOptions{})
		}
		if err != nil {
			return nil, err
		}
	}
	return r.FS.Open(ctx, p)
}

// A write of the bytes the file holds, with the version it had when stat'ed,
// whose read finds another version of the same bytes is STALE: it said
// noChange, of the old version, and a counter lost increments (two
// read-increment-writes of the same value both succeeded).
func TestWriteSameBytesOfAnotherVersionIsStale(t *testing.T) {
	ctx := context.Background()
	fs := &rewrittenFS{FS: memfs.New(map[string]string{"n.txt": "7\n"}), path: "n.txt", content: "7\n"}
	before, err := fs.Stat(ctx, "n.txt")
	if err != nil {
		t.Fatal(err)
	}
	tl := &Tools{FS: fs}
	res, err := tl.Write(ctx, WriteRequest{Path: "n.txt", Content: new("7\n"), Precondition: Precondition{ExpectedVersion: before.Version}})
	if code := fault.AsError(err); code == nil || code.Code != fault.CodeStale {
		t.Fatalf("got %+v, %v; want STALE", res, err)
	}
}

// A file removed between a mutation's stat and its read is a lost race,
// run again on the file as it now is: a plain write or an append creates
// it (it was NOT_FOUND, 14 of 30 writes racing an rm on S3), a removal
// that expects its sha256 is STALE, and a cut line the file held is no
// longer held, as the file no longer exists.
func TestMutationOfAFileRemovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	const cut = "x …[line cut: 9 bytes in all]\n"
	for _, tc := range []struct {
		name string
		run  func(*Tools) error
		code fault.Code // "": done, the file holds want
		want string
		file string // "": old\r\n
	}{
		{"write", func(tl *Tools) error {
			_, err := tl.Write(ctx, WriteRequest{Path: "f.txt", Content: new("new\n")})
			return err
		}, "", "new\n", ""},
		{"write of the same size", func(tl *Tools) error {
			_, err := tl.Write(ctx, WriteRequest{Path: "f.txt", Content: new("old\r\n")})
			return err
		}, "", "old\r\n", ""},
		{"write of bytes of the same size", func(tl *Tools) error {
			_, err := tl.Write(ctx, WriteRequest{Path: "f.txt", Content: new("a\x00b\x00c")})
			return err
		}, "", "a\x00b\x00c", ""},
		{"write of a cut line the file held", func(tl *Tools) error {
			_, err := tl.Write(ctx, WriteRequest{Path: "f.txt", Content: new(cut)})
			return err
		}, fault.CodeInvalidArgument, "", cut},
		{"append", func(tl *Tools) error {
			_, err := tl.Write(ctx, WriteRequest{Path: "f.txt", Content: new("more\n"), Append: true})
			return err
		}, "", "more\n", ""},
		{"rm expecting its sha256", func(tl *Tools) error {
			_, err := tl.Rm(ctx, RmRequest{Path: "f.txt", Precondition: Precondition{ExpectedSha256: sha256Hex([]byte("old\r\n"))}})
			return err
		}, fault.CodeStale, "", ""},
	} {
		fs := &rewrittenFS{FS: memfs.New(map[string]string{"f.txt": cmp.Or(tc.file, "old\r\n")}), path: "f.txt", remove: true}
		err := tc.run(&Tools{FS: fs})
		if e := fault.AsError(err); tc.code != "" && (e == nil || e.Code != tc.code) || tc.code == "" && err != nil {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.code)
			continue
		}
		if !fs.done {
			t.Errorf("%s: the file was never opened, so never removed", tc.name)
		}
		if tc.code == "" && fileText(fs.FS, "f.txt") != tc.want {
			t.Errorf("%s: the file holds %q, want %q", tc.name, fileText(fs.FS, "f.txt"), tc.want)
		}
	}
}

// A file replace found that is removed before it is read again is left
// out, as a search now would leave it out: the replace was NOT_FOUND (10
// of 10 runs racing an rm of its files on S3). The path named, removed,
// is NOT_FOUND still, as a search now finds: never 0 replacements.
func TestReplaceOfAFileRemovedMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		named, removed, gone string
		want                 int // -1: NOT_FOUND
	}{
		{"", "d/a.txt", "", 1},
		{"d", "d/a.txt", "", 1},
		{"d/a.txt", "d/a.txt", "", -1},
		{"d", "d/a.txt", "d", -1},
	} {
		fs := &rewrittenFS{FS: memfs.New(map[string]string{"d/a.txt": "foo\n", "d/b.txt": "foo\n"}), path: tc.removed, remove: true, gone: tc.gone}
		res, err := (&Tools{FS: fs}).Replace(context.Background(), ReplaceRequest{Path: tc.named, Query: "foo", Replacement: new("bar")})
		switch {
		case tc.want < 0 && !fault.MissingPath(err):
			t.Errorf("replace in %q: %+v, %v; want NOT_FOUND", tc.named, res, err)
		case tc.want >= 0 && (err != nil || res.Replacements != tc.want || fileText(fs.FS, "d/b.txt") != "bar\n"):
			t.Errorf("replace in %q: %+v, %v; want %d replacement, in d/b.txt", tc.named, res, err, tc.want)
		}
		if _, err := fs.Stat(context.Background(), tc.removed); !fs.done || !fault.MissingPath(err) {
			t.Errorf("replace in %q: %s was not removed before its read (%v)", tc.named, tc.removed, err)
		}
	}
}

// unsettled is a backend whose files (or absences) hold a transaction's
// change not yet committed for the first calls of Settled (STALE), and
// settled after; its directories are settled.
type unsettled struct {
	*memfs.FS
	stale, calls int
}

func (u *unsettled) Settled(ctx context.Context, path, version string) error {
	if fi, err := u.Stat(ctx, path); err == nil && fi.Type == backend.TypeDir {
		return nil
	}
	if u.calls++; u.calls <= u.stale {
		return fault.Errorf(fault.CodeStale, "the file holds a change of another transaction, not yet committed.").WithPath(path)
	}
	return nil
}

// TestNoChangeWaitsForASettledFile: a write of the bytes a file holds,
// an empty append, an edit already applied and a replace of a match by
// itself answer noChange (or no file changed) only once
// the file is settled (no transaction's uncommitted change, which may yet
// be undone): they read again until it is, and within the lock timeout
// or not at all.
func TestNoChangeWaitsForASettledFile(t *testing.T) {
	same, empty, newText := "func f() int { return 2 }\n", "", "func f() int { return 2 }"
	// The edit was made: its oldText is gone, its newText stands whole.
	for name, call := range map[string]func(*Tools) (bool, error){
		"write": func(tl *Tools) (bool, error) {
			res, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &same})
			return err == nil && res.NoChange, err
		},
		"append": func(tl *Tools) (bool, error) {
			res, err := tl.Write(context.Background(), WriteRequest{Path: "f", Content: &empty, Append: true})
			return err == nil && res.NoChange, err
		},
		"edit": func(tl *Tools) (bool, error) {
			res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "func f() int { return 1 }", NewText: &newText}}})
			return err == nil && res.NoChange, err
		},
		"replace": func(tl *Tools) (bool, error) {
			res, err := tl.Replace(context.Background(), ReplaceRequest{Query: "return 2", Replacement: new("return 2")})
			return err == nil && res.Replacements == 1 && res.FilesChanged == 0, err
		},
	} {
		fs := &unsettled{FS: memfs.New(map[string]string{"f": same}), stale: 3}
		if noChange, err := call(&Tools{FS: fs, LockTimeout: 10 * time.Second}); !noChange || fs.calls != 4 {
			t.Errorf("%s over a change settled at the 4th look: noChange %v, %v, after %d looks", name, noChange, err, fs.calls)
		}
		fs = &unsettled{FS: memfs.New(map[string]string{"f": same}), stale: 1 << 30}
		if _, err := call(&Tools{FS: fs, LockTimeout: 0}); err == nil || fault.AsError(err).Code != fault.CodeLockTimeout {
			t.Errorf("%s over a change never settled: %v, want LOCK_TIMEOUT", name, err)
		}
	}
}

// TestNoMatchWaitsForASettledFile: an edit whose oldText is not in the
// file, and a patch whose chunk is not, answer NO_MATCH or PATCH_VERIFY
// only once the file is settled: over a change of a transaction that may
// yet be undone, the closest region shown was that change, and the edit
// would have matched once it was undone.
func TestNoMatchWaitsForASettledFile(t *testing.T) {
	for name, call := range map[string]func(*Tools) error{
		"edit": func(tl *Tools) error {
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "nowhere", NewText: new("x")}}})
			return err
		},
		"apply-patch": func(tl *Tools) error {
			_, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-nowhere\n+x\n*** End Patch\n"})
			return err
		},
	} {
		fs := &unsettled{FS: memfs.New(map[string]string{"f": "text\n"}), stale: 3}
		if err := call(&Tools{FS: fs, LockTimeout: 10 * time.Second}); fs.calls != 4 || !slices.Contains([]fault.Code{fault.CodeNoMatch, fault.CodePatchVerify}, fault.AsError(err).Code) {
			t.Errorf("%s over a change settled at the 4th look: %v, after %d looks", name, err, fs.calls)
		}
		fs = &unsettled{FS: memfs.New(map[string]string{"f": "text\n"}), stale: 1 << 30}
		if err := call(&Tools{FS: fs, LockTimeout: 0}); fault.AsError(err).Code != fault.CodeLockTimeout {
			t.Errorf("%s over a change never settled: %v, want LOCK_TIMEOUT", name, err)
		}
	}
}

// TestNotFoundWaitsForASettledAbsence: edit, mv, apply-patch and replace
// of a missing file answer NOT_FOUND only once no removal not yet
// committed left it missing: its rollback put the file back.
func TestNotFoundWaitsForASettledAbsence(t *testing.T) {
	for name, call := range map[string]func(*Tools) error{
		"edit": func(tl *Tools) error {
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", OldText: new("a"), NewText: new("b")})
			return err
		},
		"mv": func(tl *Tools) error {
			_, err := tl.Mv(context.Background(), MvRequest{From: "f", To: "g"})
			return err
		},
		"apply-patch": func(tl *Tools) error {
			_, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\n"})
			return err
		},
		"replace": func(tl *Tools) error {
			_, err := tl.Replace(context.Background(), ReplaceRequest{Path: "f", Query: "a", Replacement: new("b")})
			return err
		},
	} {
		fs := &unsettled{FS: memfs.New(nil), stale: 3}
		if err := call(&Tools{FS: fs, LockTimeout: 10 * time.Second}); !fault.MissingPath(err) || fs.calls != 4 {
			t.Errorf("%s of a file whose absence is settled at the 4th look: %v, after %d looks", name, err, fs.calls)
		}
		fs = &unsettled{FS: memfs.New(nil), stale: 1 << 30}
		if err := call(&Tools{FS: fs, LockTimeout: 0}); fault.AsError(err).Code != fault.CodeLockTimeout {
			t.Errorf("%s of a file whose absence is never settled: %v, want LOCK_TIMEOUT", name, err)
		}
	}
}

// TestCreationWaitsForASettledAbsence: a write that creates its file (plain,
// --create or --append) waits until no removal not yet committed left the
// file missing, and a write that times out says what it waited for: a
// creation over such a removal was kept by its rollback as another
// writer's, and the removed file lost.
func TestCreationWaitsForASettledAbsence(t *testing.T) {
	for name, req := range map[string]WriteRequest{
		"write":  {Path: "new", Content: new("x")},
		"create": {Path: "new", Content: new("x"), Create: true},
		"append": {Path: "new", Content: new("x"), Append: true},
	} {
		fs := &unsettled{FS: memfs.New(nil), stale: 3}
		if res, err := (&Tools{FS: fs, LockTimeout: 10 * time.Second}).Write(context.Background(), req); err != nil || !res.Created || fs.calls != 4 {
			t.Errorf("%s over an absence settled at the 4th look: %+v, %v, after %d looks", name, res, err, fs.calls)
		}
		fs = &unsettled{FS: memfs.New(nil), stale: 1 << 30}
		_, err := (&Tools{FS: fs, LockTimeout: 0}).Write(context.Background(), req)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout || !strings.Contains(e.Message, "another transaction, not yet committed") || strings.Count(e.Hint, "nothing was changed") != 1 {
			t.Errorf("%s over an absence never settled: %+v, want LOCK_TIMEOUT saying what it waited for, its hint once that nothing was changed", name, e)
		}
		if _, err := fs.Stat(context.Background(), "new"); err == nil {
			t.Errorf("%s over an absence never settled created the file", name)
		}
	}
}

// TestTooLargeResultWaitsForASettledFile: edit, replace and apply-patch
// answer that their result would be over MaxEditBytes only once the file
// read is settled, as NO_MATCH: over a change of a transaction that may
// yet be undone (a file grown by it), the change refused would fit once
// it was undone.
func TestTooLargeResultWaitsForASettledFile(t *testing.T) {
	near := strings.Repeat("ab\n", 1000) + strings.Repeat("x", 1800000) + "\n"
	grow := strings.Repeat("c", 300)
	for name, call := range map[string]func(*Tools) error{
		"edit": func(tl *Tools) error {
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "ab", NewText: new(grow), ReplaceAll: true}}})
			return err
		},
		"replace": func(tl *Tools) error {
			_, err := tl.Replace(context.Background(), ReplaceRequest{Query: "ab", Replacement: new(grow)})
			return err
		},
		"apply-patch": func(tl *Tools) error {
			_, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-ab\n+" + strings.Repeat("c", 300000) + "\n*** End Patch\n"})
			return err
		},
	} {
		fs := &unsettled{FS: memfs.New(map[string]string{"f": near}), stale: 1 << 30}
		if err := call(&Tools{FS: fs, LockTimeout: 0}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeLockTimeout {
			t.Errorf("%s over a change never settled: %v, want LOCK_TIMEOUT", name, err)
		}
		fs = &unsettled{FS: memfs.New(map[string]string{"f": near}), stale: 0}
		if err := call(&Tools{FS: fs, LockTimeout: 0}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeTooLarge {
			t.Errorf("%s over a settled file: %v, want TOO_LARGE", name, err)
		}
	}
}
