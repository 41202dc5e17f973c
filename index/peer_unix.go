//go:build linux || darwin || freebsd

package index

import "net"

// peerUID is the effective user of the process at the other end of conn,
// a Unix socket, as the kernel recorded it when the socket was connected
// or listened on (sockPeerUID); false when it cannot be learnt.
func peerUID(conn net.Conn) (int, bool) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	uid := -1
	if raw.Control(func(fd uintptr) { uid, err = sockPeerUID(int(fd)) }) != nil || err != nil || uid < 0 {
		return 0, false
	}
	return uid, true
}
