package localfs

import "golang.org/x/sys/unix"

// kernelFS names the file systems that are windows on the kernel, not file
// work: reading them discloses processes, devices and keys wherever they
// are mounted, so they are denied by type (a second procfs mounted inside
// a root is as much /proc as /proc is). devtmpfs shares tmpfs's magic and
// cannot be told apart; its device nodes are NOT_REGULAR anyway.
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.BPF_FS_MAGIC:        "bpf",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.SMACK_MAGIC:         "smackfs",
	unix.NSFS_MAGIC:          "nsfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
}

// RemoteFS are the magic numbers (statfs(2)) of file systems whose files
// other machines change, or whose times are a server's (its clock, which
// may lag this one's) or made up (FUSE's object stores give a directory
// the mount's time whatever is added to it): their changes raise no event
// here (the index's watcher), and a directory's times there prove nothing
// of its listing (the walk's memo of listings).
var RemoteFS = map[int64]bool{
	unix.NFS_SUPER_MAGIC:  true,
	unix.SMB_SUPER_MAGIC:  true,
	unix.SMB2_SUPER_MAGIC: true,
	unix.CIFS_SUPER_MAGIC: true,
	unix.FUSE_SUPER_MAGIC: true,
	unix.V9FS_MAGIC:       true,
	unix.CEPH_SUPER_MAGIC: true,
	unix.AFS_SUPER_MAGIC:  true,
	unix.CODA_SUPER_MAGIC: true,
	0x01161970:            true, // GFS2
	0x0BD00BD0:            true, // Lustre
	0x47504653:            true, // GPFS
	0x7461636F:            true, // OCFS2
}

// localTimes reports whether the directory fd lies on a file system of
// this machine's, whose kernel stamps every change to it by this clock
// (not one of RemoteFS).
func localTimes(fd int) bool {
	var s unix.Statfs_t
	return unix.Fstatfs(fd, &s) == nil && !RemoteFS[int64(s.Type)]
}

// kernelFSOf names the kernel file system fd lies on, "" for any other.
func kernelFSOf(fd int) string {
	var s unix.Statfs_t
	if err := unix.Fstatfs(fd, &s); err != nil {
		return ""
	}
	return kernelFS[int64(s.Type)]
}

// onOverlay reports whether the directory fd lies on an overlay file
// system (a container's workspace), whose directories of a lower layer
// (an image's) are renamed only with redirect_dir=on: rename(2) of one
// is EXDEV, even within its own directory.
func onOverlay(fd int) bool {
	var s unix.Statfs_t
	return unix.Fstatfs(fd, &s) == nil && int64(s.Type) == unix.OVERLAYFS_SUPER_MAGIC
}

// mountID is the id of the mount fd lies on (statx, Linux 5.8 and later), so
// that a bind mount of the same file system is told from its parent.
func mountID(fd int) (uint64, bool) { return mountIDAt(fd, "") }

// lstatEntry is fstatat(2) of the entry name of the directory dfd, not
// followed, as far as a tree's removal reads it (type, mode, owner and
// group, device and inode), with the id of the mount it lies on and
// whether it is immutable or append-only: one statx, where a stat and a
// statx for the mount id made rm -r a third slower. The group is what a
// move across file systems checks its copy can keep (acrossOwnerRefused).
func lstatEntry(dfd int, name string) (treeEntry, error) {
	var sx unix.Statx_t
	if err := unix.Statx(dfd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_UID|unix.STATX_GID|unix.STATX_INO|unix.STATX_MNT_ID, &sx); err != nil {
		return treeEntry{}, err
	}
	const pin = unix.STATX_ATTR_IMMUTABLE | unix.STATX_ATTR_APPEND
	return treeEntry{
		st:     unix.Stat_t{Mode: uint32(sx.Mode), Uid: sx.Uid, Gid: sx.Gid, Dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), Ino: sx.Ino},
		mnt:    sx.Mnt_id,
		hasMnt: sx.Mask&unix.STATX_MNT_ID != 0,
		pinned: sx.Attributes&sx.Attributes_mask&pin != 0,
	}, nil
}

// isMountPoint reports whether the entry name of the directory dfd is a
// mount point: its mount id is not the directory's.
func isMountPoint(dfd int, name string) bool {
	dir, ok := mountID(dfd)
	at, atOK := mountIDAt(dfd, name)
	return ok && atOK && dir != at
}

// mountIDAt is mountID of the entry name of the directory dfd, not
// followed: a file bind-mounted over another is a mount of its own.
func mountIDAt(dfd int, name string) (uint64, bool) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var sx unix.Statx_t
	if err := unix.Statx(dfd, name, flags, unix.STATX_MNT_ID, &sx); err != nil || sx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, false
	}
	return sx.Mnt_id, true
}
