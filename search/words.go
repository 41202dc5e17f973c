package search

import (
	"bytes"
	"io"
	"regexp"
	"strings"
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
	// lit, when the expression is this fixed string (UTF-8), lets Match
	// and Index find its occurrences as bytes and look at the characters
	// around each (literalIndex), where the expression cost 3 times the
	// search of a common word (err), 7 times with -i. fold: lit is ASCII
	// in lower case, its letters folding to their ASCII case alone, and
	// its occurrences are in any case, found by the matcher's pairFinder
	// (pairs) when lit has two bytes or more.
	lit   []byte
	fold  bool
	pairs *pairFinder
}

// NewLiteralWords is NewWords of a fixed string, UTF-8, matched as it is
// written or, with fold, in any case (Unicode simple folding, as (?i)),
// which Match and Index find as bytes: with fold, when the string is
// ASCII and none of its letters folds to another character than its
// ASCII case (k to the Kelvin sign, s to the long s).
func NewLiteralWords(lit string, fold bool) (*Words, error) {
	flags := ""
	if fold {
		flags = "(?i)"
	}
	w, err := NewWords(flags, regexp.QuoteMeta(lit))
	if err != nil {
		return nil, err
	}
	if !fold {
		w.lit = []byte(lit)
		return w, nil
	}
	for _, r := range lit {
		if r >= utf8.RuneSelf || !asciiFoldOnly(r) {
			return w, nil // the expression's folding
		}
	}
	w.lit, w.fold = []byte(strings.ToLower(lit)), true
	w.pairs = newPairFinder(w.lit, true)
	return w, nil
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
func (w *Words) Match(b []byte) bool {
	if w.lit != nil {
		return w.literalIndex(b) >= 0
	}
	return w.first.Match(b)
}

// Index is where the first whole-word match in b starts, or -1.
func (w *Words) Index(b []byte) int {
	if w.lit != nil {
		return w.literalIndex(b)
	}
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

// literalIndex is Index of the fixed string lit: its first occurrence
// with no word character right before or after it. The characters are
// read as the expression reads them: lit, UTF-8, starts and ends at the
// edges of characters wherever it occurs (a byte that is no continuation
// byte starts one), and the one before it is the last that ends there,
// U+FFFD for a byte that is not UTF-8, as regexp reads it.
func (w *Words) literalIndex(b []byte) int {
	for at := 0; ; {
		i := w.nextLiteral(b, at)
		if i < 0 {
			return -1
		}
		before, _ := utf8.DecodeLastRune(b[:i])
		after, _ := utf8.DecodeRune(b[i+len(w.lit):])
		if (i == 0 || !wordRune(before)) && (i+len(w.lit) == len(b) || !wordRune(after)) {
			return i
		}
		at = i + 1
	}
}

// nextLiteral is where lit next occurs in b at or after at, or -1.
func (w *Words) nextLiteral(b []byte, at int) int {
	if !w.fold {
		if i := bytes.Index(b[at:], w.lit); i >= 0 {
			return at + i
		}
		return -1
	}
	if w.pairs != nil {
		return w.pairs.index(b, at)
	}
	for i := at; i+len(w.lit) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(w.lit)], w.lit) {
			return i
		}
	}
	return -1
}

// notWord matches a character of NotWordClass, the one rule: wordRune
// asks it, through a table of its answers for ASCII.
var notWord = regexp.MustCompile(`^` + NotWordClass + `$`)

var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = !notWord.MatchString(string(rune(c)))
	}
	return t
}()

// wordRune reports a character no NotWordClass holds.
func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return !notWord.MatchString(string(r))
}

// Regexp is the expression that matches a text exactly when it holds a
// whole-word match (FindAll's first is its first), for a text read as a
// stream.
func (w *Words) Regexp() *regexp.Regexp { return w.first }
