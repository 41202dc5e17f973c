package localfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A rollback that fails (a file system remounted read-only since the
// crash) keeps the journal, and the next call once it is writable undoes
// the commit.
func TestTxnRecoveryOfAReadOnlyTree(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	before, after := txnBefore, txnAfter
	dir := killedMidCommit(t, before, after)
	must(t, os.MkdirAll(filepath.Join(dir, "other"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "other", "e.txt"), []byte("e\n"), 0o644))
	writable := readOnly(t, dir)
	half := contents(t, dir)
	recoverElsewhere(t)
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 1 {
		t.Fatalf("the journal of a read-only tree went: %v", j)
	}
	// Meanwhile its files, and the trees that hold them, are not read as
	// if committed (a read answered the half-done commit's content); the
	// others are.
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	ctx := context.Background()
	uncommitted := func(what string, err error) {
		t.Helper()
		if code(err) != fault.CodeIOError || !strings.Contains(err.Error(), "could not be undone") {
			t.Errorf("%s of the half-committed tree: %v, want IO_ERROR naming the failed undo", what, err)
		}
	}
	r, err := fsys.Open(ctx, "a.txt")
	if err == nil {
		r.Close()
	}
	uncommitted("open a.txt", err)
	_, err = fsys.ReadDir(ctx, "sub", 0, 10)
	uncommitted("ReadDir sub", err)
	uncommitted("Walk .", fsys.Walk(ctx, ".", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil }))
	if r, err := fsys.Open(ctx, "other/e.txt"); err != nil {
		t.Errorf("a file of no transaction: %v", err)
	} else {
		r.Close()
	}
	must(t, fsys.Walk(ctx, "other", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil }))
	fsys.Close()
	writable()
	if got := contents(t, dir); !equalTree(got, half) {
		t.Fatalf("the tree changed while read-only: %q, was %q", got, half)
	}
	must(t, os.RemoveAll(filepath.Join(dir, "other")))
	recoveredTo(t, dir, state, before)
}

// A recovery pass that undoes part of a transaction (its new directories
// removed) and fails on another part (a read-only directory) keeps the
// journal; once writable, the next pass should finish it.
func TestTxnRecoveryAfterAPartialPass(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	t.Setenv(txnOpsEnv, "dirs")
	// A pending journal, and sub's backup made.
	dir := killedWhere(t, dirsBefore, func(dir, journal string) bool {
		subs, _ := os.ReadDir(filepath.Join(dir, "sub"))
		return strings.HasSuffix(journal, journalPending) && slices.ContainsFunc(subs, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), tempPrefix) })
	})
	t.Logf("killed: files %q dirs %q", contents(t, dir), dirsIn(t, dir))
	writable := readOnly(t, filepath.Join(dir, "sub"))
	recoverElsewhere(t)
	j, _ := os.ReadDir(filepath.Join(state, "journal"))
	t.Logf("after pass 1 (sub read-only): journals %d, files %q, dirs %q", len(j), contents(t, dir), dirsIn(t, dir))
	writable()
	for pass := 2; pass <= 3; pass++ {
		recoverElsewhere(t)
		j, _ = os.ReadDir(filepath.Join(state, "journal"))
		t.Logf("after pass %d (writable): journals %d, files %q, dirs %q", pass, len(j), contents(t, dir), dirsIn(t, dir))
	}
	if len(j) != 0 {
		t.Errorf("the journal stays for ever once its new directories are gone: %v", j)
	}
}

// The commit point's rename made, its directory's fsync failing, and the
// commit's own rollback failing for one file (a read-only directory):
// the journal was kept under its committed name, and the next recovery
// finished the commit, removing the old content of a file the caller was
// told was not changed. It is kept pending, and undone.
func TestTxnFailedCommitKeptPending(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "old a\n", "sub/d.txt": "old d\n"})
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	jdir := filepath.Join(state, "journal")
	real := syscalls.fsync
	defer func() { syscalls.fsync = real }()
	writable := func() {}
	syscalls.fsync = func(fd int) error {
		p, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if p == jdir {
			if js, _ := os.ReadDir(jdir); len(js) == 1 && strings.HasSuffix(js[0].Name(), journalCommitted) {
				writable = readOnly(t, filepath.Join(dir, "sub"))
				return unix.EIO
			}
		}
		return real(fd)
	}
	ctx := t.Context()
	ops := txnOpsTwo()
	unlock, err := fsys.LockAll(ctx, []string{"a.txt", "sub/d.txt"}, 0)
	must(t, err)
	_, err = fsys.Commit(ctx, ops)
	unlock()
	fsys.Close()
	syscalls.fsync = real
	js, _ := os.ReadDir(jdir)
	t.Logf("commit error: %v; journals %v; tree %q", err, js, contents(t, dir))
	writable()
	recoverElsewhere(t)
	js, _ = os.ReadDir(jdir)
	got := contents(t, dir)
	t.Logf("after recovery: journals %v; tree %q", js, got)
	if got["sub/d.txt"] != "old d\n" {
		t.Errorf("the caller was told nothing changed, yet sub/d.txt is %q and its old content is gone", got["sub/d.txt"])
	}
}

func txnOpsTwo() []backend.Op {
	return []backend.Op{{Path: "a.txt", Data: []byte("new a\n")}, {Path: "sub/d.txt", Data: []byte("new d\n")}}
}

// needRoot skips a test that remounts a directory read-only unless it
// runs as root.
func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to remount read-only; CI runs it as root (sudo go test ./localfs -run Txn)")
	}
}

// readOnly bind-mounts dir read-only over itself, skipping the test where
// that is not permitted, and returns what makes it writable again (done at
// the test's end too).
func readOnly(t *testing.T, dir string) (writable func()) {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind is not permitted here (%v); run as root outside a restricted container", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount read-only is not permitted here: %v", err)
	}
	return func() {
		must(t, unix.Unmount(dir, 0))
		mounted = false
	}
}

// A settle that cannot look at a stuck journal (another process holds it
// while it tries the undo again, past this call's deadline) keeps its
// files refused: it dropped them from the list, and a read in that
// window answered the half-done commit's content as committed.
func TestUncommittedStaysWhileAnotherRecoveryHoldsTheJournal(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := killedMidCommit(t, txnBefore, txnAfter)
	readOnly(t, dir)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, LockTimeout: 20 * time.Millisecond})
	must(t, err)
	defer fsys.Close()
	ctx := context.Background()
	open := func() error {
		r, err := fsys.Open(ctx, "a.txt")
		if err == nil {
			r.Close()
		}
		return err
	}
	if err := open(); code(err) != fault.CodeIOError {
		t.Fatalf("open a.txt of the half-committed tree: %v, want IO_ERROR", err)
	}
	js, _ := filepath.Glob(filepath.Join(state, "journal", "*"+journalPending))
	if len(js) != 1 {
		t.Fatalf("journals %q", js)
	}
	release := recovering(t, js[0])
	fsys.SettleDead(ctx)
	if err := open(); code(err) != fault.CodeIOError {
		t.Errorf("open a.txt while another process holds the stuck journal: %v, want IO_ERROR", err)
	}
	release()
	// Once its file system is writable again (remounted: the session's
	// descriptors keep the mount busy), its next call undoes the
	// transaction and reads the file again.
	must(t, unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT, ""))
	fsys.SettleDead(ctx)
	if err := open(); err != nil {
		t.Errorf("open a.txt once the transaction is undone: %v", err)
	}
}
