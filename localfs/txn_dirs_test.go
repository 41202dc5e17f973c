package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// txnDirOps make two new directories (new, new/deep: two workers need
// new), and change files of a directory that was there.
func txnDirOps() []backend.Op {
	return []backend.Op{
		{Path: "a.txt", Data: []byte("new a\n")},
		{Path: "new/deep/e.txt", Data: []byte("new e\n")},
		{Path: "new/f.txt", Data: []byte("new f\n")},
		{Path: "sub/d.txt", Remove: true},
	}
}

var (
	dirsBefore = map[string]string{"a.txt": "old a\n", "sub/d.txt": "old d\n"}
	dirsAfter  = map[string]string{"a.txt": "new a\n", "new/deep/e.txt": "new e\n", "new/f.txt": "new f\n"}
)

// dirsIn lists the directories below dir.
func dirsIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
	}
}

// checkDirsOutcome fails unless dir holds the tree before the transaction
// with only its directories, or the tree after it with the ones it made,
// and no record of a made directory is left in state. It says which.
func checkDirsOutcome(t *testing.T, what, dir, state string) (done bool) {
	t.Helper()
	files, dirs := contents(t, dir), dirsIn(t, dir)
	switch {
	case equalTree(files, dirsBefore) && slices.Equal(dirs, []string{"sub"}):
	case equalTree(files, dirsAfter) && slices.Equal(dirs, []string{"new", "new/deep", "sub"}):
		done = true
	default:
		t.Fatalf("%s: the tree is %q with directories %q, neither before nor after", what, files, dirs)
	}
	if left := dirRecordsLeft(state); len(left) != 0 {
		t.Fatalf("%s: records of made directories left: %v", what, left)
	}
	return done
}

// dirRecordsLeft lists the records of made directories in state. A record
// killed half made (createLocked: a commit's stagers make them while one
// of them is at its pause) names no directory; it is litter a sweep takes
// once partialAge old, as its writer may still be about to lock it, and
// is left out.
func dirRecordsLeft(state string) []os.DirEntry {
	left, _ := os.ReadDir(filepath.Join(state, dirRecords))
	return slices.DeleteFunc(left, func(e os.DirEntry) bool { return strings.Contains(e.Name(), partialSuffix) })
}

// A commit that fails at any of its durable calls (a staged file's or a
// directory's sync, the journal's, a rename, a made directory's rename to
// its name) removes the directories it
// made for its new files, as well as the files: nothing was changed. One
// refused while preparing (HARDLINK) too, and a directory that another
// writer filled meanwhile stays.
func TestTxnFailureRemovesMadeDirs(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	fsync, renameat, renameExclusive := syscalls.fsync, syscalls.renameat, syscalls.renameExclusive
	restore := func() { syscalls.fsync, syscalls.renameat, syscalls.renameExclusive = fsync, renameat, renameExclusive }
	t.Cleanup(restore)
	commit := func(dir string) error {
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close()
		_, err = fsys.Commit(context.Background(), txnDirOps())
		return err
	}
	for at := 1; ; at++ {
		dir := t.TempDir()
		writeTree(t, dir, dirsBefore)
		var calls atomic.Int64 // the stagers sync at once
		failAt := func() error {
			if calls.Add(1) == int64(at) {
				return unix.EIO
			}
			return nil
		}
		syscalls.fsync = func(fd int) error { return failOr(failAt(), func() error { return fsync(fd) }) }
		syscalls.renameat = func(od int, o string, nd int, n string) error {
			return failOr(failAt(), func() error { return renameat(od, o, nd, n) })
		}
		syscalls.renameExclusive = func(od int, o string, nd int, n string) error {
			return failOr(failAt(), func() error { return renameExclusive(od, o, nd, n) })
		}
		err := commit(dir)
		restore()
		done := checkDirsOutcome(t, fmt.Sprint("fail at call ", at), dir, state)
		if err == nil {
			if !done {
				t.Fatal("a commit that succeeded changed nothing")
			}
			break
		}
		if done {
			t.Fatalf("fail at call %d: the commit failed (%v) and changed the tree", at, err)
		}
	}

	dir := t.TempDir()
	writeTree(t, dir, dirsBefore)
	must(t, os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "a2.txt")))
	err := commit(dir)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeHardlink {
		t.Fatalf("a commit replacing a hard-linked file: %v, want HARDLINK", err)
	}
	must(t, os.Remove(filepath.Join(dir, "a2.txt")))
	checkDirsOutcome(t, "refused", dir, state)
}

