package core

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// stuckFS hands out a reader that blocks until released: a worker inside
// work that takes no context (a regex on a huge line).
type stuckFS struct {
	*memfs.FS
	release chan struct{}
}

type stuckReader struct {
	backend.FileReader

	release chan struct{}
}

func (r stuckReader) Read(b []byte) (int, error) {
	<-r.release
	return r.FileReader.Read(b)
}

func (s stuckFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := s.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return stuckReader{r, s.release}, nil
}

// grep answers its timeout on time even when a file's search cannot be
// cancelled: the page is partial and says so (issue 8.6: a regex on a 9 MB
// line ran 14 s under --timeout 2s).
func TestGrepTimeoutHoldsInsideUncancellableWork(t *testing.T) {
	fs := stuckFS{memfs.New(map[string]string{"big.txt": "needle\n"}), make(chan struct{})}
	defer close(fs.release)
	tl := &Tools{FS: fs}
	got := make(chan *GrepResult, 1)
	errs := make(chan error, 1)
	go func() {
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: "big.txt", Timeout: Duration(50 * time.Millisecond)})
		if err != nil {
			errs <- err
			return
		}
		got <- res
	}()
	select {
	case res := <-got:
		if !res.TimedOut || res.Count != 0 || res.NextOffset == nil {
			t.Errorf("want a partial, timed-out page, got timedOut=%v count=%d", res.TimedOut, res.Count)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("grep waited for a search that cannot be cancelled, past its timeout")
	}
}

// failingTreeFS is a tree whose file number bad cannot be opened, with
// err.
type failingTreeFS struct {
	treeFS
	bad int
	err error
}

func (f *failingTreeFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	i := 0
	return f.treeFS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if i++; i-1 == f.bad {
			e.Open = func() (io.ReadCloser, error) { return nil, f.err }
		}
		return visit(e)
	})
}

// A file that cannot be opened for a reason other than its being gone,
// special or unreadable (EMFILE, EIO) fails the search: it is never
// skipped into a smaller answer with exit 0 (issue 8.9).
func TestGrepNeverSkipsAnIOError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		fail bool
	}{
		{fault.Errorf(fault.CodeIOError, "too many open files."), true},
		{fault.Errorf(fault.CodeNotFound, "gone."), false},
		{fault.Errorf(fault.CodePermissionDenied, "unreadable."), false},
	} {
		tl := &Tools{FS: &failingTreeFS{treeFS: treeFS{files: 5}, bad: 2, err: tc.err}}
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "match", Mode: ModeCount})
		if tc.fail {
			if fault.AsError(err).Code != fault.CodeIOError {
				t.Errorf("%v: want the search to fail with IO_ERROR, got %v", tc.err, err)
			}
			continue
		}
		if err != nil || res.Count != 4 {
			t.Errorf("%v: want the file skipped and 4 matches, got %v, %v", tc.err, res, err)
		}
	}
}

// skipAllBut is an index that proves every file but the one at rel
// cannot match, file by file as the walk visits it.
type skipAllBut struct{ rel string }

func (s skipAllBut) Narrow(context.Context, IndexQuery) (*Narrowing, error) {
	return &Narrowing{Judge: func(rel string, _ backend.FileInfo) Verdict { return Verdict{Skip: rel != s.rel} }}, nil
}

// stalledWalkFS walks its first n entries, then waits for release: a walk
// through a big tree that the timeout overtakes.
// stallTimeout is the --timeout of a search whose walk stalls: what it
// reaches before the stall (a few files, 100 entries) must be done within
// it on a loaded machine too (CI's, running every package at once, missed
// 100 ms), and every such search waits it out.
const stallTimeout = time.Second

type stalledWalkFS struct {
	*memfs.FS
	n       int
	release chan struct{}
}

func (s stalledWalkFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	n := 0
	return s.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if n++; n > s.n {
			select {
			case <-s.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return visit(e)
	})
}

