package s3fs_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// tree reads the files at paths, "" for a missing one, and the directory
// markers' existence as "dir".
func tree(t *testing.T, f *s3fs.FS, paths ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	got := map[string]string{}
	for _, p := range paths {
		fi, err := f.Stat(ctx, p)
		switch {
		case codeOf(err) == fault.CodeNotFound:
			got[p] = ""
			continue
		case err != nil:
			t.Fatal(err)
		case fi.Type == backend.TypeDir:
			got[p] = "dir"
			continue
		}
		r, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r)
		r.Close()
		got[p] = string(data)
	}
	return got
}

// noJournal fails t when the workspace at root has a journal or a copy
// left.
func noJournal(t *testing.T, bucket, prefix, what string) {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix + "/.agentfs-journal/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		left = append(left, o.Key)
	}
	if len(left) > 0 {
		t.Errorf("%s: the journal left %q", what, left)
	}
}

// TestMoveCrash: a move whose process dies at any of its requests leaves,
// once the next call recovers it, the tree all where it was, or, after the
// commit point, all where it went; and no journal or copy behind. A
// directory (with an empty directory in it) and a file over a file are
// moved.
func TestMoveCrash(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, from, to string
		before, after  map[string]string
		// steps are the move's PUTs and DELETEs, with one more to spare.
		steps int
	}{
		{"a directory", "d", "e/d",
			map[string]string{"d/a": "a", "d/sub/b": "b", "d/empty": "dir", "e/d/a": "", "e/d/sub/b": "", "e/d/empty": "", "keep": "k"},
			map[string]string{"d/a": "", "d/sub/b": "", "d/empty": "", "e/d/a": "a", "e/d/sub/b": "b", "e/d/empty": "dir", "keep": "k"},
			// the journal, 6 claims (2 sources, 2 destinations, a
			// marker's, the destination directory's), the journal saying
			// so, 2 copies, a marker, the journal saying deletions begin,
			// 2 deletes, the journal saying committed (the commit point),
			// its removal, 6 claims' removals
			23},
		{"a file over a file", "f", "g",
			map[string]string{"f": "new", "g": "old"},
			map[string]string{"f": "", "g": "new"},
			// the journal, 2 claims, the journal saying so, the copy of
			// g, the copy, the journal saying deletions begin, the
			// delete, the journal saying committed, its removal, 2
			// claims' removals
			13},
	} {
		for cut := 0; cut <= tc.steps; cut++ {
			prefix := fmt.Sprintf("move-%s-%d", tc.name[:3], cut)
			root := "s3://" + bucket + "/" + prefix
			f, _ := openFS(t, root)
			for p, data := range tc.before {
				switch data {
				case "":
				case "dir":
					if _, err := f.WriteFile(ctx, p+"/x", nil, backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
					if _, err := f.Remove(ctx, p+"/x", backend.RemoveOptions{}); err != nil {
						t.Fatal(err)
					}
				default:
					if _, err := f.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			dying := dyingFS(t, root, cut)
			_, moveErr := dying.Rename(ctx, tc.from, tc.to, backend.WriteOptions{})
			if _, err := f.Recover(ctx); err != nil {
				t.Fatalf("%s, cut after %d: recover: %v", tc.name, cut, err)
			}
			got := tree(t, f, slicesOf(tc.before)...)
			if !maps.Equal(got, tc.before) && !maps.Equal(got, tc.after) {
				t.Errorf("%s, cut after %d (move: %v): the tree is %q, neither all old nor all new", tc.name, cut, moveErr, got)
			}
			if cut == tc.steps && moveErr != nil {
				t.Errorf("%s: a move with all its requests failed: %v; the cuts miss its end", tc.name, moveErr)
			}
			if moveErr == nil && !maps.Equal(got, tc.after) {
				t.Errorf("%s, cut after %d: a move reported done left %q", tc.name, cut, got)
			}
			noJournal(t, bucket, prefix, fmt.Sprintf("%s, cut after %d", tc.name, cut))
		}
	}
}

func slicesOf(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// meddler is a transport that, at the move's first copy, lets another
// writer change the tree first.
type meddler struct {
	once   sync.Once
	meddle func()
}

// meddledFS is a backend of root whose first copy is preceded by another
// writer's change, meddle.
func meddledFS(t *testing.T, root string, meddle func() error) *s3fs.FS {
	t.Helper()
	return transportFS(t, root, &meddler{meddle: func() {
		if err := meddle(); err != nil {
			t.Error(err)
		}
	}})
}

// RoundTrip meddles before the first copy: a store's copy, or the PUT of
// one made through agentfs (below e/, the moves' destination).
func (m *meddler) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Amz-Copy-Source") != "" || r.Method == http.MethodPut && strings.Contains(r.URL.Opaque, "/e/") {
		m.once.Do(m.meddle)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestMoveRace: an object changed, removed or added below a directory
// while it moves is STALE, and nothing moves: the other writer's change
// stays where it made it.
func TestMoveRace(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		other func(f *s3fs.FS) error
		want  map[string]string
	}{
		{"a changed object", func(f *s3fs.FS) error {
			_, err := f.WriteFile(ctx, "d/sub/b", []byte("theirs"), backend.WriteOptions{})
			return err
		}, map[string]string{"d/a": "a", "d/sub/b": "theirs", "d/new": ""}},
		{"a removed object", func(f *s3fs.FS) error {
			_, err := f.Remove(ctx, "d/sub/b", backend.RemoveOptions{})
			return err
		}, map[string]string{"d/a": "a", "d/sub/b": "", "d/new": ""}},
		{"an added object", func(f *s3fs.FS) error {
			_, err := f.WriteFile(ctx, "d/new", []byte("new"), backend.WriteOptions{})
			return err
		}, map[string]string{"d/a": "a", "d/sub/b": "b", "d/new": "new"}},
	} {
		prefix := "race-" + tc.name[3:6]
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		for p, data := range map[string]string{"d/a": "a", "d/sub/b": "b"} {
			if _, err := f.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		mover := meddledFS(t, root, func() error { return tc.other(f) })
		_, err := mover.Rename(ctx, "d", "e", backend.WriteOptions{IfAbsent: true})
		if codeOf(err) != fault.CodeStale {
			t.Errorf("%s: the move returned %v, want STALE", tc.name, err)
		}
		if got := tree(t, f, "d/a", "d/sub/b", "d/new"); !maps.Equal(got, tc.want) {
			t.Errorf("%s: the source is %q, want %q", tc.name, got, tc.want)
		}
		if _, err := f.Stat(ctx, "e"); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s: the destination exists after a refused move: %v", tc.name, err)
		}
		noJournal(t, bucket, prefix, tc.name)
	}
}

// gate holds a transaction's first change until released, and tells of
// each write of its journal.
type gate struct {
	journalWrites chan struct{}
	release       chan struct{}
	once          sync.Once
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		if strings.Contains(r.URL.Opaque, ".agentfs-journal") {
			defer func() { g.journalWrites <- struct{}{} }()
		} else {
			g.once.Do(func() { <-g.release })
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestLiveLeaseKept: a commit that lasts several times its lease renews
// it, and a recovery meanwhile leaves it alone; the commit then succeeds.
func TestLiveLeaseKept(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	root := "s3://" + bucket + "/live"
	f, _ := openFS(t, root)
	if _, err := f.WriteFile(ctx, "a", []byte("old a"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	g := &gate{journalWrites: make(chan struct{}, 100), release: make(chan struct{})}
	committer := transportFS(t, root, g)
	// Renewed every 200 ms; 10 writes of the journal span 1.8 s, more than
	// the lease and the 1 s of the store's clock together.
	s3fs.SetLease(committer, 600*time.Millisecond)
	done := make(chan error)
	go func() {
		_, err := committer.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "b", Data: []byte("b")}})
		done <- err
	}()
	for i := range 10 {
		select {
		case <-g.journalWrites:
		case err := <-done:
			t.Fatalf("the commit ended at the journal's write %d: %v", i, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("the journal was written %d times in 10 s: its lease is not renewed", i)
		}
	}
	rec, err := f.Recover(ctx)
	if err != nil || rec.Live != 1 || rec.RolledBack != 0 {
		t.Errorf("a recovery during a live commit: %+v (%v), want it live and untouched", rec, err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("the commit failed: %v", err)
	}
	if got := tree(t, f, "a", "b"); !maps.Equal(got, map[string]string{"a": "new a", "b": "b"}) {
		t.Errorf("after the commit the files are %q", got)
	}
	noJournal(t, bucket, "live", "the commit")
}

// TestMoveKeepsAFileCreatedAtTheDestination: a file created at a move's
// destination after the move checked it is kept, and the move fails:
// versitygw ignores a copy's conditions on its destination, and the copy
// overwrote the file, both calls exiting 0 (7 of 150 rounds).
func TestMoveKeepsAFileCreatedAtTheDestination(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	// Theirs of other bytes, and of the bytes moved, which a rollback that
	// took it for the move's copy deleted.
	for _, theirs := range []string{"theirs", "moved"} {
		prefix := "mvdst-" + theirs
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		if _, err := f.WriteFile(ctx, "src", []byte("moved"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		mover := meddledFS(t, root, func() error {
			_, err := f.WriteFile(ctx, "e/f", []byte(theirs), backend.WriteOptions{IfAbsent: true})
			return err
		})
		if _, err := mover.Rename(ctx, "src", "e/f", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeExists {
			t.Errorf("a move onto a file (%s) created at its destination meanwhile: %v, want EXISTS", theirs, err)
		}
		if got := tree(t, f, "src", "e/f"); !maps.Equal(got, map[string]string{"src": "moved", "e/f": theirs}) {
			t.Errorf("after the refused move: %q, want theirs (%s) kept", got, theirs)
		}
		noJournal(t, bucket, prefix, "a move onto a file created meanwhile")
	}
}

// TestMoveKeepsMetadata: a file moved through agentfs keeps its bytes and
// what a store's copy keeps: its Content-Type, Content-Encoding,
// Cache-Control and user metadata (they were dropped, a served page
// turning binary/octet-stream; then, asked for gzip by Go's transport, a
// gzip-encoded file was read decoded and copied without its encoding).
func TestMoveKeepsMetadata(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	// A small file is copied through agentfs; one stored in parts, by
	// the store, with the metadata agentfs read (its copy is marked).
	for _, data := range [][]byte{gzipped(t, "<p>hi</p>"), partsData} {
		putMeta(t, bucket, "meta/d.html", data)
		f, _ := openFS(t, "s3://"+bucket+"/meta")
		if _, err := f.Rename(ctx, "d.html", "e.html", backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		checkMeta(t, bucket, "meta/e.html", data)
	}
}

// gzipped is text, gzip-compressed.
func gzipped(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// putMeta stores data at key with the metadata checkMeta checks: as an
// HTML page served gzip-encoded, in parts when it is over 5 MiB. (Through
// s3client: minio's streaming upload adds aws-chunked to the encoding.)
func putMeta(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	c := rawClient(t, bucket)
	h := http.Header{}
	h.Set("Content-Type", "text/html")
	h.Set("Content-Encoding", "gzip")
	h.Set("Cache-Control", "max-age=60")
	h.Set("X-Amz-Meta-Owner", "alice")
	if _, err := c.Upload(context.Background(), key, bytes.NewReader(data), int64(len(data)), 5<<20, h); err != nil {
		t.Fatal(err)
	}
}

// checkMeta checks that the object at key holds data, with putMeta's
// metadata.
func checkMeta(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	o, err := obj.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || o.ContentType != "text/html" || o.Metadata.Get("Content-Encoding") != "gzip" ||
		o.Metadata.Get("Cache-Control") != "max-age=60" || o.UserMetadata["Owner"] != "alice" {
		t.Errorf("%s: %d bytes (want %d, same %v), Content-Type %q, Content-Encoding %q, Cache-Control %q, metadata %v",
			key, len(got), len(data), bytes.Equal(got, data), o.ContentType, o.Metadata.Get("Content-Encoding"),
			o.Metadata.Get("Cache-Control"), o.UserMetadata)
	}
}

// TestRollbackKeepsMetadata: a file a failed move replaced is put back
// with its metadata. It was put back with its bytes alone: a served page
// turned binary/octet-stream.
func TestRollbackKeepsMetadata(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	data := gzipped(t, "<p>old</p>")
	putMeta(t, bucket, "rbmeta/d.html", data)
	root := "s3://" + bucket + "/rbmeta"
	f, _ := openFS(t, root)
	if _, err := f.WriteFile(ctx, "src", []byte("new"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mover := transportFS(t, root, &lostAnswer{suffix: "/rbmeta/d.html"})
	if _, err := mover.Rename(ctx, "src", "d.html", backend.WriteOptions{}); err == nil {
		t.Fatal("the move succeeded with its copy's answer lost")
	}
	checkMeta(t, bucket, "rbmeta/d.html", data)
	noJournal(t, bucket, "rbmeta", "a rolled back move")
}

// TestRestoreWithALostCheck: a rollback that put a replaced file back,
// then failed to read its backup copy again, leaves the file there. The
// restore took the failed read for a backup changed meanwhile and
// deleted the file it had put back; the move's recovery then found
// nothing to undo, and the file was lost.
func TestRestoreWithALostCheck(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "restorecheck", map[string]string{"src": "new", "dst": "old precious"})
	backupHead := func(r *http.Request) bool {
		p := cmp.Or(r.URL.Opaque, r.URL.Path)
		return r.Method == http.MethodHead && strings.Contains(p, "/.agentfs-journal/") && strings.HasSuffix(p, "/0")
	}
	mover := transportFS(t, root, &lostAnswer{suffix: "/restorecheck/dst", next: &onFirst{match: backupHead, fail: true}})
	if _, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{}); err == nil {
		t.Fatal("the move succeeded with its copy's answer lost")
	}
	recovered(t, f, bucket, "restorecheck", -1, map[string]string{"src": "new", "dst": "old precious"})
}

// afterRequest runs do once, as the answer comes to the first request
// that matches. It sends the requests through next (the default
// transport when nil).
type afterRequest struct {
	match func(*http.Request) bool
	do    func()
	next  http.RoundTripper
	once  sync.Once
}

func (a *afterRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := cmp.Or(a.next, http.DefaultTransport).RoundTrip(r)
	if a.match(r) {
		a.once.Do(a.do)
	}
	return resp, err
}

// putOf matches a PUT (not a store's copy) of a key ending in suffix.
func putOf(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), suffix)
	}
}

// TestSourceChangedAsItIsCopied: a move over a file whose source another
// writer changes, or whose check of the source fails, once the copy is
// made puts the file it replaced back. The copy undid itself and was
// then taken for one never made: the replaced file was not put back.
func TestSourceChangedAsItIsCopied(t *testing.T) {
	ctx := context.Background()
	for _, lost := range []bool{false, true} {
		name := fmt.Sprintf("srcchanged-%v", lost)
		f, bucket, root := seeded(t, name, map[string]string{"src": "new", "dst": "old precious"})
		want := map[string]string{"src": "theirs", "dst": "old precious"}
		var checkLost atomic.Bool
		var meddle func()
		if lost {
			want["src"] = "new"
			meddle = func() { checkLost.Store(true) }
		} else {
			meddle = func() {
				if _, err := f.WriteFile(ctx, "src", []byte("theirs"), backend.WriteOptions{}); err != nil {
					t.Error(err)
				}
			}
		}
		fails := &onFirst{fail: true, match: func(r *http.Request) bool {
			return checkLost.Load() && r.Method == http.MethodHead && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/src")
		}}
		mover := transportFS(t, root, &afterRequest{match: putOf("/" + name + "/dst"), do: meddle, next: fails})
		if _, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{}); err == nil {
			t.Errorf("%s: the move succeeded", name)
		}
		if _, err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, f, "src", "dst"); !maps.Equal(got, want) {
			t.Errorf("%s: after the move: %q, want %q", name, got, want)
		}
		noJournal(t, bucket, name, "a move whose source changed as it was copied")
	}
}

// commitPoint matches the rewrite of a journal that says it committed: a
// transaction's commit point.
func commitPoint(r *http.Request) bool { return journalSays(r, `"committed":true`) }

// TestRollbackKeepsTheOnlyCopy: a move that fails once it deleted its
// source, where another writer then put a file of its own, keeps its copy,
// the only one left of the file moved: in its process, and after a kill.
// The rollback took the writer's file for the original and deleted the
// copy: the file moved was lost.
func TestRollbackKeepsTheOnlyCopy(t *testing.T) {
	ctx := context.Background()
	for _, dead := range []bool{false, true} {
		name := fmt.Sprintf("onlycopy-%v", dead)
		f, bucket, root := seeded(t, name, map[string]string{"a": "original"})
		write := func() {
			if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Error(err)
			}
		}
		if dead {
			mover := transportFS(t, root, &dying{at: commitPoint})
			if _, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
				t.Fatalf("%s: the move that died at its commit succeeded", name)
			}
			write()
			expireJournals(t, bucket, name)
		} else {
			mover := transportFS(t, root, &onFirst{match: commitPoint, do: write, fail: true, always: true})
			_, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true})
			// Told "nothing was changed" (an IO_ERROR undone whole), a
			// caller would not look for the file moved at x.
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale ||
				!slices.Equal(e.Details["kept"].([]string), []string{"a"}) || !slices.Equal(e.Details["copies"].([]string), []string{"x"}) {
				t.Fatalf("%s: the move whose commit failed: %#v, want STALE keeping a, its copy at x", name, e)
			}
		}
		if _, err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, f, "a", "x"); !maps.Equal(got, map[string]string{"a": "theirs", "x": "original"}) {
			t.Errorf("%s: after the rollback: %q", name, got)
		}
		noJournal(t, bucket, name, "a rollback beside another writer's file at the source")
	}
}

