package core

import (
	"context"
	"io"
	"maps"
	"reflect"
	"runtime"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// copiesIndex lists the files of fs in the order of rels, each opened
// through the list and counted in opened; those of same share its Same,
// and are Still unless moved. A file of gone fails to open, as one removed
// since the proof, or, when cut, to read.
type copiesIndex struct {
	fs     *memfs.FS
	rels   []string
	same   map[string]int
	gone   map[string]bool
	cut    bool
	moved  map[string]bool
	opened map[string]int
}

// failingReader fails its reads as a file removed while read does.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, fault.Errorf(fault.CodeNotFound, "gone") }
func (failingReader) Close() error             { return nil }

func (c copiesIndex) Narrow(ctx context.Context, _ IndexQuery) (*Narrowing, error) {
	var files []IndexedFile
	for _, r := range c.rels {
		files = append(files, IndexedFile{Rel: r, Same: c.same[r], Still: func() bool { return !c.moved[r] }, Open: func() (io.ReadCloser, error) {
			c.opened[r]++
			switch {
			case c.gone[r] && c.cut:
				return failingReader{}, nil
			case c.gone[r]:
				return nil, fault.Errorf(fault.CodeNotFound, "gone")
			}
			return c.fs.Open(ctx, r)
		}})
	}
	return &Narrowing{Files: files}, nil
}

// Files the index proves hold the same bytes are read once: the others
// take that file's lines, context and counts, as a scan of each finds
// them. A file that failed to open or read gives its failure to none of
// them; one no longer as the index holds it after its read gives them
// nothing, and one no longer so is read on its own.
func TestGrepReadsCopiesOnce(t *testing.T) {
	// One searcher: the files are searched in list order, so that which
	// are opened is known.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	text := "one needle\ntwo\nthree needle\nfour\n"
	rels := []string{"a/x.txt", "b/x.txt", "c/x.txt", "d/y.txt"}
	files := map[string]string{"d/y.txt": "needle alone\n"}
	for _, r := range rels[:3] {
		files[r] = text
	}
	same := map[string]int{"a/x.txt": 1, "b/x.txt": 1, "c/x.txt": 1}
	for _, tc := range []struct {
		gone   map[string]bool
		cut    bool
		moved  map[string]bool
		opened map[string]int
	}{
		{nil, false, nil, map[string]int{"a/x.txt": 1, "d/y.txt": 1}},
		{map[string]bool{"a/x.txt": true}, false, nil, map[string]int{"a/x.txt": 1, "b/x.txt": 1, "d/y.txt": 1}},
		{map[string]bool{"a/x.txt": true}, true, nil, map[string]int{"a/x.txt": 1, "b/x.txt": 1, "d/y.txt": 1}},
		{nil, false, map[string]bool{"a/x.txt": true}, map[string]int{"a/x.txt": 1, "b/x.txt": 1, "d/y.txt": 1}},
		{nil, false, map[string]bool{"b/x.txt": true}, map[string]int{"a/x.txt": 1, "b/x.txt": 1, "d/y.txt": 1}},
	} {
		ix := copiesIndex{fs: memfs.New(files), rels: rels, same: same, gone: tc.gone, cut: tc.cut, moved: tc.moved, opened: map[string]int{}}
		tl := &Tools{FS: ix.fs, Index: ix}
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Context: 1})
		if err != nil {
			t.Fatal(err)
		}
		scan, err := (&Tools{FS: ix.fs}).Grep(context.Background(), GrepRequest{Query: "needle", Path: ".", Context: 1})
		if err != nil {
			t.Fatal(err)
		}
		var want []GrepFile
		for _, f := range scan.Files {
			if !tc.gone[f.Path] {
				want = append(want, f)
			}
		}
		if len(want) != len(rels)-len(tc.gone) || !reflect.DeepEqual(res.Files, want) {
			t.Errorf("gone %v (cut %v), moved %v: files %+v, want %+v", tc.gone, tc.cut, tc.moved, res.Files, want)
		}
		if !maps.Equal(ix.opened, tc.opened) {
			t.Errorf("gone %v (cut %v), moved %v: opened %v, want %v", tc.gone, tc.cut, tc.moved, ix.opened, tc.opened)
		}
	}
}