// A count page the timeout cuts short keeps the next page it found before
// then: its files are whole, its totals partial (the hint says so). It
// dropped it, and a caller following nextOffset stopped after the first
// page of a count with thousands of files. One that did not fill gives no
// continuation: the next call would stop where this one did.
func TestTimedOutCountPageKeepsItsNextPage(t *testing.T) {
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("f%04d.txt", i)] = "needle\n"
	}
	release := make(chan struct{})
	defer close(release)
	tl := &Tools{FS: stalledWalkFS{memfs.New(files), 100, release}}
	for _, tc := range []struct {
		limit int
		next  bool
	}{{10, true}, {1000, false}} {
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Mode: ModeCount, Limit: tc.limit, Timeout: Duration(stallTimeout)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || (res.NextOffset != nil) != tc.next || tc.next && (*res.NextOffset != 10 || len(res.Files) != 10) {
			t.Errorf("limit %d: timed out %v, %d files, next %v; want a next page: %v", tc.limit, res.TimedOut, len(res.Files), res.NextOffset, tc.next)
		}
		if !strings.Contains(res.Hint, "the counts are partial") {
			t.Errorf("limit %d: hint %q", tc.limit, res.Hint)
		}
	}
}

// listedIndex lists every file of rels, those not named z.txt skipped.
type listedIndex struct{ rels []string }

func (l listedIndex) Narrow(context.Context, IndexQuery) (*Narrowing, error) {
	var files []IndexedFile
	for _, r := range l.rels {
		files = append(files, IndexedFile{Rel: r, Verdict: Verdict{Skip: !strings.HasSuffix(r, "/z.txt")}})
	}
	return &Narrowing{Files: files}, nil
}

// A page the timeout cuts short counts the files the index let it skip
// before then and resumes after them, as a scan does: skipped files were
// gathered into one item until a file to search came, or the walk ended,
// and a page of a slow walk timed out having searched none, with no
// cursor to go on. The walk here stalls after 100 entries; runs of a walk
// hold 16 files.
func TestTimedOutPageCountsSkippedFiles(t *testing.T) {
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("f%04d.txt", i)] = "nothing\n"
	}
	release := make(chan struct{})
	defer close(release)
	tl := &Tools{FS: stalledWalkFS{memfs.New(files), 100, release}, Index: skipAllBut{"f0499.txt"}}
	res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Timeout: Duration(stallTimeout)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.FilesSearched != 96 || res.NextCursor == "" {
		t.Fatalf("timed out %v after %d files, cursor %q; want 96 files (six runs of 16) and a cursor", res.TimedOut, res.FilesSearched, res.NextCursor)
	}
}

// From the index's list: the files skipped before a file to search that
// the timeout overtakes are counted. A run went in one batch with the
// files after it, and waited for them.
func TestTimedOutListedPageCountsSkippedFiles(t *testing.T) {
	files := map[string]string{}
	var rels []string
	for k := range 4 {
		for i := range 100 {
			r := fmt.Sprintf("c%d/a%03d.txt", k, i)
			files[r], rels = "nothing\n", append(rels, r)
		}
		r := fmt.Sprintf("c%d/z.txt", k)
		files[r], rels = "needle\n", append(rels, r)
	}
	release := make(chan struct{})
	defer close(release)
	tl := &Tools{FS: stuckFS{memfs.New(files), release}, Index: listedIndex{rels}}
	res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Timeout: Duration(stallTimeout)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.FilesSearched != 100 || res.NextCursor == "" {
		t.Fatalf("timed out %v after %d files, cursor %q; want the 100 skipped before c0/z.txt and a cursor", res.TimedOut, res.FilesSearched, res.NextCursor)
	}
}

// walkAheadFS reports an unreadable directory z after its files, and holds
// every read until the walk has ended: a walk that ran ahead of the page.
type walkAheadFS struct {
	*memfs.FS
	walked chan struct{}
}

func (w walkAheadFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	err := w.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		open := e.Open
		e.Later, e.Open = nil, func() (io.ReadCloser, error) {
			r, err := open()
			if err != nil {
				return nil, err
			}
			return heldReader{r, w.walked}, nil
		}
		return visit(e)
	})
	if err == nil && o.Unreadable != nil {
		o.Unreadable("z", "z")
	}
	close(w.walked)
	return err
}

