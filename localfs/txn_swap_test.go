package localfs

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A file another program changes while a commit syncs what it staged
// (after the compare-and-swap was first checked) is not replaced: the
// commit is STALE, nothing of it stays, and the other program's change
// is kept. Checked only before the syncs, an append to a.txt was lost
// with exit 0 (apply-patch and replace, 15 in 61 runs on an 888 KB file).
func TestCommitChecksTheSwapAgainBeforeItReplaces(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "old a\n", "b.txt": "old b\n"})
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	var ops []backend.Op
	for _, name := range []string{"b.txt", "a.txt"} {
		info, err := fsys.Stat(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, backend.Op{Path: name, Data: []byte("new\n"), Write: backend.WriteOptions{IfVersion: info.Version}})
	}
	saved := syscalls
	t.Cleanup(func() { syscalls = saved })
	var once sync.Once
	syscalls.fsync = func(fd int) error {
		once.Do(func() {
			f, err := os.OpenFile(filepath.Join(dir, "a.txt"), os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			_, err = f.WriteString("EXTERNAL\n")
			must(t, err)
			must(t, f.Close())
		})
		return saved.fsync(fd)
	}
	_, err = fsys.Commit(ctx, ops)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale {
		t.Fatalf("a commit over a file changed meanwhile: %v; want STALE", err)
	}
	for name, want := range map[string]string{"a.txt": "old a\nEXTERNAL\n", "b.txt": "old b\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s holds %q; want %q", name, got, want)
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 2 {
		t.Errorf("the refused commit left %v", names)
	}
}
