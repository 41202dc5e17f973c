package search

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestFirstMatchOf: the first match of a line given in pieces, through
// windows of 1 to 17 bytes for a bounded regex, is the one the regexp
// finds in the line held whole, or none when it finds none. The second
// alphabet makes lines where a window's end cuts off the first match
// ("axb" of a.b|x) and a later one ("x") lies whole before it; the third,
// windows that would start inside a character (whose last bytes [^é中😀]
// matches), and stray bytes that are characters of their own.
func TestFirstMatchOf(t *testing.T) {
	defer func(w int) { windowBytes = w }(windowBytes)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := [][]string{{"a", "b", "c", "x", "é", "K", "k", "\u212a", "ne", "edle", " ", "\xff"}, {"c", "ab", "axb", "b", "abc"},
		{"é", "中", "😀", "\xc3", "\xa9"}}
	queries := []struct {
		q             string
		regex, ignore bool
		bounded       bool
	}{
		{"ab", true, false, true}, {"a.b", true, false, true}, {"[a-c]{3}x", true, false, true},
		{"needle", false, true, true}, {"kk", false, true, true}, {"(ab|b)c?", true, false, true},
		{"é{2}|xa", true, false, true}, {"a{0,3}x", true, false, true}, {"a.b|x", true, false, true}, {"abc|b", true, false, true},
		{"[^é中😀]", true, false, true}, {`\P{L}.`, true, false, true},
		{"a+x", true, false, false}, {"^ab", true, false, false}, {`\bx`, true, false, false},
	}
	for _, q := range queries {
		pattern := q.q
		if !q.regex {
			pattern = regexp.QuoteMeta(pattern)
		}
		if q.ignore {
			pattern = "(?i)" + pattern
		}
		re := regexp.MustCompile(pattern)
		for round := range 3000 {
			alphabet := alphabets[round%len(alphabets)]
			var b strings.Builder
			for n := rng.IntN(60); n > 0; n-- {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			line := b.String()
			want := int64(-1)
			if loc := re.FindStringIndex(line); loc != nil {
				want = int64(loc[0])
			}
			m, err := NewMatcher(q.q, q.regex, q.ignore)
			if err != nil {
				t.Fatal(err)
			}
			if bounded := m.lit != nil || m.bound >= 0; bounded != q.bounded {
				t.Fatalf("%q: bounded %v, want %v", q.q, bounded, q.bounded)
			}
			windowBytes = 1 + rng.IntN(17)
			rest := line
			got := m.FirstMatchOf(func() []byte {
				if rest == "" {
					return nil
				}
				n := 1 + rng.IntN(min(len(rest), 9))
				p := []byte(rest[:n])
				rest = rest[n:]
				return p
			})
			if got != want {
				t.Fatalf("%q in %q (windows of %d): %d, want %d", q.q, line, windowBytes, got, want)
			}
		}
	}
}
