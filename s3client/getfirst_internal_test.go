package s3client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGetFirst: the GET that opens an object describes it as a HEAD does,
// its size the whole object's, whatever the store answers the range: a
// 206 (its total from Content-Range), a 200 with the whole object (read
// no further than asked), a 416 for an empty object (asked again without
// a range); an answer that gives no size, or another range, is an error.
func TestGetFirst(t *testing.T) {
	obj := bytes.Repeat([]byte("x"), 100)
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		size   int64
		body   string
		wrong  bool
	}{
		{"206", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-9/100")
			w.Header().Set("Content-Length", "10")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[:10])
		}, 100, "xxxxxxxxxx", false},
		{"200 whole", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write(obj)
		}, 100, "xxxxxxxxxx", false},
		{"416 then empty", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Range") != "" {
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
				fmt.Fprint(w, "<Error><Code>InvalidRange</Code></Error>")
				return
			}
			w.Header().Set("Content-Length", "0")
		}, 0, "", false},
		{"206 of another range", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 5-14/100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[:10])
		}, 0, "", true},
		{"206 without a total", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-9/*")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[:10])
		}, 0, "", true},
		{"200 without a length", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			w.Write(obj)
		}, 0, "", true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"e"`)
			w.Header().Set("X-Amz-Meta-Mark", "m")
			tc.answer(w, r)
		}))
		c := idleClient(t, srv.URL, time.Minute)
		body, o, err := c.GetFirst(t.Context(), "a", 10)
		if tc.wrong {
			if err == nil {
				body.Close()
				t.Errorf("%s: %+v, want an error", tc.name, o)
			}
			srv.Close()
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			srv.Close()
			continue
		}
		data, err := io.ReadAll(body)
		body.Close()
		if err != nil || string(data) != tc.body || o.Size != tc.size || o.ETag != "e" || o.Meta["mark"] != "m" {
			t.Errorf("%s: %q (%v), %+v; want %q, size %d, ETag e, mark m", tc.name, data, err, o, tc.body, tc.size)
		}
		srv.Close()
	}
}

// TestGetOfARangeIgnored: a window's GET that a store answers with the
// whole object (200) streams the window, not the object's start; one
// answered with another range is an error.
func TestGetOfARangeIgnored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/wrong") {
			w.Header().Set("Content-Range", "bytes 0-2/10")
			w.WriteHeader(http.StatusPartialContent)
			fmt.Fprint(w, "012")
			return
		}
		fmt.Fprint(w, "0123456789")
	}))
	defer srv.Close()
	c := idleClient(t, srv.URL, time.Minute)
	body, err := c.Get(t.Context(), "a", "", 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(data) != "567" {
		t.Errorf("the window 5-7 of a whole answer: %q (%v), want 567", data, err)
	}
	if body, err := c.Get(t.Context(), "wrong", "", 5, 3); err == nil {
		body.Close()
		t.Error("a window 5-7 answered 0-2: no error")
	}
}
