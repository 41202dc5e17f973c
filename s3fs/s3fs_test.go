package s3fs_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/backend/conformance"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/stalled"
	"github.com/agentfs/agentfs/s3client"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// counter counts the requests made and the bytes of the bodies received,
// as the server announced them.
type counter struct {
	mu       sync.Mutex
	requests map[string]int
	// asked counts the requests by method, path and query.
	asked map[string]int
	bytes int64
	// tracing prints each request after the first reset, with S3TRACE set.
	tracing bool
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		c.requests[r.Method]++
		if c.asked != nil {
			c.asked[r.Method+" "+cmp.Or(r.URL.Opaque, r.URL.Path)+"?"+r.URL.RawQuery+" "+r.Header.Get("Range")]++
		}
		if c.tracing {
			fmt.Fprintln(os.Stderr, r.Method, cmp.Or(r.URL.Opaque, r.URL.Path), r.URL.RawQuery, r.Header.Get("Range"))
		}
		if r.Method != http.MethodHead { // a HEAD's length is the object's
			c.bytes += max(resp.ContentLength, 0)
		}
		c.mu.Unlock()
	}
	return resp, err
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests, c.asked, c.bytes = map[string]int{}, map[string]int{}, 0
	c.tracing = os.Getenv("S3TRACE") != ""
}

// twice lists the requests sent more than once since the last reset,
// with how many times.
func (c *counter) twice() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.asked {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	slices.Sort(out)
	return out
}

// total is the number of requests sent since the last reset.
func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.requests {
		n += k
	}
	return n
}

// newFS returns a workspace at a fresh prefix of bucket, its requests
// counted.
func newFS(t *testing.T, bucket string) (*s3fs.FS, *counter) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return openFS(t, "s3://"+bucket+"/ws-"+hex.EncodeToString(b))
}

func openFS(t testing.TB, root string) (*s3fs.FS, *counter) {
	t.Helper()
	cnt := &counter{requests: map[string]int{}}
	return transportFS(t, root, cnt), cnt
}

// transportFS is a backend of root whose requests go through rt (the
// default transport when nil).
func transportFS(t testing.TB, root string, rt http.RoundTripper) *s3fs.FS {
	t.Helper()
	access, secret := s3test.Keys()
	f, err := s3fs.New(s3fs.Config{Root: root, Endpoint: s3test.Endpoint(t), AccessKey: access, SecretKey: secret, Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// dyingFS is a backend of root whose process dies after cut requests:
// every later request fails, and its lease is dead at once, whatever the
// clocks, so the next call recovers what it left.
func dyingFS(t testing.TB, root string, cut int) *s3fs.FS {
	t.Helper()
	f := transportFS(t, root, cutOff(cut))
	s3fs.SetLease(f, -time.Minute)
	return f
}

func TestConformance(t *testing.T) {
	bucket := s3test.Bucket(t)
	conformance.Run(t, func(t *testing.T) conformance.Backend {
		f, _ := newFS(t, bucket)
		return f
	})
}

func codeOf(err error) fault.Code {
	if e := fault.AsError(err); e != nil {
		return e.Code
	}
	return ""
}

// A part of a key between two slashes that no path can name: a walk that
// took d/./e's "." for a directory entered d again and again, for ever.
func TestNameable(t *testing.T) {
	for name, want := range map[string]bool{"": false, ".": false, "..": false, "...": true, "a": true, ".git": true, " ": true} {
		if s3fs.Nameable(name) != want {
			t.Errorf("nameable(%q) = %v", name, !want)
		}
	}
}

func TestParseRoot(t *testing.T) {
	for _, tc := range []struct {
		root, bucket, prefix string
		ok                   bool
	}{
		{"s3://b", "b", "", true},
		{"s3://b/", "b", "", true},
		{"s3://b/p", "b", "p/", true},
		{"s3://b/p/q/", "b", "p/q/", true},
		{"s3://b/p/../q", "b", "q/", true},
		{"s3://b/../..", "b", "", true},
		{"s3://", "", "", false},
		{"/local/dir", "", "", false},
	} {
		bucket, prefix, err := s3fs.ParseRoot(tc.root)
		if (err == nil) != tc.ok || bucket != tc.bucket || prefix != tc.prefix {
			t.Errorf("ParseRoot(%q) = %q, %q, %v", tc.root, bucket, prefix, err)
		}
	}
}

// TestRangedReads: a window deep in a large object costs one ranged GET
// past the open's (a GET of its first 64 KiB, which holds a window
// there), and never fetches the bytes between.
func TestRangedReads(t *testing.T) {
	f, cnt := newFS(t, s3test.Bucket(t))
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	if _, err := f.WriteFile(ctx, "big", data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, int64(len(data)) - 8192} {
		cnt.reset()
		r, err := f.Open(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		if n, err := r.ReadAt(buf, off); n != len(buf) || err != nil || !bytes.Equal(buf, data[off:off+4096]) {
			t.Errorf("ReadAt(%d): %d %v", off, n, err)
		}
		r.Close()
		gets, bytes := 1, int64(64<<10)
		if off > 0 {
			gets, bytes = 2, 64<<10+4096
		}
		if cnt.requests["HEAD"] != 0 || cnt.requests["GET"] != gets || cnt.bytes != bytes {
			t.Errorf("a window at %d cost %v requests and %d bytes, want %d GETs and %d bytes", off, cnt.requests, cnt.bytes, gets, bytes)
		}
	}
	cnt.reset()
	r, err := f.Open(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	all, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("the stream read %d bytes (%v), want the %d written", len(all), err, len(data))
	}
	if cnt.bytes != int64(len(data)) || cnt.requests["GET"] > 12 {
		t.Errorf("a whole read cost %v requests and %d bytes", cnt.requests, cnt.bytes)
	}
	// A large object replaced under an open reader fails the next window
	// past the first piece, never mixing versions.
	r2, err := f.Open(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if _, err := f.WriteFile(ctx, "big", bytes.ToUpper(data), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.ReadAt(make([]byte, 10), 100); err != nil {
		t.Errorf("a window of the first piece of a replaced object: %v, want it as opened", err)
	}
	if _, err := r2.ReadAt(make([]byte, 10), 200<<10); codeOf(err) != fault.CodeStale {
		t.Errorf("a window of a replaced object: %v, want STALE", err)
	}
}

// A path holding a NUL is INVALID_ARGUMENT before any request, as on a
// disk: it went to the store, which versitygw answers 500, and after
// three retries (two seconds) the call was IO_ERROR whose hint said to
// retry.
func TestNULInPath(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	f, cnt := newFS(t, bucket)
	for _, p := range []string{"\x00", "a\x00b", "d/\x00/e", "s3://" + bucket + "/x\x00"} {
		cnt.reset()
		calls := map[string]error{}
		_, calls["stat"] = f.Stat(ctx, p)
		_, calls["open"] = f.Open(ctx, p)
		_, calls["readdir"] = f.ReadDir(ctx, p, 0, 10)
		calls["walk"] = f.Walk(ctx, p, backend.WalkOptions{}, func(backend.WalkEntry) error { return nil })
		_, calls["write"] = f.WriteFile(ctx, p, []byte("x"), backend.WriteOptions{})
		_, calls["remove"] = f.Remove(ctx, p, backend.RemoveOptions{})
		for name, err := range calls {
			if codeOf(err) != fault.CodeInvalidArgument {
				t.Errorf("%s %q: %v, want INVALID_ARGUMENT", name, p, err)
			}
		}
		if n := cnt.requests[http.MethodHead] + cnt.requests[http.MethodGet] + cnt.requests[http.MethodPut] + cnt.requests[http.MethodDelete]; n != 0 {
			t.Errorf("%q: %d requests sent, want none: %v", p, n, cnt.requests)
		}
	}
}

// TestConfinement: the workspace is its prefix; nothing outside it is
// reached, a sibling prefix sharing its first letters included.
func TestConfinement(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	ws, _ := openFS(t, "s3://"+bucket+"/ws")
	sibling, _ := openFS(t, "s3://"+bucket+"/ws2")
	whole, _ := openFS(t, "s3://"+bucket)
	if _, err := sibling.WriteFile(ctx, "secret", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(ctx, "mine", []byte("y"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code fault.Code
	}{
		{"../ws2/secret", fault.CodeOutsideRoot},
		{"a/../../ws2/secret", fault.CodeOutsideRoot},
		{"/ws2/secret", fault.CodeOutsideRoot},
		{"s3://" + bucket + "/ws2/secret", fault.CodeOutsideRoot},
		{"s3://other/ws/mine", fault.CodeOutsideRoot},
		{"2/secret", fault.CodeNotFound},
		{"s3://" + bucket + "/ws/mine", ""},
		{"./mine", ""},
		// .. up from the root and back in is resolved by the names, as on
		// a disk: it was OUTSIDE_ROOT.
		{"../ws/mine", ""},
		{"../ws", ""},
		{"../ws/../ws2/secret", fault.CodeOutsideRoot},
		{"s3://" + bucket + "/ws/../ws/mine", ""},
	} {
		_, err := ws.Stat(ctx, tc.path)
		if codeOf(err) != tc.code {
			t.Errorf("stat %s: %v, want %q", tc.path, err, tc.code)
		}
	}
	// From the bucket's root, nothing is above.
	for _, p := range []string{"..", "../" + bucket + "/ws/mine", "ws/../../ws"} {
		if _, err := whole.Stat(ctx, p); codeOf(err) != fault.CodeOutsideRoot {
			t.Errorf("stat %s of the bucket: %v, want OUTSIDE_ROOT", p, err)
		}
	}
	page, err := ws.ReadDir(ctx, ".", 0, 10)
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Name != "mine" {
		t.Errorf("the workspace lists %+v (%v), want mine alone", page.Entries, err)
	}
	page, err = whole.ReadDir(ctx, ".", 0, 10)
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Name != "ws" || page.Entries[1].Name != "ws2" {
		t.Errorf("the bucket lists %+v (%v), want ws and ws2", page.Entries, err)
	}
}

// TestNotSupported: what an object cannot be is refused, never ignored.
func TestNotSupported(t *testing.T) {
	f, _ := newFS(t, s3test.Bucket(t))
	for _, opts := range []backend.WriteOptions{{Executable: true}, {InPlace: true}} {
		if _, err := f.WriteFile(context.Background(), "f", []byte("x"), opts); codeOf(err) != fault.CodeNotSupported {
			t.Errorf("a write with %+v: %v, want NOT_SUPPORTED", opts, err)
		}
	}
	if _, err := f.Stat(context.Background(), "f"); codeOf(err) != fault.CodeNotFound {
		t.Errorf("a refused write made the file: %v", err)
	}
}

// TestWalkIgnores: ignore files are objects, honoured by a walk unless
// NoIgnore, from the directories above its start too.
func TestWalkIgnores(t *testing.T) {
	f, _ := newFS(t, s3test.Bucket(t))
	ctx := context.Background()
	for p, data := range map[string]string{
		".gitignore": "*.log\nbuild/\n", "src/a.go": "", "src/a.log": "", "src/build/out": "",
		"src/.agentfsignore": "secret*\n", "src/secret.txt": "", "src/sub/b.go": "", ".git/config": "",
	} {
		if _, err := f.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(start string, opts backend.WalkOptions) []string {
		var got []string
		err := f.Walk(ctx, start, opts, func(e backend.WalkEntry) error {
			got = append(got, e.Rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		start string
		opts  backend.WalkOptions
		want  []string
	}{
		{".", backend.WalkOptions{}, []string{".gitignore", "src", "src/.agentfsignore", "src/a.go", "src/sub", "src/sub/b.go"}},
		{"src", backend.WalkOptions{}, []string{".agentfsignore", "a.go", "sub", "sub/b.go"}},
		{"src", backend.WalkOptions{NoIgnore: true}, []string{".agentfsignore", "a.go", "a.log", "build", "build/out", "secret.txt", "sub", "sub/b.go"}},
	} {
		if got := walk(tc.start, tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("walk of %s with %+v: %q, want %q", tc.start, tc.opts, got, tc.want)
		}
	}
}

// TestMissingBucket: a root in a bucket that does not exist says so.
func TestMissingBucket(t *testing.T) {
	f, _ := openFS(t, "s3://agentfs-no-such-bucket/p")
	_, err := f.Stat(context.Background(), "x")
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotFound || !strings.Contains(e.Message, "bucket") {
		t.Errorf("stat in a missing bucket: %v, want NOT_FOUND", err)
	}
}

// A root whose bucket no store can have (a..b) is INVALID_ARGUMENT, not
// NOT_FOUND with a hint to create a bucket that cannot be made.
func TestBucketNoStoreCanHave(t *testing.T) {
	for _, name := range []string{"a..b", "ab-", "-ab", "Ab1", "a_b", "192.168.1.1", "ab", strings.Repeat("a", 64)} {
		if s3fs.BucketNameFault(name) == "" {
			t.Errorf("%q: no fault found", name)
		}
	}
	for _, name := range []string{"abc", "a.b-c", "agentfs-no-such-bucket", "1.2.3", strings.Repeat("a", 63)} {
		if f := s3fs.BucketNameFault(name); f != "" {
			t.Errorf("%q: %s", name, f)
		}
	}
	f, _ := openFS(t, "s3://a..b/p")
	_, err := f.Stat(context.Background(), "x")
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, "two dots") {
		t.Errorf("stat in bucket a..b: %v, want INVALID_ARGUMENT", err)
	}
}

// dying is a transport whose process dies at the first request at
// accepts: that request and every later one fail. It sends the others on
// through next (the default transport when nil). With sent, the process
// dies as that request's answer comes: the request is made.
type dying struct {
	at   func(r *http.Request) bool
	sent bool
	next http.RoundTripper
	mu   sync.Mutex
	dead bool
}

func (d *dying) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	wasDead := d.dead
	d.dead = d.dead || d.at(r)
	dead := d.dead
	d.mu.Unlock()
	if dead && (wasDead || !d.sent) {
		return nil, errors.New("the process died")
	}
	resp, err := cmp.Or(d.next, http.DefaultTransport).RoundTrip(r)
	if dead && err == nil {
		resp.Body.Close()
		return nil, errors.New("the process died")
	}
	return resp, err
}

// cutOff is a process that dies after cut PUTs and DELETEs.
func cutOff(cut int) *dying {
	return &dying{at: func(r *http.Request) bool {
		if r.Method == http.MethodPut || r.Method == http.MethodDelete {
			cut--
		}
		return cut < 0
	}}
}

// diesAt is a process that dies as it sends the first PUT whose path
// holds part.
func diesAt(part string) *dying {
	return &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), part)
	}}
}

// TestDeadCommitKeepsAWriteOfItsBytes: a file written, by another
// writer, where a dead transaction had written the same bytes stays once
// the transaction is rolled back, whether it replaced a file or created
// one. Told by their ETags (the MD5 of the bytes), the write was taken for
// the transaction's: the new file deleted, the other replaced by the
// transaction's backup.
func TestDeadCommitKeepsAWriteOfItsBytes(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "deadcommit", map[string]string{"b": "old b"})
	dead := transportFS(t, root, &dying{sent: true, at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/deadcommit/b")
	}})
	if _, err := dead.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}}); err == nil {
		t.Fatal("the transaction that died at its second write succeeded")
	}
	for name, data := range map[string]string{"a": "new a", "b": "new b"} {
		if _, err := f.WriteFile(ctx, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recovered(t, f, bucket, "deadcommit", 1, map[string]string{"a": "new a", "b": "new b"})
}

// TestCommitUndoneButForAnotherWritersChange: a transaction that fails at
// its commit point after another writer changed files it had written
// (one rewritten, one removed) leaves those as the writer made them and
// says so (STALE, naming them), and undoes the rest. It said "nothing was
// changed": the writer's files may hold this transaction's change.
func TestCommitUndoneButForAnotherWritersChange(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "undonebut", map[string]string{"a": "a", "b": "b", "c": "c"})
	other := func() {
		if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{}); err != nil {
			t.Error(err)
		}
		if _, err := f.Remove(ctx, "b", backend.RemoveOptions{}); err != nil {
			t.Error(err)
		}
	}
	committer := transportFS(t, root, &onFirst{match: commitPoint, do: other, fail: true, always: true})
	_, err := committer.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")},
		{Path: "c", Data: []byte("new c")}})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || !errors.Is(err, backend.ErrPartlyUndone) ||
		!slices.Equal(e.Details["kept"].([]string), []string{"a", "b"}) {
		t.Errorf("the transaction undone but for a and b: %#v, want STALE keeping a and b", e)
	}
	recovered(t, f, bucket, "undonebut", 0, map[string]string{"a": "theirs", "b": "", "c": "c"})
}

// TestCommitRollbackKeepsAnotherWritersRemoval: a transaction refused
// before it removed a file leaves that file as another writer left it,
// removed: in its process, and when rolled back after a kill. The
// rollback put back every file removed, its removals or not.
func TestCommitRollbackKeepsAnotherWritersRemoval(t *testing.T) {
	ctx := context.Background()
	for _, dead := range []bool{false, true} {
		name := fmt.Sprintf("keepremoval-%v", dead)
		f, bucket, root := seeded(t, name, map[string]string{"a": "a", "g": "doomed"})
		other := func() {
			if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{}); err != nil {
				t.Error(err)
			}
			if _, err := f.Remove(ctx, "g", backend.RemoveOptions{}); err != nil {
				t.Error(err)
			}
		}
		writeA := func(r *http.Request) bool {
			return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/a")
		}
		var rt http.RoundTripper = &onFirst{match: writeA, do: other}
		if dead {
			rt = &dying{at: writeA}
		}
		ops := []backend.Op{{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "a")}},
			{Path: "g", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "g")}}}
		if _, err := transportFS(t, root, rt).Commit(ctx, ops); err == nil {
			t.Fatalf("%s: the transaction succeeded", name)
		}
		if dead {
			other()
		}
		recovered(t, f, bucket, name, -1, map[string]string{"a": "theirs", "g": ""})
	}
}

// TestLostAnswerToAJournalRewrite: a transaction whose journal rewrite
// (saying a move holds its claims, or a removal begins) is made but
// answered with an error goes on when the journal is found to hold the
// rewrite; when it cannot be read, it fails and leaves no journal, so
// that later calls are not undone by its recovery. The journal's removal,
// If-Match the ETag before the rewrite, was refused and taken for a
// recovery's claim: the journal stayed, with the move's claims (a second
// move was STALE, then undone by the recovery) or saying removals had
// begun (its recovery put back a file another writer removed since).
func TestLostAnswerToAJournalRewrite(t *testing.T) {
	ctx := context.Background()
	for _, proven := range []bool{true, false} {
		name := fmt.Sprintf("lostrewrite-%v", proven)
		f, bucket, root := seeded(t, name, map[string]string{"src": "data", "a": "a", "g": "doomed"})
		rewriter := func() *s3fs.FS {
			var next http.RoundTripper
			if !proven {
				next = &onFirst{fail: true, match: func(r *http.Request) bool {
					return r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json")
				}}
			}
			return transportFS(t, root, &lostAnswer{suffix: ".json", after: 1, next: next})
		}
		_, moveErr := rewriter().Rename(ctx, "src", "dst", backend.WriteOptions{})
		_, commitErr := rewriter().Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")},
			{Path: "g", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "g")}}})
		if proven {
			if moveErr != nil || commitErr != nil {
				t.Errorf("%s: the move: %v; the transaction: %v", name, moveErr, commitErr)
			}
			recovered(t, f, bucket, name, 0, map[string]string{"src": "", "dst": "data", "a": "new a", "g": ""})
			continue
		}
		if moveErr == nil || commitErr == nil {
			t.Errorf("%s: the move: %v; the transaction: %v; want both failed", name, moveErr, commitErr)
		}
		noJournal(t, bucket, name, "transactions whose rewrite's answer was lost")
		if _, err := f.Rename(ctx, "src", "dst", backend.WriteOptions{}); err != nil {
			t.Errorf("%s: a second move: %v", name, err)
		}
		if _, err := f.Remove(ctx, "g", backend.RemoveOptions{}); err != nil {
			t.Fatal(err)
		}
		recovered(t, f, bucket, name, 0, map[string]string{"src": "", "dst": "data", "a": "a", "g": ""})
	}
}

