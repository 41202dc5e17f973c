package s3fs_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

// cutGets is a transport that cuts the body of the first GET of a key
// holding part, whose Range starts at from, after cut bytes, as a
// connection reset does; then runs meanwhile, once.
type cutGets struct {
	part, from string
	cut        int
	meanwhile  func()
	mu         sync.Mutex
	done       bool
	gets       []string
}

func (c *cutGets) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || !strings.Contains(r.URL.Opaque+r.URL.Path, c.part) {
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets = append(c.gets, r.Header.Get("Range")+" "+r.Header.Get("If-Match"))
	if !c.done && strings.HasPrefix(r.Header.Get("Range"), "bytes="+c.from+"-") {
		c.done = true
		resp.Body = &resetAfter{ReadCloser: resp.Body, left: c.cut, then: c.meanwhile}
	}
	return resp, err
}

type resetAfter struct {
	io.ReadCloser
	left int
	then func()
}

func (b *resetAfter) Read(p []byte) (int, error) {
	if b.left == 0 {
		if b.then != nil {
			b.then()
			b.then = nil
		}
		return 0, syscall.ECONNRESET
	}
	n, err := b.ReadCloser.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

// A read whose GET is cut part way (a connection reset) goes on from
// where it stopped, in its open's GET as in a later ranged one: it failed
// IO_ERROR "connection reset by peer". An object replaced in between is
// STALE, never the bytes of two versions.
func TestACutReadGoesOn(t *testing.T) {
	bucket := s3test.Bucket(t)
	root := "s3://" + bucket + "/ws"
	setup, _ := openFS(t, root)
	ctx := t.Context()
	old := bytes.Repeat([]byte("old version....\n"), 300<<10/16)
	other := bytes.Repeat([]byte("NEW VERSION!!!!\n"), 300<<10/16)
	for _, tc := range []struct {
		name, from string
		changed    bool
	}{
		{"the open's GET", "0", false},
		{"a later GET", "65536", false},
		{"the open's GET, the object replaced", "0", true},
		{"a later GET, the object replaced", "65536", true},
	} {
		if _, err := setup.WriteFile(ctx, "f", old, backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		cut := &cutGets{part: "/ws/f", from: tc.from, cut: 5000}
		if tc.changed {
			cut.meanwhile = func() {
				if _, err := setup.WriteFile(ctx, "f", other, backend.WriteOptions{}); err != nil {
					t.Error(err)
				}
			}
		}
		f := transportFS(t, root, cut)
		r, err := f.Open(ctx, "f")
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
			r.Close()
		}
		switch e := fault.AsError(err); {
		case !tc.changed && (err != nil || !bytes.Equal(got, old)):
			t.Errorf("%s cut: %d bytes, %v; want the %d of the object (GETs %q)", tc.name, len(got), err, len(old), cut.gets)
		case tc.changed && bytes.Contains(got, old[:16]) && bytes.Contains(got, other[:16]):
			t.Errorf("%s: the read spliced the two versions (GETs %q)", tc.name, cut.gets)
		case tc.changed && err == nil && !bytes.Equal(got, other):
			t.Errorf("%s: %d bytes, want STALE or the new version whole", tc.name, len(got))
		case tc.changed && err != nil && (e == nil || e.Code != fault.CodeStale):
			t.Errorf("%s: %v, want STALE (GETs %q)", tc.name, err, cut.gets)
		}
	}
}
