package editmatch

import (
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

// closestTextBytes bounds the region's text in an error.
const closestTextBytes = 2048

// Closest finds the window of lines most similar to old, comparing line i
// of old with line i of the window.
func (t *Text) Closest(old string) (ClosestRegion, bool) {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	fold := lineKeys[len(lineKeys)-1].key
	want := make([][]uint32, min(len(oldLines), len(t.lines)))
	for i := range want {
		want[i] = similarity.Bigrams(fold(oldLines[i]))
	}
	have := make([][]uint32, len(t.lines))
	for j := range t.lines {
		have[j] = similarity.Bigrams(fold(t.content(j)))
	}
	bestAt, k, sim := similarity.Window(want, have)
	if k == 0 {
		return ClosestRegion{}, false
	}
	r := ClosestRegion{StartLine: bestAt + 1, EndLine: bestAt + k, Similarity: sim}
	r.Text = t.src[t.lines[bestAt].start:t.lines[bestAt+k-1].end]
	if len(r.Text) > closestTextBytes {
		r.Text = strings.ToValidUTF8(r.Text[:closestTextBytes], "") + "…[truncated]"
	}
	return r, true
}
