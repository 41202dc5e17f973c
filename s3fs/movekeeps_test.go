package s3fs_test

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// storedHeaders are the headers that say how an object is stored, which
// awsStore keeps.
var storedHeaders = []string{"X-Amz-Storage-Class", "X-Amz-Server-Side-Encryption",
	"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"}

// awsStore is a transport to the test's store that keeps, as AWS does and
// versitygw 1.8 does not, how each object is stored: the storage class
// and the encryption a PUT (a store's copy or not) or the start of an
// upload sent, none on a copy meaning STANDARD and the bucket's default,
// as on AWS; a HEAD or a GET of the object answers them. It counts the
// GetObjectTagging requests, and keeps what each store's copy (a PUT
// with X-Amz-Copy-Source) sent of them, by its source's and its
// destination's paths.
type awsStore struct {
	mu      sync.Mutex
	stored  map[string]http.Header // by request path, /BUCKET/KEY
	copies  map[[2]string]http.Header
	tagging int
}

func (a *awsStore) RoundTrip(r *http.Request) (*http.Response, error) {
	p := cmp.Or(r.URL.Opaque, r.URL.Path)
	q := r.URL.Query()
	if r.Method == http.MethodGet && q.Has("tagging") {
		a.mu.Lock()
		a.tagging++
		a.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stored == nil {
		a.stored = map[string]http.Header{}
	}
	switch {
	case r.Method == http.MethodPut && r.URL.RawQuery == "", r.Method == http.MethodPost && q.Has("uploads"):
		h := http.Header{}
		for _, k := range storedHeaders {
			if v := r.Header.Values(k); len(v) > 0 {
				h[k] = v
			}
		}
		a.stored[p] = h
		if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
			if a.copies == nil {
				a.copies = map[[2]string]http.Header{}
			}
			a.copies[[2]string{src, p}] = h
		}
	case r.Method == http.MethodDelete && r.URL.RawQuery == "":
		delete(a.stored, p)
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.RawQuery == "":
		for _, k := range storedHeaders {
			delete(resp.Header, k) // versitygw's STANDARD, which AWS leaves unsaid
		}
		maps.Copy(resp.Header, a.stored[p])
	}
	return resp, nil
}

// set says the object at p (/BUCKET/KEY) is stored as h says.
func (a *awsStore) set(p string, h http.Header) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stored == nil {
		a.stored = map[string]http.Header{}
	}
	a.stored[p] = h
}

// of is how the object at p is stored, as a HEAD would say.
func (a *awsStore) of(p string) http.Header {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stored[p]
}

// copies is what the store's copies of the object src into the folder
// dir (paths, /BUCKET/KEY) sent of how they are stored, by destination.
func (a *awsStore) copiesOf(src, dir string) map[string]http.Header {
	a.mu.Lock()
	defer a.mu.Unlock()
	in := map[string]http.Header{}
	for p, h := range a.copies {
		if p[0] == src && strings.HasPrefix(p[1], dir) {
			in[p[1]] = h
		}
	}
	return in
}

// reads is how many GetObjectTagging requests were sent.
func (a *awsStore) reads() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tagging
}

const testKMSKey = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"

// storedKinds are ways an object is stored, and what a PUT that keeps it
// so sends: SSE-S3 is the bucket's default, sent as none.
var storedKinds = []struct {
	name         string
	stored, want http.Header
}{
	{"plain", http.Header{}, http.Header{}},
	{"infrequent access", http.Header{"X-Amz-Storage-Class": {"STANDARD_IA"}}, http.Header{"X-Amz-Storage-Class": {"STANDARD_IA"}}},
	{"kms", http.Header{"X-Amz-Server-Side-Encryption": {"aws:kms"}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {testKMSKey},
		"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": {"true"}, "X-Amz-Storage-Class": {"GLACIER_IR"}},
		http.Header{"X-Amz-Server-Side-Encryption": {"aws:kms"}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {testKMSKey},
			"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": {"true"}, "X-Amz-Storage-Class": {"GLACIER_IR"}}},
	{"sse-s3", http.Header{"X-Amz-Server-Side-Encryption": {"AES256"}}, http.Header{}},
}

// testTags are the tags of a tagged object in these tests.
var testTags = map[string]string{"team": "red", "cost center": "a+b/c=d:e@f"}

