package search

import (
	"bufio"
	"bytes"
	"io"
	"regexp/syntax"
	"unicode/utf8"
)

// FirstMatchOf is where the first match starts in a line too long to hold
// at once, whose bytes next gives piece by piece (without its end, and nil
// once the line is over), or -1 when the line does not match. A match
// across pieces is found as in a line held whole. The pieces after the
// match's may be left unread, or read ahead.
func (m *Matcher) FirstMatchOf(next func() []byte) int64 {
	switch {
	case m.words != nil:
		// In one pass, as a regex without a bound.
		return m.words.IndexReader(bufio.NewReaderSize(&pieceReader{next: next}, 64<<10))
	case m.lit != nil:
		return indexPieces(m.lit.needle, next)
	case m.bound >= 0:
		return m.firstInWindows(next)
	}
	// Go's regexp matches a reader in one pass (its NFA: tens of times
	// slower than in memory, with no prefilter), in memory bounded by the
	// regex, not by the line.
	loc := m.re.FindReaderIndex(bufio.NewReaderSize(&pieceReader{next: next}, 64<<10))
	if loc == nil {
		return -1
	}
	return int64(loc[0])
}

// windowBytes is how much of a long line a bounded regex is matched on
// at once, besides the bytes carried over; smaller in tests.
var windowBytes = 128 << 10

// firstInWindows is FirstMatchOf for a regex whose matches span at most
// m.bound bytes, and which asserts nothing about what is around them: the
// line is matched in windows that overlap by m.bound-1 bytes (keep), in
// memory, through the matcher's prefilters. A match found in a window is
// one of the line's (its bytes are the same). A match lies whole in the
// window where it starts, unless it starts in the window's last keep
// bytes, which the next window starts with: so the first match of a
// window is the line's first when it starts before those bytes (no match
// cut off by the window's end can start before it), and otherwise the next
// window decides.
func (m *Matcher) firstInWindows(next func() []byte) int64 {
	keep := max(0, m.bound-1)
	var win []byte
	var base int64 // where win starts in the line
	var fs FoldState
	for {
		p := next()
		win = append(win, p...)
		if p != nil && len(win) < keep+windowBytes {
			continue
		}
		fs.Reset()
		if m.Candidate(win, 0, &fs) >= 0 && m.Verify(win) {
			if at := m.FirstMatch(win); p == nil || at < len(win)-keep {
				return base + int64(at)
			}
		}
		if p == nil {
			return -1
		}
		drop := charStart(win, len(win)-keep)
		win = win[:copy(win, win[drop:])]
		base += int64(drop)
	}
}

// charStart moves i back to the start of the character of b it falls in,
// as regexp reads b from its start (an invalid byte is a character of its
// own): a window that started inside one would read its last bytes as
// invalid characters, which [^é] matches and the line does not have. A
// byte that is no continuation byte always starts a character.
func charStart(b []byte, i int) int {
	for s := i - 1; s >= max(0, i-utf8.UTFMax+1); s-- {
		if utf8.RuneStart(b[s]) {
			if _, w := utf8.DecodeRune(b[s:]); s+w > i {
				return s
			}
			break
		}
	}
	return i
}

// maxMatchBytes is the most bytes a match of re spans (4 a character), or
// -1 when that is unbounded (*, +, {n,}), over 64 KiB, or when re asserts
// what is around its match (^, $, \b, \B, \A, \z), which a window cut
// from a line cannot decide.
func maxMatchBytes(re *syntax.Regexp) int {
	const limit = 64 << 10
	n := -1
	switch re.Op {
	case syntax.OpEmptyMatch:
		n = 0
	case syntax.OpLiteral:
		n = utf8.UTFMax * len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		n = utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		n = maxMatchBytes(re.Sub[0])
	case syntax.OpRepeat:
		if sub := maxMatchBytes(re.Sub[0]); sub >= 0 && re.Max >= 0 && re.Max <= limit {
			n = sub * re.Max
		}
	case syntax.OpConcat, syntax.OpAlternate:
		n = 0
		for _, sub := range re.Sub {
			k := maxMatchBytes(sub)
			if k < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += k
			} else {
				n = max(n, k)
			}
		}
	}
	if n > limit {
		return -1
	}
	return n
}

// indexPieces is bytes.Index of needle in the pieces next gives, one
// after the other.
func indexPieces(needle []byte, next func() []byte) int64 {
	k := len(needle) - 1
	// carry is the last k bytes before the piece: with the piece's first
	// k, it holds every match that starts before the piece and ends in it.
	var carry, join []byte
	var pos int64 // where the piece starts
	for p := next(); p != nil; p = next() {
		if len(carry) > 0 {
			join = append(append(join[:0], carry...), p[:min(len(p), k)]...)
			if i := bytes.Index(join, needle); i >= 0 {
				return pos - int64(len(carry)) + int64(i)
			}
		}
		if i := bytes.Index(p, needle); i >= 0 {
			return pos + int64(i)
		}
		join = append(append(join[:0], carry...), p[max(0, len(p)-k):]...)
		carry = append(carry[:0], join[max(0, len(join)-k):]...)
		pos += int64(len(p))
	}
	return -1
}

// pieceReader reads the pieces next gives as one stream.
type pieceReader struct {
	next func() []byte
	cur  []byte
}

func (r *pieceReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.cur = r.next(); r.cur == nil {
			return 0, io.EOF
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
