package localfs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentfs/agentfs/core"
)

func TestLockChain(t *testing.T) {
	for rel, want := range map[string][]string{
		".":     {"."},
		"a":     {".", "a"},
		"a/b/c": {".", "a", "a/b", "a/b/c"},
	} {
		if got := lockChain(rel); !reflect.DeepEqual(got, want) {
			t.Errorf("lockChain(%q) = %q, want %q", rel, got, want)
		}
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
	for p, want := range map[string]core.Code{
		"d/e/g":   "",
		"other":   "",
		"d/e/f":   core.CodeLockTimeout,
		"d/e":     core.CodeLockTimeout,
		"d":       core.CodeLockTimeout,
		"d/e/f/x": core.CodeLockTimeout,
	} {
		if got := codeOf(try(p)); got != want {
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
		if got := codeOf(try(p)); got != core.CodeLockTimeout {
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
	if _, err := fsys.Lock(context.Background(), "alias/f", 0); codeOf(err) != core.CodeLockTimeout {
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
	if codeOf(err) != core.CodeLockTimeout {
		t.Fatalf("got %v, want LOCK_TIMEOUT", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > time.Second {
		t.Fatalf("waited %v for a 50ms timeout", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := fsys.Lock(ctx, "f", time.Minute)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if codeOf(err) != core.CodeInterrupted {
			t.Fatalf("got %v, want INTERRUPTED", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled wait did not end")
	}
}

func TestLockRefusesRoot(t *testing.T) {
	fsys, _ := newTestFS(t)
	if _, err := fsys.Lock(context.Background(), ".", time.Second); codeOf(err) != core.CodeInvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
}
