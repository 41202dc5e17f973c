package core

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/memfs"
)

// cutInsideFS serves the first n bytes of the file at rel at once, then
// holds its reads until release is closed: a large file whose search the
// deadline overtakes, past its first match, in the walk (a directory's
// search) or opened alone (a search of the one file).
type cutInsideFS struct {
	*memfs.FS
	rel     string
	n       int
	release chan struct{}
}

type cutInsideReader struct {
	backend.FileReader
	left    *int
	release chan struct{}
}

func (r cutInsideReader) Read(b []byte) (int, error) {
	if *r.left == 0 {
		<-r.release
		return r.FileReader.Read(b)
	}
	n, err := r.FileReader.Read(b[:min(len(b), *r.left)])
	*r.left -= n
	return n, err
}

func (c cutInsideFS) held(r backend.FileReader) backend.FileReader {
	left := c.n
	return cutInsideReader{r, &left, c.release}
}

func (c cutInsideFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := c.FS.Open(ctx, p)
	if err != nil || p != c.rel {
		return r, err
	}
	return c.held(r), nil
}

func (c cutInsideFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return c.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if e.Rel == c.rel {
			e.Later, e.Open = nil, func() (io.ReadCloser, error) { return c.Open(ctx, e.Path) }
		}
		return visit(e)
	})
}

// A deadline that falls inside the only file searched, or the last one,
// keeps the matches found in it before the deadline, as a deadline
// between two files keeps the first's: the page is cut short (timedOut),
// and goes on from there. It answered count 0 and "nothing was found
// before the timeout" of a 300 MB log whose first line matched, in content
// and count modes, and left the timeout's marking to chance, where the
// searcher handed its partial result over before the deadline was seen.
func TestTimeoutInsideAFileKeepsItsMatchesBefore(t *testing.T) {
	filler := strings.Repeat("some log line without it\n", 2*readChunk/25)
	text := "needle at start\n" + filler + "needle at end\n"
	for _, path := range []string{"big.txt", "."} {
		for _, mode := range []string{ModeContent, ModeCount} {
			t.Run(path+" "+mode, func(t *testing.T) {
				t.Parallel()
				fs := cutInsideFS{memfs.New(map[string]string{"big.txt": text}), "big.txt", readChunk, make(chan struct{})}
				tl := &Tools{FS: fs}
				req := GrepRequest{Query: "needle", Path: path, Mode: mode, Timeout: Duration(stallTimeout)}
				res, err := tl.Grep(context.Background(), req)
				close(fs.release)
				if err != nil {
					t.Fatal(err)
				}
				if !res.TimedOut || len(res.Files) != 1 || res.Files[0].Path != "big.txt" || res.FilesSearched != 1 {
					t.Fatalf("timedOut %v, filesSearched %d, files %+v, hint %q; want big.txt's first match, timed out", res.TimedOut, res.FilesSearched, res.Files, res.Hint)
				}
				if mode == ModeCount {
					if res.Count != 1 || res.Files[0].Count != 1 || !strings.Contains(res.Hint, "big.txt") {
						t.Errorf("count %d, file's count %d, hint %q; want 1, 1 and a hint naming big.txt as counted in part", res.Count, res.Files[0].Count, res.Hint)
					}
					return
				}
				if res.Count != 1 || len(res.Files[0].Blocks) != 1 || res.Files[0].Blocks[0].Lines[0] != "needle at start" {
					t.Fatalf("count %d, blocks %+v; want the first line alone", res.Count, res.Files[0].Blocks)
				}
				// The continuation goes on past it: nextCursor in a
				// directory, nextOffset in the one file.
				next := GrepRequest{Query: "needle", Path: path, Cursor: res.NextCursor}
				if path == "big.txt" {
					if res.NextOffset == nil || *res.NextOffset != 1 {
						t.Fatalf("nextOffset %v; want 1", res.NextOffset)
					}
					next.Offset = 1
				} else if res.NextCursor == "" {
					t.Fatal("no nextCursor")
				}
				tl.FS = memfs.New(map[string]string{"big.txt": text})
				more, err := tl.Grep(context.Background(), next)
				if err != nil {
					t.Fatal(err)
				}
				if more.TimedOut || more.Count != 1 || more.Files[0].Blocks[0].Lines[0] != "needle at end" {
					t.Errorf("the next page: count %d, files %+v; want the last line alone", more.Count, more.Files)
				}
			})
		}
	}
}
