package localfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// An ancestor the caller may go through but not list (mode 0300) does not
// end the walk up: the directory above it still holds the one below, or
// a root under such a directory could be moved away by another name.
func TestHoldsDirectoryThroughUnreadableAncestor(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory; run the tests as another user (CI's unprivileged pass does)")
	}
	base := t.TempDir()
	low := filepath.Join(base, "a", "b", "c")
	must(t, os.MkdirAll(low, 0o755))
	d, err := os.Open(low)
	must(t, err)
	defer d.Close()
	must(t, os.Chmod(filepath.Join(base, "a"), 0o300))
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "a"), 0o755) })
	var st unix.Stat_t
	must(t, unix.Stat(base, &st))
	held, err := holdsDirectory(&st, int(d.Fd()))
	if err != nil || !held {
		t.Fatalf("holdsDirectory(%s, %s) = %v, %v; want true", base, low, held, err)
	}
}