// TestCommitPointAfterARecovery: a transaction whose commit point reaches
// the store once a recovery has taken its journal for a dead one's (its
// lease over on the store's clock: a slow network, a machine asleep),
// rolled it back and removed it, fails. The commit point was the
// journal's removal, which the store answers with success when the key
// is gone: the call succeeded, its files put back. (A move, which had
// deleted its sources, the recovery finishes instead.)
func TestCommitPointAfterARecovery(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "afterrecovery", map[string]string{"a": "data", "c": "old c"})
	committer := func() *s3fs.FS {
		c := transportFS(t, root, &onFirst{match: commitPoint, do: func() {
			if rec, err := f.Recover(ctx); err != nil || rec.RolledBack+rec.Finished != 1 {
				t.Errorf("the recovery: %+v, %v", rec, err)
			}
		}})
		// A lease over when written.
		s3fs.SetLease(c, -time.Minute)
		return c
	}
	if _, err := committer().Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}, {Path: "d", Data: []byte("d")}}); err == nil {
		t.Error("the transaction rolled back by a recovery succeeded")
	}
	if _, err := committer().Rename(ctx, "a", "x", backend.WriteOptions{}); err == nil {
		t.Error("the move finished by a recovery succeeded")
	}
	recovered(t, f, bucket, "afterrecovery", 0, map[string]string{"a": "", "x": "data", "c": "old c", "d": ""})
}

// renewalLost holds the first DELETE of a key ending in hold until the
// journal has been renewed twice since: the first renewal is made but
// answered with an error, and the look at the journal that follows
// fails, so the renewal cannot be proven.
type renewalLost struct {
	hold     string
	renewed  chan struct{}
	mu       sync.Mutex
	holding  bool
	puts     int
	failHead bool
	once     sync.Once
}

func (h *renewalLost) RoundTrip(r *http.Request) (*http.Response, error) {
	p := cmp.Or(r.URL.Opaque, r.URL.Path)
	if r.Method == http.MethodDelete && strings.HasSuffix(p, h.hold) {
		first := false
		h.once.Do(func() { first = true })
		if first {
			h.mu.Lock()
			h.holding = true
			h.mu.Unlock()
			<-h.renewed
		}
	}
	h.mu.Lock()
	failHead := h.failHead && r.Method == http.MethodHead && strings.HasSuffix(p, ".json")
	h.failHead = h.failHead && !failHead
	n := 0
	if h.holding && r.Method == http.MethodPut && strings.HasSuffix(p, ".json") {
		h.puts++
		n = h.puts
	}
	h.mu.Unlock()
	if failHead {
		return nil, errors.New("connection reset by peer")
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	switch {
	case n == 1 && err == nil:
		resp.Body.Close()
		h.mu.Lock()
		h.failHead = true
		h.mu.Unlock()
		return nil, errors.New("connection reset by peer")
	case n == 2:
		close(h.renewed)
	}
	return resp, err
}

// TestRenewalLostThenRefused: a transaction whose renewal is made but
// answered with an error, unproven, renews again over the version it
// finds, unclaimed, and commits. The second renewal, If-Match the version
// before, was refused and taken for a recovery's claim: the transaction
// gave up without a rollback, its journal stayed saying removals had
// begun, and its recovery put back a file another writer removed since.
func TestRenewalLostThenRefused(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "renewallost", map[string]string{"g1": "one", "g2": "two"})
	committer := transportFS(t, root, &renewalLost{hold: "/renewallost/g1", renewed: make(chan struct{})})
	s3fs.SetLease(committer, 3*time.Second) // renewed every second
	if _, err := committer.Commit(ctx, []backend.Op{
		{Path: "g1", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "g1")}},
		{Path: "g2", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "g2")}},
	}); err != nil {
		t.Errorf("the transaction: %v", err)
	}
	recovered(t, f, bucket, "renewallost", 0, map[string]string{"g1": "", "g2": ""})
}

// TestCommitPointUnread: a transaction whose commit point is answered
// with an error, and whose journal cannot be read at once, reads it again:
// committed, it succeeds. Never read, the call says its outcome is
// unknown and that the next call settles it, which one does (here: the
// journal says committed, and is removed). It said the journal was gone
// and left it, or rolled back a committed transaction.
func TestCommitPointUnread(t *testing.T) {
	ctx := context.Background()
	for _, never := range []bool{false, true} {
		name := fmt.Sprintf("unread-%v", never)
		f, bucket, root := seeded(t, name, map[string]string{"c": "old c"})
		headJournal := func(r *http.Request) bool {
			return r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json")
		}
		var heads http.RoundTripper = &onFirst{match: headJournal, fail: true}
		if never {
			heads = &dying{at: headJournal}
		}
		committer := transportFS(t, root, &lostAnswer{suffix: ".json", after: 1, next: heads})
		_, err := committer.Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}})
		switch {
		case !never && err != nil:
			t.Errorf("%s: the transaction: %v", name, err)
		case never && (codeOf(err) != fault.CodeIOError || !strings.Contains(err.Error(), "cannot be read")):
			t.Errorf("%s: the transaction: %v, want IO_ERROR, its journal unread", name, err)
		}
		recovered(t, f, bucket, name, 0, map[string]string{"c": "new c"})
	}
}

// dateAhead moves the Date of the first answer to a request match accepts
// 30 s ahead, as a proxy's or a node's odd clock would.
type dateAhead struct {
	match func(r *http.Request) bool
	next  http.RoundTripper
	once  sync.Once
}

func (d *dateAhead) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := cmp.Or(d.next, http.DefaultTransport).RoundTrip(r)
	if err == nil && d.match(r) {
		d.once.Do(func() {
			if date, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
				resp.Header.Set("Date", date.Add(30*time.Second).UTC().Format(http.TimeFormat))
			}
		})
	}
	return resp, err
}

// TestOneOddDate: one answer whose Date is 30 s ahead neither ends a
// live transaction nor turns a commit point whose answer was lost into an
// unknown outcome. The lease was judged on the skew the Date set.
func TestOneOddDate(t *testing.T) {
	ctx := context.Background()
	for _, atCommit := range []bool{false, true} {
		name := fmt.Sprintf("odddate-%v", atCommit)
		f, bucket, root := seeded(t, name, map[string]string{"c": "old c"})
		// The answer to the backup's copy, or, the journal's removal
		// made and its answer lost, to the look at the journal.
		rt := &dateAhead{match: func(r *http.Request) bool {
			return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != ""
		}}
		if atCommit {
			rt = &dateAhead{next: &lostAt{match: commitPoint}, match: func(r *http.Request) bool {
				return r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json")
			}}
		}
		if _, err := transportFS(t, root, rt).Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}}); err != nil {
			t.Errorf("%s: the transaction: %v", name, err)
		}
		recovered(t, f, bucket, name, 0, map[string]string{"c": "new c"})
	}
}

// versionOf is the version of the file at path.
func versionOf(t *testing.T, f *s3fs.FS, path string) string {
	t.Helper()
	fi, err := f.Stat(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Version
}

// TestOneOddDateAtARecovery: a recovery whose listing is answered with a
// Date 30 s ahead leaves a live transaction alone, and the transaction
// commits. The recovery judged the lease on that one Date, rolled the
// transaction back, and the transaction went on and reported success.
func TestOneOddDateAtARecovery(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "odddaterec", map[string]string{"c": "old c"})
	h := newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/odddaterec/d")
	})
	done := make(chan error, 1)
	go func() {
		_, err := transportFS(t, root, h).Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}, {Path: "d", Data: []byte("d")}})
		done <- err
	}()
	<-h.reached
	recoverer := transportFS(t, root, &dateAhead{match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.RawQuery, "list-type")
	}})
	if rec, err := recoverer.Recover(ctx); err != nil || rec.RolledBack != 0 || rec.Live != 1 {
		t.Errorf("the recovery beside a live transaction: %+v, %v", rec, err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Errorf("the transaction: %v", err)
	}
	recovered(t, f, bucket, "odddaterec", 0, map[string]string{"c": "new c", "d": "d"})
}

// keptBack is a copy of r to send later, and what its sender sees of a
// request kept back: a timeout.
func keptBack(r *http.Request) (*http.Request, error) {
	body, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	kept := r.Clone(context.Background())
	kept.Body = body
	return kept, errors.New("net/http: timeout awaiting response headers")
}

// lateCommitPoint keeps back the first commit point it is sent, answering
// as a timeout would, and fails the later ones, unsent; it sends the kept
// one to the store as the first request that atRollback accepts is made,
// which it then fails, unsent: the commit point lands late, during the
// rollback, and the rollback stops there.
type lateCommitPoint struct {
	atRollback func(r *http.Request) bool
	mu         sync.Mutex
	kept       *http.Request
	landed     int
	once       sync.Once
}

func (l *lateCommitPoint) RoundTrip(r *http.Request) (*http.Response, error) {
	if commitPoint(r) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.kept == nil {
			var err error
			l.kept, err = keptBack(r)
			return nil, err
		}
		return nil, errors.New("connection reset by peer")
	}
	l.mu.Lock()
	kept := l.kept
	l.mu.Unlock()
	fire := false
	if kept != nil && l.atRollback(r) {
		l.once.Do(func() { fire = true })
	}
	if fire {
		if resp, err := http.DefaultTransport.RoundTrip(kept); err == nil {
			l.landed = resp.StatusCode
			resp.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestLateCommitPoint: a commit point that failed, then lands once the
// transaction has given up on it and begun to roll back, is refused, and
// the transaction ends all old. It landed: the journal said committed, the
// rollback stopped half done, and the recovery, taking the journal for a
// committed one's, left the transaction half undone.
func TestLateCommitPoint(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "latecommit", map[string]string{"a": "old a", "b": "old b"})
	late := &lateCommitPoint{atRollback: func(r *http.Request) bool {
		return r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/latecommit/b")
	}}
	if _, err := transportFS(t, root, late).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}}); err == nil {
		t.Error("the transaction whose commit point failed succeeded")
	}
	if late.landed != http.StatusPreconditionFailed {
		t.Errorf("the late commit point was answered %d, want 412", late.landed)
	}
	recovered(t, f, bucket, "latecommit", 1, map[string]string{"a": "old a", "b": "old b"})
}

// journalRemoval matches the DELETE of a journal.
func journalRemoval(r *http.Request) bool {
	return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json")
}

// TestCommittedJournalLeft: a journal left committed (its removal failed)
// names no change, so that an older agentfs, which does not know
// committed, rolls nothing back; it is not a transaction in flight, so
// --recover does not wait for it; and it holds no claim, so the next move
// of a file it moved goes on. An older agentfs rolled both transactions
// back (the move undone, the other half undone, its copies gone), Settle
// failed with LOCK_TIMEOUT, and the next move was STALE for the lease.
func TestCommittedJournalLeft(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "committedleft", map[string]string{"a": "old a", "src": "data"})
	if _, err := transportFS(t, root, &onFirst{match: journalRemoval, fail: true}).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "n", Data: []byte("n")}}); err != nil {
		t.Fatalf("the transaction: %v", err)
	}
	if _, err := transportFS(t, root, &onFirst{match: journalRemoval, fail: true}).Rename(ctx, "src", "dst", backend.WriteOptions{}); err != nil {
		t.Fatalf("the move: %v", err)
	}
	committed := 0
	editJournals(t, bucket, "committedleft", func(j string) string {
		if !strings.Contains(j, `"committed":true`) || strings.Contains(j, `"ops"`) || strings.Contains(j, `"moves"`) {
			t.Errorf("a journal left: %s, want committed and naming no change", j)
		}
		committed++
		return strings.Replace(j, `"lease":"-1m0s"`, `"lease":"15s"`, 1)
	})
	if committed != 2 {
		t.Errorf("%d journals left, want 2", committed)
	}
	if rec, err := f.Settle(ctx, time.Second); err != nil || rec.Live != 0 {
		t.Errorf("--recover beside committed journals: %+v, %v", rec, err)
	}
	if _, err := f.Rename(ctx, "dst", "moved", backend.WriteOptions{}); err != nil {
		t.Errorf("the next move of the file moved: %v", err)
	}
	recovered(t, f, bucket, "committedleft", 0, map[string]string{"a": "new a", "n": "n", "src": "", "dst": "", "moved": "data"})
}

// TestCommittedJournalNamingOthersCopies: a committed journal whose copies
// are not in the journal folder is not agentfs's: every call fails
// IO_ERROR naming it, and nothing it names is removed. Its copies went
// unchecked, and a recovery removed them: any key of the bucket.
func TestCommittedJournalNamingOthersCopies(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "foreigncopies", map[string]string{"a": "precious"})
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	j := []byte(`{"lease":"-1m0s","committed":true,"version":2,"copies":["foreigncopies/a"]}`)
	if _, err := c.PutObject(ctx, bucket, "foreigncopies/.agentfs-journal/20260101T000000.000000000-x.json", bytes.NewReader(j), int64(len(j)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := transportFS(t, root, nil).Recover(ctx); codeOf(err) != fault.CodeIOError || !strings.Contains(err.Error(), "not agentfs's") {
		t.Errorf("the recovery: %v, want IO_ERROR naming the journal", err)
	}
	if got := tree(t, f, "a"); got["a"] != "precious" {
		t.Errorf("after the recovery: %q", got)
	}
}

// keptThenRefused keeps back the first commit point (answered as a
// timeout) and sends it just before the second, which the store then
// refuses; the look at the journal that follows fails.
type keptThenRefused struct {
	mu       sync.Mutex
	kept     *http.Request
	points   int
	failHead bool
	landed   int
}

func (k *keptThenRefused) RoundTrip(r *http.Request) (*http.Response, error) {
	if commitPoint(r) {
		k.mu.Lock()
		k.points++
		if k.points == 1 {
			defer k.mu.Unlock()
			var err error
			k.kept, err = keptBack(r)
			return nil, err
		}
		second := k.points == 2
		k.mu.Unlock()
		if second {
			if resp, err := http.DefaultTransport.RoundTrip(k.kept); err == nil {
				k.landed = resp.StatusCode
				resp.Body.Close()
			}
			resp, err := http.DefaultTransport.RoundTrip(r)
			k.mu.Lock()
			k.failHead = true
			k.mu.Unlock()
			return resp, err
		}
	}
	if r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json") {
		k.mu.Lock()
		fail := k.failHead
		k.failHead = false
		k.mu.Unlock()
		if fail {
			return nil, errors.New("connection reset by peer")
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestCommittedNotReportedLost: a transaction whose first commit point
// lands late, refusing its second, and whose journal cannot then be read
// at once, reads it again and succeeds. The refusal, unread, was taken
// for a recovery's claim: the call said another process rolls it back,
// while it had committed and nothing did.
func TestCommittedNotReportedLost(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "notlost", map[string]string{"c": "old c"})
	k := &keptThenRefused{}
	if _, err := transportFS(t, root, k).Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}}); err != nil {
		t.Errorf("the transaction (its first commit point answered %d): %v", k.landed, err)
	}
	recovered(t, f, bucket, "notlost", 0, map[string]string{"c": "new c"})
}

// TestJournalReachingOutOfTheWorkspace: a journal whose keys climb out of
// the workspace with "..", which the store resolves, is not agentfs's:
// the recovery fails IO_ERROR naming it and changes nothing. Such keys
// passed as below the prefix, and a recovery deleted or overwrote the
// objects they reached.
func TestJournalReachingOutOfTheWorkspace(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	put := func(key, data string) {
		if _, err := c.PutObject(ctx, bucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("victim", "outside")
	sum := md5.Sum([]byte("outside"))
	for i, j := range []string{
		`{"lease":"-1m0s","ops":[{"key":"climb/../victim","new":"` + hex.EncodeToString(sum[:]) + `"}]}`,
		`{"lease":"-1m0s","ops":[{"key":"climb/x/../../victim","old":"0","backup":"climb/.agentfs-journal/b/0"}]}`,
		`{"lease":"-1m0s","moves":[{"from":"climb/x/","to":"climb/../victim/","etag":""}],"claimFirst":true,"claimsHeld":true}`,
		`{"lease":"-1m0s","committed":true,"copies":["climb/.agentfs-journal/.."]}`,
	} {
		key := fmt.Sprintf("climb/.agentfs-journal/2026010%dT000000.000000000-x.json", i)
		put(key, j)
		_, err := transportFS(t, "s3://"+bucket+"/climb", nil).Recover(ctx)
		if codeOf(err) != fault.CodeIOError || !strings.Contains(err.Error(), "not agentfs's") {
			t.Errorf("journal %d: the recovery: %v, want IO_ERROR naming it", i, err)
		}
		o, err := c.GetObject(ctx, bucket, "victim", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(o)
		o.Close()
		if string(data) != "outside" {
			t.Errorf("journal %d: the object outside the workspace holds %q (%v)", i, data, err)
			put("victim", "outside")
		}
		if err := c.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRolledBackJournalLeft: a transaction rolled back whose journal
// could not then be removed leaves a journal that names no change, so
// that its recovery does not roll it back again over what other calls did
// since. Left as it was, it had a recovery put back a file another writer
// removed after the rollback.
func TestRolledBackJournalLeft(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "rolledbackleft", map[string]string{"c": "old c", "g": "doomed"})
	writer := &onFirst{
		match: func(r *http.Request) bool {
			return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/rolledbackleft/c")
		},
		do: func() {
			if _, err := f.WriteFile(ctx, "c", []byte("theirs c"), backend.WriteOptions{}); err != nil {
				t.Error(err)
			}
		},
		next: &onFirst{match: journalRemoval, fail: true},
	}
	ops := []backend.Op{{Path: "g", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "g")}},
		{Path: "c", Data: []byte("new c"), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "c")}}}
	if _, err := transportFS(t, root, writer).Commit(ctx, ops); err == nil {
		t.Fatal("the transaction over another writer's change succeeded")
	}
	if _, err := f.Remove(ctx, "g", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	recovered(t, f, bucket, "rolledbackleft", 0, map[string]string{"c": "theirs c", "g": ""})
}

// TestCommitPointOverARolledBackJournal: a transaction that a recovery
// rolled back meanwhile (its lease over), leaving the journal ended
// because its removal failed, fails at its commit point. The ended journal
// was no longer claimed, so the committer took the refusal for a lost
// answer of its own, committed over it and reported success for changes
// undone.
func TestCommitPointOverARolledBackJournal(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "overrolledback", map[string]string{"c": "old c"})
	recoverer := transportFS(t, root, &onFirst{match: journalRemoval, fail: true})
	committer := transportFS(t, root, &onFirst{match: commitPoint, do: func() {
		if _, err := recoverer.Recover(ctx); err == nil {
			t.Error("the recovery whose journal removal failed succeeded")
		}
	}})
	s3fs.SetLease(committer, -time.Minute)
	if _, err := committer.Commit(ctx, []backend.Op{{Path: "c", Data: []byte("new c")}, {Path: "d", Data: []byte("d")}}); err == nil {
		t.Error("the transaction rolled back by a recovery succeeded")
	}
	recovered(t, f, bucket, "overrolledback", 0, map[string]string{"c": "old c", "d": ""})
}

