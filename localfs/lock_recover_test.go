package localfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// deadJournal writes a pending journal of entries in state, as a writer
// that died mid-commit leaves it (its flock free).
func deadJournal(t *testing.T, state, name string, entries []journalEntry) {
	t.Helper()
	d := filepath.Join(state, "journal")
	must(t, os.MkdirAll(d, 0o700))
	b, err := json.Marshal(entries)
	must(t, err)
	// Whole at once, as agentfs writes a journal: a recovery reading it
	// half written took it for one it could not finish.
	p := filepath.Join(d, name+journalPending)
	must(t, os.WriteFile(p+".partial", b, 0o600))
	must(t, os.Rename(p+".partial", p))
}

// stagedCommit is a.txt of dir as a commit leaves it before its journal
// is written: its new content staged at the name, the old kept as bk.
func stagedCommit(t *testing.T, dir string) (string, unix.Stat_t) {
	t.Helper()
	p := filepath.Join(dir, "a.txt")
	must(t, os.WriteFile(filepath.Join(dir, "bk"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(p, []byte("staged new\n"), 0o644))
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	return p, st
}

// deadCommit is stagedCommit with the journal of its writer, which died
// (journal "dead" in state); a recovery puts "old\n" back at the path.
func deadCommit(t *testing.T, dir, state string) string {
	t.Helper()
	p, st := stagedCommit(t, dir)
	deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "a.txt", Staged: ".agentfs-staged",
		StagedID: identity(&st), StagedStamp: stamp(&st), Backup: "bk"}})
	return p
}

func journalsLeft(t *testing.T, state string) int {
	names, _ := os.ReadDir(filepath.Join(state, "journal"))
	return len(names)
}

// recovering holds the dead journal as another process recovering it
// does: its recovery file, then its flock exclusive.
func recovering(t *testing.T, journal string) (release func()) {
	t.Helper()
	rec, err := lockRecoveryFile(journal + journalRecovering)
	must(t, err)
	fd, err := unix.Open(journal, unix.O_RDWR|unix.O_CLOEXEC, 0)
	must(t, err)
	must(t, unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB))
	return func() {
		unix.Close(fd)
		unix.Unlink(journal + journalRecovering)
		unix.Close(rec)
	}
}

// recoverDirs is a tree in a real directory (a journal records real
// paths) and a state directory of its own, set in the environment.
func recoverDirs(t *testing.T) (dir, state string) {
	t.Helper()
	state = t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	return dir, state
}

// newRecoverFS is recoverDirs' tree, opened.
func newRecoverFS(t *testing.T) (*FS, string, string) {
	dir, state := recoverDirs(t)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys, dir, state
}

// TestLockAllRecoversWithoutWaitingOnItself: a dead journal naming a file
// below a directory the mutation locks, or a hard link of its file, is
// recovered at once. Recovered under the mutation's own locks, it waited
// 2 s per journal for locks the process held through other descriptors
// (flock is per open file description), and recovered nothing.
func TestLockAllRecoversWithoutWaitingOnItself(t *testing.T) {
	for _, tc := range []struct {
		name, lock string
		journal    func(dir string) journalEntry
	}{
		{"a file below the directory locked", "sub", func(dir string) journalEntry {
			return journalEntry{Dir: filepath.Join(dir, "sub"), Name: "a.txt"}
		}},
		{"a hard link of the file locked", "a.txt", func(dir string) journalEntry {
			must(t, os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "h.txt")))
			return journalEntry{Dir: dir, Name: "h.txt"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir, state := newRecoverFS(t)
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "sub/a.txt"), []byte("a"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644))
			e := tc.journal(dir)
			for _, n := range []string{"j1", "j2", "j3"} {
				deadJournal(t, state, n, []journalEntry{e})
			}
			lockAtOnce(t, fsys, tc.lock, 30*time.Second)
			if n := journalsLeft(t, state); n != 0 {
				t.Errorf("%d journals left", n)
			}
		})
	}
}

// TestLockAllRecoversAWriterThatDiedMeanwhile: a writer that died while
// this mutation waited for its locks is undone before the mutation goes
// on, and the mutation then holds the data lock of the file now at the
// path. Undone under the mutation's locks, the old file was renamed back
// over the one it had locked, so another writer could change it at once.
func TestLockAllRecoversAWriterThatDiedMeanwhile(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	p, st := stagedCommit(t, dir)
	orig := flockData
	t.Cleanup(func() { flockData = orig })
	died := false
	flockData = func(ctx context.Context, fd, how int, deadline time.Time) error {
		if !died {
			died = true // the writer whose lock this one waited for dies
			deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "a.txt", Staged: ".agentfs-staged",
				StagedID: identity(&st), StagedStamp: stamp(&st), Backup: "bk"}})
		}
		return orig(ctx, fd, how, deadline)
	}
	unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 5*time.Second)
	must(t, err)
	defer unlock()
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("a.txt is %q: the dead writer's change was not undone", b)
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Fatalf("the file at a.txt is not locked by the mutation: flock %v", err)
	}
}

