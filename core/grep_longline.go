package core

import (
	"bytes"
	"context"
	"io"
)

// A line that does not fit the largest buffer (a minified bundle, a JSON
// document on one line) is matched as a stream, in one pass: a match
// anywhere in it is found once, as in a line that fits, in memory bounded
// by the buffer. Output keeps of it what lineText shows.
const (
	// lineWindowBytes is what output may show of a line: lineText keeps
	// MaxLineBytes, and looks a few bytes on for a character's start.
	lineWindowBytes = MaxLineBytes + 8
	// lineTailBytes are the last bytes read of a long line, kept until its
	// match is placed: a matcher reads a little ahead of where its match
	// starts (a window of 128 KiB and up to 64 KiB carried over, or a
	// buffer of 64 KiB), unless it runs on (a greedy .* to the line's
	// end), and the line is then shown from its start.
	lineTailBytes = 512 << 10
	// linePiece is the most a long line's stream gives at once.
	linePiece = 64 << 10
)

// longLine searches the line that starts at sc.p and fills buf, reading
// the rest of it from r. It returns the buffer holding what follows the
// line, from its start, and whether r is done.
func (sc *scan) longLine(ctx context.Context, buf []byte, r io.Reader) ([]byte, bool) {
	s := sc.s
	// Reading on overwrites the buffer: the context lines before the line
	// are taken out of it now, and reported if the line matches.
	// Each is kept as output shows it (lineText): a context line is shown
	// from its start, so its first lineWindowBytes are enough, and a few
	// lines of up to 8 MiB are not copied whole, here and in sc.prior.
	var before []lineRec
	if s.cap > 0 {
		sc.before(buf, sc.p, func(r lineRec) {
			if len(r.text) > lineWindowBytes && r.size == 0 {
				r.size = len(r.text)
			}
			r.text = bytes.Clone(r.text[:min(len(r.text), lineWindowBytes)])
			before = append(before, r)
		})
	}
	l := &lineStream{ctx: ctx, r: r, buf: buf, pending: buf[sc.p:], read: int64(len(buf) - sc.p), withCR: s.withCR}
	if s.cap > 0 {
		l.win = &lineWindow{}
	}
	at := s.m.FirstMatchOf(l.next)
	var from int64
	if at >= 0 && l.win != nil {
		var ok bool
		if from, ok = l.win.place(at); !ok {
			at = 0 // not kept: the line is shown from its start
		}
	}
	for l.next() != nil {
		// The rest of the line: its length, and the window's end.
	}
	if l.err != nil {
		if err := ctx.Err(); err != nil {
			// Stopped at the line's start, as a deadline between two
			// reads stops (search): a match whose after-context this line
			// is goes to the next page, which gives it with that context.
			// Kept, it went without the lines not read, and the next page,
			// starting its before-context after them, gave them on none.
			sc.res = sc.cutShort()
			sc.res.err = err
		} else {
			sc.res.err = l.err
		}
		return buf, true
	}
	if l.eof && l.read == 0 {
		// The buffer was full up to the end of the last line, and the
		// file ended there: there is no line.
		return buf[:0], true
	}
	head := lineRec{line: sc.lineNo, size: int(l.n)}
	if l.win != nil {
		head.text = l.win.head
	}
	switch {
	case at >= 0:
		sc.res.matches++
		if s.first {
			sc.res.partial, sc.stop = true, true
		}
		if s.cap > 0 {
			for _, b := range before {
				sc.emit(b)
			}
			m := head
			m.isMatch, m.at = true, int(at)
			if from > 0 && l.n > MaxLineBytes {
				// Cut around the match; a line that is not cut is whole in
				// head.
				m.text, m.off = l.win.match, int(from)
			}
			sc.emit(m)
			sc.afterLeft = s.context
			if sc.res.matches >= s.cap {
				sc.res.partial, sc.stop = true, true
			}
		}
	case sc.afterLeft > 0:
		sc.emit(head)
		sc.afterLeft--
	}
	if s.cap > 0 {
		sc.prior = append(before, head)
		sc.prior = sc.prior[max(0, len(sc.prior)-s.context):]
	}
	if !l.eof {
		sc.lineNo++
	}
	sc.p = 0
	return buf[:copy(buf[:cap(buf)], l.rest)], l.eof
}

// cr is a carriage return given as a piece of its own.
var cr = []byte{'\r'}