// TestCopyBackKeepsAWritersFile: a rollback that puts the file moved back
// at its source, where another writer has just created a file, keeps the
// writer's file and the copy. The copy back was a store's copy, whose
// If-None-Match versitygw ignores: the writer's file, written with
// success, was overwritten.
func TestCopyBackKeepsAWritersFile(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "copyback", map[string]string{"a": "original"})
	var failed atomic.Bool
	writer := &onFirst{
		match: func(r *http.Request) bool {
			return failed.Load() && r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/copyback/a")
		},
		do: func() {
			if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Error(err)
			}
		}}
	mover := transportFS(t, root, &onFirst{match: commitPoint, do: func() { failed.Store(true) }, fail: true, always: true, next: writer})
	if _, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move whose commit failed succeeded")
	}
	if got := tree(t, f, "a", "x"); !maps.Equal(got, map[string]string{"a": "theirs", "x": "original"}) {
		t.Errorf("after the rollback: %q", got)
	}
	if _, err := f.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	noJournal(t, bucket, "copyback", "a rollback beside a writer")
}

// TestRollbackSaysWhatAWriterChangedAtTheDestination: a move over a file
// whose rollback finds, as it puts the replaced file back, that another
// writer has just written the destination keeps the writer's file and says
// so: STALE keeping x. It answered "nothing was changed", and x held a
// file that was neither the caller's nor the one it replaced.
func TestRollbackSaysWhatAWriterChangedAtTheDestination(t *testing.T) {
	ctx := context.Background()
	for _, over := range []string{"old x", ""} {
		name := "destwriter"
		seed := map[string]string{"a": "original"}
		if over != "" {
			name, seed["x"] = "destwriter-over", over
		}
		f, _, root := seeded(t, name, seed)
		var failed atomic.Bool
		writer := &onFirst{
			match: func(r *http.Request) bool {
				return failed.Load() && (r.Method == http.MethodPut || r.Method == http.MethodDelete) &&
					strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/x")
			},
			do: func() {
				if _, err := f.WriteFile(ctx, "x", []byte("theirs"), backend.WriteOptions{}); err != nil {
					t.Error(err)
				}
			}}
		mover := transportFS(t, root, &onFirst{match: commitPoint, do: func() { failed.Store(true) }, fail: true, always: true, next: writer})
		_, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || !slices.Equal(e.Details["kept"].([]string), []string{"x"}) {
			t.Fatalf("%s: the move whose rollback met a writer at x: %v, want STALE keeping x", name, err)
		}
		if got := tree(t, f, "a", "x"); !maps.Equal(got, map[string]string{"a": "original", "x": "theirs"}) {
			t.Errorf("%s: after the rollback: %q", name, got)
		}
	}
}

