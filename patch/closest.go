package patch

import (
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/similarity"
)

// Region is where in a file lines that were not found most nearly appear,
// so that the caller can read them and copy their exact text.
type Region struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// Similarity is 0 to 1: the line-by-line bigram similarity of the
	// region to the lines sought, ignoring whitespace at both ends.
	Similarity float64 `json:"similarity"`
	// Text is the region's first lines, at most regionLines of them and
	// regionBytes long.
	Text string `json:"text"`
}

// regionLines and regionBytes bound the text of a region in an error.
const (
	regionLines = 8
	regionBytes = 1024
)

// sought is what a chunk's search that found nothing looked for, and
// after what.
type sought int

const (
	// soughtContext: one of the chunk's @@ lines, after the chunk before
	// (and after the @@ lines before it).
	soughtContext sought = iota
	// soughtAfterChunk: the chunk's old lines, after the chunk before.
	soughtAfterChunk
	// soughtAfterContext: the chunk's old lines, after its @@ line (or
	// around it, for a chunk that holds that line).
	soughtAfterContext
)

// notFound is the PATCH_VERIFY error of chunk k of op, whose lines want
// (its old lines, or its @@ context line) were not found in texts at or
// after index start; the chunk before ends at index prev (start, but for
// the old lines sought after an @@ line). Unless explain, it is the error
// alone, without the closest region and its hint, which cost a search of
// the file (partlyApplied's rounds need only the error).
func notFound(op Op, k int, texts, want []string, start, prev int, s sought, explain bool) *fault.Error {
	context := s == soughtContext
	eof := op.Chunks[k].EOF && !context
	c := op.Chunks[k]
	what := fmt.Sprintf("chunk %d of '%s'", k+1, op.Path)
	if context {
		what = fmt.Sprintf("the context '@@ %s' of chunk %d of '%s'", cut(want[0]), k+1, op.Path)
	}
	where := "the file"
	if start > 0 {
		where = fmt.Sprintf("the file after line %d", start)
	}
	e := fault.Errorf(fault.CodePatchVerify, "%s (patch line %d) was not found in %s.", what, c.Line, where).
		WithPath(op.Path).WithDetail("path", op.Path).WithDetail("chunk", k+1).WithDetail("patchLine", c.Line)
	if !explain {
		return e
	}
	r, ok := closest(texts, want)
	if !ok {
		return e.WithHint("read the file and copy the chunk's context (' ') and removed ('-') lines from it exactly")
	}
	e.WithDetail("closest", r)
	// Why lines alike could not stand there, when they are.
	why := ""
	switch {
	case s == soughtAfterContext && r.StartLine > prev && r.StartLine <= start:
		// (Lines above the chunk before are out of order, @@ line or
		// none: its @@ line is sought after that chunk too.)
		why = fmt.Sprintf("a chunk's lines are sought after its @@ line, line %d (or around it, when they hold it): give the chunk an @@ line above them, or none", start)
	case r.StartLine <= prev && r.EndLine > prev:
		why = fmt.Sprintf("they overlap the chunk before, which ends at line %d: merge the two chunks into one", prev)
	case r.StartLine <= prev:
		why = "chunks must follow the order of the file, each after the previous one"
	case eof && r.EndLine < len(texts):
		why = "a chunk that ends with '*** End of File' must be the file's last lines: drop that marker to change lines elsewhere"
	case len(want) > len(texts):
		why = fmt.Sprintf("the chunk has %d lines to find and the file has %d", len(want), len(texts))
	}
	span := editmatch.LineSpan(r.StartLine, r.EndLine)
	if r.Similarity == 1 && why != "" {
		return e.WithHint("the chunk's lines are %s, but %s", span, why)
	}
	if why != "" {
		why = "; " + why
	}
	return e.WithHint("the closest is %s (similarity %.2f): read the file there and copy the chunk's context (' ') and removed ('-') lines from it exactly%s", span, r.Similarity, why)
}

// closest finds the window of texts most like want, comparing line i of
// want with line i of the window; ok is false when nothing is alike.
func closest(texts, want []string) (Region, bool) {
	key := func(s string) []uint32 { return similarity.Bigrams(strings.TrimSpace(editmatch.FoldUnicode(s))) }
	w := make([][]uint32, len(want))
	for i := range w {
		w[i] = key(want[i])
	}
	have := make([][]uint32, len(texts))
	for j, t := range texts {
		have[j] = key(t)
	}
	at, k, sim := similarity.Window(w, have)
	if k == 0 || sim == 0 {
		return Region{}, false
	}
	text := strings.Join(texts[at:at+min(k, regionLines)], "\n")
	switch {
	case len(text) > regionBytes:
		text = strings.ToValidUTF8(text[:regionBytes], "") + "…"
	case k > regionLines:
		text += "\n…"
	}
	return Region{StartLine: at + 1, EndLine: at + k, Similarity: sim, Text: text}, true
}
