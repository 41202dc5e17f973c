package s3fs_test

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
)

// journalPut matches the PUT of a journal, the first of which a move
// sends once it has planned (mv's Lstats, the checks of Rename).
func journalPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json")
}

// journalList matches the listing of the journals that Rename's recovery
// sends first, after mv's Lstats and before its checks of the source and
// the destination.
func journalList(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.RawQuery, "agentfs-journal")
}

// putMeanwhile answers, from the first request that at matches on, as a
// store that holds keys as a file and a prefix at once (S3; versitygw's
// disk cannot) would once another writer put the file file (a HEAD of it
// finds it) or the file dir/x (a listing below dir finds it): the key in
// the bucket, without the bucket.
type putMeanwhile struct {
	at        func(*http.Request) bool
	file, dir string
	put       atomic.Bool
}

func (p *putMeanwhile) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.at(r) {
		p.put.Store(true)
	}
	key := cmp.Or(r.URL.Opaque, r.URL.Path)
	answer := func(body string, h http.Header) (*http.Response, error) {
		h.Set("Last-Modified", "Mon, 07 Dec 2026 00:00:00 GMT")
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	}
	const etag = `"ce97a90ef59e9c768263754682f68bd6"` // of "theirs"
	switch {
	case !p.put.Load():
	case p.file != "" && r.Method == http.MethodHead && strings.HasSuffix(key, "/"+p.file):
		h := http.Header{"Etag": {etag}, "Content-Type": {"application/octet-stream"}}
		resp, err := answer("", h)
		resp.ContentLength = int64(len("theirs"))
		return resp, err
	case p.dir != "" && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" &&
		strings.HasSuffix(r.URL.Query().Get("prefix"), "/"+p.dir+"/"):
		prefix := r.URL.Query().Get("prefix")
		body := `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
			`<Prefix>` + url.QueryEscape(prefix) + `</Prefix><KeyCount>1</KeyCount><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>` +
			`<Contents><Key>` + url.QueryEscape(prefix+"x") + `</Key><LastModified>2026-12-07T00:00:00.000Z</LastModified>` +
			`<ETag>` + etag + `</ETag><Size>6</Size></Contents></ListBucketResult>`
		return answer(body, http.Header{"Content-Type": {"application/xml"}})
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestMoveMeetsAShapeMadeAfterItsLstat: a directory put at a file's
// destination, or a file put above a destination, by another writer after
// mv's Lstat found nothing there, refuses the move as it refuses that
// destination found so, nothing moved: the store never holds a file and a
// directory of one name. Since mv's Lstats are trusted (Stated), the
// checks once the move held its claims HEADed a file's destination only,
// and listed a directory's: the move put its copy beside the directory,
// or below the file, and exited 0 (as on AWS S3, or moto; versitygw
// refuses such a key).
func TestMoveMeetsAShapeMadeAfterItsLstat(t *testing.T) {
	for _, at := range []struct {
		name  string
		match func(*http.Request) bool
	}{{"recovery", journalList}, {"journal", journalPut}} {
		for i, tc := range []struct {
			name, from, to, file, dir string
			files                     map[string]string
			want                      fault.Code
		}{
			{"a directory at a file's destination", "a", "b", "", "b", map[string]string{"a": "A"}, fault.CodeNotAFile},
			{"a file above a file's destination", "a", "p/q", "p", "", map[string]string{"a": "A"}, fault.CodeNotADirectory},
			{"a file deeper above a file's destination", "d/a", "d/p/q/r", "d/p", "", map[string]string{"d/a": "A"}, fault.CodeNotADirectory},
			{"a file above a directory's destination", "d", "p/q", "p", "", map[string]string{"d/a": "A"}, fault.CodeNotADirectory},
			{"a directory at a directory's destination", "d", "b", "", "b", map[string]string{"d/a": "A"}, fault.CodeExists},
		} {
			name := fmt.Sprintf("shape-%s-%d", at.name, i)
			f, bucket, root := seeded(t, name, tc.files)
			mover := transportFS(t, root, &putMeanwhile{at: at.match, file: tc.file, dir: tc.dir})
			tl := &core.Tools{FS: mover}
			_, err := tl.Mv(t.Context(), core.MvRequest{From: tc.from, To: tc.to})
			if codeOf(err) != tc.want {
				t.Errorf("%s, put at the %s: the move returned %v, want %s", tc.name, at.name, err, tc.want)
			}
			want := maps.Clone(tc.files)
			want[tc.to] = ""
			for p := range tc.files {
				want[strings.Replace(p, tc.from, tc.to, 1)] = ""
			}
			if got := tree(t, f, slicesOf(want)...); !maps.Equal(got, want) {
				t.Errorf("%s, put at the %s: after the move: %q, want %q", tc.name, at.name, got, want)
			}
			noJournal(t, bucket, name, tc.name)
		}
	}
}