// failOr is err, or else what next returns.
func failOr(err error, next func() error) error {
	if err != nil {
		return err
	}
	return next()
}

// An undo removes a directory the transaction made only while it is that
// directory, and empty: not one another writer filled, nor another at its
// name.
func TestTxnUndoKeepsOthersDirs(t *testing.T) {
	dir := t.TempDir()
	made, other := filepath.Join(dir, "new"), filepath.Join(dir, "other")
	must(t, os.Mkdir(made, 0o755))
	var st unix.Stat_t
	must(t, unix.Stat(made, &st))
	undo := []journalEntry{{Dir: dir, Name: "new", DirID: identity(&st)}}
	must(t, os.WriteFile(filepath.Join(made, "theirs.txt"), nil, 0o644))
	(&FS{}).rollBack(undo)
	if _, err := os.Stat(filepath.Join(made, "theirs.txt")); err != nil {
		t.Fatalf("the undo removed a directory another writer filled: %v", err)
	}
	must(t, os.Remove(filepath.Join(made, "theirs.txt")))
	must(t, os.Rename(made, other))
	must(t, os.Mkdir(made, 0o755))
	(&FS{}).rollBack(undo)
	if _, err := os.Stat(made); errors.Is(err, os.ErrNotExist) {
		t.Fatal("the undo removed another directory at the name of the one it made")
	}
	must(t, os.Rename(other, made+"2"))
	must(t, os.Remove(made))
	must(t, os.Rename(made+"2", made))
	(&FS{}).rollBack(undo)
	if _, err := os.Stat(made); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the undo left the empty directory it made: %v", err)
	}
}

// A commit killed at any point of it leaves, once the next agentfs
// starts, the directories it made for its new files exactly when its
// files are there: a kill before the journal (the records are swept),
// before the commit point (the journal undoes them) and after it; and one
// at each step of making a directory, between the mkdir and its record's
// identity, or before its rename to its name.
func TestTxnKillsLeaveNoMadeDirs(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	run := func(what string, env ...string) map[bool]int {
		outcomes := map[bool]int{}
		for at := 1; ; at++ {
			dir := t.TempDir()
			writeTree(t, dir, dirsBefore)
			killed := runKilledAt(t, "TestTxnCommitter", dir, at, append(env, txnOpsEnv+"=dirs")...)
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir}) // recovers
			if err != nil {
				t.Fatal(err)
			}
			fsys.Close()
			outcomes[checkDirsOutcome(t, fmt.Sprint(what, at), dir, state)]++
			if !killed {
				return outcomes
			}
		}
	}
	if outcomes := run("kill at "); outcomes[false] == 0 || outcomes[true] < 2 {
		t.Errorf("the kills did not land on both sides of the commit point: %v", outcomes)
	}
	// Two directories, each made (1) and renamed (2): at least 4 steps.
	if outcomes := run("kill at directory step ", killDirsEnv+"=1"); outcomes[false] < 4 {
		t.Errorf("the kills did not land at each step of making the two directories: %v", outcomes)
	}
}

// A session (batch, MCP) started before a writer was killed while making
// its directories removes them before its next request, as a process
// started after does: swept only at a start, they stayed in the session's
// view (ls, find) and a write of the session into one kept it for good.
func TestSessionSweepsTheDirsOfAWriterKilledSince(t *testing.T) {
	for at := 1; ; at++ {
		// A state directory of its own: a worker killed by the other in
		// createLocked leaves a half-made record, litter for partialAge,
		// and the next round's first sweep did not find it empty.
		state := t.TempDir()
		t.Setenv(StateDirEnv, state)
		dir := t.TempDir()
		writeTree(t, dir, dirsBefore)
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
		must(t, err)
		// The state directory's times as if old: a sweep that finds
		// nothing is not made again while they stay.
		fsys.listings.now = func() time.Time { return time.Now().Add(time.Hour) }
		must(t, fsys.BeginRequest(context.Background()))
		if fsys.swept.Load() == nil {
			t.Fatal("a sweep that found nothing kept no stamps: each request sweeps again")
		}
		killed := runKilledAt(t, "TestTxnCommitter", dir, at, txnOpsEnv+"=dirs", killDirsEnv+"=1")
		must(t, fsys.BeginRequest(context.Background()))
		fsys.Close()
		checkDirsOutcome(t, fmt.Sprint("kill at directory step ", at), dir, state)
		if !killed {
			return
		}
	}
}

