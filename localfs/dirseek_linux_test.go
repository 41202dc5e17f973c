package localfs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// The search for a moved directory never opens a mount point: opened, its
// file system is entered (an automount triggered, a hung network file
// system waited on with no bound) before its device says it is another.
func TestSeekDirOpensNoMountPoint(t *testing.T) {
	needRoot(t)
	parent := t.TempDir()
	mnt := filepath.Join(parent, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	must(t, os.Mkdir(filepath.Join(parent, "dir"), 0o755))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount is not permitted here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	must(t, err)
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, mnt, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	must(t, unix.Stat(parent, &st))
	// A directory renamed, then removed: sought in each directory beside
	// its old name, mnt among them.
	e := journalEntry{Dir: filepath.Join(parent, "gone"), DirIdentity: strconv.FormatUint(uint64(st.Dev), 10) + ":1"}
	(&dirsFound{}).locate(&e, unix.ENOENT)
	buf := make([]byte, 4096)
	if n, _ := unix.Read(in, buf); n > 0 {
		t.Errorf("the search opened the mount point %s", mnt)
	}
}