// TestCommitCrash: a transaction whose process dies anywhere in its
// commit leaves, once the next one recovers it, every file as it was, or,
// after the commit point, every file as the transaction made it; and no
// journal or copy behind.
func TestCommitCrash(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	ops := func(f *s3fs.FS) []backend.Op {
		va, _ := f.Stat(ctx, "a")
		return []backend.Op{
			{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va.Version}},
			{Path: "gone", Remove: true},
			{Path: "dir/c", Data: []byte("new c"), Write: backend.WriteOptions{IfAbsent: true}},
		}
	}
	old := map[string]string{"a": "old a", "gone": "x", "dir/c": ""}
	updated := map[string]string{"a": "new a", "gone": "", "dir/c": "new c"}
	// The commit's PUTs and DELETEs: the journal, 2 copies, 3 changes and
	// before the removal the journal saying so, the journal saying
	// committed (the commit point), its removal; then the copies' batch
	// delete (a POST).
	for cut := 0; cut <= 10; cut++ {
		root := fmt.Sprintf("s3://%s/crash%d", bucket, cut)
		f, _ := openFS(t, root)
		for p, data := range old {
			if data != "" {
				if _, err := f.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		dying := dyingFS(t, root, cut)
		_, commitErr := dying.Commit(ctx, ops(f))
		if _, err := f.Recover(ctx); err != nil {
			t.Fatalf("cut after %d changes: recover: %v", cut, err)
		}
		got := map[string]string{}
		for p := range old {
			r, err := f.Open(ctx, p)
			if codeOf(err) == fault.CodeNotFound {
				got[p] = ""
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(r)
			r.Close()
			got[p] = string(data)
		}
		if !maps.Equal(got, old) && !maps.Equal(got, updated) {
			t.Errorf("cut after %d changes (commit: %v): the files are %q, neither all old nor all new", cut, commitErr, got)
		}
		if commitErr == nil && !maps.Equal(got, updated) {
			t.Errorf("cut after %d changes: a commit reported done left %q", cut, got)
		}
		noJournal(t, bucket, fmt.Sprintf("crash%d", cut), fmt.Sprintf("cut after %d changes", cut))
	}
}

// TestHalfDoneCommitSaysSo: a transaction whose store fails after it sent
// a change cannot undo it, and its journal has the change undone once its
// lease runs out. Its failure said "retry": a replace retried at once
// changed the files left, the recovery then undid the first call's, and
// the files ended half replaced after a retry that exited 0.
func TestHalfDoneCommitSaysSo(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	// The commit's PUTs: the journal, two copies, then a and b.
	for cut, sent := range []bool{false, false, false, true, true} {
		root := fmt.Sprintf("s3://%s/halfdone%d", bucket, cut)
		f, _ := openFS(t, root)
		for _, p := range []string{"a", "b"} {
			if _, err := f.WriteFile(ctx, p, []byte("old "+p), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := transportFS(t, root, cutOff(cut)).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeIOError {
			t.Fatalf("cut after %d requests: %v, want IO_ERROR", cut, err)
		}
		toRecover := strings.Contains(e.Hint, "agentfs --recover") && !strings.Contains(e.Hint, "retry")
		if toRecover != sent {
			t.Errorf("cut after %d requests (a change sent: %v): hint %q", cut, sent, e.Hint)
		}
	}
}

// TestStoreRefusalsAreNotRetried: a request the store refuses as
// malformed fails the same way when retried. A name longer than the
// store's file system takes and a bucket's name it rejects were IO_ERROR
// with the hint "retry".
func TestStoreRefusalsAreNotRetried(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	f, _ := openFS(t, fmt.Sprintf("s3://%s/refusals", bucket))
	long := strings.Repeat("y", 300)
	// A store that takes the name (AWS S3 takes 1,024 bytes) may;
	// versitygw refuses a HEAD (400) and a PUT (ExistingObjectIsDirectory).
	if _, err := f.Stat(ctx, long); codeOf(err) != fault.CodeInvalidArgument && codeOf(err) != fault.CodeNotFound {
		t.Errorf("a stat of a 300-byte name: %v, want NOT_FOUND or INVALID_ARGUMENT", err)
	}
	if _, err := f.WriteFile(ctx, long, []byte("hi"), backend.WriteOptions{}); err != nil && codeOf(err) != fault.CodeNotAFile {
		t.Errorf("a write of a 300-byte name: %v, want success or NOT_A_FILE", err)
	}
	bad, _ := openFS(t, "s3://Not_A_Bucket/p")
	if _, err := bad.Stat(ctx, "a"); codeOf(err) != fault.CodeInvalidArgument {
		t.Errorf("a bucket's name the store rejects: %v, want INVALID_ARGUMENT", err)
	}
}

// TestDeny: a deny path is refused with everything below it, whatever its
// spelling, and never listed, walked or removed with its directory; an
// ignore file there is not read (its rules would tell what it holds).
func TestDeny(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	open, _ := openFS(t, "s3://"+bucket+"/ws")
	files := map[string]string{"d/secret/key": "x", "d/public": "x", "top": "x",
		".git/info/exclude": "top\n", "e/.gitignore": "hidden\n", "e/hidden": "x"}
	for p, data := range files {
		if _, err := open.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	access, secret := s3test.Keys()
	f, err := s3fs.New(s3fs.Config{Root: "s3://" + bucket + "/ws", Endpoint: s3test.Endpoint(t),
		AccessKey: access, SecretKey: secret, Deny: []string{"d/secret", "/local/path", ".git/info", "e/.gitignore"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"d/secret", "d/secret/key", "d/./secret/key", "s3://" + bucket + "/ws/d/secret/key", "d/secret/new"} {
		if _, err := f.Stat(ctx, p); codeOf(err) != fault.CodeDenied {
			t.Errorf("stat %s: %v, want DENIED", p, err)
		}
	}
	if _, err := f.WriteFile(ctx, "d/secret/new", []byte("x"), backend.WriteOptions{}); codeOf(err) != fault.CodeDenied {
		t.Errorf("a write below a deny path: %v, want DENIED", err)
	}
	if _, err := f.Remove(ctx, "d", backend.RemoveOptions{Recursive: true}); codeOf(err) != fault.CodeDenied {
		t.Errorf("a recursive remove of a directory holding a deny path: %v, want DENIED", err)
	}
	var walked []string
	err = f.Walk(ctx, ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		walked = append(walked, e.Rel)
		return nil
	})
	if want := []string{"d", "d/public", "e", "e/hidden", "top"}; err != nil || !slices.Equal(walked, want) {
		t.Errorf("walk %q (%v), want %q", walked, err, want)
	}
	if _, err := open.Stat(ctx, "d/secret/key"); err != nil {
		t.Errorf("the denied object is gone: %v", err)
	}
}

// TestDenyAbove: a deny path at or above the workspace's root (its
// bucket, a prefix holding the root's, .. up from it) denies the whole
// workspace, as a local deny above a root does, and one spelling a key of
// the workspace with // or x/.. in its URL denies that key: the cleaning
// of the workspace's paths refused them as outside, and they were dropped,
// every key left readable. One naming nothing of the workspace (a local
// path, another bucket or prefix) denies nothing: nothing there is reached.
func TestDenyAbove(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	open, _ := openFS(t, "s3://"+bucket+"/ws/in")
	for _, p := range []string{"d/secret", "top"} {
		if _, err := open.WriteFile(ctx, p, []byte("x"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	access, secret := s3test.Keys()
	withDeny := func(root, deny string) *s3fs.FS {
		f, err := s3fs.New(s3fs.Config{Root: root, Endpoint: s3test.Endpoint(t),
			AccessKey: access, SecretKey: secret, Deny: []string{deny}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	root := "s3://" + bucket + "/ws/in"
	for _, c := range []struct{ root, deny, denied, free string }{
		{root, "s3://" + bucket, "top", ""},
		{root, "s3://" + bucket + "/", "top", ""},
		{root, "s3://" + bucket + "/ws", "top", ""},
		{root, "s3://" + bucket + "//ws/", "top", ""},
		{root, "..", "top", ""},
		{root, "../..", "top", ""},
		{root, "../../..", "top", ""},
		{"s3://" + bucket, "..", "ws/in/top", ""},
		{root, "s3://" + bucket + "//ws/in/d", "d/secret", "top"},
		{root, "s3://" + bucket + "/x/../ws/in/d", "d/secret", "top"},
		{root, "s3://" + bucket + "/ws/in/./d/", "d/secret", "top"},
		{root, "../in/d", "d/secret", "top"},
		{root, "s3://" + bucket + "/ws/i", "", "top"},
		{root, "s3://" + bucket + "/ws/in2", "", "top"},
		{root, "s3://" + bucket + "x", "", "top"},
		{root, "../other", "", "top"},
		{root, "/", "", "top"},
		{root, "/ws/in", "", "top"},
	} {
		f := withDeny(c.root, c.deny)
		if c.denied != "" {
			if _, err := f.Stat(ctx, c.denied); codeOf(err) != fault.CodeDenied {
				t.Errorf("root %s, deny %s: stat %s: %v, want DENIED", c.root, c.deny, c.denied, err)
			}
		}
		if c.free != "" {
			if _, err := f.Stat(ctx, c.free); err != nil {
				t.Errorf("root %s, deny %s: stat %s: %v, want it found", c.root, c.deny, c.free, err)
			}
		}
	}
}

// TestOddNames: keys that need escaping are signed, listed and read back
// as written.
func TestOddNames(t *testing.T) {
	f, _ := newFS(t, s3test.Bucket(t))
	ctx := context.Background()
	names := []string{"a b/c d.txt", "ü/ñ.txt", "plus+and&eq=.txt", "pct%20q?#.txt", "tilde~*'().txt"}
	for _, n := range names {
		if _, err := f.WriteFile(ctx, n, []byte(n), backend.WriteOptions{IfAbsent: true}); err != nil {
			t.Fatalf("write %q: %v", n, err)
		}
	}
	var walked []string
	err := f.Walk(ctx, ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Type != backend.TypeFile {
			return nil
		}
		r, err := e.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if string(data) != e.Rel {
			t.Errorf("%q reads %q (%v)", e.Rel, data, err)
		}
		walked = append(walked, e.Rel)
		return nil
	})
	slices.Sort(names)
	if err != nil || !slices.Equal(walked, names) {
		t.Errorf("walk %q (%v), want %q", walked, err, names)
	}
	for _, n := range names {
		v, err := f.Stat(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := f.Remove(ctx, n, backend.RemoveOptions{IfVersion: v.Version}); !ok || err != nil {
			t.Errorf("remove %q: %v %v", n, ok, err)
		}
	}
}

// TestNameOrder: a listing is in name order, though the store's key order
// puts a directory a/ after a-b and a.c, and a walk resumed from any entry
// visits the rest of the full walk.
func TestNameOrder(t *testing.T) {
	f, _ := newFS(t, s3test.Bucket(t))
	ctx := context.Background()
	for _, p := range []string{"a/x", "a-b", "a.c", "a!", "a0", "a-/y", "ab/z", "a b", "a-/-/q", "b", ".gitignore", "-dash"} {
		if _, err := f.WriteFile(ctx, p, []byte("*.log\n"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"-dash", ".gitignore", "a", "a b", "a!", "a-", "a-b", "a.c", "a0", "ab", "b"}
	for _, limit := range []int{1, 3, 100} {
		var got []string
		for off := 0; off < 20; off += limit {
			page, err := f.ReadDir(ctx, ".", off, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Entries {
				got = append(got, e.Name)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %q, want %q", limit, got, want)
		}
	}
	walk := func(from string) []string {
		var got []string
		err := f.Walk(ctx, ".", backend.WalkOptions{From: from}, func(e backend.WalkEntry) error {
			got = append(got, e.Rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := walk("")
	if want := []string{"-dash", ".gitignore", "a", "a/x", "a b", "a!", "a-", "a-/-", "a-/-/q", "a-/y", "a-b", "a.c", "a0", "ab", "ab/z", "b"}; !slices.Equal(all, want) {
		t.Errorf("walk %q, want %q", all, want)
	}
	for i, from := range all {
		if got := walk(from); !slices.Equal(got, all[i:]) {
			t.Errorf("from %s: %q, want %q", from, got, all[i:])
		}
	}
}

// TestJournalFolderRefused: the journal folder is no path of the
// workspace, and a journal that names keys outside the workspace (or
// copies outside its journal folder) is not acted on. Written there by a
// caller, such a journal had recovery read an object from elsewhere into
// the workspace, write one outside it, and delete another.
func TestJournalFolderRefused(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	for _, p := range []string{".agentfs-journal/x.json", ".agentfs-journal", "./.agentfs-journal/../.agentfs-journal/y", "sub/.agentfs-journal/x.json"} {
		if _, err := f.WriteFile(ctx, p, []byte("{}"), backend.WriteOptions{}); codeOf(err) != fault.CodeDenied {
			t.Errorf("write %s: %v, want DENIED", p, err)
		}
		if _, err := f.Open(ctx, p); codeOf(err) != fault.CodeDenied {
			t.Errorf("open %s: %v, want DENIED", p, err)
		}
	}
	whole, _ := openFS(t, "s3://"+bucket)
	for p, data := range map[string]string{"secret/keep.txt": "top secret", "secret/other.txt": "x", "ws/payload.txt": "planted"} {
		if _, err := whole.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	journal := `{"lease":"1ns","ops":[{"key":"ws/leaked.txt","old":"x","backup":"secret/keep.txt"},` +
		`{"key":"secret/planted.txt","old":"x","backup":"ws/.agentfs-journal/1/0"}],` +
		`"moves":[{"from":"ws/m/","to":"secret/other.txt","etag":""}]}`
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, bucket, "ws/.agentfs-journal/20250101T000000-aaaaaaaaaaaaaaaaaaaaaaaa.json", strings.NewReader(journal), int64(len(journal)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Recover(ctx); codeOf(err) != fault.CodeIOError {
		t.Errorf("recovering a journal naming keys outside the workspace: %v, want IO_ERROR", err)
	}
	// A journal folder in a folder (a workspace's there) is neither
	// listed nor carried away or removed with its folder.
	nested, _ := openFS(t, "s3://"+bucket+"/nest")
	for _, k := range []string{"nest/sub/a.txt", "nest/sub/.agentfs-journal/abc/0"} {
		if _, err := c.PutObject(ctx, bucket, k, strings.NewReader("hi"), 2, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var walked []string
	if err := nested.Walk(ctx, ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		walked = append(walked, e.Rel)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(walked, []string{"sub", "sub/a.txt"}) {
		t.Errorf("the walk found %q", walked)
	}
	if _, err := nested.Rename(ctx, "sub", "sub2", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeDenied {
		t.Errorf("moving a folder holding a journal folder: %v, want DENIED", err)
	}
	if _, err := nested.Remove(ctx, "sub", backend.RemoveOptions{Recursive: true}); codeOf(err) != fault.CodeDenied {
		t.Errorf("removing a folder holding a journal folder: %v, want DENIED", err)
	}
	for p, want := range map[string]string{"ws/leaked.txt": "", "secret/planted.txt": "", "secret/other.txt": "x", "secret/keep.txt": "top secret"} {
		r, err := whole.Open(ctx, p)
		got := ""
		if err == nil {
			data, _ := io.ReadAll(r)
			r.Close()
			got = string(data)
		}
		if got != want {
			t.Errorf("%s holds %q, want %q", p, got, want)
		}
	}
}

// A recursive removal or a move of a directory that answers success
// leaves no key below the directory, whatever bytes the keys hold: a
// control byte or a byte that is not UTF-8 cannot travel in
// DeleteObjects' XML body, and rm -r answered deleted:true while such
// objects stayed. A store that lists such a key as U+FFFD (versitygw
// ignores encoding-type=url) cannot have it named: then nothing changes,
// IO_ERROR (a move's copy of it was a lost race, LOCK_TIMEOUT).
func TestKeysXMLCannotCarryMoveWholeOrNotAtAll(t *testing.T) {
	for _, op := range []struct {
		name string
		do   func(context.Context, *s3fs.FS) error
	}{
		{"rm -r", func(ctx context.Context, f *s3fs.FS) error {
			ok, err := f.Remove(ctx, "d", backend.RemoveOptions{Recursive: true})
			if err == nil && !ok {
				return errors.New("nothing removed")
			}
			return err
		}},
		{"mv", func(ctx context.Context, f *s3fs.FS) error {
			_, err := f.Rename(ctx, "d", "e", backend.WriteOptions{IfAbsent: true})
			return err
		}},
	} {
		bucket := s3test.Bucket(t)
		f, _ := openFS(t, "s3://"+bucket+"/ws")
		ctx := context.Background()
		mc, err := s3test.Client(s3test.Endpoint(t))
		if err != nil {
			t.Fatal(err)
		}
		// minio-go refuses a key that is not UTF-8: s3client puts it.
		sc := rawClient(t, bucket)
		for _, k := range []string{"d/a\x01b", "d/bad\xffname", "d/plain"} {
			if _, err := sc.Put(ctx, "ws/"+k, []byte("x\n"), nil); err != nil {
				t.Fatal(k, err)
			}
		}
		err = op.do(ctx, f)
		left := map[string]int{}
		for o := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: "ws/", Recursive: true}) {
			if o.Err == nil {
				left[strings.SplitN(o.Key, "/", 3)[1]]++
			}
		}
		switch e := fault.AsError(err); {
		case err == nil && left["d"] > 0:
			t.Fatalf("%s answered success, yet the store still holds %d keys below d", op.name, left["d"])
		case err != nil && (e == nil || e.Code != fault.CodeIOError || left["d"] != 3 || left["e"] != 0):
			t.Fatalf("%s = %v, leaving %v; want IO_ERROR with nothing changed", op.name, err, left)
		}
	}
}

// An object whose bytes are not its ETag's, whatever the tries (its file
// rewritten behind versitygw's back, which keeps the old ETag), is
// IO_ERROR saying so: it was STALE, "read it again", for ever, and edit's
// retries of it LOCK_TIMEOUT, "retry when the other writers are done".
func TestObjectNotItsETagIsIOError(t *testing.T) {
	dir := s3test.Dir(t)
	bucket := s3test.Bucket(t)
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	ctx := context.Background()
	if _, err := f.WriteFile(ctx, "t.txt", []byte("one\ntwo\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bucket, "ws", "t.txt"), []byte("ONE\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := f.Open(ctx, "t.txt")
	if err == nil {
		data, _ := io.ReadAll(r)
		r.Close()
		t.Fatalf("the open succeeded, reading %q", data)
	}
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeIOError || errors.Is(err, backend.ErrChangedDuringRead) || !strings.Contains(e.Message, "ETag") {
		t.Fatalf("open of an object that is not its ETag's: %v; want IO_ERROR naming the ETag, not a change to retry", err)
	}
}

// An object the store gives no ETag (a file put in versitygw's bucket
// directory by hand) is read, and never changed: a change of it can be
// neither conditional nor undone from a backup, and the rollback of a
// transaction killed over such files took them for files it had created
// and deleted them (15 to 22 of 30 in a black-box hunt).
func TestObjectWithoutETagIsNotChanged(t *testing.T) {
	dir := s3test.Dir(t)
	bucket := s3test.Bucket(t)
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(dir, bucket, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, bucket, "ws", "h"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "h/x"} {
		if err := os.WriteFile(filepath.Join(dir, bucket, "ws", n), []byte("by hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteFile(ctx, "h/y", []byte("y\n"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat(ctx, "a")
	if err != nil || info.Version != "" {
		t.Skipf("the store gives a file put by hand the version %q (%v): nothing to test", info.Version, err)
	}
	if got := tree(t, f, "a"); got["a"] != "by hand\n" {
		t.Fatalf("a reads %q", got["a"])
	}
	for name, change := range map[string]func() error{
		"write": func() error {
			_, err := f.WriteFile(ctx, "a", []byte("new"), backend.WriteOptions{})
			return err
		},
		"transaction": func() error {
			_, err := f.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new")}, {Path: "c", Data: []byte("new"), Write: backend.WriteOptions{IfAbsent: true}}})
			return err
		},
		"move": func() error {
			_, err := f.Rename(ctx, "a", "d", backend.WriteOptions{})
			return err
		},
		// An rm deleted it unconditionally (and rm -r what was beside it).
		"removal": func() error {
			_, err := f.Remove(ctx, "a", backend.RemoveOptions{})
			return err
		},
		"recursive removal": func() error {
			_, err := f.Remove(ctx, "h", backend.RemoveOptions{Recursive: true})
			return err
		},
		"move onto": func() error {
			if _, err := f.WriteFile(ctx, "e", []byte("e"), backend.WriteOptions{IfAbsent: true}); err != nil {
				return err
			}
			_, err := f.Rename(ctx, "e", "b", backend.WriteOptions{})
			return err
		},
	} {
		if err := change(); codeOf(err) != fault.CodeNotSupported {
			t.Errorf("%s of an object without an ETag: %v, want NOT_SUPPORTED", name, err)
		}
	}
	// The directory's own answers come first: they were NOT_SUPPORTED.
	if _, err := f.Remove(ctx, "h", backend.RemoveOptions{}); codeOf(err) != fault.CodeNotEmpty {
		t.Errorf("removal of the directory, not recursive: %v, want NOT_EMPTY", err)
	}
	if _, err := f.Remove(ctx, "h", backend.RemoveOptions{IfVersion: "abc"}); codeOf(err) != fault.CodeStale {
		t.Errorf("removal of the directory at a file's version: %v, want STALE", err)
	}
	if got := tree(t, f, "a", "b", "c", "d", "h/x", "h/y"); got["a"] != "by hand\n" || got["b"] != "by hand\n" || got["c"] != "" || got["d"] != "" || got["h/x"] != "by hand\n" || got["h/y"] != "y\n" {
		t.Errorf("after the changes refused: %s", brief(got))
	}
}

// rawClient is agentfs's own S3 client of bucket on the test server: it
// puts what minio-go refuses (a key that is not UTF-8, its own headers).
func rawClient(t *testing.T, bucket string) *s3client.Client {
	t.Helper()
	access, secret := s3test.Keys()
	c, err := s3client.New(s3client.Config{Endpoint: s3test.Endpoint(t), Bucket: bucket,
		Credentials: s3client.Credentials{AccessKey: access, SecretKey: secret}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A store that accepts the connection and never answers fails a call
// IO_ERROR naming the store once no byte moved for the idle timeout:
// read, ls and write waited for ever, --lock-timeout or not.
func TestStalledStoreIsIOError(t *testing.T) {
	url, stop, err := stalled.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	f, err := s3fs.New(s3fs.Config{Root: "s3://bucket/ws", Endpoint: url, AccessKey: "k", SecretKey: "s",
		IdleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"stat":   func() error { _, err := f.Stat(ctx, "a.txt"); return err },
		"remove": func() error { _, err := f.Remove(ctx, "a.txt", backend.RemoveOptions{}); return err },
	} {
		e := fault.AsError(call())
		host := strings.TrimPrefix(url, "http://")
		if e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, host) || !strings.Contains(e.Hint, host) {
			t.Errorf("%s on a stalled store: %v, want IO_ERROR naming the store", name, e)
		}
	}
}

// A connection the store never accepts in time fails as the store's
// failure, naming the path and the store: Go's dial timeout matches
// context.DeadlineExceeded, and was passed on raw as the call's own
// deadline (no path, and the hint "check the file system"), as when a
// process paused past its dial's deadline resumed.
func TestDialTimeoutIsIOErrorNamingTheStore(t *testing.T) {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, 0)
		defer cancel()
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	f, err := s3fs.New(s3fs.Config{Root: "s3://bucket/ws", Endpoint: "http://127.0.0.1:9", AccessKey: "k", SecretKey: "s", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"stat":   func() error { _, err := f.Stat(ctx, "a.txt"); return err },
		"write":  func() error { _, err := f.WriteFile(ctx, "a.txt", []byte("x"), backend.WriteOptions{}); return err },
		"remove": func() error { _, err := f.Remove(ctx, "a.txt", backend.RemoveOptions{}); return err },
	} {
		e := fault.AsError(call())
		if e == nil || e.Code != fault.CodeIOError || e.Path != "a.txt" || !strings.Contains(e.Hint, "the store is up") {
			t.Errorf("%s, its connection timed out: %+v, want IO_ERROR naming a.txt and the store", name, e)
		}
	}
}

// An endpoint that is no S3 store, answering 404 without an S3 error, is
// IO_ERROR saying so: it was NOT_FOUND "no such file or directory" for
// the workspace's root.
func TestEndpointThatIsNoS3StoreIsIOError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	f, err := s3fs.New(s3fs.Config{Root: "s3://bucket/ws", Endpoint: srv.URL, AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	f.RecoverFirst()
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"stat":   func() error { _, err := f.Stat(ctx, "a.txt"); return err },
		"remove": func() error { _, err := f.Remove(ctx, "d", backend.RemoveOptions{Recursive: true}); return err },
	} {
		if e := fault.AsError(call()); e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, "S3 store") {
			t.Errorf("%s: %v, want IO_ERROR saying the endpoint is no S3 store", name, e)
		}
	}
}

// versitygw answers an access key it does not know with
// XAdminUserNotFound, a 404: PERMISSION_DENIED as a wrong secret is, not
// IO_ERROR with the hint to retry.
func TestUnknownAccessKeyIsPermissionDenied(t *testing.T) {
	bucket := s3test.Bucket(t)
	f, err := s3fs.New(s3fs.Config{Root: "s3://" + bucket + "/ws", Endpoint: s3test.Endpoint(t), AccessKey: "nobody", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	f.RecoverFirst()
	if _, err := f.Stat(context.Background(), "a.txt"); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodePermissionDenied {
		t.Errorf("Stat with an unknown access key: %v, want PERMISSION_DENIED", err)
	}
}

// A file the store lists under a name it does not hold (versitygw ignores
// encoding-type=url and lists a byte that is not UTF-8 as U+FFFD) is
// counted unreadable by a walk, not passed over: grep skipped it with no
// count, and a gate passed though the file held the match.
func TestWalkCountsAListedNameTheStoreDoesNotHold(t *testing.T) {
	bucket := s3test.Bucket(t)
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	ctx := context.Background()
	sc := rawClient(t, bucket)
	for _, k := range []string{"odd/bad\xffname", "odd/real\ufffdname", "odd/plain"} {
		if _, err := sc.Put(ctx, "ws/"+k, []byte("hello odd\n"), nil); err != nil {
			t.Fatal(k, err)
		}
	}
	seen, unreadable := walkCounting(t, f, "odd")
	// A store that lists the key as it is lets it be read: nothing is
	// unreadable then.
	if len(unreadable)+len(seen) != 3 || len(unreadable) > 1 || !slices.Contains(seen, "real\ufffdname") || !slices.Contains(seen, "plain") {
		t.Errorf("the walk saw %q and counted unreadable %q; want every file seen or counted, the real U+FFFD name seen", seen, unreadable)
	}
	for _, rel := range seen {
		if _, err := f.Stat(ctx, "odd/"+rel); err != nil {
			t.Errorf("the walk gave %q, which cannot be read: %v", rel, err)
		}
	}
}

// A directory the store lists under a name it does not hold (a byte that
// is not UTF-8, as U+FFFD) is counted unreadable too: it was entered, its
// listing under that name was empty, and everything below it was passed
// over, grep answering no match with no count. A directory whose name
// holds U+FFFD itself is walked.
func TestWalkCountsAListedDirectoryTheStoreDoesNotHold(t *testing.T) {
	bucket := s3test.Bucket(t)
	// Made on the server's disk (versitygw fails a listing of a key put
	// with such a directory name, and a Stat of a directory above one).
	onDisk(t, bucket, "bad\xfedir/in.txt", "real\ufffddir/in.txt", "plain")
	f, _ := openFS(t, "s3://"+bucket+"/ws")
	seen, unreadable := walkCounting(t, f, ".")
	files := 0
	for _, rel := range seen {
		if strings.HasSuffix(rel, "in.txt") || rel == "plain" {
			files++
		}
	}
	// Every file is seen or its directory counted; the real U+FFFD
	// directory's file is seen.
	if files+len(unreadable) != 3 || !slices.Contains(seen, "real\ufffddir/in.txt") || !slices.Contains(seen, "plain") {
		t.Errorf("the walk saw %q and counted unreadable %q; want every file seen or its directory counted", seen, unreadable)
	}
}

// overA writes a over its version va by a commit, or moves x onto it
// (by "move"): the two changes that back a file up first.
func overA(ctx context.Context, f *s3fs.FS, by, va string) error {
	if by == "move" {
		_, err := f.Rename(ctx, "x", "a", backend.WriteOptions{})
		return err
	}
	_, err := f.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va}}})
	return err
}

// walkCounting is what a walk of p visits, and what it counts unreadable,
// by rel.
func walkCounting(t *testing.T, f *s3fs.FS, p string) (seen, unreadable []string) {
	t.Helper()
	opts := backend.WalkOptions{Unreadable: func(_, rel string) { unreadable = append(unreadable, rel) }}
	err := f.Walk(context.Background(), p, opts, func(e backend.WalkEntry) error {
		seen = append(seen, e.Rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen, unreadable
}

// deletion matches a DELETE, or a batch's POST ?delete.
func deletion(r *http.Request) bool {
	return r.Method == http.MethodDelete || r.Method == http.MethodPost && r.URL.Query().Has("delete")
}

// The directory of the last file removed keeps a key all along: its
// marker was put after the removal, and a write of the directory's name
// in between made a file there (NOT_A_FILE on a disk), then the rm failed
// with the file removed (2 of 30 runs racing; now each time, at that
// moment).
func TestRemoveKeepsTheDirectoryThroughout(t *testing.T) {
	ctx := context.Background()
	for _, recursive := range []bool{false, true} {
		name := fmt.Sprintf("keepdir-%v", recursive)
		f, _, root := seeded(t, name, map[string]string{"d/sub/f.txt": "x"})
		target := map[bool]string{false: "d/sub/f.txt", true: "d/sub"}[recursive]
		var writeErr error
		rm := transportFS(t, root, &afterRequest{match: deletion, do: func() {
			_, writeErr = f.WriteFile(ctx, path.Dir(target), []byte("FILE"), backend.WriteOptions{})
		}})
		if deleted, err := rm.Remove(ctx, target, backend.RemoveOptions{Recursive: recursive}); !deleted || err != nil {
			t.Errorf("rm %s: %v, %v; want it removed", target, deleted, err)
		}
		if codeOf(writeErr) != fault.CodeNotAFile {
			t.Errorf("rm %s: the write of %s between got %v, want NOT_A_FILE", target, path.Dir(target), writeErr)
		}
		if fi, err := f.Stat(ctx, path.Dir(target)); err != nil || fi.Type != backend.TypeDir {
			t.Errorf("rm %s: %s is %+v, %v; want a directory", target, path.Dir(target), fi, err)
		}
	}
}

// A compare-and-swap of a large body that another writer beat: versitygw
// answers 412 before it reads the body and closes the connection, so the
// client's write of the body meets a reset and the 412 is lost with it.
// A body never sent whole cannot have landed: the write is STALE, as the
// 412 said, not IO_ERROR (whose retry of an edit would be a lost race's).
func TestLostRaceOfALargeBody(t *testing.T) {
	f, _ := newFS(t, s3test.Bucket(t))
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789abcdef\n"), 4<<20/17)
	old, err := f.WriteFile(ctx, "big", body, backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteFile(ctx, "big", []byte("the other writer's\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		_, err := f.WriteFile(ctx, "big", body, backend.WriteOptions{IfVersion: old.Version})
		if codeOf(err) != fault.CodeStale {
			t.Fatalf("try %d: %v, want STALE", i, err)
		}
	}
}

// backupRace answers the copy of a file beside a journal (a backup of the
// file a transaction replaces) with a 500, as versitygw does when a writer
// deletes the copy's source as it is copied; remove is that writer.
type backupRace struct{ remove func() }

func (b *backupRace) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), "/.agentfs-journal/") {
		b.remove()
		return s3Answer(r, http.StatusInternalServerError, "InternalError", "We encountered an internal error, please try again."), nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestBackupLostToARemoval: a transaction, or a move onto a file, whose
// backup of the file it replaces fails with a 500 as another writer
// removes that file lost a race (STALE, which a mutation retries): it
// failed IO_ERROR, a replace racing a move of its files. The file still
// there as read, the 500 is the store's failure.
func TestBackupLostToARemoval(t *testing.T) {
	ctx := context.Background()
	for _, removed := range []bool{false, true} {
		for _, by := range []string{"commit", "move"} {
			name := fmt.Sprintf("backup500-%s-%v", by, removed)
			f, bucket, root := seeded(t, name, map[string]string{"a": "old a", "x": "x"})
			va := versionOf(t, f, "a")
			other := transportFS(t, root, &backupRace{remove: func() {
				if !removed {
					return
				}
				if _, err := f.Remove(ctx, "a", backend.RemoveOptions{IfVersion: va}); err != nil {
					t.Errorf("the removal of a: %v", err)
				}
			}})
			err := overA(ctx, other, by, va)
			want, a := fault.CodeIOError, "old a"
			if removed {
				want, a = fault.CodeStale, ""
			}
			if codeOf(err) != want {
				t.Errorf("%s whose backup failed with a 500, a removed %v: %v, want %s", by, removed, err, want)
			}
			recovered(t, f, bucket, name, 0, map[string]string{"a": a, "x": "x"})
		}
	}
}

// storeDown answers the backup copy beside a journal with a 500, and the
// request after it, a read, with a 503 at each of its tries: the store
// is down a moment.
type storeDown struct{ down atomic.Int32 }

func (s *storeDown) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.down.Add(-1) >= 0 {
		return s3Answer(r, http.StatusServiceUnavailable, "ServiceUnavailable", "Please reduce your request rate."), nil
	}
	if r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), "/.agentfs-journal/") {
		s.down.Store(4) // a read and its 3 retries
		return s3Answer(r, http.StatusInternalServerError, "InternalError", "We encountered an internal error, please try again."), nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestBackupFailsWithTheStoreDown: a backup copy's 500, the HEAD that
// judges its source failing too, is the store's failure (IO_ERROR), not
// a lost race that a mutation would retry until --lock-timeout.
func TestBackupFailsWithTheStoreDown(t *testing.T) {
	ctx := context.Background()
	for _, by := range []string{"commit", "move"} {
		name := "backupdown-" + by
		f, bucket, root := seeded(t, name, map[string]string{"a": "old a", "x": "x"})
		va := versionOf(t, f, "a")
		other := transportFS(t, root, &storeDown{})
		err := overA(ctx, other, by, va)
		if codeOf(err) != fault.CodeIOError {
			t.Errorf("%s whose backup failed with a 500, the store down: %v, want IO_ERROR", by, err)
		}
		recovered(t, f, bucket, name, 0, map[string]string{"a": "old a", "x": "x"})
	}
}

// inFlight seeds the tree name with a and b (and more), and starts a
// transaction that writes both, held as it writes b: a holds its change.
// It returns b's version before, the hold (close its release to let the
// transaction go on) and the transaction's end.
func inFlight(t *testing.T, name string, more map[string]string) (f *s3fs.FS, bucket, root, vb string, h *held, done chan error) {
	t.Helper()
	files := map[string]string{"a": "old a", "b": "old b"}
	maps.Copy(files, more)
	f, bucket, root = seeded(t, name, files)
	va, vb := versionOf(t, f, "a"), versionOf(t, f, "b")
	h = newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/b")
	})
	done = commitHeld(t, root, h, "wrote b", []backend.Op{
		{Path: "a", Data: []byte("T a"), Write: backend.WriteOptions{IfVersion: va}},
		{Path: "b", Data: []byte("T b"), Write: backend.WriteOptions{IfVersion: vb}}})
	return f, bucket, root, vb, h, done
}

// dieWritingB has a transaction write a and b of the tree name, its
// process dying as it sends b's PUT: a holds its uncommitted change.
func dieWritingB(t *testing.T, f *s3fs.FS, root, name, a, b string) {
	t.Helper()
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/b")
	}}
	if _, err := transportFS(t, root, dies).Commit(context.Background(), []backend.Op{
		{Path: "a", Data: []byte(a), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "a")}},
		{Path: "b", Data: []byte(b), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "b")}}}); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
}

// commitHeld starts a transaction of ops through h, and returns its end
// once it reached the hold (having done what says, before it).
func commitHeld(t *testing.T, root string, h *held, what string, ops []backend.Op) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := transportFS(t, root, h).Commit(context.Background(), ops)
		done <- err
	}()
	select {
	case <-h.reached:
	case err := <-done:
		t.Fatalf("the transaction ended before it %s: %v", what, err)
	}
	return done
}

// loseTheRaceOnB has other change b (at vb) before the transaction that
// inFlight holds writes it, lets that transaction go on, and checks that
// it lost its race there: STALE, undone.
func loseTheRaceOnB(t *testing.T, other *s3fs.FS, vb string, h *held, done chan error) {
	t.Helper()
	if _, err := other.WriteFile(context.Background(), "b", []byte("new b"), backend.WriteOptions{IfVersion: vb}); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	if err := <-done; codeOf(err) != fault.CodeStale {
		t.Errorf("the transaction that lost its race on b: %v, want STALE", err)
	}
}

// TestSwapWaitsForATransactionInFlight: a write over a change of a
// transaction not yet committed is STALE (a lost race, which a mutation
// retries) until the transaction ends. It landed: the transaction then
// lost its race on its second file, its rollback left the first as the
// other writer had made it, and the transaction was half made though it
// answered STALE. Once the transaction is undone, the write goes through.
func TestSwapWaitsForATransactionInFlight(t *testing.T) {
	ctx := context.Background()
	f, bucket, root, vb, h, done := inFlight(t, "inflight", nil)
	other, _ := openFS(t, root)
	if _, err := other.WriteFile(ctx, "a", []byte("over T"), backend.WriteOptions{IfVersion: versionOf(t, other, "a")}); codeOf(err) != fault.CodeStale {
		t.Errorf("a write over the transaction's a: %v, want STALE", err)
	}
	if _, err := other.Commit(ctx, []backend.Op{{Path: "a", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, other, "a")}}}); codeOf(err) != fault.CodeStale {
		t.Errorf("a transaction over the transaction's a: %v, want STALE", err)
	}
	loseTheRaceOnB(t, other, vb, h, done)
	if _, err := other.WriteFile(ctx, "a", []byte("after T"), backend.WriteOptions{IfVersion: versionOf(t, other, "a")}); err != nil {
		t.Errorf("a write once the transaction is undone: %v", err)
	}
	recovered(t, f, bucket, "inflight", 0, map[string]string{"a": "after T", "b": "new b"})
}

// TestMoveWaitsForATransactionInFlight: a move of a change of a
// transaction not yet committed, or onto one, is STALE, as a write over
// it is. The move went through: the transaction, undone, put its file
// back beside the copy of its uncommitted change (or the move's backup
// held that change), a change made of nothing the transaction reported.
func TestMoveWaitsForATransactionInFlight(t *testing.T) {
	ctx := context.Background()
	f, bucket, root, vb, h, done := inFlight(t, "mvinflight", map[string]string{"x": "x"})
	other, _ := openFS(t, root)
	if _, err := other.Rename(ctx, "a", "c", backend.WriteOptions{}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move of the transaction's a: %v, want STALE", err)
	}
	if _, err := other.Rename(ctx, "x", "a", backend.WriteOptions{}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move onto the transaction's a: %v, want STALE", err)
	}
	loseTheRaceOnB(t, other, vb, h, done)
	if _, err := other.Rename(ctx, "a", "c", backend.WriteOptions{}); err != nil {
		t.Errorf("a move once the transaction is undone: %v", err)
	}
	recovered(t, f, bucket, "mvinflight", 0, map[string]string{"a": "", "b": "new b", "c": "old a", "x": "x"})
}

// TestAnswersOverAMoveInFlightWait: an answer that rests on the copies of
// a move not yet committed waits for the move to end, as a write over
// them does. Over the copies of a move that died, write --create and mv
// answered EXISTS at once, and rm -r deleted them and answered deleted
// true; the move's rollback then left no B: B never existed.
func TestAnswersOverAMoveInFlightWait(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "existsinflight", map[string]string{"A/f1": "1", "X/only": "only"})
	// It dies once its copy is made, before it says it deletes: its
	// lease still live, it is rolled back.
	dies := &dying{sent: true, at: putTo("existsinflight", "B/f1")}
	if _, err := transportFS(t, root, dies).Rename(ctx, "A", "B", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move that died succeeded")
	}
	if got := tree(t, f, "B/f1"); got["B/f1"] != "1" {
		t.Fatalf("after the move died: %s, want its copy B/f1", brief(got))
	}
	tools := &core.Tools{FS: f, LockTimeout: 200 * time.Millisecond}
	for _, c := range []struct {
		what string
		call func() error
	}{
		{"write --create B/f1", func() error {
			_, err := tools.Write(ctx, core.WriteRequest{Path: "B/f1", Content: new("new"), Create: true})
			return err
		}},
		{"mv X B", func() error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "X", To: "B"})
			return err
		}},
		{"mv X/only B/f1", func() error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "X/only", To: "B/f1"})
			return err
		}},
		{"mv B/f1 X/only", func() error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "B/f1", To: "X/only"})
			return err
		}},
		{"rm -r B", func() error {
			_, err := tools.Rm(ctx, core.RmRequest{Path: "B", Recursive: true})
			return err
		}},
	} {
		if err := c.call(); codeOf(err) != fault.CodeLockTimeout {
			t.Errorf("%s over the move in flight: %v, want LOCK_TIMEOUT", c.what, err)
		}
	}
	for from, to := range map[string]string{"X": "B", "X/only": "B/f1"} {
		if _, err := f.Rename(ctx, from, to, backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeStale {
			t.Errorf("a move of %s onto the move's %s: %v, want STALE", from, to, err)
		}
	}
	expireJournals(t, bucket, "existsinflight")
	if _, err := tools.Mv(ctx, core.MvRequest{From: "X", To: "B"}); err != nil {
		t.Errorf("mv X B once the move is undone: %v", err)
	}
	recovered(t, f, bucket, "existsinflight", 0, map[string]string{"A/f1": "1", "B/f1": "", "B/only": "only", "X/only": ""})
}

// TestAnswersOverAChangeInFlightBelowDoNotWait: a transaction in flight
// that changes files below a directory, creating none, leaves it a
// directory whether it commits or not: the answers that rest on the
// directory (EXISTS, a directory onto a file, a file onto a directory,
// rm -r) do not wait for it.
// They waited, and timed out, for any write below it.
func TestAnswersOverAChangeInFlightBelowDoNotWait(t *testing.T) {
	ctx := context.Background()
	name := "changebelow"
	f, bucket, root := seeded(t, name, map[string]string{"s/mod": "m", "s/keep": "k", "e": "e"})
	vm := versionOf(t, f, "s/mod")
	h := newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/s/mod")
	})
	done := commitHeld(t, root, h, "wrote s/mod", []backend.Op{{Path: "s/mod", Data: []byte("T m"), Write: backend.WriteOptions{IfVersion: vm}}})
	tools := &core.Tools{FS: f, LockTimeout: 200 * time.Millisecond}
	for _, c := range []struct {
		what string
		want fault.Code
		call func() error
	}{
		{"write --create s", fault.CodeExists, func() error {
			_, err := tools.Write(ctx, core.WriteRequest{Path: "s", Content: new("new"), Create: true})
			return err
		}},
		{"mv s e", fault.CodeNotADirectory, func() error { // a directory onto a file, --overwrite or not
			_, err := tools.Mv(ctx, core.MvRequest{From: "s", To: "e"})
			return err
		}},
		{"mv e s", fault.CodeNotAFile, func() error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "e", To: "s"})
			return err
		}},
	} {
		if err := c.call(); codeOf(err) != c.want {
			t.Errorf("%s over a change in flight below s: %v, want %s", c.what, err, c.want)
		}
	}
	if _, err := f.Rename(ctx, "e", "s", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeExists {
		t.Errorf("a move of e onto s: %v, want EXISTS", err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatalf("the transaction: %v", err)
	}
	if _, err := tools.Rm(ctx, core.RmRequest{Path: "s", Recursive: true}); err != nil {
		t.Errorf("rm -r s: %v", err)
	}
	recovered(t, f, bucket, name, 0, map[string]string{"s/mod": "", "s/keep": "", "e": "e"})
}

// TestAnswersOverARemovalInFlightWait: an answer that rests on a file a
// transaction in flight removed, or on a directory it removed a file
// below, waits for that transaction to end, as write --create and rm -r
// do; once its process is dead and its lease over, the answer is the tree
// its rollback left. mv of the directory moved what was left, and the
// rollback put the removed file back at the source: the directory at two
// places. replace said it replaced every match, and the rollback brought
// back a file holding one. edit, mv and apply-patch of the file answered
// NOT_FOUND, and the rollback put the file back.
func TestAnswersOverARemovalInFlightWait(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func(*core.Tools) error
		want map[string]string
	}{
		{"mvdir", func(tools *core.Tools) error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "d", To: "e"})
			return err
		}, map[string]string{"d/a": "", "d/b": "", "e/a": "old a\n", "e/b": "old b\n"}},
		{"replace", func(tools *core.Tools) error {
			_, err := tools.Replace(ctx, core.ReplaceRequest{Query: "old", Replacement: new("new"), Path: "d"})
			return err
		}, map[string]string{"d/a": "new a\n", "d/b": "new b\n"}},
		{"replaceroot", func(tools *core.Tools) error {
			_, err := tools.Replace(ctx, core.ReplaceRequest{Query: "old", Replacement: new("new")})
			return err
		}, map[string]string{"d/a": "new a\n", "d/b": "new b\n"}},
		{"edit", func(tools *core.Tools) error {
			_, err := tools.Edit(ctx, core.EditRequest{Path: "d/a", OldText: new("old"), NewText: new("new")})
			return err
		}, map[string]string{"d/a": "new a\n", "d/b": "old b\n"}},
		{"mvfile", func(tools *core.Tools) error {
			_, err := tools.Mv(ctx, core.MvRequest{From: "d/a", To: "e"})
			return err
		}, map[string]string{"d/a": "", "d/b": "old b\n", "e": "old a\n"}},
		{"patch", func(tools *core.Tools) error {
			_, err := tools.ApplyPatch(ctx, core.ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: d/a\n@@\n-old a\n+new a\n*** End Patch\n"})
			return err
		}, map[string]string{"d/a": "new a\n", "d/b": "old b\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "rmbelow" + c.name
			f, bucket, root := seeded(t, name, map[string]string{"d/a": "old a\n", "d/b": "old b\n"})
			// It dies at its commit point, d/a removed, its lease still live.
			if _, err := transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "d/a", Remove: true}}); err == nil {
				t.Fatal("the removal that died succeeded")
			}
			if got := tree(t, f, "d/a"); got["d/a"] != "" {
				t.Fatalf("after the removal died: %s, want d/a removed", brief(got))
			}
			tools := &core.Tools{FS: f, LockTimeout: 200 * time.Millisecond}
			if err := c.call(tools); codeOf(err) != fault.CodeLockTimeout {
				t.Errorf("%s over the removal in flight: %v, want LOCK_TIMEOUT", c.name, err)
			}
			expireJournals(t, bucket, name)
			if err := c.call(tools); err != nil {
				t.Errorf("%s once the removal's lease is over: %v", c.name, err)
			}
			recovered(t, f, bucket, name, 0, c.want)
		})
	}
}

// TestRetriedMoveAfterItsRecoveryFinished: a move retried after the first
// died as it deleted its sources, and over that move's lease, waits for
// its recovery, which finishes it, and then answers as the tree stands:
// the source moved, NOT_FOUND. It answered EXISTS, as it had read the
// tree before the recovery, and its hint (--overwrite) led the agent
// the wrong way.
func TestRetriedMoveAfterItsRecoveryFinished(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, from, to, deleted string }{
		{"file", "a", "x", "a"},
		{"dir", "d", "e", "d/f1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "retrymv" + tc.name
			f, bucket, root := seeded(t, name, map[string]string{"a": "data", "d/f1": "1", "d/f2": "2"})
			dead := transportFS(t, root, &dying{at: func(r *http.Request) bool {
				return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/"+tc.deleted)
			}})
			if _, err := dead.Rename(ctx, tc.from, tc.to, backend.WriteOptions{IfAbsent: true}); err == nil {
				t.Fatal("the move that died at its deletion succeeded")
			}
			expireJournals(t, bucket, name)
			tools := &core.Tools{FS: f, LockTimeout: 10 * time.Second}
			if _, err := tools.Mv(ctx, core.MvRequest{From: tc.from, To: tc.to}); codeOf(err) != fault.CodeNotFound {
				t.Errorf("the move retried: %v, want NOT_FOUND", err)
			}
			if got := tree(t, f, tc.from, tc.to); got[tc.from] != "" || got[tc.to] == "" {
				t.Errorf("after the retry: %s, want the first move finished", brief(got))
			}
			noJournal(t, bucket, name, "the retried move")
		})
	}
}

