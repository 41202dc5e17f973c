package localfs

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// atLevel is a preparation context that runs act when the walk to a
// change's directory asks it at its n-th level (it asks once a level): a
// race at a point the test chooses.
type atLevel struct {
	context.Context
	n   atomic.Int32
	act func()
}

func (c *atLevel) Err() error {
	if c.n.Add(-1) == 0 {
		c.act()
	}
	return nil
}

// A directory on the way renamed out of the root while the walk is below
// it takes the rest of the walk, which goes from descriptor to
// descriptor, with it: the write must not land where it went (it landed,
// and was answered as written; checked by its path from the root at each
// level, it was NOT_FOUND).
func TestDeepWalkDirRenamedOutOfTheRoot(t *testing.T) {
	for _, rel := range []string{"a/b/c/f", "a/b/c/d/e/f"} {
		t.Run(rel, func(t *testing.T) {
			t.Setenv(StateDirEnv, t.TempDir())
			base := t.TempDir()
			ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
			must(t, os.MkdirAll(filepath.Join(ws, "a/b/c"), 0o755))
			must(t, os.Mkdir(out, 0o755))
			fsys := newFS(t, Config{Roots: []string{ws}, Cwd: ws})
			// The third level: the walk holds a/b and opens c next.
			h := &atLevel{Context: context.Background(), act: func() {
				must(t, os.Rename(filepath.Join(ws, "a"), filepath.Join(out, "a")))
			}}
			h.n.Store(3)
			_, err := fsys.WriteFile(backend.WithPreparation(context.Background(), h), rel, []byte("x"), backend.WriteOptions{})
			if code(err) != fault.CodeNotFound {
				t.Errorf("write: %v, want NOT_FOUND", err)
			}
			for _, p := range []string{filepath.Join(out, "a/b/c/f"), filepath.Join(out, "a/b/c/d")} {
				if _, serr := os.Lstat(p); serr == nil {
					t.Errorf("the write made %s, outside the root", p)
				}
			}
		})
	}
}

// Likewise a directory on the way renamed into a deny root: nothing is
// made or written there.
func TestDeepWalkDirRenamedIntoADenyRoot(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "a/b/c"), 0o755))
	must(t, os.Mkdir(filepath.Join(ws, "secret"), 0o755))
	fsys := newFS(t, Config{Roots: []string{ws}, Cwd: ws, Deny: []string{filepath.Join(ws, "secret")}})
	h := &atLevel{Context: context.Background(), act: func() {
		must(t, os.Rename(filepath.Join(ws, "a"), filepath.Join(ws, "secret/a")))
	}}
	h.n.Store(3)
	_, err := fsys.WriteFile(backend.WithPreparation(context.Background(), h), "a/b/c/d/f", []byte("x"), backend.WriteOptions{})
	if code(err) != fault.CodeNotFound {
		t.Errorf("write: %v, want NOT_FOUND", err)
	}
	if _, serr := os.Lstat(filepath.Join(ws, "secret/a/b/c/d")); serr == nil {
		t.Errorf("the write made a directory in the deny root")
	}
}

// Under --symlinks refuse, a level swapped for a link (to a directory
// inside the root) between two levels is not followed by the walk, which
// opens each level without following links: nothing is made or written
// where it leads.
func TestDeepWalkLevelSwappedForALink(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "a/b/c"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "other/c"), 0o755))
	fsys := newFS(t, Config{Roots: []string{ws}, Cwd: ws, Symlinks: SymlinksRefuse})
	// The second level: the walk holds a and opens b next.
	h := &atLevel{Context: context.Background(), act: func() {
		must(t, os.Rename(filepath.Join(ws, "a/b"), filepath.Join(ws, "b-old")))
		must(t, os.Symlink("../other", filepath.Join(ws, "a/b")))
	}}
	h.n.Store(2)
	_, err := fsys.WriteFile(backend.WithPreparation(context.Background(), h), "a/b/c/d/f", []byte("x"), backend.WriteOptions{})
	if code(err) != fault.CodeSymlink {
		t.Errorf("write: %v, want SYMLINK", err)
	}
	if _, serr := os.Lstat(filepath.Join(ws, "other/c/d")); serr == nil {
		t.Errorf("the write made a directory through the link")
	}
}
