package core

import (
	"bytes"
	"context"
	"io"

	"github.com/agentfs/agentfs/search"
	"github.com/agentfs/agentfs/textfile"
)

// Buffer sizes of one searcher: files are read in chunks of readChunk; a
// line longer than maxLineBuffer is searched in pieces of that size.
const (
	readChunk     = 256 << 10
	maxLineBuffer = 8 << 20
	// binarySample is the prefix checked for a NUL, as ripgrep checks its
	// first buffer.
	binarySample = 64 << 10
)

// lineRec is one line a search reports: a match or one of its context lines.
// text is the line without its terminator, copied out of the buffer.
type lineRec struct {
	line    int
	text    []byte
	isMatch bool
	// at is where the match starts in text (to keep it when cutting).
	at int
}

// fileResult is what searching one file gives.
type fileResult struct {
	lines   []lineRec
	matches int // matching lines, counted even past the cap
	binary  bool
	// partial is set when the search stopped early (the cap, or the
	// deadline): lines are still a prefix of the file's in order.
	partial bool
	err     error
}

// searcher searches files one at a time with a buffer it reuses.
type searcher struct {
	m       *search.Matcher
	context int
	// cap is how many matching lines to keep per file; 0 keeps none
	// (counting modes).
	cap int
	buf []byte
	fs  search.FoldState
}

func newSearcher(m *search.Matcher, context, cap int) *searcher {
	return &searcher{m: m, context: context, cap: cap, buf: make([]byte, readChunk)}
}

// scan is the state of searching one file: where the search stands in the
// buffer and in the file's lines, and what it found.
type scan struct {
	s         *searcher
	res       fileResult
	lineNo    int // the line number at position p
	p         int // the first byte of the buffer not yet searched
	lastOut   int // the last line reported (for merging context)
	afterLeft int // after-context lines still to report
	stop      bool
}

// search reads r to the end (or the cap) and reports its matching lines
// with their context.
func (s *searcher) search(ctx context.Context, r io.Reader) fileResult {
	sc := scan{s: s, lineNo: 1}
	buf := s.buf[:0]
	first, eof, decoded := true, false, false // decoded: reading through a UTF-16 decoder
	for !eof && !sc.stop {
		if err := ctx.Err(); err != nil {
			sc.res.partial, sc.res.err = true, err
			return sc.res
		}
		var err error
		if buf, sc.p, eof, err = s.refill(r, buf, sc.p); err != nil {
			sc.res.err = err
			return sc.res
		}
		if first {
			first = false
			if !decoded {
				if r, decoded = decodeUTF16(buf, r); decoded {
					// The NUL check then runs on the first decoded block: a
					// binary file that merely starts with FF FE stays binary.
					buf, eof, first = buf[:0], false, true
					continue
				}
				// A UTF-8 byte-order mark is no part of line 1, as read and
				// ripgrep have it: `^package` matches there, and the line
				// comes back without it.
				bom, _ := textfile.CutUTF8BOM(buf)
				buf = buf[:copy(buf, buf[len(bom):])]
			}
			if bytes.IndexByte(buf[:min(len(buf), binarySample)], 0) >= 0 {
				sc.res.binary = true
				s.keepBuffer(buf)
				return sc.res
			}
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end <= sc.p {
				if len(buf) < maxLineBuffer {
					continue // the line goes on: read more
				}
				// One line fills the largest buffer: search it in pieces.
				end = len(buf)
			}
		}
		sc.block(buf, end)
	}
	s.keepBuffer(buf)
	return sc.res
}

// refill drops what buf holds before the context lines of position p,
// grows buf while it has little room left, and reads r into it; it returns
// the buffer, p in it, and eof once r is done.
func (s *searcher) refill(r io.Reader, buf []byte, p int) ([]byte, int, bool, error) {
	keep := p
	for i := 0; i < s.context && keep > 0; i++ {
		keep = bytes.LastIndexByte(buf[:keep-1], '\n') + 1
	}
	if len(buf)-keep > maxLineBuffer-readChunk {
		// Context lines that would fill the largest buffer leave no room
		// to read on, and the search went round without end: keep only
		// those that fit, and none of a line longer than the buffer.
		from := len(buf) - (maxLineBuffer - readChunk)
		keep = p
		if from < p {
			if i := bytes.IndexByte(buf[from:p], '\n'); i >= 0 {
				keep = from + i + 1
			}
		}
	}
	if keep > 0 {
		n := copy(buf, buf[keep:])
		buf = buf[:n]
		p -= keep
	}
	if cap(buf)-len(buf) < readChunk/2 && cap(buf) < maxLineBuffer {
		nb := make([]byte, len(buf), 2*cap(buf))
		copy(nb, buf)
		buf = nb
	}
	for len(buf) < cap(buf) {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || (n == 0 && err == nil) {
			return buf, p, true, nil
		}
		if err != nil {
			return buf, p, false, err
		}
		if cap(buf)-len(buf) < 4<<10 {
			break
		}
	}
	return buf, p, false, nil
}