// TestDataLockOfAFileReplacedAtEveryTry: a file another writer replaces at
// every try is tried again after a pause, and the wait ends with the
// caller's context: the order was made again in a busy loop (10,000 tries
// in 2 s) that no cancellation stopped. Replaced once, a file is locked
// even with no time to wait.
func TestDataLockOfAFileReplacedAtEveryTry(t *testing.T) {
	fsys, dir, _ := newRecoverFS(t)
	p := filepath.Join(dir, "a.txt")
	must(t, os.WriteFile(p, []byte("a"), 0o644))
	orig := flockData
	t.Cleanup(func() { flockData = orig })
	tries, replaceUpTo := 0, 1<<30
	flockData = func(ctx context.Context, fd, how int, deadline time.Time) error {
		tries++
		err := orig(ctx, fd, how, deadline)
		if tries <= replaceUpTo {
			must(t, os.WriteFile(p+".new", []byte("b"), 0o644))
			must(t, os.Rename(p+".new", p))
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := fsys.LockAll(ctx, []string{"a.txt"}, 10*time.Second)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInterrupted || time.Since(start) > 2*time.Second || tries > 50 {
		t.Fatalf("replaced at every try, cancelled at 50 ms: %v after %v and %d tries", err, time.Since(start), tries)
	}
	tries, replaceUpTo = 0, 1
	unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 0)
	if err != nil {
		t.Fatalf("replaced once, no time to wait: %v", err)
	}
	unlock()
}

// TestLockAllNeverOnAHalfDoneCommit: mutations waiting for a writer that
// dies mid-commit each see its files undone once they hold their locks.
// The first to hold them let them go to recover, and while its recovery
// waited for them, another took them: the journal, flocked by the
// recovery, looked like a live commit's, and it read the uncommitted file.
func TestLockAllNeverOnAHalfDoneCommit(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	p := filepath.Join(dir, "a.txt")
	for round := range 20 {
		must(t, os.WriteFile(p, []byte("old\n"), 0o644))
		holder, err := fsys.LockAll(context.Background(), []string{"a.txt"}, time.Second)
		must(t, err)
		const waiters = 4
		seen := make(chan string, waiters)
		waiting := make(chan struct{}, waiters)
		for range waiters {
			go func() {
				waiting <- struct{}{}
				unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 10*time.Second)
				if err != nil {
					seen <- err.Error()
					return
				}
				b, _ := os.ReadFile(p)
				unlock()
				seen <- string(b)
			}()
		}
		for range waiters {
			<-waiting
		}
		// The holder's commit dies half done: the old file linked at its
		// backup name, the staged one renamed over it, the journal left.
		must(t, os.Link(p, filepath.Join(dir, "bk")))
		must(t, os.WriteFile(p+".new", []byte("uncommitted\n"), 0o644))
		must(t, os.Rename(p+".new", p))
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "a.txt", Staged: ".agentfs-staged",
			StagedID: identity(&st), StagedStamp: stamp(&st), Backup: "bk"}})
		holder()
		for range waiters {
			if got := <-seen; got != "old\n" {
				t.Fatalf("round %d: a mutation holding the locks saw %q", round, got)
			}
		}
	}
}

// TestLockAllRefusesWhatCannotBeRecovered: a dead commit of X and Y that
// cannot be undone (another process holds Y) refuses a mutation of X with
// LOCK_TIMEOUT: it went on after its tries, and changed the uncommitted X,
// which the rollback then kept beside the old Y.
func TestLockAllRefusesWhatCannotBeRecovered(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
	must(t, os.WriteFile(filepath.Join(dir, "bkx"), []byte("old x\n"), 0o644))
	must(t, os.WriteFile(x, []byte("uncommitted x\n"), 0o644))
	must(t, os.WriteFile(y, []byte("old y\n"), 0o644))
	var st unix.Stat_t
	must(t, unix.Lstat(x, &st))
	deadJournal(t, state, "dead", []journalEntry{
		{Dir: dir, Name: "x", Staged: ".agentfs-staged", StagedID: identity(&st), StagedStamp: stamp(&st), Backup: "bkx"},
		{Dir: dir, Name: "y"}})
	other, err := unix.Open(y, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(other)
	must(t, unix.Flock(other, unix.LOCK_EX)) // another process's lock on y
	_, err = fsys.LockAll(context.Background(), []string{"x"}, time.Second)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout {
		t.Fatalf("a mutation of x beside a dead commit it cannot undo: %v, want LOCK_TIMEOUT", err)
	}
	unix.Flock(other, unix.LOCK_UN)
	unlock, err := fsys.LockAll(context.Background(), []string{"x"}, time.Second)
	must(t, err)
	unlock()
	if b, _ := os.ReadFile(x); string(b) != "old x\n" {
		t.Fatalf("once y is free, x is %q", b)
	}
}

// TestLockAllGoesOnBesideAStuckJournal: a dead journal that its recovery
// cannot finish whatever it waits for (a moved tree's backup whose name
// was taken since) holds up no mutation of its paths: they failed
// LOCK_TIMEOUT, "another process holds some of its files", with none.
func TestLockAllGoesOnBesideAStuckJournal(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	must(t, os.MkdirAll(filepath.Join(dir, ".agentfs-bk1", "sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "src", "g.txt"), []byte("g"), 0o644))
	deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "src", Backup: ".agentfs-bk1", Tree: true}})
	unlock, err := fsys.LockAll(context.Background(), []string{"src/g.txt"}, time.Second)
	if err != nil {
		t.Fatalf("beside a journal no recovery can finish: %v", err)
	}
	unlock()
	if journalsLeft(t, state) != 1 {
		t.Fatal("the stuck journal went; it is left for a person")
	}
}

// TestRecoveryKeepsTheLockTimeout: a dead journal whose file a live
// process holds locked is waited for no longer than the caller's lock
// timeout, when the process starts (New) and before a mutation of another
// file: the recovery waited 2 s for it whatever the timeout, so a call
// with --lock-timeout 0s took 2 s per such journal.
func TestRecoveryKeepsTheLockTimeout(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	for _, n := range []string{"a.txt", "b.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
	unlockA, err := fsys.LockAll(context.Background(), []string{"a.txt"}, time.Second)
	must(t, err)
	held := sync.OnceFunc(unlockA)
	defer held()
	deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "a.txt"}})

	start := time.Now()
	other, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer other.Close()
	if el := time.Since(start); el > time.Second {
		t.Errorf("New with no lock timeout took %v", el)
	}
	lockAtOnce(t, other, "b.txt", 0)
	if n := journalsLeft(t, state); n != 1 {
		t.Errorf("%d journals left, want the one whose file is held", n)
	}
	held()
	lockAtOnce(t, other, "b.txt", 0)
	if n := journalsLeft(t, state); n != 0 {
		t.Errorf("%d journals left once the file is let go", n)
	}
}

