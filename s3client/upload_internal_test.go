package s3client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/agentfs/agentfs/s3fs/s3test"
)

// testClient is a client of a new bucket on the test server, or skips t.
func testClient(t *testing.T) *Client {
	t.Helper()
	bucket := s3test.Bucket(t)
	access, secret := s3test.Keys()
	c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: Credentials{AccessKey: access, SecretKey: secret}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openUploads are the multipart uploads the bucket holds.
func openUploads(t *testing.T, c *Client) int {
	t.Helper()
	resp, err := c.do(context.Background(), request{method: http.MethodGet, query: url.Values{"uploads": {""}}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var result struct {
		Uploads []struct {
			UploadID string `xml:"UploadId"`
		} `xml:"Upload"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&result); err != nil {
		t.Fatal(err)
	}
	return len(result.Uploads)
}

const testPart = 5 << 20 // S3's smallest part

// TestUpload: what goes up in one PUT or in parts comes back byte for
// byte, with its headers, from a presigned GET, whose params the store
// answers with.
func TestUpload(t *testing.T) {
	c := testClient(t)
	large := make([]byte, 2*testPart+testPart/3)
	_, _ = rand.Read(large)
	for _, tc := range []struct {
		name    string
		content []byte
	}{
		{"empty", nil},
		{"small", []byte("a,b\n1,2\n")},
		{"exactly a part", large[:testPart]},
		{"three parts", large},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "dir/" + tc.name + " ü.csv"
			h := http.Header{}
			h.Set("Content-Type", "text/csv")
			h.Set("X-Amz-Meta-Sha256", "abc")
			o, err := c.Upload(context.Background(), key, bytes.NewReader(tc.content), int64(len(tc.content)), testPart, h)
			if err != nil {
				t.Fatal(err)
			}
			if o.Size != int64(len(tc.content)) || o.ETag == "" {
				t.Errorf("Upload: %+v", o)
			}
			head, err := c.Head(context.Background(), key)
			if err != nil || head.Size != int64(len(tc.content)) || head.ETag != o.ETag {
				t.Errorf("Head: %+v %v, want size %d, ETag %s", head, err, len(tc.content), o.ETag)
			}
			link, err := c.PresignGet(key, time.Hour, url.Values{"response-content-disposition": {"attachment"}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Equal(body, tc.content) {
				t.Fatalf("GET: %d, %d bytes, want 200, %d bytes", resp.StatusCode, len(body), len(tc.content))
			}
			for k, want := range map[string]string{"Content-Type": "text/csv", "Content-Disposition": "attachment", "X-Amz-Meta-Sha256": "abc"} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
	if n := openUploads(t, c); n != 0 {
		t.Errorf("%d multipart uploads left open", n)
	}
}

// TestPresignTampered: a presigned link whose query is changed is refused.
func TestPresignTampered(t *testing.T) {
	c := testClient(t)
	if _, err := c.Put(context.Background(), "k", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	link, err := c.PresignGet("k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(link + "&response-content-type=text%2Fhtml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET of a changed link: %d, want 403", resp.StatusCode)
	}
}

// brokenReader gives n zero bytes, then err.
type brokenReader struct {
	n   int
	err error
}

func (b *brokenReader) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, b.err
	}
	k := min(len(p), b.n)
	clear(p[:k])
	b.n -= k
	return k, nil
}

// TestUploadFailureLeavesNothing: a content that fails, before the first
// part or after some, or a store that refuses a part, leaves no object and
// no open upload, and the reader's error comes back.
func TestUploadFailureLeavesNothing(t *testing.T) {
	c := testClient(t)
	cause := errors.New("the file changed")
	size := int64(3 * testPart)
	for _, tc := range []struct {
		name string
		r    io.Reader
		key  string
		want error
	}{
		{"one PUT", &brokenReader{n: 100, err: cause}, "small", cause},
		{"first part", &brokenReader{n: 100, err: cause}, "first", cause},
		{"after two parts", &brokenReader{n: 2*testPart + 100, err: cause}, "later", cause},
		{"short content", &brokenReader{n: testPart + 100, err: io.EOF}, "short", io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := size
			if tc.key == "small" {
				n = 1000
			}
			_, err := c.Upload(context.Background(), tc.key, tc.r, n, testPart, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Upload: %v, want %v", err, tc.want)
			}
			if _, err := c.Head(context.Background(), tc.key); !isNoSuchKey(err) {
				t.Errorf("after a failed upload, HEAD: %v", err)
			}
		})
	}
	if n := openUploads(t, c); n != 0 {
		t.Errorf("%d multipart uploads left open", n)
	}
}

// TestUploadCancelledAborts: a cancelled context fails the upload, and
// the abort still runs.
func TestUploadCancelledAborts(t *testing.T) {
	c := testClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &cancellingReader{r: bytes.NewReader(make([]byte, 2*testPart)), after: testPart + 1, cancel: cancel}
	if _, err := c.Upload(ctx, "k", r, 2*testPart, testPart, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Upload: %v, want context.Canceled", err)
	}
	if n := openUploads(t, c); n != 0 {
		t.Errorf("%d multipart uploads left open", n)
	}
}

// cancellingReader cancels once after bytes have been read.
type cancellingReader struct {
	r      io.Reader
	after  int
	cancel func()
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.after -= n; c.after <= 0 {
		c.cancel()
	}
	return n, err
}

func isNoSuchKey(err error) bool {
	code, status := Code(err)
	return code == "NoSuchKey" || status == http.StatusNotFound
}

func TestUploadPartSizeGrows(t *testing.T) {
	for _, tc := range []struct{ size, part, want int64 }{
		{10, 5, 5},
		{maxParts * 5, 5, 5},
		{maxParts*5 + 1, 5, 6},
	} {
		if got := partSizeFor(tc.size, tc.part); got != tc.want {
			t.Errorf("partSizeFor(%d, %d) = %d, want %d", tc.size, tc.part, got, tc.want)
		}
	}
}

// TestCopyParts: a copy by parts comes back byte for byte with the headers
// it was made with; its conditions on the destination are checked as the
// upload completes (a CopyObject's versitygw ignores), and a refused or
// failed copy leaves no upload; a source changed since srcETag copies
// nothing.
func TestCopyParts(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	src := make([]byte, 2*testPart+testPart/3)
	_, _ = rand.Read(src)
	o, err := c.Put(ctx, "src ü", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(src))
	h := http.Header{}
	h.Set("Content-Type", "text/csv")
	h.Set("X-Amz-Meta-Mark", "m1")
	etag, err := c.copyParts(ctx, "src ü", o.ETag, "dst", size, testPart, h.Clone(), Condition("", "*"))
	if err != nil {
		t.Fatal(err)
	}
	data, got := readObject(t, c, "dst")
	if !bytes.Equal(data, src) || got.ETag != etag || got.Meta["mark"] != "m1" {
		t.Errorf("the copy: %d bytes (equal %v), %+v; want ETag %s", len(data), bytes.Equal(data, src), got, etag)
	}
	for _, tc := range []struct {
		name      string
		srcETag   string
		cond      http.Header
		precondFn bool
	}{
		{"onto an object, If-None-Match", o.ETag, Condition("", "*"), true},
		{"onto another version, If-Match", o.ETag, Condition(o.ETag, ""), true},
		{"from a source changed since", "0123456789abcdef0123456789abcdef", Condition(etag, ""), true},
	} {
		_, err := c.copyParts(ctx, "src ü", tc.srcETag, "dst", size, testPart, h.Clone(), tc.cond)
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusPreconditionFailed {
			t.Errorf("%s: %v, want 412", tc.name, err)
		}
	}
	if now, err := c.Head(ctx, "dst"); err != nil || now.ETag != etag {
		t.Errorf("the copy after the refused ones: %+v, %v; want ETag %s", now, err, etag)
	}
	if n := openUploads(t, c); n != 0 {
		t.Errorf("%d uploads left", n)
	}
}

// unstatedLength answers every GET without its length, as a chunked answer.
type unstatedLength struct{}

func (unstatedLength) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return resp, err
}

// TestCopyThroughUnstatedLength: an answer of no stated length is copied
// through agentfs when it is within the limit, an empty one too (it went
// to a copy in parts, of none, which the store refused), and in parts past
// it.
func TestCopyThroughUnstatedLength(t *testing.T) {
	plain := testClient(t)
	access, secret := s3test.Keys()
	c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: plain.Bucket(), Transport: unstatedLength{},
		Credentials: Credentials{AccessKey: access, SecretKey: secret}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const limit = 16
	for _, n := range []int{0, 5, limit, limit + 1} {
		src := bytes.Repeat([]byte{'s'}, n)
		o, err := c.Put(ctx, "src", src, nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := fmt.Sprintf("dst-%d", n)
		etag, err := c.CopyThrough(ctx, "src", o.ETag, dst, Condition("", "*"), limit)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		data, got := readObject(t, plain, dst)
		if !bytes.Equal(data, src) || got.ETag != etag {
			t.Errorf("%d bytes: the copy holds %d bytes, ETag %s; want %s", n, len(data), got.ETag, etag)
		}
	}
	// No limit (a rollback's restore): limit+1 overflowed, and the copy
	// put back was empty.
	for _, cl := range []*Client{plain, c} {
		if _, err := cl.CopyThrough(ctx, "src", "", "restored", Condition("", ""), math.MaxInt64); err != nil {
			t.Fatal(err)
		}
		if data, _ := readObject(t, plain, "restored"); len(data) != limit+1 {
			t.Errorf("a copy of no limit holds %d bytes, want %d", len(data), limit+1)
		}
	}
	if n := openUploads(t, plain); n != 0 {
		t.Errorf("%d uploads left", n)
	}
}

// readObject is the object at key, its bytes and description, or fails t.
func readObject(t *testing.T, c *Client, key string) ([]byte, ObjectInfo) {
	t.Helper()
	r, o, err := c.GetObject(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data, o
}

// droppedAbort answers the first abort of an upload 204 without sending
// it, as a store does whose part, still being taken in, brings the upload
// back after the abort.
type droppedAbort struct{ dropped bool }

func (d *droppedAbort) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete && r.URL.Query().Has("uploadId") && !d.dropped {
		d.dropped = true
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An abort that leaves the upload (a part landing after it) is made again
// until the upload is gone: 4 of 7 interrupted publishes left an upload
// with one part, billed on a real store.
func TestUploadAbortIsCheckedAndRepeated(t *testing.T) {
	bucket := s3test.Bucket(t)
	access, secret := s3test.Keys()
	d := &droppedAbort{}
	c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: Credentials{AccessKey: access, SecretKey: secret}, Transport: d})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &cancellingReader{r: bytes.NewReader(make([]byte, 2*testPart)), after: testPart + 1, cancel: cancel}
	if _, err := c.Upload(ctx, "k", r, 2*testPart, testPart, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Upload: %v, want context.Canceled", err)
	}
	if n := openUploads(t, c); !d.dropped || n != 0 {
		t.Errorf("%d multipart uploads left open (first abort dropped: %v)", n, d.dropped)
	}
}

// refusedAborts answers every abort 204 without sending it: an upload
// that no abort removes.
type refusedAborts struct{}

func (refusedAborts) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete && r.URL.Query().Has("uploadId") {
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An upload that the aborts never remove fails naming it (a LeftError,
// whose upload is the one listed), after a bounded number of aborts: the
// caller says what is left and how to remove it.
func TestUploadLeftIsNamed(t *testing.T) {
	bucket := s3test.Bucket(t)
	access, secret := s3test.Keys()
	cr := Credentials{AccessKey: access, SecretKey: secret}
	c, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: cr, Transport: refusedAborts{}})
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the file changed")
	_, err = c.Upload(context.Background(), "k", &brokenReader{n: testPart + 100, err: cause}, 2*testPart, testPart, nil)
	var left *LeftError
	if !errors.As(err, &left) || !errors.Is(err, cause) || left.Key != "k" || left.Bucket != bucket {
		t.Fatalf("Upload: %v, want a LeftError of k wrapping the cause", err)
	}
	plain, err := New(Config{Endpoint: s3test.Endpoint(t), Bucket: bucket, Credentials: cr})
	if err != nil {
		t.Fatal(err)
	}
	if n := openUploads(t, plain); n != 1 {
		t.Errorf("%d uploads listed, want the one left", n)
	}
	if err := plain.abortMultipart(context.Background(), left.Key, left.UploadID); err != nil {
		t.Errorf("the upload named cannot be aborted: %v", err)
	}
	if n := openUploads(t, plain); n != 0 {
		t.Errorf("%d uploads left after aborting the one named", n)
	}
}
