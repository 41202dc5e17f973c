//go:build !darwin

package localfs

import "golang.org/x/sys/unix"

// fileSync is fsync(2), which on Linux and FreeBSD waits for the drive.
func fileSync(fd int) error { return unix.Fsync(fd) }
