package s3fs_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
	miniotags "github.com/minio/minio-go/v7/pkg/tags"
)

// changes are the ways a call replaces an object with a PUT: a write at
// the version a HEAD (Stat) or a GET (a read) told, one with no version
// (an agent's write over a file it did not read), and a transaction's
// (an edit, a replace or a patch of several files).
var changes = []struct {
	name   string
	change func(ctx context.Context, f *s3fs.FS, p string) error
}{
	{"write at a version stated", func(ctx context.Context, f *s3fs.FS, p string) error {
		fi, err := f.Stat(ctx, p)
		if err != nil {
			return err
		}
		_, err = f.WriteFile(ctx, p, []byte("bye\n"), backend.WriteOptions{IfVersion: fi.Version})
		return err
	}},
	{"write at a version read", func(ctx context.Context, f *s3fs.FS, p string) error {
		r, err := f.Open(ctx, p)
		if err != nil {
			return err
		}
		defer r.Close()
		if _, err := io.ReadAll(r); err != nil {
			return err
		}
		_, err = f.WriteFile(ctx, p, []byte("bye\n"), backend.WriteOptions{IfVersion: r.Info().Version})
		return err
	}},
	{"write with no version", func(ctx context.Context, f *s3fs.FS, p string) error {
		_, err := f.WriteFile(ctx, p, []byte("bye\n"), backend.WriteOptions{})
		return err
	}},
	{"transaction", func(ctx context.Context, f *s3fs.FS, p string) error {
		fi, err := f.Stat(ctx, p)
		if err != nil {
			return err
		}
		_, err = f.Commit(ctx, []backend.Op{{Path: p, Data: []byte("bye\n"), Write: backend.WriteOptions{IfVersion: fi.Version}}})
		return err
	}},
}

