package patch

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSeekWork: the ladder's work grows with the file's lines and the
// chunk's, not with their product. Every window of 20,000 lines of "x"
// matched a chunk's 2,000 lines of "x" but for its last, at each of the
// four rungs, each compared line by line: 160 million steps.
func TestSeekWork(t *testing.T) {
	const n, m = 20000, 2000
	lines := strings.Split(strings.Repeat("x\n", n), "\n")
	old := append(strings.Split(strings.Repeat("x\n", m-1), "\n"), "q")
	steps := 0
	if at, rung, ok := seekLadder(lines, old, 0, &steps); ok {
		t.Fatalf("found at %d (%s), want nowhere", at, rung)
	}
	if limit := 64 * (n + m); steps > limit {
		t.Errorf("%d steps for %d lines of file and %d of chunk, want at most %d", steps, n, m, limit)
	}
}

// TestSeekSameWindows: the ladder finds the place and rung that checking
// every window line by line found.
func TestSeekSameWindows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	bodies := []string{"x", "x", "y", "", "x\u2019", "x'", "\u2014", "-"}
	spaces := []string{"", "", " ", "\t"}
	line := func() string {
		return spaces[rnd.IntN(len(spaces))] + bodies[rnd.IntN(len(bodies))] + spaces[rnd.IntN(len(spaces))]
	}
	like := func(n int) []string {
		kinds := []string{line(), line(), line()}
		lines := make([]string, n)
		for j := range lines {
			if lines[j] = kinds[rnd.IntN(len(kinds))]; rnd.IntN(8) == 0 {
				lines[j] = line()
			}
		}
		return lines
	}
	found := 0
	for round := range 5000 {
		lines, old := like(rnd.IntN(40)), like(rnd.IntN(5))
		start := rnd.IntN(10) - 2
		steps := 0
		at, rung, ok := seekLadder(lines, old, start, &steps)
		wantAt, wantRung, wantOK := refSeek(lines, old, start)
		if at != wantAt || rung != wantRung || ok != wantOK {
			t.Fatalf("round %d: Seek(%q, %q, %d) = %d, %q, %v; want %d, %q, %v", round, lines, old, start, at, rung, ok, wantAt, wantRung, wantOK)
		}
		if ok && len(old) > 0 {
			found++
		}
	}
	if found < 500 {
		t.Fatalf("%d chunks found in all, too few to compare", found)
	}
}

// refSeek is the ladder's Seek as it was, checking every window line by
// line.
func refSeek(lines, old []string, start int) (int, string, bool) {
	if len(old) == 0 {
		return start, RungExact, true
	}
	start = max(start, 0)
	if start+len(old) > len(lines) {
		return 0, "", false
	}
	have := make([]string, len(lines)-start)
	want := make([]string, len(old))
	for _, r := range ladderRungs {
		for i, l := range lines[start:] {
			have[i] = r.key(l)
		}
		for i, o := range old {
			want[i] = r.key(o)
		}
	windows:
		for s := 0; s+len(want) <= len(have); s++ {
			for i, w := range want {
				if have[s+i] != w {
					continue windows
				}
			}
			return start + s, r.name, true
		}
	}
	return 0, "", false
}