// lockAtOnce locks path and lets it go, failing t when that took a second
// or more.
func lockAtOnce(t *testing.T, fsys *FS, path string, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	unlock, err := fsys.LockAll(context.Background(), []string{path}, timeout)
	must(t, err)
	unlock()
	if el := time.Since(start); el > time.Second {
		t.Errorf("LockAll of %s (timeout %v) took %v", path, timeout, el)
	}
}

// A call that finds another process recovering a dead journal waits for
// that recovery before it reads: it took the held flock for a live
// commit's, went on, and read the files of the dead commit, which the
// recovery then put back (a second grep right after a crash counted 188
// files of a replace that never committed).
func TestReaderWaitsForAnotherProcesssRecovery(t *testing.T) {
	dir, state := recoverDirs(t)
	p := deadCommit(t, dir, state)
	// Another process has begun its recovery: it holds the recovery
	// file's flock, then the journal's.
	journal := filepath.Join(state, "journal", "dead"+journalPending)
	rec, err := unix.Open(journal+journalRecovering, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	must(t, err)
	must(t, unix.Flock(rec, unix.LOCK_EX))
	jfd, err := unix.Open(journal, unix.O_RDWR|unix.O_CLOEXEC, 0)
	must(t, err)
	must(t, unix.Flock(jfd, unix.LOCK_EX))
	var once sync.Once
	lockWaitHook = func() {
		// The reader waits: that process ends without finishing, and
		// the reader recovers the journal itself.
		once.Do(func() { unix.Close(jfd); unix.Close(rec) })
	}
	t.Cleanup(func() { lockWaitHook = nil })
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, LockTimeout: 30 * time.Second})
	must(t, err)
	defer fsys.Close()
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("a reader started during another's recovery went on with %q on disk, not the file put back", b)
	}
}

// A writer that died after New (a batch or MCP session's start) is
// recovered by SettleDead, which such a session calls before each request:
// its reads saw the dead commit's files until a mutation recovered them.
func TestSettleDeadRecoversAWriterThatDiedSinceNew(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	p := deadCommit(t, dir, state)
	fsys.SettleDead(context.Background())
	if b, _ := os.ReadFile(p); string(b) != "old\n" || journalsLeft(t, state) != 0 {
		t.Fatalf("after SettleDead: %q on disk, %d journals left; want the file put back", b, journalsLeft(t, state))
	}
}

// A recovery file left by a process killed during its recovery goes with
// the next sweep once its journal is gone; one still held stays.
func TestSweepRemovesLeftRecoveryFiles(t *testing.T) {
	state := t.TempDir()
	d := filepath.Join(state, "journal")
	must(t, os.MkdirAll(d, 0o700))
	left := filepath.Join(d, "gone"+journalPending+journalRecovering)
	must(t, os.WriteFile(left, nil, 0o600))
	held := filepath.Join(d, "held"+journalPending+journalRecovering)
	must(t, os.WriteFile(held, nil, 0o600))
	fd, err := lockRecoveryFile(held)
	must(t, err)
	defer unix.Close(fd)
	sweepRecords(state)
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("a left recovery file stays: %v", err)
	}
	if _, err := os.Lstat(held); err != nil {
		t.Errorf("a held recovery file was removed: %v", err)
	}
}

// A dead writer's journal of other roots is recovered under the data lock
// of its file too, by its name, as the recovery acts on it: while another
// process holds that lock, the file is left as it is.
func TestRecoveryOfOtherRootsTakesTheDataLock(t *testing.T) {
	fsys, _, state := newRecoverFS(t)
	other, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	p := deadCommit(t, other, state)
	held, err := os.Open(p)
	must(t, err)
	must(t, unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	unlock, err := fsys.LockAll(context.Background(), []string{"x"}, 50*time.Millisecond)
	must(t, err)
	unlock()
	if b, _ := os.ReadFile(p); string(b) != "staged new\n" {
		t.Fatalf("%s is %q: recovered while another process held its lock", p, b)
	}
	held.Close()
	unlock, err = fsys.LockAll(context.Background(), []string{"x"}, 5*time.Second)
	must(t, err)
	unlock()
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("%s is %q once its lock was let go, want it recovered", p, b)
	}
}

// A recovery that cannot run, its state directory full or the process out
// of descriptors when it makes the journal's recovery file or its lock
// files, refuses the journal's files until one does, with the cause: it
// let reads answer the dead commit's content, never committed, exit 0.
// Only a recovery file another process holds means another recovers it.
func TestRecoveryThatCannotRunRefusesReads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fails  string // the suffix of the files whose creation fails
		err    error
		code   fault.Code
		inHint string
	}{
		{"recovery file, no space", journalRecovering, unix.ENOSPC, fault.CodeNoSpace, "free some space"},
		{"recovery file, no inode", journalRecovering, unix.EDQUOT, fault.CodeNoSpace, "free some space"},
		{"recovery file, no descriptor", journalRecovering, unix.EMFILE, fault.CodeIOError, "ulimit -n"},
		{"lock files, no space", ".lock", unix.ENOSPC, fault.CodeNoSpace, "free some space"},
		{"lock files, no descriptor", ".lock", unix.EMFILE, fault.CodeIOError, "ulimit -n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, state := recoverDirs(t)
			p := deadCommit(t, dir, state)
			restore := failOpenLock(t, tc.fails, tc.err)
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			ctx := context.Background()
			refused := func(what string, err error) {
				t.Helper()
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != tc.code || !strings.Contains(fe.Hint, tc.inHint) || fe.Details["journal"] == nil {
					t.Errorf("%s while its recovery cannot run: %v, want %s naming the journal, hint with %q", what, err, tc.code, tc.inHint)
				}
			}
			r, err := fsys.Open(ctx, "a.txt")
			if err == nil {
				r.Close()
			}
			refused("open a.txt", err)
			_, err = fsys.ReadDir(ctx, ".", 0, 10)
			refused("ReadDir .", err)
			if journalsLeft(t, state) != 1 {
				t.Fatalf("the journal went without a recovery")
			}
			restore()
			fsys.SettleDead(ctx)
			if b, err := os.ReadFile(p); err != nil || string(b) != "old\n" {
				t.Errorf("a.txt once the recovery runs: %q, %v, want it undone", b, err)
			}
			r, err = fsys.Open(ctx, "a.txt")
			if err != nil {
				t.Errorf("open a.txt once recovered: %v", err)
			} else {
				r.Close()
			}
		})
	}
}

