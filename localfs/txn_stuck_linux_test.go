package localfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// openErr opens path of fsys and closes it, returning the error.
func openErr(fsys *FS, path string) error {
	r, err := fsys.Open(context.Background(), path)
	if err == nil {
		r.Close()
	}
	return err
}

// A roll-back that cannot finish (the directory append-only since the
// crash) refuses only the files it left other than they were, saying
// what is there, where the old content is, why it could not go back and
// how to finish: every read of the tree was IO_ERROR saying the process
// died and "the change could not be undone", sub/d.txt's too, put back,
// and a file the transaction removed read as NOT_FOUND.
func TestTxnStuckUndoRefusesWhatItLeft(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := killedMidCommit(t, txnBefore, txnAfter)
	must(t, os.WriteFile(filepath.Join(dir, "z.txt"), []byte("z\n"), 0o644))
	chattr(t, "+a", dir)
	defer chattr(t, "-a", dir)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	ctx := context.Background()
	// The first half-changed kill point: a.txt replaced, b.txt removed.
	if got := contents(t, dir); got["a.txt"] != "new a\n" || got["b.txt"] != "" {
		t.Fatalf("the kill left %q, not a.txt replaced and b.txt removed", got)
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		err := openErr(fsys, p)
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, "append-only") || !strings.Contains(e.Message, "process died") ||
			!strings.Contains(e.Hint, "chattr -a") || e.Details["undo"] == nil || e.Details["journal"] == nil {
			t.Errorf("open %s, left half changed: %v, want IO_ERROR saying append-only, with the undo and chattr -a", p, err)
			continue
		}
		if undo, _ := e.Details["undo"].(string); !strings.Contains(undo, filepath.Join(dir, p)) || !strings.Contains(undo, tempPrefix) {
			t.Errorf("open %s: undo %q does not name the file and its backup", p, undo)
		}
	}
	for _, p := range []string{"sub/d.txt", "z.txt"} {
		if err := openErr(fsys, p); err != nil {
			t.Errorf("open %s, which the undo put back or no transaction names: %v", p, err)
		}
	}
	if _, err := fsys.ReadDir(ctx, "sub", 0, 10); err != nil {
		t.Errorf("ReadDir sub, undone: %v", err)
	}
	if err := fsys.Walk(ctx, ".", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil }); code(err) != fault.CodeIOError {
		t.Errorf("Walk . holding a file not undone: %v, want IO_ERROR", err)
	}
	chattr(t, "-a", dir)
	must(t, os.Remove(filepath.Join(dir, "z.txt")))
	recoveredTo(t, dir, state, txnBefore)
}

// A roll-back that put every file back but cannot remove a backup link
// or a staged file (the directory append-only) refuses nothing: every
// file holds what it held before the transaction. The journal stays for a
// later call to remove them, and --recover (Recovery) reports them.
func TestTxnStuckLeftoversRefuseNothing(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := killedWhere(t, txnBefore, func(dir, journal string) bool {
		got := contents(t, dir)
		return strings.HasSuffix(journal, journalPending) && equalTree(visible(got), txnBefore) && len(got) > len(txnBefore)+3
	})
	chattr(t, "+a", dir)
	defer chattr(t, "-a", dir)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	ctx := context.Background()
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 1 {
		t.Fatalf("journals %v: the kill left nothing that an append-only directory keeps", j)
	}
	for _, p := range []string{"a.txt", "b.txt", "sub/d.txt"} {
		if err := openErr(fsys, p); err != nil {
			t.Errorf("open %s, as it was before the transaction: %v", p, err)
		}
	}
	if err := fsys.Walk(ctx, ".", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil }); err != nil {
		t.Errorf("Walk . of a tree as it was: %v", err)
	}
	rec := fsys.Recovery()
	if len(rec.Stuck) != 1 || len(rec.Stuck[0].Left) == 0 || slices.ContainsFunc(rec.Stuck[0].Left, func(f StuckFile) bool { return f.Refused }) ||
		!strings.Contains(rec.Stuck[0].Left[0].Failed, "append-only") || !strings.HasPrefix(rec.Stuck[0].Left[0].Undo, "rm -- ") {
		t.Errorf("Recovery: %+v, want the journal, its hidden files each with its rm and none refused", rec)
	}
	chattr(t, "-a", dir)
	recoveredTo(t, dir, state, txnBefore)
}

// A commit that fails and whose own undo fails too (its first file's
// directory append-only by then) gives its journal up, saying what it
// left, and the later refusals say that its commit failed, not that its
// process died, which lived.
func TestTxnAbandonedSaysSo(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "old a\n", "sub/d.txt": "old d\n"})
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	real := syscalls.renameat
	defer func() { syscalls.renameat = real }()
	renames := 0
	syscalls.renameat = func(od int, o string, nd int, n string) error {
		if renames++; renames == 2 { // sub/d.txt's, after a.txt's
			chattr(t, "+a", dir)
			return unix.EIO
		}
		return real(od, o, nd, n)
	}
	defer chattr(t, "-a", dir)
	_, err = fsys.Commit(context.Background(), txnOpsTwo())
	syscalls.renameat = real
	fsys.Close()
	if e := fault.AsError(err); e == nil || !strings.Contains(e.Message, filepath.Join(dir, "a.txt")) || !strings.Contains(e.Message, "append-only") || e.Details["undo"] == nil {
		t.Fatalf("commit: %v, want its error naming a.txt left, why, and its undo", err)
	}
	other, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer other.Close()
	err = openErr(other, "a.txt")
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeIOError || strings.Contains(e.Message, "died") || !strings.Contains(e.Message, "its commit failed") {
		t.Errorf("open a.txt left by a commit that gave up: %v, want IO_ERROR saying its commit failed, not that its process died", err)
	}
	if err := openErr(other, "sub/d.txt"); err != nil {
		t.Errorf("open sub/d.txt, never changed: %v", err)
	}
	chattr(t, "-a", dir)
	recoveredTo(t, dir, state, map[string]string{"a.txt": "old a\n", "sub/d.txt": "old d\n"})
}
