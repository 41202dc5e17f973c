package s3client

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// DeleteBatch must ask the store to delete the very keys it is given: a
// key with a control byte or a byte that is not UTF-8 (both legal S3
// keys) cannot be written in XML 1.0, and encoding/xml sent it as U+FFFD,
// so the store deleted another key, or none, and answered success.
func TestDeleteBatchSendsEveryKeyIntact(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodDelete {
			got = append(got, strings.TrimPrefix(r.URL.Path, "/b/"))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Objects []struct {
				Key string `xml:"Key"`
			} `xml:"Object"`
		}
		if err := xml.Unmarshal(body, &req); err != nil {
			t.Errorf("the DeleteObjects body is not XML: %v", err)
		}
		for _, o := range req.Objects {
			got = append(got, o.Key)
		}
		_, _ = io.WriteString(w, `<DeleteResult></DeleteResult>`)
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, Bucket: "b", Credentials: Credentials{AccessKey: "k", SecretKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range [][]string{
		{"d/a\x01b", "d/bad\xffname", "d/plain", "d/tab\tand\nnewline\r", "d/é", "d/\uffff"},
		{"d/only\x7f\x00"},
	} {
		got = nil
		if err := c.DeleteBatch(context.Background(), keys); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(keys))
		if !slices.Equal(got, want) {
			t.Errorf("DeleteBatch(%q) asked to delete %q", keys, got)
		}
	}
}

// A listing whose store ignored encoding-type=url marks a key with U+FFFD
// as possibly mangled (versitygw writes so a byte XML cannot carry); one
// the store escaped is the key stored.
func TestListMarksKeysAStoreMayHaveMangled(t *testing.T) {
	encoding, key := "", ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `<ListBucketResult><EncodingType>`+encoding+`</EncodingType>`+
			`<Contents><Key>`+key+`</Key></Contents><Contents><Key>d/plain</Key></Contents></ListBucketResult>`)
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, Bucket: "b", Credentials: Credentials{AccessKey: "k", SecretKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		encoding, key string
		want          []bool
	}{{"url", "d/a%EF%BF%BDb", []bool{false, false}}, {"", "d/a\uFFFDb", []bool{true, false}}} {
		encoding, key = tc.encoding, tc.key
		var got []bool
		for o, err := range c.List(context.Background(), "d/", "", 0, "") {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, o.Mangled)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("encoding %q: Mangled %v, want %v", tc.encoding, got, tc.want)
		}
	}
}
