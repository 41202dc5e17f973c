package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A FIFO or a device is never opened for reading: its type is learnt from
// an O_PATH descriptor first, so a writer blocked in open(2) on a FIFO is
// not released (to die of SIGPIPE) and a device's open has no effect
// (issue 8.11). inotify reports every real open of the file; O_PATH is
// none.
func TestSpecialFilesAreNeverOpened(t *testing.T) {
	fsys, dir := newTestFS(t)
	fifo := filepath.Join(dir, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	opens := watchOpens(t, fifo)
	ctx := context.Background()
	if _, err := fsys.Open(ctx, "fifo"); code(err) != fault.CodeNotRegular {
		t.Errorf("read of a FIFO: want NOT_REGULAR, got %v", err)
	}
	if _, err := fsys.Stat(ctx, "fifo"); err != nil {
		t.Errorf("stat of a FIFO: %v", err)
	}
	if n := opens(); n > 0 {
		t.Errorf("the FIFO was opened (%d bytes of inotify events)", n)
	}
	// The check can fail: a real open is seen.
	probe, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(probe)
	if opens() <= 0 {
		t.Error("inotify did not see a real open: the check above proves nothing here")
	}
}

// A root that is a FIFO, or a link to one, is NOT_A_DIRECTORY without
// being opened: os.OpenRoot opened it to read, and with no writer waited
// for one for ever, deaf to SIGTERM. The FIFO is held open here so that a
// regression is an open inotify sees, not a hang.
func TestFIFORootIsNeverOpened(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	must(t, os.Symlink("fifo", filepath.Join(dir, "link")))
	held, err := unix.Open(fifo, unix.O_RDWR|unix.O_NONBLOCK, 0)
	must(t, err)
	defer unix.Close(held)
	opens := watchOpens(t, fifo)
	for _, root := range []string{fifo, filepath.Join(dir, "link")} {
		if _, err := New(Config{Roots: []string{root}, Cwd: dir}); code(err) != fault.CodeNotADirectory {
			t.Errorf("--root %s, a FIFO: %v, want NOT_A_DIRECTORY", root, err)
		}
	}
	if n := opens(); n > 0 {
		t.Errorf("the FIFO root was opened (%d bytes of inotify events)", n)
	}
}

// Without /proc a file is opened by name again, and only when it is still
// the file whose type was checked.
func TestSameFileRefusesAReplacedFile(t *testing.T) {
	fsys, dir := newTestFS(t)
	for _, n := range []string{"a", "b"} {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
	var a, b unix.Stat_t
	must(t, unix.Stat(filepath.Join(dir, "a"), &a))
	must(t, unix.Stat(filepath.Join(dir, "b"), &b))
	ta, err := fsys.resolve("a")
	must(t, err)
	f, err := fsys.sameFile(ta, unix.O_RDONLY, &a)
	if err != nil {
		t.Fatalf("the same file: %v", err)
	}
	f.Close()
	if _, err := fsys.sameFile(ta, unix.O_RDONLY, &b); code(err) != fault.CodeIOError {
		t.Errorf("another file under the name: want IO_ERROR, got %v", err)
	}
}

// watchOpens watches path for opens (inotify: an O_PATH descriptor is
// none) and returns the bytes of events seen since, at each call; the
// test is skipped without inotify.
func watchOpens(t *testing.T, path string) func() int {
	t.Helper()
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(in) })
	if _, err := unix.InotifyAddWatch(in, path, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	return func() int {
		buf := make([]byte, 4096)
		n, err := unix.Read(in, buf)
		if err != nil {
			return 0
		}
		return n
	}
}
