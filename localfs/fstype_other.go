//go:build !linux

package localfs

import "golang.org/x/sys/unix"

// kernelFSOf names the kernel file system fd lies on (kernelFSNamed, by
// the name statfs(2) gives it), "" for any other.
func kernelFSOf(fd int) string {
	var s unix.Statfs_t
	if err := unix.Fstatfs(fd, &s); err != nil {
		return ""
	}
	return kernelFSNamed(unix.ByteSliceToString(s.Fstypename[:]))
}

// onOverlay is false off Linux, which has no overlayfs.
func onOverlay(int) bool { return false }

// localTimes reports whether the directory fd lies on a file system of
// this machine's (MNT_LOCAL: not NFS, SMB or a FUSE mount not said
// local), whose kernel stamps every change to it by this clock.
func localTimes(fd int) bool {
	var s unix.Statfs_t
	return unix.Fstatfs(fd, &s) == nil && uint64(s.Flags)&unix.MNT_LOCAL != 0
}

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
