package similarity

import (
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
