package localfs

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// fileSync flushes a file and a directory on macOS's own file system, and
// a descriptor that is not open is an error, not a sync that passed.
func TestFileSyncFlushesOrFails(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(dir + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("data\n"); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, fd := range []int{int(f.Fd()), int(d.Fd())} {
		if err := syscalls.fsync(fd); err != nil {
			t.Errorf("sync of fd %d: %v", fd, err)
		}
	}
	if err := fileSync(-1); !errors.Is(err, unix.EBADF) {
		t.Errorf("sync of fd -1: %v; want EBADF", err)
	}
}
