//go:build darwin || freebsd

package index

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the effective user of the process at the other end of conn,
// a Unix socket, as the kernel recorded it when the socket was connected
// or listened on (LOCAL_PEERCRED, getpeereid(3)'s source); false when it
// cannot be learnt.
func peerUID(conn net.Conn) (int, bool) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Xucred
	if raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED) }) != nil || err != nil || cred == nil {
		return 0, false
	}
	return int(cred.Uid), true
}
