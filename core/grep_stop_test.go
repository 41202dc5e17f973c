package core

import (
	"context"
	"io"
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