// The refusal of a file a dead commit may have left uncommitted, whose
// recovery cannot run, says to mend the state directory that holds the
// journal, which it names, and never to set AGENTFS_STATE_DIR elsewhere:
// then only that other directory is looked into, the journal never again,
// and the change it could undo stays for good, read as committed.
func TestUncommittedHintKeepsTheJournalsStateDir(t *testing.T) {
	state := "/s/state"
	journal := state + "/journal/dead" + journalPending
	for _, tc := range []struct {
		journal string
		cause   error
		code    fault.Code
		inHint  string
	}{
		{journal, unix.ENOSPC, fault.CodeNoSpace, "free some space"},
		{journal, unix.EDQUOT, fault.CodeNoSpace, "free some space"},
		{journal, unix.EROFS, fault.CodeReadOnly, "read-write"},
		{journal, unix.EACCES, fault.CodePermissionDenied, "chmod 700"},
		{journal, unix.EPERM, fault.CodePermissionDenied, "chmod 700"},
		{journal, unix.EMFILE, fault.CodeIOError, "ulimit -n"},
		{journal, unix.EIO, fault.CodeIOError, "check"},
		{state + "/journal", unix.EIO, fault.CodeIOError, "check"},
	} {
		t.Run(tc.cause.Error(), func(t *testing.T) {
			e := uncommittedErr("a.txt", tc.journal, tc.cause)
			if e.Code != tc.code || !strings.Contains(e.Hint, tc.inHint) {
				t.Errorf("%s, hint %q; want %s, hint with %q", e.Code, e.Hint, tc.code, tc.inHint)
			}
			if !strings.Contains(e.Hint, state) || strings.Contains(e.Hint, "set "+StateDirEnv) {
				t.Errorf("hint %q: want it to name %s and not to move %s", e.Hint, state, StateDirEnv)
			}
			if !isJournal(tc.journal) && !strings.Contains(e.Message, "cannot be listed") {
				t.Errorf("message %q: want it to say the journals cannot be listed", e.Message)
			}
		})
	}
}

// A journal naming the paths a mutation locked whose flock is held is a
// live commit's, of a writer that takes other lock files (another
// candidate state directory's environment), not a dead one's: the
// mutation waits for it, within its lock timeout, and goes on once it
// ended; or it is LOCK_TIMEOUT saying another process kept the path, not
// "a transaction whose process died", given at once.
func TestLiveCommitOfAnotherEnvironmentIsWaitedFor(t *testing.T) {
	for _, ends := range []bool{false, true} {
		t.Run(fmt.Sprint("ends ", ends), func(t *testing.T) {
			fsys, dir, state := newRecoverFS(t)
			must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
			deadJournal(t, state, "live", []journalEntry{{Dir: dir, Name: "a.txt", Backup: "bk"}})
			j := filepath.Join(state, "journal", "live"+journalPending)
			held, err := unix.Open(j, unix.O_RDWR|unix.O_CLOEXEC, 0)
			must(t, err)
			must(t, unix.Flock(held, unix.LOCK_EX))
			defer func() {
				if held >= 0 {
					unix.Close(held)
				}
			}()
			if ends {
				// The commit ends as a writer's does: its journal
				// unlinked, then its flock let go.
				lockWaitHook = func() {
					if held >= 0 {
						os.Remove(j)
						unix.Close(held)
						held = -1
					}
				}
				defer func() { lockWaitHook = nil }()
			}
			start := time.Now()
			unlock, err := fsys.Lock(context.Background(), "a.txt", 200*time.Millisecond)
			if ends {
				if err != nil {
					t.Fatalf("lock once the live commit ended: %v", err)
				}
				unlock()
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.CodeLockTimeout || strings.Contains(fe.Message, "died") || time.Since(start) < 200*time.Millisecond {
				t.Fatalf("lock while a live commit holds its journal: %v after %v, want LOCK_TIMEOUT after the timeout, not a dead writer's", err, time.Since(start))
			}
		})
	}
}

// A journal another user may have written is never recovered, even in a
// private state directory: one that others could write to once (the
// NOT_CONFIGURED refusal's hint says to chmod 700 it) may hold a journal
// they planted, and its recovery, run as this user, removed or renamed
// this user's files as it said (as nobody, a journal whose staged file is
// the user's secret.txt: secret.txt removed by the next read once the
// directory was chmod'ed 700). A journal of another user, or a journal
// directory that is not private, refuses every read and mutation under the
// roots, naming it, and nothing is changed.
func TestForeignJournalIsNeverRecovered(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chowns a journal to another user: run the tests as root")
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, journalDir, journal string)
	}{
		{"a journal of another user", func(t *testing.T, _, journal string) {
			must(t, os.Chown(journal, 65534, 65534))
		}},
		{"a journal directory of another user", func(t *testing.T, d, _ string) {
			must(t, os.Chown(d, 65534, 65534))
		}},
		{"a journal directory others can write to", func(t *testing.T, d, _ string) {
			must(t, os.Chmod(d, 0o777))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, state := recoverDirs(t)
			p := deadCommit(t, dir, state)
			must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("x\n"), 0o644))
			d := filepath.Join(state, "journal")
			tc.plant(t, d, filepath.Join(d, "dead"+journalPending))
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			ctx := context.Background()
			refused := func(what string, err error) {
				t.Helper()
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != fault.CodeNotConfigured || fe.Details["journal"] == nil {
					t.Errorf("%s beside a journal another user may have written: %v, want NOT_CONFIGURED naming it", what, err)
				} else if mended := tc.name == "a journal directory others can write to"; strings.Contains(fe.Hint, "chmod 700") != mended || strings.Contains(fe.Hint, "recovers the transaction") != mended {
					// chmod 700 mends only a directory of this user's, and
					// then each journal in it is checked again.
					t.Errorf("%s: hint %q, want chmod 700 and a recovery promised: %v", what, fe.Hint, mended)
				}
			}
			openAndLock(ctx, fsys, refused)
			if b, err := os.ReadFile(p); err != nil || string(b) != "staged new\n" {
				t.Errorf("a.txt beside a journal another user may have written: %q, %v, want it as it was", b, err)
			}
			if journalsLeft(t, state) != 1 {
				t.Errorf("the journal another user may have written went")
			}
		})
	}
}

