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

// search reads r to the end (or the cap) and reports its matching lines
// with their context.
func (s *searcher) search(ctx context.Context, r io.Reader) fileResult {
	var res fileResult
	buf := s.buf[:0]
	var (
		lineNo    = 1 // the line number at position p
		p         int // the first byte not yet searched
		lastOut   int // the last line reported (for merging context)
		afterLeft int // after-context lines still to report
		first     = true
		eof       bool
		decoded   bool // reading through a UTF-16 decoder
	)
	stop := false
	emit := func(n int, line []byte, isMatch bool, at int) {
		if s.cap == 0 {
			return
		}
		res.lines = append(res.lines, lineRec{line: n, text: append([]byte(nil), line...), isMatch: isMatch, at: at})
		lastOut = n
	}
	for !eof && !stop {
		if err := ctx.Err(); err != nil {
			res.partial, res.err = true, err
			return res
		}
		// Keep the context lines before p, drop what is before them.
		keep := p
		for i := 0; i < s.context && keep > 0; i++ {
			keep = bytes.LastIndexByte(buf[:keep-1], '\n') + 1
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
				eof = true
				break
			}
			if err != nil {
				res.err = err
				return res
			}
			if cap(buf)-len(buf) < 4<<10 {
				break
			}
		}
		if first {
			first = false
			if c, ok := textfile.ByBOM(buf); ok && !c.IsUTF8() && !decoded {
				// UTF-16 with a byte-order mark is text, as read decodes it
				// (and ripgrep searches it): search it decoded to UTF-8,
				// from the bytes after the mark. Lines keep their numbers.
				head := append([]byte(nil), buf[c.BOMLen():]...)
				r = c.DecodingReader(io.MultiReader(bytes.NewReader(head), r))
				// The NUL check then runs on the first decoded block: a
				// binary file that merely starts with FF FE stays binary.
				buf, eof, first, decoded = buf[:0], false, true, true
				continue
			}
			if bytes.IndexByte(buf[:min(len(buf), binarySample)], 0) >= 0 {
				res.binary = true
				s.keepBuffer(buf)
				return res
			}
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end <= p {
				if len(buf) < maxLineBuffer {
					continue // the line goes on: read more
				}
				// One line fills the largest buffer: search it in pieces.
				end = len(buf)
			}
		}
		s.fs.Reset()
		for p < end && !stop {
			c := s.m.Candidate(buf[:end], p, &s.fs)
			ls := end
			if c >= 0 {
				ls = bytes.LastIndexByte(buf[p:c], '\n') + 1 + p
			}
			for afterLeft > 0 && p < ls {
				le := lineEnd(buf, p, end)
				emit(lineNo, trimCR(buf[p:le]), false, 0)
				afterLeft--
				if le < end {
					lineNo++
				}
				p = min(le+1, end)
			}
			if s.cap > 0 {
				// Counting modes report no line numbers: no need to count.
				lineNo += bytes.Count(buf[p:ls], nl)
			}
			p = ls
			if c < 0 {
				break
			}
			le := lineEnd(buf, ls, end)
			line := trimCR(buf[ls:le])
			switch {
			case s.m.Verify(line):
				res.matches++
				if s.cap > 0 {
					s.before(buf, ls, lineNo, lastOut, emit)
					emit(lineNo, line, true, max(0, s.m.FirstMatch(line)))
					afterLeft = s.context
					if res.matches >= s.cap {
						res.partial, stop = true, true
					}
				}
			case afterLeft > 0:
				emit(lineNo, line, false, 0)
				afterLeft--
			}
			if le < end {
				lineNo++
			}
			p = min(le+1, end)
		}
		if eof {
			break
		}
	}
	s.keepBuffer(buf)
	return res
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