// TestLargeMoveKeepsAWritersFile: a move of a file over 8 MiB, which the
// store copies, meets a file another writer has just created at its
// destination: the move fails and the writer's file stays. The store's
// CopyObject carried If-None-Match, which versitygw ignores: both calls
// succeeded and the writer's file was overwritten (3 of 12 rounds in a
// black-box hunt). The copy goes in parts now, its condition checked as
// the upload completes.
func TestLargeMoveKeepsAWritersFile(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("b", 9<<20)
	f, bucket, root := seeded(t, "bigcopy", map[string]string{"a": big})
	writer := &onFirst{
		match: func(r *http.Request) bool {
			return r.Method != http.MethodHead && r.Method != http.MethodGet && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/bigcopy/x")
		},
		do: func() {
			if _, err := f.WriteFile(ctx, "x", []byte("theirs"), backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Error(err)
			}
		}}
	mover := transportFS(t, root, writer)
	if _, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Error("the move onto the writer's new file succeeded")
	}
	if got := tree(t, f, "a", "x"); got["a"] != big || got["x"] != "theirs" {
		t.Errorf("after the move: a holds %d bytes, x %.20q", len(got["a"]), got["x"])
	}
	if _, err := f.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	noJournal(t, bucket, "bigcopy", "a large move onto a writer's new file")
}

// TestMoveOfADeadMovesCopy: the copy a dead move made cannot be moved on
// until that move is recovered (finished: it died as it deleted its
// source). Claimed at the copy's ETag, it was moved, and the rollback,
// finding no copy, kept the original: the file was at two places.
func TestMoveOfADeadMovesCopy(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "ghost", map[string]string{"a": "data"})
	dead := transportFS(t, root, &dying{at: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/ghost/a")
	}})
	if _, err := dead.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move that died at its deletion succeeded")
	}
	if _, err := f.Rename(ctx, "x", "y", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move of the dead move's copy: %v, want STALE", err)
	}
	recovered(t, f, bucket, "ghost", 1, map[string]string{"a": "", "x": "data", "y": ""})
}

// TestOldJournalAfterItsDeletion: the journal of an older agentfs's move,
// killed once it deleted its source, is rolled back as that version did:
// the file put back at its source. Such a journal never says that
// deletions began, and its rollback deleted the copy without putting the
// file back: the file lost.
func TestOldJournalAfterItsDeletion(t *testing.T) {
	ctx := context.Background()
	for _, marked := range []bool{false, true} {
		name := fmt.Sprintf("oldjournal-%v", marked)
		f, bucket, root := seeded(t, name, map[string]string{"a": "data"})
		dead := transportFS(t, root, &dying{sent: true, at: func(r *http.Request) bool {
			return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/"+name+"/a")
		}})
		if _, err := dead.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
			t.Fatalf("%s: the move that died at its deletion succeeded", name)
		}
		older := regexp.MustCompile(`,"(deleting|version)":[^,}]*`)
		if !marked {
			older = regexp.MustCompile(`,"(deleting|version|mark)":[^,}]*`)
		}
		editJournals(t, bucket, name, func(j string) string { return older.ReplaceAllString(j, "") })
		recovered(t, f, bucket, name, 1, map[string]string{"a": "data", "x": ""})
	}
}

// TestRefusedDeletionLeavesNoCopy: a move whose deletion of its source is
// refused, another writer having changed it since the copy, is STALE and
// leaves the source as that writer made it and no copy. The deletion was
// taken for one made, and the rollback kept the copy, stale, beside the
// writer's file.
func TestRefusedDeletionLeavesNoCopy(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "refdel", map[string]string{"a": "original"})
	mover := transportFS(t, root, &onFirst{
		match: func(r *http.Request) bool {
			return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), "/refdel/a")
		},
		do: func() {
			if _, err := f.WriteFile(ctx, "a", []byte("theirs"), backend.WriteOptions{}); err != nil {
				t.Error(err)
			}
		}})
	if _, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeStale {
		t.Errorf("the move: %v, want STALE", err)
	}
	recovered(t, f, bucket, "refdel", 0, map[string]string{"a": "theirs", "x": ""})
}

// lostAt forwards the first request match accepts to the store, and
// answers it with an error: the request made, its answer lost.
type lostAt struct {
	match func(r *http.Request) bool
	once  sync.Once
}

func (l *lostAt) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	lost := false
	if err == nil && l.match(r) {
		l.once.Do(func() { lost = true })
	}
	if lost {
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

// TestLostAnswerAtTheCommitPoint: a transaction whose commit point (the
// journal's rewrite that says it committed) is made but answered with an
// error has succeeded: the journal holds its bytes. When the commit point
// was the journal's removal, such a transaction failed and was rolled
// back after its commit: another call could build on it meanwhile, its
// claims gone with the journal (a second move of the file moved, then the
// copy back: the file at two places).
func TestLostAnswerAtTheCommitPoint(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "lostcommit", map[string]string{"a": "data", "b": "old b"})
	if _, err := transportFS(t, root, &lostAt{match: commitPoint}).Rename(ctx, "a", "x", backend.WriteOptions{}); err != nil {
		t.Errorf("the move: %v", err)
	}
	_, err := transportFS(t, root, &lostAt{match: commitPoint}).Commit(ctx, []backend.Op{{Path: "b", Data: []byte("new b")}, {Path: "c", Data: []byte("c")}})
	if err != nil {
		t.Errorf("the transaction: %v", err)
	}
	recovered(t, f, bucket, "lostcommit", 0, map[string]string{"a": "", "x": "data", "b": "new b", "c": "c"})
}

// atSecondClaim holds the second claim of each of two moves until both
// reach it: each then holds its first claim.
type atSecondClaim struct {
	both *sync.WaitGroup
	mu   sync.Mutex
	seen int
}

func (a *atSecondClaim) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), "/.agentfs-journal/claims/") {
		a.mu.Lock()
		a.seen++
		second := a.seen == 2
		a.mu.Unlock()
		if second {
			a.both.Done()
			a.both.Wait()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestCrossedMoves: of a to b and b to a at once, each holding the claim
// of its source when it asks for the other's, one goes on. Both were
// STALE, and again on every retry while the store's answers took longer
// than the retries' pauses (LOCK_TIMEOUT through the CLI).
func TestCrossedMoves(t *testing.T) {
	ctx := context.Background()
	for round := range 4 {
		name := fmt.Sprintf("crossed-%d", round)
		f, bucket, root := seeded(t, name, map[string]string{"a": "A", "b": "B"})
		var both sync.WaitGroup
		both.Add(2)
		var errs [2]error
		var wg sync.WaitGroup
		for i, move := range [][2]string{{"a", "b"}, {"b", "a"}} {
			mover := transportFS(t, root, &atSecondClaim{both: &both})
			wg.Go(func() { _, errs[i] = mover.Rename(ctx, move[0], move[1], backend.WriteOptions{}) })
		}
		wg.Wait()
		got := tree(t, f, "a", "b")
		switch {
		case errs[0] != nil && errs[1] != nil:
			t.Errorf("%s: both moves failed: %v; %v", name, errs[0], errs[1])
		case errs[0] == nil && errs[1] == nil:
			t.Errorf("%s: both moves succeeded: %q", name, got)
		case errs[0] == nil && !maps.Equal(got, map[string]string{"a": "", "b": "A"}),
			errs[1] == nil && !maps.Equal(got, map[string]string{"a": "B", "b": ""}):
			t.Errorf("%s: after the moves (%v; %v): %q", name, errs[0], errs[1], got)
		}
		noJournal(t, bucket, name, "crossed moves")
	}
}

// TestClaimOfAJournalRewritten: a move that meets the claim of another,
// and reads that move's journal as it is rewritten (a renewal, a step of
// the move), reads it again: STALE, not IO_ERROR. The read, If-Match the
// version its HEAD saw, was refused and failed the move (14 of 20 crossed
// moves through a 25 ms proxy).
func TestClaimOfAJournalRewritten(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "rewritten", map[string]string{"src": "data"})
	hd := heldDelete("/rewritten/src")
	done := make(chan error, 1)
	go func() {
		_, err := transportFS(t, root, hd).Rename(ctx, "src", "dst", backend.WriteOptions{})
		done <- err
	}()
	<-hd.reached // the first move holds its claims
	rewrite := func() {
		editJournals(t, bucket, "rewritten", func(j string) string {
			return strings.Replace(j, `"lease":"-1m0s"`, `"lease":"15s"`, 1) + " "
		})
	}
	// The loser's first read of the journal is its recovery's; the
	// second, its claim's.
	var reads atomic.Int32
	loser := transportFS(t, root, &onFirst{do: rewrite, match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json") && reads.Add(1) == 2
	}})
	if _, err := loser.Rename(ctx, "src", "other", backend.WriteOptions{}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move beside a move whose journal is rewritten: %v, want STALE", err)
	}
	close(hd.release)
	if err := <-done; err != nil {
		t.Errorf("the first move: %v", err)
	}
	recovered(t, f, bucket, "rewritten", 0, map[string]string{"src": "", "dst": "data", "other": ""})
}

// held holds the first request that match accepts until release is
// closed, and tells when it reaches it.
type held struct {
	match            func(r *http.Request) bool
	reached, release chan struct{}
	once             sync.Once
}

func newHeld(match func(r *http.Request) bool) *held {
	return &held{match: match, reached: make(chan struct{}), release: make(chan struct{})}
}

// heldDelete holds the first DELETE of a key ending in suffix.
func heldDelete(suffix string) *held {
	return newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), suffix)
	})
}

// heldClaim holds the first PUT of a claim.
func heldClaim() *held {
	return newHeld(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), "/.agentfs-journal/claims/")
	})
}

