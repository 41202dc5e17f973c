package localfs

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A wait for a held lock calls the wait hook once, as it begins, sleeps
// between its tries instead of spinning, and ends at its deadline.
func TestFlockWaitBacksOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, err := lockFile(context.Background(), path, unix.LOCK_EX, time.Now())
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
	err = flockWait(context.Background(), fd, unix.LOCK_EX, start.Add(wait))
	elapsed, used := time.Since(start), cpu()-cpu0
	if err != errLockTimeout || elapsed < wait {
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
