package editmatch

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLocate: an oldText of like lines in a text of like lines,
// where every window matches (re-indented) or every window but for its
// last line, beside the usual shapes: one place, and no place for a long
// oldText.
func BenchmarkLocate(b *testing.B) {
	var file, other strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&file, "\tline %d of the file, with some words\n", i)
	}
	for i := range 5000 {
		fmt.Fprintf(&other, "line %d of the old text, with other words\n", i)
	}
	like := strings.Repeat("  x\n", 20000)
	for _, bc := range []struct{ name, src, old string }{
		{"like-lines-reindented", like, strings.Repeat("\tx\n", 2000)},
		{"like-lines-but-the-last", like, strings.Repeat("x \n", 2000) + "y"},
		{"one-place-reindented", file.String(), "    line 10000 of the file, with some words\n    line 10001 of the file, with some words\n"},
		{"no-place-long", file.String(), other.String()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				New(bc.src).Locate(bc.old)
			}
		})
	}
}
