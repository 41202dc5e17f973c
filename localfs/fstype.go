package localfs

// kernelFSNames are the file systems of macOS and FreeBSD that are windows
// on the kernel, not file work, by the name statfs(2) gives them
// (f_fstypename): devfs (devices; a jail's, or one mounted anywhere),
// procfs, linprocfs and linsysfs (processes, Linux's /proc and /sys under
// /compat/linux), fdescfs and macOS's fdesc (every descriptor of the
// process that reads it, which reopens them), mqueuefs (message queues).
// Linux's are told by magic number (kernelFS), which these systems do not
// give.
var kernelFSNames = map[string]bool{
	"devfs":     true,
	"procfs":    true,
	"linprocfs": true,
	"linsysfs":  true,
	"fdescfs":   true,
	"fdesc":     true,
	"mqueuefs":  true,
}

// kernelFSNamed is name when the file system so named (f_fstypename) is a
// kernel file system, "" for any other.
func kernelFSNamed(name string) string {
	if kernelFSNames[name] {
		return name
	}
	return ""
}
