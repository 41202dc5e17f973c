package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/ordered"
)

// cursorTree is a tree whose files hold several matches each, at several
// depths, so that pages end inside files and inside directories.
func cursorTree() map[string]string {
	files := map[string]string{}
	for i := range 12 {
		dir := fmt.Sprintf("d%d/sub%d", i%3, i%2)
		files[fmt.Sprintf("%s/f%02d.txt", dir, i)] = strings.Repeat(fmt.Sprintf("match %d\nother\n", i), i%4+1)
	}
	files["top.txt"] = "match top\n"
	return files
}

// pages runs a paged call to its end, by cursor or by offset, and returns
// every item in order, as JSON.
func pages(t *testing.T, call func(offset int, cursor string) (items []any, nextOffset *int, nextCursor string, err error), byCursor bool) []string {
	t.Helper()
	var all []string
	offset, cur := 0, ""
	for range 1000 {
		items, next, nextCursor, err := call(offset, cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			b, _ := json.Marshal(it)
			all = append(all, string(b))
		}
		if next == nil {
			if nextCursor != "" {
				t.Fatalf("a last page has a cursor %q", nextCursor)
			}
			return all
		}
		if nextCursor == "" {
			t.Fatalf("a page with nextOffset %d has no nextCursor", *next)
		}
		offset, cur = *next, ""
		if byCursor {
			offset, cur = 0, nextCursor
		}
	}
	t.Fatal("the pages never end")
	return nil
}

