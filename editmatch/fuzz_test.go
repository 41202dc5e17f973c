package editmatch

import (
	"strings"
	"testing"

	"github.com/agentfs/agentfs/internal/editcases"
)

// FuzzLocate checks the ladder's promise: a match is a non-empty range of
// the original, an exact match is oldText itself, exact matches come in
// order, each once, and the index of a large batch finds what the scans
// find. (core's FuzzEditMatch checks what an edit writes there.)
func FuzzLocate(f *testing.F) {
	for _, s := range editcases.FuzzSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, src, old, _ string) {
		if old == "" {
			return
		}
		tx := New(src)
		ms := tx.Locate(old)
		ix := New(src)
		ix.indexed = true
		ixms := ix.Locate(old)
		if len(ixms) != len(ms) {
			t.Fatalf("indexed: %d matches, scanned: %d", len(ixms), len(ms))
		}
		for k, m := range ms {
			im := ixms[k]
			if im.Start != m.Start || im.End != m.End || im.Line != m.Line || im.Rung != m.Rung || (im.reindent == nil) != (m.reindent == nil) {
				t.Fatalf("match %d indexed %+v, scanned %+v", k, im, m)
			}
		}
		for k, m := range ms {
			if m.Start < 0 || m.Start >= m.End || m.End > len(src) {
				t.Fatalf("match %d [%d,%d) is not a non-empty range of %d bytes", k, m.Start, m.End, len(src))
			}
			if m.Line != tx.LineAt(m.Start) {
				t.Fatalf("match %d at line %d, its start is on line %d", k, m.Line, tx.LineAt(m.Start))
			}
			if m.Rung == RungExact && strings.ReplaceAll(src[m.Start:m.End], "\r\n", "\n") != strings.ReplaceAll(old, "\r\n", "\n") {
				t.Fatalf("exact match %q is not oldText %q", src[m.Start:m.End], old)
			}
			// Overlapping occurrences are all reported (they make an edit
			// ambiguous), each once, in order.
			if k > 0 && m.Rung == RungExact && m.Start <= ms[k-1].Start {
				t.Fatalf("exact matches out of order or repeated")
			}
		}
	})
}
