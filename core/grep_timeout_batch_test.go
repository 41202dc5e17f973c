package core

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/memfs"
)

// stuckAtFS holds the reads of the file at rel until release is closed: a
// worker inside work that takes no context (a regex on a huge line).
type stuckAtFS struct {
	*memfs.FS
	rel     string
	release chan struct{}
}

func (s stuckAtFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return s.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if e.Rel == s.rel {
			open := e.Open
			e.Later, e.Open = nil, func() (io.ReadCloser, error) {
				r, err := open()
				if err != nil {
					return nil, err
				}
				return heldReader{r, s.release}, nil
			}
		}
		return visit(e)
	})
}

// A page the timeout cuts while a file is being searched keeps the files
// searched before it, in its batch too, and the next page goes on from
// there: it answered count 0, filesSearched 0 and "nothing was found
// before the timeout" of a tree whose first file matched, searched to
// its end, because a larger file after it (a log of gigabytes) was in
// the same batch of 16.
func TestTimedOutPageKeepsTheFilesBeforeTheCut(t *testing.T) {
	files := map[string]string{"a.txt": "needle a\n", "b.txt": "needle b\n"}
	fs := stuckAtFS{memfs.New(files), "b.txt", make(chan struct{})}
	tl := &Tools{FS: fs}
	first, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Timeout: Duration(50 * time.Millisecond)})
	close(fs.release)
	if err != nil {
		t.Fatal(err)
	}
	if !first.TimedOut || first.Count != 1 || first.FilesSearched != 1 || len(first.Files) != 1 || first.Files[0].Path != "a.txt" || first.NextCursor == "" {
		t.Fatalf("timedOut %v, count %d, filesSearched %d, files %+v, cursor %q; want a.txt's match and a cursor", first.TimedOut, first.Count, first.FilesSearched, first.Files, first.NextCursor)
	}
	tl.FS = memfs.New(files)
	next, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if next.TimedOut || len(next.Files) != 1 || next.Files[0].Path != "b.txt" {
		t.Errorf("the next page: %+v; want b.txt's match alone", next.Files)
	}
}