// Paging by cursor gives exactly what paging by offset gives, and what one
// large page gives, for ls, find and grep in each mode, whatever the limit.
func TestCursorPagesEqualOffsetPages(t *testing.T) {
	tl := &Tools{FS: memfs.New(cursorTree())}
	ctx := context.Background()
	tools := map[string]func(limit, offset int, cursor string) ([]any, *int, string, error){
		"ls": func(limit, offset int, cursor string) ([]any, *int, string, error) {
			r, err := tl.Ls(ctx, LsRequest{Path: ".", Depth: 3, Limit: limit, Offset: offset, Cursor: cursor})
			if err != nil {
				return nil, nil, "", err
			}
			return anys(r.Entries), r.NextOffset, r.NextCursor, nil
		},
		"find": func(limit, offset int, cursor string) ([]any, *int, string, error) {
			r, err := tl.Find(ctx, FindRequest{Pattern: "**", Limit: limit, Offset: offset, Cursor: cursor})
			if err != nil {
				return nil, nil, "", err
			}
			return anys(r.Results), r.NextOffset, r.NextCursor, nil
		},
	}
	for _, mode := range []string{ModeContent, ModeFiles} {
		for _, c := range []int{0, 1} {
			tools[fmt.Sprintf("grep %s context %d", mode, c)] = func(limit, offset int, cursor string) ([]any, *int, string, error) {
				r, err := tl.Grep(ctx, GrepRequest{Query: "match", Mode: mode, Context: c, Limit: limit, Offset: offset, Cursor: cursor})
				if err != nil {
					return nil, nil, "", err
				}
				var items []any
				for _, f := range r.Files {
					// A file split over pages is split in its blocks.
					for _, b := range f.Blocks {
						items = append(items, []any{f.Path, b.Start, b.Lines})
					}
					if len(f.Blocks) == 0 {
						items = append(items, f.Path)
					}
				}
				return items, r.NextOffset, r.NextCursor, nil
			}
		}
	}
	for name, call := range tools {
		whole, _, _, err := call(1000, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, it := range whole {
			b, _ := json.Marshal(it)
			want = append(want, string(b))
		}
		for _, limit := range []int{1, 2, 3, 5} {
			page := func(offset int, cursor string) ([]any, *int, string, error) { return call(limit, offset, cursor) }
			byOffset, byCursor := pages(t, page, false), pages(t, page, true)
			if !slices.Equal(byOffset, byCursor) || !strings.HasPrefix(name, "grep content") && !slices.Equal(byCursor, want) {
				t.Errorf("%s, limit %d:\nby cursor %q\nby offset %q\nwhole     %q", name, limit, byCursor, byOffset, want)
			}
		}
	}
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// A page resumed at an entry removed since goes on from the next one: the
// removed entry's items are not skipped twice.
func TestCursorPastARemovedEntry(t *testing.T) {
	fsys := memfs.New(map[string]string{"a": "x\n", "b": "x\nx\n", "c": "x\n", "d": "x\n"})
	tl := &Tools{FS: fsys}
	ctx := context.Background()
	first, err := tl.Grep(ctx, GrepRequest{Query: "x", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Files) != 2 || first.Files[1].Path != "b" {
		t.Fatalf("first page %+v", first.Files)
	}
	if _, err := fsys.Remove(ctx, "b", backendRemove()); err != nil {
		t.Fatal(err)
	}
	next, err := tl.Grep(ctx, GrepRequest{Query: "x", Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range next.Files {
		got = append(got, f.Path)
	}
	if !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("after b was removed the next page has %q, want c and d", got)
	}
	fsys.WriteFile(ctx, "e", []byte("x\n"), backend.WriteOptions{})
	short, err := tl.Grep(ctx, GrepRequest{Query: "x", Limit: 2, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	sameNextGrep(t, tl, GrepRequest{Query: "x", Limit: 2}, short)
	f1, err := tl.Find(ctx, FindRequest{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Remove(ctx, "a", backendRemove()); err != nil {
		t.Fatal(err)
	}
	f2, err := tl.Find(ctx, FindRequest{Cursor: f1.NextCursor})
	if err != nil || len(f2.Results) != 3 || f2.Results[0].Path != "c" {
		t.Errorf("find after a was removed: %+v, %v", f2, err)
	}
	f3, err := tl.Find(ctx, FindRequest{Limit: 1, Cursor: f1.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	sameNextFind(t, tl, FindRequest{Limit: 1}, f3)
}

// A page resumed in a file that changed before the cursor takes all of the
// file's matches as they now stand: a file that shrank made the skip of its
// taken matches fall on the next files' (lost, exit 0), and one with a
// match inserted above repeated one and lost another. A file changed only
// past the cursor goes on where the page stopped.
func TestCursorInAChangedFile(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, now string
		want      []string // the next page's lines of a and b
	}{
		{"shrank", "x 1\n", []string{"x 1", "x b1", "x b2"}},
		{"a match inserted above", "x new\nx 1\nx 2\nx 3\nx 4\n", []string{"x new", "x 1", "x 2"}},
		{"a taken match changed", "x 1\nx two\nx 3\nx 4\n", []string{"x 1", "x two", "x 3"}},
		{"changed past the cursor only", "x 1\nx 2\nx 3\nx 4 changed\n", []string{"x 4 changed", "x b1", "x b2"}},
		{"unchanged", "x 1\nx 2\nx 3\nx 4\n", []string{"x 4", "x b1", "x b2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := memfs.New(map[string]string{"a": "x 1\nx 2\nx 3\nx 4\n", "b": "x b1\nx b2\n"})
			tl := &Tools{FS: fsys}
			first, err := tl.Grep(ctx, GrepRequest{Query: "x", Limit: 3})
			if err != nil || first.NextCursor == "" {
				t.Fatalf("first page %+v, %v", first, err)
			}
			if _, err := fsys.WriteFile(ctx, "a", []byte(tc.now), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			next, err := tl.Grep(ctx, GrepRequest{Query: "x", Limit: 3, Cursor: first.NextCursor})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range next.Files {
				for _, b := range f.Blocks {
					got = append(got, b.Lines...)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("next page %q, want %q", got, tc.want)
			}
			sameNextGrep(t, tl, GrepRequest{Query: "x", Limit: 3}, next)
		})
	}
}

// sameNext checks that a page's two continuations, nextCursor and
// nextOffset, give the same next page, as page fetches it (its items):
// after a page that took a file's matches again, nextOffset went past as
// many matches as the cursor's file had given before, and skipped them.
func sameNext[R any](t *testing.T, nextOffset *int, nextCursor string, page func(cursor string, offset int) (R, error)) {
	t.Helper()
	if nextOffset == nil && nextCursor == "" {
		return // the last page
	}
	if nextOffset == nil || nextCursor == "" {
		t.Fatalf("a page with one continuation: nextOffset %v, nextCursor %q", nextOffset, nextCursor)
	}
	a, err := page(nextCursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := page("", *nextOffset)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("nextCursor gives %+v, nextOffset %d gives %+v", a, *nextOffset, b)
	}
}

// sameNextGrep is sameNext for a grep page of req.
func sameNextGrep(t *testing.T, tl *Tools, req GrepRequest, res *GrepResult) {
	t.Helper()
	sameNext(t, res.NextOffset, res.NextCursor, func(cursor string, offset int) ([]GrepFile, error) {
		req.Cursor, req.Offset = cursor, offset
		res, err := tl.Grep(context.Background(), req)
		if err != nil {
			return nil, err
		}
		return res.Files, nil
	})
}

// sameNextFind is sameNext for a find page of req.
func sameNextFind(t *testing.T, tl *Tools, req FindRequest, res *FindResult) {
	t.Helper()
	sameNext(t, res.NextOffset, res.NextCursor, func(cursor string, offset int) ([]FindEntry, error) {
		req.Cursor, req.Offset = cursor, offset
		res, err := tl.Find(context.Background(), req)
		if err != nil {
			return nil, err
		}
		return res.Results, nil
	})
}

// A file rewritten between every two pages (a log a writer keeps
// rewriting), changed above the cursor each time, has its matches taken
// again from its first once; changed again, the pages go on by count, so
// that they move forward and reach the next files. Each page took the
// file's first matches again, and the pages never ended, b's match never
// given.
func TestCursorInAFileChangingEveryPage(t *testing.T) {
	ctx := context.Background()
	log := func(k int) string { return fmt.Sprintf("x 0 try %d\nx 1 try %d\n", k, k) }
	fsys := memfs.New(map[string]string{"a": log(0), "b": "x in b\n"})
	tl := &Tools{FS: fsys}
	var got []string
	cur := ""
	for k := 1; k <= 10; k++ {
		page, err := tl.Grep(ctx, GrepRequest{Query: "x", Limit: 1, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Files {
			for _, b := range f.Blocks {
				for _, l := range b.Lines {
					got = append(got, f.Path+": "+l)
				}
			}
		}
		if cur = page.NextCursor; cur == "" {
			break
		}
		if _, err := fsys.WriteFile(ctx, "a", []byte(log(k)), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a: x 0 try 0", "a: x 0 try 1", "a: x 1 try 2", "b: x in b"}
	if cur != "" || !slices.Equal(got, want) {
		t.Errorf("pages %q (a cursor after them: %v), want %q", got, cur != "", want)
	}
}

// cutPage is the page of req that the timeout overtakes in its search of
// the file at cut, as that search has found its first kept matching lines,
// the files before it searched in full.
func cutPage(t *testing.T, tl *Tools, req GrepRequest, cut string, kept int) *GrepResult {
	t.Helper()
	ctx := context.Background()
	g, err := tl.newGrep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	pg := tl.grepPage(g)
	searcher := func() func(grepItem) fileResult {
		s := newSearcher(g.m, g.ctxLines, 0)
		s.digest = true
		return func(it grepItem) fileResult {
			s.skip, s.cap = g.keeps(it.rel)
			if it.rel == cut {
				if kept == 0 {
					return fileResult{partial: true, err: context.DeadlineExceeded}
				}
				// The search stops at the cut as at its cap.
				s.cap = kept
			}
			r, err := it.open()
			if err != nil {
				return fileResult{err: err}
			}
			defer r.Close()
			fr := s.search(ctx, r)
			if it.rel == cut {
				fr.err = context.DeadlineExceeded
			}
			return fr
		}
	}
	order, wait := ordered.Start(ctx, 1, grepBatch, searcher, nil, func(add func(grepItem) error) error {
		return g.list(ctx, add)
	})
	found, _ := g.consume(ctx, order, func() {}, pg)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	res, err := tl.finishGrep(ctx, g, pg, found, true)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// pageItems are a page's matching lines, or files in files mode.
func pageItems(res *GrepResult) []string {
	var items []string
	for _, f := range res.Files {
		if res.Mode == ModeFiles {
			items = append(items, f.Path)
		}
		for _, b := range f.Blocks {
			for _, l := range b.Lines {
				items = append(items, f.Path+": "+l)
			}
		}
	}
	return items
}

// A page the timeout cuts short in the cursor's file, before the matches
// earlier pages took there, goes on from the cursor it was given: a search
// cut short is no evidence that the file changed. It was taken for
// changed: the page's nextCursor pointed at the file with no skip, and the
// matches of a file that never changed came again, on the page itself
// when the search had found some of them.
func TestTimedOutPageInTheCursorsFile(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		mode        string
		limit, kept int
		rest        []string // the page after the timed-out one
	}{
		{ModeContent, 2, 0, []string{"a: x 3", "b: x b"}},
		{ModeContent, 2, 1, []string{"a: x 3", "b: x b"}},
		{ModeFiles, 1, 0, []string{"b"}},
	} {
		name := fmt.Sprintf("%s, %d of %d matches found", tc.mode, tc.kept, tc.limit)
		tl := &Tools{FS: memfs.New(map[string]string{"a": "x 1\nx 2\nx 3\n", "b": "x b\n"})}
		req := GrepRequest{Query: "x", Mode: tc.mode, Limit: tc.limit}
		first, err := tl.Grep(ctx, req)
		if err != nil || first.NextCursor == "" {
			t.Fatalf("%s: first page %+v, %v", name, first, err)
		}
		req.Cursor = first.NextCursor
		timed := cutPage(t, tl, req, "a", tc.kept)
		if got := pageItems(timed); len(got) > 0 || timed.NextCursor != first.NextCursor || timed.Hint != hintTimedOutEmpty {
			t.Errorf("%s: the timed-out page gave %q, hint %q, and another cursor: %v", name, got, timed.Hint, timed.NextCursor != first.NextCursor)
		}
		req.Cursor = timed.NextCursor
		next, err := tl.Grep(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageItems(next); !slices.Equal(got, tc.rest) || next.NextCursor != "" {
			t.Errorf("%s: the next page gave %q, want %q", name, got, tc.rest)
		}
	}
}

// A page cut short in the cursor's file after as many matches as earlier
// pages took is evidence enough: those matches changed, so the file's
// matches are this page's, taken again (a cut at fewer is no evidence).
func TestTimedOutPageAfterTheCursorsChangedMatches(t *testing.T) {
	ctx := context.Background()
	fsys := memfs.New(map[string]string{"a": "x 1\nx 2\nx 3\n", "b": "x b\n"})
	tl := &Tools{FS: fsys}
	req := GrepRequest{Query: "x", Limit: 2}
	first, err := tl.Grep(ctx, req)
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page %+v, %v", first, err)
	}
	if _, err := fsys.WriteFile(ctx, "a", []byte("x 9\nx 2\nx 3\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	req.Cursor = first.NextCursor
	if got, want := pageItems(cutPage(t, tl, req, "a", 2)), []string{"a: x 9", "a: x 2"}; !slices.Equal(got, want) {
		t.Errorf("the timed-out page gave %q, want %q", got, want)
	}
}

// In files and count modes a file is one item: a page resumed at a file
// that no longer matches goes on with the next, which earlier pages did not
// take (it was skipped, exit 0). Count's totals still cover every file.
func TestCursorFileNoLongerMatches(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{ModeFiles, ModeCount} {
		fsys := memfs.New(map[string]string{"a": "x\n", "b": "x\n", "c": "x\nx\n"})
		tl := &Tools{FS: fsys}
		first, err := tl.Grep(ctx, GrepRequest{Query: "x", Mode: mode, Limit: 1})
		if err != nil || first.NextCursor == "" {
			t.Fatalf("%s: first page %+v, %v", mode, first, err)
		}
		if _, err := fsys.WriteFile(ctx, "a", []byte("y\n"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		next, err := tl.Grep(ctx, GrepRequest{Query: "x", Mode: mode, Limit: 1, Cursor: first.NextCursor})
		if err != nil || len(next.Files) != 1 || next.Files[0].Path != "b" {
			t.Fatalf("%s: the page after a stopped matching: %+v, %v", mode, next, err)
		}
		if mode == ModeCount && (next.Count != 3 || *next.FilesWithMatches != 2) {
			t.Errorf("count's totals: %d matches in %d files, want 3 in 2", next.Count, *next.FilesWithMatches)
		}
	}
}

// A cursor holds for the same request however it is spelled: the path
// "." its result gives, a default given, an enum's other spelling, an
// empty glob; it was refused as another request's. Another request is
// still another.
func TestRequestDigestIgnoresSpelling(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		a, b any
		same bool
	}{
		{"ls path", LsRequest{}, LsRequest{Path: "."}, true},
		{"ls depth", LsRequest{}, LsRequest{Depth: 1}, true},
		{"ls paging", LsRequest{Limit: 2, Offset: 4}, LsRequest{}, true},
		{"ls other depth", LsRequest{}, LsRequest{Depth: 2}, false},
		{"ls other path", LsRequest{}, LsRequest{Path: "src"}, false},
		// The path as the result spells it: "a" for ./a/ or a//.
		{"ls path spelt otherwise", LsRequest{Path: "./a/"}, LsRequest{Path: "a"}, true},
		{"find path spelt otherwise", FindRequest{Path: "a//"}, FindRequest{Path: "a"}, true},
		{"grep path spelt otherwise", GrepRequest{Query: "x", Path: "./a"}, GrepRequest{Query: "x", Path: "a/"}, true},
		{"find other path", FindRequest{Path: "a"}, FindRequest{Path: "b"}, false},
		{"find pattern", FindRequest{}, FindRequest{Pattern: "**"}, true},
		{"find type", FindRequest{}, FindRequest{Type: "any"}, true},
		{"find type alias", FindRequest{Type: "f"}, FindRequest{Type: "file"}, true},
		{"find other type", FindRequest{Type: "d"}, FindRequest{Type: "file"}, false},
		{"find empty exclude", FindRequest{Exclude: []string{""}}, FindRequest{}, true},
		{"grep mode", GrepRequest{Query: "x"}, GrepRequest{Query: "x", Mode: "content"}, true},
		{"grep path", GrepRequest{Query: "x"}, GrepRequest{Query: "x", Path: "."}, true},
		{"grep include", GrepRequest{Query: "x", Include: Globs{""}}, GrepRequest{Query: "x"}, true},
		{"grep regex false", GrepRequest{Query: "x", Regex: &no}, GrepRequest{Query: "x"}, true},
		{"grep pattern", GrepRequest{Pattern: "x"}, GrepRequest{Query: "x", Regex: &yes}, true},
		{"grep regex", GrepRequest{Query: "x", Regex: &yes}, GrepRequest{Query: "x"}, false},
		{"grep other mode", GrepRequest{Query: "x", Mode: "files"}, GrepRequest{Query: "x"}, false},
		{"grep include kept", GrepRequest{Query: "x", Include: Globs{"", "*.go"}}, GrepRequest{Query: "x"}, false},
	} {
		da, db := digestOf(tc.a), digestOf(tc.b)
		if (da == db) != tc.same {
			t.Errorf("%s: %+v and %+v: same digest %v, want %v", tc.name, tc.a, tc.b, da == db, tc.same)
		}
	}
}

func digestOf(req any) string {
	display := memfs.New(nil).Display
	switch r := req.(type) {
	case LsRequest:
		return r.digest(display)
	case FindRequest:
		return r.digest(display)
	case GrepRequest:
		return r.digest(display)
	}
	panic(req)
}

// edited is text, a cursor, with its entry set to from, as a hand that
// edits one would.
func edited(text, from string) string {
	b, _ := base64.RawURLEncoding.DecodeString(text)
	var c cursor
	json.Unmarshal(b, &c)
	c.From = from
	return c.encode()
}

// retyped is text, a cursor, with its field key set to v and nothing else
// touched, as an agent that mistypes a character of it sends it back.
func retyped(text, key string, v any) string {
	b, _ := base64.RawURLEncoding.DecodeString(text)
	var m map[string]any
	json.Unmarshal(b, &m)
	m[key] = v
	b, _ = json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// A cursor changed on its way back is refused, never taken for another
// place of the walk: one whose entry named another file of the tree
// resumed there, and one whose entry named a file past the last gave an
// empty last page, with exit 0.
func TestChangedCursorIsRefused(t *testing.T) {
	tl := &Tools{FS: memfs.New(cursorTree())}
	ctx := context.Background()
	first, err := tl.Find(ctx, FindRequest{Limit: 3})
	if err != nil || first.NextCursor == "" {
		t.Fatal(first, err)
	}
	grep, err := tl.Grep(ctx, GrepRequest{Query: "match", Limit: 2})
	if err != nil || grep.NextCursor == "" {
		t.Fatal(grep, err)
	}
	for name, c := range map[string]string{
		"another entry":             retyped(first.NextCursor, "f", "d1/sub1/f01.txt"),
		"an entry past all":         retyped(first.NextCursor, "f", "u"),
		"another offset":            retyped(first.NextCursor, "o", 2),
		"another entry, re-encoded": edited(first.NextCursor, "d0"),
	} {
		if res, err := tl.Find(ctx, FindRequest{Limit: 3, Cursor: c}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument {
			t.Errorf("find, %s: %+v, %v; want INVALID_ARGUMENT", name, res, err)
		}
	}
	for name, c := range map[string]string{
		"another skip":   retyped(grep.NextCursor, "k", 0),
		"another digest": retyped(grep.NextCursor, "h", "AAAAAAAAAAA"),
	} {
		if res, err := tl.Grep(ctx, GrepRequest{Query: "match", Limit: 2, Cursor: c}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument {
			t.Errorf("grep, %s: %+v, %v; want INVALID_ARGUMENT", name, res, err)
		}
	}
	if _, err := tl.Find(ctx, FindRequest{Limit: 3, Cursor: first.NextCursor}); err != nil {
		t.Errorf("the cursor as given: %v", err)
	}
}

// A cursor is refused when it is not one, when it belongs to another
// request, when it names an entry no walk has (an edited one), or when an
// offset beside it says another place.
func TestCursorRefusals(t *testing.T) {
	tl := &Tools{FS: memfs.New(cursorTree())}
	ctx := context.Background()
	first, err := tl.Grep(ctx, GrepRequest{Query: "match", Limit: 2})
	if err != nil || first.NextCursor == "" {
		t.Fatal(first, err)
	}
	for name, req := range map[string]GrepRequest{
		"garbage":        {Query: "match", Cursor: "not a cursor"},
		"absolute entry": {Query: "match", Cursor: edited(first.NextCursor, "/etc/passwd")},
		"entry above":    {Query: "match", Cursor: edited(first.NextCursor, "a/../../x")},
		"entry dot":      {Query: "match", Cursor: edited(first.NextCursor, ".")},
		"entry NUL":      {Query: "match", Cursor: edited(first.NextCursor, "a\x00b")},
		"entry slash":    {Query: "match", Cursor: edited(first.NextCursor, "a/")},
		"another query":  {Query: "other", Cursor: first.NextCursor},
		"another mode":   {Query: "match", Mode: ModeFiles, Cursor: first.NextCursor},
		"another offset": {Query: "match", Cursor: first.NextCursor, Offset: *first.NextOffset + 1},
	} {
		_, err := tl.Grep(ctx, req)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, "cursor") && !strings.Contains(e.Message, "offset") {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if _, err := tl.Grep(ctx, GrepRequest{Query: "match", Cursor: first.NextCursor, Offset: *first.NextOffset, Limit: 7}); err != nil {
		t.Errorf("the cursor with its own offset and another limit: %v", err)
	}
	if _, err := tl.Find(ctx, FindRequest{Cursor: first.NextCursor}); fault.AsError(err) == nil {
		t.Error("find took grep's cursor")
	}
}

// The last of many pages costs about what the first costs when it resumes
// by cursor; by offset it searches every file before it again.
func TestCursorPageCost(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%03d.txt", i/20, i)] = "match\n" + strings.Repeat("filler line\n", 50)
	}
	fsys := memfs.New(files)
	tl := &Tools{FS: fsys}
	ctx := context.Background()
	fsys.ResetStats()
	res, err := tl.Grep(ctx, GrepRequest{Query: "match", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	first := fsys.Stats().BytesRead
	var cursorRead, offsetRead int64
	for range 18 {
		fsys.ResetStats()
		if res, err = tl.Grep(ctx, GrepRequest{Query: "match", Limit: 10, Cursor: res.NextCursor}); err != nil {
			t.Fatal(err)
		}
		cursorRead = fsys.Stats().BytesRead
	}
	fsys.ResetStats()
	if _, err := tl.Grep(ctx, GrepRequest{Query: "match", Limit: 10, Offset: 180}); err != nil {
		t.Fatal(err)
	}
	offsetRead = fsys.Stats().BytesRead
	t.Logf("bytes read: first page %d, page 19 by cursor %d, by offset %d", first, cursorRead, offsetRead)
	before := int64(180 * len(files["d0/f000.txt"]))
	if cursorRead > 2*first || offsetRead < before {
		t.Errorf("page 19 read %d bytes by cursor (the first %d), %d by offset (the 180 files before it hold %d)", cursorRead, first, offsetRead, before)
	}
}

// Content pages with context, followed to the end by offset or cursor,
// give each line once and every line of one large page, however small the
// byte bound: a match's before-context stops after the lines the page
// before gave (its last match's after-context), which pages once gave
// again; and a match's after-context is paid for with it, so that the
// bound never drops a line that no page then gives.
func TestGrepContextPagesGiveEachLineOnce(t *testing.T) {
	files := map[string]string{}
	for i := range 6 {
		var b strings.Builder
		for n := range 40 {
			if (n*7+i)%5 == 0 || n%11 == 3 {
				fmt.Fprintf(&b, "hit %d\n", n)
			} else {
				fmt.Fprintf(&b, "line %d\n", n)
			}
		}
		files[fmt.Sprintf("d%d/f%d.txt", i%2, i)] = b.String() + strings.Repeat("z", 150) + "\nhit last\n"
	}
	tl := &Tools{FS: memfs.New(files)}
	defer func(n int) { passAhead = n }(passAhead)
	for _, ahead := range []int{passAhead, 2} {
		// 2: a page by offset searches again the file it passes more
		// than two matching lines of.
		passAhead = ahead
		contextPagesGiveEachLineOnce(t, tl)
	}
}

func contextPagesGiveEachLineOnce(t *testing.T, tl *Tools) {
	ctx := context.Background()
	for c := range 4 {
		tl.MaxBytes = 0
		whole, err := tl.Grep(ctx, GrepRequest{Query: "hit", Context: c, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		want := pageLines(whole)
		for _, limit := range []int{1, 2, 3, 5} {
			for _, byCursor := range []bool{false, true} {
				tl.MaxBytes = 0
				if byCursor && limit == 5 {
					tl.MaxBytes = 700 // pages cut by bytes, not by the limit
				}
				var got []string
				offset, cur := 0, ""
				for range 1000 {
					r, err := tl.Grep(ctx, GrepRequest{Query: "hit", Context: c, Limit: limit, Offset: offset, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, pageLines(r)...)
					if r.NextOffset == nil {
						break
					}
					offset, cur = *r.NextOffset, ""
					if byCursor {
						offset, cur = 0, r.NextCursor
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("pass ahead %d, context %d, limit %d, by cursor %v, max bytes %d: the pages give %d lines, the whole %d\npages %q\nwhole %q", passAhead, c, limit, byCursor, tl.MaxBytes, len(got), len(want), got, want)
				}
			}
		}
	}
}

// A page that passes more matching lines of a file than a search keeps
// ahead reads that file again by its path, on disk as in memory: pages by
// offset and by cursor still give every match once.
func TestDeepPagesOnDisk(t *testing.T) {
	ctx := context.Background()
	lfs := localFS(t)
	for name, text := range cursorTree() {
		if _, err := lfs.WriteFile(ctx, name, []byte(text), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tl := &Tools{FS: lfs}
	defer func(n int) { passAhead = n }(passAhead)
	passAhead = 1
	req := GrepRequest{Query: "match", Context: 1, Limit: 1000}
	whole, err := tl.Grep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := pageItems(whole)
	for _, byCursor := range []bool{false, true} {
		req.Limit = 2
		var got []string
		cur, offset := "", 0
		for range 100 {
			req.Cursor, req.Offset = cur, offset
			page, err := tl.Grep(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, pageItems(page)...)
			if page.NextOffset == nil {
				break
			}
			if offset, cur = *page.NextOffset, ""; byCursor {
				offset, cur = 0, page.NextCursor
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("by cursor %v: pages give %q, want %q", byCursor, got, want)
		}
	}
}

// goneOnReopen is memfs whose Open by path finds gone missing: a file
// removed after the walk read it, before a page read it again.
type goneOnReopen struct {
	*memfs.FS
	gone string
}

func (g goneOnReopen) Open(ctx context.Context, p string) (backend.FileReader, error) {
	if p == g.gone {
		return nil, fault.Errorf(fault.CodeNotFound, "%s: no such file.", p)
	}
	return g.FS.Open(ctx, p)
}

// stalledOnReopen is memfs whose Open by path answers only once its
// context is done, as an object store's open that meets the deadline.
type stalledOnReopen struct{ *memfs.FS }

func (stalledOnReopen) Open(ctx context.Context, _ string) (backend.FileReader, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A page's second read of a file that meets the deadline cuts the page
// short: it was an error of the file, and the grep failed with it.
func TestDeepPageRereadMeetsTheDeadline(t *testing.T) {
	defer func(n int) { passAhead = n }(passAhead)
	passAhead = 1
	tl := &Tools{FS: stalledOnReopen{memfs.New(map[string]string{"d/a": "x 1\nx 2\nx 3\nx 4\n", "d/b": "x 5\n"})}}
	res, err := tl.Grep(context.Background(), GrepRequest{Path: "d", Query: "x", Offset: 3, Limit: 2, Timeout: Duration(50 * time.Millisecond)})
	if err != nil || !res.TimedOut {
		t.Errorf("%+v, %v; want a page cut short", res, err)
	}
}

// A file gone before a page could read it again is passed over like one
// gone before the walk: the page goes on with the next file's matches,
// none of them skipped in its stead.
func TestDeepPageFileGoneOnReread(t *testing.T) {
	defer func(n int) { passAhead = n }(passAhead)
	passAhead = 1
	fsys := goneOnReopen{FS: memfs.New(map[string]string{"d/a": "x 1\nx 2\nx 3\nx 4\n", "d/b": "x 5\nx 6\n"}), gone: "d/a"}
	tl := &Tools{FS: fsys}
	page, err := tl.Grep(context.Background(), GrepRequest{Path: "d", Query: "x", Offset: 3, Limit: 2})
	if got, want := pageItems(page), []string{"d/b: x 5", "d/b: x 6"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("page %q, %v; want %q", got, err, want)
	}
}

// What a search keeps of a file is bounded by the page, not by its
// offset: a deep page by offset keeps passAhead lines ahead at most.
func TestGrepKeepsAPagesWorth(t *testing.T) {
	ctx := context.Background()
	tl := &Tools{FS: memfs.New(map[string]string{"d/a": "x\n"})}
	for _, tc := range []struct {
		req       GrepRequest
		rel       string
		skip, cap int
	}{
		{GrepRequest{Path: "d", Query: "x", Limit: 10, Offset: 3_000_000}, "a", 0, passAhead + 11},
		{GrepRequest{Path: "d", Query: "x", Limit: 10, Offset: 5}, "a", 0, 16},
		{GrepRequest{Path: "d/a", Query: "x", Limit: 10, Offset: 3_000_000}, oneFileRel, 3_000_000, 3_000_011},
		{GrepRequest{Path: "d", Query: "x", Limit: 10, Offset: 3_000_000, Mode: ModeCount}, "a", 0, 0},
	} {
		g, err := tl.newGrep(ctx, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if skip, cap := g.keeps(tc.rel); skip != tc.skip || cap != tc.cap {
			t.Errorf("%+v: keeps skip %d, cap %d; want %d, %d", tc.req, skip, cap, tc.skip, tc.cap)
		}
	}
}
