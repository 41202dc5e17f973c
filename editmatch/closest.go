package editmatch

import (
	"strconv"
	"strings"
	"unicode"

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

// LineSpan names lines first to last in a message: "line 4" for one,
// "lines 4-6" for more ("lines 4-4" read as a slip).
func LineSpan(first, last int) string {
	if first == last {
		return "line " + strconv.Itoa(first)
	}
	return "lines " + strconv.Itoa(first) + "-" + strconv.Itoa(last)
}

// closestTextBytes bounds the region's text in an error.
const closestTextBytes = 2048

// Closest finds the window of lines most similar to old, comparing line i
// of old with line i of the window.
func (t *Text) Closest(old string) (ClosestRegion, bool) {
	fold := lineKeys[len(lineKeys)-1].key
	if strings.TrimSpace(fold(old)) == "" {
		return ClosestRegion{}, false // nothing is like it: a blank line was, wholly
	}
	want, have := t.bigramLines(old, fold)
	bestAt, k, sim := similarity.Window(want, have)
	if k == 0 {
		return ClosestRegion{}, false
	}
	r := ClosestRegion{StartLine: bestAt + 1, EndLine: bestAt + k, Similarity: sim}
	// Its lines as read shows them, and apply-patch's closest region: CRLF
	// as LF, which oldText copied from it matches all the same.
	r.Text = strings.ReplaceAll(t.src[t.lines[bestAt].start:t.lines[bestAt+k-1].end], "\r\n", "\n")
	if len(r.Text) > closestTextBytes {
		r.Text = strings.ToValidUTF8(r.Text[:closestTextBytes], "") + "…[truncated]"
	}
	return r, true
}

// bigramLines are the bigrams of old's lines and of the text's, folded.
func (t *Text) bigramLines(old string, fold func(string) string) (want, have [][]uint32) {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	want = make([][]uint32, len(oldLines))
	for i := range want {
		want[i] = similarity.Bigrams(fold(oldLines[i]))
	}
	have = make([][]uint32, len(t.lines))
	for j := range t.lines {
		have[j] = similarity.Bigrams(fold(t.content(j)))
	}
	return want, have
}

// Rivalled reports whether lines of the text other than the n from line
// (1-based) are at least as like old as those are, case aside (see
// similarity.Rivalled): old then stands for another place as well.
func (t *Text) Rivalled(old string, line, n int) bool {
	unicodeKey := lineKeys[len(lineKeys)-1].key
	fold := func(s string) string { return strings.ToLower(unicodeKey(s)) }
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	want := make([][]uint32, len(oldLines))
	for i := range want {
		want[i] = similarity.Bigrams(fold(oldLines[i]))
	}
	if t.lowerBigrams == nil {
		t.lowerBigrams = make([][]uint32, len(t.lines))
		for j := range t.lines {
			t.lowerBigrams[j] = similarity.Bigrams(fold(t.content(j)))
		}
	}
	return similarity.Rivalled(want, t.lowerBigrams, line-1, n)
}

// Respaced returns the first lines (1-based) of the windows whose lines
// are old's but for white space anywhere in them, case and the unicode
// rung's lookalikes: "timeout=60" where old says "timeout = 60", which no
// rung matches (they trim a line's ends only). A blank old has none.
func (t *Text) Respaced(old string) []int {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	want := make([]string, len(oldLines))
	blank := true
	for i, l := range oldLines {
		want[i] = Spaceless(l)
		blank = blank && want[i] == ""
	}
	if blank || len(want) > len(t.lines) {
		return nil
	}
	if t.spaceless == nil {
		t.spaceless = make([]string, len(t.lines))
		for j := range t.lines {
			t.spaceless[j] = Spaceless(t.content(j))
		}
	}
	// A scan (seek): every window checked line by line took minutes for
	// a file of like lines and an old of many.
	at := Starts(t.spaceless, want, &t.steps)
	for i := range at {
		at[i]++
	}
	return at
}

// Spaceless is s without white space, lower case, lookalikes folded.
func Spaceless(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(foldUnicode(s)), ""))
}

// Telling reports whether text is enough to tell one change from another,
// so that finding it where a change would put it proves a retry: 4
// characters besides whitespace, one a letter or a digit (a lone } stands
// whole in many files).
func Telling(text string) bool {
	visible, word := 0, false
	for _, r := range text {
		if !unicode.IsSpace(r) {
			visible++
		}
		word = word || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return visible >= 4 && word
}

// RetryProof reports whether newText standing whole once in the file can
// prove that the edit oldText -> newText landed before: newText has 4
// characters besides whitespace, one a letter or a digit, and is like
// oldText (case and indentation aside, a Dice coefficient of 0.3 or
// more), as the text an edit changes mostly is. A lone "}", or a line of
// boilerplate such as "  } else {" or "    return x" that stands once in
// a file, passed for the retry of an edit whose oldText ("while (z) {")
// was never there, with success. An edit that rewrote its text whole is
// not told from such a mistake: retried, it is NO_MATCH, showing the
// closest region. apply-patch holds a chunk's old lines and the lines it
// would leave to it as well.
func RetryProof(oldText, newText string) bool {
	like := similarity.Dice(similarity.Bigrams(unindented(oldText)), similarity.Bigrams(unindented(newText)))
	return Telling(newText) && like >= minRetryLikeness
}

// unindented is text in lower case, each line without its leading white
// space: the indentation both sides of an edit share made any two deep
// lines alike ("while z:" and "else:" at 8 spaces scored 0.5).
func unindented(text string) string {
	lines := strings.Split(strings.ToLower(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// minRetryLikeness is the least likeness of oldText and newText (see
// RetryProof): "key = 1" and "key = 2" score 0.83, "item 3" and "item
// three" 0.57; "while (z) {" and "  } else {" 0.21.
const minRetryLikeness = 0.3
