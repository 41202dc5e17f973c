package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/memfs"
)

// The windows of a file paged in one process take its line count from
// the first, counted from the file's start, while its version stands: a
// window placed by a byte offset, whose line number is the caller's, is
// not remembered, and a new version is counted again.
func TestLineCountsRemembered(t *testing.T) {
	ctx := context.Background()
	fsys := memfs.New(map[string]string{"f": strings.Repeat("line\n", 10)})
	tl := &Tools{FS: fsys, LineCounts: NewLineCounts()}
	read := func(req ReadRequest) *ReadResult {
		t.Helper()
		res, err := tl.Read(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A window placed by the caller with a wrong line number (line 3's
	// bytes said to be line 5) counts 12 lines, and is not remembered.
	if res := read(ReadRequest{Path: "f", Offset: 5, ByteOffset: 10, Limit: 2}); *res.TotalLines != 12 {
		t.Fatalf("misplaced window: totalLines %d, want 12 (taken as given)", *res.TotalLines)
	}
	first := read(ReadRequest{Path: "f", Limit: 2})
	if *first.TotalLines != 10 {
		t.Fatalf("first window: totalLines %d, want 10", *first.TotalLines)
	}
	// What is remembered is what a continuation answers: seeded with
	// another count, the continuation gives it (it counted nothing).
	tl.LineCounts.put("f", first.Version, 99)
	if res := read(ReadRequest{Path: "f", Offset: *first.NextOffset, ByteOffset: *first.NextByteOffset, Limit: 2}); *res.TotalLines != 99 {
		t.Fatalf("continuation: totalLines %d, want the remembered 99", *res.TotalLines)
	}
	// A new version is counted anew.
	if _, err := fsys.WriteFile(ctx, "f", []byte(strings.Repeat("line\n", 20)), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := read(ReadRequest{Path: "f", Limit: 2}); *res.TotalLines != 20 {
		t.Fatalf("after a change: totalLines %d, want 20", *res.TotalLines)
	}
}

// recentFS dates every file it opens now, as a file just written is.
type recentFS struct{ *memfs.FS }

func (f recentFS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	r, err := f.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return recentReader{r}, nil
}

type recentReader struct{ backend.FileReader }

func (r recentReader) Info() backend.FileInfo {
	info := r.FileReader.Info()
	info.ModTime, info.ChangeTime = time.Now(), time.Now()
	return info
}

// A file changed within backend.RacySlack may be rewritten at its size
// with its version kept, where its stat makes it: its count is not
// remembered, and every window counts it.
func TestLineCountsOfARecentFileNotRemembered(t *testing.T) {
	ctx := context.Background()
	tl := &Tools{FS: recentFS{memfs.New(map[string]string{"f": strings.Repeat("line\n", 10)})}, LineCounts: NewLineCounts()}
	res, err := tl.Read(ctx, ReadRequest{Path: "f", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := tl.LineCounts.get("f", res.Version); ok {
		t.Fatalf("a file changed just now: its count %d was remembered", n)
	}
}
