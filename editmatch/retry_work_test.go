package editmatch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// likeLines is a text of n lines drawn from a few like ones, so that
// windows match often, and a random line now and then.
func likeLines(rnd *rand.Rand, n int, line func() string) []string {
	kinds := []string{line(), line(), line()}
	lines := make([]string, n)
	for j := range lines {
		if lines[j] = kinds[rnd.IntN(len(kinds))]; rnd.IntN(8) == 0 {
			lines[j] = line()
		}
	}
	return lines
}

// TestRespacedWork: Respaced's work grows with the lines of the text and
// of old, not with their product. Every window of 20,000 lines of "x"
// matched old's 2,000 lines of "x" but for its last line, each compared
// line by line: 40 million steps.
func TestRespacedWork(t *testing.T) {
	const n, m = 20000, 2000
	tx := New(strings.Repeat("x\n", n))
	if at := tx.Respaced(strings.Repeat("x \n", m) + "q\n"); len(at) != 0 {
		t.Fatalf("Respaced found %v, want none", at)
	}
	if limit := 64 * (n + m); tx.steps > limit {
		t.Errorf("%d steps for %d lines of text and %d of old, want at most %d", tx.steps, n, m, limit)
	}
}

// TestRespacedSameWindows: Respaced finds the windows that checking each
// line by line found.
func TestRespacedSameWindows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	bodies := []string{"x", "x = 1", "x=1", "X", "", " ", "\u2019", "'", "y"}
	spaces := []string{"", " ", "\t", "  "}
	line := func() string {
		return spaces[rnd.IntN(len(spaces))] + bodies[rnd.IntN(len(bodies))] + spaces[rnd.IntN(len(spaces))]
	}
	found := 0
	for round := range 5000 {
		src := strings.Join(likeLines(rnd, rnd.IntN(40), line), "\n")
		old := strings.Join(likeLines(rnd, 1+rnd.IntN(5), line), "\n")
		if rnd.IntN(2) == 0 {
			old += "\n"
		}
		got, want := New(src).Respaced(old), refRespaced(New(src), old)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: Respaced(%q) in %q = %v, want %v", round, old, src, got, want)
		}
		found += len(want)
	}
	if found < 1000 {
		t.Fatalf("%d windows found in all, too few to compare", found)
	}
}

// refRespaced is Respaced as it was, checking every window line by line.
func refRespaced(t *Text, old string) []int {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	want := make([]string, len(oldLines))
	blank := true
	for i, l := range oldLines {
		want[i] = Spaceless(l)
		blank = blank && want[i] == ""
	}
	if blank || len(want) > len(t.lines) {
		return nil
	}
	have := make([]string, len(t.lines))
	for j := range t.lines {
		have[j] = Spaceless(t.content(j))
	}
	var at []int
	for s := 0; s+len(want) <= len(have); s++ {
		if slices.Equal(want, have[s:s+len(want)]) {
			at = append(at, s+1)
		}
	}
	return at
}
