package s3fs_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3fs/s3test"
	"github.com/minio/minio-go/v7"
)

// putMany puts n objects of data at root/dir/fNNNN, 16 at once.
func putMany(t *testing.T, bucket, prefix string, n int, data []byte) {
	t.Helper()
	c, err := s3test.Client(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	slots := make(chan struct{}, 16)
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			k := fmt.Sprintf("%s/f%04d", prefix, i)
			if _, err := c.PutObject(context.Background(), bucket, k, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A search whose first file fills its page fetches a few objects ahead of
// it, not 256: its readers took files 16 at a time each, one after
// another, so that the first file's answer came once its reader had
// fetched fifteen more, and the fifteen other readers as many each
// (grep --limit 1 over 300 matching objects sent 255 GETs; the answer needs one).
func TestGrepFetchesLittleAheadOfAFullPage(t *testing.T) {
	bucket := s3test.Bucket(t)
	putMany(t, bucket, "ws/d", 300, []byte("needle\n"))
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	tl := &core.Tools{FS: f}
	for _, mode := range []string{core.ModeContent, core.ModeFiles} {
		cnt.reset()
		res, err := tl.Grep(t.Context(), core.GrepRequest{Query: "needle", Path: "d", Limit: 1, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 1 || res.Files[0].Path != "d/f0000" || res.NextOffset == nil {
			t.Fatalf("%s: files %+v, next %v; want d/f0000 and a next page", mode, res.Files, res.NextOffset)
		}
		// The pipeline holds at most 64 files listed ahead of the one
		// awaited, and 16 in its readers' hands: bounded whatever the
		// timing.
		if gets := cnt.requests[http.MethodGet]; gets > 100 {
			t.Errorf("%s: a page of one match sent %d GETs (%v)", mode, gets, cnt.requests)
		}
	}
}

// askedOnce runs each call in turn, failing the test when one asks the
// store twice the same request (method, key, query and range) or sends
// more than its max requests.
func askedOnce(t *testing.T, cnt *counter, calls []askCase) {
	t.Helper()
	for _, tc := range calls {
		cnt.reset()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if twice := cnt.twice(); len(twice) > 0 {
			t.Errorf("%s asked the store again what it had asked: %v", tc.name, twice)
		}
		if n := cnt.total(); n > tc.max {
			t.Errorf("%s sent %d requests (%v), want at most %d", tc.name, n, cnt.requests, tc.max)
		}
	}
}

type askCase struct {
	name string
	max  int // requests
	call func() error
}

// toolsAt is a workspace of a fresh bucket holding d/old ("one"), with
// its tools, and a write of content at a path through them.
func toolsAt(t *testing.T) (*core.Tools, *counter, func(p, content string) error) {
	t.Helper()
	bucket := s3test.Bucket(t)
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	tl := &core.Tools{FS: f}
	write := func(p, content string) error {
		_, err := tl.Write(t.Context(), core.WriteRequest{Path: p, Content: &content})
		return err
	}
	if err := write("d/old", "one\n"); err != nil {
		t.Fatal(err)
	}
	return tl, cnt, write
}

// A file read after a Stat is not HEADed again: a write over a file sent
// the HEAD of its Stat, of the read of its style and, when the content is
// as long, of the read that compares it (and its GET twice): 6 requests
// where 3 do; a grep of a file HEADed it for its Stat and again to read
// it: 3 where 2 do.
func TestAFileStatedIsReadWithoutAHead(t *testing.T) {
	tl, cnt, write := toolsAt(t)
	askedOnce(t, cnt, []askCase{
		{"write over a file", 3, func() error { return write("d/old", "two\n") }},
		{"write over a file, longer", 3, func() error { return write("d/old", "three\n") }},
		{"grep a file", 2, func() error {
			res, err := tl.Grep(t.Context(), core.GrepRequest{Query: "three", Path: "d/old"})
			if err == nil && len(res.Files) != 1 {
				t.Errorf("grep of d/old: files %+v, want it", res.Files)
			}
			return err
		}},
	})
}

// A new file's write and an rm do not ask again what their Stat asked: a
// new file's write listed below it and HEADed above it for its Stat and
// again before its PUT (7 requests where 5 do, 10 where 6 do in two new
// directories), and an rm HEADed the file, or the directory's name, for
// its Lstat and again to remove it (5 where 4 do, 7 where 6 do).
func TestANewFileOrARemovalIsCheckedOnce(t *testing.T) {
	tl, cnt, write := toolsAt(t)
	ctx := t.Context()
	askedOnce(t, cnt, []askCase{
		{"write a new file", 5, func() error { return write("d/new", "new\n") }},
		{"write a new file in new directories", 6, func() error { return write("e/f/new", "new\n") }},
		{"rm a file", 4, func() error {
			res, err := tl.Rm(ctx, core.RmRequest{Path: "d/new"})
			if err == nil && !res.Deleted {
				t.Error("rm of d/new: deleted false")
			}
			return err
		}},
	})
	// rm -r asks its Lstat's listing of one key again once it has deleted
	// the keys, to see that none was put meanwhile: 6 requests.
	cnt.reset()
	res, err := tl.Rm(ctx, core.RmRequest{Path: "e", Recursive: true})
	if err != nil || !res.Deleted {
		t.Fatalf("rm -r of e: %+v, %v", res, err)
	}
	if twice := cnt.twice(); len(twice) != 1 || !strings.Contains(twice[0], "max-keys=1&prefix=ws%2Fe%2F ") {
		t.Errorf("rm -r a directory asked the store again %v, want its listing of e/ alone", twice)
	}
	if n := cnt.total(); n > 6 {
		t.Errorf("rm -r a directory sent %d requests (%v), want at most 6", n, cnt.requests)
	}
	for _, p := range []string{"d/new", "e"} {
		if _, err := tl.FS.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s after its rm: %v, want NOT_FOUND", p, err)
		}
	}
	if _, err := tl.FS.Stat(ctx, "d/old"); err != nil {
		t.Errorf("d/old after the rm of d/new: %v", err)
	}
}

// A grep of a directory HEADs and lists it once: its Stat did, and its
// walk did again: 7 requests where 5 do.
func TestAGrepOfADirectoryStatsItOnce(t *testing.T) {
	tl, cnt, _ := toolsAt(t)
	askedOnce(t, cnt, []askCase{
		{"grep a directory", 5, func() error {
			res, err := tl.Grep(t.Context(), core.GrepRequest{Query: "one", Path: "d"})
			if err == nil && (len(res.Files) != 1 || res.Files[0].Path != "d/old") {
				t.Errorf("grep of d: files %+v, want d/old", res.Files)
			}
			return err
		}},
	})
}

// A write --create of a new file Stats its path once: its Stat, then the
// Lstat that looks for a link to nothing, asked the same HEAD, listing and
// HEAD above twice: 8 requests where 5 do. EXISTS costs one HEAD.
func TestACreateStatsItsPathOnce(t *testing.T) {
	tl, cnt, _ := toolsAt(t)
	create := func(p string) error {
		content := "new\n"
		_, err := tl.Write(t.Context(), core.WriteRequest{Path: p, Content: &content, Create: true})
		return err
	}
	askedOnce(t, cnt, []askCase{
		{"create a new file", 5, func() error { return create("d/new") }},
		{"create over a file", 1, func() error {
			if err := create("d/old"); codeOf(err) != fault.CodeExists {
				t.Errorf("create over d/old: %v, want EXISTS", err)
			}
			return nil
		}},
	})
}

// A move does not ask the store again what mv's Lstats asked: Rename
// HEADed the source, HEADed and listed the destination and HEADed the
// directories above it again, and a directory's move HEADed each of its
// destinations where the one listing of its destination (stillEmpty)
// finds them: 28 requests for a file moved within its directory where 24
// do, 56 for a directory of three files where 50 do. Nor does it HEAD a
// source after its copy, which the HEAD before its deletion asks again
// (TestASourceChangedDuringItsCopy), or Stat the destination once moved,
// which no caller reads: 22 and 45. Once it holds its claims, a file's
// move lists its new destination and HEADs each directory above it that
// does not hold the source too (TestMoveMeetsAShapeMadeAfterItsLstat):
// 23, and 27 to a new directory two deep.
func TestAMoveAsksOnlyWhatItNeeds(t *testing.T) {
	tl, cnt, write := toolsAt(t)
	ctx := t.Context()
	for _, p := range []string{"d/two", "d/three", "s/a", "s/b", "s/c"} {
		if err := write(p, p+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	mv := func(from, to string, overwrite bool) func() error {
		return func() error {
			_, err := tl.Mv(ctx, core.MvRequest{From: from, To: to, Overwrite: overwrite})
			return err
		}
	}
	for _, tc := range []askCase{
		{"mv a file within its directory", 23, mv("d/old", "d/new", false)},
		{"mv a file to a new directory", 27, mv("d/new", "e/f/new", false)},
		{"mv --overwrite a file over a file", 22, mv("d/two", "d/three", true)},
		{"mv a directory of three files", 45, mv("s", "t", false)},
	} {
		cnt.reset()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := cnt.total(); n > tc.max {
			t.Errorf("%s sent %d requests (%v), want at most %d", tc.name, n, cnt.requests, tc.max)
		}
	}
	for p, want := range map[string]string{"e/f/new": "one\n", "d/three": "d/two\n", "t/a": "s/a\n", "t/c": "s/c\n"} {
		if got := readAll(t, tl.FS, p); got != want {
			t.Errorf("%s after the moves: %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"d/old", "d/new", "d/two", "s"} {
		if _, err := tl.FS.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s after its move: %v, want NOT_FOUND", p, err)
		}
	}
}

// readAll is the content of the file at p.
func readAll(t *testing.T, f backend.FS, p string) string {
	t.Helper()
	r, err := f.Open(t.Context(), p)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(data)
}

// An open is one request: a GET of the object's first 64 KiB answers its
// version, size and mark as the HEAD did that went before it (a read or
// an edit of a small file sent 2 where 1 does, and the start of a larger
// one 2 too). An empty object, which a store refuses a range of (416),
// costs the second request the HEAD was.
func TestAnOpenIsOneRequest(t *testing.T) {
	bucket := s3test.Bucket(t)
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	ctx := t.Context()
	large := bytes.Repeat([]byte("0123456789abcde\n"), 200<<10/16)
	for p, data := range map[string][]byte{"small": []byte("small\n"), "large": large, "empty": nil} {
		if _, err := f.WriteFile(ctx, p, data, backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	askedOnce(t, cnt, []askCase{
		{"read a small file", 1, func() error {
			if got := readAll(t, f, "small"); got != "small\n" {
				t.Errorf("small reads %q", got)
			}
			return nil
		}},
		{"read the start of a larger file", 1, func() error {
			r, err := f.Open(ctx, "large")
			if err != nil {
				return err
			}
			defer r.Close()
			buf := make([]byte, 4096)
			if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, large[:4096]) || r.Info().Size != int64(len(large)) {
				t.Errorf("the start of large: %q (%v), size %d", buf[:16], err, r.Info().Size)
			}
			return nil
		}},
		{"read a larger file whole", 3, func() error {
			if got := readAll(t, f, "large"); got != string(large) {
				t.Errorf("large reads %d bytes, want %d", len(got), len(large))
			}
			return nil
		}},
		{"read an empty file", 2, func() error {
			if got := readAll(t, f, "empty"); got != "" {
				t.Errorf("empty reads %q", got)
			}
			return nil
		}},
	})
}

// rangeIgnored is a store that ignores the Range of a GET without
// If-Match (the open's), or of every GET when all, answering 200 with the
// whole object; it counts the bytes of those answers read.
type rangeIgnored struct {
	all  bool
	mu   sync.Mutex
	read int64
}

func (g *rangeIgnored) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || !g.all && r.Header.Get("If-Match") != "" || r.Header.Get("Range") == "" {
		return http.DefaultTransport.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Del("Range")
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, g: g}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	g *rangeIgnored
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.mu.Lock()
	b.g.read += int64(n)
	b.g.mu.Unlock()
	return n, err
}

// A store that ignores the open's Range and sends the whole object is
// read as far as the first 64 KiB: a small object whole, a larger one's
// start, the rest by its ranged GETs, never all of its answer.
func TestAnOpenOfAStoreIgnoringRange(t *testing.T) {
	bucket := s3test.Bucket(t)
	g := &rangeIgnored{}
	f := transportFS(t, "s3://"+bucket+"/ws", g)
	ctx := t.Context()
	large := bytes.Repeat([]byte("0123456789abcde\n"), 4<<20/16)
	for p, data := range map[string][]byte{"small": []byte("small\n"), "large": large} {
		if _, err := f.WriteFile(ctx, p, data, backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, f, "small"); got != "small\n" {
		t.Errorf("small reads %q", got)
	}
	g.read = 0
	r, err := f.Open(ctx, "large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Info().Size != int64(len(large)) {
		t.Errorf("large's size: %d, want %d", r.Info().Size, len(large))
	}
	buf := make([]byte, 4096)
	for _, off := range []int64{100, 64<<10 - 10, 3 << 20} {
		if n, err := r.ReadAt(buf, off); n != len(buf) || err != nil || !bytes.Equal(buf, large[off:off+4096]) {
			t.Errorf("ReadAt(%d): %d %v", off, n, err)
		}
	}
	if g.read > 64<<10 {
		t.Errorf("the open read %d bytes of the store's whole answer, want at most 64 KiB", g.read)
	}
}

// A store that ignores every Range is read right, if not cheaply: a
// window's GET, answered with the whole object, served its first bytes as
// the window's.
func TestARangedReadOfAStoreIgnoringRange(t *testing.T) {
	bucket := s3test.Bucket(t)
	f := transportFS(t, "s3://"+bucket+"/ws", &rangeIgnored{all: true})
	ctx := t.Context()
	var large []byte
	for i := range 20000 {
		large = fmt.Appendf(large, "line %06d\n", i)
	}
	if _, err := f.WriteFile(ctx, "large", large, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := f.Open(ctx, "large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 4096)
	for _, off := range []int64{64<<10 - 10, 150000} {
		if n, err := r.ReadAt(buf, off); n != len(buf) || err != nil || !bytes.Equal(buf, large[off:off+4096]) {
			t.Errorf("ReadAt(%d): %d %v, %q; want %q", off, n, err, buf[:12], large[off:off+12])
		}
	}
	if got := readAll(t, f, "large"); got != string(large) {
		t.Errorf("large reads %d bytes, not those written", len(got))
	}
}

// A read whose totalLines counts the rest of an object fetches that rest
// in one ranged GET, and a tail's count the bytes before the lines found,
// whose own are not fetched again: the stream's GETs grew from 256 KiB,
// doubling, for a caller that may stop, so that read --limit 5 of a 1 MB
// object sent 4 GETs where 2 do, and read --offset -3 5 GETs of 1.06 MB
// where 3 of the object's 1 MB do.
func TestACountFetchesTheRestAtOnce(t *testing.T) {
	bucket := s3test.Bucket(t)
	f, cnt := openFS(t, "s3://"+bucket+"/ws")
	tl := &core.Tools{FS: f}
	ctx := t.Context()
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	data := b.Bytes()
	if _, err := f.WriteFile(ctx, "big", data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data, []byte("\n"))
	for _, tc := range []struct {
		name  string
		req   core.ReadRequest
		first int
		max   int
	}{
		{"read --limit 5", core.ReadRequest{Path: "big", Limit: 5}, 1, 2},
		{"read --offset -3", core.ReadRequest{Path: "big", Offset: -3}, lines - 2, 3},
	} {
		askedOnce(t, cnt, []askCase{{tc.name, tc.max, func() error {
			res, err := tl.Read(ctx, tc.req)
			if err != nil {
				return err
			}
			if res.TextWindow == nil || res.StartLine != tc.first || res.TotalLines == nil || *res.TotalLines != lines {
				t.Errorf("%s: %+v, want line %d of %d", tc.name, res.TextWindow, tc.first, lines)
			}
			return nil
		}}})
		if cnt.bytes > int64(len(data)) {
			t.Errorf("%s fetched %d bytes of an object of %d", tc.name, cnt.bytes, len(data))
		}
	}
}
