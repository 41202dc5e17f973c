package localdir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
	"golang.org/x/sys/unix"
)

var testKey = bytes.Repeat([]byte{7}, keySize)

func object(name, content string, lifetime time.Duration) assets.Object {
	h := sha256.Sum256([]byte(content))
	return assets.Object{Name: name, MIMEType: "text/csv", Size: int64(len(content)), SHA256: hex.EncodeToString(h[:]), Lifetime: lifetime}
}

// publish puts content into dir at now, for lifetime, and returns its
// link's path and query.
func publish(t *testing.T, dir, name, content string, now time.Time, lifetime time.Duration) string {
	t.Helper()
	s, err := New(dir, "http://example.test/base/", testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return now }
	obj := object(name, content, lifetime)
	sample, err := s.SampleLink(obj)
	if err != nil {
		t.Fatal(err)
	}
	n := len(sample)
	link, err := s.Put(context.Background(), obj, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if len(link.URL) > n || !link.Expires.Equal(expiry(now, lifetime)) {
		t.Fatalf("link %s (%d bytes, SampleLink %d), expires %v: want %v", link.URL, len(link.URL), n, link.Expires, expiry(now, lifetime))
	}
	rest, ok := strings.CutPrefix(link.URL, "http://example.test/base")
	if !ok {
		t.Fatalf("link %s does not start with the base URL", link)
	}
	return rest
}

// server serves dir with testKey, its clock stopped at now.
func server(t *testing.T, dir string, now time.Time) *Server {
	t.Helper()
	srv, err := NewServer(dir, func() ([]byte, error) { return testKey, nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	srv.Now = func() time.Time { return now }
	return srv
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
	link := publish(t, dir, "out put.csv", content, now, time.Hour)
	id := object("", content, 0).SHA256
	u, _ := url.Parse(link)
	q := u.Query()
	srv := server(t, dir, now)
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
	link := publish(t, dir, "x.txt", "public", now, time.Hour)
	id := object("", "public", 0).SHA256
	if err := os.Remove(filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	srv := server(t, dir, now)
	if w := request(t, srv, link, nil); w.Code != 404 || strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("status %d, body %q: the link outside was followed", w.Code, w.Body)
	}
}

// TestPutOnceRelinkKeepsLatestExpiry: the same content is stored once, and
// its metadata keeps the latest expiry of its links.
func TestPutOnceRelinkKeepsLatestExpiry(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0).UTC()
	publish(t, dir, "a.csv", "same", now, 2*time.Hour)
	publish(t, dir, "b.csv", "same", now, time.Hour)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // the content, its metadata, the lock
		t.Errorf("folder holds %v", names)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	meta, err := readMeta(root, object("", "same", 0).SHA256)
	if err != nil || !meta.Expires.Equal(now.Add(2*time.Hour)) || meta.Size != 4 || meta.Name != "b.csv" {
		t.Errorf("metadata %+v, %v", meta, err)
	}
}

// TestPutFailureLeavesNothing: content that fails midway leaves neither the
// content nor a temporary file.
func TestPutFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stale := fault.Errorf(fault.CodeStale, "changed.")
	_, err = s.Put(context.Background(), object("x", "0123456789", time.Hour),
		io.MultiReader(strings.NewReader("01234"), errReader{stale}))
	if !errors.Is(err, stale) {
		t.Fatalf("Put: %v, want the content's error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != lockName {
		t.Errorf("folder holds %v after a failed Put", entries)
	}
}

// Content whose metadata cannot be written (a full disk: here, a folder
// in its place) is removed: it was left, holding the space, and the next
// publish was NO_SPACE too.
func TestPutMetadataFailureLeavesNoContent(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	obj := object("x", "0123456789", time.Hour)
	if err := os.Mkdir(filepath.Join(dir, obj.SHA256+".json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), obj, strings.NewReader("0123456789")); err == nil {
		t.Fatal("Put succeeded with no metadata written")
	}
	if _, err := os.Lstat(filepath.Join(dir, obj.SHA256)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the content is left after a failed Put: %v", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	publish(t, dir, "old.csv", "old", now, time.Minute)
	publish(t, dir, "new.csv", "new", now, time.Hour)
	// Under the folder's lock a temporary file is a dead publish's,
	// however new: it waited an hour.
	temp := filepath.Join(dir, tempPrefix+"left")
	if err := os.WriteFile(temp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(temp, now, now); err != nil {
		t.Fatal(err)
	}
	srv := server(t, dir, now.Add(time.Minute))
	n, err := srv.Prune(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Prune: %d, %v; want 1", n, err)
	}
	for name, want := range map[string]bool{
		object("", "old", 0).SHA256: false, object("", "old", 0).SHA256 + ".json": false,
		object("", "new", 0).SHA256: true, object("", "new", 0).SHA256 + ".json": true,
		filepath.Base(temp): false,
	} {
		if _, err := os.Lstat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
}

// A publish removes the temporary files that a publish killed while
// writing left (each as large as its file): they stayed until a server's
// prune, which a folder no server runs on never had. A key's, which
// LoadKey makes without the folder's lock, stays.
func TestPutRemovesDeadTemps(t *testing.T) {
	dir := t.TempDir()
	dead, key := filepath.Join(dir, tempPrefix+"12345"), filepath.Join(dir, tempPrefix+"key-6789")
	for _, p := range []string{dead, key} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, dir, "a.csv", "a", time.Unix(1_800_000_000, 0), time.Hour)
	if _, err := os.Lstat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead publish's temporary file after a publish: %v, want it removed", err)
	}
	if _, err := os.Lstat(key); err != nil {
		t.Errorf("a key's temporary file after a publish: %v, want it kept", err)
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

// A key of another user's is not used: one planted while the state
// directory was not private (chmod 700 since, as its refusal's hint says)
// is known to that user, who could then sign a link to anything the
// folder holds, for as long as they like. Only its mode was checked, and
// root, who reads any user's 0600 file, signed with it.
func TestLoadKeyRefusesAnotherUsersKey(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chowns a key to another user: run the tests as root")
	}
	state := t.TempDir()
	p := filepath.Join(state, keyName)
	if err := os.WriteFile(p, bytes.Repeat([]byte{7}, keySize), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func() ([]byte, error){
		"LoadKey":   func() ([]byte, error) { return LoadKey(state) },
		"KeyReader": KeyReader(state),
	} {
		if key, err := load(); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeNotConfigured || !strings.Contains(err.Error(), "user 65534") {
			t.Errorf("%s of a key of user 65534: %x, %v; want NOT_CONFIGURED naming the user", name, key, err)
		}
	}
}

func TestNewRefusesBadBaseURL(t *testing.T) {
	for _, base := range []string{"127.0.0.1:8080", "ftp://h/", "http://", "http://h/?q=1",
		"http://h/#", "http://h/?", "http://h/a b", "http://h:99999", "http://h:0", "http://h:", "http://u@h/",
		`http://h/"\`, "http://h/{x}", "http://h/a|b"} {
		if _, err := New(t.TempDir(), base, testKey, time.Second); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument {
			t.Errorf("%q: %v, want INVALID_ARGUMENT", base, err)
		}
	}
}

// TestExpiryRoundsUp: a link works for all of its lifetime from when its
// content is in place: an expiry in whole seconds is rounded up, never
// down (a 1s link made at .9 s was expired when publish returned).
func TestExpiryRoundsUp(t *testing.T) {
	at := time.Unix(1_800_000_000, 900_000_000)
	for _, tc := range []struct {
		now      time.Time
		lifetime time.Duration
		want     int64
	}{
		{at, time.Second, 1_800_000_002},
		{at.Truncate(time.Second), time.Second, 1_800_000_001},
		{at, time.Hour, 1_800_003_601},
	} {
		if got := expiry(tc.now, tc.lifetime); got.Unix() != tc.want || got.Nanosecond() != 0 {
			t.Errorf("expiry(%v, %v) = %v, want %d", tc.now, tc.lifetime, got, tc.want)
		}
	}
	dir := t.TempDir()
	link := publish(t, dir, "x.txt", "x", at, time.Second)
	srv := server(t, dir, at.Add(time.Second-time.Nanosecond))
	if w := request(t, srv, link, nil); w.Code != 200 {
		t.Fatalf("a 1s link, a nanosecond before its second is up: %d", w.Code)
	}
}

// TestExpiryCountsFromTheEnd: a link works for its whole lifetime after
// Put returns, however long the metadata's syncs took, and the metadata
// outlasts it. The expiry was counted before them: a 1 s link from a
// publish whose syncs crossed a second expired up to 26 ms early.
func TestExpiryCountsFromTheEnd(t *testing.T) {
	// A clock read once before the metadata is written and then after:
	// 0.3 s later, past a second.
	start := time.Unix(1_800_000_000, 900_000_000)
	reads := 0
	link, meta := putOnClock(t, func() time.Time {
		reads++
		if reads == 1 {
			return start
		}
		return start.Add(300 * time.Millisecond)
	})
	if want := expiry(start.Add(300*time.Millisecond), time.Second); !link.Expires.Equal(want) {
		t.Errorf("the link expires at %v, want %v: a second after Put returned", link.Expires, want)
	}
	if meta.Expires.Before(link.Expires) {
		t.Errorf("the metadata expires at %v, before its link at %v", meta.Expires, link.Expires)
	}
}

// putOnClock puts a 1 s link of x.txt into a new folder whose store reads
// clock, and returns the link and the metadata it left.
func putOnClock(t *testing.T, clock func() time.Time) (assets.Link, record) {
	t.Helper()
	dir := t.TempDir()
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = clock
	obj := object("x.txt", "x", time.Second)
	link, err := s.Put(context.Background(), obj, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	meta, err := readMeta(root, obj.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return link, meta
}

// publishSigned publishes name, with name as its content, in dir with the
// key of the state directory state (made on first use), and returns the
// link's path.
func publishSigned(t *testing.T, dir, state, name string, now time.Time) string {
	t.Helper()
	key, err := LoadKey(state)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(dir, "http://example.test", key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return now }
	link, err := s.Put(context.Background(), object(name, name, time.Hour), strings.NewReader(name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(link.URL, "http://example.test")
}

// TestServerFollowsTheKey: the server reads the key at each request, so
// that removing it revokes every link at once and a key made again by a
// publish serves the new links, without a restart.
func TestServerFollowsTheKey(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	old := publishSigned(t, dir, state, "old.txt", now)
	srv, err := NewServer(dir, KeyReader(state))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now }
	if w := request(t, srv, old, nil); w.Code != 200 {
		t.Fatalf("before the key is removed: %d", w.Code)
	}
	if err := os.Remove(filepath.Join(state, keyName)); err != nil {
		t.Fatal(err)
	}
	if w := request(t, srv, old, nil); w.Code != 403 {
		t.Fatalf("the key removed: %d, want 403 (revoked)", w.Code)
	}
	fresh := publishSigned(t, dir, state, "new.txt", now)
	if w := request(t, srv, fresh, nil); w.Code != 200 {
		t.Fatalf("a link signed with the new key: %d, want 200", w.Code)
	}
	if w := request(t, srv, old, nil); w.Code != 403 {
		t.Fatalf("an old link under the new key: %d, want 403", w.Code)
	}
}

// TestServerBlamesAnUnusableKey: a key that is there but cannot be used
// (others may read it, or it is not 32 bytes) answers 503, not the 403 of
// a link whose signature does not hold, and KeyFault is told once for
// each fault, not at each request; a removed key is still 403, untold.
func TestServerBlamesAnUnusableKey(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	target := publishSigned(t, dir, state, "a", now)
	p := filepath.Join(state, keyName)
	key, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(dir, KeyReader(state))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now }
	var told []error
	srv.KeyFault = func(err error) { told = append(told, err) }
	for _, step := range []struct {
		what string
		do   func() error
		code int
		told int
		body string
	}{
		{"a usable key", func() error { return nil }, 200, 0, "a"},
		{"a key others may read", func() error { return os.Chmod(p, 0o644) }, 503, 1, "signing key cannot be used"},
		{"the same, again", func() error { return nil }, 503, 1, "signing key cannot be used"},
		{"the key mended", func() error { return os.Chmod(p, 0o600) }, 200, 1, "a"},
		{"a key of 31 bytes", func() error { return os.WriteFile(p, key[:31], 0o600) }, 503, 2, "signing key cannot be used"},
		{"the key removed", func() error { return os.Remove(p) }, 403, 2, "signature does not hold"},
		{"the key put back", func() error { return os.WriteFile(p, key, 0o600) }, 200, 2, "a"},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		w := request(t, srv, target, nil)
		if w.Code != step.code || len(told) != step.told || !strings.Contains(w.Body.String(), step.body) {
			t.Fatalf("%s: %d %q, told %v; want %d, told %d times", step.what, w.Code, w.Body, told, step.code, step.told)
		}
	}
	var fe *fault.Error
	if !errors.As(told[0], &fe) || fe.Code != fault.CodeNotConfigured || fe.Path != p || !strings.Contains(fe.Hint, "chmod 600") {
		t.Errorf("told %v, want NOT_CONFIGURED naming %s and chmod 600", told[0], p)
	}
}

// TestServeTypeIsTheLinks: the same bytes published under two names serve
// each link with the type its publish reported, not the latest one's.
func TestServeTypeIsTheLinks(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	// An animated PNG's start: image/png by its .png name, the APNG type
	// by its magic under another name.
	content := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + strings.Repeat("\x00", 17) + "\x00\x00\x00\x08acTL" + strings.Repeat("\x00", 12)
	png := publish(t, dir, "p.png", content, now, time.Hour)
	bin := publish(t, dir, "p.bin", content, now, time.Hour)
	asPNG, asBin := textfile.ServedType("p.png", []byte(content), false), textfile.ServedType("p.bin", []byte(content), false)
	if asPNG == asBin {
		t.Fatalf("both names give %s: the test tells nothing", asPNG)
	}
	srv := server(t, dir, now)
	for link, want := range map[string]string{png: asPNG, bin: asBin} {
		w := request(t, srv, link, nil)
		if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != want {
			t.Errorf("%s: %d, Content-Type %q, want %q", link, w.Code, ct, want)
		}
	}
}

// TestServeBinaryTextAsPublished: text that read takes for binary, a NUL
// past the 3 KiB sniffed but in its first 64 KiB of text, is served as
// application/octet-stream, the type publish reports for it; it was served
// text/plain; charset=utf-8, NUL and all.
func TestServeBinaryTextAsPublished(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	utf16le := func(s string) string {
		b := []byte{0xff, 0xfe}
		for _, r := range s {
			b = append(b, byte(r), byte(r>>8))
		}
		return string(b)
	}
	a := func(n int) string { return strings.Repeat("a", n) }
	srv := server(t, dir, now)
	for name, tc := range map[string]struct{ content, want string }{
		"nul-10000.txt":  {a(10000) + "\x00b\n", "application/octet-stream"},
		"nul-64k.txt":    {a(64<<10-1) + "\x00b\n", "application/octet-stream"},
		"nul-past.txt":   {a(64<<10) + "\x00b\n", "text/plain; charset=utf-8"},
		"utf16-nul.txt":  {utf16le(a(4000) + "\x00b\n"), "application/octet-stream"},
		"plain.txt":      {a(10000) + "\n", "text/plain; charset=utf-8"},
		"nul-10000.json": {"[" + a(10000) + "\x00]", "application/octet-stream"},
	} {
		link := publish(t, dir, name, tc.content, now, time.Hour)
		w := request(t, srv, link, nil)
		if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != tc.want {
			t.Errorf("%s: %d, Content-Type %q, want %q", name, w.Code, ct, tc.want)
		}
	}
}

// TestServeCharsetOnlyForUTF8: text whose start is UTF-8 and rest is not
// is served with no charset, as publish reported it; it was served as
// UTF-8, sniffed from its first 3 KiB.
func TestServeCharsetOnlyForUTF8(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return now }
	content := strings.Repeat("a", 4000) + "\ncaf\xe9\n"
	obj := object("late.txt", content, time.Hour)
	obj.MIMEType, obj.NotUTF8 = "text/plain", true
	link, err := s.Put(context.Background(), obj, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	w := request(t, server(t, dir, now), u.RequestURI(), nil)
	if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != "text/plain" {
		t.Errorf("%d, Content-Type %q, want text/plain with no charset", w.Code, ct)
	}
}

// TestServeRangesAsRFC: a Range the server must ignore serves the whole
// content, and one it cannot satisfy is 416, as RFC 9110 says: another
// unit or a set that does not parse got 416, a suffix of 0 bytes 206 with
// no byte. The conditional headers come first: If-Range with another
// validator ignores even an unsatisfiable Range (200), and an
// If-None-Match that holds is 304.
func TestServeRangesAsRFC(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	link := publish(t, dir, "x.txt", "0123456789", now, time.Hour)
	srv := server(t, dir, now)
	for _, tc := range []struct {
		rng  string
		code int
		body string
	}{
		{"items=0-1", 200, "0123456789"},
		{"bytes=abc", 200, "0123456789"},
		{"bytes=5-2", 200, "0123456789"},
		{"bytes=", 200, "0123456789"},
		{"bytes=-0", 416, ""},
		{"bytes=0-0", 206, "0"},
		{"bytes=-0, 2-3", 206, "23"},
		{"bytes=8-", 206, "89"},
		{"bytes=-2", 206, "89"},
		{"bytes=0-1,,3-4", 206, ""},
		{"bytes=99999999999999999999-", 416, ""},
		{"bytes=8-99999999999999999999", 206, "89"},
		{"bytes=-99999999999999999999", 206, "0123456789"},
	} {
		w := request(t, srv, link, map[string]string{"Range": tc.rng})
		if tc.rng == "bytes=0-1,,3-4" {
			// Two ranges: a multipart answer.
			if w.Code != 206 || !strings.Contains(w.Body.String(), "01") || !strings.Contains(w.Body.String(), "34") {
				t.Errorf("Range %q: %d %q, want 206 with 01 and 34", tc.rng, w.Code, w.Body.String())
			}
			continue
		}
		if w.Code != tc.code || tc.code != 416 && w.Body.String() != tc.body {
			t.Errorf("Range %q: %d %q, want %d %q", tc.rng, w.Code, w.Body.String(), tc.code, tc.body)
		}
	}
	etag := request(t, srv, link, nil).Header().Get("ETag")
	if w := request(t, srv, link, map[string]string{"Range": "bytes=-0", "If-Range": `"other"`}); w.Code != 200 {
		t.Errorf("bytes=-0 with If-Range of another validator: %d, want 200", w.Code)
	}
	if w := request(t, srv, link, map[string]string{"Range": "bytes=-0", "If-None-Match": etag}); w.Code != 304 {
		t.Errorf("bytes=-0 with an If-None-Match that holds: %d, want 304", w.Code)
	}
}

// TestServeRangesOfAnEmptyFile: an empty file has no byte to send or to
// name, and any Range of it is ignored (200), as http.ServeContent does
// for one it cannot satisfy: a suffix (bytes=-1) got 206 with the
// Content-Range "bytes 0--1/0", which is no valid one.
func TestServeRangesOfAnEmptyFile(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	link := publish(t, dir, "e.txt", "", now, time.Hour)
	srv := server(t, dir, now)
	for _, rng := range []string{"bytes=-1", "bytes=-0", "bytes=0-0", "bytes=0-", "bytes=-5, 0-1"} {
		w := request(t, srv, link, map[string]string{"Range": rng})
		if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Range") != "" {
			t.Errorf("Range %q of an empty file: %d, Content-Range %q, %d bytes; want 200 with none", rng, w.Code, w.Header().Get("Content-Range"), w.Body.Len())
		}
	}
}

// TestFIFOsNeverHang: a FIFO planted in the folder as metadata, content
// or the lock is never opened for a blocking read: the link answers 404,
// a prune and a publish end.
func TestFIFOsNeverHang(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	link := publish(t, dir, "x.txt", "x", now, time.Hour)
	id := object("", "x", 0).SHA256
	if err := os.Remove(filepath.Join(dir, id+".json")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, id+".json"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := server(t, dir, now)
	if w := request(t, srv, link, nil); w.Code != 404 {
		t.Errorf("metadata that is a FIFO: %d, want 404", w.Code)
	}
	if _, err := srv.Prune(context.Background()); err != nil {
		t.Errorf("Prune: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, lockName)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, lockName), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), object("y", "y", time.Hour), strings.NewReader("y")); fault.AsError(err) == nil {
		t.Errorf("a lock that is a FIFO: %v, want an error", err)
	}
	// The folder itself made a FIFO while served: os.OpenRoot waited in
	// open(2) for a writer. Bounded: a writer is opened to end that wait.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(dir, 0o644); err != nil {
		t.Fatal(err)
	}
	answered := make(chan int, 1)
	go func() { answered <- request(t, srv, link, nil).Code }()
	select {
	case code := <-answered:
		if code != 404 {
			t.Errorf("a folder that is a FIFO: %d, want 404", code)
		}
	case <-time.After(30 * time.Second): // a bound on a wait that must end, not synchronisation
		if fd, err := unix.Open(dir, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			defer unix.Close(fd)
		}
		t.Fatalf("a request to a folder that is a FIFO still waits after 30 s (answered %d once let go)", <-answered)
	}
}

// TestPutWaitsForTheLockAsLongAsItIsTold: a publish waits for a folder
// locked by another process for its lock timeout, then is LOCK_TIMEOUT;
// a timeout of 0 tries once (it waited for ever); it stops at once when
// its context ends.
func TestPutWaitsForTheLockAsLongAsItIsTold(t *testing.T) {
	dir := t.TempDir()
	held, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// Another open file description: flock excludes it as it would another
	// process.
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s, err := New(dir, DefaultBaseURL, testKey, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(context.Background(), object("x", "x", time.Hour), strings.NewReader("x"))
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout {
		t.Fatalf("Put on a locked folder: %v, want LOCK_TIMEOUT", err)
	}
	s.lockTimeout = 0
	bounded, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_, err = s.Put(bounded, object("x", "x", time.Hour), strings.NewReader("x"))
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout {
		t.Fatalf("Put with a lock timeout of 0 on a locked folder: %v, want LOCK_TIMEOUT at once", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.lockTimeout = time.Hour
	if _, err := s.Put(ctx, object("x", "x", time.Hour), strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with its context ended: %v, want context.Canceled", err)
	}
}

// TestPruneRemovesUndescribedContent: content that no metadata describes
// (a publish that failed between its two renames) is removed by a prune.
func TestPruneRemovesUndescribedContent(t *testing.T) {
	dir := t.TempDir()
	orphan := filepath.Join(dir, object("", "orphan", 0).SHA256)
	if err := os.WriteFile(orphan, []byte("orphan"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := server(t, dir, time.Now())
	if n, err := srv.Prune(context.Background()); err != nil || n != 1 {
		t.Fatalf("Prune: %d, %v; want 1", n, err)
	}
	if _, err := os.Lstat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the content without metadata is still there: %v", err)
	}
}

// TestPutKeepsContentPrivate: what publish stores is for agentfs serve,
// which runs as the same user (the key is 0600): the content, its
// metadata and a folder publish makes are the user's alone. A file of mode
// 0600 was stored 0644 in a 0755 folder, for every local user to read
// without a link, and after its link expired.
func TestPutKeepsContentPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	now := time.Unix(1_800_000_000, 0)
	publish(t, dir, "secret.env", "password=hunter2\n", now, time.Hour)
	id := object("", "password=hunter2\n", 0).SHA256
	for _, name := range []string{"", id, id + ".json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%q: mode %v, want none for others", name, fi.Mode().Perm())
		}
	}
}

// TestPutMakesReusedContentPrivate: content an older agentfs stored 0644
// is reused by a publish of the same content (not copied again), and made
// privateMode then; it stayed readable to every local user, without a
// link, while its metadata alone became 0600.
func TestPutMakesReusedContentPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	now := time.Unix(1_800_000_000, 0)
	publish(t, dir, "secret.env", "password=hunter2\n", now, time.Hour)
	blob := filepath.Join(dir, object("", "password=hunter2\n", 0).SHA256)
	for _, mode := range []os.FileMode{0o644, 0o400, os.ModeSetuid | 0o600} {
		if err := os.Chmod(blob, mode); err != nil {
			t.Fatal(err)
		}
		before, err := os.Stat(blob)
		if err != nil {
			t.Fatal(err)
		}
		publish(t, dir, "secret.env", "password=hunter2\n", now, time.Hour)
		fi, err := os.Stat(blob)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, fi) {
			t.Errorf("stored %v: the content was copied again, not reused", mode)
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky); got != privateMode {
			t.Errorf("stored %v: mode %v after a publish, want %v", mode, got, os.FileMode(privateMode))
		}
	}
}

// movedAway are what may take the name of a folder moved away.
var movedAway = []struct {
	name    string
	inPlace func(dir string) error
}{
	{"nothing in its place", func(string) error { return nil }},
	{"a file in its place", func(dir string) error { return os.WriteFile(dir, []byte("not a folder"), 0o644) }},
}

// TestPruneOfNoFolder: a folder moved away, the documented way to take
// every link down, leaves a prune nothing to do; it was an IO_ERROR saying
// the folder could not be written and nothing was published, which serve
// wrote on stderr every minute.
func TestPruneOfNoFolder(t *testing.T) {
	for _, tc := range movedAway {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "assets")
			now := time.Unix(1_800_000_000, 0)
			srv := server(t, dir, now)
			publish(t, dir, "x.txt", "x", now, time.Minute)
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if err := tc.inPlace(dir); err != nil {
				t.Fatal(err)
			}
			srv.Now = func() time.Time { return now.Add(time.Hour) }
			if n, err := srv.Prune(context.Background()); n != 0 || err != nil {
				t.Errorf("Prune: %d, %v; want 0, nil", n, err)
			}
		})
	}
}

// TestPruneSaysWhy: a prune that cannot remove an expired asset says what
// stood in its way, and not that nothing was published (it is no publish);
// it said only that the folder could not be written.
func TestPruneSaysWhy(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	publish(t, dir, "x.txt", "x", now, time.Minute)
	id := object("", "x", 0).SHA256
	if err := os.Remove(filepath.Join(dir, id)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, id, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := server(t, dir, now.Add(time.Hour)).Prune(context.Background())
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeIOError || !strings.Contains(fe.Message, syscall.ENOTEMPTY.Error()) || strings.Contains(fe.Hint, "published") {
		t.Errorf("Prune: %v, want IO_ERROR saying %q, its hint not about a publish", err, syscall.ENOTEMPTY.Error())
	}
}

// TestNewServerFileInTheWay: a file where serve's folder should be is
// NOT_CONFIGURED saying so, as publish has it; it was IO_ERROR, the folder
// "cannot be written", "nothing was published".
func TestNewServerFileInTheWay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, perr := New(dir, DefaultBaseURL, testKey, time.Second)
	_, serr := NewServer(dir, func() ([]byte, error) { return testKey, nil })
	var pe, se *fault.Error
	if !errors.As(perr, &pe) || !errors.As(serr, &se) || pe.Code != fault.CodeNotConfigured || se.Code != pe.Code || se.Message != pe.Message {
		t.Errorf("NewServer: %v; want as New: %v", serr, perr)
	}
}

// A folder renamed away, as one taken down by moving it aside, is gone
// from its name: its links answer 404, though its descriptor still reads
// it (a hunt found them served from the new name), whether nothing takes
// its name or something that cannot be opened as a folder does; moved
// back, it is served again.
func TestServerDropsAFolderMovedAway(t *testing.T) {
	for _, tc := range movedAway {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "assets")
			now := time.Unix(1_800_000_000, 0)
			srv := server(t, dir, now)
			link := publish(t, dir, "x.txt", "x", now, time.Hour)
			if w := request(t, srv, link, nil); w.Code != 200 {
				t.Fatalf("a link before the move: %d, want 200", w.Code)
			}
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if err := tc.inPlace(dir); err != nil {
				t.Fatal(err)
			}
			if w := request(t, srv, link, nil); w.Code != 404 {
				t.Fatalf("a link into the folder moved away: %d, want 404", w.Code)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir+".old", dir); err != nil {
				t.Fatal(err)
			}
			if w := request(t, srv, link, nil); w.Code != 200 {
				t.Fatalf("a link into the folder moved back: %d, want 200", w.Code)
			}
		})
	}
}

// TestServerFollowsTheFolder: a folder removed and made again (by the next
// publish) is served, not the removed one the server opened first.
func TestServerFollowsTheFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	now := time.Unix(1_800_000_000, 0)
	srv := server(t, dir, now)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	link := publish(t, dir, "x.txt", "x", now, time.Hour)
	if w := request(t, srv, link, nil); w.Code != 200 {
		t.Fatalf("a link into the folder made again: %d, want 200", w.Code)
	}
}

// TestExpiryOnASlowDisk: a disk on which each write of the metadata takes
// more than a second ends the rewrites after a few, with the link's
// expiry the one written: they went on for ever.
func TestExpiryOnASlowDisk(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	reads := 0
	link, meta := putOnClock(t, func() time.Time {
		reads++
		now = now.Add(3 * time.Second) // each write takes 3 s
		return now
	})
	if meta.Expires.Before(link.Expires) || reads > maxExpiryRounds+1 {
		t.Errorf("after %d reads of the clock: metadata until %v, link until %v", reads, meta.Expires, link.Expires)
	}
}

// A key that cannot be read for want of a descriptor (a server under load)
// is sound: the answer is 503 saying to retry, not that the key cannot be
// used, which sent a person to mend a key nothing is wrong with.
func TestServerKeyUnreadableForNow(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	target := publishSigned(t, dir, state, "a", now)
	srv, err := NewServer(dir, func() ([]byte, error) { return nil, keyError(unix.EMFILE, filepath.Join(state, keyName)) })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Now = func() time.Time { return now }
	if w := request(t, srv, target, nil); w.Code != 503 || !strings.Contains(w.Body.String(), "retry") {
		t.Fatalf("the key unreadable for now: %d %q; want 503 saying to retry", w.Code, w.Body)
	}
}

// A folder held past the timeout is LOCK_TIMEOUT naming the wait it had:
// 0 waits 10 ms, and said "stayed locked for 0s".
func TestLockDirTimeoutSaysTheWait(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(context.Background(), dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for timeout, said := range map[time.Duration]string{0: "10ms", 20 * time.Millisecond: "20ms"} {
		_, err := lockDir(context.Background(), dir, timeout)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout || e.Message != "the assets folder stayed locked for "+said+"." {
			t.Errorf("timeout %v: got %v, want LOCK_TIMEOUT saying %s", timeout, err, said)
		}
	}
}

// An assets folder that cannot be made for want of permission is
// PERMISSION_DENIED, as serve calls it and as the contract names a
// location this user may not write, saying why: publish called it
// NOT_CONFIGURED, "cannot be created", without the cause. Root may make
// it anywhere: as root, the test runs itself again as nobody.
func TestNewFolderNotPermitted(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestNewFolderNotPermitted")
		return
	}
	parent := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(parent, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := New(filepath.Join(parent, "assets"), DefaultBaseURL, testKey, time.Second)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied {
		t.Fatalf("New under a folder it may not write: %v, want PERMISSION_DENIED", err)
	}
	// Another cause (a file in the way) is still NOT_CONFIGURED, naming it.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New(filepath.Join(file, "assets"), DefaultBaseURL, testKey, time.Second)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotConfigured || !strings.Contains(e.Message, "not a directory") {
		t.Fatalf("New below a file: %v, want NOT_CONFIGURED saying not a directory", err)
	}
}

// runAsNobody runs the test name of this binary, copied where any user
// may run it, as the user nobody (65534), and fails t with its output
// when it fails.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "localdir.test")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME=/nonexistent")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
}

// A folder others can write to, or another user's, is refused by publish
// and serve alike: another user could put their own bytes under the
// SHA-256 of a file the user publishes (before, as publish kept content
// of the right size that was there, or after), and its link served them,
// the answer's sha256 and the ETag saying they were the file's.
func TestFolderOthersCanWriteIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    os.FileMode
		owner   int // -1: this user's
		refused bool
	}{
		{"a private folder", 0o700, -1, false},
		{"a folder others may read", 0o755, -1, false},
		{"a folder its group can write to", 0o775, -1, true},
		{"a folder anyone can write to", 0o777, -1, true},
		{"a sticky folder anyone can write to", 0o1777, -1, true},
		{"a folder of another user", 0o755, 65534, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Getuid() != 0 {
				t.Skip("chowns the folder to another user: run the tests as root")
			}
			dir := filepath.Join(t.TempDir(), "assets")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if err := os.Chown(dir, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			_, err := New(dir, DefaultBaseURL, testKey, time.Second)
			_, serr := NewServer(dir, func() ([]byte, error) { return testKey, nil })
			for what, err := range map[string]error{"publish": err, "serve": serr} {
				e := fault.AsError(err)
				if refused := e != nil && e.Code == fault.CodeNotConfigured && strings.Contains(e.Message, "not this user's alone"); refused != tc.refused {
					t.Errorf("%s into %s: %v, want refused NOT_CONFIGURED: %v", what, tc.name, err, tc.refused)
				}
			}
		})
	}
}

// Content of another user's at a content's name (planted while the folder
// was open to others, chmod'ed since) is written over, not linked.
func TestPutWritesOverContentOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chowns content to another user: run the tests as root")
	}
	dir := t.TempDir()
	obj := object("report.md", "the real report\n", time.Hour)
	blob := filepath.Join(dir, obj.SHA256)
	if err := os.WriteFile(blob, []byte("EVIL CONTENT!!!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(blob, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	s, err := New(dir, DefaultBaseURL, testKey, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), obj, strings.NewReader("the real report\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(blob); err != nil || string(b) != "the real report\n" {
		t.Fatalf("the content linked: %q, %v; want the file's", b, err)
	}
}
