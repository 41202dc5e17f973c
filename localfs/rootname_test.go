package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A root whose name leads elsewhere since it was opened (renamed, a link
// to a directory outside put at its name) is resolved through the name
// again, from /: a path below it is placed where the name leads now, and
// a mutation there is OUTSIDE_ROOT, nothing written either side. Only
// while the name still leads to the root itself (its device and inode)
// are the root's ancestors taken as resolved.
func TestRootNameLeadingElsewhereIsResolvedWhole(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.Mkdir(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old\n"), 0o644))
	fsys, err := New(Config{Roots: []string{ws}, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	must(t, os.Rename(ws, ws+".old"))
	must(t, os.Symlink(outside, ws))
	_, err = fsys.LockAll(context.Background(), []string{"a.txt"}, 0)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeOutsideRoot || !strings.Contains(e.Message, "renamed or replaced") {
		// It said the path went through a link out of the roots, though
		// none lay under the root.
		t.Fatalf("locking a path below a root whose name now leads outside: %v, want OUTSIDE_ROOT saying the root was renamed or replaced", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws+".old", "a.txt")); string(got) != "old\n" {
		t.Fatalf("the root's file is %q", got)
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Fatalf("the directory outside holds %v", left)
	}
}

// A root removed or renamed away, nothing left at its name, is said to be
// so, not to lead elsewhere.
func TestRootNameLeadingNowhere(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	ws := filepath.Join(t.TempDir(), "ws")
	must(t, os.Mkdir(ws, 0o755))
	fsys, err := New(Config{Roots: []string{ws}, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	must(t, os.Rename(ws, ws+".old"))
	err = fsys.BeginRequest(context.Background())
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeOutsideRoot || !strings.Contains(e.Message, "nothing is at its name now") {
		t.Fatalf("a request of a session whose root was renamed away: %v, want OUTSIDE_ROOT saying nothing is at its name", err)
	}
}

// moveAncestor renames the directory dir to to and leaves a link to it at
// its name, as mv ~/proj ~/src; ln -s src ~/proj does.
func moveAncestor(t *testing.T, dir, to string) {
	t.Helper()
	must(t, os.Rename(dir, to))
	must(t, os.Symlink(filepath.Base(to), dir))
}

// A session whose root's ancestor was moved (a link left at its name)
// locks by the root's new place, as a process started since does: an rm
// -r of a directory there and a write into it exclude each other, with
// one root or nested roots.
func TestAncestorMovedKeepsOneLockKey(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Setenv(StateDirEnv, t.TempDir())
		base := t.TempDir()
		w := filepath.Join(base, "w")
		root := filepath.Join(w, "a", "ws")
		must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
		cfg := Config{Roots: []string{root}, Cwd: root}
		if nested {
			cfg = Config{Roots: []string{w, root}, Cwd: root}
		}
		session, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		moveAncestor(t, filepath.Join(w, "a"), filepath.Join(w, "b"))
		later, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		dir, file := filepath.Join(root, "d"), filepath.Join(root, "d", "new.txt")
		unlock, err := session.LockAll(ctx, []string{dir}, 0)
		if err == nil {
			if unlockLater, err := later.LockAll(ctx, []string{file}, 50*time.Millisecond); err == nil {
				unlockLater()
				t.Errorf("nested roots %v: a later process locked %s while the session held %s", nested, file, dir)
			}
			unlock()
		} else if e := fault.AsError(err); e == nil || e.Code != fault.CodeOutsideRoot {
			t.Errorf("nested roots %v: the session's lock of %s: %v", nested, dir, err)
		}
		session.Close()
		later.Close()
	}
}

// In a session whose root's ancestor was moved, one file under its old
// and new spellings is still one file: a transaction that changes both
// changes it twice, and is refused with the file as it was.
func TestAncestorMovedOneFileTwice(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	w := filepath.Join(t.TempDir(), "w")
	inner := filepath.Join(w, "a", "inner")
	must(t, os.MkdirAll(inner, 0o755))
	must(t, os.WriteFile(filepath.Join(inner, "f.txt"), []byte("orig\n"), 0o644))
	fsys, err := New(Config{Roots: []string{w, inner}, Cwd: w})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	moveAncestor(t, filepath.Join(w, "a"), filepath.Join(w, "b"))
	p1, p2 := filepath.Join(w, "a", "inner", "f.txt"), filepath.Join(w, "b", "inner", "f.txt")
	ops := []backend.Op{{Path: p1, Data: []byte("first\n")}, {Path: p2, Data: []byte("second\n")}}
	ctx := context.Background()
	unlock, err := fsys.LockAll(ctx, []string{p1, p2}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsys.Commit(ctx, ops)
	unlock()
	if err == nil {
		t.Fatal("a transaction changed one file twice, under two spellings, and succeeded")
	}
	if got, _ := os.ReadFile(p2); string(got) != "orig\n" {
		t.Fatalf("the file is %q", got)
	}
}

// Under --symlinks refuse, a path whose root's ancestor became a link is
// a path through a link: refused, nothing written.
func TestAncestorMovedRefusedAsLink(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	ws := filepath.Join(base, "p", "ws")
	must(t, os.MkdirAll(ws, 0o755))
	fsys, err := New(Config{Roots: []string{ws}, Cwd: ws, Symlinks: SymlinksRefuse})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	moveAncestor(t, filepath.Join(base, "p"), filepath.Join(base, "q"))
	_, err = fsys.WriteFile(context.Background(), "new.txt", []byte("x"), backend.WriteOptions{})
	if err == nil {
		t.Fatal("a write through a root whose ancestor became a link succeeded under --symlinks refuse")
	}
	if _, serr := os.Stat(filepath.Join(base, "q", "ws", "new.txt")); serr == nil {
		t.Fatalf("the refused write (%v) left new.txt", err)
	}
}

// OUTSIDE_ROOT's hint names the roots in the order given (the first is
// where relative paths start), each once: a root given twice (through a
// link) was named twice, and the roots came longest first.
func TestOutsideRootHintNamesEachRootOnce(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	ws, deeper := filepath.Join(base, "ws"), filepath.Join(base, "other", "deeper")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.MkdirAll(deeper, 0o755))
	must(t, os.Symlink(ws, filepath.Join(base, "link")))
	fsys, err := New(Config{Roots: []string{ws, deeper, filepath.Join(base, "link")}, Cwd: base})
	must(t, err)
	defer fsys.Close()
	_, err = fsys.Stat(context.Background(), filepath.Join(base, "elsewhere"))
	want := "use a path inside " + ws + ", " + deeper + ", or add a root with --root"
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeOutsideRoot || e.Hint != want {
		t.Fatalf("a path outside the roots: %v, want OUTSIDE_ROOT hinting %q", err, want)
	}
}
