package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// batchFile is a 2 MiB file of numbered 100-byte lines, each ending in two
// spaces, and a batch of n edits spread evenly over it: exact edits take
// one line's text, fuzzy ones two lines without their trailing spaces (the
// trailing-whitespace rung).
func batchFile(n int, fuzzy bool) (string, []EditOp) {
	var f strings.Builder
	lines := 0
	for f.Len() < 2<<20-100 {
		fmt.Fprintf(&f, "line %06d: %-84s  \n", lines, strings.Repeat("filler ", 12))
		lines++
	}
	line := func(i int) string { return fmt.Sprintf("line %06d: %-84s", i, strings.Repeat("filler ", 12)) }
	edits := make([]EditOp, n)
	for k := range edits {
		i := k * (lines / n)
		if fuzzy {
			edits[k] = op(line(i)+"\n"+line(i+1)+"\n", fmt.Sprintf("edited %d\n", i))
		} else {
			edits[k] = op(fmt.Sprintf("line %06d:", i), fmt.Sprintf("LINE %06d:", i))
		}
	}
	return f.String(), edits
}

// BenchmarkEditBatch is a batch of 1,000 edits on a 2 MiB file: planning
// alone, and the whole edit (plan, diff, bound) against the in-memory
// backend. bench/edit-batch.md records its figures.
func BenchmarkEditBatch(b *testing.B) {
	for _, fuzzy := range []bool{false, true} {
		src, edits := batchFile(1000, fuzzy)
		name := map[bool]string{false: "exact", true: "fuzzy"}[fuzzy]
		b.Run(name+"/plan", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, _, err := planEdits(src, edits); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/edit", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				tl, _ := editTools(map[string]string{"f": src})
				res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: edits})
				if err != nil || res.EditsApplied != len(edits) {
					b.Fatal(err)
				}
			}
		})
	}
}
