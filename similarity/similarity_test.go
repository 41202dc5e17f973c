package similarity

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func keys(lines ...string) [][]uint32 {
	out := make([][]uint32, len(lines))
	for i, l := range lines {
		out[i] = Bigrams(l)
	}
	return out
}

// TestWindowScore: a score of 1 says that every line sought is there as
// it is. Lines past the end of a shorter text count as unlike, and a
// window alike but for a small part scores at most 0.99: both scored 1
// once, and a hint then told the caller to copy lines it had copied.
func TestWindowScore(t *testing.T) {
	long := strings.Repeat("abcdefghij", 40)
	tests := []struct {
		name       string
		want, have [][]uint32
		start, k   int
		score      float64
	}{
		{"alike", keys("one", "two"), keys("zero", "one", "two"), 1, 2, 1},
		{"sought lines past the end", keys("one", "two", "three"), keys("one", "two"), 0, 2, 0.55},
		{"one of many bytes differs", keys(long, long+"x"), keys(long, long+"y"), 0, 2, 0.99},
		{"nothing alike", keys("ab"), keys("xy"), 0, 1, 0},
		{"nothing to search", keys("ab"), nil, 0, 0, 0},
	}
	for _, tt := range tests {
		start, k, score := Window(tt.want, tt.have)
		if start != tt.start || k != tt.k || score != tt.score {
			t.Errorf("%s: window %d+%d scored %v, want %d+%d scored %v", tt.name, start, k, score, tt.start, tt.k, tt.score)
		}
	}
}

// TestRivalledAsEveryWindowRanked: Rivalled, which rules most windows out
// by their first probes, answers as ranking every window on every probe
// did, ties (copies of lines) included.
func TestRivalledAsEveryWindowRanked(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	words := []string{"", "x", "ab", "abc", "abd", "timeout = 30", "timeout = 45", "return nil", "}"}
	lines := func(n int) [][]uint32 {
		var ls []string
		for range n {
			ls = append(ls, words[rnd.IntN(len(words))])
		}
		return keys(ls...)
	}
	// every is Rivalled as it was: every window ranked on every probe.
	every := func(want, have [][]uint32, at, span int) bool {
		w := newWindows(want, have)
		if w.k == 0 {
			return false
		}
		mine, rival := -1.0, -1.0
		for s := 0; s+w.k <= len(have); s++ {
			if r := w.rank(s); s < at+span && s+w.k > at {
				mine = max(mine, r)
			} else {
				rival = max(rival, r)
			}
		}
		return rival > 0 && rival >= mine
	}
	rivalled := 0
	for round := range 20000 {
		want, have := lines(1+rnd.IntN(20)), lines(rnd.IntN(60))
		at, span := rnd.IntN(len(have)+1), 1+rnd.IntN(4)
		got, wantOK := Rivalled(want, have, at, span), every(want, have, at, span)
		if got != wantOK {
			t.Fatalf("round %d: Rivalled(%d lines, %d lines, %d, %d) = %v, want %v", round, len(want), len(have), at, span, got, wantOK)
		}
		if got {
			rivalled++
		}
	}
	if rivalled < 2000 || rivalled > 18000 {
		t.Fatalf("%d of 20000 rivalled: too few of one answer to compare", rivalled)
	}
}
