package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// A regular file swapped for a FIFO between the walk's listing and its
// open must not be opened for reading (the man page: "A FIFO with a
// blocked writer, a device node: never opened for reading"). The swap is
// made inside the visit call, so the test is deterministic.
func TestWalkOpenOfFileSwappedForFIFO(t *testing.T) {
	fsys, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644))
	fifo := filepath.Join(dir, "other.fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	opens := watchOpens(t, fifo)
	var openErr error
	opened := false
	err := fsys.Walk(context.Background(), ".", backend.WalkOptions{NoIgnore: true}, func(e backend.WalkEntry) error {
		if e.Name != "f.txt" || e.Open == nil {
			return nil
		}
		// Another process swaps the file for a FIFO right after the listing.
		must(t, unix.Renameat2(unix.AT_FDCWD, fifo, unix.AT_FDCWD, filepath.Join(dir, "f.txt"), unix.RENAME_EXCHANGE))
		r, err := e.Open()
		openErr = err
		if err == nil {
			opened = true
			r.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	if n := opens(); n > 0 {
		t.Errorf("the FIFO swapped in after the listing was opened for reading (%d bytes of inotify events); Open returned %v, opened=%v", n, openErr, opened)
	}
}
