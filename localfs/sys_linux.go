package localfs

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pathFlags open a file for its type and identity only: O_PATH opens
// nothing, so a FIFO's blocked writer is not released and a device's open
// has no effect.
const pathFlags = unix.O_PATH | unix.O_CLOEXEC

// reopen opens the file an O_PATH descriptor names, with flags, through its
// /proc/self/fd link: the very file checked, not whatever now has its name.
func reopen(pathFile *os.File, flags int) (*os.File, error) {
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", pathFile.Fd()), flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), pathFile.Name()), nil
}

// renameExclusive is renameat2 with RENAME_NOREPLACE.
func renameExclusive(fromDir int, from string, toDir int, to string) error {
	return unix.Renameat2(fromDir, from, toDir, to, unix.RENAME_NOREPLACE)
}

// reserve allocates the first size bytes of fd, keeping its size. A file
// system that cannot (EOPNOTSUPP) gets the write unreserved.
func reserve(fd int, size int64) error {
	for {
		err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, size)
		switch err {
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP, unix.ENOSYS:
			return nil
		}
		return err
	}
}