// TestSettleTimeoutOfADeadJournal: --recover that times out before a dead
// process's lease runs out says the lease, and how long to wait for it.
// It said the leases were renewed, which no dead process does, and to
// retry with "a longer --lock-timeout", not how long.
func TestSettleTimeoutOfADeadJournal(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "settledead", map[string]string{"a": "a"})
	if _, err := transportFS(t, root, &dying{at: commitPoint}).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}}); err == nil {
		t.Fatal("the transaction that died at its commit point succeeded")
	}
	_, err := f.Settle(ctx, 10*time.Millisecond)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout || strings.Contains(e.Message, "renewed") ||
		!strings.Contains(e.Message, "lease of 15s") || !strings.Contains(e.Hint, "over 15s") {
		t.Errorf("settling within a dead journal's lease: %#v, want LOCK_TIMEOUT naming the lease of 15s", e)
	}
	lockTimeoutDetails(t, err, "10ms")
}

// lockTimeoutDetails checks the details of Settle's LOCK_TIMEOUT against
// the local backend's: details.timeout, the wait it had, as the message
// says it (it carried no details at all).
func lockTimeoutDetails(t *testing.T, err error, timeout string) {
	t.Helper()
	e := fault.AsError(err)
	if e == nil {
		return
	}
	if got, _ := e.Details["timeout"].(string); got != timeout || !strings.Contains(e.Message, " "+timeout) {
		t.Errorf("LOCK_TIMEOUT %q: details %v, want details.timeout %s, as the message says", e.Message, e.Details, timeout)
	}
}

