package core

import (
	"context"
	"testing"
	"time"
)

// stuckFS hands out a reader that blocks until released: a worker inside
// work that takes no context (a regex on a huge line).
type stuckFS struct {
	*memFS
	release chan struct{}
}

type stuckReader struct {
	FileReader
	release chan struct{}
}

func (r stuckReader) Read(b []byte) (int, error) {
	<-r.release
	return r.FileReader.Read(b)
}

func (s stuckFS) Open(ctx context.Context, p string, offset int64) (FileReader, error) {
	r, err := s.memFS.Open(ctx, p, offset)
	if err != nil {
		return nil, err
	}
	return stuckReader{r, s.release}, nil
}

// grep answers its timeout on time even when a file's search cannot be
// cancelled: the page is partial and says so (issue 8.6: a regex on a 9 MB
// line ran 14 s under --timeout 2s).
func TestGrepTimeoutHoldsInsideUncancellableWork(t *testing.T) {
	fs := stuckFS{newMemFS(map[string]string{"big.txt": "needle\n"}), make(chan struct{})}
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