// Where a directory cannot be renamed without replacing (no renameat2,
// or a file system without RENAME_NOREPLACE), a commit makes its
// directories at their own names, and leaves no staging directory.
func TestTxnMakesDirsWithoutExclusiveRename(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	renameExclusive := syscalls.renameExclusive
	t.Cleanup(func() { syscalls.renameExclusive = renameExclusive })
	for _, errno := range []error{unix.ENOSYS, unix.EINVAL} {
		syscalls.renameExclusive = func(int, string, int, string) error { return errno }
		dir := t.TempDir()
		writeTree(t, dir, dirsBefore)
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		_, err = fsys.Commit(context.Background(), txnDirOps())
		fsys.Close()
		if err != nil {
			t.Fatalf("%v: %v", errno, err)
		}
		if !checkDirsOutcome(t, errno.Error(), dir, state) {
			t.Fatalf("%v: the commit changed nothing", errno)
		}
	}
}

// txnManyDirOps add a file in each of manyDirs new directories.
func txnManyDirOps() []backend.Op {
	ops := make([]backend.Op, manyDirs)
	for i := range ops {
		ops[i] = backend.Op{Path: fmt.Sprintf("new/m%03d/f.txt", i), Data: []byte("new\n")}
	}
	return ops
}

const manyDirs = 200

// Two calls that start at once after a commit was killed before its
// journal both sweep its records: the temp files, then the directories.
// One found a directory the other had not yet emptied, and dropped its
// record with the directory left (5 of 20 runs of two `agentfs ls` after
// a killed apply-patch): the directory stayed for good.
func TestConcurrentSweepsLeaveNoMadeDirs(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	for round := range 8 {
		dir := t.TempDir()
		writeTree(t, dir, dirsBefore)
		// Past the staged files' syncs, before the journal's.
		if !runKilledAt(t, "TestTxnCommitter", dir, manyDirs/2, txnOpsEnv+"=manyDirs") {
			t.Fatal("the commit was not killed")
		}
		if dirs := dirsIn(t, dir); len(dirs) < manyDirs/2 {
			t.Fatalf("the killed commit made %d directories, want most of %d", len(dirs), manyDirs)
		}
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
				if err == nil {
					fsys.Close()
				}
				errs <- err
			}()
		}
		must(t, <-errs)
		must(t, <-errs)
		if got, dirs := contents(t, dir), dirsIn(t, dir); !equalTree(got, dirsBefore) || !slices.Equal(dirs, []string{"sub"}) {
			t.Fatalf("round %d: files %q, %d directories: %q...", round, got, len(dirs), dirs[:min(len(dirs), 4)])
		}
	}
}

// txnNewDirOps add a file in each of two new directories, one in the
// other: every staged file is in a directory the commit made.
func txnNewDirOps() []backend.Op {
	return []backend.Op{
		{Path: "new/deep/e.txt", Data: []byte("new e\n")},
		{Path: "new/f.txt", Data: []byte("new f\n")},
	}
}

// A sweep (a start, a session's request) that passes over a live
// writer's staged files, the writer killed before the sweep reaches the
// records of the directories it made, finds those directories not empty
// (the staged files in them): it dropped their records all the same, the
// next sweep removed the staged files, and the directories stayed for
// good (0.6% of apply-patches killed beside other agentfs calls).
func TestSweepKeepsTheDirsOfAWriterKilledDuringIt(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := t.TempDir()
	// At the first staged file's sync: in new or new/deep.
	child := startPausedAt(t, "TestTxnCommitter", dir, 1, txnOpsEnv+"=newDirs")
	saved := syscalls
	t.Cleanup(func() { syscalls = saved })
	var staged []string
	syscalls.readDir = func(name string) ([]os.DirEntry, error) {
		if name == filepath.Join(state, dirRecords) && child != nil {
			child.Process.Kill()
			child.Wait()
			child = nil
			staged, _ = filepath.Glob(filepath.Join(dir, "new", "*", tempPrefix+"*"))
			more, _ := filepath.Glob(filepath.Join(dir, "new", tempPrefix+"*"))
			staged = append(staged, more...)
		}
		return saved.readDir(name)
	}
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir}) // sweeps
	must(t, err)
	fsys.Close()
	if child != nil || len(staged) == 0 {
		t.Fatalf("the sweep did not reach the made directories' records with the writer killed since, and its staged files there (%q)", staged)
	}
	syscalls = saved
	fsys, err = New(Config{Roots: []string{dir}, Cwd: dir}) // the next start
	must(t, err)
	fsys.Close()
	if dirs := dirsIn(t, dir); len(dirs) != 0 {
		t.Errorf("the killed writer's directories %q stay", dirs)
	}
	if left := dirRecordsLeft(state); len(left) != 0 {
		t.Errorf("records of made directories left: %v", left)
	}
}