// TestSettleTimeoutOverTheLease: a journal still within its lease after a
// --lock-timeout at least as long was renewed during the wait (its
// process lives): the error says so, not that it may have died too
// recently, and does not ask for a --lock-timeout over the lease the
// caller already gave.
func TestSettleTimeoutOverTheLease(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "settlelive", map[string]string{"a": "a"})
	if _, err := transportFS(t, root, &dying{at: commitPoint}).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}}); err == nil {
		t.Fatal("the transaction that died at its commit point succeeded")
	}
	// Renewed for the whole wait, as a live committer's is.
	setJournalLease(t, bucket, "settlelive", "1h")
	s3fs.SetLease(f, 20*time.Millisecond)
	_, err := f.Settle(ctx, 50*time.Millisecond)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeLockTimeout || !strings.Contains(e.Message, "renewed") ||
		strings.Contains(e.Message, "too recently") || strings.Contains(e.Hint, "--lock-timeout over") {
		t.Errorf("settling past the lease: %#v, want LOCK_TIMEOUT saying the lease was renewed", e)
	}
	lockTimeoutDetails(t, err, "50ms")
}

// TestSettled: a file read at a change of a transaction in flight is not
// settled (STALE), nor at one of a transaction that died, which is undone
// there and then; a file no transaction changed, or at a committed change,
// is. A write of the bytes a file held, answered noChange over such a
// change and then undone by a recovery, was a success lost.
func TestSettled(t *testing.T) {
	ctx := context.Background()
	f, bucket, root, _, h, done := inFlight(t, "settle", map[string]string{"x": "x"})
	other, _ := openFS(t, root)
	if err := other.Settled(ctx, "a", versionOf(t, other, "a")); codeOf(err) != fault.CodeStale {
		t.Errorf("a change of a transaction in flight: %v, want STALE", err)
	}
	if err := other.Settled(ctx, "x", versionOf(t, other, "x")); err != nil {
		t.Errorf("a file no transaction changed: %v", err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatalf("the transaction: %v", err)
	}
	if err := other.Settled(ctx, "a", versionOf(t, other, "a")); err != nil {
		t.Errorf("a committed change: %v", err)
	}
	dieWritingB(t, f, root, "settle", "D a", "D b")
	uncommitted := versionOf(t, other, "a")
	expireJournals(t, bucket, "settle")
	if err := other.Settled(ctx, "a", uncommitted); codeOf(err) != fault.CodeStale {
		t.Errorf("a change of a transaction that died: %v, want STALE", err)
	}
	if got := tree(t, other, "a"); got["a"] != "T a" {
		t.Errorf("after Settled, a is %q: the dead transaction was not undone there and then", got["a"])
	}
}

// TestReplaceWaitsForATransactionInFlight: a replace answers only once
// every file it read and left as it was is settled. A file that held a
// change of a transaction in flight (no match in it) was passed over, the
// replace changed another file of that transaction and succeeded; the
// transaction, which then lost its race there, was undone, and the file
// passed over held a match again, which the replace had claimed replaced.
// Over the change of a transaction that died, the replace recovers it and
// replaces what it put back.
func TestReplaceWaitsForATransactionInFlight(t *testing.T) {
	ctx := context.Background()
	f, bucket, root, _, h, done := inFlight(t, "replinflight", nil)
	other, _ := openFS(t, root)
	replace := func() (*core.ReplaceResult, error) {
		return (&core.Tools{FS: other}).Replace(ctx, core.ReplaceRequest{Query: "old", Replacement: new("new")})
	}
	if res, err := replace(); codeOf(err) != fault.CodeLockTimeout {
		t.Errorf("a replace while a holds an uncommitted change: %+v, %v; want LOCK_TIMEOUT", res, err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatalf("the transaction the replace left alone: %v", err)
	}
	recovered(t, f, bucket, "replinflight", 0, map[string]string{"a": "T a", "b": "T b"})

	dieWritingB(t, f, root, "replinflight", "old a", "old b")
	expireJournals(t, bucket, "replinflight")
	if res, err := replace(); err != nil || res.Replacements != 0 {
		t.Errorf("a replace over the change of a transaction that died: %+v, %v; want no match, the change undone", res, err)
	}
	if got := tree(t, other, "a", "b"); got["a"] != "T a" || got["b"] != "T b" {
		t.Errorf("after the replace, the tree is %v", got)
	}
}

// TestReplaceOverCommittedChanges: a replace over files a committed
// transaction wrote (marked with it for good) proves them settled with
// two HEADs, the journal's and one file's, not one per file: the mark of
// a transaction ended stands for all its files once one of them is found
// still at its version. (Each of the search's two workers may send the
// two before the first answer.)
func TestReplaceOverCommittedChanges(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	ctx := context.Background()
	files := map[string]string{}
	for i := range 32 {
		files[fmt.Sprint("f", i)] = "old"
	}
	f, _, root := seeded(t, "replcommitted", files)
	var ops []backend.Op
	for p := range files {
		ops = append(ops, backend.Op{Path: p, Data: []byte("T"), Write: backend.WriteOptions{IfVersion: versionOf(t, f, p)}})
	}
	if _, err := f.Commit(ctx, ops); err != nil {
		t.Fatal(err)
	}
	other, cnt := openFS(t, root)
	res, err := (&core.Tools{FS: other}).Replace(ctx, core.ReplaceRequest{Query: "nowhere", Replacement: new("x")})
	if err != nil || res.FilesSearched != len(files) {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if heads := cnt.requests[http.MethodHead]; heads > 4 {
		t.Errorf("the replace sent %d HEADs, want at most 4", heads)
	}
}

// TestSettledOverTheSameBytesUndone: a transaction that wrote a file's
// own bytes again, then was undone, leaves that file at the ETag read (an
// MD5 of the same bytes): it proves nothing of the transaction, whose
// other files, read at its changes, are then not settled. Taken for proof
// that it committed, it had b, put back with a match by the rollback,
// settled: a replace's answer would not survive.
func TestSettledOverTheSameBytesUndone(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "sameundone", map[string]string{"a": "same a", "b": "old b", "c": "old c"})
	va, vb, vc := versionOf(t, f, "a"), versionOf(t, f, "b"), versionOf(t, f, "c")
	h := newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/sameundone/c")
	})
	done := commitHeld(t, root, h, "wrote c", []backend.Op{
		{Path: "a", Data: []byte("same a"), Write: backend.WriteOptions{IfVersion: va}},
		{Path: "b", Data: []byte("T b"), Write: backend.WriteOptions{IfVersion: vb}},
		{Path: "c", Data: []byte("T c"), Write: backend.WriteOptions{IfVersion: vc}}})
	other, _ := openFS(t, root)
	read := func(p string) backend.SettledReader {
		r, err := other.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		return r.(backend.SettledReader)
	}
	ra, rb := read("a"), read("b")
	if _, err := other.WriteFile(ctx, "c", []byte("new c"), backend.WriteOptions{IfVersion: vc}); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	if err := <-done; codeOf(err) != fault.CodeStale {
		t.Fatalf("the transaction that lost its race on c: %v, want STALE", err)
	}
	if err := ra.Settled(ctx); codeOf(err) != fault.CodeStale {
		t.Errorf("a, read at the undone rewrite of its bytes: Settled = %v, want STALE", err)
	}
	if err := rb.Settled(ctx); codeOf(err) != fault.CodeStale {
		t.Errorf("b, read at the undone \"T b\", now %q: Settled = %v, want STALE", tree(t, other, "b")["b"], err)
	}
}

// TestRollbackKeepsAnotherWritersRemoval: a file another writer removed
// (rm, told it succeeded) before a transaction reached its own removal of
// it stays removed when the transaction is undone. A store answers a
// DELETE If-Match of a key already gone with success, so the transaction
// took it for its own removal and its rollback put it back.
func TestRollbackKeepsAnotherWritersRemoval(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "keepremoval", map[string]string{"a": "a", "b": "b", "c": "c"})
	ops := []backend.Op{
		{Path: "a", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "a")}},
		{Path: "b", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "b")}},
		{Path: "c", Data: []byte("T c"), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "c")}},
	}
	h := heldDelete("/keepremoval/a")
	done := commitHeld(t, root, h, "removed a", ops)
	other, _ := openFS(t, root)
	if _, err := other.Remove(ctx, "b", backend.RemoveOptions{IfVersion: versionOf(t, other, "b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.WriteFile(ctx, "c", []byte("other c"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	if err := <-done; codeOf(err) != fault.CodeStale {
		t.Errorf("the transaction that lost its race on b: %v, want STALE", err)
	}
	if got := tree(t, other, "a", "b", "c"); got["a"] != "a" || got["b"] != "" || got["c"] != "other c" {
		t.Errorf("after the rollback: %v, want a back, b removed (the other writer's), c the other's", got)
	}
}

// TestRecoveryKeepsRemovalsNotReached: a recovery of a transaction that
// died while removing files puts back only those it may have reached
// (its journal allows deleteAhead removals at a time), not a file
// another writer removed (told it succeeded) further on. It put back
// every file of the transaction that was missing.
func TestRecoveryKeepsRemovalsNotReached(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("f%03d", i)] = "x"
	}
	f, bucket, root := seeded(t, "notreached", files)
	var ops []backend.Op
	for i := range 100 {
		p := fmt.Sprintf("f%03d", i)
		ops = append(ops, backend.Op{Path: p, Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, p)}})
	}
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/notreached/f010")
	}}
	if _, err := transportFS(t, root, dies).Commit(ctx, ops); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
	other, _ := openFS(t, root)
	if _, err := other.Remove(ctx, "f080", backend.RemoveOptions{IfVersion: versionOf(t, other, "f080")}); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(files)
	want["f080"] = ""
	recovered(t, other, bucket, "notreached", 1, want)
}

// TestRecoveryOfAJournalAnOlderAgentfsRewrote: an agentfs before journal
// version 4 that claims a journal writes it back from its own fields,
// without deletedTo, and a recovery by this one then put back none of the
// files the dead committer removed: a journal that says deletions began
// and allows none allows all, as before version 4.
func TestRecoveryOfAJournalAnOlderAgentfsRewrote(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	var ops []backend.Op
	f, bucket, root := seeded(t, "olderclaim", map[string]string{"f0": "x", "f1": "x", "f2": "x", "f3": "x"})
	for _, p := range []string{"f0", "f1", "f2", "f3"} {
		files[p] = "x"
		ops = append(ops, backend.Op{Path: p, Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, p)}})
	}
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/olderclaim/f2")
	}}
	if _, err := transportFS(t, root, dies).Commit(ctx, ops); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
	deletedTo := regexp.MustCompile(`,?"deletedTo":\d+`)
	editJournals(t, bucket, "olderclaim", func(j string) string {
		return strings.Replace(deletedTo.ReplaceAllString(j, ""), "{", `{"claimed":true,`, 1)
	})
	recovered(t, f, bucket, "olderclaim", 1, files)
}

// TestRemovalSettled: a file found missing is settled only when no
// transaction in flight removed it: rm of a file a transaction had
// removed answered deleted: false, exit 0, and the transaction, undone
// (its process dead), put the file back. Once the transaction is undone,
// an rm removes the file put back.
func TestRemovalSettled(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "removalsettled", map[string]string{"a": "a", "b": "b", "x": "x"})
	h := heldDelete("/removalsettled/b")
	done := commitHeld(t, root, h, "removed b", []backend.Op{
		{Path: "a", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "a")}},
		{Path: "b", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "b")}}})
	other, _ := openFS(t, root)
	if err := other.Settled(ctx, "a", ""); codeOf(err) != fault.CodeStale {
		t.Errorf("a, removed by a transaction in flight: %v, want STALE", err)
	}
	if err := other.Settled(ctx, "nowhere", ""); err != nil {
		t.Errorf("a file no transaction removes: %v", err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatalf("the transaction: %v", err)
	}
	if err := other.Settled(ctx, "a", ""); err != nil {
		t.Errorf("a, removed by a committed transaction: %v", err)
	}

	f2, _ := openFS(t, root)
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/removalsettled/x")
	}, sent: true}
	if _, err := transportFS(t, root, dies).Commit(ctx, []backend.Op{
		{Path: "x", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f2, "x")}}}); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
	expireJournals(t, bucket, "removalsettled")
	res, err := (&core.Tools{FS: other}).Rm(ctx, core.RmRequest{Path: "x"})
	if err != nil || !res.Deleted {
		t.Errorf("rm of x, removed by a transaction that died: %+v, %v; want deleted, once put back", res, err)
	}
	if got := tree(t, other, "x"); got["x"] != "" {
		t.Errorf("after the rm, x is %q", got["x"])
	}
}

