//go:build !linux

package stalled

import "errors"

// Unaccepted is a listener whose backlog is full, made on Linux only.
func Unaccepted() (addr string, stop func(), err error) {
	return "", nil, errors.New("a listener that never accepts is made on Linux only")
}
