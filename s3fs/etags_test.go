package s3fs_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
)

// notMD5 is a transport to the test's store (which gives each object the
// MD5 of its bytes as its ETag) that answers with other ETags, as AWS
// does for an object under a KMS key, or a store whose ETags are no MD5:
// each ETag of an answer (its header, and the XML of a listing or a copy)
// is replaced by one drawn from it, and the conditions of a request
// (If-Match, If-None-Match, and a copy's source's) are put back. A
// condition on an ETag the store never gave through it (an MD5 agentfs
// computed, say) is sent as one that no object has.
//
// With kms, the ETags are 32 hex digits, as AWS's, and the answers to a
// HEAD or a GET of an object say it is encrypted under a KMS key; else
// they are of another form, and say nothing.
//
// With fresh, each write draws an ETag of its own, as AWS's under a KMS
// key: the same bytes written again, at the same key or another, have
// another ETag.
type notMD5 struct {
	kms, fresh bool
	next       http.RoundTripper
	mu         sync.Mutex
	real       map[string]string // by the ETag given
	// at is, with fresh, the ETag given for an object's key and its real
	// one; writes counts the writes, each of which draws one.
	at     map[string]string
	writes int
}

// xmlETag is an ETag in the XML of an answer, its quotes escaped or not.
var xmlETag = regexp.MustCompile(`(<ETag>(?:&#34;|&quot;|")?)([0-9a-f]{32})`)

// xmlEntry is an entry of a listing, and xmlKey its key.
var (
	xmlEntry = regexp.MustCompile(`(?s)<Contents>.*?</Contents>`)
	xmlKey   = regexp.MustCompile(`<Key>([^<]*)</Key>`)
)

// given is the ETag answered for the store's real one.
func (n *notMD5) given(real string) string {
	sum := md5.Sum([]byte("not the bytes' " + real))
	given := hex.EncodeToString(sum[:])
	if !n.kms {
		given = "v1-" + given
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.real == nil {
		n.real = map[string]string{}
	}
	n.real[given] = real
	return given
}

// givenAt is the ETag answered for the store's real one of the object at
// key (its path, bucket first), drawn anew when write says the answer is
// a write's: with fresh, each write's own.
func (n *notMD5) givenAt(key, real string, write bool) string {
	if !n.fresh {
		return n.given(real)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if g, ok := n.at[key+"\x00"+real]; ok && !write {
		return g
	}
	n.writes++
	sum := md5.Sum([]byte(fmt.Sprintf("write %d of %s", n.writes, real)))
	g := hex.EncodeToString(sum[:])
	if !n.kms {
		g = "v1-" + g
	}
	if n.real == nil {
		n.real, n.at = map[string]string{}, map[string]string{}
	}
	n.real[g], n.at[key+"\x00"+real] = real, g
	return g
}

// realOf is the store's ETag for the one given, or one no object has.
func (n *notMD5) realOf(given string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if real, ok := n.real[given]; ok {
		return real
	}
	return "never-given-" + given
}

func (n *notMD5) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	signed := false // an x-amz- header changed: the request is signed again
	for _, k := range []string{"If-Match", "If-None-Match", "X-Amz-Copy-Source-If-Match", "X-Amz-Copy-Source-If-None-Match"} {
		if v := r.Header.Get(k); v != "" && v != "*" {
			r.Header.Set(k, `"`+n.realOf(strings.Trim(v, `"`))+`"`)
			signed = signed || strings.HasPrefix(k, "X-Amz-")
		}
	}
	if signed {
		resign(r)
	}
	resp, err := cmp.Or(n.next, http.DefaultTransport).RoundTrip(r)
	if err != nil {
		return resp, err
	}
	key, _ := url.PathUnescape(cmp.Or(r.URL.Opaque, r.URL.Path))
	q := r.URL.Query()
	write := r.Method == http.MethodPut && !q.Has("partNumber") || r.Method == http.MethodPost && q.Has("uploadId")
	if e := resp.Header.Get("ETag"); e != "" {
		resp.Header.Set("ETag", `"`+n.givenAt(key, strings.Trim(e, `"`), write)+`"`)
	}
	if n.kms && (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.RawQuery == "" && resp.StatusCode/100 == 2 {
		resp.Header.Set("X-Amz-Server-Side-Encryption", "aws:kms")
		resp.Header.Set("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")
	}
	if !strings.Contains(resp.Header.Get("Content-Type"), "xml") || r.Method == http.MethodHead {
		return resp, nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	at := func(key string) func([]byte) []byte {
		return func(m []byte) []byte {
			sub := xmlETag.FindSubmatch(m)
			return append(append([]byte{}, sub[1]...), n.givenAt(key, string(sub[2]), write)...)
		}
	}
	if bucket, obj, _ := strings.Cut(strings.TrimPrefix(key, "/"), "/"); r.Method == http.MethodGet && obj == "" {
		// A listing: each entry's ETag is its key's.
		encoded := bytes.Contains(data, []byte("<EncodingType>url</EncodingType>"))
		data = xmlEntry.ReplaceAllFunc(data, func(e []byte) []byte {
			k := xmlKey.FindSubmatch(e)
			if k == nil {
				return e
			}
			key := html.UnescapeString(string(k[1]))
			if encoded {
				key, _ = url.QueryUnescape(key)
			}
			return xmlETag.ReplaceAllFunc(e, at("/"+bucket+"/"+key))
		})
	} else {
		data = xmlETag.ReplaceAllFunc(data, at(key))
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	return resp, nil
}

// resign signs r again as s3client signs a request (SigV4: the host and
// the x-amz- headers, the path as sent, the payload's hash as its header
// says), with the test's keys, at the region and time it was signed.
func resign(r *http.Request) {
	auth := r.Header.Get("Authorization")
	_, cred, _ := strings.Cut(auth, "Credential=")
	scope := strings.SplitN(strings.TrimSuffix(strings.Split(cred, ",")[0], "/aws4_request"), "/", 3) // key, day, region/s3
	day, region := scope[1], strings.TrimSuffix(scope[2], "/s3")
	signed, headers := []string{"host"}, "host:"+r.URL.Host+"\n"
	var amz []string
	for k := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") {
			amz = append(amz, lk)
		}
	}
	slices.Sort(amz)
	for _, k := range amz {
		signed = append(signed, k)
		headers += k + ":" + strings.TrimSpace(r.Header.Get(k)) + "\n"
	}
	canon := strings.Join([]string{r.Method, r.URL.Opaque, r.URL.RawQuery, headers, strings.Join(signed, ";"), r.Header.Get("X-Amz-Content-Sha256")}, "\n")
	sum := sha256.Sum256([]byte(canon))
	toSign := "AWS4-HMAC-SHA256\n" + r.Header.Get("X-Amz-Date") + "\n" + day + "/" + region + "/s3/aws4_request\n" + hex.EncodeToString(sum[:])
	access, secret := s3test.Keys()
	key := []byte("AWS4" + secret)
	for _, part := range []string{day, region, "s3", "aws4_request", toSign} {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(part))
		key = m.Sum(nil)
	}
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+access+"/"+day+"/"+region+"/s3/aws4_request, SignedHeaders="+
		strings.Join(signed, ";")+", Signature="+hex.EncodeToString(key))
}

