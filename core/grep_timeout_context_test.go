package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/memfs"
)

// pageLines renders the lines of a page's blocks as "line: text".
func pageLines(res *GrepResult) []string {
	var out []string
	for _, f := range res.Files {
		for _, b := range f.Blocks {
			for i, l := range b.Lines {
				out = append(out, fmt.Sprintf("%s:%d: %s", f.Path, b.Start+i, l))
			}
		}
	}
	return out
}

// A deadline inside a file right after a match, whose after-context the
// search had not read yet, cuts the page before that match: the pages
// that follow give the match with its context lines, each line once, as
// a search that no deadline cut gives them. The page kept the match
// alone, and the next, which starts its before-context after the
// after-context of the matches before it, gave neither of its context
// lines.
func TestTimeoutInsideAFileKeepsTheContextOfItsMatches(t *testing.T) {
	filler := strings.Repeat("some log line without it\n", 10480)
	// The search reads the file's first readChunk bytes, which end with
	// cut, and waits for the rest, which starts with rest.
	for i, tc := range []struct{ cut, rest string }{
		{"needle one\n", "context a\ncontext b\nline after\n"},
		{"needle one\ncontext a\n", "context b\nline after\n"},
		{"needle one\nline\nline\nneedle two\nneedle three\n", "context a\nline\nline\nneedle four\n"},
	} {
		head := "needle at start\n" + filler
		head = strings.Repeat("x", readChunk-len(head)-len(tc.cut)-1) + "\n" + head + tc.cut
		if len(head) != readChunk {
			t.Fatalf("head of %d bytes; want %d", len(head), readChunk)
		}
		text := head + tc.rest + filler + "needle at end\n"
		for _, path := range []string{"big.txt", "."} {
			t.Run(fmt.Sprint(i, path), func(t *testing.T) {
				t.Parallel()
				whole, err := (&Tools{FS: memfs.New(map[string]string{"big.txt": text})}).Grep(context.Background(), GrepRequest{Query: "needle", Path: path, Context: 2})
				if err != nil {
					t.Fatal(err)
				}
				want := pageLines(whole)
				fs := cutInsideFS{memfs.New(map[string]string{"big.txt": text}), "big.txt", readChunk, make(chan struct{})}
				tl := &Tools{FS: fs}
				req := GrepRequest{Query: "needle", Path: path, Context: 2, Timeout: Duration(stallTimeout)}
				res, err := tl.Grep(context.Background(), req)
				close(fs.release)
				if err != nil {
					t.Fatal(err)
				}
				if !res.TimedOut {
					t.Fatalf("not timed out: %+v", res)
				}
				got := pageLines(res)
				tl.FS = memfs.New(map[string]string{"big.txt": text})
				for range 10 {
					if res.NextOffset == nil && res.NextCursor == "" {
						break
					}
					next := GrepRequest{Query: "needle", Path: path, Context: 2, Cursor: res.NextCursor}
					if res.NextCursor == "" {
						next.Offset = *res.NextOffset
					}
					if res, err = tl.Grep(context.Background(), next); err != nil {
						t.Fatal(err)
					}
					got = append(got, pageLines(res)...)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("the pages gave\n%s\nwant, as a search not cut\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}
