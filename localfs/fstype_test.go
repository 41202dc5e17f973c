package localfs

import "testing"

// macOS and FreeBSD name a file system in statfs(2) (f_fstypename), which
// kernelFSOf asks there: those that are windows on the kernel are denied
// by that name, wherever mounted (a jail's devfs, linprocfs under
// /compat/linux), as Linux's are by magic number; file systems of files
// are not, whatever their case.
func TestKernelFSNamed(t *testing.T) {
	for name, want := range map[string]string{
		"devfs":     "devfs",
		"procfs":    "procfs",
		"linprocfs": "linprocfs",
		"linsysfs":  "linsysfs",
		"fdescfs":   "fdescfs",
		"fdesc":     "fdesc",
		"mqueuefs":  "mqueuefs",
		"apfs":      "",
		"ufs":       "",
		"zfs":       "",
		"tmpfs":     "",
		"nullfs":    "",
		"nfs":       "",
		"msdosfs":   "",
		"DEVFS":     "",
		"":          "",
	} {
		if got := kernelFSNamed(name); got != want {
			t.Errorf("kernelFSNamed(%q) = %q, want %q", name, got, want)
		}
	}
}
