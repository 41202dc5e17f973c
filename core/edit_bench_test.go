package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// BenchmarkEdit2MiB is one edit in the middle of a 2 MiB file, in process
// (match, diff, bound) against the in-memory backend: the share of a
// whole-process edit that is edit's own work.
func BenchmarkEdit2MiB(b *testing.B) {
	line := strings.Repeat("abcdefghij", 9) + "\n"
	half := strings.Repeat(line, (1<<20)/len(line))
	content := half + "MARKER = \"before\"\n" + half
	for _, c := range []struct{ name, old string }{
		{"exact", "MARKER = \"before\""},
		{"unicode", "MARKER = \u201cbefore\u201d"},
	} {
		name, old := c.name, c.old
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
	// The failure path: every rung, then the closest region of 10 lines.
	b.Run("no-match", func(b *testing.B) {
		old := strings.Repeat("nothing like this line is in the file\n", 10)
		for b.Loop() {
			tl, _ := editTools(map[string]string{"f": content})
			_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op(old, "x")}})
			if codeOf(err) != fault.CodeNoMatch {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNoMatchLongOldText bounds the failure path when both the file
// and oldText are long: the lock is held meanwhile.
func BenchmarkNoMatchLongOldText(b *testing.B) {
	var f, o strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&f, "line %d of the file, with some words\n", i)
	}
	for i := range 5000 {
		fmt.Fprintf(&o, "line %d of the old text, with other words\n", i)
	}
	for b.Loop() {
		tl, _ := editTools(map[string]string{"f": f.String()})
		_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op(o.String(), "x")}})
		if codeOf(err) != fault.CodeNoMatch {
			b.Fatal(err)
		}
	}
}