// TestSwapOverADeadTransaction: a write over the change of a transaction
// whose process died, its lease over, recovers it there and then: the
// transaction is undone, and the write, made against its change, is STALE
// (a mutation re-reads and retries) with the file as it was before.
func TestSwapOverADeadTransaction(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "deadtxn", map[string]string{"a": "old a", "b": "old b"})
	va, vb := versionOf(t, f, "a"), versionOf(t, f, "b")
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/deadtxn/b")
	}}
	if _, err := transportFS(t, root, dies).Commit(ctx, []backend.Op{
		{Path: "a", Data: []byte("T a"), Write: backend.WriteOptions{IfVersion: va}},
		{Path: "b", Data: []byte("T b"), Write: backend.WriteOptions{IfVersion: vb}}}); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
	other, _ := openFS(t, root)
	uncommitted := versionOf(t, other, "a")
	if uncommitted == va {
		t.Fatal("the transaction died before it wrote a")
	}
	expireJournals(t, bucket, "deadtxn")
	if _, err := other.WriteFile(ctx, "a", []byte("over T"), backend.WriteOptions{IfVersion: uncommitted}); codeOf(err) != fault.CodeStale {
		t.Errorf("a write over the dead transaction's a: %v, want STALE", err)
	}
	if got := tree(t, other, "a"); got["a"] != "old a" {
		t.Errorf("after the write, a is %q: the dead transaction was not undone there and then", got["a"])
	}
	recovered(t, f, bucket, "deadtxn", -1, map[string]string{"a": "old a", "b": "old b"})
}

// TestUnsentSwapIsJudgedByTheObject: a conditional write whose body never
// went out (the connection failed first) cannot have landed. Its
// condition still met, the failure was the connection's: IO_ERROR, the
// file unchanged; no longer met, the write is refused as a 412 would be.
func TestUnsentSwapIsJudgedByTheObject(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "unsent", map[string]string{"a": "old a"})
	unsent := transportFS(t, root, putsUnsent{})
	for _, tc := range []struct {
		name string
		opts backend.WriteOptions
		code fault.Code
	}{
		{"its version", backend.WriteOptions{IfVersion: versionOf(t, f, "a")}, fault.CodeIOError},
		{"absent", backend.WriteOptions{IfAbsent: true}, fault.CodeExists},
	} {
		_, err := unsent.WriteFile(ctx, "a", []byte("new a"), tc.opts)
		if codeOf(err) != tc.code || !errors.Is(err, s3client.ErrUnsent) && tc.code == fault.CodeIOError {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if got := tree(t, f, "a"); got["a"] != "old a" {
		t.Errorf("a is %q", got["a"])
	}
}

// putsUnsent fails each PUT before reading its body, as a connection
// reset does; other requests go to the store.
type putsUnsent struct{}

func (putsUnsent) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRemoveWithItsAnswerLost: a removal whose DELETE is lost on the way
// (never made) or whose answer is lost (made) removes the file and says
// so, with or without a version to match. It answered IO_ERROR "retry",
// and the retry NOT_FOUND for a file it had removed itself. A file
// another writer put meanwhile stays, and the removal says it may not
// have been made.
func TestRemoveWithItsAnswerLost(t *testing.T) {
	ctx := context.Background()
	deleteOf := func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/a")
	}
	for _, tc := range []struct {
		name    string
		rt      func(f *s3fs.FS) http.RoundTripper
		matched bool
		want    string // a's content after, "" for removed
	}{
		{"rmlost-made", func(*s3fs.FS) http.RoundTripper { return &lostAnswer{method: http.MethodDelete, suffix: "/a"} }, false, ""},
		{"rmlost-made-matched", func(*s3fs.FS) http.RoundTripper { return &lostAnswer{method: http.MethodDelete, suffix: "/a"} }, true, ""},
		{"rmlost-unmade", func(*s3fs.FS) http.RoundTripper { return &onFirst{match: deleteOf, fail: true} }, false, ""},
		{"rmlost-unmade-matched", func(*s3fs.FS) http.RoundTripper { return &onFirst{match: deleteOf, fail: true} }, true, ""},
		{"rmlost-theirs", func(f *s3fs.FS) http.RoundTripper {
			return &onFirst{match: deleteOf, fail: true, do: func() {
				if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{}); err != nil {
					t.Error(err)
				}
			}}
		}, false, "theirs"},
	} {
		f, bucket, root := seeded(t, tc.name, map[string]string{"a": "a", "b": "b"})
		var opts backend.RemoveOptions
		if tc.matched {
			opts.IfVersion = versionOf(t, f, "a")
		}
		removed, err := transportFS(t, root, tc.rt(f)).Remove(ctx, "a", opts)
		if tc.want == "" && (!removed || err != nil) {
			t.Errorf("%s: the removal: %v, %v; want removed", tc.name, removed, err)
		}
		if e := fault.AsError(err); tc.want != "" && (removed || e == nil || e.Code != fault.CodeIOError || e.Details["currentVersion"] == nil) {
			t.Errorf("%s: the removal beside another writer's file: %v, %#v; want IO_ERROR with its version", tc.name, removed, e)
		}
		recovered(t, f, bucket, tc.name, 0, map[string]string{"a": tc.want, "b": "b"})
	}
}

// A recursive removal whose second batch of deletions fails says how many
// keys the first deleted: the failed request's "nothing was written" read
// as if the rm had changed nothing, with 1,000 files gone.
func TestRemoveFailedPartWaySaysWhatWasDeleted(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	for i := range 1001 {
		files[fmt.Sprintf("d/f%04d", i)] = "x"
	}
	_, _, root := seeded(t, "partway", files)
	batches := 0
	rm := transportFS(t, root, &onFirst{fail: true, match: func(r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
			batches++
		}
		return batches == 2
	}})
	_, err := rm.Remove(ctx, "d", backend.RemoveOptions{Recursive: true})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, "after 1000 of the 1001 keys were deleted") || e.Details["deleted"] != 1000 {
		t.Fatalf("got %v (details %v), want IO_ERROR saying 1000 of the 1001 keys were deleted", err, e.Details)
	}
	page, err := rm.ReadDir(ctx, "d", 0, 10)
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("left in d: %+v, %v; want the one key of the batch that failed", page.Entries, err)
	}
}

// refusing is a store that answers 403 AccessDenied (or status and code,
// when set) to the requests refuse accepts, as a bucket policy or a file
// made immutable under versitygw would: a lasting refusal, not a process
// that died.
type refusing struct {
	mu     sync.Mutex
	refuse func(r *http.Request) bool
	status int
	code   string
}

func (s *refusing) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	refuse := s.refuse(r)
	s.mu.Unlock()
	if !refuse {
		return http.DefaultTransport.RoundTrip(r)
	}
	if r.Body != nil {
		r.Body.Close()
	}
	if s.status != 0 {
		return s3Answer(r, s.status, s.code, s.code+"."), nil
	}
	return s3Answer(r, http.StatusForbidden, "AccessDenied", "Access Denied."), nil
}

// A store with no room (507 InsufficientStorage, versitygw's answer over
// a full disk; a quota's 403 QuotaExceeded) is NO_SPACE, as a full local
// disk is: it was IO_ERROR with a hint to retry and check the
// credentials, which were fine.
func TestFullStoreIsNoSpace(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{http.StatusInsufficientStorage, "InsufficientStorage"}, {http.StatusForbidden, "QuotaExceeded"}} {
		t.Run(tc.code, func(t *testing.T) {
			_, _, root := seeded(t, "full", map[string]string{"a": "old a"})
			f := transportFS(t, root, &refusing{refuse: putTo("full", "a"), status: tc.status, code: tc.code})
			_, err := f.WriteFile(context.Background(), "a", []byte("new a"), backend.WriteOptions{})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeNoSpace || !strings.Contains(e.Hint, "free space") {
				t.Fatalf("a write to a full store: %v, want NO_SPACE", err)
			}
			if got := tree(t, f, "a"); got["a"] != "old a" {
				t.Errorf("a holds %q, want it as it was", got["a"])
			}
		})
	}
}

// s3Answer is an S3 store's error answer to r: status, with the error's
// code and message in its XML body.
func s3Answer(r *http.Request, status int, code, message string) *http.Response {
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/xml"}},
		Body:    io.NopCloser(strings.NewReader("<Error><Code>" + code + "</Code><Message>" + message + "</Message></Error>")),
		Request: r}
}

// putTo accepts the PUTs of the object name of the workspace prefix.
func putTo(prefix, name string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+prefix+"/"+name)
	}
}

// stuckRollback leaves, at a workspace of bucket with the prefix stuck,
// a transaction that wrote a and b where the store then refused b, and
// the rollback of a: its journal, whose lease is over, names a change the
// store still refuses to undo (refusing, to the workspace it returns).
// It returns the committer's failure.
func stuckRollback(t *testing.T) (root string, refused *refusing, err error) {
	t.Helper()
	_, _, root = seeded(t, "stuck", map[string]string{"a": "old a", "b": "old b"})
	aPut, bPut := putTo("stuck", "a"), putTo("stuck", "b")
	putsOfA := 0
	committer := transportFS(t, root, &refusing{refuse: func(r *http.Request) bool {
		if aPut(r) {
			putsOfA++
			return putsOfA > 1 // the write of a goes, its rollback not
		}
		return bPut(r)
	}})
	s3fs.SetLease(committer, -time.Minute)
	_, err = committer.Commit(context.Background(), []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}})
	return root, &refusing{refuse: aPut}, err
}

// A rollback the store refuses names the object as a path of the
// workspace: it named its key, with the root's prefix, which passed back
// names another file (stuck/stuck/a).
func TestStuckRollbackNamesPaths(t *testing.T) {
	root, refused, err := stuckRollback(t)
	if e := fault.AsError(err); e == nil || !strings.Contains(e.Message, "(a)") || strings.Contains(e.Message, "stuck/") {
		t.Errorf("the commit whose rollback was refused: %v, want the object named a", err)
	}
	_, err = transportFS(t, root, refused).Recover(context.Background())
	if e := fault.AsError(err); e == nil || strings.Contains(e.Message, "stuck/") || e.Path != "" && e.Path != "a" {
		t.Errorf("the recovery refused: %v, want the object named a", err)
	}
}

// A recovery whose rollback the store refuses says so, naming the
// journal: an ls of the root failed NOT_A_FILE (the store's answer about
// the object it could not restore), a file it had not asked about.
func TestStuckRollbackSaysSo(t *testing.T) {
	root, refused, _ := stuckRollback(t)
	ls := transportFS(t, root, refused)
	ls.RecoverFirst()
	_, err := ls.ReadDir(context.Background(), ".", 0, 10)
	e := fault.AsError(err)
	if err == nil {
		t.Fatal("an ls while a recovery is refused succeeded")
	}
	if e.Code != fault.CodeIOError || !strings.Contains(e.Message, ".agentfs-journal/") || !strings.Contains(e.Message, "Access Denied") || !strings.Contains(e.Hint, "agentfs --recover") {
		t.Errorf("an ls while a recovery is refused: %v (hint %q), want IO_ERROR naming the journal and the store's refusal, the hint --recover", err, e.Hint)
	}
}

// A recovery refused leaves its claim on the journal, and took that claim
// for a live lease: a write of a file the transaction changed waited,
// STALE, for "other writers" (LOCK_TIMEOUT once --lock-timeout ran out),
// and --recover, once the store took the rollback, waited for the
// claim's lease and counted the transaction live as well as rolled back.
func TestStuckRollbackIsRetriedAtOnce(t *testing.T) {
	ctx := context.Background()
	root, refused, _ := stuckRollback(t)
	stuck := transportFS(t, root, refused)
	if _, err := stuck.Recover(ctx); codeOf(err) != fault.CodeIOError {
		t.Fatalf("the recovery refused: %v, want IO_ERROR", err)
	}
	bucket := strings.Split(strings.TrimPrefix(root, "s3://"), "/")[0]
	// The claim's lease running, as the real one (15 s) does for a while.
	setJournalLease(t, bucket, "stuck", "1h")
	info, err := stuck.Stat(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = stuck.WriteFile(ctx, "a", []byte("mine"), backend.WriteOptions{IfVersion: info.Version})
	if e := fault.AsError(err); err == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "agentfs --recover") {
		t.Errorf("a write of a file the stuck transaction changed: %v, want IO_ERROR, the hint --recover", err)
	}
	f, _ := openFS(t, root)
	rec, err := f.Settle(ctx, 3*time.Second)
	if err != nil || rec != (s3fs.Recovery{RolledBack: 1}) {
		t.Errorf("--recover once the store takes the rollback: %+v, %v; want one transaction rolled back, none live", rec, err)
	}
	if got := tree(t, f, "a", "b"); got["a"] != "old a" || got["b"] != "old b" {
		t.Errorf("after the recovery: %s", brief(got))
	}
	noJournal(t, bucket, "stuck", "after the recovery")
}

// setJournalLease rewrites the lease of the journals of the workspace
// prefix of bucket as lease.
func setJournalLease(t *testing.T, bucket, prefix, lease string) {
	t.Helper()
	rewriteJournals(t, bucket, prefix, func(data []byte) []byte {
		var j map[string]any
		if err := json.Unmarshal(data, &j); err != nil {
			t.Fatal(err)
		}
		j["lease"] = lease
		data, _ = json.Marshal(j)
		return data
	})
}

// Each claim of a journal writes other bytes: two claims of one journal
// had one ETag, so that a recovery another had taken over could still
// mark or end the journal If-Match its own claim, under the other's feet.
func TestEachClaimIsItsOwn(t *testing.T) {
	ctx := context.Background()
	root, refused, _ := stuckRollback(t)
	stuck := transportFS(t, root, refused)
	bucket := strings.Split(strings.TrimPrefix(root, "s3://"), "/")[0]
	var etags []string
	for range 2 {
		if _, err := stuck.Recover(ctx); codeOf(err) != fault.CodeIOError {
			t.Fatalf("the recovery refused: %v, want IO_ERROR", err)
		}
		etags = append(etags, journalETags(t, bucket, "stuck")...)
	}
	if len(etags) != 2 || etags[0] == etags[1] {
		t.Errorf("the journal after two refused recoveries: ETags %v, want two, each its claim's", etags)
	}
}

// journalETags are the ETags of the journals of the workspace prefix of
// bucket.
func journalETags(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var etags []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix + "/.agentfs-journal/"}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if strings.HasSuffix(o.Key, ".json") {
			etags = append(etags, o.ETag)
		}
	}
	return etags
}

// A journal a recovery cannot act on (unreadable, or naming objects
// outside the workspace) is stuck, and the dead transactions beside it
// are rolled back all the same, wherever their journals sort against it;
// the error names every stuck journal, in order, and the recovery counts
// what it did. Recover stopped at the first journal it could not
// recover, in a map's random order: the dead transactions after it were
// left, and the error named only that one.
func TestRecoverGoesPastStuckJournals(t *testing.T) {
	const corrupt, foreign = `{not json`, `{"lease":"-1m0s","ops":[{"key":"elsewhere/a","new":"x"}]}`
	// A stuck journal's place among the two dead ones: before both,
	// between them, after both.
	type stuck struct{ place, body string }
	for _, tc := range []struct {
		name  string
		via   string // Recover, Settle, or RecoverFirst before an ls
		stuck []stuck
	}{
		{"first", "Recover", []stuck{{"before", corrupt}}},
		{"between", "Recover", []stuck{{"between", corrupt}}},
		{"last", "Recover", []stuck{{"after", corrupt}}},
		{"around", "Recover", []stuck{{"before", foreign}, {"after", corrupt}}},
		{"many", "Recover", []stuck{{"before", corrupt}, {"before", foreign}, {"between", corrupt}, {"after", foreign}, {"after", corrupt}}},
		{"settle", "Settle", []stuck{{"before", corrupt}}},
		{"first request", "RecoverFirst", []stuck{{"before", corrupt}, {"between", foreign}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f, bucket, root := seeded(t, "beside", map[string]string{"a": "old a", "b": "old b"})
			for _, p := range []string{"a", "b"} {
				// Dies at its commit point, its changes made.
				if _, err := transportFS(t, root, cutOff(3)).Commit(ctx, []backend.Op{{Path: p, Data: []byte("new " + p)}}); err == nil {
					t.Fatalf("the transaction of %s that died succeeded", p)
				}
			}
			expireJournals(t, bucket, "beside")
			dead := journalIDs(t, bucket, "beside")
			if len(dead) != 2 {
				t.Fatalf("journals of the dead transactions: %q, want 2", dead)
			}
			c, err := s3test.Client(s3test.Endpoint(t))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i, s := range tc.stuck {
				id := map[string]string{"before": "0", "between": dead[0] + "-", "after": "9"}[s.place] + fmt.Sprintf("stuck%d", i)
				key := "beside/.agentfs-journal/" + id + ".json"
				if _, err := c.PutObject(ctx, bucket, key, strings.NewReader(s.body), int64(len(s.body)), minio.PutObjectOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, ".agentfs-journal/"+id+".json")
			}
			slices.Sort(want)
			var rec s3fs.Recovery
			switch tc.via {
			case "Recover":
				rec, err = f.Recover(ctx)
			case "Settle":
				rec, err = f.Settle(ctx, time.Second)
			case "RecoverFirst":
				ls := transportFS(t, root, nil)
				ls.RecoverFirst()
				_, err = ls.ReadDir(ctx, ".", 0, 10)
				rec.RolledBack = 2 // not told: the files say
			}
			e := fault.AsError(err)
			if e == nil || e.Code != fault.CodeIOError || e.Hint == "" {
				t.Fatalf("the recovery beside %d stuck journals: %v, want IO_ERROR with a hint", len(want), err)
			}
			for i, p := range want {
				if named := strings.Contains(e.Message, p); named != (i < 3) {
					t.Errorf("the error names %s: %v, want %v: %s", p, named, i < 3, e.Message)
				}
			}
			if len(want) > 1 {
				if got, _ := e.Details["journals"].([]string); !slices.Equal(got, want) {
					t.Errorf("details.journals: %q, want %q", got, want)
				}
				if more := len(want) - 3; more > 0 && !strings.Contains(e.Message, fmt.Sprintf("and %d more", more)) {
					t.Errorf("the error does not count the %d journals it does not name: %s", more, e.Message)
				}
			}
			if rec.RolledBack != 2 || rec.Live != 0 {
				t.Errorf("the recovery counts %+v, want the 2 dead transactions rolled back", rec)
			}
			if got := tree(t, f, "a", "b"); got["a"] != "old a" || got["b"] != "old b" {
				t.Errorf("beside stuck journals: %s, want both dead transactions rolled back", brief(got))
			}
			if left := journalIDs(t, bucket, "beside"); len(left) != len(want) {
				t.Errorf("journals left: %q, want only the %d stuck", left, len(want))
			}
			for _, p := range want {
				if err := c.RemoveObject(ctx, bucket, "beside/"+p, minio.RemoveObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.Recover(ctx); err != nil {
				t.Errorf("the recovery once the stuck journals are gone: %v", err)
			}
			noJournal(t, bucket, "beside", "the stuck journals removed")
		})
	}
}

// journalIDs are the ids of the journals of the workspace prefix of
// bucket, in order.
func journalIDs(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	dir := prefix + "/.agentfs-journal/"
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: dir}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if id, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, dir), ".json"); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// A transaction that removed a file, then one that created it there (an
// older agentfs's, whose creation did not wait for a removal in flight,
// see crossed), both dead: undone newest first, the file is back as it
// was. Recover went oldest first:
// the removal's rollback found the other's file there and left it, its
// copy of the original removed with its journal; then the creation's
// rollback removed that file too, and the original was lost.
func TestRecoverUndoesNewestFirst(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "lifo", map[string]string{"k": "original"})
	// Each dies at its commit point, its changes made.
	if _, err := transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "k", Remove: true}}); err == nil {
		t.Fatal("the removal that died succeeded")
	}
	asOlderAgentfs(t, bucket, "lifo", func() {
		if _, err := transportFS(t, root, cutOff(2)).Commit(ctx, []backend.Op{{Path: "k", Data: []byte("created")}}); err == nil {
			t.Fatal("the creation that died succeeded")
		}
	})
	if got := tree(t, f, "k"); got["k"] != "created" || len(journalIDs(t, bucket, "lifo")) != 2 {
		t.Fatalf("after the two transactions died: %s, journals %q; want k created, 2 journals", brief(got), journalIDs(t, bucket, "lifo"))
	}
	recovered(t, f, bucket, "lifo", 2, map[string]string{"k": "original"})
}