// moveKinds are the moves of a file: from is moved to to, over the file
// there when over is set; a directory's moves each object below it.
var moveKinds = []struct {
	name, from, to string
	over           bool
	size           int
}{
	{"file", "a.txt", "b.txt", false, 3},
	{"file over a file", "a.txt", "b.txt", true, 3},
	{"directory", "d/a.txt", "e/a.txt", false, 3},
	{"file over 8 MiB", "a.txt", "b.txt", false, 8<<20 + 1}, // copied by the store, in parts
}

// TestMoveKeepsHowTheObjectIsStored: a moved file, alone or in its
// directory, keeps its storage class, its encryption under a KMS key and
// its tags, where its copy, a GET and a PUT (or an upload the store
// copies in parts), dropped them: an object in STANDARD_IA or GLACIER_IR
// went to STANDARD, one under the user's KMS key to the bucket's default,
// a tagged one lost its lifecycle or cost-allocation tags. Tags are read
// by a request of their own, sent only for a file that has some.
// versitygw 1.8 keeps the tags but neither the storage class nor the
// encryption, which awsStore keeps as AWS does.
func TestMoveKeepsHowTheObjectIsStored(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, mk := range moveKinds {
		for _, st := range storedKinds {
			for _, tagged := range []bool{true, false} {
				name := mk.name + " " + st.name + map[bool]string{true: " tagged", false: ""}[tagged]
				t.Run(name, func(t *testing.T) {
					ws := "mvkeeps-" + strings.ReplaceAll(name, " ", "-")
					opts := minio.PutObjectOptions{}
					if tagged {
						opts.UserTags = testTags
					}
					data := bytes.Repeat([]byte("x"), mk.size)
					if _, err := c.PutObject(ctx, bucket, ws+"/"+mk.from, bytes.NewReader(data), int64(len(data)), opts); err != nil {
						t.Fatal(err)
					}
					if mk.over {
						if _, err := c.PutObject(ctx, bucket, ws+"/"+mk.to, strings.NewReader("old"), 3, minio.PutObjectOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					aws := &awsStore{}
					aws.set("/"+bucket+"/"+ws+"/"+mk.from, st.stored)
					f := transportFS(t, "s3://"+bucket+"/"+ws, aws)
					from, to := mk.from, mk.to
					if strings.Contains(from, "/") {
						from, to = "d", "e"
					}
					if _, err := f.Rename(ctx, from, to, backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
					if got := aws.of("/" + bucket + "/" + ws + "/" + mk.to); !sameHeaders(got, st.want) {
						t.Errorf("stored as %v once moved; want %v", got, st.want)
					}
					got, err := c.GetObjectTagging(ctx, bucket, ws+"/"+mk.to, minio.GetObjectTaggingOptions{})
					if err != nil {
						t.Fatal(err)
					}
					want, reads := map[string]string{}, 0
					if tagged {
						want, reads = testTags, 1
					}
					if !maps.Equal(got.ToMap(), want) || aws.reads() != reads {
						t.Errorf("tags %v once moved, read with %d requests; want %v, %d requests", got.ToMap(), aws.reads(), want, reads)
					}
				})
			}
		}
	}
}

// sameHeaders reports whether a and b hold the same headers.
func sameHeaders(a, b http.Header) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return strings.Join(x, ",") == strings.Join(y, ",") })
}

// rollbackKinds are changes that fail once they replaced or removed the
// object at a.txt, whose rollback puts it back from its backup copy.
var rollbackKinds = []struct {
	name   string
	kms    bool // a transaction refuses to write over an object under a KMS key
	change func(ctx context.Context, f *s3fs.FS) error
	// fails is the request the change fails at, once a.txt was changed;
	// every such request when always is set (a commit point answered
	// with an error is made again).
	fails  func(r *http.Request) bool
	always bool
}{
	{"transaction's write", false, func(ctx context.Context, f *s3fs.FS) error {
		_, err := f.Commit(ctx, []backend.Op{{Path: "a.txt", Data: []byte("new a")}, {Path: "b.txt", Data: []byte("new b")}})
		return err
	}, commitPoint, true},
	{"transaction's removal", true, func(ctx context.Context, f *s3fs.FS) error {
		_, err := f.Commit(ctx, []backend.Op{{Path: "a.txt", Remove: true}, {Path: "b.txt", Data: []byte("new b")}})
		return err
	}, commitPoint, true},
	{"move over it", true, func(ctx context.Context, f *s3fs.FS) error {
		_, err := f.Rename(ctx, "src.txt", "a.txt", backend.WriteOptions{})
		return err
	}, func(r *http.Request) bool { return journalSays(r, `"deleting":true`) }, false},
}

