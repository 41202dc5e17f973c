package index

import "golang.org/x/sys/unix"

// dirFlags open a directory for lookups relative to it: O_PATH needs no
// read permission and reads nothing.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
