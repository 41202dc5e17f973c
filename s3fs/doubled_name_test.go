package s3fs_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// A store may hold a key that is both a file and a prefix (a and a/b),
// which versitygw's disk cannot: these tests put name_ on its disk and
// list it as name, through renamingList.

// renamingList serves every listing of the bucket with the key from named
// to.
type renamingList struct{ from, to string }

func (s *renamingList) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || !r.URL.Query().Has("list-type") {
		return resp, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	data = bytes.ReplaceAll(data, []byte("<Key>"+s.from+"</Key>"), []byte("<Key>"+s.to+"</Key>"))
	data = bytes.ReplaceAll(data, []byte("<Key>"+url.QueryEscape(s.from)+"</Key>"), []byte("<Key>"+url.QueryEscape(s.to)+"</Key>"))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// doubled is a workspace holding name as a file and as a directory of two
// files, and z.
func doubled(t *testing.T, name string) *s3fs.FS {
	t.Helper()
	bucket := s3test.Bucket(t)
	onDisk(t, bucket, name+"/1", name+"/2", name+"_", "z")
	return transportFS(t, "s3://"+bucket+"/ws", &renamingList{from: "ws/" + name + "_", to: "ws/" + name})
}

// onDisk puts a file at each key below ws/ of bucket on the server's disk,
// behind its back (skipping t when that disk is unknown).
func onDisk(t *testing.T, bucket string, keys ...string) {
	t.Helper()
	dir := s3test.Dir(t)
	for _, k := range keys {
		p := filepath.Join(dir, bucket, "ws", k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walkFrom is what a walk resumed at from visits, as rel:type.
func walkFrom(t *testing.T, f *s3fs.FS, from string) []string {
	t.Helper()
	var seen []string
	err := f.Walk(context.Background(), ".", backend.WalkOptions{From: from}, func(e backend.WalkEntry) error {
		seen = append(seen, fmt.Sprintf("%s:%s", e.Rel, e.Type))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen
}

// A file and a directory of one name are walked file first, whatever the
// name (a.b was held back until a.b/ was listed, which went before it),
// and a walk resumed at any entry goes on from the first of its path: one
// resumed below a/ took the file a for the directory on its path, and
// visited and walked the directory again from its start.
func TestWalkOfAFileAndADirectoryOfOneName(t *testing.T) {
	for _, name := range []string{"a", "a.b"} {
		t.Run(name, func(t *testing.T) {
			f := doubled(t, name)
			all := walkFrom(t, f, "")
			want := []string{name + ":file", name + ":dir", name + "/1:file", name + "/2:file", "z:file"}
			if !slices.Equal(all, want) {
				t.Fatalf("the whole walk saw %q, want %q", all, want)
			}
			for _, rel := range []string{name, name + "/1", name + "/2", "z"} {
				k := slices.IndexFunc(all, func(s string) bool { return strings.HasPrefix(s, rel+":") })
				if got := walkFrom(t, f, rel); !slices.Equal(got, all[k:]) {
					t.Errorf("the walk resumed at %s saw %q, want %q", rel, got, all[k:])
				}
			}
		})
	}
}

// find paged by cursor over a file and a directory of one name lists each
// once and ends: a cursor after the second, resuming at the first, skipped
// only it and gave the second again, page after page at limit 1.
func TestFindPagesByCursorOverAFileAndADirectoryOfOneName(t *testing.T) {
	for _, name := range []string{"a", "a.b"} {
		for _, limit := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, limit), func(t *testing.T) {
				tl := &core.Tools{FS: doubled(t, name), MaxBytes: 64 << 20}
				var got []string
				cur := ""
				for page := 0; ; page++ {
					if page > 20 {
						t.Fatalf("no end after 20 pages: %q", got)
					}
					res, err := tl.Find(context.Background(), core.FindRequest{Pattern: "**", Path: ".", Limit: limit, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range res.Results {
						got = append(got, e.Path+":"+e.Type)
					}
					if res.NextCursor == "" {
						break
					}
					cur = res.NextCursor
				}
				want := []string{name + ":", name + ":dir", name + "/1:", name + "/2:", "z:"}
				if !slices.Equal(got, want) {
					t.Errorf("paged %q, want %q", got, want)
				}
			})
		}
	}
}

// ls and find of a name that is a file and a directory both list the
// directory: they were NOT_A_DIRECTORY, its hint to read the file, and no
// path named the directory (d/ is d), though find . lists it.
func TestLsOfAFileThatIsADirectoryToo(t *testing.T) {
	_, _, root := seeded(t, "lsdoubled", map[string]string{"d/1": "one", "d/2": "two"})
	always := func(*http.Request) bool { return true }
	tl := &core.Tools{FS: transportFS(t, root, &putMeanwhile{at: always, file: "d"})}
	for _, p := range []string{"d", "d/"} {
		res, err := tl.Ls(t.Context(), core.LsRequest{Path: p})
		if err != nil {
			t.Fatalf("ls %s: %v", p, err)
		}
		var names []string
		for _, e := range res.Entries {
			names = append(names, e.Name)
		}
		if want := []string{"1", "2"}; !slices.Equal(names, want) {
			t.Errorf("ls %s listed %q, want %q", p, names, want)
		}
	}
	res, err := tl.Find(t.Context(), core.FindRequest{Pattern: "**", Path: "d"})
	if err != nil {
		t.Fatalf("find d: %v", err)
	}
	if len(res.Results) != 2 {
		t.Errorf("find d found %+v, want d/1 and d/2", res.Results)
	}
}

// rm -r of a name that is a file and a directory both removes both: it
// removed the file alone, answered deleted, and left the directory, whose
// files find still listed. A denied location below the directory refuses
// it before anything is removed.
func TestRmRecursiveOfAFileThatIsADirectoryToo(t *testing.T) {
	files := map[string]string{"d/1": "one", "d/e/2": "two", "k": "keep"}
	always := func(*http.Request) bool { return true }
	for _, deny := range []string{"", "d/e"} {
		name := "rmdoubled" + strings.ReplaceAll(deny, "/", "")
		f, _, root := seeded(t, name, files)
		var denied []string
		if deny != "" {
			denied = []string{deny}
		}
		access, secret := s3test.Keys()
		fs, err := s3fs.New(s3fs.Config{Root: root, Endpoint: s3test.Endpoint(t), AccessKey: access, SecretKey: secret,
			Transport: &putMeanwhile{at: always, file: "d"}, Deny: denied})
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&core.Tools{FS: fs}).Rm(t.Context(), core.RmRequest{Path: "d", Recursive: true})
		want := map[string]string{"d/1": "", "d/e/2": "", "k": "keep"}
		if deny != "" {
			if codeOf(err) != fault.CodeDenied {
				t.Errorf("deny %s: rm -r d returned %+v, %v; want DENIED", deny, res, err)
			}
			want = files
		} else if err != nil || !res.Deleted {
			t.Fatalf("rm -r d returned %+v, %v", res, err)
		}
		if got := tree(t, f, "d/1", "d/e/2", "k"); !maps.Equal(got, want) {
			t.Errorf("deny %q: after rm -r d: %q, want %q", deny, got, want)
		}
	}
}

// logged passes requests on to next (the default transport when nil) and
// keeps the changes among them (method and key, a batch delete as
// POST ?delete).
type logged struct {
	next    http.RoundTripper
	mu      sync.Mutex
	changes []string
}

func (l *logged) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		l.mu.Lock()
		l.changes = append(l.changes, r.Method+" "+cmp.Or(r.URL.Opaque, r.URL.Path)+"?"+r.URL.RawQuery)
		l.mu.Unlock()
	}
	return cmp.Or[http.RoundTripper](l.next, http.DefaultTransport).RoundTrip(r)
}

func (l *logged) deletes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d []string
	for _, c := range l.changes {
		if strings.HasPrefix(c, http.MethodDelete) || strings.HasPrefix(c, http.MethodPost) {
			d = append(d, c)
		}
	}
	return d
}

// rm -r of a name that is a file and a directory both, under a
// precondition the caller read from the file, is INVALID_ARGUMENT, nothing
// removed, as the recursive removal of a directory under one is: the
// precondition held for the file, and the directory below it, which no
// read covered, was removed with it. Without -r the file alone is removed,
// under the precondition.
func TestRmRecursiveOfAFileThatIsADirectoryTooUnderAPrecondition(t *testing.T) {
	files := map[string]string{"d/1": "one", "d/e/2": "two"}
	f, _, root := seeded(t, "rmdoubledpre", files)
	always := func(*http.Request) bool { return true }
	log := &logged{next: &putMeanwhile{at: always, file: "d"}}
	tl := &core.Tools{FS: transportFS(t, root, log)}
	fi, err := tl.FS.Stat(t.Context(), "d")
	if err != nil || fi.Type != backend.TypeFile {
		t.Fatalf("stat d: %+v, %v", fi, err)
	}
	res, err := tl.Rm(t.Context(), core.RmRequest{Path: "d", Recursive: true, Precondition: core.Precondition{ExpectedVersion: fi.Version}})
	if codeOf(err) != fault.CodeInvalidArgument {
		t.Errorf("rm -r d --expected-version: %+v, %v; want INVALID_ARGUMENT", res, err)
	}
	if d := log.deletes(); len(d) > 0 {
		t.Errorf("rm -r d --expected-version sent %q, want no deletion", d)
	}
	if got := tree(t, f, "d/1", "d/e/2"); !maps.Equal(got, files) {
		t.Errorf("after rm -r d --expected-version: %q, want %q", got, files)
	}
}

// A final slash names the directory of a name that is a file and a
// directory both, as it does for ls and find: grep d/ searched nothing and
// rm -r d/ removed nothing, NOT_A_DIRECTORY saying to drop the slash,
// which named the file. rm -r d/ removes the directory and leaves the
// file.
func TestAFinalSlashNamesTheDirectoryOfAFileThatIsADirectoryToo(t *testing.T) {
	files := map[string]string{"d/1": "one", "d/2": "two"}
	f, _, root := seeded(t, "slashdoubled", files)
	always := func(*http.Request) bool { return true }
	log := &logged{next: &putMeanwhile{at: always, file: "d"}}
	tl := &core.Tools{FS: transportFS(t, root, log)}
	g, err := tl.Grep(t.Context(), core.GrepRequest{Pattern: "one", Path: "d/"})
	if err != nil {
		t.Fatalf("grep one d/: %v", err)
	}
	if len(g.Files) != 1 || g.Files[0].Path != "d/1" {
		t.Errorf("grep one d/ found %+v, want d/1", g.Files)
	}
	if _, err := tl.Rm(t.Context(), core.RmRequest{Path: "d/"}); codeOf(err) != fault.CodeNotEmpty {
		t.Errorf("rm d/: %v, want NOT_EMPTY", err)
	}
	res, err := tl.Rm(t.Context(), core.RmRequest{Path: "d/", Recursive: true})
	if err != nil || !res.Deleted {
		t.Fatalf("rm -r d/: %+v, %v", res, err)
	}
	if got, want := tree(t, f, "d/1", "d/2"), map[string]string{"d/1": "", "d/2": ""}; !maps.Equal(got, want) {
		t.Errorf("after rm -r d/: %q, want %q", got, want)
	}
	for _, d := range log.deletes() {
		if strings.HasSuffix(d, "/d?") {
			t.Errorf("rm -r d/ sent %s, which removes the file d", d)
		}
	}
}

// mv d/ of a name that is a file and a directory both moves the directory
// and leaves the file, as rm -r d/ removes it: the final slash names the
// directory.
func TestMoveOfAFinalSlashMovesTheDirectoryOfAFileThatIsADirectoryToo(t *testing.T) {
	f, _, root := seeded(t, "mvslashdoubled", map[string]string{"d/1": "one", "d/2": "two"})
	always := func(*http.Request) bool { return true }
	log := &logged{next: &putMeanwhile{at: always, file: "d"}}
	tl := &core.Tools{FS: transportFS(t, root, log)}
	if _, err := tl.Mv(t.Context(), core.MvRequest{From: "d/", To: "e"}); err != nil {
		t.Fatalf("mv d/ e: %v", err)
	}
	want := map[string]string{"d/1": "", "d/2": "", "e/1": "one", "e/2": "two", "e": "dir"}
	if got := tree(t, f, "d/1", "d/2", "e/1", "e/2", "e"); !maps.Equal(got, want) {
		t.Errorf("after mv d/ e: %q, want %q", got, want)
	}
	for _, c := range log.changes {
		if strings.Contains(c, "/d?") {
			t.Errorf("mv d/ e sent %s, which changes the file d", c)
		}
	}
}

// heavyMarker serves every listing with the marker key (a directory's
// key with its final /) as holding size bytes, as another tool may put it
// (versitygw's disk cannot: it refuses such a PUT,
// DirectoryObjectContainsData).
type heavyMarker struct {
	key  string
	size int
}

func (h *heavyMarker) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || !r.URL.Query().Has("list-type") {
		return resp, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, k := range []string{h.key, url.QueryEscape(h.key)} {
		re := regexp.MustCompile(`(<Key>` + regexp.QuoteMeta(k) + `</Key>(?:[^<]|<[^/S]|</[^C])*?<Size>)0(</Size>)`)
		data = re.ReplaceAll(data, []byte(fmt.Sprintf("${1}%d${2}", h.size)))
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// A directory whose marker holds bytes (another tool put p/e/ with a
// body) is not removed, nor moved, by rm, rm -r, rm -r of a directory
// above it or mv, nor replaced by a move onto it: the marker's bytes,
// which ls, find and read never show, were deleted with it (a move put an
// empty marker at its destination), answered deleted or moved. NOT_SUPPORTED names the marker and its size,
// nothing changed.
func TestADirectoryMarkerHoldingBytesIsNotDeletedUnseen(t *testing.T) {
	f, _, root := seeded(t, "heavymarker", map[string]string{"p/e/x": "x", "p/y": "y", "s/x": "x"})
	for _, p := range []string{"p/e/x", "s/x"} {
		if _, err := f.Remove(t.Context(), p, backend.RemoveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	log := &logged{next: &heavyMarker{key: "heavymarker/p/e/", size: 12}}
	tl := &core.Tools{FS: transportFS(t, root, log)}
	ls, err := tl.Ls(t.Context(), core.LsRequest{Path: "p/e"})
	if err != nil || len(ls.Entries) != 0 {
		t.Fatalf("ls p/e: %+v, %v; want an empty directory", ls, err)
	}
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"rm p/e", func() error { _, err := tl.Rm(t.Context(), core.RmRequest{Path: "p/e"}); return err }},
		{"rm p/e/", func() error { _, err := tl.Rm(t.Context(), core.RmRequest{Path: "p/e/"}); return err }},
		{"rm -r p/e", func() error { _, err := tl.Rm(t.Context(), core.RmRequest{Path: "p/e", Recursive: true}); return err }},
		{"rm -r p", func() error { _, err := tl.Rm(t.Context(), core.RmRequest{Path: "p", Recursive: true}); return err }},
		{"mv p/e q", func() error { _, err := tl.Mv(t.Context(), core.MvRequest{From: "p/e", To: "q"}); return err }},
		{"mv p r", func() error { _, err := tl.Mv(t.Context(), core.MvRequest{From: "p", To: "r"}); return err }},
		{"mv --overwrite s p/e", func() error {
			_, err := tl.Mv(t.Context(), core.MvRequest{From: "s", To: "p/e", Overwrite: true})
			return err
		}},
	} {
		err := c.do()
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeNotSupported || e.Path != "p/e" || !strings.Contains(e.Message, "12 bytes") {
			t.Errorf("%s: %v; want NOT_SUPPORTED at p/e naming its 12 bytes", c.name, err)
		}
		if d := log.deletes(); len(d) > 0 {
			t.Fatalf("%s sent %q, want no deletion", c.name, d)
		}
	}
	if got, want := tree(t, f, "p/e", "p/y", "q", "r", "s"), map[string]string{"p/e": "dir", "p/y": "y", "q": "", "r": "", "s": "dir"}; !maps.Equal(got, want) {
		t.Errorf("after the refusals: %q, want %q", got, want)
	}
}

// putAtBatch puts key (in the bucket) with the bytes data by its own
// client just before the first batch delete goes on to next: another
// writer's file, put after the removal listed the directory.
type putAtBatch struct {
	t         *testing.T
	next      http.RoundTripper
	bucket    string
	key, data string
	once      sync.Once
}

func (p *putAtBatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		p.once.Do(func() {
			c, err := s3test.Client(s3test.Endpoint(p.t))
			if err == nil {
				_, err = c.PutObject(r.Context(), p.bucket, p.key, strings.NewReader(p.data), int64(len(p.data)), minio.PutObjectOptions{})
			}
			if err != nil {
				p.t.Errorf("put %s meanwhile: %v", p.key, err)
			}
		})
	}
	return cmp.Or[http.RoundTripper](p.next, http.DefaultTransport).RoundTrip(r)
}

// rm -r of a directory, or of a name that is a file and a directory both,
// into which another writer puts a file after the removal listed it, is
// NOT_EMPTY, as on a disk, the file kept: it answered deleted, and the
// directory was still there, holding that file.
func TestRmRecursiveMeetsAFilePutMeanwhile(t *testing.T) {
	for _, doubled := range []bool{false, true} {
		t.Run(fmt.Sprint("doubled=", doubled), func(t *testing.T) {
			name := fmt.Sprint("rmmeanwhile", doubled)
			f, bucket, root := seeded(t, name, map[string]string{"d/1": "one", "d/e/2": "two", "k": "keep"})
			var next http.RoundTripper
			if doubled {
				next = &putMeanwhile{at: func(*http.Request) bool { return true }, file: "d"}
			}
			tl := &core.Tools{FS: transportFS(t, root, &putAtBatch{t: t, next: next, bucket: bucket, key: name + "/d/new.txt", data: "new"})}
			res, err := tl.Rm(t.Context(), core.RmRequest{Path: "d", Recursive: true})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotEmpty || e.Path != "d" || !strings.Contains(e.Message, "d/new.txt") {
				t.Errorf("rm -r d: %+v, %v; want NOT_EMPTY at d naming d/new.txt", res, err)
			}
			want := map[string]string{"d/1": "", "d/e/2": "", "d/new.txt": "new", "k": "keep"}
			if got := tree(t, f, "d/1", "d/e/2", "d/new.txt", "k"); !maps.Equal(got, want) {
				t.Errorf("after rm -r d: %q, want %q", got, want)
			}
		})
	}
}