// TestWriteKeepsTheObjectsTags: a write or a transaction over an object
// with tags (lifecycle or cost-allocation rules go by them) keeps them,
// where its PUT dropped them; reading them is one request, sent only for
// an object that has some (x-amz-tagging-count), so that a write over
// one with none sends what it sent before.
func TestWriteKeepsTheObjectsTags(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	want := map[string]string{"team": "red", "cost center": "a+b/c=d:e@f"}
	for _, tc := range changes {
		for _, tagged := range []bool{true, false} {
			name := tc.name + map[bool]string{true: " tagged", false: " untagged"}[tagged]
			t.Run(name, func(t *testing.T) {
				p := strings.ReplaceAll(name, " ", "-") + ".txt"
				opts := minio.PutObjectOptions{}
				if tagged {
					opts.UserTags = want
				}
				if _, err := c.PutObject(ctx, bucket, "ws/"+p, strings.NewReader("hi\n"), 3, opts); err != nil {
					t.Fatal(err)
				}
				cnt.reset()
				if err := tc.change(ctx, f, p); err != nil {
					t.Fatal(err)
				}
				reads := 0
				for k, n := range cnt.asked {
					if strings.Contains(k, "?tagging") {
						reads += n
					}
				}
				got, err := c.GetObjectTagging(ctx, bucket, "ws/"+p, minio.GetObjectTaggingOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !tagged {
					want := map[string]string{}
					if !maps.Equal(got.ToMap(), want) || reads != 0 {
						t.Errorf("tags %v after the change, read with %d requests; want none, no request", got.ToMap(), reads)
					}
					return
				}
				if !maps.Equal(got.ToMap(), want) || reads != 1 {
					t.Errorf("tags %v after the change, read with %d requests; want %v, one request", got.ToMap(), reads, want)
				}
			})
		}
	}
}

// TestWriteKeepsTagsPutAfterItsRead: tags put on an object after this
// process read it (PutObjectTagging, which leaves the ETag as it was) are
// kept by a write at that version made a while later, as in a long MCP
// session, where the write went by the tag count the read told (none)
// and dropped them; a write at once after the read sends no HEAD more.
func TestWriteKeepsTagsPutAfterItsRead(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	for _, later := range []bool{true, false} {
		p := map[bool]string{true: "later.txt", false: "at-once.txt"}[later]
		t.Run(p, func(t *testing.T) {
			if _, err := c.PutObject(ctx, bucket, "ws/"+p, strings.NewReader("hi\n"), 3, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			fi, err := f.Stat(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			tags, err := miniotags.NewTags(map[string]string{"team": "red"}, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.PutObjectTagging(ctx, bucket, "ws/"+p, tags, minio.PutObjectTaggingOptions{}); err != nil {
				t.Fatal(err)
			}
			if later {
				s3fs.AgeSeen(f, 2*time.Minute)
			}
			cnt.reset()
			if _, err := f.WriteFile(ctx, p, []byte("bye\n"), backend.WriteOptions{IfVersion: fi.Version}); err != nil {
				t.Fatal(err)
			}
			got, err := c.GetObjectTagging(ctx, bucket, "ws/"+p, minio.GetObjectTaggingOptions{})
			if err != nil {
				t.Fatal(err)
			}
			heads := 0
			for k, n := range cnt.asked {
				if strings.HasPrefix(k, "HEAD /"+bucket+"/ws/"+p+"?") {
					heads += n
				}
			}
			switch {
			case later && (got.ToMap()["team"] != "red" || heads != 1):
				t.Errorf("tags %v after a write two minutes after the read, with %d HEADs; want team=red, one HEAD", got.ToMap(), heads)
			case !later && heads != 0:
				t.Errorf("%d HEADs for a write at once after the read; want none", heads)
			}
		})
	}
}

// storedAs is a transport to the test's store that answers a HEAD or a
// GET of the object at key with the headers stored as well, as a store
// that keeps them (AWS) does where versitygw 1.8 takes them and answers
// STANDARD and no encryption, and records the headers of each PUT of it.
// A request of it, or a copy from it, that answer answers (not nil) goes
// no further.
type storedAs struct {
	key    string // the request's path: /BUCKET/KEY
	stored http.Header
	answer func(r *http.Request) *http.Response
	mu     sync.Mutex
	puts   []http.Header
}

// putCount is how many PUTs of its key s has seen.
func (s *storedAs) putCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.puts)
}

func (s *storedAs) RoundTrip(r *http.Request) (*http.Response, error) {
	ours := cmp.Or(r.URL.Opaque, r.URL.Path) == s.key
	if r.Method == http.MethodPut && ours {
		s.mu.Lock()
		s.puts = append(s.puts, r.Header.Clone())
		s.mu.Unlock()
	}
	if (ours || r.Header.Get("X-Amz-Copy-Source") == s.key) && s.answer != nil {
		if resp := s.answer(r); resp != nil {
			return resp, nil
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !ours {
		return resp, err
	}
	switch {
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.RawQuery == "" && resp.StatusCode/100 == 2:
		for k, v := range s.stored {
			resp.Header[k] = v
		}
	}
	return resp, nil
}

// TestWriteKeepsHowTheObjectIsStored: a write or a transaction over an
// object keeps its storage class and its encryption under a KMS key, with
// the key and its bucket-key setting, where its PUT dropped them: an
// object another tool moved to STANDARD_IA went back to STANDARD, one
// encrypted under a key of the user's was written under the bucket's
// default, or none. SSE-S3 (AES256) is left to the bucket's default. A
// transaction keeps them too: it refused an object under a KMS key,
// whose ETag is no MD5 (see TestTransactionOverETagsNotMD5).
// versitygw 1.8 keeps neither, so its answers say them as AWS's do, and
// the test reads the PUT's headers.
func TestWriteKeepsHowTheObjectIsStored(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	const kms = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, st := range []struct {
		name         string
		stored, want http.Header
	}{
		{"infrequent access", http.Header{"X-Amz-Storage-Class": {"STANDARD_IA"}}, http.Header{"X-Amz-Storage-Class": {"STANDARD_IA"}}},
		{"kms", http.Header{"X-Amz-Server-Side-Encryption": {"aws:kms"}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {kms},
			"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": {"true"}, "X-Amz-Storage-Class": {"GLACIER_IR"}},
			http.Header{"X-Amz-Server-Side-Encryption": {"aws:kms"}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {kms},
				"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": {"true"}, "X-Amz-Storage-Class": {"GLACIER_IR"}}},
		{"sse-s3", http.Header{"X-Amz-Server-Side-Encryption": {"AES256"}}, http.Header{"X-Amz-Server-Side-Encryption": nil}},
	} {
		for _, tc := range changes {
			name := st.name + " " + tc.name
			t.Run(name, func(t *testing.T) {
				p := strings.ReplaceAll(name, " ", "-") + ".txt"
				if _, err := c.PutObject(ctx, bucket, "ws/"+p, strings.NewReader("hi\n"), 3, minio.PutObjectOptions{}); err != nil {
					t.Fatal(err)
				}
				rt := &storedAs{key: "/" + bucket + "/ws/" + p, stored: st.stored}
				f := transportFS(t, "s3://"+bucket+"/ws", rt)
				err := tc.change(ctx, f, p)
				rt.mu.Lock()
				defer rt.mu.Unlock()
				if err != nil {
					t.Fatal(err)
				}
				if len(rt.puts) != 1 {
					t.Fatalf("%d PUTs of %s; want 1", len(rt.puts), p)
				}
				for k, v := range st.want {
					if got := rt.puts[0][k]; strings.Join(got, ",") != strings.Join(v, ",") {
						t.Errorf("the PUT's %s: %q; want %q", k, got, v)
					}
				}
			})
		}
	}
}

// s3Error is a store's error answer to r: its XML names code and says
// msg, but for a HEAD's, which has no body.
func s3Error(r *http.Request, status int, code, msg string) *http.Response {
	body := "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" + msg + "</Message></Error>"
	if r.Method == http.MethodHead {
		body = ""
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}
}

// TestAnObjectUnderACustomerKey: an object encrypted with a key of its
// writer's (SSE-C), which agentfs cannot send, is NOT_SUPPORTED to a
// read, a stat or a write, which sends no PUT (it would drop the
// encryption), with a hint that names the way to change it. AWS answers
// its HEAD with a bare 400 and its GET with InvalidRequest; a write was
// INVALID_ARGUMENT "400 Bad Request", its hint about the key's length.
// versitygw 1.8 takes SSE-C headers and ignores them, so its answers are
// AWS's here.
func TestAnObjectUnderACustomerKey(t *testing.T) {
	ctx := context.Background()
	f, rt, _ := sealedFS(t, sealings[0], nil)
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.change(ctx, f, "secret.txt")
			e := fault.AsError(err)
			if e == nil || e.Code != fault.CodeNotSupported || !strings.Contains(e.Hint, "--sse-c") {
				t.Errorf("%v; want NOT_SUPPORTED with a hint naming --sse-c", err)
			}
		})
	}
	if n := rt.putCount(); n != 0 {
		t.Errorf("%d PUTs of the object; want none", n)
	}
}

// sealings are the ways AWS stores an object agentfs cannot read, each
// with the answers AWS gives about it, which versitygw 1.8 does not: a
// HEAD, a GET, or a copy (CopyObject) from it answered by answer when it
// answers, else with the headers stored.
var sealings = []struct {
	name   string
	stored http.Header
	answer func(r *http.Request) *http.Response
}{
	// Under a key of its writer's (SSE-C): a bare 400 to a HEAD, and
	// InvalidRequest to a GET.
	{"customer key", nil, func(r *http.Request) *http.Response {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return nil
		}
		return s3Error(r, http.StatusBadRequest, "InvalidRequest", "The object was stored using a form of Server Side Encryption. "+
			"The correct parameters must be provided to retrieve the object.")
	}},
	// Archived (GLACIER, DEEP_ARCHIVE, an archive tier of
	// INTELLIGENT_TIERING) and not restored: a HEAD tells its class, a
	// GET of its bytes and a copy from it are InvalidObjectState (403).
	{"archived", http.Header{"X-Amz-Storage-Class": {"GLACIER"}}, func(r *http.Request) *http.Response {
		if r.Method == http.MethodGet && r.URL.RawQuery == "" || r.Header.Get("X-Amz-Copy-Source") != "" {
			return s3Error(r, http.StatusForbidden, "InvalidObjectState", "The operation is not valid for the object's storage class")
		}
		return nil
	}},
}

