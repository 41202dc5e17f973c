//go:build !linux

package index

import (
	"net"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory for lookups relative to it; without O_PATH a
// read-only open, which needs read permission on the directory.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// peerStopped is false where a Unix socket does not name its peer's
// process: a stopped watcher is waited for, watchTimeout at most.
func peerStopped(net.Conn) bool { return false }

// peerPid is 0 where a Unix socket does not name its peer's process.
func peerPid(net.Conn) int { return 0 }
