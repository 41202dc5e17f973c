package core

import (
	"math"
	"strings"

	"github.com/agentfs/agentfs/similarity"
)

// ClosestRegion is where an unmatched oldText most nearly appears, so the
// caller can read those lines and retry with their exact text.
type ClosestRegion struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// Similarity is 0 to 1: the line-by-line bigram similarity of the region
	// to oldText, after the ladder's normalisations.
	Similarity float64 `json:"similarity"`
	Text       string  `json:"text"`
}

// closestTextBytes bounds the region's text in an error; closestProbes
// bounds the lines of oldText that rank the windows.
const (
	closestTextBytes = 2048
	closestProbes    = 16
)

// closest finds the window of lines most similar to old, comparing line i
// of old with line i of the window.
func (t *text) closest(old string) (ClosestRegion, bool) {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	k := min(len(oldLines), len(t.lines))
	if k == 0 {
		return ClosestRegion{}, false
	}
	fold := lineKeys[len(lineKeys)-1].key
	want := make([][]uint32, k)
	weight := make([]float64, k)
	total := 0.0
	for i := range want {
		want[i] = similarity.Bigrams(fold(oldLines[i]))
		weight[i] = float64(len(want[i]) + 1)
		total += weight[i]
	}
	have := make([][]uint32, len(t.lines))
	for j := range t.lines {
		have[j] = similarity.Bigrams(fold(t.content(j)))
	}
	// Windows are ranked by up to closestProbes lines spread over oldText,
	// so that a long oldText against a long file stays linear; the best
	// window is then scored on every line.
	probes := make([]int, 0, closestProbes)
	for i := range min(k, closestProbes) {
		probes = append(probes, i*k/min(k, closestProbes))
	}
	score := func(s int, lines []int) float64 {
		sc := 0.0
		for _, i := range lines {
			sc += weight[i] * similarity.Dice(want[i], have[s+i])
		}
		return sc
	}
	best, bestAt := -1.0, 0
	for s := 0; s+k <= len(have); s++ {
		if sc := score(s, probes); sc > best {
			best, bestAt = sc, s
		}
	}
	all := make([]int, k)
	for i := range all {
		all[i] = i
	}
	r := ClosestRegion{
		StartLine:  bestAt + 1,
		EndLine:    bestAt + k,
		Similarity: math.Round(score(bestAt, all)/total*100) / 100,
	}
	r.Text = t.src[t.lines[bestAt].start:t.lines[bestAt+k-1].end]
	if len(r.Text) > closestTextBytes {
		r.Text = strings.ToValidUTF8(r.Text[:closestTextBytes], "") + "…[truncated]"
	}
	return r, true
}
