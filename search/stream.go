package search

import (
	"bufio"
	"bytes"
	"io"
)

// FirstMatchOf is where the first match starts in a line too long to hold
// at once, whose bytes next gives piece by piece (without its end, and nil
// once the line is over), or -1 when the line does not match. A match
// across pieces is found as in a line held whole. The pieces after the
// match's may be left unread, or read ahead.
func (m *Matcher) FirstMatchOf(next func() []byte) int64 {
	if m.lit != nil {
		return indexPieces(m.lit.needle, next)
	}
	// Go's regexp matches a reader in one pass (its NFA, or the one-pass
	// matcher), in memory bounded by the regex, not by the line.
	loc := m.re.FindReaderIndex(bufio.NewReaderSize(&pieceReader{next: next}, 64<<10))
	if loc == nil {
		return -1
	}
	return int64(loc[0])
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
