//go:build darwin || freebsd

package index

import "golang.org/x/sys/unix"

// sockPeerUID is the user of a Unix socket's peer by LOCAL_PEERCRED,
// getpeereid(3)'s source.
func sockPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