// TestRollbackKeepsHowTheObjectIsStored: a file a failed transaction
// replaced or removed, or a failed move replaced, is put back with its
// storage class, its encryption under a KMS key and its tags, by its
// process or by the recovery after a kill: its backup, a store's copy,
// kept neither class nor encryption, and its restore, a GET and a PUT,
// neither these nor the tags. The Content-Type and user metadata were
// kept already, and still are. The backup itself is made in the store's
// default class (no x-amz-storage-class: STANDARD on AWS), under the
// object's KMS encryption: made in the object's class, each backup of a
// file in STANDARD_IA, ONEZONE_IA or GLACIER_IR, removed seconds later,
// was billed a 30- or 90-day minimum; the class is the journal's to keep
// for the restore.
func TestRollbackKeepsHowTheObjectIsStored(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, rk := range rollbackKinds {
		for _, st := range storedKinds[1:] {
			if st.name == "kms" && !rk.kms {
				continue
			}
			for _, dead := range []bool{false, true} {
				name := rk.name + " " + st.name + map[bool]string{true: " dead", false: ""}[dead]
				t.Run(name, func(t *testing.T) {
					ws := "rbkeeps-" + strings.ReplaceAll(strings.ReplaceAll(name, "'", ""), " ", "-")
					opts := minio.PutObjectOptions{UserTags: testTags, ContentType: "text/html", UserMetadata: map[string]string{"Owner": "alice"}}
					if _, err := c.PutObject(ctx, bucket, ws+"/a.txt", strings.NewReader("old a"), 5, opts); err != nil {
						t.Fatal(err)
					}
					for _, k := range []string{"b.txt", "src.txt"} {
						if _, err := c.PutObject(ctx, bucket, ws+"/"+k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					aws := &awsStore{}
					aws.set("/"+bucket+"/"+ws+"/a.txt", st.stored)
					root := "s3://" + bucket + "/" + ws
					var rt http.RoundTripper = &onFirst{match: rk.fails, fail: true, always: rk.always, next: aws}
					if dead {
						rt = &dying{at: rk.fails, next: aws}
					}
					changer := transportFS(t, root, rt)
					if dead {
						s3fs.SetLease(changer, -time.Minute)
					}
					if err := rk.change(ctx, changer); err == nil {
						t.Fatal("the change succeeded with a PUT failed")
					}
					f := transportFS(t, root, aws)
					if _, err := f.Recover(ctx); err != nil {
						t.Fatal(err)
					}
					if got := tree(t, f, "a.txt"); got["a.txt"] != "old a" {
						t.Fatalf("a.txt after the rollback: %q; want \"old a\"", got["a.txt"])
					}
					if got := aws.of("/" + bucket + "/" + ws + "/a.txt"); !sameHeaders(got, st.want) {
						t.Errorf("stored as %v after the rollback; want %v", got, st.want)
					}
					tags, err := c.GetObjectTagging(ctx, bucket, ws+"/a.txt", minio.GetObjectTaggingOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if !maps.Equal(tags.ToMap(), testTags) {
						t.Errorf("tags %v after the rollback; want %v", tags.ToMap(), testTags)
					}
					o, err := c.StatObject(ctx, bucket, ws+"/a.txt", minio.StatObjectOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if o.ContentType != "text/html" || o.UserMetadata["Owner"] != "alice" {
						t.Errorf("Content-Type %q, metadata %v after the rollback; want text/html, Owner alice", o.ContentType, o.UserMetadata)
					}
					noJournal(t, bucket, ws, "the rollback")
					backups := aws.copiesOf("/"+bucket+"/"+ws+"/a.txt", "/"+bucket+"/"+ws+"/.agentfs-journal/")
					if len(backups) == 0 {
						t.Fatal("no backup copy made")
					}
					for p, h := range backups {
						if want := withoutClass(st.want); !sameHeaders(h, want) {
							t.Errorf("the backup %s sent %v; want %v (no storage class, the object's encryption)", p, h, want)
						}
					}
				})
			}
		}
	}
}

// withoutClass is h without its storage class.
func withoutClass(h http.Header) http.Header {
	h = h.Clone()
	h.Del("X-Amz-Storage-Class")
	return h
}

// TestKeepingCostsNoRequest: keeping how an object is stored and its tags
// costs a move or a transaction over objects with no tags no request
// more: the headers come with the HEAD or the GET it sent already, and
// the tags are asked only of an object that has some. The counts are
// those before they were kept, on versitygw.
func TestKeepingCostsNoRequest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		files  []string
		change func(f *s3fs.FS) error
		max    int
	}{
		{"move a file over a file", []string{"a", "b"}, func(f *s3fs.FS) error {
			_, err := f.Rename(ctx, "a", "b", backend.WriteOptions{})
			return err
		}, 20},
		{"move a directory", []string{"d/a", "d/b"}, func(f *s3fs.FS) error {
			_, err := f.Rename(ctx, "d", "e", backend.WriteOptions{})
			return err
		}, 34},
		{"transaction writing over a file and removing one", []string{"a", "b"}, func(f *s3fs.FS) error {
			_, err := f.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new")}, {Path: "b", Remove: true}})
			return err
		}, 16}, // with the claim of b, put and removed
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for _, p := range tc.files {
				files[p] = p
			}
			_, _, root := seeded(t, "keepcost-"+strings.ReplaceAll(tc.name, " ", "-"), files)
			f, cnt := openFS(t, root)
			cnt.reset()
			if err := tc.change(f); err != nil {
				t.Fatal(err)
			}
			if n := cnt.total(); n > tc.max {
				t.Errorf("%d requests (%v); want at most %d", n, cnt.requests, tc.max)
			}
		})
	}
}

