package s3client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

// closingStore is the URL of a store that reads each request's head, then
// reads readBody bytes of its body, and closes the connection at once,
// unanswered: with bytes left unread the close is a reset.
func closingStore(t *testing.T, readBody func(size int64) int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				_, _ = io.CopyN(io.Discard, req.Body, readBody(req.ContentLength))
				_ = conn.(*net.TCPConn).SetLinger(0)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// A PUT whose connection fails before its body went out whole says so
// (ErrUnsent: it cannot have landed); one whose body went out whole does
// not, since the store may have acted on it before the connection failed.
func TestUnsentBody(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 8<<20)
	for _, tc := range []struct {
		name     string
		readBody func(int64) int64
		unsent   bool
	}{
		{"closed after the head", func(int64) int64 { return 0 }, true},
		{"closed after the body", func(n int64) int64 { return n }, false},
	} {
		c := idleClient(t, closingStore(t, tc.readBody), DefaultIdleTimeout)
		_, err := c.Put(context.Background(), "k", body, Condition("e", ""))
		if err == nil || errors.Is(err, ErrUnsent) != tc.unsent {
			t.Errorf("%s: %v; want ErrUnsent %v", tc.name, err, tc.unsent)
		}
	}
}

// A change of no body (an empty file's PUT) to a store that refuses the
// connection is unsent too: the connection was never made. It was taken
// for a change whose answer was lost, which may have landed.
func TestUnsentWithoutAConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused
	c := idleClient(t, "http://"+addr, DefaultIdleTimeout)
	_, err = c.Put(context.Background(), "k", nil, Condition("", "*"))
	if err == nil || !errors.Is(err, ErrUnsent) || AnswerLost(err) {
		t.Errorf("an empty PUT, its connection refused: %v; want ErrUnsent", err)
	}
}