// lineStream gives the bytes of a line piece by piece, without its end (a
// CR before the LF, as trimCR): first what the buffer holds, then what is
// read into the buffer, up to the line's end.
type lineStream struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	// pending is the next piece, nil when none is read.
	pending []byte
	// heldCR: the last piece ended with a CR, given only once what
	// follows shows it is not the line's end; withCR, the searcher's,
	// gives it at once.
	heldCR, withCR bool
	ended          bool   // the line's end, the file's or an error was read
	eof            bool   // r is done
	rest           []byte // what follows the line's end, in buf
	n              int64  // bytes of the line given
	read           int64  // bytes of the line taken in, a CR it dropped too
	err            error
	win            *lineWindow // nil when the search only counts
}

// next gives the next piece of the line, nil at its end. A piece is valid
// until the next call.
func (l *lineStream) next() []byte {
	for {
		p := l.pending
		l.pending = nil
		if p == nil {
			if l.ended {
				return nil
			}
			p = l.readOn()
			l.read += int64(len(p))
		}
		if l.heldCR {
			l.heldCR = false
			// Dropped only before the LF: at the end of the file, a CR
			// is the line's own (trimCR).
			if len(p) > 0 || !l.ended || l.eof {
				l.pending = p
				return l.give(cr)
			}
		}
		if len(p) > linePiece {
			// Given in parts: what the matcher has taken stays close to
			// what the window has seen.
			l.pending = p[linePiece:]
			return l.give(p[:linePiece])
		}
		if n := len(p); n > 0 && p[n-1] == '\r' && !l.withCR {
			p, l.heldCR = p[:n-1], true
		}
		if len(p) > 0 {
			return l.give(p)
		}
	}
}

// readOn reads on into the buffer and returns the line's part of it.
func (l *lineStream) readOn() []byte {
	if err := l.ctx.Err(); err != nil {
		l.ended, l.err = true, err
		return []byte{}
	}
	n, err := l.r.Read(l.buf[:cap(l.buf)])
	b := l.buf[:n]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		l.ended, l.rest = true, b[i+1:]
		return b[:i]
	}
	switch {
	case err == io.EOF || (n == 0 && err == nil):
		l.ended, l.eof = true, true
	case err != nil:
		l.ended, l.err = true, err
	}
	return b
}

func (l *lineStream) give(p []byte) []byte {
	if l.win != nil {
		l.win.add(p)
	}
	l.n += int64(len(p))
	return p
}

// lineWindow keeps of a long line what output may show of it: its head,
// and once the match is placed, the bytes from where lineText starts the
// cut line.
type lineWindow struct {
	head []byte
	// tail is the last bytes given, from tailOff; done once the match is
	// placed.
	tail    []byte
	tailOff int64
	placed  bool
	// match is the line from matchOff, filled up to lineWindowBytes.
	match    []byte
	matchOff int64
	n        int64
}

// add takes the next piece of the line, of at most linePiece bytes.
func (w *lineWindow) add(p []byte) {
	w.head = appendUpTo(w.head, p, lineWindowBytes)
	if w.placed {
		if w.matchOff > 0 {
			w.match = appendUpTo(w.match, p, lineWindowBytes)
		}
	} else {
		if len(w.tail)+len(p) > 2*lineTailBytes {
			// Slid along by copying, once per lineTailBytes given.
			drop := len(w.tail) + len(p) - lineTailBytes
			w.tail = w.tail[:copy(w.tail, w.tail[drop:])]
			w.tailOff += int64(drop)
		}
		w.tail = append(w.tail, p...)
	}
	w.n += int64(len(p))
}

// place takes the match at offset at, and returns where the shown part of
// the line starts (as lineText places it), or false when the bytes there
// are no longer kept.
func (w *lineWindow) place(at int64) (int64, bool) {
	w.placed = true
	defer func() { w.tail = nil }()
	from := int64(cutFrom(int(at)))
	if from == 0 {
		return 0, true
	}
	if from < w.tailOff {
		return 0, false
	}
	w.match = appendUpTo(nil, w.tail[from-w.tailOff:], lineWindowBytes)
	w.matchOff = from
	return from, true
}

// appendUpTo appends to b the first bytes of p, up to n bytes in all.
func appendUpTo(b, p []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(b, p[:min(len(p), n-len(b))]...)
}
