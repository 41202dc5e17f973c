package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A taker of a lock that waited on a lock file Sweep then unlinked holds
// the file at the lock's name once it returns, not the unlinked one, which
// guards nothing: two builders held "the" lock at once.
func TestLockTakesTheFileAtItsName(t *testing.T) {
	name := filepath.Join(t.TempDir(), "tree.lock")
	unlock, err := lock(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	taken := make(chan error, 1)
	go func() {
		unlock, err := lock(context.Background(), name, time.Minute)
		if err == nil {
			t.Cleanup(unlock)
		}
		taken <- err
	}()
	// The waiter has the file open: a second descriptor of it.
	for opened(t, name) < 2 {
		select {
		case err := <-taken:
			t.Fatalf("the lock was taken while held: %v", err)
		default:
		}
	}
	if err := os.Remove(name); err != nil { // as sweepTree does, under the lock
		t.Fatal(err)
	}
	unlock()
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("no lock file at the name once the lock is taken: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("the file at the name is not the one locked: flock %v", err)
	}
}

// opened counts this process's descriptors of the file at name, or of it
// once unlinked.
func opened(t *testing.T, name string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.TrimSuffix(target, " (deleted)") == name {
			n++
		}
	}
	return n
}
