package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeOutsideRoot {
		t.Fatalf("locking a path below a root whose name now leads outside: %v, want OUTSIDE_ROOT", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws+".old", "a.txt")); string(got) != "old\n" {
		t.Fatalf("the root's file is %q", got)
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Fatalf("the directory outside holds %v", left)
	}
}
