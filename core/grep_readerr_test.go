package core

import (
	"context"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// eioFS is a tree whose file bad opens, and then fails its first read as a
// failing disk does: with the raw error of the system, naming the absolute
// path. With reopen, only its opens by path fail (a page's search of it
// again), not the walk's.
type eioFS struct {
	*memfs.FS
	bad    string
	reopen bool
}

// eioReader reads nothing: its read fails.
type eioReader struct{ backend.FileReader }

func (eioReader) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: "/abs/root/d/bad.txt", Err: syscall.EIO}
}

func (f eioFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := f.FS.Open(ctx, p)
	if err == nil && p == f.bad {
		return eioReader{r}, nil
	}
	return r, err
}

func (f eioFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return f.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if e.Path == f.bad && !f.reopen {
			open := func() (io.ReadCloser, error) { return f.Open(ctx, e.Path) }
			e.Open, e.Later = open, func() func() (io.ReadCloser, error) { return open }
		}
		return visit(e)
	})
}

// A file whose read fails (EIO) fails the search with IO_ERROR naming it by
// its display path, as read names it: not the system's message with the
// absolute path, nor no path at all.
func TestGrepReadErrorNamesTheFile(t *testing.T) {
	files := map[string]string{"d/a.txt": "hello\n", "d/bad.txt": strings.Repeat("hello\n", 8), "d/c.txt": "hello\n"}
	// A page past more matches than a tree's search keeps of a file
	// searches it again for them.
	defer func(n int) { passAhead = n }(passAhead)
	passAhead = 1
	for _, tc := range []struct {
		name   string
		req    GrepRequest
		reopen bool
	}{
		{"one file", GrepRequest{Query: "hello", Path: "d/bad.txt"}, false},
		{"tree content", GrepRequest{Query: "hello", Path: "."}, false},
		{"tree files", GrepRequest{Query: "hello", Path: ".", Mode: ModeFiles}, false},
		{"tree count", GrepRequest{Query: "hello", Path: ".", Mode: ModeCount}, false},
		{"tree content searched again", GrepRequest{Query: "hello", Path: ".", Offset: 3, Limit: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &Tools{FS: eioFS{FS: memfs.New(files), bad: "d/bad.txt", reopen: tc.reopen}}
			_, err := tl.Grep(context.Background(), tc.req)
			e := fault.AsError(err)
			if e.Code != fault.CodeIOError || e.Path != "d/bad.txt" || strings.Contains(e.Message, "/abs/root") {
				t.Fatalf("grep: %v (path %q); want IO_ERROR with path d/bad.txt, no absolute path", err, e.Path)
			}
		})
	}
}