// A dead journal's flock held a moment by another process's look (its
// probe of the journal, or a check for a live commit) as its recovery
// takes it is waited for: passed over, that pass served the dead
// commit's files as committed, exit 0.
func TestRecoveryWaitsForAProbeOfTheJournal(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	p := deadCommit(t, dir, state)
	journal := filepath.Join(state, "journal", "dead"+journalPending)
	probe := -1
	saved := syscalls.openLock
	syscalls.openLock = func(path string, mode int, perm uint32) (int, error) {
		if strings.HasSuffix(path, journalRecovering) && probe == -1 {
			fd, err := unix.Open(journal, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			must(t, err)
			must(t, unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB))
			probe = fd
		}
		return saved(path, mode, perm)
	}
	lockWaitHook = func() {
		if probe >= 0 {
			unix.Close(probe)
			probe = -2
		}
	}
	t.Cleanup(func() { syscalls.openLock, lockWaitHook = saved, nil })
	fsys.SettleDead(context.Background())
	if probe == -1 {
		t.Fatal("the journal was never probed as its recovery took it: the test proves nothing")
	}
	if probe >= 0 {
		unix.Close(probe)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" || journalsLeft(t, state) != 0 {
		t.Fatalf("after a recovery that met a probe: %q on disk, %d journals left; want the file put back", b, journalsLeft(t, state))
	}
}

// A journal directory that cannot be listed, or a dead journal that
// cannot be read (the process out of descriptors, a failing disk), may
// hold or name any file: every read and mutation under the roots is
// refused with the cause until a call lists and reads it. The listing's
// error was dropped; the journal's read was left with the cause but its
// files taken from the journal, read again and failing again: none was
// refused, and reads answered the dead commit's content, never
// committed, with exit 0, and an edit built on it.
func TestJournalsThatCannotBeReadRefuseAll(t *testing.T) {
	for _, tc := range []struct {
		errno unix.Errno
		// list: the journal directory's listing fails, else the
		// journal's read.
		list   bool
		inHint string
	}{
		{unix.EMFILE, true, "ulimit -n"},
		{unix.EIO, true, "state directory"},
		{unix.EMFILE, false, ""},
		{unix.EIO, false, ""},
	} {
		t.Run(fmt.Sprintf("list=%v/%s", tc.list, tc.errno.Error()), func(t *testing.T) {
			dir, state := recoverDirs(t)
			p := deadCommit(t, dir, state)
			must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("x\n"), 0o644))
			saved := syscalls
			t.Cleanup(func() { syscalls = saved })
			journalDir := filepath.Join(state, "journal")
			if tc.list {
				syscalls.readDir = func(name string) ([]os.DirEntry, error) {
					if name == journalDir {
						return nil, &os.PathError{Op: "open", Path: name, Err: tc.errno}
					}
					return saved.readDir(name)
				}
			} else {
				syscalls.readFile = func(name string) ([]byte, error) {
					if strings.HasSuffix(name, journalPending) {
						return nil, &os.PathError{Op: "read", Path: name, Err: tc.errno}
					}
					return saved.readFile(name)
				}
			}
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			ctx := context.Background()
			refused := func(what string, err error) {
				t.Helper()
				var fe *fault.Error
				named := false
				if errors.As(err, &fe) {
					j, _ := fe.Details["journal"].(string)
					named = tc.list && j == journalDir || !tc.list && strings.HasPrefix(j, journalDir+"/")
				}
				if !named || fe.Code != fault.CodeIOError || !strings.Contains(fe.Hint, tc.inHint) {
					t.Errorf("%s while the journals cannot be read: %v, want IO_ERROR naming the journal (directory), hint with %q", what, err, tc.inHint)
				}
			}
			openAndLock(ctx, fsys, refused)
			_, err = fsys.ReadDir(ctx, ".", 0, 10)
			refused("ReadDir .", err)
			syscalls = saved
			fsys.SettleDead(ctx)
			if b, err := os.ReadFile(p); err != nil || string(b) != "old\n" {
				t.Errorf("a.txt once the journals are read: %q, %v, want it undone", b, err)
			}
			r, err := fsys.Open(ctx, "other.txt")
			if err != nil {
				t.Errorf("open other.txt once recovered: %v", err)
			} else {
				r.Close()
			}
		})
	}
}

// openAndLock opens and locks a.txt and other.txt of fsys, a file of a
// dead commit and one of none, handing refused each error.
func openAndLock(ctx context.Context, fsys *FS, refused func(what string, err error)) {
	for _, name := range []string{"a.txt", "other.txt"} {
		r, err := fsys.Open(ctx, name)
		if err == nil {
			r.Close()
		}
		refused("open "+name, err)
		unlock, err := fsys.Lock(ctx, name, time.Second)
		if err == nil {
			unlock()
		}
		refused("lock "+name, err)
	}
}

