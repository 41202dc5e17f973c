package s3client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// cutStore serves one object whose first GET it cuts (the connection
// closed) after cut bytes of the answer; then, when changeTo is set, the
// object becomes that, under the ETag v2, and an If-Match is ignored when
// ignoreIfMatch. It records each GET's Range and If-Match.
type cutStore struct {
	obj, changeTo []byte
	cut           int
	ignoreIfMatch bool
	mu            sync.Mutex
	asked         []string
}

func (s *cutStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.asked = append(s.asked, r.Header.Get("Range")+" "+r.Header.Get("If-Match"))
	first := len(s.asked) == 1
	obj, etag := s.obj, "v1"
	if !first && s.changeTo != nil {
		obj, etag = s.changeTo, "v2"
	}
	s.mu.Unlock()
	if m := r.Header.Get("If-Match"); m != "" && m != `"`+etag+`"` && !s.ignoreIfMatch {
		w.WriteHeader(http.StatusPreconditionFailed)
		io.WriteString(w, "<Error><Code>PreconditionFailed</Code></Error>")
		return
	}
	w.Header().Set("ETag", `"`+etag+`"`)
	from, to := 0, len(obj)-1
	if rng, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		a, b, _ := strings.Cut(rng, "-")
		from, _ = strconv.Atoi(a)
		if b != "" {
			to, _ = strconv.Atoi(b)
		}
		to = min(to, len(obj)-1)
		w.Header().Set("Content-Range", "bytes "+a+"-"+strconv.Itoa(to)+"/"+strconv.Itoa(len(obj)))
		w.Header().Set("Content-Length", strconv.Itoa(to-from+1))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(obj)))
	}
	body := obj[from : to+1]
	if first {
		w.Write(body[:s.cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection is closed mid-body
	}
	w.Write(body)
}

// A GET whose answer is cut after some bytes goes on with a ranged GET
// from where it stopped, If-Match the ETag of the first answer: the read
// failed with unexpected EOF, though the rest was a request away. An
// object changed in between ends the read with the store's 412 (or, from
// a store that ignores If-Match, the ETag it answered), never with the
// bytes of two versions.
func TestACutBodyResumesFromWhereItStopped(t *testing.T) {
	obj := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	other := bytes.Repeat([]byte("ZYXWVUTSRQPONMLK"), 64<<10/16)
	const cut = 10000
	reads := map[string]func(c *Client) (io.ReadCloser, error){
		"Get whole": func(c *Client) (io.ReadCloser, error) { return c.Get(context.Background(), "k", "", 0, 0) },
		// n 0 is all of the object, whatever off says.
		"Get whole, an offset given": func(c *Client) (io.ReadCloser, error) { return c.Get(context.Background(), "k", "", 100, 0) },
		"Get window": func(c *Client) (io.ReadCloser, error) {
			return c.Get(context.Background(), "k", "v1", 100, int64(len(obj))-200)
		},
		"GetFirst": func(c *Client) (io.ReadCloser, error) {
			body, _, err := c.GetFirst(context.Background(), "k", int64(len(obj)))
			return body, err
		},
		"GetObject": func(c *Client) (io.ReadCloser, error) {
			body, _, err := c.GetObject(context.Background(), "k")
			return body, err
		},
	}
	want := map[string][]byte{"Get window": obj[100 : len(obj)-100]}
	for name, read := range reads {
		for _, change := range []string{"", "changed", "changed, If-Match ignored"} {
			s := &cutStore{obj: obj, cut: cut}
			if change != "" {
				s.changeTo, s.ignoreIfMatch = other, strings.Contains(change, "ignored")
			}
			srv := httptest.NewServer(s)
			c := idleClient(t, srv.URL, 0)
			body, err := read(c)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := io.ReadAll(body)
			body.Close()
			srv.Close()
			whole := obj
			if w, ok := want[name]; ok {
				whole = w
			}
			switch {
			case change == "" && (err != nil || !bytes.Equal(got, whole)):
				t.Errorf("%s cut at %d: %d bytes, %v; want the %d of the object (asked %q)", name, cut, len(got), err, len(whole), s.asked)
			case change == "" && (len(s.asked) != 2 || !strings.HasSuffix(s.asked[1], ` "v1"`)):
				t.Errorf("%s cut: asked %q, want a second GET If-Match v1", name, s.asked)
			case change != "" && (err == nil || bytes.Contains(got, other[:16])):
				t.Errorf("%s cut, the object %s: %d bytes (of the other version: %v), %v; want an error", name, change, len(got), bytes.Contains(got, other[:16]), err)
			case change != "" && !s.ignoreIfMatch:
				if code, status := Code(err); status != http.StatusPreconditionFailed {
					t.Errorf("%s cut, the object changed: %v (%s %d), want the store's 412", name, err, code, status)
				}
			}
		}
	}
}
