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

// listFS is a flat directory of the given names, in that order; the names
// in gone are removed between the listing and the stat of each entry, and
// those in denied cannot be described (named by a directory that may be
// read but not searched).
type listFS struct {
	names  []string
	gone   map[string]bool
	denied map[string]bool
}

func (f *listFS) Stat(context.Context, string) (backend.FileInfo, error) {
	return backend.FileInfo{Type: backend.TypeDir}, nil
}
func (f *listFS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	return f.Stat(ctx, p)
}
func (f *listFS) Open(context.Context, string) (backend.FileReader, error) {
	return nil, fault.Errorf(fault.CodeNotAFile, "a directory.")
}
func (f *listFS) ReadDir(context.Context, string, int, int) (backend.DirPage, error) {
	return backend.DirPage{}, nil
}
func (f *listFS) Display(p string) string { return p }

func (f *listFS) Walk(_ context.Context, _ string, _ backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	for _, name := range f.names {
		err := visit(backend.WalkEntry{Path: name, Rel: name, Name: name, Type: backend.TypeFile,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("")), nil },
			Info: func() (backend.FileInfo, error) {
				if f.gone[name] {
					return backend.FileInfo{}, fault.Errorf(fault.CodeNotFound, "no such file or directory.").WithPath(name)
				}
				if f.denied[name] {
					return backend.FileInfo{}, fault.Errorf(fault.CodePermissionDenied, "permission denied.").WithPath(name)
				}
				return backend.FileInfo{Name: name}, nil
			}})
		if err == backend.ErrStopWalk {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// An entry too large for an empty page is TOO_LARGE: the error names its
// offset in the walk (entries found gone since the listing not counted),
// the offset that skips it, and the smallest --max-bytes that lists it,
// which does list it while one byte less still does not. Past a non-empty
// page the same entry only ends the page.
func TestWalkPageEntryTooLarge(t *testing.T) {
	long := strings.Repeat("n", 400)
	const maxBytes = 300
	for _, tc := range []struct {
		name   string
		names  []string
		gone   []string
		offset int
		at     int // the offset the error names, or -1: no error
		next   int
	}{
		{"first entry", []string{long, "b"}, nil, 0, 0, 0},
		{"after the offset", []string{"a", "b", long, "c"}, nil, 2, 2, 0},
		{"after gone entries", []string{"a", "b", "c", long}, []string{"b", "c"}, 1, 1, 0},
		{"ends a page", []string{"a", "b", long, "c"}, nil, 0, -1, 2},
		{"ends a page after gone entries", []string{"a", "b", "c", long}, []string{"b"}, 0, -1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &listFS{names: tc.names, gone: map[string]bool{}}
			for _, g := range tc.gone {
				fs.gone[g] = true
			}
			tools := []string{"ls", "find"}
			if len(tc.gone) > 0 {
				tools = tools[:1] // find does not stat its entries
			}
			for _, tool := range tools {
				list := func(mb int) (int, *int, error) {
					tl := &Tools{FS: fs, MaxBytes: mb}
					if tool == "find" {
						res, err := tl.Find(context.Background(), FindRequest{Pattern: "*", Offset: tc.offset})
						if err != nil {
							return 0, nil, err
						}
						return len(res.Results), res.NextOffset, nil
					}
					res, err := tl.Ls(context.Background(), LsRequest{Offset: tc.offset})
					if err != nil {
						return 0, nil, err
					}
					return len(res.Entries), res.NextOffset, nil
				}
				n, next, err := list(maxBytes)
				if tc.at < 0 {
					if err != nil || next == nil || *next != tc.next || n != tc.next {
						t.Fatalf("%s: %d entries, next %v, error %v; want a page of %d", tool, n, next, err, tc.next)
					}
					continue
				}
				e := fault.AsError(err)
				if e == nil || e.Code != fault.CodeTooLarge {
					t.Fatalf("%s: error %v, want TOO_LARGE", tool, err)
				}
				skip := "--offset " + itoa(tc.at+1) + " "
				if e.Details["offset"] != tc.at || !strings.Contains(e.Message, "entry "+itoa(tc.at)+" ") || !strings.Contains(e.Hint, skip) {
					t.Fatalf("%s: offset %v, %q, hint %q; want entry %d", tool, e.Details["offset"], e.Message, e.Hint, tc.at)
				}
				needed, ok := e.Details["needed"].(int)
				if !ok || !strings.Contains(e.Hint, "--max-bytes to "+itoa(needed)+" ") {
					t.Fatalf("%s: needed %v, hint %q", tool, e.Details["needed"], e.Hint)
				}
				if _, _, err := list(needed - 1); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeTooLarge {
					t.Fatalf("%s: --max-bytes %d, one less than needed: %v", tool, needed-1, err)
				}
				if n, _, err := list(needed); err != nil || n == 0 {
					t.Fatalf("%s: --max-bytes %d as needed: %d entries, %v", tool, needed, n, err)
				}
			}
		})
	}
}