// TestTornJournals: a pending journal that is not whole JSON (its writer
// lost power before the journal's sync, before any file changed) is
// removed by the first recovery, which every later call read again; a
// committed one, whose commit changed files no one can now name, is left
// for a person.
func TestTornJournals(t *testing.T) {
	fsys, _, state := newRecoverFS(t)
	d := filepath.Join(state, "journal")
	must(t, os.MkdirAll(d, 0o700))
	torn := []byte(`[{"dir":"/x","na`)
	pending, committed := filepath.Join(d, "torn"+journalPending), filepath.Join(d, "torn2"+journalCommitted)
	must(t, os.WriteFile(pending, torn, 0o600))
	must(t, os.WriteFile(committed, torn, 0o600))
	ctx := context.Background()
	unlock, err := fsys.Lock(ctx, "a.txt", time.Second)
	if err != nil {
		t.Fatalf("lock beside torn journals: %v", err)
	}
	unlock()
	if _, err := os.Lstat(pending); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the torn pending journal after a recovery: %v, want it removed", err)
	}
	if _, err := os.Lstat(committed); err != nil {
		t.Errorf("the torn committed journal after a recovery: %v, want it kept", err)
	}
}

// TestJournalOfANewerFormIsLeft: a pending journal that is whole JSON but
// not of the form this agentfs writes (a newer agentfs's, beside this one
// or before a downgrade) is left for the agentfs that wrote it, and the
// files below the workspace are refused NOT_SUPPORTED naming it. Taken
// for torn, it was removed, and the files its dead commit changed stayed
// half changed for good.
func TestJournalOfANewerFormIsLeft(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	d := filepath.Join(state, "journal")
	must(t, os.MkdirAll(d, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o600))
	newer := fmt.Appendf(nil, `{"version":2,"entries":[{"dir":%q,"name":"a.txt"}]}`, dir)
	pending := filepath.Join(d, "newer"+journalPending)
	must(t, os.WriteFile(pending, newer, 0o600))
	unlock, err := fsys.Lock(context.Background(), "a.txt", time.Second)
	if err == nil {
		unlock()
	}
	if fe := fault.AsError(err); fe == nil || fe.Code != fault.CodeNotSupported || !strings.Contains(fe.Hint, "--recover") || !strings.Contains(fe.Hint, "then remove it") || fe.Details["journal"] != pending {
		t.Errorf("lock beside a newer journal: %v (hint %q), want NOT_SUPPORTED naming the journal, its hint to recover it or, without that agentfs, to undo it by hand and remove it", err, fe.Hint)
	}
	if got, err := os.ReadFile(pending); err != nil || !bytes.Equal(got, newer) {
		t.Errorf("the newer journal after a recovery: %q, %v; want it kept", got, err)
	}
}

// TestJournalCutShortFailsTheCommit: a journal whose write stops short (a
// disk filling up; here a file size limit) fails the transaction before it
// changes anything. Taken as whole, it was renamed into place and its
// commit went on, with a journal no recovery can read. The limit is set in
// a child process (TestJournalCutShortChild): set in this one, it cut the
// test framework's own log, and the package failed (CI run 26).
func TestJournalCutShortFailsTheCommit(t *testing.T) {
	_, state := recoverDirs(t)
	must(t, os.MkdirAll(filepath.Join(state, "journal"), 0o700))
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalCutShortChild$")
	cmd.Env = append(os.Environ(), cutShortEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "journal refused:") {
		t.Fatalf("newJournal cut at 64 bytes: %v\n%s", err, out)
	}
	if n := journalsLeft(t, state); n != 0 {
		t.Errorf("%d files left in the journal directory after a failed journal write, want none", n)
	}
}

// cutShortEnv makes TestJournalCutShortChild run.
const cutShortEnv = "AGENTFS_TEST_JOURNAL_CUT_SHORT"

// TestJournalCutShortChild is the child of TestJournalCutShortFailsTheCommit:
// it writes a journal under a file size limit of 64 bytes, and says
// "journal refused: ERROR" when newJournal fails.
func TestJournalCutShortChild(t *testing.T) {
	if os.Getenv(cutShortEnv) == "" {
		t.Skip("only a re-executed helper process runs this")
	}
	entries := []journalEntry{{Dir: "/" + strings.Repeat("d", 200), Name: "a.txt"}}
	var saved unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &saved))
	must(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 64, Max: saved.Max}))
	j, err := newJournal(entries)
	must(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &saved))
	if err == nil {
		b, _ := os.ReadFile(j.path)
		j.remove()
		j.close()
		t.Fatalf("newJournal cut at 64 bytes succeeded, journal %q", b)
	}
	fmt.Println("journal refused:", err)
}

