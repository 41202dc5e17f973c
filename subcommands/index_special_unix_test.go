//go:build unix

package subcommands

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// index of a FIFO or a device says what the path is, as ls's
// NOT_A_DIRECTORY and read's NOT_REGULAR do: it said "the path is a
// file, not a directory" of a character device.
func TestIndexOfASpecialFileNamesIt(t *testing.T) {
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("a\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"f": "the path is a file, not a directory.", "fifo": "the path is a special file (a FIFO, socket or device), not a directory."}
	if syscall.Mknod(filepath.Join(dir, "dev"), syscall.S_IFCHR|0o644, 1<<8|3) == nil {
		want["dev"] = want["fifo"]
	}
	for name, msg := range want {
		code, _, errs := run(t, "", "--root", dir, "index", name)
		if code == 0 || !strings.Contains(errs, `"NOT_A_DIRECTORY"`) || !strings.Contains(errs, msg) {
			t.Errorf("index %s: %d %s, want NOT_A_DIRECTORY %q", name, code, errs, msg)
		}
	}
}
