//go:build !linux

package localfs

import "golang.org/x/sys/unix"

// kernelFSOf finds no kernel file system off Linux, where procfs (when
// mounted at all) is denied by its path and identity.
func kernelFSOf(int) string { return "" }

// mountID is unknown off Linux: mounts are told apart by device alone.
func mountID(int) (uint64, bool) { return 0, false }

// lstatEntry is fstatat(2) off Linux, where the mount id is unknown, and
// a file's flags (chflags(1)) are left to the removal to meet.
func lstatEntry(dfd int, name string) (treeEntry, error) {
	var e treeEntry
	return e, unix.Fstatat(dfd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW)
}

// isMountPoint is unknown off Linux: a move's EBUSY names its destination.
func isMountPoint(int, string) bool { return false }
