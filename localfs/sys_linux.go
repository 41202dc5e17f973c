package localfs

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// pathFlags open a file for its type and identity only: O_PATH opens
// nothing, so a FIFO's blocked writer is not released and a device's open
// has no effect.
const pathFlags = unix.O_PATH | unix.O_CLOEXEC

// mountProbeFlags open an entry to ask its file system: O_PATH without
// O_DIRECTORY, which (as a stat) leaves an automount point unmounted, so
// that a listing mounts nothing it does not enter.
const mountProbeFlags = pathFlags | unix.O_NOFOLLOW

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

// exclusiveRenames is whether renameExclusive may work here (it still
// fails on a file system without RENAME_NOREPLACE).
const exclusiveRenames = true

// reserve allocates the first size bytes of fd, keeping its size; false
// on a file system that cannot (EOPNOTSUPP).
func reserve(fd int, size int64) (bool, error) {
	for {
		err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, size)
		switch err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP, unix.ENOSYS:
			return false, nil
		}
		return false, err
	}
}

// pinned reports whether the entry name of dfd is immutable or
// append-only (chattr +i, +a): no one, root included, may replace it or
// rename over it, which x/sys's faccessat tells root of neither (see
// accessAt).
func pinned(dfd int, name string) bool {
	e, err := lstatEntry(dfd, name)
	return err == nil && e.pinned
}

// readsPastModes names whether this process may read past files' modes
// (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH in its effective set): root in a
// container that drops them reads what a plain user does.
func readsPastModes() string {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return "dac=unknown"
	}
	return fmt.Sprintf("dac=%d", data[0].Effective&(1<<unix.CAP_DAC_OVERRIDE|1<<unix.CAP_DAC_READ_SEARCH))
}

// setTimes sets the access and modification times of the file open as fd,
// to the nanosecond.
func setTimes(fd int, atime, mtime unix.Timespec) error {
	return unix.UtimesNanoAt(fd, "", []unix.Timespec{atime, mtime}, unix.AT_EMPTY_PATH)
}

// dirGivesGroup: on Linux a new file takes the directory's group only when
// the directory is set-group-ID, else the process's.
func dirGivesGroup(d *unix.Stat_t) bool { return d.Mode&unix.S_ISGID != 0 }

// unnamedFile makes a file with no name in the directory dfd (O_TMPFILE),
// gone once closed; an error where the file system has none (EOPNOTSUPP:
// FUSE, vfat).
func unnamedFile(dfd int) (int, error) {
	return unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
}

// mayChown reports whether this process may give a file any owner, and
// then its mode: it holds CAP_CHOWN and CAP_FOWNER (a chmod of a file not
// its own), which root without them (a container's --cap-drop CHOWN) does
// not, and a user other than root may.
var mayChown = sync.OnceValue(func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return os.Geteuid() == 0
	}
	const both = 1<<unix.CAP_CHOWN | 1<<unix.CAP_FOWNER
	return data[0].Effective&both == both
})