type heldReader struct {
	io.ReadCloser
	walked chan struct{}
}

func (h heldReader) Read(b []byte) (int, error) {
	<-h.walked
	return h.ReadCloser.Read(b)
}

// A page cut by its limit counts the unreadable directories the walk met
// before its last file, and the next page those after it: each counted
// once, the same on every run. Counted as the walk met them, ahead of the
// page, the first page counted z or not by chance, and --exit-status
// exited 4 or 0 for one call.
func TestCutPageCountsUnreadableBeforeItsEnd(t *testing.T) {
	files := map[string]string{"a.txt": "needle\n", "b.txt": "needle\n"}
	for _, mode := range []string{ModeContent, ModeFiles} {
		tl := &Tools{FS: walkAheadFS{memfs.New(files), make(chan struct{})}}
		first, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Mode: mode, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if first.Unreadable != 0 || first.NextCursor == "" {
			t.Errorf("%s: the first page counts %d unreadable (cursor %q), want 0: z comes after its end", mode, first.Unreadable, first.NextCursor)
		}
		tl.FS = walkAheadFS{memfs.New(files), make(chan struct{})}
		second, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Mode: mode, Limit: 1, Cursor: first.NextCursor})
		if err != nil {
			t.Fatal(err)
		}
		if second.Unreadable != 1 {
			t.Errorf("%s: the second page counts %d unreadable, want 1", mode, second.Unreadable)
		}
	}
}

// silentIndex is an index whose watcher does not answer: its question
// waits for its context, or gives up after a while, as the 2 s wait of a
// stopped watcher.
type silentIndex struct{ gaveUp time.Duration }

func (s silentIndex) Narrow(ctx context.Context, _ IndexQuery) (*Narrowing, error) {
	t := time.NewTimer(s.gaveUp)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, nil
	}
}

// The index's question counts in --timeout: a search of --timeout 10ms
// whose watcher does not answer times out. It waited for the watcher's 2
// s outside the timeout, then answered a whole page.
func TestTimeoutCountsTheIndexsQuestion(t *testing.T) {
	tl := &Tools{FS: memfs.New(map[string]string{"a.txt": "needle\n"}), Index: silentIndex{2 * time.Second}}
	res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Timeout: Duration(10 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Errorf("a search whose index did not answer: timed out %v, %d files; want timedOut", res.TimedOut, res.FilesSearched)
	}
}

// countingFS counts the bytes its files' readers hand out.
type countingFS struct {
	*memfs.FS
	read *int64
}

type countingReader struct {
	backend.FileReader
	read *int64
}

func (r countingReader) Read(b []byte) (int, error) {
	n, err := r.FileReader.Read(b)
	*r.read += int64(n)
	return n, err
}

func (c countingFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := c.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return countingReader{r, c.read}, nil
}

// grep's files mode lists a file once it matches, as rg -l does: the
// search stops at the first matching line. It read every file to its end,
// so a match on line 1 of a 500 MB object downloaded all of it from a
// store; a count still reads to the end.
func TestGrepFilesModeStopsAtTheFirstMatch(t *testing.T) {
	const size = 16 << 20
	body := "needle\n" + strings.Repeat("hay and more hay, line after line\n", size/34)
	for _, tc := range []struct {
		mode     string
		whole    bool
		longLine bool
	}{{ModeFiles, false, false}, {ModeFiles, false, true}, {ModeCount, true, false}} {
		text := body
		if tc.longLine {
			// A first line longer than the search's buffer.
			text = strings.Repeat("x", 9<<20) + "needle\n" + body
		}
		var read int64
		tl := &Tools{FS: countingFS{memfs.New(map[string]string{"big.txt": text}), &read}}
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: "big.txt", Mode: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 1 || res.Files[0].Path != "big.txt" {
			t.Fatalf("%s: files %+v, want big.txt", tc.mode, res.Files)
		}
		if whole := read == int64(len(text)); whole != tc.whole || read > int64(len(text)) {
			t.Errorf("%s (long first line %v): read %d bytes of %d; want the whole file: %v", tc.mode, tc.longLine, read, len(text), tc.whole)
		}
	}
}
