package stalled

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"time"
)

// Unaccepted starts a loopback listener that never accepts, its backlog
// filled, so that a connection to it is never made (Linux drops the
// SYN of a connection its full backlog has no room for, as a
// blackholed address does), and returns its host:port; stop closes it
// and the connections that fill it.
func Unaccepted() (addr string, stop func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	sa := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	if err := syscall.Listen(fd, 0); err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	addr = "127.0.0.1:" + strconv.Itoa(got.(*syscall.SockaddrInet4).Port)
	var held []net.Conn
	stop = func() {
		syscall.Close(fd)
		for _, c := range held {
			c.Close()
		}
	}
	// Connect until a connection is not made: the backlog is full.
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return addr, stop, nil
			}
			stop()
			return "", nil, err
		}
		held = append(held, c)
	}
	stop()
	return "", nil, errors.New("the listener's backlog never filled")
}