// TestMoveTagsNotReadable: a move of a file with tags, by credentials
// that may not read them, is PERMISSION_DENIED with a hint naming the
// permissions, and moves nothing: its copy would drop them.
func TestMoveTagsNotReadable(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, bucket, "mvtagsdenied/a.txt", strings.NewReader("hi\n"), 3, minio.PutObjectOptions{UserTags: testTags}); err != nil {
		t.Fatal(err)
	}
	rt := &storedAs{key: "/" + bucket + "/mvtagsdenied/a.txt", answer: func(r *http.Request) *http.Response {
		if r.Method != http.MethodGet || !r.URL.Query().Has("tagging") {
			return nil
		}
		return s3Error(r, http.StatusForbidden, "AccessDenied", "Access Denied")
	}}
	f := transportFS(t, "s3://"+bucket+"/mvtagsdenied", rt)
	_, err = f.Rename(ctx, "a.txt", "b.txt", backend.WriteOptions{})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Hint, "s3:GetObjectTagging") {
		t.Errorf("%v; want PERMISSION_DENIED with a hint naming s3:GetObjectTagging", err)
	}
	if got := tree(t, f, "a.txt", "b.txt"); !maps.Equal(got, map[string]string{"a.txt": "hi\n", "b.txt": ""}) {
		t.Errorf("after the move refused: %q; want a.txt alone", got)
	}
	noJournal(t, bucket, "mvtagsdenied", "a move refused")
}

