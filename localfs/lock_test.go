package localfs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
)

func TestLockChain(t *testing.T) {
	for abs, want := range map[string][]string{
		"/":      {"/"},
		"/a":     {"/", "/a"},
		"/a/b/c": {"/", "/a", "/a/b", "/a/b/c"},
	} {
		if got := lockChain(abs); !reflect.DeepEqual(got, want) {
			t.Errorf("lockChain(%q) = %q, want %q", abs, got, want)
		}
	}
}

// Processes started with different roots lock the same file, and a
// recursive remove under one root meets a write below it under another.
func TestLockAcrossRoots(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	repo := t.TempDir()
	sub := filepath.Join(repo, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	outer, err := New(Config{Roots: []string{repo}, Cwd: repo})
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close()
	inner, err := New(Config{Roots: []string{filepath.Join(sub, "deep")}, Cwd: filepath.Join(sub, "deep")})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	ctx := context.Background()
	for _, tc := range []struct{ held, tried string }{
		{"sub/deep/f.txt", "f.txt"},
		{"sub", "f.txt"},
	} {
		unlock, err := outer.Lock(ctx, tc.held, 0)
		if err != nil {
			t.Fatal(err)
		}
		if u, err := inner.Lock(ctx, tc.tried, 0); err == nil {
			u()
			t.Errorf("holding %s under root %s did not exclude %s under root %s", tc.held, repo, tc.tried, filepath.Join(sub, "deep"))
		} else if e, ok := err.(*fault.Error); !ok || e.Code != fault.CodeLockTimeout {
			t.Errorf("want LOCK_TIMEOUT, got %v", err)
		}
		unlock()
	}
}

// flock locks belong to open file descriptions, so two Lock calls of one
// process contend as two processes would.
func TestLockConflicts(t *testing.T) {
	fsys, dir := newTestFS(t)
	if err := os.MkdirAll(filepath.Join(dir, "d/e"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	try := func(p string) error {
		unlock, err := fsys.Lock(ctx, p, 0)
		if err == nil {
			unlock()
		}
		return err
	}
	unlock, err := fsys.Lock(ctx, "d/e/f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Siblings and other trees are free; the path, its ancestors (taken
	// exclusively by rm -r) and its descendants are not.
	for p, want := range map[string]fault.Code{
		"d/e/g":   "",
		"other":   "",
		"d/e/f":   fault.CodeLockTimeout,
		"d/e":     fault.CodeLockTimeout,
		"d":       fault.CodeLockTimeout,
		"d/e/f/x": fault.CodeLockTimeout,
	} {
		if got := code(try(p)); got != want {
			t.Errorf("lock %s while d/e/f is held: %q, want %q", p, got, want)
		}
	}
	unlock()
	unlock() // a second call is harmless
	// rm -r d holds d exclusively: no mutation below it can start.
	unlock, err = fsys.Lock(ctx, "d", time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	defer unlock()
	for _, p := range []string{"d/e/f", "d/e", "d/x"} {
		if got := code(try(p)); got != fault.CodeLockTimeout {
			t.Errorf("lock %s while d is held: %q, want LOCK_TIMEOUT", p, got)
		}
	}
	if err := try("other"); err != nil {
		t.Errorf("lock other while d is held: %v", err)
	}
}

// Two spellings of one file, through a link inside the root, share a lock.
func TestLockFollowsLinks(t *testing.T) {
	fsys, dir := newTestFS(t)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsys.Lock(context.Background(), "real/f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := fsys.Lock(context.Background(), "alias/f", 0); code(err) != fault.CodeLockTimeout {
		t.Fatalf("lock through the link: %v, want LOCK_TIMEOUT", err)
	}
}

// A wait ends at the timeout with LOCK_TIMEOUT, or at once when the context
// is cancelled, with INTERRUPTED.
func TestLockTimeoutAndCancel(t *testing.T) {
	fsys, _ := newTestFS(t)
	unlock, err := fsys.Lock(context.Background(), "f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	_, err = fsys.Lock(context.Background(), "f", 50*time.Millisecond)
	if code(err) != fault.CodeLockTimeout {
		t.Fatalf("got %v, want LOCK_TIMEOUT", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before its 50ms timeout", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := fsys.Lock(ctx, "f", time.Minute)
		done <- err
	}()
	cancel()
	if err := Within(t, done, "end of a cancelled wait"); code(err) != fault.CodeInterrupted {
		t.Fatalf("got %v, want INTERRUPTED", err)
	}
}

func TestLockRefusesRoot(t *testing.T) {
	fsys, _ := newTestFS(t)
	if _, err := fsys.Lock(context.Background(), ".", time.Second); code(err) != fault.CodeInvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
}

// A holder removes its path's lock file as it lets go. A process that was
// waiting on that file must not keep a lock on the removed file: it takes
// the lock on the file now at the path, so a third process still waits.
func TestLockSurvivesLockFileRemoval(t *testing.T) {
	fsys, _ := newTestFS(t)
	ctx := context.Background()
	first, err := fsys.Lock(ctx, "f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	lockWaitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	defer func() { lockWaitHook = nil }()
	got := make(chan func(), 1)
	go func() {
		unlock, err := fsys.Lock(ctx, "f", 5*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- unlock
	}()
	Within(t, waiting, "wait for the held lock")
	first() // removes the lock file the waiter has open
	second := Within(t, got, "lock after the holder let go")
	if second == nil {
		t.FailNow()
	}
	if _, err := fsys.Lock(ctx, "f", 0); code(err) != fault.CodeLockTimeout {
		t.Fatalf("a third lock while the second is held: %v, want LOCK_TIMEOUT", err)
	}
	second()
}
