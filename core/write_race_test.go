package core

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// rewrittenFS rewrites its file with the same bytes, a new version, just
// before the first open: another writer's PUT of the same content landing
// between a write's stat and its read, on a store whose reads take no lock.
type rewrittenFS struct {
	*memfs.FS
	path, content string
	done          bool
}

func (r *rewrittenFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	if !r.done && p == r.path {
		r.done = true
		if _, err := r.FS.WriteFile(ctx, p, []byte(r.content), backend.WriteOptions{}); err != nil {
			return nil, err
		}
	}
	return r.FS.Open(ctx, p)
}

// A write of the bytes the file holds, with the version it had when stat'ed,
// whose read finds another version of the same bytes is STALE: it said
// noChange, of the old version, and a counter lost increments (two
// read-increment-writes of the same value both succeeded).
func TestWriteSameBytesOfAnotherVersionIsStale(t *testing.T) {
	ctx := context.Background()
	fs := &rewrittenFS{FS: memfs.New(map[string]string{"n.txt": "7\n"}), path: "n.txt", content: "7\n"}
	before, err := fs.Stat(ctx, "n.txt")
	if err != nil {
		t.Fatal(err)
	}
	tl := &Tools{FS: fs}
	res, err := tl.Write(ctx, WriteRequest{Path: "n.txt", Content: new("7\n"), Precondition: Precondition{ExpectedVersion: before.Version}})
	if code := fault.AsError(err); code == nil || code.Code != fault.CodeStale {
		t.Fatalf("got %+v, %v; want STALE", res, err)
	}
}
