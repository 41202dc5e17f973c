package s3client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestPrepare: the step runs before the first request, its own requests
// go through, it runs again after a failure and never after a success,
// concurrent requests wait for it, and its failure is never taken for the
// store's answer to the request that ran it.
func TestPrepare(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<Error><Code>NoSuchKey</Code><Message>no key</Message></Error>`))
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, Bucket: "b", Credentials: Credentials{AccessKey: "a", SecretKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	fail := errors.New("recovery failed")
	c.Prepare(func(ctx context.Context) error {
		n := runs.Add(1)
		if _, err := c.Head(ctx, "journal"); err == nil {
			t.Error("the step's own request did not reach the server")
		}
		if n == 1 {
			return fail
		}
		return nil
	})
	_, err = c.Head(context.Background(), "k")
	var pe *PrepareError
	if !errors.As(err, &pe) || !errors.Is(err, fail) {
		t.Fatalf("first request: %v, want the step's error", err)
	}
	if code, status := Code(err); code != "" || status != 0 {
		t.Errorf("Code of the step's error = %q %d, want none: it is not the store's answer", code, status)
	}
	if got := served.Load(); got != 1 {
		t.Errorf("%d requests served after a failed step, want only the step's own", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Head(context.Background(), "k"); errors.As(err, &pe) {
				t.Errorf("a request after the failure: %v", err)
			} else if code, _ := Code(err); code != "NoSuchKey" {
				t.Errorf("a request's answer: %v, want the store's NoSuchKey", err)
			}
		})
	}
	wg.Wait()
	if got := runs.Load(); got != 2 {
		t.Errorf("the step ran %d times, want 2 (failed, then succeeded once for all)", got)
	}
	if got := served.Load(); got != 1+1+8 {
		t.Errorf("%d requests served, want 10", got)
	}
}
