package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets/localdir"
	"github.com/agentfs/agentfs/internal/stalled"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFreePort sets VAR to a loopback port that was free a moment ago, for
// a server the script starts: freeport PORT.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdWaitListen waits until ADDR accepts connections, polling for at most
// 10 seconds: a server started in the background is ready once it does.
func cmdWaitListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitlisten HOST:PORT")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", args[0], time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s after 10s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdHoldConns opens N connections to ADDR and holds them until FILE is
// not empty (for at most 10 seconds), then closes them: a server with a
// low open-file limit fails to accept them meanwhile, and logs it in
// FILE. holdconns ADDR N FILE
func cmdHoldConns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: holdconns ADDR N FILE")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	for range n {
		c, err := net.Dial("tcp", args[0])
		ts.Check(err)
		defer c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if fi, err := os.Stat(args[2]); err == nil && fi.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s is still empty after 10s", args[2])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdStalledStore sets VAR to the URL of a loopback listener that accepts
// every connection and never answers, as a store that stopped answering
// or a half-open connection does, until the script ends:
// stalledstore VAR.
func cmdStalledStore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stalledstore VAR")
	}
	url, stop, err := stalled.Listen()
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv(args[0], url)
}

// cmdStallGet starts a GET of URL, reads the start of the answer and then
// reads no more, holding the connection until the script ends: a download
// in flight whose client has stalled.
func cmdStallGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stallget URL")
	}
	u, err := url.Parse(args[0])
	ts.Check(err)
	c, err := net.Dial("tcp", u.Host)
	ts.Check(err)
	ts.Defer(func() { c.Close() })
	_, err = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), u.Host)
	ts.Check(err)
	start := make([]byte, 1024)
	_, err = io.ReadFull(c, start)
	ts.Check(err)
	if !strings.HasPrefix(string(start), "HTTP/1.1 200 ") {
		ts.Fatalf("stallget: the answer starts %q", start[:min(len(start), 40)])
	}
}

// cmdHTTPGet fetches URL with plain HTTP and asserts the status; the body
// goes to the file body, the headers to headers. With -wait, a 503 (a
// server short of descriptors for a while) is asked again, for at most 10
// seconds: httpget [-wait] [-H 'Name: value']... URL STATUS.
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	var header []string
	wait := len(args) > 0 && args[0] == "-wait"
	if wait {
		args = args[1:]
	}
	for len(args) > 2 && args[0] == "-H" {
		header, args = append(header, args[1]), args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpget [-wait] [-H 'Name: value']... URL STATUS")
	}
	deadline := time.Now().Add(10 * time.Second)
	var (
		resp *http.Response
		body []byte
	)
	for {
		req, err := http.NewRequest(http.MethodGet, args[0], nil)
		ts.Check(err)
		for _, h := range header {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(k, strings.TrimSpace(v))
		}
		resp, err = http.DefaultClient.Do(req)
		ts.Check(err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Check(err)
		if !wait || resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Check(os.WriteFile(ts.MkAbs("body"), body, 0o644))
	var hs strings.Builder
	for k, vs := range resp.Header {
		for _, v := range vs {
			fmt.Fprintf(&hs, "%s: %s\n", k, v)
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs("headers"), []byte(hs.String()), 0o644))
	if want := args[1]; strconv.Itoa(resp.StatusCode) != want {
		ts.Fatalf("GET %s: status %d, want %s: %s", args[0], resp.StatusCode, want, body)
	}
}

// cmdExpiredLink sets VAR to LINK signed again, with the state directory's
// key, to have expired a minute ago: a link as old as that, without
// waiting for one to age. expiredlink VAR LINK
func cmdExpiredLink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expiredlink VAR LINK")
	}
	key, err := localdir.LoadKey(ts.Getenv("AGENTFS_STATE_DIR"))
	ts.Check(err)
	u, err := url.Parse(args[1])
	ts.Check(err)
	id, name, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	ts.Setenv(args[0], localdir.Link(u.Scheme+"://"+u.Host, key, id, name, time.Now().Add(-time.Minute)))
}
