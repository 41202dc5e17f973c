package s3client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/s3fs/s3test"
)

// holdingTransport holds the first request match picks, its body taken
// whole, until release is closed: a store still taking it in. abandoned
// says that its caller had given up on it by then: a store makes such a
// request all the same, after whatever the caller sends next (the abort).
type holdingTransport struct {
	match     func(*http.Request) bool
	held      chan struct{}
	release   chan struct{}
	once      sync.Once
	abandoned bool
}

func (h *holdingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	hold := false
	if h.match(r) {
		h.once.Do(func() { hold = true })
	}
	if !hold {
		return http.DefaultTransport.RoundTrip(r)
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	close(h.held)
	<-h.release
	if err := r.Context().Err(); err != nil {
		h.abandoned = true
		return nil, err
	}
	sent := r.Clone(r.Context())
	sent.Body = io.NopCloser(bytes.NewReader(data))
	return http.DefaultTransport.RoundTrip(sent)
}

// A signal while a request of an upload is in flight waits for it: cut
// off, the store still made it after the abort (versitygw links a part
// into an upload aborted meanwhile), and interrupted publishes left parts
// on disk, billed and not even listed, or the whole object, for which
// no link was given.
func TestUploadWaitsForTheRequestInFlight(t *testing.T) {
	for _, tc := range []struct {
		name  string
		match func(*http.Request) bool
		size  int64
		done  bool // the request held makes the object
	}{
		{"one PUT", func(r *http.Request) bool { return r.Method == http.MethodPut }, 1000, true},
		{"part", func(r *http.Request) bool {
			return r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "1"
		}, 2 * testPart, false},
		{"complete", func(r *http.Request) bool {
			return r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
		}, 2 * testPart, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := s3test.Dir(t)
			bucket := s3test.Bucket(t)
			access, secret := s3test.Keys()
			h := &holdingTransport{match: tc.match, held: make(chan struct{}), release: make(chan struct{})}
			c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: Credentials{AccessKey: access, SecretKey: secret}, Transport: h})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := c.Upload(ctx, "k", bytes.NewReader(make([]byte, tc.size)), tc.size, testPart, nil)
				done <- err
			}()
			<-h.held
			cancel()
			close(h.release)
			err = <-done
			if h.abandoned {
				t.Error("the request in flight was given up on: the store could still make it after the abort")
			}
			_, herr := c.Head(context.Background(), "k")
			switch {
			case tc.done && (err != nil || herr != nil):
				t.Errorf("Upload: %v, HEAD: %v; want the completion waited for and reported done", err, herr)
			case !tc.done && (!errors.Is(err, context.Canceled) || !isNoSuchKey(herr)):
				t.Errorf("Upload: %v, HEAD: %v; want context.Canceled and no object", err, herr)
			}
			if n := openUploads(t, c); n != 0 {
				t.Errorf("%d multipart uploads left open", n)
			}
			var left []string
			_ = filepath.WalkDir(filepath.Join(dir, bucket, ".sgwtmp"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					left = append(left, strings.TrimPrefix(p, dir))
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("parts left on the store's disk: %v", left)
			}
		})
	}
}

// lostCompletion sends the CompleteMultipartUpload to the store and
// loses its answer, as a connection that breaks once the store made the
// object.
type lostCompletion struct{}

func (lostCompletion) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

// A completion whose answer is lost is judged by the object: the store
// made it, with the ETag its parts give it, so the upload is done. It
// failed, the abort finding no upload, and publish answered an error for
// an object it had made, with no link.
func TestUploadLostCompletionIsJudgedByTheObject(t *testing.T) {
	bucket := s3test.Bucket(t)
	access, secret := s3test.Keys()
	c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: Credentials{AccessKey: access, SecretKey: secret}, Transport: lostCompletion{}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Upload(context.Background(), "k", bytes.NewReader(make([]byte, 2*testPart)), 2*testPart, testPart, nil)
	if err != nil {
		t.Fatalf("Upload: %v, want done: the store made the object", err)
	}
	if h, err := c.Head(context.Background(), "k"); err != nil || h.ETag != o.ETag {
		t.Errorf("HEAD: %+v, %v; want the object of ETag %q", h, err, o.ETag)
	}
}

// unsentCompletion takes the CompleteMultipartUpload whole and never
// sends it, as a connection that breaks once the body is written.
type unsentCompletion struct{}

func (unsentCompletion) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
		// Its body taken whole: whether the store got it is unknown.
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A completion lost on its way, at a key that holds the same bytes
// already (a publish of the same file): the object is there, and the
// upload, never completed, is aborted, not left open and billed.
func TestUploadUnsentCompletionOverTheSameBytes(t *testing.T) {
	bucket := s3test.Bucket(t)
	access, secret := s3test.Keys()
	cfg := Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: Credentials{AccessKey: access, SecretKey: secret}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("x"), 2*testPart)
	if _, err := c.Upload(context.Background(), "k", bytes.NewReader(content), int64(len(content)), testPart, nil); err != nil {
		t.Fatal(err)
	}
	cfg.Transport = unsentCompletion{}
	lossy, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lossy.Upload(context.Background(), "k", bytes.NewReader(content), int64(len(content)), testPart, nil); err != nil {
		t.Fatalf("Upload: %v, want done: the object of these bytes is there", err)
	}
	if n := openUploads(t, c); n != 0 {
		t.Errorf("%d multipart uploads left open", n)
	}
}