// asOlderAgentfs runs do, a creation of an older agentfs, which did not
// wait for a removal in flight (see crossed): the journals below prefix
// are hidden from it, and so are their claims (of the files they remove),
// which it would otherwise remove as stale.
func asOlderAgentfs(t *testing.T, bucket, prefix string, do func()) {
	t.Helper()
	c, hidden := readJournals(t, bucket, prefix)
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix + "/.agentfs-journal/claims/"}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		r, err := c.GetObject(context.Background(), bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		hidden[o.Key] = data
	}
	for key := range hidden {
		if err := c.RemoveObject(context.Background(), bucket, key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	do()
	for key, data := range hidden {
		putObject(t, c, bucket, key, data)
	}
}

// A stuck journal holds up the older ones that changed one of its files:
// a removal undone while the creation over it, stuck, still stands,
// leaves that file as another writer's, and the creation, undone later,
// removed it, the original lost. Once the stuck journal is recovered,
// the older one is too, and the file is back.
func TestStuckJournalHoldsUpOlderOfItsFiles(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "hold", map[string]string{"k": "original", "other": "old other"})
	// Each dies at its commit point, its changes made: first one of
	// another file, older than the others and not held up.
	if _, err := transportFS(t, root, cutOff(3)).Commit(ctx, []backend.Op{{Path: "other", Data: []byte("new other")}}); err == nil {
		t.Fatal("the write of other that died succeeded")
	}
	if _, err := transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "k", Remove: true}}); err == nil {
		t.Fatal("the removal that died succeeded")
	}
	asOlderAgentfs(t, bucket, "hold", func() {
		if _, err := transportFS(t, root, cutOff(2)).Commit(ctx, []backend.Op{{Path: "k", Data: []byte("created")}}); err == nil {
			t.Fatal("the creation that died succeeded")
		}
	})
	expireJournals(t, bucket, "hold")
	ids := journalIDs(t, bucket, "hold")
	if len(ids) != 3 {
		t.Fatalf("journals: %q, want 3", ids)
	}
	refused := &refusing{refuse: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/hold/k")
	}}
	rec, err := transportFS(t, root, refused).Recover(ctx)
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeIOError {
		t.Fatalf("the recovery whose rollback of the creation is refused: %v, want IO_ERROR", err)
	}
	want := []string{".agentfs-journal/" + ids[1] + ".json", ".agentfs-journal/" + ids[2] + ".json"}
	if got, _ := e.Details["journals"].([]string); !slices.Equal(got, want) || !strings.Contains(e.Message, ids[2]) {
		t.Errorf("the recovery held up: %s, details.journals %q; want the removal's and the creation's %q, the creation's named", e.Message, got, want)
	}
	if got := tree(t, f, "k", "other"); got["k"] != "created" || got["other"] != "old other" || rec.RolledBack != 1 {
		t.Errorf("beside the stuck creation: %s, %+v; want k left to it, other rolled back", brief(got), rec)
	}
	if left := journalIDs(t, bucket, "hold"); !slices.Equal(left, ids[1:]) {
		t.Errorf("journals left: %q, want the removal's and the creation's", left)
	}
	recovered(t, f, bucket, "hold", 2, map[string]string{"k": "original", "other": "old other"})
}

// slowingDown answers 503 SlowDown to every read of a journal, counted.
type slowingDown struct{ reads atomic.Int32 }

func (s *slowingDown) RoundTrip(r *http.Request) (*http.Response, error) {
	p := cmp.Or(r.URL.Opaque, r.URL.Path)
	if r.Method != http.MethodGet || !strings.Contains(p, "/.agentfs-journal/") || !strings.HasSuffix(p, ".json") {
		return http.DefaultTransport.RoundTrip(r)
	}
	s.reads.Add(1)
	return s3Answer(r, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate."), nil
}

// A store that fails (a 5xx once retried, no answer) stops the recovery
// at the first journal, as it did before a stuck journal held up no
// other: it went on to each, every read retried for about two seconds
// (three journals, six seconds; a thousand, most of an hour), and
// answered that they all "cannot be recovered".
func TestRecoverStopsAtAFailingStore(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "slow", map[string]string{"a": "old a", "b": "old b", "c": "old c"})
	for _, p := range []string{"a", "b", "c"} {
		if _, err := transportFS(t, root, cutOff(3)).Commit(ctx, []backend.Op{{Path: p, Data: []byte("new " + p)}}); err == nil {
			t.Fatalf("the transaction of %s that died succeeded", p)
		}
	}
	expireJournals(t, bucket, "slow")
	store := &slowingDown{}
	_, err := transportFS(t, root, store).Recover(ctx)
	e := fault.AsError(err)
	if e == nil || strings.Contains(e.Message, "cannot be recovered") || e.Details["journals"] != nil {
		t.Errorf("the recovery by a store that slows down: %v, want the store's failure", err)
	}
	if n := store.reads.Load(); n > 4 {
		t.Errorf("the recovery read the journals %d times, want at most 4: one journal's, retried", n)
	}
	recovered(t, f, bucket, "slow", 3, map[string]string{"a": "old a", "b": "old b", "c": "old c"})
}

// interrupting cancels its call as the call reads its second journal,
// and counts those reads.
type interrupting struct {
	cancel context.CancelFunc
	reads  atomic.Int32
}

func (s *interrupting) RoundTrip(r *http.Request) (*http.Response, error) {
	p := cmp.Or(r.URL.Opaque, r.URL.Path)
	if r.Method == http.MethodGet && strings.Contains(p, "/.agentfs-journal/") && strings.HasSuffix(p, ".json") && s.reads.Add(1) > 1 {
		s.cancel()
		return nil, r.Context().Err()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A recovery interrupted stops there, and says it was: neither a stuck
// journal it met before nor those it would meet after make it a
// failure of theirs.
func TestRecoverInterruptedStops(t *testing.T) {
	f, bucket, root := seeded(t, "intr", map[string]string{"a": "old a", "b": "old b"})
	for _, p := range []string{"a", "b"} {
		if _, err := transportFS(t, root, cutOff(3)).Commit(context.Background(), []backend.Op{{Path: p, Data: []byte("new " + p)}}); err == nil {
			t.Fatalf("the transaction of %s that died succeeded", p)
		}
	}
	expireJournals(t, bucket, "intr")
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	const corrupt = `{not json`
	if _, err := c.PutObject(context.Background(), bucket, "intr/.agentfs-journal/9stuck.json", strings.NewReader(corrupt), int64(len(corrupt)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &interrupting{cancel: cancel}
	_, err = transportFS(t, root, store).Recover(ctx)
	if !errors.Is(err, context.Canceled) || strings.Contains(fault.AsError(err).Message, "cannot be recovered") {
		t.Errorf("the recovery interrupted: %v, want the interrupt", err)
	}
	if n := store.reads.Load(); n != 2 {
		t.Errorf("the recovery interrupted read %d journals, want 2: the stuck one, newest, and the one it was interrupted at", n)
	}
	if err := c.RemoveObject(context.Background(), bucket, "intr/.agentfs-journal/9stuck.json", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	recovered(t, f, bucket, "intr", 2, map[string]string{"a": "old a", "b": "old b"})
}

// A file created, by a transaction or a move, where a transaction in
// flight removed it is STALE: the creation waits for the removal to end.
// It went ahead (the file was missing): once the removal was undone, its
// rollback found the creation's file there and left it as another
// writer's, its copy of the original going with its journal, and the
// original was lost (for good once the creation was undone too). A plain
// write's creation, with no journal, waits too: write --create answered
// created, and the original, put back by no one, was lost.
func TestCreationWaitsForARemovalInFlight(t *testing.T) {
	ctx := context.Background()
	for _, by := range []string{"commit", "move", "write", "append"} {
		t.Run(by, func(t *testing.T) {
			name := "overrm" + by
			f, bucket, root := seeded(t, name, map[string]string{"k": "original", "src": "moved"})
			// It dies at its commit point, k removed, its lease still live.
			if _, err := transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "k", Remove: true}}); err == nil {
				t.Fatal("the removal that died succeeded")
			}
			if got := tree(t, f, "k"); got["k"] != "" {
				t.Fatalf("after the removal died: %s, want k removed", brief(got))
			}
			// A plain write's creation waits (a write retries STALE) as
			// long as the removal's lease: it ends LOCK_TIMEOUT.
			tools, want := &core.Tools{FS: f, LockTimeout: 200 * time.Millisecond}, fault.CodeLockTimeout
			var err error
			switch by {
			case "commit":
				_, err = f.Commit(ctx, []backend.Op{{Path: "k", Data: []byte("created")}})
				want = fault.CodeStale
			case "move":
				_, err = f.Rename(ctx, "src", "k", backend.WriteOptions{IfAbsent: true})
				want = fault.CodeStale
			case "write":
				_, err = tools.Write(ctx, core.WriteRequest{Path: "k", Content: new("created"), Create: true})
			case "append":
				_, err = tools.Write(ctx, core.WriteRequest{Path: "k", Content: new("created"), Append: true})
			}
			if codeOf(err) != want {
				t.Errorf("the creation over the removal in flight: %v, want %s", err, want)
			}
			if e := fault.AsError(err); want == fault.CodeLockTimeout && (e == nil || !strings.Contains(e.Message, "removed by another transaction")) {
				t.Errorf("the timeout does not say what it waited for: %v", err)
			}
			recovered(t, f, bucket, name, 1, map[string]string{"k": "original", "src": "moved"})
		})
	}
}

// TestCreationWaitsForARemovalAroundIt: a creation waits, as one at the
// removed key does, for a removal in flight of the files below its path
// (the directory it names) or of a file above it: once that removal was
// undone, the directory's files came back beside a file of its name, or a
// file came back above a file below it. The rollback was refused (the
// store holds a file where the path needs a folder) and its journal was
// stuck, the removed files held by it; or, on a store that takes both,
// the workspace held a file and a directory of one name. A name that only
// begins as the removed one does (fx by f, d/ab by d/a) is no such path,
// and its creation does not wait.
func TestCreationWaitsForARemovalAroundIt(t *testing.T) {
	ctx := context.Background()
	seed := map[string]string{"d/a": "A", "d/b": "B", "f": "F"}
	for _, tc := range []struct {
		name    string
		removes []backend.Op
		cut     int
		create  string
		beside  bool // a name that only begins like the removed one's: no wait
	}{
		{"dir", []backend.Op{{Path: "d/a", Remove: true}, {Path: "d/b", Remove: true}}, 8, "d", false},
		{"below", []backend.Op{{Path: "f", Remove: true}}, 5, "f/x", false},
		{"besidefile", []backend.Op{{Path: "f", Remove: true}}, 5, "fx", true},
		{"besidedir", []backend.Op{{Path: "d/a", Remove: true}, {Path: "d/b", Remove: true}}, 8, "d/ab", true},
	} {
		for _, by := range []string{"commit", "write"} {
			t.Run(tc.name+"-"+by, func(t *testing.T) {
				name := "aroundrm" + tc.name + by
				f, bucket, root := seeded(t, name, seed)
				// It dies at its commit point, its files removed, its
				// lease still live.
				if _, err := transportFS(t, root, cutOff(tc.cut)).Commit(ctx, tc.removes); err == nil {
					t.Fatal("the removal that died succeeded")
				}
				for _, op := range tc.removes {
					if got := tree(t, f, op.Path); got[op.Path] != "" {
						t.Fatalf("after the removal died: %s, want %s removed", brief(got), op.Path)
					}
				}
				var err error
				want := fault.CodeLockTimeout
				switch by {
				case "commit":
					_, err = f.Commit(ctx, []backend.Op{{Path: tc.create, Data: []byte("created")}})
					want = fault.CodeStale
				case "write":
					tools := &core.Tools{FS: f, LockTimeout: 200 * time.Millisecond}
					_, err = tools.Write(ctx, core.WriteRequest{Path: tc.create, Content: new("created"), Create: true})
				}
				want2, after := want, seed
				if tc.beside {
					want2, after = "", maps.Clone(seed)
					after[tc.create] = "created"
				}
				if codeOf(err) != want2 {
					t.Errorf("the creation of %s around the removal in flight: %v, want %q", tc.create, err, want2)
				}
				recovered(t, f, bucket, name, 1, after)
			})
		}
	}
}

// A removal is STALE while a move in flight creates the file it removes:
// the move checked its destination free, and a file put there since, then
// removed by a transaction that died, had the move's copy taken for
// another writer's by the removal's rollback, the file put there lost.
func TestRemovalWaitsForACreationInFlight(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "rmovermv", map[string]string{"src": "moved"})
	mover := transportFS(t, root, nil)
	var once sync.Once
	var rmErr error
	s3fs.SetPaused(mover, func(phase, _ string) {
		if phase != "copy" {
			return
		}
		once.Do(func() {
			if _, err := f.WriteFile(ctx, "k", []byte("written"), backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Errorf("the write of k: %v", err)
			}
			// It dies at its commit point, its lease still live.
			_, rmErr = transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "k", Remove: true}})
		})
	})
	if _, err := mover.Rename(ctx, "src", "k", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeExists {
		t.Errorf("the move onto the file written meanwhile: %v, want EXISTS", err)
	}
	if codeOf(rmErr) != fault.CodeStale {
		t.Errorf("the removal of k during the move: %v, want STALE", rmErr)
	}
	recovered(t, f, bucket, "rmovermv", -1, map[string]string{"k": "written", "src": "moved"})
}

// cutBody serves every read of the object whose key ends in suffix with a
// body cut after its first bytes, as a connection reset there would.
type cutBody struct{ suffix string }

func (s *cutBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	p := cmp.Or(r.URL.Opaque, r.URL.Path)
	if err != nil || r.Method != http.MethodGet || !strings.HasSuffix(p, s.suffix) {
		return resp, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data[:len(data)/2]),
		iotest.ErrReader(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})))
	return resp, nil
}

// A journal whose body the store stops sending part way is not one no
// agentfs wrote: its files are unknown, and the older journals that may
// have changed them wait (the store failed: the recovery stops there).
// Taken for an unreadable one, that holds up none, the older removal was
// undone while the newer creation over it stood, and the original was
// lost once the creation was undone.
func TestJournalCutPartWayHoldsUpOlder(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "cutj", map[string]string{"k": "original"})
	if _, err := transportFS(t, root, cutOff(5)).Commit(ctx, []backend.Op{{Path: "k", Remove: true}}); err == nil {
		t.Fatal("the removal that died succeeded")
	}
	asOlderAgentfs(t, bucket, "cutj", func() {
		if _, err := transportFS(t, root, cutOff(2)).Commit(ctx, []backend.Op{{Path: "k", Data: []byte("created")}}); err == nil {
			t.Fatal("the creation that died succeeded")
		}
	})
	expireJournals(t, bucket, "cutj")
	ids := journalIDs(t, bucket, "cutj")
	if len(ids) != 2 {
		t.Fatalf("journals: %q, want 2", ids)
	}
	_, err := transportFS(t, root, &cutBody{suffix: "/.agentfs-journal/" + ids[1] + ".json"}).Recover(ctx)
	if err == nil || strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("the recovery whose read of a journal was cut: %v, want the store's failure", err)
	}
	if got := tree(t, f, "k"); got["k"] != "created" || len(journalIDs(t, bucket, "cutj")) != 2 {
		t.Errorf("after a recovery cut part way: %s, journals %q; want both left as they were", brief(got), journalIDs(t, bucket, "cutj"))
	}
	recovered(t, f, bucket, "cutj", 2, map[string]string{"k": "original"})
}

// A removal of a file that a transaction which died created, found dead
// and undone by the removal's own check, is STALE: the file is gone. It
// answered deleted, and left the file's directory, which only the undone
// creation had made, as a marker: the store answers a DELETE If-Match of
// a key already gone with success.
func TestRemovalOfAnUndoneCreationIsStale(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "rmundone", map[string]string{"b": "old b"})
	dies := &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/rmundone/b")
	}}
	if _, err := transportFS(t, root, dies).Commit(ctx, []backend.Op{
		{Path: "n/x", Data: []byte("T x"), Write: backend.WriteOptions{IfAbsent: true}},
		{Path: "b", Data: []byte("T b"), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "b")}}}); err == nil {
		t.Fatal("the transaction whose process died succeeded")
	}
	uncommitted := versionOf(t, f, "n/x")
	expireJournals(t, bucket, "rmundone")
	if deleted, err := f.Remove(ctx, "n/x", backend.RemoveOptions{IfVersion: uncommitted}); codeOf(err) != fault.CodeStale {
		t.Errorf("the removal of a creation undone meanwhile: deleted %v, %v; want STALE", deleted, err)
	}
	if got := tree(t, f, "n/x", "n", "b"); got["n/x"] != "" || got["n"] != "" || got["b"] != "old b" {
		t.Errorf("after the removal: %s, want n/x and n missing, b old", brief(got))
	}
	noJournal(t, bucket, "rmundone", "the removal's recovery")
}

// losing loses the answer to the first PUT lose accepts: with landed, the
// PUT goes to the store first; then meanwhile runs, when set, and the
// answer is a 500 (status), or the connection cut (status 0). HEADs fail
// after that with headsFail. With unread, the body is sent as a copy
// and the request's own is never read to its end, as when the answer
// came before the transport's read of the end.
type losing struct {
	lose      func(r *http.Request) bool
	landed    bool
	unread    bool
	status    int
	meanwhile func()
	headsFail bool
	lost      atomic.Bool
}

func (l *losing) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodHead && l.headsFail && l.lost.Load() {
		return nil, errors.New("connection refused")
	}
	if !l.lose(r) || l.lost.Swap(true) {
		return http.DefaultTransport.RoundTrip(r)
	}
	if l.landed {
		// The body is read whole before it is sent, as a store reads it
		// before it answers: the transport's own read of its end may
		// come after the answer, and the client then took the body for
		// never sent whole (ErrUnsent), sent it again, and answered the
		// refusal of its own write (EXISTS, 2 runs in 100).
		data, err := io.ReadAll(io.LimitReader(r.Body, r.ContentLength))
		if err != nil {
			return nil, err
		}
		if !l.unread {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		r.Body.Close()
		sent := r.Clone(r.Context())
		sent.Body, sent.GetBody = io.NopCloser(bytes.NewReader(data)), nil
		resp, err := http.DefaultTransport.RoundTrip(sent)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
	} else if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body) // sent whole, never stored
		r.Body.Close()
	}
	if l.meanwhile != nil {
		l.meanwhile()
	}
	if l.status == 0 {
		return nil, errors.New("connection reset by peer")
	}
	return s3Answer(r, l.status, "InternalError", "We encountered an internal error, please try again."), nil
}

