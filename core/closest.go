package core

import (
	"strconv"
	"strings"
)

// Closest returns the candidate nearest to name (case-insensitive edit
// distance), or "" when none is close enough to be a plausible typo. A typo
// keeps at least one character of the name: any one-letter flag is one
// edit from -x, which tells nothing; and one letter's other case is
// another flag (-I is not -i).
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	n := len([]rune(name))
	if bestD < 0 || bestD > min(max(2, n/3), n-1) || n == 1 {
		return ""
	}
	return best
}

// Nearest returns up to n candidates within a plausible typo of name, the
// closest first: same name in another case, then by edit distance.
func Nearest(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	lname := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	var hits []scored
	for _, c := range candidates {
		if c == name {
			continue
		}
		lc := strings.ToLower(c)
		d := editDistance(lname, lc)
		switch {
		case lc == lname:
			d = 0
		case d > limit && !strings.HasPrefix(lc, lname) && !strings.HasPrefix(lname, stem(lc)):
			continue
		default:
			d++
		}
		hits = append(hits, scored{c, d})
	}
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && (hits[j].d < hits[j-1].d || hits[j].d == hits[j-1].d && hits[j].s < hits[j-1].s); j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	var out []string
	for i := 0; i < len(hits) && i < n; i++ {
		out = append(out, hits[i].s)
	}
	return out
}

// stem is a name without its extension, so "main" finds "main.go".
func stem(s string) string {
	if i := strings.LastIndexByte(s, '.'); i > 0 {
		return s[:i]
	}
	return s
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func itoa(i int) string { return strconv.Itoa(i) }

func strconvQuote(s string) string { return strconv.Quote(s) }
