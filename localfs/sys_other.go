//go:build !linux

package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// pathFlags: without O_PATH, a file is opened for reading to learn its
// type, without blocking; a FIFO's writer blocked in open(2) is then
// released, which only Linux's O_PATH avoids.
const pathFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC

// mountProbeFlags open a directory to ask its file system; only a
// directory, never a FIFO or a device put in its place.
const mountProbeFlags = pathFlags | unix.O_NOFOLLOW | unix.O_DIRECTORY

// reopen is a second descriptor of a file already open for reading.
func reopen(pathFile *os.File, _ int) (*os.File, error) {
	fd, err := unix.Dup(int(pathFile.Fd()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), pathFile.Name()), nil
}

// reserve cannot allocate without changing the size here: an in-place
// write reserves by writing past the old end first.
func reserve(int, int64) (bool, error) { return false, nil }

// pinned is unknown off Linux (statx's attributes): the kernel's own
// answer to a change stands.
func pinned(int, string) bool { return false }

// readsPastModes: off Linux, root's rights are its uid's, which
// credentials names.
func readsPastModes() string { return "" }

// setTimes sets the access and modification times of the file open as fd,
// to the microsecond (futimes(2): the one call darwin and freebsd share).
func setTimes(fd int, atime, mtime unix.Timespec) error {
	return unix.Futimes(fd, []unix.Timeval{unix.NsecToTimeval(atime.Nano()), unix.NsecToTimeval(mtime.Nano())})
}

// dirGivesGroup: on the BSDs (macOS too) a new file always takes its
// directory's group, set-group-ID or not: a file of the user's own in
// /tmp (group wheel) keeps its group on a replace, though the user may not
// be in wheel.
func dirGivesGroup(*unix.Stat_t) bool { return true }

// unnamedFile: O_TMPFILE is Linux's; elsewhere a file made has a name.
func unnamedFile(int) (int, error) { return -1, unix.EOPNOTSUPP }

// mayChown reports whether this process may give a file any owner: root.
func mayChown() bool { return os.Geteuid() == 0 }