// storesNotMD5 are the stores whose ETags are no MD5 of the bytes.
var storesNotMD5 = []storeNotMD5{{"kms", true, false}, {"opaque etags", false, false}, {"kms, each write its etag", true, true}}

type storeNotMD5 struct {
	name       string
	kms, fresh bool
}

// TestReadUnderAKMSKey: a small file under a KMS key, whose ETag is 32
// hex digits but no MD5 of its bytes, is read as any other. Its bytes
// were checked against its ETag as an MD5, and every read was IO_ERROR
// "the object's bytes do not match its ETag".
func TestReadUnderAKMSKey(t *testing.T) {
	ctx := context.Background()
	_, _, root := seeded(t, "kmsread", map[string]string{"a": "secret a\n"})
	f := transportFS(t, root, &notMD5{kms: true})
	fi, err := f.Stat(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() (backend.FileReader, error){
		"open":       func() (backend.FileReader, error) { return f.Open(ctx, "a") },
		"open known": func() (backend.FileReader, error) { return f.OpenKnown(ctx, "a", fi) },
	} {
		r, err := open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(data) != "secret a\n" {
			t.Errorf("%s: %q, %v; want \"secret a\\n\"", name, data, err)
		}
	}
}

// TestTransactionOverETagsNotMD5: a transaction (a replace, a patch of
// several files) commits on a store whose ETags are no MD5 of the bytes
// (a bucket whose default encryption is a KMS key, a store of other
// ETags): it knows its writes by its mark, not by their ETags. It was
// NOT_SUPPORTED, before any change under a KMS key, else after its first
// write, undone.
func TestTransactionOverETagsNotMD5(t *testing.T) {
	ctx := context.Background()
	for i, st := range storesNotMD5 {
		t.Run(st.name, func(t *testing.T) {
			name := fmt.Sprintf("notmd5-%d", i)
			_, bucket, root := seeded(t, name, map[string]string{"a": "old a", "b": "old b", "d": "old d"})
			f := transportFS(t, root, &notMD5{kms: st.kms, fresh: st.fresh})
			ops := func() []backend.Op {
				va, err := f.Stat(ctx, "a")
				if err != nil {
					t.Fatal(err)
				}
				vb, err := f.Stat(ctx, "b")
				if err != nil {
					t.Fatal(err)
				}
				return []backend.Op{{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va.Version}},
					{Path: "b", Data: []byte("new b"), Write: backend.WriteOptions{IfVersion: vb.Version}},
					{Path: "c", Data: []byte("new c"), Write: backend.WriteOptions{IfAbsent: true}},
					{Path: "d", Remove: true}}
			}
			infos, err := f.Commit(ctx, ops())
			if err != nil {
				t.Fatalf("the transaction: %v", err)
			}
			for i, p := range []string{"a", "b", "c"} {
				fi, err := f.Stat(ctx, p)
				if err != nil || fi.Version != infos[i].Version {
					t.Errorf("%s: at %q (%v); the transaction answered %q", p, fi.Version, err, infos[i].Version)
				}
			}
			want := map[string]string{"a": "new a", "b": "new b", "c": "new c", "d": ""}
			if got := tree(t, f, "a", "b", "c", "d"); !maps.Equal(got, want) {
				t.Errorf("after the transaction: %s, want %s", brief(got), brief(want))
			}
			noJournal(t, bucket, name, "the transaction")
			// Its files are settled: another transaction over them, at
			// the versions the first answered, commits.
			if _, err := f.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("newer a"), Write: backend.WriteOptions{IfVersion: infos[0].Version}},
				{Path: "c", Remove: true, Write: backend.WriteOptions{IfVersion: infos[2].Version}}}); err != nil {
				t.Fatalf("the transaction over the first's files: %v", err)
			}
		})
	}
}

