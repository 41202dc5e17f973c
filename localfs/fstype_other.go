//go:build !linux

package localfs

// kernelFSOf finds no kernel file system off Linux, where procfs (when
// mounted at all) is denied by its path and identity.
func kernelFSOf(int) string { return "" }

// mountID is unknown off Linux: mounts are told apart by device alone.
func mountID(int) (uint64, bool) { return 0, false }

// isMountPoint is unknown off Linux: a move's EBUSY names its destination.
func isMountPoint(int, string) bool { return false }

// mountIDAt is unknown off Linux, as mountID is.
func mountIDAt(int, string) (uint64, bool) { return 0, false }
