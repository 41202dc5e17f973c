//go:build linux || darwin || freebsd

package index

import "net"

// peerUID is the effective user of the process at the other end of conn,
// a Unix socket, as the kernel recorded it when the socket was connected
// or listened on (sockPeerUID); false when it cannot be learnt.
func peerUID(conn net.Conn) (int, bool) {
	uid := -1
	var err error
	if !sockControl(conn, func(fd int) { uid, err = sockPeerUID(fd) }) || err != nil || uid < 0 {
		return 0, false
	}
	return uid, true
}

// sockControl runs f on the descriptor of conn, a Unix socket; false when
// conn is none or its descriptor cannot be reached.
func sockControl(conn net.Conn, f func(fd int)) bool {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	return raw.Control(func(fd uintptr) { f(int(fd)) }) == nil
}