// TestCommittedJournalWhoseRecoveryCannotRunRefusesNothing: a committed
// journal's recovery only removes backups, so its files hold what the
// caller was told, and a mutation of them goes on while the recovery
// cannot run (no space for its recovery file), as a read does. It was
// refused as a change "never committed".
func TestCommittedJournalWhoseRecoveryCannotRunRefusesNothing(t *testing.T) {
	dir, state := recoverDirs(t)
	p := filepath.Join(dir, "a.txt")
	must(t, os.WriteFile(p, []byte("new\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "bk"), []byte("old\n"), 0o644))
	deadJournal(t, state, "dead", []journalEntry{{Dir: dir, Name: "a.txt", Backup: "bk"}})
	j := filepath.Join(state, "journal", "dead")
	must(t, os.Rename(j+journalPending, j+journalCommitted))
	restore := failOpenLock(t, journalRecovering, unix.ENOSPC)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	ctx := context.Background()
	unlock, err := fsys.Lock(ctx, "a.txt", time.Second)
	if err != nil {
		t.Fatalf("lock a.txt of a committed journal whose recovery cannot run: %v, want it locked", err)
	}
	unlock()
	r, err := fsys.Open(ctx, "a.txt")
	if err != nil {
		t.Fatalf("open a.txt of a committed journal whose recovery cannot run: %v", err)
	}
	r.Close()
	restore()
	fsys.SettleDead(ctx)
	if _, err := os.Lstat(filepath.Join(dir, "bk")); !errors.Is(err, os.ErrNotExist) || journalsLeft(t, state) != 0 {
		t.Errorf("once the recovery runs: backup %v, %d journals left, want both gone", err, journalsLeft(t, state))
	}
}

// failOpenLock makes the state files whose names end in suffix fail to
// open with err, as a full state directory or a process out of
// descriptors does, until restore (or the test's end).
func failOpenLock(t *testing.T, suffix string, err error) (restore func()) {
	saved := syscalls
	t.Cleanup(func() { syscalls = saved })
	syscalls.openLock = func(path string, mode int, perm uint32) (int, error) {
		if strings.HasSuffix(path, suffix) {
			return -1, err
		}
		return saved.openLock(path, mode, perm)
	}
	return func() { syscalls = saved }
}

// A dead journal that another process is looking at (its shared probe,
// as waitLiveCommit and every look take it) is recovered by a mutation
// and by a reader's SettleDead all the same. The look took the journal's
// flock exclusive: it failed against another's probe, took the journal
// for a live commit's and passed it over, a reader then read the dead
// commit's file and a mutation, after three such passes, failed
// LOCK_TIMEOUT "a transaction whose process died" (CI, 1 run in 2).
func TestAProbeOfADeadJournalIsNoLiveCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		settle func(fsys *FS) error
	}{
		{"a mutation", func(fsys *FS) error {
			unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 5*time.Second)
			if err == nil {
				unlock()
			}
			return err
		}},
		{"a reader", func(fsys *FS) error {
			fsys.SettleDead(context.Background())
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir, state := newRecoverFS(t)
			p := deadCommit(t, dir, state)
			probe, err := unix.Open(filepath.Join(state, "journal", "dead"+journalPending), unix.O_RDONLY|unix.O_CLOEXEC, 0)
			must(t, err)
			must(t, unix.Flock(probe, unix.LOCK_SH|unix.LOCK_NB))
			// The other process's look ends as this one's recovery
			// waits for the journal.
			lockWaitHook = func() {
				if probe >= 0 {
					unix.Close(probe)
					probe = -1
				}
			}
			t.Cleanup(func() {
				lockWaitHook = nil
				if probe >= 0 {
					unix.Close(probe)
				}
			})
			if err := tc.settle(fsys); err != nil {
				t.Fatalf("beside another process's look at a dead journal: %v", err)
			}
			if b, _ := os.ReadFile(p); string(b) != "old\n" || journalsLeft(t, state) != 0 {
				t.Fatalf("%q on disk, %d journals left; want the file put back", b, journalsLeft(t, state))
			}
		})
	}
}

// LockAll gives up on a dead journal whose recovery it waited for three
// times, never on three journals of writers that died one after another.
func TestJournalWaitsCountEachJournal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		journals []string
		giveUp   int // the wait that gives up, 0 for none
	}{
		{"one journal", []string{"j1", "j1", "j1"}, 3},
		{"three writers dead in a row", []string{"j1", "j2", "j3"}, 0},
		{"one back among others", []string{"j1", "j2", "j1", "j3", "j1"}, 5},
	} {
		w := journalWaits{}
		got := 0
		for k, j := range tc.journals {
			if w.again(j) && got == 0 {
				got = k + 1
			}
		}
		if got != tc.giveUp {
			t.Errorf("%s: gave up at wait %d, want %d", tc.name, got, tc.giveUp)
		}
	}
}

// A read beside a dead commit whose recovery cannot run within the lock
// timeout (another process holds the files' locks, or recovers it and is
// not done) is refused, LOCK_TIMEOUT, until a call recovers it. It read
// the dead commit's content, never committed, exit 0 (hunt35: 33 of 60
// readers with --lock-timeout 0, and any reader once a live process held
// the locks for 2 s).
func TestReadBesideARecoveryNotDoneIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(t *testing.T, dir, journal string) (release func())
	}{
		{"its file locked by another process", func(t *testing.T, dir, journal string) func() {
			held, err := os.Open(filepath.Join(dir, "a.txt"))
			must(t, err)
			must(t, unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB)) // its data lock
			return func() { held.Close() }
		}},
		{"another process recovering it", func(t *testing.T, dir, journal string) func() {
			return recovering(t, journal)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, state := recoverDirs(t)
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, LockTimeout: 50 * time.Millisecond})
			must(t, err)
			defer fsys.Close()
			p := deadCommit(t, dir, state)
			release := tc.hold(t, dir, filepath.Join(state, "journal", "dead"+journalPending))
			read := func() (string, error) {
				fsys.SettleDead(context.Background())
				r, err := fsys.Open(context.Background(), "a.txt")
				if err != nil {
					return "", err
				}
				defer r.Close()
				b, err := io.ReadAll(r)
				return string(b), err
			}
			got, err := read()
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout {
				release()
				t.Fatalf("a read while the dead commit cannot be recovered: %q, %v; want LOCK_TIMEOUT", got, err)
			}
			release()
			if got, err := read(); err != nil || got != "old\n" {
				t.Fatalf("once it can be recovered: %q, %v; want the file put back", got, err)
			}
			if b, _ := os.ReadFile(p); string(b) != "old\n" {
				t.Fatalf("on disk %q", b)
			}
		})
	}
}

// A look that finds a dead journal held by another process's recovery,
// which lets it go (its locks not had: the journal left) between the
// look's probe and its check of the recovery file, looks again: taken for
// a live commit's, the journal was neither recovered nor refused, and a
// reader read the dead commit's content, exit 0 (6 of 240 readers with
// --lock-timeout 0 beside a process holding the files' locks).
func TestARecoveryEndingAfterTheProbeIsNoLiveCommit(t *testing.T) {
	_, dir, state := newRecoverFS(t)
	deadCommit(t, dir, state)
	journal := filepath.Join(state, "journal", "dead"+journalPending)
	release := recovering(t, journal)
	released := false
	relevant := func(string) bool {
		if !released { // the other recovery gives up now, as recoverHolding ends
			released = true
			release()
		}
		return true
	}
	visited := false
	deadJournals(context.Background(), []string{state}, time.Now().Add(time.Second), relevant, func(int, string, bool, error) {
		visited = true
	})
	if !visited {
		t.Fatal("the dead journal was passed over as a live commit's: neither recovered nor refused")
	}
}

