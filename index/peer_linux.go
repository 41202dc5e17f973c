package index

import "golang.org/x/sys/unix"

// sockPeerUID is the user of a Unix socket's peer by SO_PEERCRED.
func sockPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
