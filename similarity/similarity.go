// Package similarity scores how alike two lines are, for the "closest
// region" that edit and apply-patch show when a text is not found: the
// Sørensen–Dice coefficient of their byte pairs, cheap enough to slide
// over a whole file.
package similarity

import "slices"

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
