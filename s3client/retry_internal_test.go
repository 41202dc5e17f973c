package s3client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// flakyStore answers its first failures requests with status and an S3
// error of code, then 200 (an empty listing to a list); it counts the
// requests.
func flakyStore(t *testing.T, failures int, status int, code string) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(n.Add(1)) <= failures {
			w.WriteHeader(status)
			fmt.Fprintf(w, "<Error><Code>%s</Code><Message>try again</Message></Error>", code)
			return
		}
		w.Header().Set("ETag", `"e"`)
		if r.URL.Query().Has("list-type") {
			fmt.Fprint(w, "<ListBucketResult></ListBucketResult>")
		}
	}))
	t.Cleanup(srv.Close)
	return idleClient(t, srv.URL, time.Minute), &n
}

// TestReadsRetryTransientErrors: a read the store answers 500, 502, 503
// or 504 (SlowDown, InternalError) is sent again, a few times, as the AWS
// SDKs do: under load versitygw answered a listing 500 once, and the
// whole transaction failed IO_ERROR. A write is not sent again here: a
// conditional PUT the store made before failing would then be refused as
// stale, its success reported a failure.
func TestReadsRetryTransientErrors(t *testing.T) {
	ctx := context.Background()
	reads := map[string]func(*Client) error{
		"head": func(c *Client) error { _, err := c.Head(ctx, "a"); return err },
		"get": func(c *Client) error {
			rc, err := c.Get(ctx, "a", "", 0, 0)
			if err == nil {
				rc.Close()
			}
			return err
		},
		"list": func(c *Client) error {
			for _, err := range c.List(ctx, "", "/", 0, "") {
				return err
			}
			return nil
		},
	}
	waits := retryWaits
	retryWaits = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	defer func() { retryWaits = waits }()
	for name, read := range reads {
		for _, status := range []int{500, 502, 503, 504} {
			c, n := flakyStore(t, len(retryWaits), status, "SlowDown")
			if err := read(c); err != nil || n.Load() != int32(len(retryWaits)+1) {
				t.Errorf("%s after %d answers %d: %v in %d requests, want success", name, len(retryWaits), status, err, n.Load())
			}
		}
		c, n := flakyStore(t, len(retryWaits)+1, 503, "SlowDown")
		var e *Error
		if err := read(c); !errors.As(err, &e) || e.Status != 503 || n.Load() != int32(len(retryWaits)+1) {
			t.Errorf("%s answered 503 every time: %v in %d requests, want the 503 after %d", name, err, n.Load(), len(retryWaits)+1)
		}
		c, n = flakyStore(t, 1, 403, "AccessDenied")
		if err := read(c); !errors.As(err, &e) || e.Status != 403 || n.Load() != 1 {
			t.Errorf("%s answered 403: %v in %d requests, want it at once", name, err, n.Load())
		}
	}
	c, n := flakyStore(t, 1, 500, "InternalError")
	if _, err := c.Put(ctx, "a", []byte("x"), Condition("", "*")); err == nil || n.Load() != 1 {
		t.Errorf("a PUT answered 500: %v in %d requests, want the 500 at once", err, n.Load())
	}
	// A caller that gives up is not kept waiting for the next try: the
	// store cancels the request's context as it answers.
	retryWaits = waits
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel()
		w.WriteHeader(503)
	}))
	defer srv.Close()
	start := time.Now()
	if _, err := idleClient(t, srv.URL, time.Minute).Head(cctx, "a"); !errors.Is(err, context.Canceled) || time.Since(start) >= retryWaits[0] {
		t.Errorf("a HEAD cancelled while it waited to try again: %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}
