package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A directory holding a hard link to a denied file, moved to another file
// system, must not give the denied bytes a new identity that no deny
// recognises: the move is DENIED before anything is copied.
func TestMoveAcrossFileSystemsLaundersDeniedHardLink(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	t.Setenv(StateDirEnv, state)
	other := otherDevice(t, dir)
	secret := filepath.Join(dir, "secret.txt")
	must(t, os.WriteFile(secret, []byte("TOPSECRET\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(t, os.Link(secret, filepath.Join(dir, "d", "h")))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir, Deny: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	ctx := context.Background()
	if _, err := fsys.Open(ctx, "d/h"); code(err) != fault.CodeDenied {
		t.Fatalf("d/h before the move: want DENIED, got %v", err)
	}
	dst := filepath.Join(other, "d")
	if _, err := fsys.Rename(ctx, "d", dst, backend.WriteOptions{IfAbsent: true}); err != nil {
		if code(err) != fault.CodeDenied {
			t.Errorf("mv across file systems of a directory holding a hard link of a denied file: want DENIED, got %v", err)
		}
		if _, serr := os.Lstat(filepath.Join(dir, "d", "h")); serr != nil {
			t.Errorf("the refused move left no source: %v", serr)
		}
		return
	}
	r, err := fsys.Open(ctx, filepath.Join(dst, "h"))
	if err == nil {
		r.Close()
	}
	if code(err) != fault.CodeDenied {
		t.Errorf("after mv across file systems the denied file's bytes are readable at %s (err %v)", filepath.Join(dst, "h"), err)
	}
}