// Entries that cannot be described count in the offsets as every entry
// does, in the page that meets them: a page resumed by offset skips them
// with the others, without a look. Left out of nextOffset, they made the
// next pages start early and give entries again: [d e] [e f] [e f] [e f]
// [g], unreadable 3, 2, 1 and 0.
func TestLsOffsetCountsUndescribedEntries(t *testing.T) {
	fs := &listFS{names: []string{"d", "d/f1", "d/f2", "d/f3", "e", "f", "g"},
		denied: map[string]bool{"d/f1": true, "d/f2": true, "d/f3": true}}
	tl := &Tools{FS: fs}
	var got []string
	offset := 0
	for range 10 {
		res, err := tl.Ls(context.Background(), LsRequest{Depth: 2, Limit: 2, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, e := range res.Entries {
			page = append(page, e.Path)
		}
		got = append(got, fmt.Sprintf("%v unreadable %d", page, res.Unreadable))
		if res.NextOffset == nil {
			break
		}
		offset = *res.NextOffset
	}
	want := []string{"[d e] unreadable 3", "[f g] unreadable 0"}
	if !slices.Equal(got, want) {
		t.Errorf("pages by offset %q, want %q", got, want)
	}
}

// A listed directory that may be read but not searched names entries
// none of which can be described: it is PERMISSION_DENIED, as it was
// before such entries below it were counted. It answered an empty
// listing, exit 0.
func TestLsOfADirectoryItCannotEnter(t *testing.T) {
	fs := &listFS{names: []string{"a", "b"}, denied: map[string]bool{"a": true, "b": true}}
	res, err := (&Tools{FS: fs}).Ls(context.Background(), LsRequest{Depth: 2})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied {
		t.Errorf("ls of a directory it cannot enter: %+v, %v; want PERMISSION_DENIED", res, err)
	}
	// The error names the directory asked for, and why: it named the
	// first entry, a path the caller never gave.
	if e := fault.AsError(err); e == nil || e.Path != "." || e.Details["entry"] != "a" || !strings.Contains(e.Message, "read but not searched") {
		t.Errorf("the error %+v; want the path ., entry a and why", e)
	}
}

// The result's own path is over the bound only when its skeleton is larger
// than --max-bytes: a skeleton of exactly --max-bytes leaves no room for an
// entry, and the entry is what does not fit.
func TestWalkPageSkeletonAtTheBound(t *testing.T) {
	fs := &listFS{names: []string{"a"}}
	ls := func(mb int) *fault.Error {
		_, err := (&Tools{FS: fs, MaxBytes: mb}).Ls(context.Background(), LsRequest{})
		return fault.AsError(err)
	}
	e := ls(1)
	if e == nil || e.Code != fault.CodeTooLarge || !strings.Contains(e.Message, "the path of the directory does not fit") {
		t.Fatalf("--max-bytes 1: %v", e)
	}
	skeleton := e.Details["needed"].(int)
	if e := ls(skeleton - 1); e == nil || !strings.Contains(e.Message, "the path of the directory does not fit") {
		t.Fatalf("--max-bytes %d, one under the skeleton: %v", skeleton-1, e)
	}
	if e := ls(skeleton); e == nil || e.Code != fault.CodeTooLarge || !strings.Contains(e.Message, "entry 0 does not fit") {
		t.Fatalf("--max-bytes %d, the skeleton: %v", skeleton, e)
	}
}

// Paged by cursor at every bound from 512 bytes up, a find lists every
// entry once, each page within its bound, and a page with a next page has
// its cursor unless the cursor would not fit beside its one entry.
func TestWalkPageCursorAtEveryBound(t *testing.T) {
	files := map[string]string{}
	var want []string
	for i := range 6 {
		name := fmt.Sprintf("d/%s%d", strings.Repeat("n", 60+17*i), i)
		files[name] = ""
		want = append(want, name)
	}
	slices.Sort(want)
	tl := &Tools{FS: memfs.New(files)}
	req := FindRequest{Pattern: "*", Path: "d"}
	for mb := 512; mb <= 900; mb++ {
		tl.MaxBytes = mb
		var got []string
		cur := ""
		for range 20 {
			r := req
			r.Cursor = cur
			res, err := tl.Find(context.Background(), r)
			if err != nil {
				t.Fatalf("max %d: %v", mb, err)
			}
			if n := jsonSize(res); n > mb {
				t.Fatalf("max %d: a page of %d bytes", mb, n)
			}
			for _, e := range res.Results {
				got = append(got, e.Path)
			}
			if res.NextOffset == nil {
				break
			}
			if res.NextCursor == "" {
				last := res.Results[len(res.Results)-1].Path
				c := cursor{Offset: *res.NextOffset, From: strings.TrimPrefix(last, "d/"), Skip: 1, Request: req.digest(tl.FS.Display)}.encode()
				// Beside the page's skeleton, which keeps room for the
				// largest unreadable count and nextOffset.
				skeleton := jsonSize(&FindResult{Path: "d", Results: []FindEntry{}, Truncated: true,
					Unreadable: maxUnreadable, NextOffset: new(*res.NextOffset - 1 + FindDefaultLimit)})
				if len(res.Results) != 1 || skeleton+itemSize(res.Results[0])+cursorCost(c) <= mb {
					t.Fatalf("max %d: a page of %d entries without its cursor, which fits", mb, len(res.Results))
				}
				r.Cursor, r.Offset = "", *res.NextOffset
				cur = ""
				res, err = tl.Find(context.Background(), r)
				if err != nil || len(res.Results) == 0 {
					t.Fatalf("max %d: the page after by offset: %v", mb, err)
				}
				for _, e := range res.Results {
					got = append(got, e.Path)
				}
				if res.NextOffset == nil {
					break
				}
			}
			cur = res.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Fatalf("max %d: listed %q, want %q", mb, got, want)
		}
	}
}

// fits keeps room for the cursor that resumes after the entry: exactly
// room for both takes both; a later entry without room for its cursor
// ends the page; the first goes without its cursor, and one that does not
// fit alone is TOO_LARGE.
func TestWalkPageFitsWithItsCursor(t *testing.T) {
	v := FindEntry{Path: "abc"}
	n, next := itemSize(v), "resume-after-abc"
	c := cursorCost(next)
	for _, tc := range []struct {
		budget, taken int
		fits          bool
		last          string
		err           bool
	}{
		{n + c, 1, true, next, false},
		{n + c, 0, true, next, false},
		{n + c - 1, 1, false, "", false},
		{n + c - 1, 0, true, "", false},
		{n, 0, true, "", false},
		{n - 1, 0, false, "", true},
	} {
		p := &walkPage{t: &Tools{MaxBytes: 1 << 20}, limit: 10, budget: tc.budget, taken: tc.taken, skeleton: 10}
		ok, err := p.fits(v, "abc", "abc", next)
		if ok != tc.fits || (err != nil) != tc.err || ok && p.last != tc.last {
			t.Errorf("budget %d, %d taken: fits %v, %v, last %q; want %v, error %v, last %q", tc.budget, tc.taken, ok, err, p.last, tc.fits, tc.err, tc.last)
		}
		if ok && p.budget != tc.budget-n {
			t.Errorf("budget %d: %d left, want %d", tc.budget, p.budget, tc.budget-n)
		}
	}
}

// An entry passed (counted, not listed) moves nextOffset past the
// skeleton's offset+limit: each one that adds a digit to it takes a byte
// of the budget, so that the page still fits the bound.
func TestWalkPagePassTakesNextOffsetsDigits(t *testing.T) {
	for _, tc := range []struct{ offset, limit, passes, drop int }{
		{0, 5, 1, 0}, {0, 9, 1, 1}, {0, 9, 2, 1}, {95, 4, 1, 1}, {90, 5, 3, 0}, {998, 1, 1, 1}, {0, 1, 99, 2},
	} {
		p := (&Tools{}).newWalkPage(tc.offset, tc.limit, struct{}{})
		before := p.budget
		for range tc.passes {
			p.pass("a", "")
		}
		if got := before - p.budget; got != tc.drop {
			t.Errorf("offset %d, limit %d, %d passed: the budget fell by %d, want %d", tc.offset, tc.limit, tc.passes, got, tc.drop)
		}
	}
}

// pass puts an entry that is counted but not listed on the page only when
// the cursor after it fits what is left (and the digit a longer
// nextOffset may take): at the exact room it fits, a byte short the page
// ends before it, and the page's first entry goes without a cursor
// rather than leave the page empty.
func TestWalkPagePassFitsItsCursor(t *testing.T) {
	const digest = "d"
	for _, tc := range []struct {
		name          string
		taken, passed int
		// short is how many bytes the room falls short of the cursor's.
		short  int
		onPage bool
		cursor bool
	}{
		{"exact room, after a listed entry", 1, 0, 0, true, true},
		{"exact room, first on the page", 0, 0, 0, true, true},
		{"a byte short, after a listed entry", 1, 0, 1, false, false},
		{"a byte short, after a passed entry", 0, 1, 1, false, false},
		{"a byte short, after both", 2, 1, 1, false, false},
		{"a byte short, first on the page", 0, 0, 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// offset+limit+passed+1 = 10: nextOffset may grow a digit.
			p := &walkPage{t: &Tools{}, offset: 5, limit: 4 - tc.passed, taken: tc.taken, passed: tc.passed, seen: 7}
			grow := digits(p.offset+p.limit+p.passed+1) - digits(p.offset+p.limit+p.passed)
			if grow != 1 {
				t.Fatalf("the case meant a digit's growth, got %d", grow)
			}
			p.budget = grow + cursorCost(p.cursorAfter("x", digest)) - tc.short
			got := p.pass("x", digest)
			if got != tc.onPage {
				t.Fatalf("pass = %v, want %v", got, tc.onPage)
			}
			if got && (p.last != "") != tc.cursor {
				t.Errorf("cursor %q, want one: %v", p.last, tc.cursor)
			}
			if !got && p.next == nil {
				t.Error("the page did not end before the entry")
			}
		})
	}
}
