package index

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the effective user of the process at the other end of conn,
// a Unix socket, as the kernel recorded it when the socket was connected
// or listened on (SO_PEERCRED); false when it cannot be learnt.
func peerUID(conn net.Conn) (int, bool) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	if raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }) != nil || err != nil || cred == nil {
		return 0, false
	}
	return int(cred.Uid), true
}
