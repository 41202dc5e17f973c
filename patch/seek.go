package patch

import (
	"strings"
	"unicode"

	"github.com/agentfs/agentfs/editmatch"
)

// The rungs of the default ladder, from the strictest: those of edit's
// ladder, whose names the results of both tools share.
const (
	RungExact              = editmatch.RungExact
	RungTrailingWhitespace = editmatch.RungTrailingWhitespace
	RungWhitespace         = editmatch.RungWhitespace
	RungUnicode            = editmatch.RungUnicode
)

// Matcher locates the old lines of a chunk in a file.
type Matcher interface {
	// Seek returns the first index at or after start where old occurs in
	// lines (both without line terminators), trying a ladder of ever
	// looser comparisons and stopping at the first rung that finds one;
	// rung names it. An empty old occurs at start.
	Seek(lines, old []string, start int) (at int, rung string, ok bool)
}

// Ladder is the Matcher of Codex's seek_sequence: exact, then ignoring
// whitespace at the end of lines, then at both ends, then also folding
// typographic dashes, quotes and spaces to ASCII, and NFKC forms as edit
// does.
var Ladder Matcher = ladder{}

type ladder struct{}

var ladderRungs = []struct {
	name string
	key  func(string) string
}{
	{RungExact, func(s string) string { return s }},
	{RungTrailingWhitespace, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }},
	{RungWhitespace, strings.TrimSpace},
	// Edit's unicode fold, a superset of Codex's last pass (dashes,
	// quotes, odd spaces): NFKC too, so that NFD text, ligatures and an
	// ellipsis match as they do in edit.
	{RungUnicode, func(s string) string { return strings.TrimSpace(editmatch.FoldUnicode(s)) }},
}

func (ladder) Seek(lines, old []string, start int) (int, string, bool) {
	var steps int
	return seekLadder(lines, old, start, &steps)
}

// seekLadder is the ladder's Seek, counting its comparisons in steps. Each
// rung scans the file's lines once (editmatch.Index): every window checked
// line by line took minutes for a chunk of many like lines in a file of
// them, at each rung.
func seekLadder(lines, old []string, start int, steps *int) (int, string, bool) {
	if len(old) == 0 {
		return start, RungExact, true
	}
	start = max(start, 0)
	if start+len(old) > len(lines) {
		return 0, "", false
	}
	have := make([]string, len(lines)-start)
	want := make([]string, len(old))
	for _, r := range ladderRungs {
		for i, l := range lines[start:] {
			have[i] = r.key(l)
		}
		for i, o := range old {
			want[i] = r.key(o)
		}
		if s := editmatch.Index(have, want, steps); s >= 0 {
			return start + s, r.name, true
		}
	}
	return 0, "", false
}
