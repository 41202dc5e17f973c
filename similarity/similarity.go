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

// windows scores runs of k lines of have against want: want[i] with the
// window's line i by their bigrams, each line weighted by its length. A
// few lines spread over want (probes) rank the windows, so that a long
// want against a long file stays linear.
type windows struct {
	want, have [][]uint32
	k          int
	weight     []float64
	total      float64
	probes     []int
}

func newWindows(want, have [][]uint32) *windows {
	w := &windows{want: want, have: have, k: min(len(want), len(have))}
	// Every line sought weighs in the total: those past the end of a
	// shorter text are unlike it.
	w.weight = make([]float64, len(want))
	for i := range w.weight {
		w.weight[i] = float64(len(want[i]) + 1)
		w.total += w.weight[i]
	}
	n := min(w.k, windowProbes)
	w.probes = make([]int, n)
	for i := range w.probes {
		w.probes[i] = i * w.k / n
	}
	return w
}

// rank is the window at s ranked by the probes.
func (w *windows) rank(s int) float64 {
	sc := 0.0
	for _, i := range w.probes {
		sc += w.weight[i] * Dice(w.want[i], w.have[s+i])
	}
	return sc
}

// score is the window at s scored on every line, 0 to 1 in hundredths:
// 1 only when every line sought is there as it is, so that a window alike
// but for a few bytes of many is 0.99, not rounded up to a match.
func (w *windows) score(s int) float64 {
	sc, alike := 0.0, w.k == len(w.want)
	for i := range w.k {
		d := Dice(w.want[i], w.have[s+i])
		sc += w.weight[i] * d
		alike = alike && d == 1
	}
	r := math.Round(sc/w.total*100) / 100
	if r == 1 && !alike {
		r = 0.99
	}
	return r
}

// Window finds the run of len(want) lines of have (fewer when have is
// shorter) most like want (see windows): the best window by the probes is
// then scored on every line, those of want past have's end as unlike. It
// returns the window's start and length and its score from 0 to 1 in
// hundredths; k is 0 when either side is empty.
func Window(want, have [][]uint32) (start, k int, score float64) {
	w := newWindows(want, have)
	if w.k == 0 {
		return 0, 0, 0
	}
	best := -1.0
	for s := 0; s+w.k <= len(have); s++ {
		if sc := w.rank(s); sc > best {
			best, start = sc, s
		}
	}
	return start, w.k, w.score(start)
}

// Rivalled reports whether a window of have that does not overlap the
// lines from at to at+span-1 is at least as like want, by the probes, as
// the best window that does: the place at is then not the one place want
// stands for. Windows all unlike want (a score of 0) are no rivals;
// Rivalled is false when either side is empty.
func Rivalled(want, have [][]uint32, at, span int) bool {
	w := newWindows(want, have)
	if w.k == 0 {
		return false
	}
	overlaps := func(s int) bool { return s < at+span && s+w.k > at }
	mine := -1.0
	for s := max(0, at-w.k+1); s < at+span && s+w.k <= len(have); s++ {
		mine = max(mine, w.rank(s))
	}
	// A rival is any window that ranks above 0 and as high as mine; most
	// are ruled out by their first probes (those left cannot lift them
	// there). Ranking every window on every probe, edit asking for each
	// edit of a retried batch, made 138 edits in 2 MB of Go take 8 s
	// (2 s so).
	left := make([]float64, len(w.probes)+1)
	for j := len(w.probes) - 1; j >= 0; j-- {
		left[j] = left[j+1] + w.weight[w.probes[j]]
	}
	// slack keeps a window whose rank may round to mine's.
	slack := 1e-9 * w.total
windows:
	for s := 0; s+w.k <= len(have); s++ {
		if overlaps(s) {
			continue
		}
		sc := 0.0
		for j, i := range w.probes {
			if sc+left[j] < mine-slack {
				continue windows
			}
			sc += w.weight[i] * Dice(w.want[i], w.have[s+i])
		}
		if sc > 0 && sc >= mine {
			return true
		}
	}
	return false
}