// sealedFS is a workspace whose ws/secret.txt ("hi\n") is stored as
// sealing says, beside the files others (name to content), with its
// bucket.
func sealedFS(t *testing.T, sealing struct {
	name   string
	stored http.Header
	answer func(r *http.Request) *http.Response
}, others map[string]string) (*s3fs.FS, *storedAs, string) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"secret.txt": "hi\n"}
	maps.Copy(files, others)
	for name, content := range files {
		if _, err := c.PutObject(ctx, bucket, "ws/"+name, strings.NewReader(content), int64(len(content)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rt := &storedAs{key: "/" + bucket + "/ws/secret.txt", stored: sealing.stored, answer: sealing.answer}
	return transportFS(t, "s3://"+bucket+"/ws", rt), rt, bucket
}

// TestAnArchivedObject: an object archived by its storage class
// (GLACIER, DEEP_ARCHIVE, an archive tier of INTELLIGENT_TIERING), which
// AWS does not let be read or copied until it is restored, is
// NOT_SUPPORTED to a read, to a write at the version read, to a
// transaction (which backs it up by a copy) and to a move, each with a
// hint naming the restore, and nothing changed: each was
// PERMISSION_DENIED, its hint about the credentials. A stat tells it, as
// a HEAD of it does.
func TestAnArchivedObject(t *testing.T) {
	ctx := context.Background()
	f, rt, bucket := sealedFS(t, sealings[1], nil)
	if _, err := f.Stat(ctx, "secret.txt"); err != nil {
		t.Errorf("stat: %v; want the file", err)
	}
	for _, tc := range append(changes[1:2:2], changes[3], struct {
		name   string
		change func(ctx context.Context, f *s3fs.FS, p string) error
	}{"move", func(ctx context.Context, f *s3fs.FS, p string) error {
		_, err := f.Rename(ctx, p, "moved.txt", backend.WriteOptions{})
		return err
	}}) {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.change(ctx, f, "secret.txt")
			e := fault.AsError(err)
			if e == nil || e.Code != fault.CodeNotSupported || !strings.Contains(e.Hint, "aws s3api restore-object --bucket '"+bucket+"' --key 'ws/secret.txt'") {
				t.Errorf("%v; want NOT_SUPPORTED with a hint naming aws s3api restore-object", err)
			}
		})
	}
	if n := rt.putCount(); n != 0 {
		t.Errorf("%d PUTs of the object; want none", n)
	}
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	if len(keys) != 1 || keys[0] != "ws/secret.txt" {
		t.Errorf("the bucket holds %q; want ws/secret.txt alone", keys)
	}
}

