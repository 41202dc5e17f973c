package core

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// deniedFS is the memory backend with directories the walk may not enter
// (noEntry: reported Unreadable, as localfs reports EACCES, and not
// descended into) and entries that cannot be described (noInfo, as those
// of a directory with r without x).
type deniedFS struct {
	*memfs.FS
	noEntry, noInfo map[string]bool
}

func (d deniedFS) Walk(ctx context.Context, p string, o backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return d.FS.Walk(ctx, p, o, func(e backend.WalkEntry) error {
		if d.noInfo[e.Rel] {
			e.Info = func() (backend.FileInfo, error) {
				return backend.FileInfo{}, fault.Errorf(fault.CodePermissionDenied, "permission denied.").WithPath(e.Path)
			}
		}
		if err := visit(e); err != nil || !d.noEntry[e.Rel] {
			return err
		}
		if o.Unreadable != nil {
			o.Unreadable(e.Path, e.Rel)
		}
		return backend.ErrSkipDir
	})
}

// unreadablePage is one page of a paged tool: its items and unreadable.
type unreadablePage struct {
	items      []string
	unreadable int
	nextOffset *int
	nextCursor string
}

func (p unreadablePage) String() string {
	return fmt.Sprintf("%v unreadable %d", p.items, p.unreadable)
}

// Each page of find, grep and ls counts the unreadable entries the walk
// met after the previous page's last entry and up to its own (to the
// walk's end on the last page), the same by offset and by cursor: each
// is counted once. A page cut by its limit counted those the walk met
// looking ahead for the next page, which counted them again; a page by
// offset those of the pages it skipped, which one by cursor never meets;
// and ls's page by cursor again the entries it could not describe after
// the previous page's last listed one, which one by offset skipped.
func TestUnreadableCountedOncePerPage(t *testing.T) {
	fs := deniedFS{
		FS: memfs.New(map[string]string{
			"a.txt": "hello\n", "b_noperm/x.txt": "hello\n", "c/1.txt": "hello\nhello\n",
			"c/rx/f1": "", "c/rx/f2": "", "d_noperm/x.txt": "hello\n", "e/1.txt": "hello\n", "z.txt": "hello\n",
		}),
		noEntry: map[string]bool{"b_noperm": true, "d_noperm": true},
		noInfo:  map[string]bool{"c/rx/f1": true, "c/rx/f2": true},
	}
	tl := &Tools{FS: fs}
	ctx := context.Background()
	find := func(pattern string) func(int, int, string) (unreadablePage, error) {
		return func(limit, offset int, cursor string) (unreadablePage, error) {
			res, err := tl.Find(ctx, FindRequest{Pattern: pattern, Limit: limit, Offset: offset, Cursor: cursor})
			if err != nil {
				return unreadablePage{}, err
			}
			p := unreadablePage{unreadable: res.Unreadable, nextOffset: res.NextOffset, nextCursor: res.NextCursor}
			for _, e := range res.Results {
				p.items = append(p.items, e.Path)
			}
			return p, nil
		}
	}
	grep := func(mode string) func(int, int, string) (unreadablePage, error) {
		return func(limit, offset int, cursor string) (unreadablePage, error) {
			res, err := tl.Grep(ctx, GrepRequest{Query: "hello", Path: ".", Mode: mode, Limit: limit, Offset: offset, Cursor: cursor})
			if err != nil {
				return unreadablePage{}, err
			}
			p := unreadablePage{unreadable: res.Unreadable, nextOffset: res.NextOffset, nextCursor: res.NextCursor}
			for _, f := range res.Files {
				if mode == ModeFiles {
					p.items = append(p.items, f.Path)
				}
				for _, b := range f.Blocks {
					for i := range b.Lines {
						p.items = append(p.items, fmt.Sprintf("%s:%d", f.Path, b.Start+i))
					}
				}
			}
			return p, nil
		}
	}
	for _, tc := range []struct {
		tool  string
		total int
		page  func(limit, offset int, cursor string) (unreadablePage, error)
		// first is the first page of limit 1.
		first string
	}{
		{"find *.txt", 2, find("*.txt"), "[a.txt] unreadable 0"},
		{"find", 2, find(""), "[a.txt] unreadable 0"},
		{"grep", 2, grep(ModeContent), "[a.txt:1] unreadable 0"},
		{"grep files", 2, grep(ModeFiles), "[a.txt] unreadable 0"},
		{"ls --depth 3", 4, func(limit, offset int, cursor string) (unreadablePage, error) {
			res, err := tl.Ls(ctx, LsRequest{Depth: 3, Limit: limit, Offset: offset, Cursor: cursor})
			if err != nil {
				return unreadablePage{}, err
			}
			p := unreadablePage{unreadable: res.Unreadable, nextOffset: res.NextOffset, nextCursor: res.NextCursor}
			for _, e := range res.Entries {
				p.items = append(p.items, e.Path)
			}
			return p, nil
		}, "[a.txt] unreadable 0"},
	} {
		tl.MaxBytes = 0
		whole, err := tc.page(1000, 0, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if whole.unreadable != tc.total {
			t.Errorf("%s: one page counts %d unreadable, want %d", tc.tool, whole.unreadable, tc.total)
		}
		// Pages cut by their limit, then by the byte bound.
		var cuts []struct{ limit, maxBytes int }
		for limit := 1; limit <= len(whole.items); limit++ {
			cuts = append(cuts, struct{ limit, maxBytes int }{limit, 0})
		}
		for mb := 350; mb <= 1000; mb += 5 {
			cuts = append(cuts, struct{ limit, maxBytes int }{1000, mb})
		}
	cuts:
		for _, cut := range cuts {
			limit := cut.limit
			tl.MaxBytes = cut.maxBytes
			var byCursor, byOffset []string
			var items []string
			sum, offset, cursor := 0, 0, ""
			for range 50 {
				p, err := tc.page(limit, 0, cursor)
				if err != nil {
					t.Fatalf("%s --limit %d --cursor: %v", tc.tool, limit, err)
				}
				q, err := tc.page(limit, offset, "")
				if err != nil {
					t.Fatalf("%s --limit %d --offset %d: %v", tc.tool, limit, offset, err)
				}
				byCursor, byOffset = append(byCursor, p.String()), append(byOffset, q.String())
				items, sum = append(items, p.items...), sum+p.unreadable
				if p.nextOffset == nil || q.nextOffset == nil {
					break
				}
				if p.nextCursor == "" {
					// A page of one item too large for a cursor with it.
					continue cuts
				}
				offset, cursor = *q.nextOffset, p.nextCursor
			}
			if !slices.Equal(byCursor, byOffset) {
				t.Errorf("%s --limit %d --max-bytes %d: pages by cursor %q, by offset %q", tc.tool, limit, cut.maxBytes, byCursor, byOffset)
			}
			if !slices.Equal(items, whole.items) || sum != tc.total {
				t.Errorf("%s --limit %d --max-bytes %d: pages %q, %d unreadable in all; want each unreadable once, %d", tc.tool, limit, cut.maxBytes, byCursor, sum, tc.total)
			}
			if limit == 1 && byCursor[0] != tc.first {
				t.Errorf("%s --limit 1: the first page %q, want %q: what the walk met past its end is the next page's", tc.tool, byCursor[0], tc.first)
			}
		}
	}
}