// CheckCommit refuses what Commit refuses before staging (a hard link, a
// directory to remove as a file, a stale version) and changes nothing: no
// directory made, no temporary file, no record.
func TestCheckCommit(t *testing.T) {
	fsys, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	must(t, os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "linked.txt")))
	must(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		op   backend.Op
		code fault.Code
	}{
		{"a file", backend.Op{Path: "b.txt", Data: []byte("x")}, ""},
		{"a new file in a new directory", backend.Op{Path: "new/deep/c.txt", Data: []byte("x")}, ""},
		{"a removal", backend.Op{Path: "b.txt", Remove: true}, ""},
		{"a hard link", backend.Op{Path: "linked.txt", Data: []byte("x")}, fault.CodeHardlink},
		{"a directory removed as a file", backend.Op{Path: "sub", Remove: true}, fault.CodeNotAFile},
		{"a stale version", backend.Op{Path: "b.txt", Data: []byte("x"), Write: backend.WriteOptions{IfVersion: "0000000000000000"}}, fault.CodeStale},
		{"a file that exists, taken for new", backend.Op{Path: "b.txt", Data: []byte("x"), Write: backend.WriteOptions{IfAbsent: true}}, fault.CodeExists},
		{"the root", backend.Op{Path: ".", Data: []byte("x")}, fault.CodeInvalidArgument},
	} {
		err := fsys.CheckCommit(ctx, []backend.Op{tc.op})
		if got := fault.AsError(err); (tc.code == "") != (err == nil) || err != nil && got.Code != tc.code {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.code)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory was made: %v", err)
	}
	if got := temps(t, dir); len(got) > 0 {
		t.Errorf("temporary files left: %v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(data) != "b\n" {
		t.Errorf("b.txt holds %q", data)
	}
}

