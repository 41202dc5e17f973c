package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// A backup the commit could not unlink (EIO, a file system gone read-only)
// keeps the committed journal, so that the next recovery removes it: with
// the journal gone, the hidden link held the old content (a deleted file's
// whole content) for good. The commit itself succeeded all the same.
func TestCommitKeepsJournalOfABackupItCouldNotUnlink(t *testing.T) {
	fsys, dir, state := newRecoverFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("old b\n"), 0o644))
	unlinkat := syscalls.unlinkat
	t.Cleanup(func() { syscalls.unlinkat = unlinkat })
	failed := 0
	syscalls.unlinkat = func(dfd int, name string, flags int) error {
		failed++
		return unix.EIO
	}
	ctx := context.Background()
	ops := []backend.Op{{Path: "a.txt", Data: []byte("new a\n")}, {Path: "b.txt", Remove: true}}
	unlock, err := fsys.LockAll(ctx, []string{"a.txt", "b.txt"}, 0)
	must(t, err)
	infos, err := fsys.Commit(ctx, ops)
	unlock()
	syscalls.unlinkat = unlinkat
	if err != nil || len(infos) != 2 || infos[0].Size != int64(len("new a\n")) {
		t.Fatalf("Commit with its backups' unlink failing: %+v, %v; want it done", infos, err)
	}
	if failed != 2 {
		t.Fatalf("%d backup unlinks failed; want both", failed)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "new a\n" {
		t.Fatalf("a.txt is %q after the commit", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt after its removal: %v", err)
	}
	if leftovers(t, dir) != 2 || journalsLeft(t, state) != 1 {
		t.Fatalf("after the commit: %d leftovers, %d journals; want both backups and the journal that removes them", leftovers(t, dir), journalsLeft(t, state))
	}
	fsys.SettleDead(ctx)
	if n, j := leftovers(t, dir), journalsLeft(t, state); n != 0 || j != 0 {
		t.Fatalf("after the next recovery: %d leftovers, %d journals; want none", n, j)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "new a\n" {
		t.Fatalf("a.txt is %q after the recovery; want the commit's content", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt after the recovery: %v; want it still removed", err)
	}
}

// leftovers counts the hidden temporary names in dir.
func leftovers(t *testing.T, dir string) int {
	t.Helper()
	names, err := os.ReadDir(dir)
	must(t, err)
	n := 0
	for _, e := range names {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			n++
		}
	}
	return n
}