// The look loop ends by its deadline however many recoveries of other
// processes it meets: each hand-off of the recovery file from one process
// to the next (a recovery let go for want of locks, the next one begun)
// sent it round again, past the deadline, for as long as they came.
func TestTheLookLoopEndsByItsDeadline(t *testing.T) {
	_, dir, state := newRecoverFS(t)
	deadCommit(t, dir, state)
	journal := filepath.Join(state, "journal", "dead"+journalPending)
	rec, err := lockRecoveryFile(journal + journalRecovering)
	must(t, err)
	handoffs := 0
	lockWaitHook = func() {
		// The recovery under way lets go, and another process's begins.
		handoffs++
		unix.Unlink(journal + journalRecovering)
		unix.Close(rec)
		if handoffs < 3000 {
			rec, err = lockRecoveryFile(journal + journalRecovering)
			must(t, err)
		}
	}
	t.Cleanup(func() { lockWaitHook = nil })
	deadline := time.Now().Add(50 * time.Millisecond)
	var got error
	deadJournals(context.Background(), []string{state}, deadline, func(string) bool { return true }, func(fd int, p string, committed bool, err error) {
		got = err
	})
	if late := time.Since(deadline); late > 500*time.Millisecond || !errors.Is(got, errRecoveryPending) {
		t.Fatalf("the look loop ended %v past its deadline, %d recoveries met, visited with %v; want it pending by the deadline", late, handoffs, got)
	}
}

// A recovery that cannot take the journal's flock in time (other
// processes' looks at it) has not run, as one that cannot take the files'
// locks: its files are refused LOCK_TIMEOUT, and it waits no longer than
// the caller's --lock-timeout. It waited 2 s whatever the timeout, and
// the timeout, as its cause, refused them IO_ERROR, telling to check the
// state directory's disk, and failed a mutation.
func TestARecoveryKeptFromItsJournalIsPending(t *testing.T) {
	dir, state := recoverDirs(t)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, LockTimeout: 50 * time.Millisecond})
	must(t, err)
	defer fsys.Close()
	deadCommit(t, dir, state)
	look, err := unix.Open(filepath.Join(state, "journal", "dead"+journalPending), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(look)
	must(t, unix.Flock(look, unix.LOCK_SH|unix.LOCK_NB))
	start := time.Now()
	fsys.SettleDead(context.Background())
	took := time.Since(start)
	_, err = fsys.Open(context.Background(), "a.txt")
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout || took > time.Second {
		t.Fatalf("a read beside a recovery kept from its journal: %v after %v; want LOCK_TIMEOUT within the lock timeout", err, took)
	}
}

// A mutation beside a dead commit whose recovery could not take the files'
// locks (another process held them past the recovery's wait) waits for it,
// as for any journal it meets, and goes on once the other process lets
// them go and the commit is undone: errRecoveryPending refuses reads only.
// Nothing held LockAll to it (failing at once with the refusal passed
// every test).
func TestAMutationWaitsForAPendingRecovery(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	p := deadCommit(t, dir, state)
	held, err := os.Open(p)
	must(t, err)
	must(t, unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB)) // its data lock, another process's
	go func() {
		time.Sleep(journalWait + 300*time.Millisecond) // past the recovery's wait
		held.Close()
	}()
	unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 5*time.Second)
	if err != nil {
		t.Fatalf("a mutation beside a recovery waiting for locks another process let go: %v", err)
	}
	unlock()
	if b, _ := os.ReadFile(p); string(b) != "old\n" || journalsLeft(t, state) != 0 {
		t.Fatalf("%q on disk, %d journals left; want the file put back", b, journalsLeft(t, state))
	}
}

// A call waits for one other process's recovery of a dead journal, and
// takes one turn itself; when a third process has begun another attempt
// by then (each let go for want of the files' locks), the journal is
// pending: its files refused, the others read at once. Waiting for every
// attempt in turn, 8 readers of a file the journal does not name took up
// to 16 s, 16 readers the whole lock timeout (revY2).
func TestACallWaitsForOneOtherRecoveryOnly(t *testing.T) {
	dir, state := recoverDirs(t)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, LockTimeout: 5 * time.Second})
	must(t, err)
	defer fsys.Close()
	deadCommit(t, dir, state)
	must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("other\n"), 0o644))
	journal := filepath.Join(state, "journal", "dead"+journalPending)
	first := recovering(t, journal)
	var second func()
	waits := 0
	lockWaitHook = func() {
		switch waits++; waits {
		case 1:
			first() // the first attempt ends as this call waits for it
		case 2:
			second() // waited for too: released, so the test ends
		}
	}
	saved := syscalls.openLock
	syscalls.openLock = func(path string, mode int, perm uint32) (int, error) {
		if strings.HasSuffix(path, journalRecovering) && waits == 1 && second == nil {
			syscalls.openLock = saved
			second = recovering(t, journal) // a third process begins its attempt first
		}
		return saved(path, mode, perm)
	}
	t.Cleanup(func() {
		lockWaitHook, syscalls.openLock = nil, saved
		if second != nil && waits < 2 {
			second()
		}
	})
	fsys.SettleDead(context.Background())
	if waits != 1 {
		t.Fatalf("the call waited for %d recoveries of the journal, want 1", waits)
	}
	if r, err := fsys.Open(context.Background(), "a.txt"); code(err) != fault.CodeLockTimeout {
		if err == nil {
			r.Close()
		}
		t.Fatalf("a.txt beside a pending recovery: %v, want LOCK_TIMEOUT", err)
	}
	r, err := fsys.Open(context.Background(), "other.txt")
	if err != nil {
		t.Fatalf("other.txt, which the journal does not name: %v", err)
	}
	r.Close()
}
