package localfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
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

// Out of descriptors, whether a directory holds a root is not known: the
// check fails as every other EMFILE does (the path, the ulimit -n hint),
// and a ".." it could not open is not taken for the top of the walk (a
// directory that is no ancestor). Free is how many descriptors are left:
// none fails its dup, one its open of "..".
func TestRefuseHeldRootOutOfDescriptors(t *testing.T) {
	for _, free := range []int{0, 1} {
		t.Run(fmt.Sprint(free), func(t *testing.T) {
			fsys, dir, _ := newRecoverFS(t)
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			var st unix.Stat_t
			must(t, unix.Stat(filepath.Join(dir, "sub"), &st))
			release := exhaustDescriptors(t, free)
			err := fsys.refuseHeldRoot(&st, "sub")
			release()
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.CodeIOError || fe.Path != "sub" || !strings.Contains(fe.Hint, "ulimit -n") {
				t.Fatalf("refuseHeldRoot with %d descriptors free: %v; want IO_ERROR naming sub, with the ulimit -n hint", free, err)
			}
		})
	}
}

// exhaustDescriptors opens descriptors until the process has free left
// (under a limit lowered to 256), and returns what closes them again; the
// test's end closes them too, and restores the limit.
func exhaustDescriptors(t *testing.T, free int) (release func()) {
	t.Helper()
	var lim unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	saved := lim
	lim.Cur = min(lim.Cur, 256)
	must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	t.Cleanup(func() { must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &saved)) })
	var fds []int
	for {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, fd)
	}
	if len(fds) < free {
		t.Fatalf("only %d descriptors free", len(fds))
	}
	for _, fd := range fds[:free] {
		unix.Close(fd)
	}
	fds = fds[free:]
	release = func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
		fds = nil
	}
	t.Cleanup(release)
	return release
}

// An ancestor the caller may not search (mode 0600) ends the walk up, as
// the top: its ".." cannot be opened (EACCES), and a directory it does not
// hold is not refused for it. An error there refused every rm -r and mv
// of a directory under such a root.
func TestHoldsDirectoryBelowUnsearchableAncestor(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root searches every directory; run the tests as another user (CI's unprivileged pass does)")
	}
	base := t.TempDir()
	low := filepath.Join(base, "a", "b")
	must(t, os.MkdirAll(filepath.Join(low, "sub"), 0o755))
	d, err := os.Open(low)
	must(t, err)
	defer d.Close()
	var sub, other unix.Stat_t
	must(t, unix.Stat(filepath.Join(low, "sub"), &sub))
	must(t, unix.Stat(t.TempDir(), &other))
	must(t, os.Chmod(filepath.Join(base, "a"), 0o600))
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "a"), 0o755) })
	for _, st := range []*unix.Stat_t{&sub, &other} {
		if held, err := holdsDirectory(st, int(d.Fd())); err != nil || held {
			t.Fatalf("holdsDirectory(%d, %s) below an ancestor of mode 0600 = %v, %v; want false, nil", st.Ino, low, held, err)
		}
	}
}