// TestSearchPassesOverASealedObject: grep and replace over a tree skip
// an object they cannot read, under SSE-C or archived, and count it
// unreadable, as a file they may not read, where an object under SSE-C
// failed the whole search (NOT_SUPPORTED) and no other file was
// searched or changed.
func TestSearchPassesOverASealedObject(t *testing.T) {
	ctx := context.Background()
	for _, sealing := range sealings {
		t.Run(sealing.name, func(t *testing.T) {
			f, rt, _ := sealedFS(t, sealing, map[string]string{"a.txt": "hi\n"})
			tl := &core.Tools{FS: f}
			g, err := tl.Grep(ctx, core.GrepRequest{Query: "hi", Path: "."})
			if err != nil {
				t.Fatalf("grep: %v; want a.txt matched, secret.txt unreadable", err)
			}
			if g.Count != 1 || g.Unreadable != 1 || len(g.Files) != 1 || g.Files[0].Path != "a.txt" {
				t.Errorf("grep: count %d, unreadable %d, files %+v; want 1 match in a.txt, 1 unreadable", g.Count, g.Unreadable, g.Files)
			}
			rep := "ho"
			r, err := tl.Replace(ctx, core.ReplaceRequest{Query: "hi", Replacement: &rep, Path: "."})
			if err != nil {
				t.Fatalf("replace: %v; want a.txt changed, secret.txt unreadable", err)
			}
			if r.FilesChanged != 1 || r.Unreadable != 1 {
				t.Errorf("replace: %d files changed, unreadable %d; want 1 and 1", r.FilesChanged, r.Unreadable)
			}
			if n := rt.putCount(); n != 0 {
				t.Errorf("%d PUTs of secret.txt; want none", n)
			}
		})
	}
}

