package core

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// doubledFS walks a tree in which a is a file and a directory both, as an
// object store may hold a and a/b: file a, directory a, a/1, a/2, z. With
// gone, file a is removed once the first walk listed it: its Info is
// NOT_FOUND, and no later walk lists it.
type doubledFS struct {
	*memfs.FS
	gone   bool
	walked bool
}

func (d *doubledFS) Walk(_ context.Context, _ string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	entries := []backend.WalkEntry{
		{Rel: "a", Type: backend.TypeFile}, {Rel: "a", Type: backend.TypeDir},
		{Rel: "a/1", Type: backend.TypeFile}, {Rel: "a/2", Type: backend.TypeFile}, {Rel: "z", Type: backend.TypeFile},
	}
	gone := d.gone
	if d.gone && d.walked {
		entries, gone = entries[1:], false
	}
	d.walked = true
	at := 0
	if opts.From != "" {
		at = slices.IndexFunc(entries, func(e backend.WalkEntry) bool { return e.Rel == opts.From })
	}
	for k, e := range entries[at:] {
		e.Path, e.Name = e.Rel, e.Rel[strings.LastIndex(e.Rel, "/")+1:]
		gone := gone && at+k == 0
		e.Info = func() (backend.FileInfo, error) {
			if gone {
				return backend.FileInfo{}, fault.Errorf(fault.CodeNotFound, "gone.")
			}
			return backend.FileInfo{Name: e.Name, Type: e.Type}, nil
		}
		if err := visit(e); err == backend.ErrStopWalk {
			return nil
		} else if err != nil && err != backend.ErrSkipDir {
			return err
		}
	}
	return nil
}

// A file and a directory of one name, paged by cursor, are each listed
// once and the pages end: the cursor after the second, resuming at the
// first, skipped it alone and gave the second again, page after page at
// limit 1. One of them gone since the listing is counted out of the skip
// too (ls lost a/1 after it).
func TestPagesOverAFileAndADirectoryOfOneName(t *testing.T) {
	for _, gone := range []bool{false, true} {
		for _, limit := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("gone %v, limit %d", gone, limit), func(t *testing.T) {
				tl := &Tools{FS: &doubledFS{FS: memfs.New(map[string]string{"a/1": "", "a/2": "", "z": ""}), gone: gone}}
				want := []string{"a:", "a:dir", "a/1:", "a/2:", "z:"}
				if gone {
					want = want[1:]
				}
				var found, listed []string
				for cur, page := "", 0; ; page++ {
					if page > 10 {
						t.Fatalf("no end after 10 pages: %q", listed)
					}
					res, err := tl.Ls(context.Background(), LsRequest{Path: ".", Depth: 2, Limit: limit, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range res.Entries {
						listed = append(listed, cmpOr(e.Path, e.Name)+":"+e.Type)
					}
					if cur = res.NextCursor; cur == "" {
						break
					}
				}
				if !slices.Equal(listed, want) {
					t.Errorf("ls paged %q, want %q", listed, want)
				}
				if gone {
					return // find does not describe its entries
				}
				for cur, page := "", 0; ; page++ {
					if page > 10 {
						t.Fatalf("no end after 10 pages: %q", found)
					}
					res, err := tl.Find(context.Background(), FindRequest{Pattern: "**", Path: ".", Limit: limit, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range res.Results {
						found = append(found, e.Path+":"+e.Type)
					}
					if cur = res.NextCursor; cur == "" {
						break
					}
				}
				if !slices.Equal(found, want) {
					t.Errorf("find paged %q, want %q", found, want)
				}
			})
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// swappedFS is the memory backend whose file at rel leads out of the roots
// when a search opens it: a directory on its path swapped for a link
// since the listing, as a racing process may.
type swappedFS struct {
	*memfs.FS
	rel string
}

func (s *swappedFS) Walk(ctx context.Context, p string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return s.FS.Walk(ctx, p, opts, func(e backend.WalkEntry) error {
		if e.Rel == s.rel {
			outside := func() (io.ReadCloser, error) {
				return nil, fault.Errorf(fault.CodeOutsideRoot, "the path leads outside the roots.").WithPath(e.Path)
			}
			e.Open, e.Later = outside, func() func() (io.ReadCloser, error) { return outside }
		}
		return visit(e)
	})
}

// A file whose path leads out of the roots when a search opens it (a
// directory swapped for a link since the listing) is passed over as one
// gone: grep with an index, which opens its candidates so, failed whole,
// OUTSIDE_ROOT.
func TestSearchPassesOverAFileSwappedOutOfTheRoots(t *testing.T) {
	tl := &Tools{FS: &swappedFS{FS: memfs.New(map[string]string{"d/a.txt": "hit\n", "e.txt": "hit\n"}), rel: "d/a.txt"}}
	res, err := tl.Grep(context.Background(), GrepRequest{Query: "hit", Path: "."})
	if err != nil || res.Count != 1 || len(res.Files) != 1 || res.Files[0].Path != "e.txt" {
		t.Errorf("grep over a file swapped out of the roots: %+v, %v; want e.txt's match alone", res, err)
	}
}