// CheckCommit refuses, as the commit does, a file the caller may not write
// and a directory it may not write in; removing a file that is not there
// needs neither. Root may write anything: run as another user.
func TestCheckCommitPermissions(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anything: the unprivileged pass (see .ci/run) runs this")
	}
	fsys, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "ro.txt"), []byte("a\n"), 0o444))
	must(t, os.Mkdir(filepath.Join(dir, "sealed"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sealed", "f.txt"), []byte("a\n"), 0o644))
	must(t, os.Chmod(filepath.Join(dir, "sealed"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sealed"), 0o755) })
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		op   backend.Op
		code fault.Code
	}{
		{"a read-only file", backend.Op{Path: "ro.txt", Data: []byte("x")}, fault.CodePermissionDenied},
		{"a file in a read-only directory", backend.Op{Path: "sealed/f.txt", Data: []byte("x")}, fault.CodePermissionDenied},
		{"a removal in a read-only directory", backend.Op{Path: "sealed/f.txt", Remove: true}, fault.CodePermissionDenied},
		{"a removal of a missing file there", backend.Op{Path: "sealed/none.txt", Remove: true}, ""},
	} {
		err := fsys.CheckCommit(ctx, []backend.Op{tc.op})
		if got := fault.AsError(err); (tc.code == "") != (err == nil) || err != nil && got.Code != tc.code {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.code)
		}
	}
}

// A commit that made a directory holds only a shared lock of it, as any
// writer below it does: another writer of a file in that directory, while
// the commit is live, is not kept waiting by its journal. The directory's
// entry in the journal was taken for a dead writer's, and the write failed
// at once, LOCK_TIMEOUT "a transaction whose process died left nd/b.txt
// half changed", whatever its --lock-timeout.
func TestLiveCommitsMadeDirHoldsNoOneBelowIt(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	committer, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer committer.Close()
	other, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	unlock, err := committer.LockAll(ctx, []string{"nd/a.txt"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	saved := syscalls
	t.Cleanup(func() { syscalls = saved })
	var once sync.Once
	var otherErr error
	wrote := false
	// The journal names nd, made, and the commit is live, when a.txt is
	// put in its place.
	whileLive := func(n string) {
		if filepath.Base(n) == "a.txt" {
			once.Do(func() {
				unlockOther, err := other.LockAll(ctx, []string{"nd/b.txt"}, time.Second)
				if otherErr = err; err == nil {
					_, otherErr = other.WriteFile(ctx, "nd/b.txt", []byte("b\n"), backend.WriteOptions{IfAbsent: true})
					wrote = otherErr == nil
					unlockOther()
				}
			})
		}
	}
	syscalls.renameat = func(od int, o string, nd int, n string) error {
		whileLive(n)
		return saved.renameat(od, o, nd, n)
	}
	syscalls.renameExclusive = func(od int, o string, nd int, n string) error {
		whileLive(n)
		return saved.renameExclusive(od, o, nd, n)
	}
	if _, err := committer.Commit(ctx, []backend.Op{{Path: "nd/a.txt", Data: []byte("a\n"), Write: backend.WriteOptions{IfAbsent: true}}}); err != nil {
		t.Fatalf("the commit: %v", err)
	}
	if !wrote {
		t.Fatalf("a write below the directory a live commit made: %v; want it written", otherErr)
	}
	for name, want := range map[string]string{"nd/a.txt": "a\n", "nd/b.txt": "b\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s holds %q; want %q", name, got, want)
		}
	}
}

// A sweep keeps the record of a dead writer's directory that is not empty
// while what fills it may still be swept: a live writer's temp file, or a
// directory whose own record stays; once those go, a later sweep removes
// it. A dead writer's temp file is swept there and then. Anything else in
// it (a user's file or directory, a file with a temp file's name that no
// record proves a writer's) makes it the user's: it stays, and so that no
// sweep looks at it again, its record goes.
func TestSweepDirRecordKeepsWhatASweepMayStillRemove(t *testing.T) {
	// temp adds a writer's temp file in d, and says how it dies.
	temp := func(t *testing.T, d string) (die func()) {
		name := tempName()
		rec, err := newTempRecord(filepath.Join(d, name))
		must(t, err)
		fd, err := unix.Open(filepath.Join(d, name), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		must(t, err)
		must(t, rec.bind(fd))
		unix.Close(fd)
		return func() { unix.Close(rec.fd) } // the kernel frees a killed writer's flock
	}
	// made makes the directory name in parent as a commit does, and says
	// how its writer dies.
	made := func(t *testing.T, parent, name string) (die func()) {
		pfd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		must(t, err)
		defer unix.Close(pfd)
		m := &madeDirs{}
		must(t, m.mkdir(pfd, name, filepath.Join(parent, name), name))
		return func() { unix.Close(m.dirs[0].rec.fd) }
	}
	// staged makes the directory name in parent as a commit does, its
	// writer killed before renaming it from its staging name.
	staged := func(t *testing.T, parent, name string) (die func()) {
		rec, err := newDirRecord(filepath.Join(parent, name))
		must(t, err)
		p := filepath.Join(parent, stagingDirName(rec.path))
		must(t, os.Mkdir(p, 0o777))
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		must(t, rec.bindIdentity(&st))
		return func() { unix.Close(rec.fd) }
	}
	dead := func(die func()) func() { die(); return nil }
	none := func(*testing.T, string) func() { return nil }
	for _, tc := range []struct {
		name string
		// fill fills d, and returns how the live writers in it die (nil
		// for none).
		fill func(t *testing.T, d string) func()
		// stays: d is there after the sweep; recorded: its record too.
		stays, recorded bool
		// late, when not nil, fills d once the sweep listed the records.
		late func(t *testing.T, d string)
	}{
		{"empty", none, false, false, nil},
		{"a dead writer's temp file", func(t *testing.T, d string) func() { return dead(temp(t, d)) }, false, false, nil},
		{"a live writer's temp file", temp, true, true, nil},
		{"a live writer's directory", func(t *testing.T, d string) func() { return made(t, d, "sub") }, true, true, nil},
		{"a dead writer's directory holding a live writer's temp file", func(t *testing.T, d string) func() {
			dead(made(t, d, "sub"))
			return temp(t, filepath.Join(d, "sub"))
		}, true, true, nil},
		{"a dead writer's empty directory", func(t *testing.T, d string) func() { return dead(made(t, d, "sub")) }, false, false, nil},
		{"a dead writer's directory made since the sweep listed the records", none, true, true, func(t *testing.T, d string) {
			dead(made(t, d, "sub"))
		}},
		{"a dead writer's directory at its staging name, made since the sweep listed the records", none, true, true, func(t *testing.T, d string) {
			dead(staged(t, d, "sub"))
		}},
		{"a user's file", func(t *testing.T, d string) func() {
			must(t, os.WriteFile(filepath.Join(d, "mine.txt"), nil, 0o644))
			return nil
		}, true, false, nil},
		{"a user's directory", func(t *testing.T, d string) func() {
			must(t, os.Mkdir(filepath.Join(d, "mine"), 0o755))
			return nil
		}, true, false, nil},
		{"a file with a temp file's name and no record", func(t *testing.T, d string) func() {
			must(t, os.WriteFile(filepath.Join(d, tempName()), nil, 0o644))
			return nil
		}, true, false, nil},
		{"a file that took a dead writer's temp file's name", func(t *testing.T, d string) func() {
			dead(temp(t, d))
			names, _ := filepath.Glob(filepath.Join(d, tempPrefix+"*"))
			must(t, os.WriteFile(filepath.Join(d, "mine.txt"), nil, 0o644)) // another inode
			must(t, os.Rename(filepath.Join(d, "mine.txt"), names[0]))
			return nil
		}, true, false, nil},
		{"a live writer's temp file beside a user's file", func(t *testing.T, d string) func() {
			must(t, os.WriteFile(filepath.Join(d, "mine.txt"), nil, 0o644))
			return temp(t, d)
		}, true, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv(StateDirEnv, state)
			root, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			d := filepath.Join(root, "d")
			dead(made(t, root, "d"))
			die := tc.fill(t, d)
			if die != nil {
				defer die()
			}
			records := filepath.Join(state, dirRecords)
			saved := syscalls.readDir
			t.Cleanup(func() { syscalls.readDir = saved })
			syscalls.readDir = func(name string) ([]os.DirEntry, error) {
				es, err := saved(name)
				if name == records && tc.late != nil {
					tc.late(t, d)
					tc.late = nil
				}
				return es, err
			}
			recorded := func() bool {
				rp, err := recordPath(dirRecords, mountTable(), d)
				must(t, err)
				names, _ := filepath.Glob(rp + "-*")
				return len(names) != 0
			}
			sweepDirRecords(records, "")
			_, err = os.Lstat(d)
			if stays := err == nil; stays != tc.stays || recorded() != tc.recorded {
				t.Fatalf("after a sweep, d stays %v and its record %v; want %v and %v", stays, recorded(), tc.stays, tc.recorded)
			}
			if !tc.recorded {
				return
			}
			if die != nil {
				die()
				die = nil
			}
			sweepDirRecords(records, "")
			if _, err := os.Lstat(d); err == nil || recorded() {
				t.Fatalf("once its writers died, a sweep left d (%v) or its record (%v)", err, recorded())
			}
		})
	}
}

// A sweep that finds the record directories empty keeps their stamps only
// when they prove a later change (backend.RacySlack): a record made in the same
// tick of the clock as their stat leaves them as they were, and would be
// skipped by every later request of the session. Nothing held
// sweepChanged to the rule (dropping stampsProve passed every test).
func TestASweepKeepsNoStampsTooRecent(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	for _, n := range recordDirNames {
		must(t, os.MkdirAll(filepath.Join(state, n), 0o700))
	}
	dir := t.TempDir()
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	fsys.SettleDead(context.Background())
	if fsys.swept.Load() != nil {
		t.Fatal("the stamps of record directories changed just now were kept: a record made in the same tick is never swept")
	}
	fsys.listings.now = func() time.Time { return time.Now().Add(time.Hour) }
	fsys.SettleDead(context.Background())
	if fsys.swept.Load() == nil {
		t.Fatal("stamps that prove a later change were not kept")
	}
}
