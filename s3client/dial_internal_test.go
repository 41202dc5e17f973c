package s3client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/internal/stalled"
)

// A connection the store never makes (a full backlog, a blackholed
// address), or never completes a TLS handshake on, is bounded by the idle
// timeout a caller sets, neither more nor less: it was cut at Go's own
// defaults (net.Dialer's 30 s, the transport's 10 s handshake), a caller
// of --s3-idle-timeout 120s cut at 30. Those defaults are made short here
// (100 ms) so the test shows which bound applies without waiting them out.
func TestConnectionIsBoundedByTheIdleTimeout(t *testing.T) {
	short := http.DefaultTransport.(*http.Transport).Clone()
	short.DialContext = (&net.Dialer{Timeout: 100 * time.Millisecond}).DialContext
	short.TLSHandshakeTimeout = 100 * time.Millisecond
	saved := http.DefaultTransport
	http.DefaultTransport = short
	t.Cleanup(func() { http.DefaultTransport = saved })

	addr, stop, err := stalled.Unaccepted()
	if err != nil {
		t.Skip(err)
	}
	defer stop()
	const idle = 600 * time.Millisecond
	for name, endpoint := range map[string]string{
		"dial":          "http://" + addr,
		"tls handshake": strings.Replace(stalledStore(t), "http:", "https:", 1),
	} {
		c := idleClient(t, endpoint, idle)
		start := time.Now()
		_, err := c.Head(context.Background(), "a")
		took := time.Since(start)
		var stall *StallError
		if !errors.As(err, &stall) || stall.Wait != idle || took < idle {
			t.Errorf("%s: %v after %s, want a StallError of %s after it", name, err, took.Round(time.Millisecond), idle)
		}
	}
}
