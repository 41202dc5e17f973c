package core

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkEdit2MiB is one edit in the middle of a 2 MiB file, in process
// (match, diff, bound) against the in-memory backend: the share of a
// whole-process edit that is edit's own work.
func BenchmarkEdit2MiB(b *testing.B) {
	line := strings.Repeat("abcdefghij", 9) + "\n"
	half := strings.Repeat(line, (1<<20)/len(line))
	content := half + "MARKER = \"before\"\n" + half
	for _, fuzzy := range []bool{false, true} {
		name, old := "exact", "MARKER = \"before\""
		if fuzzy {
			name, old = "unicode", "MARKER = \u201cbefore\u201d"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				tl, _ := editTools(map[string]string{"f": content})
				res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op(old, "MARKER = 1")}})
				if err != nil || res.EditsApplied != 1 {
					b.Fatal(err)
				}
			}
		})
	}
}
