package localfs

import (
	"fmt"
	"os"
	"strconv"

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

// openRegularAt opens the regular file name of the directory dirfd for
// reading, never following a link, and stats it into st. The name is first
// opened with O_PATH, which opens nothing: a FIFO, device or link put in a
// listed file's place is refused (errNotRegular) before any open for
// reading, so a blocked writer is never released nor a device's open run.
// The file is then opened through its /proc/self/fd link: the very file
// checked, not whatever now has its name.
func openRegularAt(dirfd int, name string, st *unix.Stat_t) (int, error) {
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	if err := unix.Fstat(pfd, st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, errNotRegular
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		// No /proc: open by name again, and only the same file.
		was := *st
		return openReadAt(dirfd, name, st, &was)
	}
	return fd, err
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
