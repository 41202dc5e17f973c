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

// A directory whose name holds a byte XML cannot carry (\x01) is listed
// on a store that ignores encoding-type=url (versitygw 1.8), which gives
// each of its keys with U+FFFD for that byte: the listing's own prefix
// mangled so is that prefix. ls and rm -r of it were IO_ERROR, "the
// endpoint did not answer as an S3 store", where before ls named its
// file x/f.txt (the key cut at the prefix's length in bytes).
func TestAListingOfAPrefixTheStoreMangles(t *testing.T) {
	f, _, _ := seeded(t, "mangledprefix", map[string]string{"d\x01x/f.txt": "hi\n", "k": "keep\n"})
	page, err := f.ReadDir(t.Context(), "d\x01x", 0, 10)
	ents := page.Entries
	if err != nil || len(ents) != 1 || ents[0].Name != "f.txt" {
		t.Fatalf("ls d\\x01x: %+v, %v; want f.txt", ents, err)
	}
	if _, err := f.Remove(t.Context(), "d\x01x", backend.RemoveOptions{Recursive: true}); err != nil {
		t.Fatalf("rm -r d\\x01x: %v", err)
	}
	if _, err := f.Stat(t.Context(), "d\x01x/f.txt"); codeOf(err) != fault.CodeNotFound {
		t.Errorf("d\\x01x/f.txt after rm -r: %v, want NOT_FOUND", err)
	}
}