func (h *held) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.match(r) {
		h.once.Do(func() {
			close(h.reached)
			<-h.release
		})
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestOneOfTwoMovesOfAFile: of two moves of one file at once, one moves
// it and the other is STALE. The first is held as it deletes the original
// it copied, while the second runs: versitygw answers a DELETE If-Match of
// a key already gone with 204, and both moves exited 0, leaving the file
// at both destinations.
func TestOneOfTwoMovesOfAFile(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "mvtwo", map[string]string{"src": "data"})
	h := heldDelete("/mvtwo/src")
	first := transportFS(t, root, h)
	done := make(chan error, 1)
	go func() {
		_, err := first.Rename(ctx, "src", "a", backend.WriteOptions{IfAbsent: true})
		done <- err
	}()
	select {
	case <-h.reached:
	case err := <-done:
		t.Fatalf("the first move ended before it deleted the original: %v", err)
	}
	_, secondErr := f.Rename(ctx, "src", "b", backend.WriteOptions{IfAbsent: true})
	close(h.release)
	firstErr := <-done
	if firstErr != nil || codeOf(secondErr) != fault.CodeStale {
		t.Errorf("two moves at once: the first returned %v, the second %v; want success and STALE", firstErr, secondErr)
	}
	if got := tree(t, f, "src", "a", "b"); !maps.Equal(got, map[string]string{"src": "", "a": "data", "b": ""}) {
		t.Errorf("after two moves at once: %q", got)
	}
	noJournal(t, bucket, "mvtwo", "two moves at once")
}

// onJournal runs do once, as the first journal is written.
type onJournal struct {
	once sync.Once
	do   func()
}

func (o *onJournal) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json") {
		o.once.Do(o.do)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestStaleClaimTakenOver: a claim whose journal is gone (its request
// landed after the journal's removal) does not stop a later move of the
// file, and a recovery removes it.
func TestStaleClaimTakenOver(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, recovery := range []bool{false, true} {
		prefix := fmt.Sprintf("stale-%v", recovery)
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		if _, err := f.WriteFile(ctx, "src", []byte("data"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		holder := []byte(prefix + "/.agentfs-journal/20260101T000000-gone.json")
		stale := func() {
			key := s3fs.ClaimKey(f, "src")
			if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(holder), int64(len(holder)), minio.PutObjectOptions{}); err != nil {
				t.Error(err)
			}
		}
		if recovery {
			stale()
			_, err = f.Recover(ctx)
		} else {
			// After the move's own recovery: the move meets it.
			mover := transportFS(t, root, &onJournal{do: stale})
			_, err = mover.Rename(ctx, "src", "dst", backend.WriteOptions{})
			if got := tree(t, f, "src", "dst"); !maps.Equal(got, map[string]string{"src": "", "dst": "data"}) {
				t.Errorf("a move past a stale claim left %q", got)
			}
		}
		if err != nil {
			t.Errorf("with a stale claim (recovery %v): %v", recovery, err)
		}
		noJournal(t, bucket, prefix, fmt.Sprintf("a stale claim (recovery %v)", recovery))
	}
}

// TestLoserKeepsTheWinnersMove: of two moves of one file to one
// destination, the one that loses undoes nothing of the other's, whether
// it asks for its claims while the other holds them (older, it waits for
// the other to end) or once the other has ended. The loser, held at its
// claim after it checked the destination absent, took the winner's copy
// for its own (same bytes, same ETag) and rolled it back: it deleted it
// (the file lost), or copied it back to the source.
func TestLoserKeepsTheWinnersMove(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, winnerEnded := range []bool{false, true} {
		prefix := fmt.Sprintf("loser-%v", winnerEnded)
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		if _, err := f.WriteFile(ctx, "src", []byte("data"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		hc := heldClaim()
		loser := transportFS(t, root, hc)
		hd := heldDelete("/" + prefix + "/src")
		winner := transportFS(t, root, hd)
		loserDone, winnerDone := make(chan error, 1), make(chan error, 1)
		go func() {
			_, err := loser.Rename(ctx, "src", "dst", backend.WriteOptions{IfAbsent: true})
			loserDone <- err
		}()
		<-hc.reached
		go func() {
			_, err := winner.Rename(ctx, "src", "dst", backend.WriteOptions{IfAbsent: true})
			winnerDone <- err
		}()
		<-hd.reached // the winner claimed and copied
		var loserErr, winnerErr error
		if winnerEnded {
			close(hd.release)
			winnerErr = <-winnerDone
			close(hc.release)
			loserErr = <-loserDone
		} else {
			close(hc.release)
			close(hd.release)
			winnerErr = <-winnerDone
			loserErr = <-loserDone
		}
		if winnerErr != nil || loserErr == nil {
			t.Errorf("winner ended first %v: the winner returned %v, the loser %v", winnerEnded, winnerErr, loserErr)
		}
		if got := tree(t, f, "src", "dst"); !maps.Equal(got, map[string]string{"src": "", "dst": "data"}) {
			t.Errorf("winner ended first %v: the tree is %q", winnerEnded, got)
		}
		noJournal(t, bucket, prefix, "two moves to one destination")
	}
}

// TestOneOfTwoMovesOfADirectory: of two moves of one directory at once,
// exactly one succeeds, for a directory of files and an empty one. Claimed
// all at once, each move took some claims and both were STALE (a third of
// the rounds); an empty directory's marker was not claimed, and both
// moves succeeded.
func TestOneOfTwoMovesOfADirectory(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, files := range []int{0, 4} {
		for round := range 12 {
			prefix := fmt.Sprintf("dirs-%d-%d", files, round)
			root := "s3://" + bucket + "/" + prefix
			f, _ := openFS(t, root)
			if _, err := f.WriteFile(ctx, "d/x", nil, backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Remove(ctx, "d/x", backend.RemoveOptions{}); err != nil {
				t.Fatal(err)
			}
			for i := range files {
				if _, err := f.WriteFile(ctx, fmt.Sprintf("d/f%d", i), []byte{byte(i)}, backend.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var errs [2]error
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range errs {
				mover := transportFS(t, root, nil)
				wg.Go(func() {
					<-start
					_, errs[i] = mover.Rename(ctx, "d", fmt.Sprintf("e%d", i), backend.WriteOptions{IfAbsent: true})
				})
			}
			close(start)
			wg.Wait()
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Errorf("%d files, round %d: the moves returned %v and %v; want one success", files, round, errs[0], errs[1])
			}
			noJournal(t, bucket, prefix, "two moves of a directory")
		}
	}
}

// TestTwoDirectoriesToOneDestination: of two moves of different
// directories to one destination, one moves its directory there and the
// other is refused, its directory left whole: at once, or one claiming
// only once the other has ended. Destinations were claimed file by file,
// and both succeeded, the two directories merged.
func TestTwoDirectoriesToOneDestination(t *testing.T) {
	ctx := context.Background()
	for _, late := range []bool{false, true} {
		for round := range 4 {
			name := fmt.Sprintf("twodirs-%v-%d", late, round)
			f, bucket, root := seeded(t, name, map[string]string{"a/1": "a1", "a/2": "a2", "b/3": "b3", "b/4": "b4"})
			var errs [2]error
			if late {
				// a's move listed x empty, and claims once b's has ended.
				c := heldClaim()
				first := transportFS(t, root, c)
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, errs[0] = first.Rename(ctx, "a", "x", backend.WriteOptions{})
				}()
				<-c.reached
				_, errs[1] = f.Rename(ctx, "b", "x", backend.WriteOptions{})
				close(c.release)
				<-done
			} else {
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, dir := range []string{"a", "b"} {
					mover := transportFS(t, root, nil)
					wg.Go(func() {
						<-start
						_, errs[i] = mover.Rename(ctx, dir, "x", backend.WriteOptions{})
					})
				}
				close(start)
				wg.Wait()
			}
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Errorf("%s: the moves returned %v and %v; want one success", name, errs[0], errs[1])
			}
			got := tree(t, f, "a/1", "a/2", "b/3", "b/4", "x/1", "x/2", "x/3", "x/4")
			moved := map[string]string{"a/1": "", "a/2": "", "b/3": "b3", "b/4": "b4", "x/1": "a1", "x/2": "a2", "x/3": "", "x/4": ""}
			if errs[0] != nil {
				moved = map[string]string{"a/1": "a1", "a/2": "a2", "b/3": "", "b/4": "", "x/1": "", "x/2": "", "x/3": "b3", "x/4": "b4"}
			}
			if !maps.Equal(got, moved) {
				t.Errorf("%s: after the moves: %q", name, got)
			}
			noJournal(t, bucket, name, "two directories moved to one destination")
		}
	}
}

// TestRecoverSkipsLiveClaims: a recovery while a move of many objects is
// in flight costs what it costs with none in flight but the move's
// journal: its claims are neither read (three requests a claim, on every
// call) nor listed (a page a thousand).
func TestRecoverSkipsLiveClaims(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	root := "s3://" + bucket + "/livecl"
	f, cnt := openFS(t, root)
	for i := range 300 {
		if _, err := f.WriteFile(ctx, fmt.Sprintf("d/f%03d", i), []byte{byte(i)}, backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h := heldDelete("/livecl/d/f000")
	mover := transportFS(t, root, h)
	done := make(chan error, 1)
	go func() {
		_, err := mover.Rename(ctx, "d", "e", backend.WriteOptions{})
		done <- err
	}()
	<-h.reached
	cnt.reset()
	rec, err := f.Recover(ctx)
	cnt.mu.Lock()
	requests := maps.Clone(cnt.requests)
	cnt.mu.Unlock()
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil || rec.Live != 1 {
		t.Fatalf("recovery during the move: %+v, %v", rec, err)
	}
	if n := requests["GET"] + requests["HEAD"]; n > 2 {
		t.Errorf("a recovery during a move of 300 files sent %v", requests)
	}
	noJournal(t, bucket, "livecl", "the move")
}

// lostAnswer forwards the PUTs (or requests of method) of keys ending in
// suffix to the store, and answers the one after the first after with an
// error: the change is made, its answer lost.
type lostAnswer struct {
	method string
	suffix string
	// after is how many such PUTs are answered first.
	after int
	// next carries the requests (the default transport when nil).
	next http.RoundTripper
	mu   sync.Mutex
	seen int
}

func (l *lostAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := cmp.Or(l.next, http.DefaultTransport).RoundTrip(r)
	if r.Method == cmp.Or(l.method, http.MethodPut) && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), l.suffix) {
		l.mu.Lock()
		l.seen++
		lost := l.seen == l.after+1
		l.mu.Unlock()
		if lost && err == nil {
			resp.Body.Close()
			return nil, errors.New("connection reset by peer")
		}
	}
	return resp, err
}

// TestMoveWithItsCopysAnswerLost: a move whose copy was made but answered
// with an error puts everything back: the destination as it was, or none.
// Undone as a copy never made, it left the copy (a second file) or, over a
// file, the copy and not the file it replaced (its bytes lost). A file
// stored in parts did so until the copies were marked: the store's copy
// has an ETag of its own, which the lost answer carried.
func TestMoveWithItsCopysAnswerLost(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, c := range []struct{ over, parts bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		prefix := fmt.Sprintf("lost-%v-%v", c.over, c.parts)
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		want := map[string]string{"src": "new", "dst": ""}
		if c.parts {
			want["src"] = string(partsData)
			inParts(t, bucket, prefix+"/pre", partsData)
		} else if _, err := f.WriteFile(ctx, "pre", []byte("new"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Moved once: the source carries the mark of that move, which
		// the next move's copy must not keep.
		if _, err := f.Rename(ctx, "pre", "src", backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if c.over {
			if _, err := f.WriteFile(ctx, "dst", []byte("old precious"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			want["dst"] = "old precious"
		}
		mover := transportFS(t, root, &lostAnswer{suffix: "/" + prefix + "/dst"})
		if _, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{}); err == nil {
			t.Errorf("%+v: the move succeeded with its copy's answer lost", c)
		}
		if got := tree(t, f, "src", "dst"); !maps.Equal(got, want) {
			t.Errorf("%+v: after the failed move: %s, want %s", c, brief(got), brief(want))
		}
		noJournal(t, bucket, prefix, "a move whose copy's answer was lost")
	}
}

// partsData is a file of 9 MiB, stored in parts by inParts.
var partsData = bytes.Repeat([]byte("0123456789abcdef"), 9<<16)

// inParts stores data at key of bucket as a multipart upload of 5 MiB
// parts, as tools store large files: its ETag is not the MD5 of its
// bytes, and a store's copy of it gets another.
func inParts(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.ETag, "-") {
		t.Fatalf("%s was not stored in parts: ETag %s", key, o.ETag)
	}
}

// brief is tree's answer with each file over 64 bytes as its size.
func brief(files map[string]string) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		data := files[p]
		if len(data) > 64 {
			data = fmt.Sprintf("(%d bytes)", len(data))
		}
		fmt.Fprintf(&b, "%s=%q ", p, data)
	}
	return b.String()
}

// TestDeadMoveOfAFileInParts: a move of a file stored in parts, killed as
// its copy was made, before it could record the copy's ETag, is rolled
// back as any other: the copy removed, the file it replaced put back.
// Told by its ETag, the store's copy was taken for another writer's file:
// it stayed beside the source, and the file it replaced was lost.
func TestDeadMoveOfAFileInParts(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	for _, over := range []bool{false, true} {
		prefix := fmt.Sprintf("deadparts-%v", over)
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		inParts(t, bucket, prefix+"/src", partsData)
		want := map[string]string{"src": string(partsData), "dst": ""}
		if over {
			if _, err := f.WriteFile(ctx, "dst", []byte("old precious"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			want["dst"] = "old precious"
		}
		mover := transportFS(t, root, diesAtAnswer("/"+prefix+"/dst"))
		if _, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{}); err == nil {
			t.Fatalf("over a file %v: the move that died at its copy succeeded", over)
		}
		recovered(t, f, bucket, prefix, 1, want)
	}
}

// diesAtAnswer is a process that dies as the answer comes to the first
// PUT whose path ends with suffix: that PUT is made.
func diesAtAnswer(suffix string) *dying {
	return &dying{sent: true, at: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), suffix)
	}}
}

// TestDeadMoveKeepsAWriteOfItsBytes: a file written at a dead move's
// destination before its rollback stays, even of the very bytes the move
// copied there. Told by its ETag, it was taken for the move's copy and
// deleted: the write lost.
func TestDeadMoveKeepsAWriteOfItsBytes(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "deadsame", map[string]string{"a": "same"})
	dead := transportFS(t, root, diesAtAnswer("/deadsame/x"))
	if _, err := dead.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move that died at its copy succeeded")
	}
	if _, err := f.WriteFile(ctx, "x", []byte("same"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	recovered(t, f, bucket, "deadsame", 1, map[string]string{"a": "same", "x": "same"})
}

// TestDeadLoserKeepsTheWinnersMove: a move killed before it held its
// claims, rolled back once its lease has run out, undoes nothing of the
// move that went on meanwhile to the same destination with the same
// bytes. Rolled back by ETag, it took that move's file for its copy and
// sent it back to the source.
func TestDeadLoserKeepsTheWinnersMove(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "deadloser", map[string]string{"src": "data"})
	loser := transportFS(t, root, diesAt("/.agentfs-journal/claims/"))
	if _, err := loser.Rename(ctx, "src", "dst", backend.WriteOptions{}); err == nil {
		t.Fatal("the move that died at its claim succeeded")
	}
	if _, err := f.Rename(ctx, "src", "dst", backend.WriteOptions{}); err != nil {
		t.Fatalf("the move beside a live journal: %v", err)
	}
	// The dead move's lease runs out.
	expireJournals(t, bucket, "deadloser")
	rec, err := f.Recover(ctx)
	if err != nil || rec.RolledBack != 1 {
		t.Fatalf("the recovery of the dead move: %+v, %v", rec, err)
	}
	if got := tree(t, f, "src", "dst"); !maps.Equal(got, map[string]string{"src": "", "dst": "data"}) {
		t.Errorf("after the dead move's recovery: %q", got)
	}
	noJournal(t, bucket, "deadloser", "a dead move's recovery")
}

// recovered ends a test of a dead transaction in the workspace name: the
// journals' leases run out, a recovery rolls back or finishes rolledBack of them (any
// number when negative), the files at want's paths hold want's content
// ("" for none), and nothing of the journals is left.
func recovered(t *testing.T, f *s3fs.FS, bucket, name string, rolledBack int, want map[string]string) {
	t.Helper()
	expireJournals(t, bucket, name)
	rec, err := f.Recover(context.Background())
	if err != nil || rolledBack >= 0 && rec.RolledBack+rec.Finished != rolledBack {
		t.Fatalf("%s: the recovery: %+v, %v; want %d rolled back", name, rec, err, rolledBack)
	}
	if got := tree(t, f, slices.Collect(maps.Keys(want))...); !maps.Equal(got, want) {
		t.Errorf("%s: after the recovery: %s, want %s", name, brief(got), brief(want))
	}
	noJournal(t, bucket, name, "the recovery")
}

// expireJournals rewrites the journals below prefix with a lease that has
// run out, as if their process had died long ago.
func expireJournals(t *testing.T, bucket, prefix string) {
	t.Helper()
	editJournals(t, bucket, prefix, func(j string) string { return j })
}

// editJournals rewrites the journals below prefix as edit makes them, with
// a lease that has run out.
func editJournals(t *testing.T, bucket, prefix string, edit func(string) string) {
	t.Helper()
	rewriteJournals(t, bucket, prefix, func(data []byte) []byte {
		return []byte(edit(strings.Replace(string(data), `"lease":"15s"`, `"lease":"-1m0s"`, 1)))
	})
}

// rewriteJournals rewrites each journal below prefix in bucket as
// rewrite makes it, behind agentfs's back.
func rewriteJournals(t *testing.T, bucket, prefix string, rewrite func([]byte) []byte) {
	t.Helper()
	c, journals := readJournals(t, bucket, prefix)
	for key, data := range journals {
		putObject(t, c, bucket, key, rewrite(data))
	}
}

// theirsAtDelete has f write "theirs" at d/b once, as mover's move is
// about to delete d/b: another writer's file where the move's source was.
func theirsAtDelete(t *testing.T, mover, f *s3fs.FS) {
	var once sync.Once
	s3fs.SetPaused(mover, func(phase, key string) {
		if phase == "delete" && strings.HasSuffix(key, "/d/b") {
			once.Do(func() {
				if _, err := f.WriteFile(context.Background(), "d/b", []byte("theirs"), backend.WriteOptions{}); err != nil {
					t.Error(err)
				}
			})
		}
	})
}

// readJournals is the content of each journal below prefix in bucket, by
// key, and the client that read them.
func readJournals(t *testing.T, bucket, prefix string) (*minio.Client, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	journals := map[string][]byte{}
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix + "/.agentfs-journal/"}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if !strings.HasSuffix(o.Key, ".json") {
			continue
		}
		r, err := c.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		journals[o.Key] = data
	}
	return c, journals
}