// TestTagsNotReadable: a write over an object with tags, by credentials
// that may not read them, is PERMISSION_DENIED and sends no PUT, which
// would drop them; the hint names the permissions.
func TestTagsNotReadable(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, bucket, "ws/tagged.txt", strings.NewReader("hi\n"), 3, minio.PutObjectOptions{UserTags: map[string]string{"team": "red"}}); err != nil {
		t.Fatal(err)
	}
	rt := &storedAs{key: "/" + bucket + "/ws/tagged.txt", answer: func(r *http.Request) *http.Response {
		if r.Method != http.MethodGet || !r.URL.Query().Has("tagging") {
			return nil
		}
		return s3Error(r, http.StatusForbidden, "AccessDenied", "Access Denied")
	}}
	f := transportFS(t, "s3://"+bucket+"/ws", rt)
	_, err = f.WriteFile(ctx, "tagged.txt", []byte("bye\n"), backend.WriteOptions{})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Hint, "s3:GetObjectTagging") {
		t.Errorf("%v; want PERMISSION_DENIED with a hint naming s3:GetObjectTagging", err)
	}
	if n := rt.putCount(); n != 0 {
		t.Errorf("%d PUTs of the object; want none", n)
	}
}

// archiving is a transport to the test's store that archives, as AWS
// does, an object put or copied in GLACIER or DEEP_ARCHIVE: a GET of it,
// or a copy from it, is InvalidObjectState. The object at restored (a
// request's path) is one restored from GLACIER: read as any other, its
// HEAD and GET tell its class and its restore. A PUT at refused is
// AccessDenied; classes records the class of each PUT at restored.
//
// A PUT under coldUnder (a prefix of a request's path) is archived
// whatever its class, as a lifecycle rule, or the GLACIER class an older
// agentfs gave a backup, archives it.
type archiving struct {
	restored, refused, coldUnder string
	mu                           sync.Mutex
	cold                         map[string]bool
	classes                      []string
}

