package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// cancelAfter is a context whose Err reports it cancelled from its n-th
// call on: a cancellation that comes midway through a walk, at a point
// the test chooses, without a timer.
type cancelAfter struct {
	context.Context
	n atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// deepRel is a path depth directories deep, ending in name.
func deepRel(depth int, name string) string {
	return strings.Repeat("d/", depth) + name
}

// A change is made with a context that is never cancelled (past core's
// beginCommit) carrying its preparation's: the walk to a deep file's
// directory, which nothing needs undone, stops with the preparation's,
// INTERRUPTED, and nothing is written.
func TestDeepWalkStopsWhenCancelled(t *testing.T) {
	const depth = 40
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		prep func() context.Context
	}{
		{"before", func() context.Context { return cancelled }},
		{"midway", func() context.Context {
			c := &cancelAfter{Context: context.Background()}
			c.n.Store(depth / 2)
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := newTestFS(t)
			rel := deepRel(depth, "f.txt")
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, rel), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := backend.WithPreparation(context.Background(), tc.prep())
			_, err := fsys.WriteFile(ctx, rel, []byte("new"), backend.WriteOptions{})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeInterrupted {
				t.Fatalf("write: %v, want INTERRUPTED", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != "old" {
				t.Fatalf("file is %q, want it unchanged", b)
			}
		})
	}
}

// Directories a transaction made before it was cancelled are undone with
// it; a plain write stops only before it made one, which nothing would
// undo.
func TestDeepMkdirStopsWhenCancelled(t *testing.T) {
	const depth = 40
	t.Run("commit", func(t *testing.T) {
		fsys, dir := newTestFS(t)
		c := &cancelAfter{Context: context.Background()}
		c.n.Store(depth / 2)
		ctx := backend.WithPreparation(context.Background(), c)
		_, err := fsys.Commit(ctx, []backend.Op{{Path: deepRel(depth, "f.txt"), Data: []byte("x")}})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInterrupted {
			t.Fatalf("commit: %v, want INTERRUPTED", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
			t.Fatalf("a directory the commit made is left: %v", err)
		}
	})
	t.Run("write", func(t *testing.T) {
		fsys, dir := newTestFS(t)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		ctx := backend.WithPreparation(context.Background(), cancelled)
		_, err := fsys.WriteFile(ctx, deepRel(depth, "f.txt"), []byte("x"), backend.WriteOptions{})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInterrupted {
			t.Fatalf("write: %v, want INTERRUPTED", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
			t.Fatalf("the write made a directory: %v", err)
		}
	})
}

// A plain write keeps the directories it makes: once it has made one it
// is no longer stopped by its caller giving up, as an INTERRUPTED answer
// says that nothing was changed.
func TestDeepWriteNotInterruptedOnceItMadeADirectory(t *testing.T) {
	const depth = 40
	fsys, dir := newTestFS(t)
	rel := deepRel(depth, "f.txt")
	// The first half exists: the walk makes a directory at level 21.
	if err := os.MkdirAll(filepath.Join(dir, deepRel(depth/2, "")), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cancelAfter{Context: context.Background()}
	c.n.Store(depth/2 + 5)
	_, err := fsys.WriteFile(backend.WithPreparation(context.Background(), c), rel, []byte("x"), backend.WriteOptions{})
	if e := fault.AsError(err); e != nil && e.Code == fault.CodeInterrupted {
		if _, serr := os.Lstat(filepath.Join(dir, deepRel(depth/2+1, ""))); serr == nil {
			t.Fatalf("write: %v, but it made directories", err)
		}
	}
	if err != nil {
		t.Fatalf("write: %v, want it written", err)
	}
}