// putObject puts data at key in bucket, behind agentfs's back.
func putObject(t *testing.T, c *minio.Client, bucket, key string, data []byte) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDeadMoveKeepsAnotherFileOfItsBytes: while a move killed as it
// copied waits for its rollback, another move of a file of the same bytes
// to its destination is STALE, and succeeds once the rollback is done.
// Let through, it put its file there, and the rollback took that file for
// the dead move's copy and deleted it: the file lost.
func TestDeadMoveKeepsAnotherFileOfItsBytes(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	root := "s3://" + bucket + "/deadcopy"
	f, _ := openFS(t, root)
	for _, name := range []string{"a", "b"} {
		if _, err := f.WriteFile(ctx, name, []byte("same"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dead := transportFS(t, root, diesAt("/deadcopy/x"))
	if _, err := dead.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move that died at its copy succeeded")
	}
	if _, err := f.Rename(ctx, "b", "x", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move to the destination of a dead move: %v, want STALE", err)
	}
	expireJournals(t, bucket, "deadcopy")
	if rec, err := f.Recover(ctx); err != nil || rec.RolledBack != 1 {
		t.Fatalf("the recovery of the dead move: %+v, %v", rec, err)
	}
	if _, err := f.Rename(ctx, "b", "x", backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Errorf("the move once the dead one is rolled back: %v", err)
	}
	if got := tree(t, f, "a", "b", "x"); !maps.Equal(got, map[string]string{"a": "same", "b": "", "x": "same"}) {
		t.Errorf("after the moves: %q", got)
	}
	noJournal(t, bucket, "deadcopy", "a dead move and another to its destination")
}

// TestTwoLargeFilesToOneDestination: of two moves of different files of
// over 8 MiB to one destination at once, one succeeds and the other file
// stays. The store copies such a file and versitygw ignores the copy's
// conditions on its destination: both moves succeeded, one file lost
// (7 of 8 rounds). The destination is claimed too.
func TestTwoLargeFilesToOneDestination(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	big := func(b byte) []byte { return bytes.Repeat([]byte{b}, 9<<20) }
	for round := range 2 {
		prefix := fmt.Sprintf("twobig-%d", round)
		root := "s3://" + bucket + "/" + prefix
		f, _ := openFS(t, root)
		for _, name := range []string{"a", "b"} {
			if _, err := f.WriteFile(ctx, name, big(name[0]), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, name := range []string{"a", "b"} {
			mover := transportFS(t, root, nil)
			wg.Go(func() {
				<-start
				_, errs[i] = mover.Rename(ctx, name, "x", backend.WriteOptions{IfAbsent: true})
			})
		}
		close(start)
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Errorf("round %d: the moves returned %v and %v; want one success", round, errs[0], errs[1])
		}
		got := tree(t, f, "a", "b", "x")
		files := 0
		for _, data := range got {
			if data != "" {
				files++
			}
		}
		if files != 2 {
			t.Errorf("round %d: %d files left of 2", round, files)
		}
		noJournal(t, bucket, prefix, "two large moves to one destination")
	}
}

// claimsThenDies is a move held at its first claim until h is released,
// whose process dies as it sends its first request after the journal's
// rewrite that says it holds its claims.
func claimsThenDies(h *held) *dying {
	journals, recorded := 0, false
	return &dying{next: h, at: func(r *http.Request) bool {
		if recorded {
			return true
		}
		if r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json") {
			journals++
			recorded = journals == 2
		}
		return false
	}}
}

// TestLoserClaimingAfterTheWinnerEnded: a move that listed its file, then
// claimed it once another move of it had ended (its claims free again), is
// refused before it records its claims: killed then, its recovery undoes
// nothing of the other's. Not checked again, it recorded them, was
// killed, and its recovery sent the other's file back to the source.
func TestLoserClaimingAfterTheWinnerEnded(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "lateclaim", map[string]string{"src": "data"})
	c := heldClaim()
	loser := transportFS(t, root, claimsThenDies(c))
	done := make(chan error, 1)
	go func() {
		_, err := loser.Rename(ctx, "src", "dst", backend.WriteOptions{})
		done <- err
	}()
	<-c.reached
	if _, err := f.Rename(ctx, "src", "dst", backend.WriteOptions{}); err != nil {
		t.Fatalf("the winner: %v", err)
	}
	close(c.release)
	if err := <-done; err == nil {
		t.Error("the loser succeeded")
	}
	recovered(t, f, bucket, "lateclaim", -1, map[string]string{"src": "", "dst": "data"})
}

// TestDeadMoveKeepsItsDestinationAfterAWrite: a move to the destination
// of a dead move waits for its rollback even when a write put another
// file there meanwhile. Claimed by version, the destination was free to
// the second move once written, and the rollback then deleted its file
// (of the bytes the dead move copied).
func TestDeadMoveKeepsItsDestinationAfterAWrite(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	root := "s3://" + bucket + "/deadwrite"
	f, _ := openFS(t, root)
	for _, name := range []string{"a", "c"} {
		if _, err := f.WriteFile(ctx, name, []byte("same"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dead := transportFS(t, root, diesAt("/deadwrite/x"))
	if _, err := dead.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); err == nil {
		t.Fatal("the move that died at its copy succeeded")
	}
	if _, err := f.WriteFile(ctx, "x", []byte("other"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Rename(ctx, "c", "x", backend.WriteOptions{}); codeOf(err) != fault.CodeStale {
		t.Errorf("a move to the dead move's destination: %v, want STALE", err)
	}
	expireJournals(t, bucket, "deadwrite")
	if _, err := f.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Rename(ctx, "c", "x", backend.WriteOptions{}); err != nil {
		t.Fatalf("the move once the dead one is recovered: %v", err)
	}
	if got := tree(t, f, "a", "c", "x"); !maps.Equal(got, map[string]string{"a": "same", "c": "", "x": "same"}) {
		t.Errorf("after the moves: %q", got)
	}
	noJournal(t, bucket, "deadwrite", "a dead move, a write and a move")
}

// onFirst runs do, when set, before the first request that match
// accepts, and fails that request unsent when fail is set, and every
// later one match accepts when always is. It sends the others through
// next (the default transport when nil).
type onFirst struct {
	match        func(r *http.Request) bool
	do           func()
	fail, always bool
	next         http.RoundTripper
	once         sync.Once
}

func (o *onFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	first := false
	if o.match(r) {
		o.once.Do(func() {
			first = true
			if o.do != nil {
				o.do()
			}
		})
		first = first || o.always
	}
	if first && o.fail {
		return nil, errors.New("connection reset by peer")
	}
	return cmp.Or(o.next, http.DefaultTransport).RoundTrip(r)
}

// failsClaimRelease fails the first DELETE of a claim, unsent.
func failsClaimRelease() *onFirst {
	return &onFirst{fail: true, match: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.Contains(cmp.Or(r.URL.Opaque, r.URL.Path), "/.agentfs-journal/claims/")
	}}
}

// TestMoveDoneWhateverItsHousekeeping: a move whose journal is removed
// (its commit point) has succeeded, whatever befalls the removal of its
// claims after; the claim left is removed by a later call. It returned
// IO_ERROR and was undone after its commit, the file it replaced lost.
func TestMoveDoneWhateverItsHousekeeping(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	root := "s3://" + bucket + "/housekeeping"
	f, _ := openFS(t, root)
	for name, data := range map[string]string{"src": "data", "dst": "old"} {
		if _, err := f.WriteFile(ctx, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mover := transportFS(t, root, failsClaimRelease())
	if _, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{}); err != nil {
		t.Errorf("a move past its commit point: %v", err)
	}
	if got := tree(t, f, "src", "dst"); !maps.Equal(got, map[string]string{"src": "", "dst": "data"}) {
		t.Errorf("after the move: %q", got)
	}
	if _, err := f.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	noJournal(t, bucket, "housekeeping", "a move whose claim's removal failed")
}

// seeded is a workspace of its own below the test bucket's prefix name,
// holding files (path: content), with the bucket and the workspace's root.
func seeded(t *testing.T, name string, files map[string]string) (*s3fs.FS, string, string) {
	t.Helper()
	bucket := s3test.Bucket(t)
	root := "s3://" + bucket + "/" + name
	f, _ := openFS(t, root)
	for p, data := range files {
		if _, err := f.WriteFile(context.Background(), p, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return f, bucket, root
}

// TestPausedMoverLosesNothing: a directory's move paused past its lease
// between a lease check and the copy or deletion it lets through (SIGSTOP,
// a frozen VM), and recovered meanwhile by another call, loses no file
// when it resumes and sends its requests late. Paused as it deleted its
// sources, it was rolled back: the sources put back at their ETags, the
// copies removed; its late DELETEs If-Match then removed the sources, and
// the files were nowhere. Now a move that may have begun deleting is
// finished by the recovery, and a late deletion repeats it. Another
// writer's change meanwhile stays: a source changed is kept beside its
// copy, and a copy removed is the writer's removal.
func TestPausedMoverLosesNothing(t *testing.T) {
	ctx := context.Background()
	const n = 20
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d/f%02d", i)] = fmt.Sprintf("data %02d", i)
	}
	for _, tc := range []struct {
		name, phase string
		// meddle is another writer's change while the mover is paused.
		meddle bool
	}{
		{"pausedcopy", "copy", false},
		{"pauseddelete", "delete", false},
		{"pausedmeddled", "delete", true},
	} {
		f, bucket, root := seeded(t, tc.name, files)
		mover := transportFS(t, root, nil)
		// Its lease is over as soon as written, and never renewed: the
		// recovery takes it for a dead one's at once, and the mover sends
		// every request it lets through late.
		s3fs.SetLease(mover, -time.Minute)
		var once sync.Once
		s3fs.SetPaused(mover, func(phase, _ string) {
			if phase != tc.phase {
				return
			}
			// The first to pause blocks the others until the recovery
			// is done: no request of the phase is sent before it.
			once.Do(func() {
				if tc.meddle {
					if _, err := f.WriteFile(ctx, "d/f03", []byte("theirs"), backend.WriteOptions{}); err != nil {
						t.Error(err)
					}
					if _, err := f.Remove(ctx, "e/f05", backend.RemoveOptions{}); err != nil {
						t.Error(err)
					}
				}
				want := s3fs.Recovery{RolledBack: 1}
				if tc.phase == "delete" {
					want = s3fs.Recovery{Finished: 1}
				}
				if rec, err := f.Recover(ctx); err != nil || rec != want {
					t.Errorf("%s: the recovery while the mover is paused: %+v, %v; want %+v", tc.name, rec, err, want)
				}
			})
		})
		_, err := mover.Rename(ctx, "d", "e", backend.WriteOptions{})
		if codeOf(err) != fault.CodeIOError {
			t.Errorf("%s: the move recovered under it: %v, want IO_ERROR", tc.name, err)
		}
		if tc.phase == "delete" && err != nil && strings.Contains(err.Error(), "roll") {
			t.Errorf("%s: the move, finished by the recovery, says: %v", tc.name, err)
		}
		if _, err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for p := range files {
			paths = append(paths, p, "e"+p[1:])
		}
		got := tree(t, f, paths...)
		for p, data := range files {
			src, dst := got[p], got["e"+p[1:]]
			switch {
			case tc.meddle && p == "d/f03":
				if src != "theirs" || dst != data {
					t.Errorf("%s: the source another writer changed: %q, its copy %q", tc.name, src, dst)
				}
			case tc.meddle && p == "d/f05":
				if src != "" && src != data || dst != "" {
					t.Errorf("%s: the file whose copy another writer removed: %q at the source, %q at the copy", tc.name, src, dst)
				}
			case tc.phase == "copy" && (src != data || dst != "" && dst != data):
				t.Errorf("%s: %s: %q, its copy %q; want it kept, doubled at most", tc.name, p, src, dst)
			case tc.phase == "delete" && (src != "" || dst != data):
				t.Errorf("%s: %s: %q, its copy %q; want the move finished", tc.name, p, src, dst)
			}
		}
		noJournal(t, bucket, tc.name, "a paused move")
	}
}

// TestMoveUndoneAfterItsDeletionsBegan: a move whose deletion of a source
// is refused (another writer changed it) undoes itself, and its journal
// says so first: a recovery that takes it over then, its committer dead
// or paused, undoes it too, rather than finish it while its committer
// puts the sources back. When that rewrite is not made, the journal still
// says its deletions began, and a recovery finishes the move: the mover
// answered STALE, "nothing was moved", and the recovery moved the files.
// Either way the mover cannot tell, and says so.
func TestMoveUndoneAfterItsDeletionsBegan(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// written is whether the rewrite that says the move undoes
		// itself is made (its answer lost) or never sent.
		written bool
		want    map[string]string
	}{
		{"undoing", true, map[string]string{"d/a": "a", "d/b": "theirs", "e/a": "", "e/b": "b"}},
		{"undecided", false, map[string]string{"d/a": "", "d/b": "theirs", "e/a": "a", "e/b": "b"}},
	} {
		f, bucket, root := seeded(t, tc.name, map[string]string{"d/a": "a", "d/b": "b"})
		mover := transportFS(t, root, &dying{sent: tc.written, at: func(r *http.Request) bool {
			return journalSays(r, `"undoing":true`)
		}})
		theirsAtDelete(t, mover, f)
		_, err := mover.Rename(ctx, "d", "e", backend.WriteOptions{})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "--recover") {
			t.Errorf("%s: the move left to a recovery: %v, want IO_ERROR pointing at --recover", tc.name, err)
		}
		// Undone, b's copy stays: the recovery cannot tell the writer's b
		// from one put after the move deleted the original (see
		// rollBackMove).
		recovered(t, f, bucket, tc.name, 1, tc.want)
	}
}

// journalSays reports whether r writes a journal that holds text.
func journalSays(r *http.Request, text string) bool {
	if r.Method != http.MethodPut || !strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), ".json") || r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	data, _ := io.ReadAll(body)
	return strings.Contains(string(data), text)
}

// TestMoveLosesToARemovalOfItsSource: a source another writer removes
// after the move copied it and before the move deletes it is a lost race
// (STALE), and the removal stands. A store answers a DELETE If-Match of a
// key already gone with success (versitygw does): the move took the
// removal for its own and reported the file moved, while the rm reported
// it removed; a move undone later (another source's deletion refused) put
// the removed file back from its copy.
func TestMoveLosesToARemovalOfItsSource(t *testing.T) {
	ctx := context.Background()
	f, bucket, root := seeded(t, "rmsource", map[string]string{"a": "original"})
	mover := transportFS(t, root, nil)
	var once sync.Once
	s3fs.SetPaused(mover, func(phase, _ string) {
		if phase == "delete" {
			once.Do(func() {
				if removed, err := f.Remove(ctx, "a", backend.RemoveOptions{}); !removed || err != nil {
					t.Errorf("the removal of the source: %v, %v", removed, err)
				}
			})
		}
	})
	if _, err := mover.Rename(ctx, "a", "x", backend.WriteOptions{IfAbsent: true}); codeOf(err) != fault.CodeStale {
		t.Errorf("the move of a source removed under it: %v, want STALE", err)
	}
	recovered(t, f, bucket, "rmsource", 0, map[string]string{"a": "", "x": ""})
}

// Two removals at once of a directory's two entries: each listed the
// directory before its removal and saw the other's entry, so neither put
// its marker, and the directory vanished (5 of 30 runs racing). The
// second removal here runs between the first's listing and its deletion.
func TestConcurrentRemovalsKeepTheDirectory(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "rmrm", map[string]string{"d/sub/a.txt": "a", "d/sub/b.txt": "b"})
	var otherErr error
	listing := func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Has("list-type") }
	rm := transportFS(t, root, &afterRequest{match: listing, do: func() {
		_, otherErr = f.Remove(ctx, "d/sub/b.txt", backend.RemoveOptions{})
	}})
	if deleted, err := rm.Remove(ctx, "d/sub/a.txt", backend.RemoveOptions{}); !deleted || err != nil || otherErr != nil {
		t.Fatalf("rm a: %v, %v; rm b: %v; want both removed", deleted, err, otherErr)
	}
	for _, dir := range []string{"d/sub", "d"} {
		if fi, err := f.Stat(ctx, dir); err != nil || fi.Type != backend.TypeDir {
			t.Errorf("%s is %+v, %v; want a directory", dir, fi, err)
		}
	}
}

