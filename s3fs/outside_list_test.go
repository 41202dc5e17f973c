package s3fs_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
)

// A store that ignores a listing's prefix (a broken gateway or proxy)
// lists keys outside the workspace: ls is IO_ERROR, and rm -r deletes
// nothing, where a key shorter than the prefix panicked the listing and
// rm -r of a directory deleted every key listed, those of other prefixes
// of the bucket too.
func TestAListingOutsideThePrefixAsked(t *testing.T) {
	var mu sync.Mutex
	var deleted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>false</IsTruncated>` +
				`<Contents><Key>a</Key><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag><Size>1</Size></Contents>` +
				`<Contents><Key>other/secret</Key><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag><Size>1</Size></Contents>` +
				`<Contents><Key>ws/d/x</Key><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag><Size>1</Size></Contents></ListBucketResult>`))
		case r.Method == http.MethodHead:
			http.NotFound(w, r)
		case r.Method == http.MethodPost && r.URL.Query().Has("delete"):
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			deleted = append(deleted, string(b))
			mu.Unlock()
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult></DeleteResult>`))
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	f, err := s3fs.New(s3fs.Config{Root: "s3://bkt/ws", Endpoint: srv.URL, AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "d"} {
		_, err := f.ReadDir(t.Context(), p, 0, 10)
		if codeOf(err) != fault.CodeIOError {
			t.Errorf("ls %s: %v, want IO_ERROR", p, err)
		}
	}
	if _, err := f.Remove(t.Context(), "d", backend.RemoveOptions{Recursive: true}); codeOf(err) != fault.CodeIOError {
		t.Errorf("rm -r d: %v, want IO_ERROR", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deleted) > 0 {
		t.Errorf("rm -r d sent %q", deleted)
	}
}
