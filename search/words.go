package search

import (
	"io"
	"regexp"
	"unicode/utf8"
)

// NotWordClass is a character no word holds: a word is letters, marks,
// digits and connectors (_), as ripgrep's -w has it, in any script.
const NotWordClass = `[^\pL\pM\pN\p{Pc}]`

// Words finds the matches of an expression that are whole words: those
// with no word character right before or after them, the one rule of
// --word, grep's and replace's alike (Go's \b knows only ASCII words: \bFoo\b
// matched in Fooé).
type Words struct {
	// first is the expression as group 1 of an expression that takes the
	// characters around it. after is first for a search that starts one
	// character before where it may match, so that the expression's ^,
	// \A and \b see that character.
	first, after *regexp.Regexp
}

// NewWords compiles expr, a regular expression, with flags ((?m), (?i)...)
// written before it, for its whole-word matches.
func NewWords(flags, expr string) (*Words, error) {
	around := `(` + expr + `)(?:` + NotWordClass + `|$)`
	first, err := regexp.Compile(flags + `(?:^|` + NotWordClass + `)` + around)
	if err != nil {
		return nil, err
	}
	return &Words{first: first, after: regexp.MustCompile(flags + NotWordClass + around)}, nil
}

// FindAll returns the index pairs of every whole-word match in b and its
// groups, as FindAllSubmatchIndex does. A word match is sought again from
// the end of the last one's group, as the character after it may be the
// one before the next ("a a"). That search starts at the character before
// it, so that it is seen, not taken for the start of the text: x\.|^\.y
// found x. alone in x..y, not .y too.
func (w *Words) FindAll(b []byte) [][]int {
	var out [][]int
	for at, from := 0, w.first; at < len(b); from = w.after {
		start := at
		if at > 0 {
			_, size := utf8.DecodeLastRune(b[:at])
			start -= size
		}
		m := from.FindSubmatchIndex(b[start:])
		if m == nil {
			break
		}
		inner := make([]int, len(m)-2)
		for i, v := range m[2:] {
			inner[i] = v
			if v >= 0 {
				inner[i] += start
			}
		}
		out = append(out, inner)
		at = max(inner[1], at+1)
	}
	return out
}

// Match reports whether b holds a whole-word match: FindAll's first is
// first's.
func (w *Words) Match(b []byte) bool { return w.first.Match(b) }

// Index is where the first whole-word match in b starts, or -1.
func (w *Words) Index(b []byte) int {
	if m := w.first.FindSubmatchIndex(b); m != nil {
		return m[2]
	}
	return -1
}

// IndexReader is Index of the text r gives, read in one pass.
func (w *Words) IndexReader(r io.RuneReader) int64 {
	if m := w.first.FindReaderSubmatchIndex(r); m != nil {
		return int64(m[2])
	}
	return -1
}

// Regexp is the expression that matches a text exactly when it holds a
// whole-word match (FindAll's first is its first), for a text read as a
// stream.
func (w *Words) Regexp() *regexp.Regexp { return w.first }