// downFrom fails every request from the first that match matches on, as
// a store that went down there.
type downFrom struct {
	match func(r *http.Request) bool
	down  atomic.Bool
}

func (d *downFrom) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.match(r) {
		d.down.Store(true)
	}
	if d.down.Load() {
		return nil, errors.New("connection refused")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A move whose store goes down once it has committed (from its journal's
// removal on) is made: its error must say so, not "retry", since a
// retry is NOT_FOUND, and a caller who believed the move undone would
// make it again elsewhere.
func TestMoveCommittedThenStoreDownSaysItWasMade(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "moveddown", map[string]string{"src/a": "a"})
	_, err := transportFS(t, root, &downFrom{match: journalRemoval}).Rename(ctx, "src/a", "dst/a", backend.WriteOptions{})
	e := fault.AsError(err)
	if e == nil || !strings.Contains(e.Message, "src/a was moved to dst/a") || !strings.Contains(e.Hint, "do not redo") {
		t.Fatalf("a committed move, the store down after: %v, want an error saying the move was made", err)
	}
	if _, err := f.Stat(ctx, "dst/a"); err != nil {
		t.Errorf("dst/a: %v, want the move made", err)
	}
}

// leavesUploads is a store whose copies by parts (UploadPartCopy) to the
// keys that end in one of copyRefused are refused, and so are the aborts
// of the uploads to keys that end in one of abortRefused: uploads left.
// With after set, those aborts wait for the check (a listing of its
// parts) that the upload to the key ending in after is gone: a failure
// that left nothing comes first. With headRefused, once an abort is
// refused, so are the HEADs of its key: the move's rollback fails. With
// together, no part copy is refused before one to each of copyRefused has
// come: every copy is under way, and leaves its upload (the first failure
// stops the copies not yet started).
type leavesUploads struct {
	copyRefused, abortRefused []string
	after                     string
	checked                   chan struct{}
	headRefused               bool
	aborted                   atomic.Bool
	together                  bool
	mu                        sync.Mutex
	copying                   map[string]bool
	allCopying                chan struct{}
}

// partCopyCame notes a part copy to the key ending in suffix, and waits,
// with together set, until one to each of copyRefused has come.
func (s *leavesUploads) partCopyCame(suffix string) {
	if !s.together {
		return
	}
	s.mu.Lock()
	if s.copying == nil {
		s.copying, s.allCopying = map[string]bool{}, make(chan struct{})
	}
	all := s.allCopying
	if !s.copying[suffix] {
		s.copying[suffix] = true
		if len(s.copying) == len(s.copyRefused) {
			close(all)
		}
	}
	s.mu.Unlock()
	<-all
}

func (s *leavesUploads) RoundTrip(r *http.Request) (*http.Response, error) {
	p, q := cmp.Or(r.URL.Opaque, r.URL.Path), r.URL.Query()
	ends := func(suffixes ...string) bool {
		return slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(p, s) })
	}
	refused := &refusing{refuse: func(*http.Request) bool { return true }}
	switch {
	case r.Method == http.MethodPut && q.Has("partNumber") && ends(s.copyRefused...):
		s.partCopyCame(s.copyRefused[slices.IndexFunc(s.copyRefused, func(x string) bool { return strings.HasSuffix(p, x) })])
		return refused.RoundTrip(r)
	case r.Method == http.MethodDelete && q.Has("uploadId") && ends(s.abortRefused...):
		if s.after != "" {
			<-s.checked
		}
		s.aborted.Store(true)
		return refused.RoundTrip(r)
	case r.Method == http.MethodHead && s.headRefused && s.aborted.Load() && ends(s.abortRefused...):
		return refused.RoundTrip(r)
	case r.Method == http.MethodGet && q.Has("uploadId") && s.after != "" && ends(s.after):
		defer close(s.checked)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A move whose copy by parts failed and whose upload could not be aborted
// says so: the upload's id, the path it was for, and the command that
// aborts it, with the store's key; so it does when another copy of the
// move failed first. The first failure of a directory's copies was the
// move's answer, and the upload another one left went unsaid; one copy's
// said it in passing, by its key, with the hint to check the credentials.
func TestMoveSaysWhichUploadsItLeft(t *testing.T) {
	big := strings.Repeat("x", 8<<20+1) // above copyThrough: copied by parts
	for _, tc := range []struct {
		name     string
		files    map[string]string
		from, to string
		store    *leavesUploads
		left     []string // the paths of the uploads left
	}{
		{"one file", map[string]string{"big": big}, "big", "moved",
			&leavesUploads{copyRefused: []string{"/moved"}, abortRefused: []string{"/moved"}}, []string{"moved"}},
		{"two copies", map[string]string{"d/a": big, "d/b": big, "d/c": "small"}, "d", "e",
			&leavesUploads{copyRefused: []string{"/e/a", "/e/b"}, abortRefused: []string{"/e/a", "/e/b"}, together: true}, []string{"e/a", "e/b"}},
		{"after another copy's failure", map[string]string{"d/a": big, "d/b": big, "d/c": "small"}, "d", "e",
			&leavesUploads{copyRefused: []string{"/e/a", "/e/b"}, abortRefused: []string{"/e/b"}, after: "/e/a", checked: make(chan struct{})}, []string{"e/b"}},
		{"and its rollback refused", map[string]string{"big": big}, "big", "moved",
			&leavesUploads{copyRefused: []string{"/moved"}, abortRefused: []string{"/moved"}, headRefused: true}, []string{"moved"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f, bucket, root := seeded(t, "left", tc.files)
			_, err := transportFS(t, root, tc.store).Rename(ctx, tc.from, tc.to, backend.WriteOptions{})
			e := fault.AsError(err)
			if e == nil || e.Code != fault.CodeIOError {
				t.Fatalf("the move whose upload is left: %v, want IO_ERROR", err)
			}
			c, err := s3test.Client(s3test.Endpoint(t))
			if err != nil {
				t.Fatal(err)
			}
			uploads, _ := e.Details["uploads"].([]map[string]string)
			for _, p := range tc.left {
				key := "left/" + p
				var id string
				for u := range c.ListIncompleteUploads(ctx, bucket, key, false) {
					if u.Err != nil {
						t.Fatal(u.Err)
					}
					if u.Key == key {
						id = u.UploadID
					}
				}
				if id == "" {
					t.Fatalf("no upload left at %s", key)
				}
				abort := fmt.Sprintf("aws s3api abort-multipart-upload --bucket '%s' --key '%s' --upload-id '%s'", bucket, key, id)
				if !strings.Contains(e.Message, id+" of "+p) || strings.Contains(e.Message, key) || !strings.Contains(e.Hint, abort) {
					t.Errorf("the move that left the upload %s of %s: %s (hint %q), want its id and path said, the hint %q", id, p, e.Message, e.Hint, abort)
				}
				if !slices.ContainsFunc(uploads, func(u map[string]string) bool { return maps.Equal(u, map[string]string{"key": key, "uploadId": id}) }) {
					t.Errorf("details.uploads %v, want key %s, upload %s", uploads, key, id)
				}
				if err := c.RemoveIncompleteUpload(ctx, bucket, key); err != nil {
					t.Fatal(err)
				}
			}
			if len(uploads) != len(tc.left) {
				t.Errorf("details.uploads %v, want %d", uploads, len(tc.left))
			}
			if tc.store.headRefused {
				recovered(t, f, bucket, "left", 1, tc.files)
				return
			}
			for p, data := range tc.files {
				if got := tree(t, f, p)[p]; got != data {
					t.Errorf("%s after the move that failed: %d bytes, want %d", p, len(got), len(data))
				}
			}
			noJournal(t, bucket, "left", "the move that failed")
		})
	}
}

// An error that left uploads names the first few, by id and path, with
// the commands that abort them (the key quoted for a shell), counts the
// rest, and lists them all in details.uploads; one that said some already
// says them with the others, its own words once. An interrupt's is no
// interrupt: the CLI would answer that nothing was left half-done.
func TestUploadsLeftSaid(t *testing.T) {
	f, err := s3fs.New(s3fs.Config{Root: "s3://b/ws", Endpoint: "http://127.0.0.1:1", AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	left := func(name string) *s3client.LeftError {
		return &s3client.LeftError{Err: context.Canceled, Abort: errors.New("Access Denied."), Bucket: "b", Key: "ws/" + name, UploadID: "u-" + name}
	}
	stale := fault.Errorf(fault.CodeStale, "the file changed.").WithPath("d/a").WithHint("list it again")
	const abort = "aws s3api abort-multipart-upload --bucket 'b' --key 'ws/%s' --upload-id 'u-%[1]s'"
	const then = " (add --endpoint-url for a store other than AWS); then list it again"
	for _, tc := range []struct {
		name    string
		err     error
		lefts   []string
		message string
		hint    string
		uploads []string // the keys of details.uploads, below ws/
	}{
		{"one", stale, []string{"x"},
			"the file changed; and the upload u-x of x is left in the bucket with its parts: its abort failed (Access Denied).",
			"remove the parts with: " + fmt.Sprintf(abort, "x") + then, []string{"x"}},
		{"a quote in the key", stale, []string{"it's"},
			"the file changed; and the upload u-it's of it's is left in the bucket with its parts: its abort failed (Access Denied).",
			"remove the parts with: " + fmt.Sprintf(abort, `it'\''s`) + then, []string{"it's"}},
		{"in key order", stale, []string{"y", "x"},
			"the file changed; and 2 uploads are left in the bucket with their parts, their aborts failed: u-x of x (Access Denied), u-y of y (Access Denied).",
			"remove the parts with: " + fmt.Sprintf(abort, "x") + " && " + fmt.Sprintf(abort, "y") + then, []string{"x", "y"}},
		{"more than three", stale, []string{"a", "b", "c", "d", "e"},
			"the file changed; and 5 uploads are left in the bucket with their parts, their aborts failed: u-a of a (Access Denied), u-b of b (Access Denied), u-c of c (Access Denied) and 2 more.",
			"remove the parts with: " + fmt.Sprintf(abort, "a") + " && " + fmt.Sprintf(abort, "b") + " && " + fmt.Sprintf(abort, "c") + ", and so on for the 2 more of details.uploads" + then,
			[]string{"a", "b", "c", "d", "e"}},
		{"said already", s3fs.UploadsLeft(f, stale, []*s3client.LeftError{left("x")}), []string{"y"},
			"the file changed; and 2 uploads are left in the bucket with their parts, their aborts failed: u-x of x (Access Denied), u-y of y (Access Denied).",
			"remove the parts with: " + fmt.Sprintf(abort, "x") + " && " + fmt.Sprintf(abort, "y") + then, []string{"x", "y"}},
		{"an interrupt's", fmt.Errorf("copy: %w", context.Canceled), []string{"x"},
			"copy: context canceled; and the upload u-x of x is left in the bucket with its parts: its abort failed (Access Denied).",
			"remove the parts with: " + fmt.Sprintf(abort, "x") + " (add --endpoint-url for a store other than AWS); then retry; if it persists, check the file system", []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lefts []*s3client.LeftError
			for _, name := range tc.lefts {
				lefts = append(lefts, left(name))
			}
			err := s3fs.UploadsLeft(f, tc.err, lefts)
			e := fault.AsError(err)
			if e.Code != fault.CodeIOError || e.Message != tc.message || e.Hint != tc.hint || e.Path != fault.AsError(tc.err).Path {
				t.Errorf("got %s %q (path %q)\nhint %q\nwant IO_ERROR %q\nhint %q", e.Code, e.Message, e.Path, e.Hint, tc.message, tc.hint)
			}
			uploads, _ := e.Details["uploads"].([]map[string]string)
			var keys []string
			for _, u := range uploads {
				if u["uploadId"] == "u-"+strings.TrimPrefix(u["key"], "ws/") {
					keys = append(keys, strings.TrimPrefix(u["key"], "ws/"))
				}
			}
			if !slices.Equal(keys, tc.uploads) {
				t.Errorf("details.uploads %v, want the keys %q with their ids", uploads, tc.uploads)
			}
			if errors.Is(err, context.Canceled) {
				t.Error("the error wraps an interrupt")
			}
		})
	}
}

// completionRefused answers 412 to the completion of the uploads to keys
// ending in suffix, as a store does once a file was put there, and 403 to
// their aborts.
type completionRefused struct{ suffix string }

func (s completionRefused) RoundTrip(r *http.Request) (*http.Response, error) {
	p, q := cmp.Or(r.URL.Opaque, r.URL.Path), r.URL.Query()
	if !q.Has("uploadId") || !strings.HasSuffix(p, s.suffix) {
		return http.DefaultTransport.RoundTrip(r)
	}
	switch r.Method {
	case http.MethodPost:
		if r.Body != nil {
			r.Body.Close()
		}
		return s3Answer(r, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold."), nil
	case http.MethodDelete:
		return (&refusing{refuse: func(*http.Request) bool { return true }}).RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A copy by parts whose completion the store refuses (a file put at the
// destination) and whose abort fails says the upload it left: the
// refusal, said as EXISTS or STALE in other words, did not.
func TestMoveRefusedSaysTheUploadItLeft(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("x", 8<<20+1)
	f, bucket, root := seeded(t, "refusedleft", map[string]string{"big": big})
	_, err := transportFS(t, root, completionRefused{"/moved"}).Rename(ctx, "big", "moved", backend.WriteOptions{})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeIOError {
		t.Fatalf("the move whose completion was refused, its upload left: %v, want IO_ERROR", err)
	}
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for u := range c.ListIncompleteUploads(ctx, bucket, "refusedleft/moved", false) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		ids = append(ids, u.UploadID)
	}
	if len(ids) != 1 {
		t.Fatalf("uploads left: %q, want 1", ids)
	}
	uploads, _ := e.Details["uploads"].([]map[string]string)
	if !strings.Contains(e.Message, ids[0]+" of moved") || !strings.Contains(e.Hint, "--upload-id '"+ids[0]+"'") || len(uploads) != 1 {
		t.Errorf("the move that left the upload %s: %s (hint %q, details.uploads %v), want it said", ids[0], e.Message, e.Hint, uploads)
	}
	if err := c.RemoveIncompleteUpload(ctx, bucket, "refusedleft/moved"); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, f, "big", "moved"); got["big"] != big || got["moved"] != "" {
		t.Errorf("after the move refused: big %d bytes, moved %d, want big as it was", len(got["big"]), len(got["moved"]))
	}
	noJournal(t, bucket, "refusedleft", "the move refused")
}

// onPut runs do once, as the first PUT of a key ending in suffix is sent.
type onPut struct {
	suffix string
	once   sync.Once
	do     func()
}

func (o *onPut) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(cmp.Or(r.URL.Opaque, r.URL.Path), o.suffix) {
		o.once.Do(o.do)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestASourceChangedDuringItsCopy: a source another writer changes or
// removes while the move copies it (its bytes read, their PUT on its way)
// stays as that writer left it, the copy goes, and the move is STALE,
// nothing moved: the HEAD before its deletion finds it so, and the move
// undoes itself (a HEAD right after the copy asked it first).
func TestASourceChangedDuringItsCopy(t *testing.T) {
	ctx := context.Background()
	for _, removed := range []bool{false, true} {
		name := fmt.Sprintf("mvchanged-%v", removed)
		f, bucket, root := seeded(t, name, map[string]string{"src": "data"})
		mover := transportFS(t, root, &onPut{suffix: "/" + name + "/dst", do: func() {
			var err error
			if removed {
				_, err = f.Remove(ctx, "src", backend.RemoveOptions{})
			} else {
				_, err = f.WriteFile(ctx, "src", []byte("changed"), backend.WriteOptions{})
			}
			if err != nil {
				t.Error(err)
			}
		}})
		_, err := mover.Rename(ctx, "src", "dst", backend.WriteOptions{IfAbsent: true})
		if codeOf(err) != fault.CodeStale {
			t.Errorf("removed %v: the move returned %v, want STALE", removed, err)
		}
		want := map[string]string{"src": "changed", "dst": ""}
		if removed {
			want["src"] = ""
		}
		if got := tree(t, f, "src", "dst"); !maps.Equal(got, want) {
			t.Errorf("removed %v: after the move: %q, want %q", removed, got, want)
		}
		noJournal(t, bucket, name, "the move")
	}
}