// TestTransactionOverETagsNotMD5Undone: a transaction over such a store
// that fails after some of its writes (another writer's change first,
// its PUT refused) undoes them all in its process.
func TestTransactionOverETagsNotMD5Undone(t *testing.T) {
	ctx := context.Background()
	for i, st := range storesNotMD5 {
		t.Run(st.name, func(t *testing.T) {
			name := fmt.Sprintf("notmd5undone-%d", i)
			_, bucket, root := seeded(t, name, map[string]string{"a": "old a", "b": "old b", "d": "old d"})
			refuseB := &storedAs{key: "/" + bucket + "/" + name + "/b", answer: func(r *http.Request) *http.Response {
				if r.Method != http.MethodPut || r.Header.Get("X-Amz-Meta-Agentfs-Txn") == "" {
					return nil
				}
				return s3Error(r, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
			}}
			f := transportFS(t, root, &notMD5{kms: st.kms, fresh: st.fresh, next: refuseB})
			_, err := f.Commit(ctx, []backend.Op{{Path: "a", Data: []byte("new a")}, {Path: "c", Data: []byte("new c")},
				{Path: "d", Remove: true}, {Path: "b", Data: []byte("new b")}})
			if codeOf(err) != fault.CodeStale {
				t.Errorf("the transaction: %v; want STALE", err)
			}
			want := map[string]string{"a": "old a", "b": "old b", "c": "", "d": "old d"}
			if got := tree(t, f, "a", "b", "c", "d"); !maps.Equal(got, want) {
				t.Errorf("after the transaction undone: %s, want %s", brief(got), brief(want))
			}
			noJournal(t, bucket, name, "the transaction undone")
		})
	}
}

// TestCommitCrashOverETagsNotMD5: a transaction over such a store whose
// process dies anywhere in its commit leaves, once the next call (on the
// same store) recovers it, every file as it was, or, after the commit
// point, every file as the transaction made it, and no journal or copy
// behind; uncut, it commits.
func TestCommitCrashOverETagsNotMD5(t *testing.T) {
	bucket := s3test.Bucket(t)
	ctx := context.Background()
	old := map[string]string{"a": "old a", "gone": "x", "dir/c": ""}
	updated := map[string]string{"a": "new a", "gone": "", "dir/c": "new c"}
	for i, st := range storesNotMD5 {
		committed := false
		for cut := 0; cut <= 12; cut++ {
			prefix := fmt.Sprintf("notmd5crash-%d-%d", i, cut)
			root := "s3://" + bucket + "/" + prefix
			store := &notMD5{kms: st.kms, fresh: st.fresh}
			f := transportFS(t, root, store)
			for p, data := range old {
				if data != "" {
					if _, err := f.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			va, err := f.Stat(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			d := cutOff(cut)
			d.next = store
			dying := transportFS(t, root, d)
			s3fs.SetLease(dying, -time.Minute)
			_, commitErr := dying.Commit(ctx, []backend.Op{
				{Path: "a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va.Version}},
				{Path: "gone", Remove: true},
				{Path: "dir/c", Data: []byte("new c"), Write: backend.WriteOptions{IfAbsent: true}},
			})
			if _, err := f.Recover(ctx); err != nil {
				t.Fatalf("%s, cut after %d changes: recover: %v", st.name, cut, err)
			}
			got := tree(t, f, "a", "gone", "dir/c")
			if !maps.Equal(got, old) && !maps.Equal(got, updated) {
				t.Errorf("%s, cut after %d changes (commit: %v): the files are %q, neither all old nor all new", st.name, cut, commitErr, got)
			}
			if commitErr == nil && !maps.Equal(got, updated) {
				t.Errorf("%s, cut after %d changes: a commit reported done left %q", st.name, cut, got)
			}
			committed = committed || commitErr == nil
			noJournal(t, bucket, prefix, fmt.Sprintf("%s, cut after %d changes", st.name, cut))
		}
		if !committed {
			t.Errorf("%s: the transaction never committed, however late its process died", st.name)
		}
	}
}

// TestLostAppendOverETagsNotMD5: an append whose answer was lost is
// judged by the object on a store whose ETags are no MD5 of the bytes
// too: its mark on the object proves it made. Judged by the ETag as an
// MD5, an append made was IO_ERROR "may have been made", or, its body
// taken for never sent whole, STALE, which its caller answered by
// appending again.
func TestLostAppendOverETagsNotMD5(t *testing.T) {
	for i, st := range storesNotMD5 {
		for _, tc := range []struct {
			name string
			l    *losing
		}{
			{"made, 500", &losing{landed: true, status: 500}},
			{"made, cut", &losing{landed: true}},
			{"made, taken for unsent", &losing{landed: true, unread: true}},
			{"not made", &losing{status: 500}},
		} {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				name := fmt.Sprintf("lostnotmd5-%d", i)
				f, _, root := seeded(t, name, map[string]string{"log": "entry 1\n"})
				tc.l.lose = putTo(name, "log")
				err := appendEntry(&core.Tools{FS: transportFS(t, root, &notMD5{kms: st.kms, fresh: st.fresh, next: tc.l}), LockTimeout: 200 * time.Millisecond})
				if err != nil {
					t.Errorf("the append: %v; want success", err)
				}
				if got := tree(t, f, "log"); got["log"] != "entry 1\nentry 2\n" {
					t.Errorf("log holds %q, want %q", got["log"], "entry 1\nentry 2\n")
				}
			})
		}
	}
}

// TestMoveUndoneOverETagsNotMD5: a move that undoes itself after its
// deletions began (another writer changed a source first) puts back each
// source it deleted, and removes that one's copy, on a store whose ETags
// are no MD5 of the bytes too: the copy it put back at the source is its
// own, whatever its ETag. Taken for another writer's file there (its
// ETag neither the original's nor the copy's), the copy stayed, said to
// hold the only bytes of a file another writer put at the source.
func TestMoveUndoneOverETagsNotMD5(t *testing.T) {
	ctx := context.Background()
	stores := append([]storeNotMD5{{"md5", false, false}}, storesNotMD5...)
	for i, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			name := fmt.Sprintf("moveundonenotmd5-%d", i)
			f, _, root := seeded(t, name, map[string]string{"d/a": "a", "d/b": "b"})
			var rt http.RoundTripper
			if i > 0 {
				rt = &notMD5{kms: st.kms, fresh: st.fresh}
			}
			mover := transportFS(t, root, rt)
			theirsAtDelete(t, mover, f)
			_, err := mover.Rename(ctx, "d", "e", backend.WriteOptions{})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeStale || strings.Contains(e.Message, "e/a") {
				t.Errorf("the move: %v; want STALE keeping no copy of a", err)
			}
			want := map[string]string{"d/a": "a", "d/b": "theirs", "e/a": "", "e/b": ""}
			if got := tree(t, f, slices.Collect(maps.Keys(want))...); !maps.Equal(got, want) {
				t.Errorf("after the move undone: %s, want %s", brief(got), brief(want))
			}
		})
	}
}
