package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// The search for a moved directory never opens a mount point: opened, its
// file system is entered (an automount triggered, a hung network file
// system waited on with no bound) before its device says it is another.
func TestSeekDirOpensNoMountPoint(t *testing.T) {
	needRoot(t)
	parent := t.TempDir()
	mnt := filepath.Join(parent, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	must(t, os.Mkdir(filepath.Join(parent, "dir"), 0o755))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount is not permitted here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	must(t, err)
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, mnt, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	must(t, unix.Stat(parent, &st))
	// A directory renamed, then removed: sought in each directory beside
	// its old name, mnt among them.
	e := journalEntry{Dir: filepath.Join(parent, "gone"), DirIdentity: strconv.FormatUint(uint64(st.Dev), 10) + ":1"}
	(&dirsFound{}).locate(&e, unix.ENOENT)
	buf := make([]byte, 4096)
	if n, _ := unix.Read(in, buf); n > 0 {
		t.Errorf("the search opened the mount point %s", mnt)
	}
}

// A directory the search cannot open or list for want of a descriptor
// (EMFILE) leaves the journal waiting: it was passed over as if it held
// nothing, the search ran to its end, and a directory renamed there was
// taken for removed, its journal dropped and its commit left torn.
func TestSeekDirOutOfDescriptorsWaits(t *testing.T) {
	parent := t.TempDir()
	must(t, os.Mkdir(filepath.Join(parent, "renamed"), 0o755))
	var st unix.Stat_t
	must(t, unix.Stat(filepath.Join(parent, "renamed"), &st))
	e := journalEntry{Dir: filepath.Join(parent, "gone"), DirIdentity: identity(&st)}
	depth := strings.Count(filepath.Clean(e.Dir), "/") // the descriptors of / and the directories above gone
	var lim unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	for spare := 0; spare < depth; spare++ {
		next, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		must(t, err)
		unix.Close(next)
		low := lim
		low.Cur = uint64(next + spare)
		must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
		l := (&dirsFound{}).locate(&e, unix.ENOENT)
		must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
		if l.verdict == dirRemoved {
			t.Errorf("%d descriptors spare: a directory renamed was taken for removed", spare)
		}
	}
}

// A directory renamed that is now a bind mount of its own file system
// (a bind mount over itself, as a read-only remount makes) is found: the
// search passed every mount point over, a missing directory was taken
// for removed and its journal dropped.
func TestSeekDirFindsABindMountOfItsFileSystem(t *testing.T) {
	needRoot(t)
	parent := t.TempDir()
	now := filepath.Join(parent, "now")
	must(t, os.Mkdir(now, 0o755))
	readOnly(t, now)
	var st unix.Stat_t
	must(t, unix.Stat(now, &st))
	e := journalEntry{Dir: filepath.Join(parent, "was"), DirIdentity: identity(&st)}
	if l := (&dirsFound{}).locate(&e, unix.ENOENT); l.verdict != dirFound || l.path != now {
		t.Errorf("a renamed directory bind-mounted over itself: %+v, want found at %s", l, now)
	}
}

// A failed undo in a directory moved since the crash, and found, refuses
// reads of its files where it is now, as at its recorded path: they may
// hold content never committed. Only the recorded paths were refused, and
// the moved files read the half-done commit as if it were theirs.
func TestTxnFailedUndoOfAMovedDirectoryRefusesReads(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := killedMidCommit(t, txnBefore, txnAfter)
	now := dir + "-renamed"
	must(t, os.Rename(dir, now))
	writable := readOnly(t, now)
	recoverElsewhere(t)
	if n := journalsLeft(t, state); n != 1 {
		t.Fatalf("the journal of a read-only tree went: %d", n)
	}
	fsys, err := New(Config{Roots: []string{now}, Cwd: now})
	must(t, err)
	r, err := fsys.Open(context.Background(), "a.txt")
	if err == nil {
		r.Close()
	}
	if code(err) != fault.CodeIOError || !strings.Contains(err.Error(), "could not be undone") {
		t.Errorf("open a.txt of the moved, half-committed tree: %v, want IO_ERROR naming the failed undo", err)
	}
	fsys.Close()
	writable()
	recoverElsewhere(t)
	if got := contents(t, now); !equalTree(got, txnBefore) {
		t.Errorf("the tree is %q, want %q", got, txnBefore)
	}
}

// A directory the search could not open (EMFILE, as EIO) may be the one
// sought: a missing directory is then not taken for removed, and its
// journal waits, while one every directory of which was looked at, within
// the bounds or not, is removed. Only a search cut by a bound is judged
// as if whole; nothing tested the one that could not look.
func TestSeekDirWaitsForADirectoryNotLookedAt(t *testing.T) {
	parent, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	must(t, os.Mkdir(filepath.Join(parent, "other"), 0o755))
	var st unix.Stat_t
	must(t, unix.Stat(parent, &st))
	e := journalEntry{Dir: filepath.Join(parent, "gone", "s"), DirIdentity: strconv.FormatUint(uint64(st.Dev), 10) + ":1"}
	seek := func() dirVerdict {
		seen := &dirsFound{at: map[string]located{}, listed: map[string]subdirList{}, mounts: mountPoints()}
		return seen.locate(&e, unix.ENOENT).verdict
	}
	if v := seek(); v != dirRemoved {
		t.Fatalf("a missing directory, everything looked at: %v, want dirRemoved", v)
	}
	// The search opens "/" and each ancestor of "gone" (the chain it
	// starts from): with no descriptor more, its open of "gone" on the way
	// down fails (where it starts is unknown); with one, its listing of
	// the parent takes it, and "other" there cannot be opened.
	chain := 1 + len(strings.Split(strings.Trim(parent, "/"), "/"))
	for _, free := range []int{chain, chain + 1} {
		release := exhaustDescriptors(t, free)
		v := seek()
		release()
		if v != dirWait {
			t.Errorf("with %d descriptors free (%d for the chain): %v, want dirWait", free, chain, v)
		}
	}
}
