package core

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/memfs"
)

// TestGrepContentPagesFillTheBound: a content page cut by --max-bytes
// holds every match that fits. Only the reserve for its fields at their
// largest may stay unused: the next match, appended to the page as the
// page would hold it, must not fit beside that reserve. Each line was
// charged for an entry in matches, and each block for the array, which a
// block whose lines all match leaves out: with -C 1 a page of matching
// lines stopped 2,100 bytes short of 20,000.
func TestGrepContentPagesFillTheBound(t *testing.T) {
	var every, sparse, odd strings.Builder
	for i := range 3000 {
		if i < 1000 {
			fmt.Fprintf(&every, "line of text number %d\n", i)
		}
		if i%4 == 0 {
			fmt.Fprintf(&sparse, "hit %d\n", i)
		} else {
			fmt.Fprintf(&sparse, "other %d\n", i)
		}
		if i >= 2400 {
			continue
		}
		if i%3 == 0 {
			fmt.Fprintf(&odd, "hit \xff%d\n", i) // not UTF-8: linesBase64
		} else {
			fmt.Fprintf(&odd, "other %d\n", i)
		}
	}
	many := map[string]string{}
	for i := range 450 {
		many[fmt.Sprintf("d/f%03d.txt", i)] = fmt.Sprintf("hit %d\nhit again %d\nother\n", i, i)
	}
	for _, sc := range []struct {
		name  string
		files map[string]string
		query string
	}{
		{"every line matches", map[string]string{"f.txt": every.String()}, "line"},
		{"one line in four", map[string]string{"f.txt": sparse.String()}, "hit"},
		{"not UTF-8", map[string]string{"f.txt": odd.String()}, "hit"},
		{"many files", many, "hit"},
	} {
		for _, bound := range []int{2000, 20000} {
			for _, c := range []int{0, 1, 2} {
				t.Run(fmt.Sprintf("%s/%d/C%d", sc.name, bound, c), func(t *testing.T) {
					checkPagesFill(t, sc.files, GrepRequest{Query: sc.query, Context: c, Limit: 1000}, bound)
				})
			}
		}
	}
}