func (a *archiving) RoundTrip(r *http.Request) (*http.Response, error) {
	p, src := cmp.Or(r.URL.Opaque, r.URL.Path), r.Header.Get("X-Amz-Copy-Source")
	a.mu.Lock()
	cold := a.cold[p] || a.cold[src]
	if r.Method == http.MethodPut && p == a.restored {
		a.classes = append(a.classes, r.Header.Get("X-Amz-Storage-Class"))
	}
	a.mu.Unlock()
	switch {
	case cold && (r.Method == http.MethodGet && r.URL.RawQuery == "" || src != ""):
		return s3Error(r, http.StatusForbidden, "InvalidObjectState", "The operation is not valid for the object's storage class"), nil
	case r.Method == http.MethodPut && p == a.refused:
		return s3Error(r, http.StatusForbidden, "AccessDenied", "Access Denied"), nil
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode/100 != 2 || r.URL.RawQuery != "" {
		return resp, err
	}
	switch {
	case r.Method == http.MethodPut:
		a.mu.Lock()
		class := r.Header.Get("X-Amz-Storage-Class")
		a.cold[p] = class == "GLACIER" || class == "DEEP_ARCHIVE" || a.coldUnder != "" && strings.HasPrefix(p, a.coldUnder)
		a.mu.Unlock()
	case p == a.restored && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		resp.Header.Set("X-Amz-Storage-Class", "GLACIER")
		resp.Header.Set("X-Amz-Restore", `ongoing-request="false", expiry-date="Fri, 21 Dec 2099 00:00:00 GMT"`)
	}
	return resp, nil
}

// TestTransactionUndoesAChangeOfARestoredObject: a transaction over an
// object of GLACIER restored (readable until its restore expires) that
// fails on another file puts it back, in GLACIER, where its backup,
// copied in GLACIER as the object is stored, was archived at once and
// the rollback could not read it: the file kept the transaction's bytes,
// and so would every recovery until someone restored the backup.
func TestTransactionUndoesAChangeOfARestoredObject(t *testing.T) {
	ctx := context.Background()
	c, bucket, rt, err := commitThroughArchiving(t, "restored.txt", func(bucket string) *archiving {
		return &archiving{restored: "/" + bucket + "/ws/restored.txt", refused: "/" + bucket + "/ws/b.txt", cold: map[string]bool{}}
	})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied {
		t.Fatalf("commit: %v; want PERMISSION_DENIED, b.txt's PUT refused, the transaction undone", err)
	}
	var keys []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	o, err := c.GetObject(ctx, bucket, "ws/restored.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	data, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if string(data) != "hi\n" || !slices.Equal(keys, []string{"ws/b.txt", "ws/restored.txt"}) || !slices.Equal(rt.classes, []string{"GLACIER", "GLACIER"}) {
		t.Errorf("restored.txt holds %q, put in %q, the bucket %q; want \"hi\\n\", written and put back in GLACIER, no journal left", data, rt.classes, keys)
	}
}

// commitThroughArchiving puts name and b.txt ("hi\n") in ws/ of a new
// bucket, then commits "bye\n" over both at their versions through the
// transport archived makes for the bucket (b.txt's PUT refused, so that
// the transaction rolls back), and returns the commit's error.
func commitThroughArchiving(t *testing.T, name string, archived func(bucket string) *archiving) (*minio.Client, string, *archiving, error) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{name, "b.txt"}
	for _, n := range names {
		if _, err := c.PutObject(ctx, bucket, "ws/"+n, strings.NewReader("hi\n"), 3, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rt := archived(bucket)
	f := transportFS(t, "s3://"+bucket+"/ws", rt)
	var ops []backend.Op
	for _, n := range names {
		fi, err := f.Stat(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, backend.Op{Path: n, Data: []byte("bye\n"), Write: backend.WriteOptions{IfVersion: fi.Version}})
	}
	_, err = f.Commit(ctx, ops)
	return c, bucket, rt, err
}

// TestRollbackOfAnArchivedBackup: a rollback whose backup is archived (an
// older agentfs's backup of a restored GLACIER object, copied in GLACIER;
// a lifecycle rule over the journal folder) cannot read it, and says to
// restore the backup, by its key, then recover: the hint named the file's
// own key, whose restore does not help the rollback.
func TestRollbackOfAnArchivedBackup(t *testing.T) {
	_, _, _, err := commitThroughArchiving(t, "a.txt", func(bucket string) *archiving {
		return &archiving{refused: "/" + bucket + "/ws/b.txt", coldUnder: "/" + bucket + "/ws/.agentfs-journal/", cold: map[string]bool{}}
	})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeNotSupported || !strings.Contains(e.Hint, "--key 'ws/.agentfs-journal/") || !strings.Contains(e.Hint, "--recover") {
		t.Fatalf("commit: %v (hint %q); want NOT_SUPPORTED whose hint restores the backup, then recovers", err, e.Hint)
	}
}
