//go:build !linux

package localfs

import "golang.org/x/sys/unix"

// kernelFSOf finds no kernel file system off Linux, where procfs (when
// mounted at all) is denied by its path and identity.
func kernelFSOf(int) string { return "" }

// mountID is unknown off Linux: mounts are told apart by device alone.
func mountID(int) (uint64, bool) { return 0, false }

// lstatMount is fstatat(2) off Linux, where the mount id is unknown.
func lstatMount(dfd int, name string, st *unix.Stat_t) (uint64, bool, error) {
	return 0, false, unix.Fstatat(dfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}

// isMountPoint is unknown off Linux: a move's EBUSY names its destination.
func isMountPoint(int, string) bool { return false }
