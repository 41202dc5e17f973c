package localfs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A wait for a held lock calls the wait hook once, as it begins, sleeps
// between its tries instead of spinning, and ends at its deadline.
func TestFlockWaitBacksOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, err := LockFile(context.Background(), path, unix.LOCK_EX, time.Now())
	must(t, err)
	defer unix.Close(holder)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	calls := 0
	lockWaitHook = func() { calls++ }
	defer func() { lockWaitHook = nil }()
	// The CPU time of this thread alone: other goroutines (a GC, what
	// earlier tests left running) do not count.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() time.Duration {
		var ru unix.Rusage
		must(t, unix.Getrusage(unix.RUSAGE_THREAD, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const wait = 250 * time.Millisecond
	cpu0, start := cpu(), time.Now()
	err = FlockWait(context.Background(), fd, unix.LOCK_EX, start.Add(wait))
	elapsed, used := time.Since(start), cpu()-cpu0
	if err != ErrLockTimeout || elapsed < wait {
		t.Fatalf("got %v after %v, want the lock timeout after %v", err, elapsed, wait)
	}
	if calls != 1 {
		t.Errorf("the wait hook was called %d times, want once", calls)
	}
	// Tries at most lockPollMax apart cost well under a millisecond each.
	if used > wait/10 {
		t.Errorf("a %v wait used %v of CPU: it spins", wait, used)
	}
}

// The lock of a FIFO's path never opens the FIFO for reading, which would
// release a writer blocked on it (its data then lost in a pipe nobody
// reads): inotify sees no open of it.
func TestLockLeavesAFIFOUnopened(t *testing.T) {
	f, dir := newTestFS(t)
	fifo := filepath.Join(dir, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	must(t, err)
	defer unix.Close(in)
	_, err = unix.InotifyAddWatch(in, fifo, unix.IN_OPEN)
	must(t, err)
	unlock, err := f.Lock(context.Background(), "fifo", time.Second)
	must(t, err)
	unlock()
	buf := make([]byte, 4096)
	if n, err := unix.Read(in, buf); err != unix.EAGAIN {
		t.Fatalf("the FIFO was opened by its lock (%d bytes of events, %v)", n, err)
	}
}

// Two mutations naming hard links of the same two files in opposite
// orders lock the files in one order, (device, inode): neither waits for
// the other, once a third holder lets go.
func TestDataLocksFollowFileOrder(t *testing.T) {
	f, dir := newTestFS(t)
	for _, n := range []string{"a", "b"} {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
	must(t, os.Link(filepath.Join(dir, "b"), filepath.Join(dir, "c")))
	must(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "d")))
	waiting := make(chan struct{}, 16)
	lockWaitHook = func() { waiting <- struct{}{} }
	defer func() { lockWaitHook = nil }()
	for range 10 {
		holder, err := unix.Open(filepath.Join(dir, "b"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		must(t, err)
		must(t, unix.Flock(holder, unix.LOCK_EX))
		errs := make(chan error, 2)
		for _, paths := range [][]string{{"a", "b"}, {"c", "d"}} {
			go func() {
				unlock, err := f.LockAll(context.Background(), paths, 3*time.Second)
				if err == nil {
					unlock()
				}
				errs <- err
			}()
		}
		// Both wait for the holder (one for b, the other for c), then it
		// lets go.
		<-waiting
		<-waiting
		unix.Close(holder)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("hard links locked in opposite orders: %v", err)
			}
		}
	}
}

// On a file system without flock (ENOLCK: an NFS mount without its lock
// service) a mutation goes ahead under the lock files alone, as it did
// before data files were locked; another error of the flock fails it.
func TestDataLockWithoutFlock(t *testing.T) {
	f, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644))
	defer func() { flockData = FlockWait }()
	for _, tc := range []struct {
		err  error
		fail bool
	}{{unix.ENOLCK, false}, {unix.EOPNOTSUPP, false}, {unix.EIO, true}} {
		flockData = func(context.Context, int, int, time.Time) error { return tc.err }
		unlock, err := f.Lock(context.Background(), "a", time.Second)
		if (err != nil) != tc.fail {
			t.Fatalf("flock failing with %v: lock error %v, want failure %v", tc.err, err, tc.fail)
		}
		if err == nil {
			unlock()
		}
	}
}

// A directory on a mutation's path swapped for a link out of the root
// while the mutation waits for its locks leads its data lock nowhere: the
// file at the same name outside the root is never opened, nor its flock
// waited for. The lock walked the real path by name, following the link,
// and timed out on a lock held outside, blamed on an agentfs process.
func TestDataLockFollowsNoLinkOnTheWay(t *testing.T) {
	f, dir := newTestFS(t)
	outside := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "d", "c.txt"), []byte("in"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "c.txt"), []byte("out"), 0o644))
	held, err := os.Open(filepath.Join(outside, "c.txt"))
	must(t, err)
	defer held.Close()
	must(t, unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	must(t, err)
	defer unix.Close(in)
	_, err = unix.InotifyAddWatch(in, outside, unix.IN_OPEN)
	must(t, err)
	// Holding d's lock file makes the mutation wait after placing the
	// path: the swap happens then, and the holder lets go.
	locks, err := lockDir()
	must(t, err)
	d := filepath.Join(f.roots[0].path, "d")
	holder, err := LockFile(context.Background(), filepath.Join(locks, lockName(lockKey(mountTable(), d))), unix.LOCK_EX, time.Now())
	must(t, err)
	lockWaitHook = func() {
		lockWaitHook = nil
		must(t, os.Rename(d, d+".moved"))
		must(t, os.Symlink(outside, d))
		unix.Close(holder)
	}
	defer func() { lockWaitHook = nil }()
	unlock, err := f.Lock(context.Background(), "d/c.txt", time.Second)
	if err == nil {
		unlock()
	}
	if c := code(err); c != fault.CodeOutsideRoot {
		t.Errorf("lock of a path re-pointed out of the root: %v, want OUTSIDE_ROOT", err)
	}
	buf := make([]byte, 4096)
	if n, err := unix.Read(in, buf); err != unix.EAGAIN {
		t.Fatalf("a file outside the root was opened by a lock (%d bytes of events, %v)", n, err)
	}
}
