package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

// testStore connects to the server of AGENTFS_TEST_S3_ENDPOINT, in a new
// bucket, or skips saying how to start one.
func testStore(t *testing.T) *Store {
	t.Helper()
	bucket := s3test.Bucket(t)
	s, err := New(Config{Location: Scheme + bucket + "/reports/", Endpoint: s3test.Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func object(name string, content []byte, ttl time.Duration) assets.Object {
	sum := sha256.Sum256(content)
	return assets.Object{Name: name, MIMEType: "text/csv", Size: int64(len(content)),
		SHA256: hex.EncodeToString(sum[:]), Lifetime: ttl}
}

func get(t *testing.T, link string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

// TestPutAndFetch: what is uploaded, in one request or in parts, comes back
// byte for byte from the presigned link with plain HTTP, with its type.
func TestPutAndFetch(t *testing.T) {
	s := testStore(t)
	large := make([]byte, PartSize+PartSize/2)
	_, _ = rand.Read(large)
	for _, tc := range []struct {
		name    string
		content []byte
	}{
		{"small.csv", []byte("a,b\n1,2\n")},
		{"multipart.bin", large},
		{"a name with spaces.csv", []byte("x\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(tc.name, tc.content, time.Hour)
			sample, err := s.SampleLink(obj)
			if err != nil {
				t.Fatal(err)
			}
			link, err := s.Put(context.Background(), obj, bytes.NewReader(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(link.URL)
			if err != nil {
				t.Fatal(err)
			}
			// The link's lifetime counts from its signing time, which the
			// answer's expiry is an hour after.
			signed, err := time.Parse("20060102T150405Z", u.Query().Get("X-Amz-Date"))
			if got := u.Query().Get("X-Amz-Expires"); got != "3600" || err != nil || !link.Expires.Equal(signed.Add(time.Hour)) {
				t.Errorf("X-Amz-Expires %q, signed %v (%v), expires %v: want an hour after the signing", got, signed, err, link.Expires)
			}
			if len(link.URL) != len(sample) {
				t.Errorf("the link is %d bytes, its sample %d", len(link.URL), len(sample))
			}
			status, body, h := get(t, link.URL)
			if status != http.StatusOK || !bytes.Equal(body, tc.content) {
				t.Fatalf("GET: %d, %d bytes (want 200, %d bytes)", status, len(body), len(tc.content))
			}
			if ct := h.Get("Content-Type"); ct != "text/csv" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestLinkExpires: a link presigned for a second fails once the server's
// clock has passed it. The server's clock is not ours, so the test polls
// it with a deadline instead of sleeping a fixed time.
func TestLinkExpires(t *testing.T) {
	s := testStore(t)
	content := []byte("soon gone\n")
	put, err := s.Put(context.Background(), object("gone.txt", content, time.Second), bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	link := put.URL
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body, _ := get(t, link)
		if status == http.StatusForbidden {
			return
		}
		if status != http.StatusOK || !bytes.Equal(body, content) {
			t.Fatalf("GET before expiry: %d %q", status, body)
		}
		if time.Now().After(deadline) {
			t.Fatal("the link still works 20s after it expired")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// failingReader gives some bytes, then fails, as a file changed during an
// upload does (core's check).
type failingReader struct{ left int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, fault.Errorf(fault.CodeStale, "the file changed while it was published.")
	}
	n := min(len(p), f.left)
	clear(p[:n])
	f.left -= n
	return n, nil
}

// TestFailedPutLeavesNothing: an upload whose content fails, in one
// request or in parts, leaves no object, and the failure keeps its code.
func TestFailedPutLeavesNothing(t *testing.T) {
	s := testStore(t)
	for _, size := range []int{1000, PartSize + 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			obj := object("broken.bin", make([]byte, size), time.Hour)
			_, err := s.Put(context.Background(), obj, &failingReader{left: size / 2})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale {
				t.Fatalf("Put: %v, want STALE", err)
			}
			_, err = s.client.Head(context.Background(), s.Key(obj))
			if code, _ := s3client.Code(err); code != "NoSuchKey" {
				t.Fatalf("after a failed Put, stat: %v", err)
			}
		})
	}
}

// TestMissingBucket is NOT_CONFIGURED, naming the bucket.
func TestMissingBucket(t *testing.T) {
	s := testStore(t)
	s, err := New(Config{Location: Scheme + s.bucket + "-missing", Endpoint: s3test.Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(context.Background(), object("x", []byte("x"), time.Hour), bytes.NewReader([]byte("x")))
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotConfigured {
		t.Fatalf("Put: %v, want NOT_CONFIGURED", err)
	}
}

func TestParseLocation(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/p/q/", "b", "p/q"},
		{"s3://", "", ""},
		{"b/p", "", ""},
		// A browser resolves them before it sends a link: its signature
		// no longer held (403 from the start).
		{"s3://b/p/./q", "", ""},
		{"s3://b/..", "", ""},
		{"s3://b/p//q", "", ""},
	} {
		b, p, err := parseLocation(tc.in)
		if tc.bucket == "" {
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument {
				t.Errorf("%q: %v, want INVALID_ARGUMENT", tc.in, err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%q: %q %q %v", tc.in, b, p, err)
		}
	}
}

// TestNoCredentials is NOT_CONFIGURED with a hint naming the variables.
func TestNoCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("HOME", t.TempDir())
	_, err := New(Config{Location: "s3://b", Endpoint: "http://127.0.0.1:1"})
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != fault.CodeNotConfigured {
		t.Fatalf("New: %v, want NOT_CONFIGURED", err)
	}
}

// TestRefusedByTheStore: an access key the store does not know is
// PERMISSION_DENIED, and a bucket name no bucket can have INVALID_ARGUMENT,
// neither an IO_ERROR whose hint is to publish again.
func TestRefusedByTheStore(t *testing.T) {
	good := testStore(t)
	for _, tc := range []struct {
		name, location, key string
		want                fault.Code
	}{
		{"unknown key", Scheme + good.bucket + "/p", "agentfs-nobody", fault.CodePermissionDenied},
		{"bad bucket name", Scheme + "Bad_Bucket/p", "", fault.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key != "" {
				t.Setenv("AWS_ACCESS_KEY_ID", tc.key)
			}
			s, err := New(Config{Location: tc.location, Endpoint: s3test.Endpoint(t)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Put(context.Background(), object("x", []byte("x"), time.Hour), bytes.NewReader([]byte("x")))
			if e := fault.AsError(err); e == nil || e.Code != tc.want || bytes.Contains([]byte(e.Message), []byte("..")) {
				t.Fatalf("Put: %v, want %s", err, tc.want)
			}
		})
	}
}

// A store with no room (507, or a quota's 403 QuotaExceeded) is NO_SPACE:
// it was IO_ERROR, its hint to check the endpoint.
func TestStoreErrorOfAFullStore(t *testing.T) {
	s := &Store{bucket: "b"}
	for _, se := range []*s3client.Error{{Status: 507, Code: "InsufficientStorage"}, {Status: 403, Code: "QuotaExceeded"}} {
		if e := fault.AsError(s.storeError(se, "the upload failed")); e.Code != fault.CodeNoSpace || !strings.Contains(e.Hint, "free space") {
			t.Errorf("%s: %s %q (hint %q), want NO_SPACE", se.Code, e.Code, e.Message, e.Hint)
		}
	}
}

// An upload left in the bucket (its abort failed) is said, with the
// command that removes it, whatever the upload's own failure: a changed
// file's STALE or an interrupt hid it (the CLI answers an error wrapping
// context.Canceled INTERRUPTED, "nothing was left half-done"), and its
// parts stayed billed.
func TestStoreErrorOfALeftUpload(t *testing.T) {
	s := &Store{bucket: "b"}
	for _, cause := range []error{context.Canceled, fault.Errorf(fault.CodeStale, "the file changed.")} {
		left := &s3client.LeftError{Err: cause, Abort: errors.New("it is still there after 5 aborts"), Bucket: "b", Key: "r/x y's.bin", UploadID: "u1"}
		e := fault.AsError(s.storeError(fmt.Errorf("wrapped: %w", left), "the upload failed"))
		want := `aws s3api abort-multipart-upload --bucket 'b' --key 'r/x y'\''s.bin' --upload-id 'u1'`
		if e.Code != fault.CodeIOError || !strings.Contains(e.Hint, want) || !strings.Contains(e.Message, "left") || !errors.Is(e, assets.ErrLeft) || errors.Is(e, context.Canceled) {
			t.Errorf("%v: %s %q (hint %q), want IO_ERROR saying the parts are left, the hint %q", cause, e.Code, e.Message, e.Hint, want)
		}
	}
}