// A change whose body went out whole and whose answer was lost (a 500, or
// the connection cut) is judged by the object: holding the bytes sent (its
// ETag their MD5), the change is made and the call succeeds; still as the
// change found it, it is sent again, under its condition; else
// the hint says the change may have been made. It was IO_ERROR "retry"
// for a change made, and an append retried so was made twice.
func TestLostAnswerIsJudgedByTheObject(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		l        *losing
		other    string // what another writer puts in log meanwhile
		call     func(*core.Tools) error
		log, new string // the files' content after the call ("" missing)
		code     fault.Code
		hint     string
	}{
		{"append made, 500", &losing{landed: true, status: 500}, "", appendEntry, "entry 1\nentry 2\n", "", "", ""},
		{"append made, cut", &losing{landed: true}, "", appendEntry, "entry 1\nentry 2\n", "", "", ""},
		{"edit made, 500", &losing{landed: true, status: 500}, "", func(tools *core.Tools) error {
			_, err := tools.Edit(ctx, core.EditRequest{Path: "log", OldText: new("entry 1"), NewText: new("entry one")})
			return err
		}, "entry one\n", "", "", ""},
		{"create made, cut", &losing{landed: true}, "", func(tools *core.Tools) error {
			_, err := tools.Write(ctx, core.WriteRequest{Path: "new", Content: new("n"), Create: true})
			return err
		}, "entry 1\n", "n", "", ""},
		// Made, but its body taken for never sent whole: its mark says
		// it was this write's. It was EXISTS, and STALE for an append.
		{"create made, taken for unsent", &losing{landed: true, unread: true}, "", func(tools *core.Tools) error {
			_, err := tools.Write(ctx, core.WriteRequest{Path: "new", Content: new("n"), Create: true})
			return err
		}, "entry 1\n", "n", "", ""},
		{"append made, taken for unsent", &losing{landed: true, unread: true}, "", appendEntry, "entry 1\nentry 2\n", "", "", ""},
		// Not made when looked at, and sent again: made once.
		{"append not made", &losing{status: 500}, "", appendEntry, "entry 1\nentry 2\n", "", "", ""},
		{"create not made", &losing{}, "", func(tools *core.Tools) error {
			_, err := tools.Write(ctx, core.WriteRequest{Path: "new", Content: new("n"), Create: true})
			return err
		}, "entry 1\n", "n", "", ""},
		{"append made, then changed", &losing{landed: true, status: 500}, "other\n", appendEntry, "other\n", "", fault.CodeIOError, "may have been made"},
		// Another's append of the same line: its bytes, not this write's.
		{"append not made, same bytes", &losing{status: 500}, "entry 1\nentry 2\n", appendEntry, "entry 1\nentry 2\n", "", fault.CodeIOError, "may have been made"},
		{"append made, unread", &losing{landed: true, status: 500, headsFail: true}, "", appendEntry, "entry 1\nentry 2\n", "", fault.CodeIOError, "may have been made"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, root := seeded(t, "lost", map[string]string{"log": "entry 1\n"})
			l := tc.l
			l.lose = func(r *http.Request) bool {
				return r.Method == http.MethodPut && (putTo("lost", "log")(r) || putTo("lost", "new")(r))
			}
			if tc.other != "" {
				l.meanwhile = func() {
					if _, err := f.WriteFile(ctx, "log", []byte(tc.other), backend.WriteOptions{}); err != nil {
						t.Error(err)
					}
				}
			}
			err := tc.call(&core.Tools{FS: transportFS(t, root, l), LockTimeout: 200 * time.Millisecond})
			e := fault.AsError(err)
			switch {
			case tc.code == "" && err != nil:
				t.Errorf("%v, want success", err)
			case tc.code != "" && (e == nil || e.Code != tc.code || !strings.Contains(e.Hint, tc.hint)):
				t.Errorf("%v, want %s with a hint saying %q", err, tc.code, tc.hint)
			case tc.code != "" && e.Path != "log" && e.Path != "new":
				t.Errorf("%v names no path", err)
			}
			if got := tree(t, f, "log", "new"); got["log"] != tc.log || got["new"] != tc.new {
				t.Errorf("log holds %q and new %q, want %q and %q", got["log"], got["new"], tc.log, tc.new)
			}
		})
	}
}

func appendEntry(tools *core.Tools) error {
	_, err := tools.Write(context.Background(), core.WriteRequest{Path: "log", Content: new("entry 2\n"), Append: true})
	return err
}

// A search whose read of a file's body fails part way (the connection
// reset) fails as a read of it does, and as a local search over a disk's
// EIO does: IO_ERROR naming the file and the store. It failed with the
// bare error, no path, and a local file system's hint.
func TestSearchOfACutBodyNamesTheFile(t *testing.T) {
	_, _, root := seeded(t, "grepcut", map[string]string{"a.txt": "entry 1\n", "log.txt": "entry 1\nentry 2\n"})
	tools := &core.Tools{FS: transportFS(t, root, &cutBody{suffix: "/grepcut/log.txt"})}
	for _, mode := range []string{"content", "files"} {
		_, err := tools.Grep(context.Background(), core.GrepRequest{Query: "entry", Mode: mode})
		e := fault.AsError(err)
		if e == nil {
			t.Fatalf("grep --mode %s over a body cut succeeded", mode)
		}
		if e.Code != fault.CodeIOError || e.Path != "log.txt" || !strings.Contains(e.Message, "object store") || strings.Contains(e.Hint, "file system") {
			t.Errorf("grep --mode %s over a body cut: %v (hint %q), want IO_ERROR naming log.txt and the store", mode, err, e.Hint)
		}
	}
}

// A refused session token, a signature scoped to another region, and a
// bucket of another region are the caller's settings to fix, as a wrong
// secret is: never "check the path" (INVALID_ARGUMENT), nor "retry"
// (IO_ERROR), which they were.
func TestCredentialAndRegionRefusals(t *testing.T) {
	bucket := s3test.Bucket(t)
	for _, tc := range []struct {
		status int
		code   string
		want   fault.Code
		hint   string
	}{
		{http.StatusBadRequest, "InvalidToken", fault.CodePermissionDenied, "AWS_SESSION_TOKEN"},
		{http.StatusBadRequest, "ExpiredToken", fault.CodePermissionDenied, "AWS_SESSION_TOKEN"},
		{http.StatusBadRequest, "AuthorizationHeaderMalformed", fault.CodePermissionDenied, "AWS_REGION"},
		{http.StatusMovedPermanently, "PermanentRedirect", fault.CodeNotConfigured, "AWS_REGION"},
	} {
		f := transportFS(t, "s3://"+bucket+"/ws", &refusing{refuse: func(*http.Request) bool { return true }, status: tc.status, code: tc.code})
		_, err := f.ReadDir(context.Background(), ".", 0, 10)
		if e := fault.AsError(err); e == nil || e.Code != tc.want || !strings.Contains(e.Hint, tc.hint) || strings.Contains(e.Hint, "retry") {
			t.Errorf("%s: %v (hint %q), want %s with a hint naming %s", tc.code, err, fault.AsError(err).Hint, tc.want, tc.hint)
		}
	}
}

// A transaction that failed and was rolled back whole says that nothing
// was changed, and a move's failure on its destination names the
// destination: both said only that the store failed, with the hint to
// retry, and the move named its source.
func TestRolledBackFailureSaysNothingChanged(t *testing.T) {
	ctx := context.Background()
	fail := func(name string) *refusing {
		return &refusing{refuse: putTo("rolled", name), status: http.StatusInternalServerError, code: "InternalError"}
	}
	for _, tc := range []struct {
		name string
		call func(root string) error
		path string
	}{
		{"commit", func(root string) error {
			_, err := transportFS(t, root, fail("b")).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}})
			return err
		}, "b"},
		{"move", func(root string) error {
			_, err := transportFS(t, root, fail("c")).Rename(ctx, "a", "c", backend.WriteOptions{})
			return err
		}, "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, root := seeded(t, "rolled", map[string]string{"a": "old a", "b": "old b"})
			err := tc.call(root)
			e := fault.AsError(err)
			if e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "nothing was changed") || e.Path != tc.path {
				t.Errorf("%v (hint %q), want IO_ERROR on %s saying nothing was changed", err, fault.AsError(err).Hint, tc.path)
			}
			if got := tree(t, f, "a", "b", "c"); got["a"] != "old a" || got["b"] != "old b" || got["c"] != "" {
				t.Errorf("after the rollback: %s", brief(got))
			}
		})
	}
}

// resendRefused loses the first DELETE of a key ending in suffix (never
// sent on), and before the second, the resend, runs do: the first one
// landing late, and whatever follows it. With notFound, the resend is
// answered 404 NoSuchKey, as a store that answers a DELETE If-Match of a
// key gone so (the swap's refusal, swapErr) does.
type resendRefused struct {
	suffix   string
	do       func()
	notFound bool
	mu       sync.Mutex
	seen     int
}

func (r *resendRefused) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(req.URL.Opaque, req.URL.Path), r.suffix) {
		r.mu.Lock()
		r.seen++
		n := r.seen
		r.mu.Unlock()
		switch {
		case n == 1:
			return nil, errors.New("connection reset by peer")
		case n == 2:
			r.do()
			if r.notFound {
				body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`
				return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)),
					ContentLength: int64(len(body)), Request: req}, nil
			}
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestRemoveWhoseResendIsRefused: the resend of a removal whose answer
// was lost is refused when the first DELETE landed in between, late: a
// store's 404 for the gone key is the removal made, not STALE "it no
// longer exists"; a 412 for a file another writer put after it is the
// removal that may have been made before that writer's (IO_ERROR with
// its version), not STALE "nothing removed", whose retry removed theirs.
func TestRemoveWhoseResendIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		notFound bool
		theirs   bool
	}{
		{"resend-404", true, false},
		{"resend-412", false, true},
	} {
		for _, matched := range []bool{false, true} {
			name := tc.name
			if matched {
				name += "-matched"
			}
			f, bucket, root := seeded(t, name, map[string]string{"a": "a", "b": "b"})
			var opts backend.RemoveOptions
			if matched {
				opts.IfVersion = versionOf(t, f, "a")
			}
			rt := &resendRefused{suffix: "/a", notFound: tc.notFound, do: func() {
				if _, err := f.Remove(ctx, "a", backend.RemoveOptions{}); err != nil {
					t.Error(err)
				}
				if tc.theirs {
					if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{}); err != nil {
						t.Error(err)
					}
				}
			}}
			removed, err := transportFS(t, root, rt).Remove(ctx, "a", opts)
			e := fault.AsError(err)
			switch {
			case !tc.theirs && (!removed || err != nil):
				t.Errorf("%s: %v, %v; want removed", name, removed, err)
			case tc.theirs && (removed || e == nil || e.Code != fault.CodeIOError || e.Details["currentVersion"] == nil):
				t.Errorf("%s: %v, %#v; want IO_ERROR with the version of the file put since", name, removed, e)
			}
			want := ""
			if tc.theirs {
				want = "theirs"
			}
			recovered(t, f, bucket, name, 0, map[string]string{"a": want, "b": "b"})
		}
	}
}

// beforeNth runs do before it forwards the nth request that match
// matches (1 the first).
type beforeNth struct {
	match func(*http.Request) bool
	n     int
	do    func()
	next  http.RoundTripper
	mu    sync.Mutex
	seen  int
}

func (b *beforeNth) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.match(r) {
		b.mu.Lock()
		b.seen++
		nth := b.seen == b.n
		b.mu.Unlock()
		if nth {
			b.do()
		}
	}
	return cmp.Or(b.next, http.DefaultTransport).RoundTrip(r)
}

// TestRollbackRefusedByAnotherWritersChange: a rollback whose restore
// (or removal of a file the transaction made) is refused because another
// writer changed the file after the rollback looked at it leaves the
// writer's file, and says so as when the look saw it (STALE, kept): it
// said "nothing was changed" where the writer's file may hold this
// transaction's change.
func TestRollbackRefusedByAnotherWritersChange(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, key string }{{"refusedrestore", "a"}, {"refusedremoval", "c"}} {
		f, bucket, root := seeded(t, tc.name, map[string]string{"a": "a", "b": "b"})
		method := http.MethodPut
		if tc.key == "c" {
			method = http.MethodDelete
		}
		n := 2 // the transaction's PUT, then the restore's
		if tc.key == "c" {
			n = 1 // the removal of the file made
		}
		meddle := &beforeNth{n: n, match: func(r *http.Request) bool {
			return r.Method == method && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+tc.name+"/"+tc.key) && r.Header.Get("X-Amz-Copy-Source") == ""
		}, do: func() {
			if _, err := f.WriteFile(ctx, tc.key, []byte("theirs"), backend.WriteOptions{}); err != nil {
				t.Error(err)
			}
		}}
		committer := transportFS(t, root, &onFirst{match: commitPoint, fail: true, always: true, next: meddle})
		_, err := committer.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")},
			{Path: "c", Data: []byte("new c")}})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || !errors.Is(err, backend.ErrPartlyUndone) ||
			!slices.Equal(e.Details["kept"].([]string), []string{tc.key}) {
			t.Errorf("%s: the transaction undone but for %s: %v, want STALE keeping %s", tc.name, tc.key, err, tc.key)
		}
		want := map[string]string{"a": "a", "b": "b", "c": ""}
		want[tc.key] = "theirs"
		recovered(t, f, bucket, tc.name, 0, want)
	}
}

// TestCommitRefusedByAnotherWriterFirstKeepsNothing: a transaction
// whose write of a file is refused because another writer changed it
// first never changed that file: undone, it is a lost race, not STALE
// keeping the writer's file as if it held this transaction's change
// (only a change the store answered as made counts).
func TestCommitRefusedByAnotherWriterFirstKeepsNothing(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "writerfirst", map[string]string{"a": "a", "b": "b"})
	first := &beforeNth{n: 1, match: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/writerfirst/b") && r.Header.Get("X-Amz-Copy-Source") == ""
	}, do: func() {
		if _, err := f.WriteFile(ctx, "b", []byte("theirs"), backend.WriteOptions{}); err != nil {
			t.Error(err)
		}
	}}
	_, err := transportFS(t, root, first).Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}})
	if e := fault.AsError(err); e == nil || errors.Is(err, backend.ErrPartlyUndone) || e.Details["kept"] != nil {
		t.Errorf("the transaction refused at b: %#v, want a lost race keeping nothing", e)
	}
	recovered(t, f, bucket, "writerfirst", 0, map[string]string{"a": "a", "b": "theirs"})
}

// TestJournalOfANewerVersionIsLeft: a dead transaction's journal of a
// later journal version than this agentfs knows (a newer agentfs's, run
// beside this one or before a downgrade) is neither rolled back nor
// removed, as what its version adds may change how it is undone: the
// recovery is NOT_SUPPORTED naming the version, and the files and the
// journal stay for the agentfs that wrote it. Read as one of its own,
// this agentfs rolled it back.
func TestJournalOfANewerVersionIsLeft(t *testing.T) {
	ctx := context.Background()
	old := map[string]string{"a": "old a", "b": "old b"}
	f, bucket, root := seeded(t, "newerjournal", old)
	dying := dyingFS(t, root, 4) // the journal, two copies, a's write
	if _, err := dying.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}}); err == nil {
		t.Fatal("the dying commit succeeded")
	}
	mixed := map[string]string{"a": "new a", "b": "old b"}
	if got := tree(t, f, "a", "b"); !maps.Equal(got, mixed) {
		t.Fatalf("the dead commit left %q, want %q", got, mixed)
	}
	newer := fmt.Sprintf(`"version":%d`, s3fs.JournalVersion+1)
	editJournals(t, bucket, "newerjournal", func(j string) string {
		return strings.Replace(j, fmt.Sprintf(`"version":%d`, s3fs.JournalVersion), newer, 1)
	})
	_, err := f.Recover(ctx)
	if codeOf(err) != fault.CodeNotSupported || !strings.Contains(err.Error(), "version") || !strings.Contains(fault.AsError(err).Hint, "then remove it") {
		t.Errorf("the recovery of a newer journal: %v (hint %q), want NOT_SUPPORTED naming its version, its hint to recover it or, without that agentfs, to restore its objects by hand and remove it", err, fault.AsError(err).Hint)
	}
	if got := tree(t, f, "a", "b"); !maps.Equal(got, mixed) {
		t.Errorf("after the recovery of a newer journal: %q, want it left %q", got, mixed)
	}
	_, journals := readJournals(t, bucket, "newerjournal")
	if len(journals) != 1 {
		t.Fatalf("%d journals left, want the newer one", len(journals))
	}
	editJournals(t, bucket, "newerjournal", func(j string) string {
		return strings.Replace(j, newer, fmt.Sprintf(`"version":%d`, s3fs.JournalVersion), 1)
	})
	recovered(t, f, bucket, "newerjournal", 1, old)
}

// TestJournalOfANewerFormIsLeft: a journal of a later version whose JSON
// does not decode as this agentfs's (a field of another type, as a
// version may change one) is a newer agentfs's all the same: live within
// its lease, left once that is over, NOT_SUPPORTED naming its version. It
// was IO_ERROR "cannot be read" even live, its hint to restore the files
// by hand and remove it, and it held none of the files it may name.
func TestJournalOfANewerFormIsLeft(t *testing.T) {
	ctx := context.Background()
	old := map[string]string{"a": "old a", "b": "old b"}
	f, bucket, root := seeded(t, "newerform", old)
	dying := dyingFS(t, root, 4) // the journal, two copies, a's write
	if _, err := dying.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("new b")}}); err == nil {
		t.Fatal("the dying commit succeeded")
	}
	mixed := map[string]string{"a": "new a", "b": "old b"}
	ours := fmt.Sprintf(`"version":%d`, s3fs.JournalVersion)
	newer := fmt.Sprintf(`"version":%d,"claimFirst":{"v":%d}`, s3fs.JournalVersion+1, s3fs.JournalVersion+1)
	rewriteJournals(t, bucket, "newerform", func(j []byte) []byte {
		s := strings.Replace(string(j), ours, newer, 1)
		return []byte(strings.Replace(s, `"lease":"-1m0s"`, `"lease":"15s"`, 1))
	})
	rec, err := f.Recover(ctx)
	if err != nil || rec.Live != 1 {
		t.Errorf("the recovery of a newer journal in its lease: %+v, %v; want it live", rec, err)
	}
	editJournals(t, bucket, "newerform", func(j string) string { return j })
	_, err = f.Recover(ctx)
	if codeOf(err) != fault.CodeNotSupported || !strings.Contains(err.Error(), fmt.Sprintf("version %d", s3fs.JournalVersion+1)) {
		t.Errorf("the recovery of a newer journal past its lease: %v, want NOT_SUPPORTED naming its version", err)
	}
	if got := tree(t, f, "a", "b"); !maps.Equal(got, mixed) {
		t.Errorf("after the recovery of a newer journal: %q, want it left %q", got, mixed)
	}
	if _, journals := readJournals(t, bucket, "newerform"); len(journals) != 1 {
		t.Fatalf("%d journals left, want the newer one", len(journals))
	}
	rewriteJournals(t, bucket, "newerform", func(j []byte) []byte {
		return []byte(strings.Replace(string(j), newer, ours, 1))
	})
	recovered(t, f, bucket, "newerform", 1, old)
}

// TestTwoCommitsRemovingOneFile: of two transactions at once that remove
// one file, one removes it and the other is refused before it changes
// anything. A store answers a DELETE If-Match of a key already gone with
// success (versitygw does), so the second, removing the file between the
// first's HEAD of it and its DELETE, let both take the removal for their
// own: the first, refused at its next change, put the file back, though
// the second had committed its removal and succeeded (two apply-patch of
// one move at once left the file at both names, one exiting 0).
func TestTwoCommitsRemovingOneFile(t *testing.T) {
	ctx := context.Background()
	const name = "tworemovals"
	f, bucket, root := seeded(t, name, map[string]string{"a": "a", "b": "b"})
	ops := func(b string) []backend.Op {
		return []backend.Op{{Path: "a", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, f, "a")}},
			{Path: "b", Data: []byte(b), Write: backend.WriteOptions{IfVersion: versionOf(t, f, "b")}}}
	}
	first, second := ops("first's b"), ops("second's b")
	var secondErr error
	deleteA := func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/a")
	}
	// The second commits as the first is about to delete a.
	rt := &onFirst{match: deleteA, do: func() { _, secondErr = transportFS(t, root, nil).Commit(ctx, second) }}
	_, firstErr := transportFS(t, root, rt).Commit(ctx, first)
	if (firstErr == nil) == (secondErr == nil) {
		t.Fatalf("the first: %v; the second: %v; want one to succeed", firstErr, secondErr)
	}
	want := map[string]string{"a": "", "b": "first's b"}
	if secondErr == nil {
		want["b"] = "second's b"
	}
	if got := tree(t, f, "a", "b"); !maps.Equal(got, want) {
		t.Errorf("after the transactions (first: %v; second: %v): %s, want %s", firstErr, secondErr, brief(got), brief(want))
	}
	noJournal(t, bucket, name, "the transactions")
}
