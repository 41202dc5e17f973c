package core

import (
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLineDiffOneSideEmpty: a diff from or to nothing, read without a
// search, is the search's: every line added, or every line deleted.
func TestLineDiffOneSideEmpty(t *testing.T) {
	until := time.Now().Add(time.Minute)
	for _, b := range []string{"a\n", "a\nb", "a\n\nb\r\nc\n", "\n\n"} {
		searched := lineDiff("zz\n", "zz\n"+b, until)[1:]
		if got := lineDiff("", b, until); !equalLines(got, searched) {
			t.Errorf("%q added: %q, searched %q", b, got, searched)
		}
		if !strings.HasSuffix(b, "\n") {
			continue // zz would end its last line
		}
		searched = lineDiff(b+"zz\n", "zz\n", until)
		searched = searched[:len(searched)-1]
		if got := lineDiff(b, "", until); !equalLines(got, searched) {
			t.Errorf("%q deleted: %q, searched %q", b, got, searched)
		}
	}
}

func equalLines(a, b []diffLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRenderedSizeBoundsTheDiff: renderDiff's hunks fit the size it is
// grown to, so that it grows once, and not much past it: grown by
// doubling, the diff of a 2 MB file added allocated 10 MB.
func TestRenderedSizeBoundsTheDiff(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for range 500 {
		var lines []diffLine
		for range r.Intn(40) {
			text := strings.Repeat("x", r.Intn(5)) + "\n"
			if r.Intn(10) == 0 {
				text = strings.TrimSuffix(text, "\n")
			}
			lines = append(lines, diffLine{" -+"[r.Intn(3)*min(1, r.Intn(4))], text})
		}
		context := r.Intn(4)
		diff, _ := renderDiff("f", lines, 0, context)
		hunks := len(diff) - len("--- f\n+++ f\n")
		if size := renderedSize(lines, context); hunks > size {
			t.Fatalf("%q, context %d: %d bytes of hunks, bound %d", lines, context, hunks, size)
		}
	}
	added := strings.Repeat(strings.Repeat("y", 99)+"\n", 20000)
	lines := lineDiff("", added, time.Now().Add(time.Minute))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	diff, _ := renderDiff("f", lines, 0, diffContext)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(diff))*3/2 {
		t.Fatalf("rendering a diff of %d bytes allocated %d", len(diff), n)
	}
}
