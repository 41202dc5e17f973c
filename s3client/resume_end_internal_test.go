package s3client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// endCutTransport serves one object, ETag v1, honouring a Range; the
// first answer's body gives its last bytes together with a reset (as a
// TLS connection does whose data is followed by an alert), the bytes all
// there. It counts the GETs.
type endCutTransport struct {
	obj  []byte
	mu   sync.Mutex
	gets int
}

type endCutBody struct {
	r   *bytes.Reader
	cut bool
}

var errReset = errors.New("read: connection reset by peer")

func (b *endCutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.cut && b.r.Len() == 0 && err == nil {
		return n, errReset
	}
	return n, err
}

func (b *endCutBody) Close() error { return nil }

func (s *endCutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.gets++
	first := s.gets == 1
	s.mu.Unlock()
	h := http.Header{"Etag": {`"v1"`}}
	from, to, status := 0, len(s.obj)-1, http.StatusOK
	if rng, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		a, b, _ := strings.Cut(rng, "-")
		from, _ = strconv.Atoi(a)
		to, _ = strconv.Atoi(b)
		to = min(to, len(s.obj)-1)
		h.Set("Content-Range", "bytes "+a+"-"+strconv.Itoa(to)+"/"+strconv.Itoa(len(s.obj)))
		status = http.StatusPartialContent
	}
	body := s.obj[from : to+1]
	return &http.Response{StatusCode: status, Header: h, ContentLength: int64(len(body)), Request: r,
		Body: &endCutBody{r: bytes.NewReader(body), cut: first}}, nil
}

// A body cut once all of its bytes came has nothing to resume: it ended.
// Resumed, it asked for the rest, none, as Get's n of 0 (the whole
// object) and served the object again after it: 2x the bytes.
func TestACutBodyWithAllItsBytesEnds(t *testing.T) {
	obj := bytes.Repeat([]byte("0123456789abcdef"), 1024)
	reads := map[string]func(c *Client) (io.ReadCloser, error){
		"Get whole":  func(c *Client) (io.ReadCloser, error) { return c.Get(context.Background(), "k", "", 0, 0) },
		"Get window": func(c *Client) (io.ReadCloser, error) { return c.Get(context.Background(), "k", "v1", 100, 1000) },
		"GetObject": func(c *Client) (io.ReadCloser, error) {
			body, _, err := c.GetObject(context.Background(), "k")
			return body, err
		},
	}
	want := map[string][]byte{"Get window": obj[100:1100]}
	for name, read := range reads {
		tr := &endCutTransport{obj: obj}
		c, err := New(Config{Endpoint: "http://store.test", Bucket: "b", Credentials: Credentials{AccessKey: "k", SecretKey: "s"}, Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		body, err := read(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(body)
		body.Close()
		whole := obj
		if w, ok := want[name]; ok {
			whole = w
		}
		if !bytes.Equal(got, whole) {
			t.Errorf("%s, cut at its end: %d bytes, %v, after %d GETs; want the %d asked", name, len(got), err, tr.gets, len(whole))
		}
	}
}
