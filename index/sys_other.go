//go:build !linux

package index

import "golang.org/x/sys/unix"

// dirFlags open a directory for lookups relative to it; without O_PATH a
// read-only open, which needs read permission on the directory.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
