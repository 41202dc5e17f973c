package localfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// fileSync asks the drive to write fd's data out (F_FULLFSYNC): fsync(2)
// on macOS only hands it to the drive, whose cache may keep it, or write
// a rename before the bytes it names, past a power loss. Go's
// (*os.File).Sync, which the index build uses, and git do the same. A file
// system that cannot (an SMB mount: ENOTSUP, EINVAL) gets fsync(2).
func fileSync(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return unix.Fsync(fd)
	}
	return err
}
