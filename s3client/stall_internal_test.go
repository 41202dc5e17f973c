package s3client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/internal/stalled"
)

// stalledStore is the URL of a listener that accepts every connection
// and never answers, as a stalled store or a half-open connection does.
func stalledStore(t *testing.T) string {
	t.Helper()
	url, stop, err := stalled.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

func idleClient(t *testing.T, endpoint string, idle time.Duration) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: endpoint, Bucket: "b", Credentials: Credentials{AccessKey: "k", SecretKey: "s"}, IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every request to a store that never answers fails with a StallError
// once no byte moved for the idle timeout: with none, a read, ls or write
// waited for ever.
func TestRequestToAStalledStoreFails(t *testing.T) {
	c := idleClient(t, stalledStore(t), 50*time.Millisecond)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"head": func() error { _, err := c.Head(ctx, "a"); return err },
		"get":  func() error { _, err := c.Get(ctx, "a", "", 0, 0); return err },
		"put":  func() error { _, err := c.Put(ctx, "a", []byte("x"), nil); return err },
		"list": func() error {
			for _, err := range c.List(ctx, "", "/", 0, "") {
				return err
			}
			return nil
		},
	} {
		var stall *StallError
		if err := call(); !errors.As(err, &stall) {
			t.Errorf("%s: %v, want a StallError", name, err)
		}
	}
}

// A body whose bytes stop coming fails its read with a StallError; one
// that comes slowly, each byte within the idle timeout, is read whole, and
// a pause of the reader's own between two reads is not a stall.
func TestBodyIsCutOnlyWhenNoByteComes(t *testing.T) {
	// Wide margins: on a loaded machine a byte 1/10 of the timeout apart
	// must still never look stalled.
	const idle = 500 * time.Millisecond
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		for i := range 10 {
			if r.URL.Path == "/b/stops" && i == 5 {
				<-stop
				return
			}
			_, _ = w.Write([]byte{'a' + byte(i)})
			w.(http.Flusher).Flush()
			time.Sleep(idle / 10) // slow, yet each byte within the timeout
		}
	}))
	defer srv.Close()
	defer close(stop) // before Close, which waits for the handlers
	c := idleClient(t, srv.URL, idle)
	ctx := context.Background()

	body, err := c.Get(ctx, "slow", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(data) != "abcdefghij" {
		t.Errorf("a slow body read %q, %v; want it whole", data, err)
	}

	body, err = c.Get(ctx, "slow", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(body, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * idle) // the reader's own pause
	rest, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(first)+string(rest) != "abcdefghij" {
		t.Errorf("after the reader's pause, read %q, %v; want it whole", string(first)+string(rest), err)
	}

	body, err = c.Get(ctx, "stops", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err = io.ReadAll(body)
	body.Close()
	var stall *StallError
	if !errors.As(err, &stall) || !strings.HasPrefix("abcde", string(data)) {
		t.Errorf("a body that stops read %q, %v; want a StallError", data, err)
	}
}

// A 404 without an S3 error is a missing key only as a HEAD's answer,
// which has no body: to a listing or a GET, it is a service that is no S3
// store (a proxy's answer for a host it cannot route), and a wrong
// endpoint read as a missing workspace.
func TestNotFoundWithoutS3ErrorIsNotAMissingKey(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c := idleClient(t, srv.URL, 0)
	ctx := context.Background()
	_, err := c.Head(ctx, "a")
	if code, _ := Code(err); code != "NoSuchKey" {
		t.Errorf("HEAD: %v (%s), want NoSuchKey", err, code)
	}
	_, err = c.Get(ctx, "a", "", 0, 0)
	if code, _ := Code(err); code != CodeNotS3 {
		t.Errorf("GET: %v (%s), want %s", err, code, CodeNotS3)
	}
	for _, err := range c.List(ctx, "", "/", 0, "") {
		if code, _ := Code(err); code != CodeNotS3 {
			t.Errorf("a listing: %v (%s), want %s", err, code, CodeNotS3)
		}
		break
	}
}