// TestRollbackTagsNotReadable: a transaction that removed a file with
// tags and then failed, run by credentials that may not read tags, cannot
// put the file back with them: its error, and the recovery's while the
// credentials stay so, are PERMISSION_DENIED naming s3:GetObjectTagging
// and s3:PutObjectTagging, the hint to grant them and run --recover.
// Both were IO_ERROR, the recovery's hint "fix what the store refuses".
// Once granted, the recovery puts the file back with its tags.
func TestRollbackTagsNotReadable(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, bucket, "rbtagsdenied/a.txt", strings.NewReader("old a"), 5, minio.PutObjectOptions{UserTags: testTags}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, bucket, "rbtagsdenied/b.txt", strings.NewReader("old b"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	root := "s3://" + bucket + "/rbtagsdenied"
	bPut := putTo("rbtagsdenied", "b.txt")
	denied := &refusing{refuse: func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Query().Has("tagging") || bPut(r)
	}}
	committer := transportFS(t, root, denied)
	s3fs.SetLease(committer, -time.Minute)
	_, err = committer.Commit(ctx, []backend.Op{{Path: "a.txt", Remove: true, Write: backend.WriteOptions{IfVersion: versionOf(t, committer, "a.txt")}},
		{Path: "b.txt", Data: []byte("new b")}})
	wantDenied := func(what string, err error) {
		t.Helper()
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Message+e.Hint, "s3:GetObjectTagging") ||
			!strings.Contains(e.Hint, "s3:PutObjectTagging") || !strings.Contains(e.Hint, "agentfs --recover") {
			t.Errorf("%s: %v (hint %q); want PERMISSION_DENIED naming s3:GetObjectTagging and s3:PutObjectTagging, the hint --recover", what, err, e.Hint)
		}
	}
	wantDenied("the transaction whose rollback may not read the tags", err)
	_, err = transportFS(t, root, denied).Recover(ctx)
	wantDenied("the recovery that may not read the tags", err)
	f, _ := openFS(t, root)
	if _, err := f.Recover(ctx); err != nil {
		t.Fatalf("the recovery once the tags may be read: %v", err)
	}
	if got := tree(t, f, "a.txt", "b.txt"); !maps.Equal(got, map[string]string{"a.txt": "old a", "b.txt": "old b"}) {
		t.Errorf("after the recovery: %s; want both old", brief(got))
	}
	tags, err := c.GetObjectTagging(ctx, bucket, "rbtagsdenied/a.txt", minio.GetObjectTaggingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(tags.ToMap(), testTags) {
		t.Errorf("tags %v after the recovery; want %v", tags.ToMap(), testTags)
	}
	noJournal(t, bucket, "rbtagsdenied", "the recovery")
}

// TestRecoveryOfAnOlderJournalKeepsTheClass: the journal of an older
// agentfs records no storage class, its backup made in the object's
// own; its recovery puts the object back in that class, the backup's.
func TestRecoveryOfAnOlderJournalKeepsTheClass(t *testing.T) {
	ctx := context.Background()
	bucket := s3test.Bucket(t)
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	const ws = "oldjournal-class"
	ia := http.Header{"X-Amz-Storage-Class": {"STANDARD_IA"}}
	if _, err := c.PutObject(ctx, bucket, ws+"/a.txt", strings.NewReader("old a"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	aws := &awsStore{}
	aws.set("/"+bucket+"/"+ws+"/a.txt", ia)
	root := "s3://" + bucket + "/" + ws
	changer := transportFS(t, root, &dying{at: commitPoint, next: aws})
	s3fs.SetLease(changer, -time.Minute)
	if _, err := changer.Commit(ctx, []backend.Op{{Path: "a.txt", Data: []byte("new a")}}); err == nil {
		t.Fatal("the transaction succeeded with its commit point failed")
	}
	// As an older agentfs left it: no class in its journal, its backup
	// in the object's.
	var journals int
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: ws + "/.agentfs-journal/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if !strings.HasSuffix(o.Key, ".json") {
			aws.set("/"+bucket+"/"+o.Key, ia)
			continue
		}
		journals++
		r, err := c.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(`"class":"STANDARD_IA"`)) {
			t.Fatalf("the journal %s records no class: %s", o.Key, data)
		}
		data = bytes.ReplaceAll(data, []byte(`,"class":"STANDARD_IA"`), nil)
		if _, err := c.PutObject(ctx, bucket, o.Key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if journals != 1 {
		t.Fatalf("%d journals left by the dead transaction; want 1", journals)
	}
	f := transportFS(t, root, aws)
	if _, err := f.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, f, "a.txt"); got["a.txt"] != "old a" {
		t.Fatalf("a.txt after the recovery: %q; want \"old a\"", got["a.txt"])
	}
	if got := aws.of("/" + bucket + "/" + ws + "/a.txt"); !sameHeaders(got, ia) {
		t.Errorf("stored as %v after the recovery; want %v", got, ia)
	}
	noJournal(t, bucket, ws, "the recovery")
}
