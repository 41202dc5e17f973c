package localfs

import (
	"testing"
	"time"
)

// SetLockWaitHook lets the external tests know when a Lock starts waiting.
func SetLockWaitHook(f func()) { lockWaitHook = f }

// Within receives from ch, or fails the test after a deadline far beyond
// any wait that works: a lock bug fails the test instead of hanging the
// package for ten minutes.
func Within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30 s", what)
	}
	panic("unreachable")
}
