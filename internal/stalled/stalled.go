// Package stalled serves a store that has stopped answering: a loopback
// listener that accepts every connection and never writes a byte, as a
// hung server or a half-open connection does. The tests of the S3
// client's idle timeout, at each level that sets it, share it.
package stalled

import "net"

// Listen starts one and returns its URL; stop closes it and every
// connection it holds, and returns once it has.
func Listen() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	return "http://" + ln.Addr().String(), func() {
		ln.Close()
		<-done
	}, nil
}