// decodeUTF16 returns r, whose first block is buf, decoded to UTF-8 from
// the bytes after the mark when buf starts with a UTF-16 byte-order mark:
// such a file is text, as read decodes it (and ripgrep searches it). Lines
// keep their numbers.
func decodeUTF16(buf []byte, r io.Reader) (io.Reader, bool) {
	c, ok := textfile.ByBOM(buf)
	if !ok || c.IsUTF8() {
		return r, false
	}
	head := append([]byte(nil), buf[c.BOMLen():]...)
	return c.DecodingReader(io.MultiReader(bytes.NewReader(head), r)), true
}

// block searches buf from sc.p to end, the end of a line (or of a piece of
// a line longer than the largest buffer), reporting the matching lines and
// their context.
func (sc *scan) block(buf []byte, end int) {
	s := sc.s
	s.fs.Reset()
	for sc.p < end && !sc.stop {
		c := s.m.Candidate(buf[:end], sc.p, &s.fs)
		ls := end
		if c >= 0 {
			ls = bytes.LastIndexByte(buf[sc.p:c], '\n') + 1 + sc.p
		}
		for sc.afterLeft > 0 && sc.p < ls {
			le := lineEnd(buf, sc.p, end)
			sc.emit(sc.lineNo, trimCR(buf[sc.p:le]), false, 0)
			sc.afterLeft--
			if le < end {
				sc.lineNo++
			}
			sc.p = min(le+1, end)
		}
		if s.cap > 0 {
			// Counting modes report no line numbers: no need to count.
			sc.lineNo += bytes.Count(buf[sc.p:ls], nl)
		}
		sc.p = ls
		if c < 0 {
			break
		}
		le := lineEnd(buf, ls, end)
		line := trimCR(buf[ls:le])
		switch {
		case s.m.Verify(line):
			sc.res.matches++
			if s.cap > 0 {
				s.before(buf, ls, sc.lineNo, sc.lastOut, sc.emit)
				sc.emit(sc.lineNo, line, true, max(0, s.m.FirstMatch(line)))
				sc.afterLeft = s.context
				if sc.res.matches >= s.cap {
					sc.res.partial, sc.stop = true, true
				}
			}
		case sc.afterLeft > 0:
			sc.emit(sc.lineNo, line, false, 0)
			sc.afterLeft--
		}
		if le < end {
			sc.lineNo++
		}
		sc.p = min(le+1, end)
	}
}

// emit reports line n, unless the search only counts.
func (sc *scan) emit(n int, line []byte, isMatch bool, at int) {
	if sc.s.cap == 0 {
		return
	}
	sc.res.lines = append(sc.res.lines, lineRec{line: n, text: append([]byte(nil), line...), isMatch: isMatch, at: at})
	sc.lastOut = n
}

var nl = []byte{'\n'}

// before reports the context lines before the match at ls (line n) that
// were not reported yet.
func (s *searcher) before(buf []byte, ls, n, lastOut int, emit func(int, []byte, bool, int)) {
	k := min(s.context, n-1-lastOut)
	if k <= 0 {
		return
	}
	start := ls
	got := 0
	for got < k && start > 0 {
		start = bytes.LastIndexByte(buf[:start-1], '\n') + 1
		got++
	}
	for i, p := 0, start; i < got; i++ {
		le := lineEnd(buf, p, ls)
		emit(n-got+i, trimCR(buf[p:le]), false, 0)
		p = le + 1
	}
}

// keepBuffer keeps a grown buffer for the next file, unless it grew for
// one huge line: memory stays bounded per worker.
func (s *searcher) keepBuffer(buf []byte) {
	if cap(buf) <= 4*readChunk {
		s.buf = buf[:0]
	}
}

func lineEnd(buf []byte, from, end int) int {
	if i := bytes.IndexByte(buf[from:end], '\n'); i >= 0 {
		return from + i
	}
	return end
}

func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
