package localfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A rollback that fails (a file system remounted read-only since the
// crash) keeps the journal, and the next call once it is writable undoes
// the commit.
func TestTxnRecoveryOfAReadOnlyTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to remount read-only; CI runs it as root (sudo go test ./localfs -run ReadOnlyTree)")
	}
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	before := map[string]string{"a.txt": "old a\n", "b.txt": "old b\n", "sub/d.txt": "old d\n"}
	after := map[string]string{"a.txt": "new a\n", "sub/c.txt": "new c\n", "sub/d.txt": "new d\n"}
	dir := killedMidCommit(t, before, after)
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind is not permitted here (%v); run as root outside a restricted container", err)
	}
	mounted := true
	defer func() {
		if mounted {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	}()
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount read-only is not permitted here: %v", err)
	}
	half := contents(t, dir)
	other := t.TempDir()
	fsys, err := New(Config{Roots: []string{other}, Cwd: other})
	if err != nil {
		t.Fatal(err)
	}
	fsys.Close()
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 1 {
		t.Fatalf("the journal of a read-only tree went: %v", j)
	}
	must(t, unix.Unmount(dir, 0))
	mounted = false
	if got := contents(t, dir); !equalTree(got, half) {
		t.Fatalf("the tree changed while read-only: %q, was %q", got, half)
	}
	fsys, err = New(Config{Roots: []string{other}, Cwd: other})
	if err != nil {
		t.Fatal(err)
	}
	fsys.Close()
	if got := contents(t, dir); !equalTree(got, before) {
		t.Errorf("the writable tree %q is not undone to %q", got, before)
	}
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
		t.Errorf("journals left: %v", j)
	}
}
