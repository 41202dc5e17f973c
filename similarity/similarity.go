// Package similarity scores how alike two lines are, for the "closest
// region" that edit and apply-patch show when a text is not found: the
// Sørensen–Dice coefficient of their byte pairs, cheap enough to slide
// over a whole file.
package similarity

import (
	"math"
	"slices"
)

// Bigrams is the sorted list of byte pairs of s; a one-byte line is its
// own bigram, so that it still compares.
func Bigrams(s string) []uint32 {
	if len(s) == 1 {
		return []uint32{uint32(s[0])}
	}
	out := make([]uint32, 0, max(len(s)-1, 0))
	for i := 0; i+1 < len(s); i++ {
		out = append(out, uint32(s[i])<<8|uint32(s[i+1]))
	}
	slices.Sort(out)
	return out
}

// Dice is the Sørensen–Dice coefficient of two sorted bigram lists, from
// 0 (nothing shared) to 1; two blank lines are alike.
func Dice(a, b []uint32) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// windowProbes bounds the lines of want that rank the windows.
const windowProbes = 16

// Window finds the run of len(want) lines of have (fewer when have is
// shorter) most like want, comparing want[i] with the window's line i by
// their bigrams, each line weighted by its length. A few lines spread over
// want rank the windows, so that a long want against a long file stays
// linear; the best window is then scored on every line. It returns the
// window's start and length and its score from 0 to 1 in hundredths;
// k is 0 when either side is empty.
func Window(want, have [][]uint32) (start, k int, score float64) {
	k = min(len(want), len(have))
	if k == 0 {
		return 0, 0, 0
	}
	weight := make([]float64, k)
	total := 0.0
	for i := range weight {
		weight[i] = float64(len(want[i]) + 1)
		total += weight[i]
	}
	n := min(k, windowProbes)
	probes := make([]int, n)
	for i := range probes {
		probes[i] = i * k / n
	}
	scoreAt := func(s int, lines []int) float64 {
		sc := 0.0
		for _, i := range lines {
			sc += weight[i] * Dice(want[i], have[s+i])
		}
		return sc
	}
	best := -1.0
	for s := 0; s+k <= len(have); s++ {
		if sc := scoreAt(s, probes); sc > best {
			best, start = sc, s
		}
	}
	all := make([]int, k)
	for i := range all {
		all[i] = i
	}
	return start, k, math.Round(scoreAt(start, all)/total*100) / 100
}
