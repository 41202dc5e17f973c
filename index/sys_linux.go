package index

import (
	"bytes"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory for lookups relative to it: O_PATH needs no
// read permission and reads nothing.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// peerStopped reports whether the process that listens at the other end
// of conn, a Unix socket, is stopped (SIGSTOP, a terminal's ^Z), by its
// credentials on the socket, not a pid file: it answers nothing until
// continued, and a search waited watchTimeout for it every time.
func peerStopped(conn net.Conn) bool {
	pid := peerPid(conn)
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// The state follows the command's name, in parentheses that the name
	// itself may hold.
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'T' || stat[i+2] == 't'
}

// peerPid is the process at the other end of conn, a Unix socket, as the
// kernel recorded it when the socket was connected or listened on
// (SO_PEERCRED); 0 when it cannot be learnt.
func peerPid(conn net.Conn) int {
	var cred *unix.Ucred
	if !sockControl(conn, func(fd int) { cred, _ = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED) }) || cred == nil || cred.Pid <= 0 {
		return 0
	}
	return int(cred.Pid)
}