// checkPagesFill pages through req at bound by cursor: every page within
// the bound and as full as it can be, every line given once.
func checkPagesFill(t *testing.T, files map[string]string, req GrepRequest, bound int) {
	ctx := context.Background()
	tl := &Tools{FS: memfs.New(files), MaxBytes: bound}
	whole, err := (&Tools{FS: tl.FS, MaxBytes: 1 << 30}).Grep(ctx, GrepRequest{Query: req.Query, Context: req.Context, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	pages := 0
	for ; pages < 1000; pages++ {
		res, err := tl.Grep(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		size := jsonSize(res)
		if size > bound {
			t.Fatalf("page %d: %d bytes, over %d", pages, size, bound)
		}
		got = append(got, flatLines(res)...)
		if res.NextOffset == nil {
			break
		}
		next := req
		next.Cursor, next.Limit = res.NextCursor, 1
		unit, err := tl.Grep(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		more := withNext(res, unit)
		skel := *more
		skel.Files, skel.NextCursor = []GrepFile{}, ""
		reserve := tl.newPage(req, req.Limit, &GrepResult{Path: res.Path, Mode: res.Mode, Files: []GrepFile{}}).skeleton - jsonSize(&skel)
		if jsonSize(more)+reserve <= bound {
			t.Fatalf("page %d: %d bytes (%d lines) of %d, yet the next match fits: %d bytes with it, and %d reserved",
				pages, size, len(flatLines(res)), bound, jsonSize(more), reserve)
		}
		req.Cursor = res.NextCursor
	}
	if want := flatLines(whole); !slices.Equal(got, want) {
		t.Errorf("%d pages give %d lines, one page %d", pages+1, len(got), len(want))
	}
	if pages == 0 {
		t.Errorf("one page: the bound %d cut nothing", bound)
	}
}

// flatLines is each line of res, with its file, number, whether it
// matches and its bytes when not UTF-8.
func flatLines(res *GrepResult) []string {
	var out []string
	for _, f := range res.Files {
		for _, b := range f.Blocks {
			ms := matchSet(b)
			for i, l := range b.Lines {
				n := b.Start + i
				out = append(out, fmt.Sprint(f.Path, n, l, slices.Contains(ms, n), b.LinesBase64[n]))
			}
		}
	}
	return out
}

// withNext is the page r with the page n, which follows it, appended to
// it as one page would hold both.
func withNext(r, n *GrepResult) *GrepResult {
	m := *r
	m.Count += n.Count
	m.NextOffset, m.NextCursor = n.NextOffset, n.NextCursor
	m.Files = slices.Clone(r.Files)
	for _, f := range n.Files {
		last := len(m.Files) - 1
		if last < 0 || m.Files[last].Path != f.Path || m.Files[last].PathBase64 != f.PathBase64 {
			m.Files = append(m.Files, f)
			continue
		}
		lf := &m.Files[last]
		lf.Blocks = slices.Clone(lf.Blocks)
		for _, b := range f.Blocks {
			lb := &lf.Blocks[len(lf.Blocks)-1]
			if b.Start != lb.Start+len(lb.Lines) {
				lf.Blocks = append(lf.Blocks, b)
				continue
			}
			j := GrepBlock{Start: lb.Start, Lines: slices.Concat(lb.Lines, b.Lines)}
			if ms := slices.Concat(matchSet(*lb), matchSet(b)); len(ms) < len(j.Lines) {
				j.Matches = ms
			}
			if lb.LinesBase64 != nil || b.LinesBase64 != nil {
				j.LinesBase64 = maps.Clone(lb.LinesBase64)
				if j.LinesBase64 == nil {
					j.LinesBase64 = map[int]string{}
				}
				maps.Copy(j.LinesBase64, b.LinesBase64)
			}
			*lb = j
		}
	}
	return &m
}

// matchSet is the numbers of a block's matching lines: all of them when
// matches is left out.
func matchSet(b GrepBlock) []int {
	if b.Matches != nil {
		return b.Matches
	}
	var all []int
	for i := range b.Lines {
		all = append(all, b.Start+i)
	}
	return all
}

// TestBlockCostIsExact: what blockBuilder.cost charges for a run of lines
// is what adding them adds to the file's JSON, for runs that continue a
// block or start one, of matches and context lines, with and without
// linesBase64 entries.
func TestBlockCostIsExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	texts := []string{"x", `a "quoted" \ line`, "tab\there", "é ✓", "\x01"}
	for run := range 2000 {
		f := GrepFile{Path: "f"}
		bb := &blockBuilder{f: &f, lastLine: -1}
		line := rnd.IntN(200)
		for range 1 + rnd.IntN(6) {
			// A unit as addMatch makes one: lines before the match, which
			// may start a block, the match, lines after it.
			var lines []outLine
			lead, trail := rnd.IntN(3), rnd.IntN(3)
			line += rnd.IntN(2) * rnd.IntN(4)
			for k := range lead + 1 + trail {
				line++
				l := outLine{line: line, isMatch: k == lead || rnd.IntN(3) == 0, text: texts[rnd.IntN(len(texts))]}
				if rnd.IntN(4) == 0 {
					l.b64 = strings.Repeat("/w==", 1+rnd.IntN(3))
				}
				lines = append(lines, l)
			}
			before := jsonSize(f)
			if len(f.Blocks) == 0 {
				before += len(`,"blocks":[]`) // newFile's
			}
			want := bb.cost(lines)
			for _, l := range lines {
				bb.add(l)
			}
			if got := jsonSize(f) - before; got != want {
				t.Fatalf("run %d: adding %+v to the file grew it by %d bytes; cost said %d", run, lines, got, want)
			}
		}
	}
}
