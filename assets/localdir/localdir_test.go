package localdir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
)

var testKey = bytes.Repeat([]byte{7}, keySize)

func object(name, content string, expires time.Time) assets.Object {
	h := sha256.Sum256([]byte(content))
	return assets.Object{Name: name, MIMEType: "text/csv", Size: int64(len(content)), SHA256: hex.EncodeToString(h[:]), Expires: expires}
}

// publish puts content into dir and returns its link's path and query.
func publish(t *testing.T, dir, name, content string, expires time.Time) string {
	t.Helper()
	s, err := New(dir, "http://example.test/base/", testKey)
	if err != nil {
		t.Fatal(err)
	}
	link, err := s.Put(context.Background(), object(name, content, expires), strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(link, "http://example.test/base")
	if !ok {
		t.Fatalf("link %s does not start with the base URL", link)
	}
	return rest
}

func request(t *testing.T, srv *Server, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	return w
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	content := "a,b\n1,2\n"
	link := publish(t, dir, "out put.csv", content, now.Add(time.Hour))
	id := object("", content, now).SHA256
	u, _ := url.Parse(link)
	q := u.Query()
	srv, err := NewServer(dir, testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now }
	with := func(key, value string) string {
		v := url.Values{}
		for k := range q {
			v.Set(k, q.Get(k))
		}
		v.Set(key, value)
		return u.EscapedPath() + "?" + v.Encode()
	}
	for _, tc := range []struct {
		name   string
		target string
		header map[string]string
		at     time.Time
		status int
		body   string
	}{
		{"fetch", link, nil, now, 200, content},
		{"range", link, map[string]string{"Range": "bytes=2-4"}, now, 206, content[2:5]},
		{"etag", link, map[string]string{"If-None-Match": `"` + id + `"`}, now, 304, ""},
		{"a second before expiry", link, nil, now.Add(time.Hour - time.Second), 200, content},
		{"expired", link, nil, now.Add(time.Hour), 410, ""},
		{"tampered signature", with("sig", strings.Repeat("A", 43)), nil, now, 403, ""},
		{"lengthened", with("exp", "9999999999"), nil, now, 403, ""},
		{"no signature", u.EscapedPath(), nil, now, 403, ""},
		{"a second exp", link + "&exp=9999999999", nil, now, 403, ""},
		{"another name", strings.Replace(link, "out%20put.csv", "other.csv", 1), nil, now, 403, ""},
		{"not an id", "/" + strings.Repeat("z", 64) + "/x?exp=1&sig=x", nil, now, 404, ""},
		{"traversal", "/../" + filepath.Base(dir) + "/x?exp=1&sig=x", nil, now, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Now = func() time.Time { return tc.at }
			w := request(t, srv, tc.target, tc.header)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.status >= 300 {
				return
			}
			if got := w.Body.String(); got != tc.body {
				t.Errorf("body %q, want %q", got, tc.body)
			}
			if ct, et := w.Header().Get("Content-Type"), w.Header().Get("ETag"); ct != "text/csv" || et != `"`+id+`"` {
				t.Errorf("Content-Type %q, ETag %q", ct, et)
			}
		})
	}
}

// TestServeNeverLeavesTheFolder: a link planted in the assets folder that
// points outside it is not followed, even with a valid signature.
func TestServeNeverLeavesTheFolder(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	link := publish(t, dir, "x.txt", "public", now.Add(time.Hour))
	id := object("", "public", now).SHA256
	if err := os.Remove(filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(dir, testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now }
	if w := request(t, srv, link, nil); w.Code != 404 || strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("status %d, body %q: the link outside was followed", w.Code, w.Body)
	}
}

// TestPutOnceRelinkKeepsLatestExpiry: the same content is stored once, and
// its metadata keeps the latest expiry of its links.
func TestPutOnceRelinkKeepsLatestExpiry(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0).UTC()
	publish(t, dir, "a.csv", "same", now.Add(2*time.Hour))
	publish(t, dir, "b.csv", "same", now.Add(time.Hour))
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // the content, its metadata, the lock
		t.Errorf("folder holds %v", names)
	}
	meta, err := readMeta(os.DirFS(dir), object("", "same", now).SHA256)
	if err != nil || !meta.Expires.Equal(now.Add(2*time.Hour)) || meta.Size != 4 || meta.Name != "b.csv" {
		t.Errorf("metadata %+v, %v", meta, err)
	}
}

// TestPutFailureLeavesNothing: content that fails midway leaves neither the
// content nor a temporary file.
func TestPutFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, DefaultBaseURL, testKey)
	if err != nil {
		t.Fatal(err)
	}
	stale := fault.Errorf(fault.CodeStale, "changed.")
	_, err = s.Put(context.Background(), object("x", "0123456789", time.Now().Add(time.Hour)),
		io.MultiReader(strings.NewReader("01234"), errReader{stale}))
	if !errors.Is(err, stale) {
		t.Fatalf("Put: %v, want the content's error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != lockName {
		t.Errorf("folder holds %v after a failed Put", entries)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	publish(t, dir, "old.csv", "old", now.Add(time.Minute))
	publish(t, dir, "new.csv", "new", now.Add(time.Hour))
	temp := filepath.Join(dir, tempPrefix+"left")
	if err := os.WriteFile(temp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(temp, now.Add(-2*time.Hour), now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(dir, testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now.Add(time.Minute) }
	n, err := srv.Prune()
	if err != nil || n != 1 {
		t.Fatalf("Prune: %d, %v; want 1", n, err)
	}
	for name, want := range map[string]bool{
		object("", "old", now).SHA256: false, object("", "old", now).SHA256 + ".json": false,
		object("", "new", now).SHA256: true, object("", "new", now).SHA256 + ".json": true,
		filepath.Base(temp): false,
	} {
		if _, err := os.Lstat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
}

func TestLoadKey(t *testing.T) {
	state := t.TempDir()
	k1, err := LoadKey(state)
	if err != nil || len(k1) != keySize {
		t.Fatalf("LoadKey: %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(filepath.Join(state, keyName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v; want mode 0600", fi.Mode(), err)
	}
	k2, err := LoadKey(state)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second LoadKey gave another key (%v)", err)
	}
	if err := os.Chmod(filepath.Join(state, keyName), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(state); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeNotConfigured {
		t.Fatalf("a key others can read: %v, want NOT_CONFIGURED", err)
	}
}

func TestNewRefusesBadBaseURL(t *testing.T) {
	for _, base := range []string{"127.0.0.1:8080", "ftp://h/", "http://", "http://h/?q=1"} {
		if _, err := New(t.TempDir(), base, testKey); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument {
			t.Errorf("%q: %v, want INVALID_ARGUMENT", base, err)
		}
	}
}
