package core

import (
	"bytes"
	"context"
	"encoding"
	"errors"
	"hash"
	"hash/fnv"
	"io"
	"sync/atomic"

	"github.com/agentfs/agentfs/search"
	"github.com/agentfs/agentfs/textfile"
)

// Buffer sizes of one searcher: files are read in chunks of readChunk; a
// line longer than maxLineBuffer is searched as a stream (longLine).
const (
	readChunk     = 256 << 10
	maxLineBuffer = 8 << 20
)

// lineRec is one line a search reports: a match or one of its context lines.
// text is the line without its terminator, copied out of the buffer.
type lineRec struct {
	line    int
	text    []byte
	isMatch bool
	// at is where the match starts in the line (to keep it when cutting).
	at int
	// A line longer than the largest buffer is kept as the part of it
	// that output shows: text is the line's bytes from off, and size is
	// the whole line's length. size is 0 when text is the whole line.
	off, size int
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
	// skipped are the first matching lines, counted in matches, that the
	// searcher's skip kept out of lines with their context; sum, when the
	// searcher digests them, is their digest (addToSum).
	skipped int
	sum     hash.Hash64
}

// searcher searches files one at a time with a buffer it reuses.
type searcher struct {
	m       *search.Matcher
	context int
	// cap is how many matching lines to keep per file; 0 keeps none
	// (counting modes).
	cap int
	// first stops the search at the first matching line, which it keeps
	// not (files mode: a file is listed once it matches, as rg -l lists
	// it, and a store's object is not fetched past its first match).
	first bool
	// skip is how many of the first matching lines are counted but not
	// kept, nor their context: the lines a page by offset passes over
	// in a search of one file, which kept them all (270 bytes a match:
	// 5.8 GB for the page at offset 16,000,000 of a 1 GB file). With
	// digest, they are added to the result's sum, which a cursor into the
	// file carries.
	skip   int
	digest bool
	// withCR: a CRLF line's CR is its last character (the query names a
	// CR, namesCR): the matcher sees it, and the line is shown with it.
	withCR bool
	buf    []byte
	fs     search.FoldState
	// progress, when set, is given the result of the search so far
	// (published) after each block: what a deadline that falls while
	// the search waits in a read, or in work that takes no context,
	// keeps of the file (grepItem.progress).
	progress *atomic.Pointer[fileResult]
	// chunk and maxLine are readChunk and maxLineBuffer, smaller in tests.
	chunk, maxLine int
}

func newSearcher(m *search.Matcher, context, cap int) *searcher {
	return &searcher{m: m, context: context, cap: cap, buf: make([]byte, readChunk), chunk: readChunk, maxLine: maxLineBuffer}
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
	// prior are the lines before the buffer's first when a line too long
	// for the buffer was last: that line, as output shows it, and up to
	// context lines before it, which later matches may report.
	prior []lineRec
}

// search reads r to the end (or the cap) and reports its matching lines
// with their context.
func (s *searcher) search(ctx context.Context, r io.Reader) fileResult {
	sc := scan{s: s, lineNo: 1}
	if s.digest && s.skip > 0 {
		sc.res.sum = fnv.New64a()
	}
	buf := s.buf[:0]
	first, eof, decoded := true, false, false // decoded: reading through a UTF-16 decoder
	for !eof && !sc.stop {
		sc.publish()
		if err := ctx.Err(); err != nil {
			res := sc.cutShort()
			res.err = err
			return res
		}
		var err error
		buf, sc.p, eof, err = s.refill(r, buf, sc.p)
		if err == errNoRoom {
			// The line at sc.p is searched as it is read on, and what
			// follows it starts the buffer again.
			if buf, eof = sc.longLine(ctx, buf, r); sc.res.err != nil {
				return sc.res
			}
			continue
		}
		if err != nil {
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
			if textfile.BinaryStart(buf) {
				sc.res.binary = true
				s.keepBuffer(buf)
				return sc.res
			}
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end <= sc.p {
				continue // the line goes on: read more
			}
		}
		sc.block(buf, end)
	}
	s.keepBuffer(buf)
	return sc.res
}

// publish gives the searcher's progress the result so far, when it
// holds a match and more than the last one given: a prefix of the file's
// lines, as a search the deadline cut short returns it. (A file cut short
// before its first match is left to the next page, as before.)
func (sc *scan) publish() {
	pr := sc.s.progress
	if pr == nil || sc.res.matches == 0 {
		return
	}
	res := sc.cutShort()
	if res.matches == 0 {
		return
	}
	if last := pr.Load(); last != nil && last.matches == res.matches && len(last.lines) == len(res.lines) {
		return
	}
	res.err = context.DeadlineExceeded
	if res.sum != nil {
		res.sum = cloneSum(res.sum)
	}
	pr.Store(&res)
}

// cutShort is the result of a search that stops at sc.p, the start of a
// line, before the end of the file (the deadline): its lines are a prefix
// of the file's, capped (the search may go on appending to its own), and
// end with the last match whose after-context lines were all read, with
// them. A match closer than that to where the search stopped is left to
// the next page, which gives it with its context: a page starts its
// before-context after the after-context of the matches before it, and
// would never give the lines the search did not reach.
func (sc *scan) cutShort() fileResult {
	res := sc.res
	res.partial = true
	n, c := len(res.lines), sc.s.context
	cut := n // the first line of a match left out
	// Lines are in order: only the last c lines read can be short of
	// their after-context.
	for i := n - 1; c > 0 && i >= 0 && res.lines[i].line+c >= sc.lineNo; i-- {
		if res.lines[i].isMatch {
			cut = i
			res.matches--
		}
	}
	if cut < n {
		last := -1 << 30 // the last match kept
		for i := cut - 1; i >= 0; i-- {
			if res.lines[i].isMatch {
				last = res.lines[i].line
				break
			}
		}
		// Its before-context goes with it.
		for cut > 0 && !res.lines[cut-1].isMatch && res.lines[cut-1].line > last+c {
			cut--
		}
		n = cut
	}
	res.lines = res.lines[:n:n]
	return res
}

// cloneSum is a copy of the digest h, which h's writes leave as it is.
func cloneSum(h hash.Hash64) hash.Hash64 {
	c := fnv.New64a()
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err == nil {
		err = c.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
	}
	if err != nil {
		panic(err) // both are fnv's 64-bit FNV-1a
	}
	return c
}

// errNoRoom is refill's when the line at p, which goes on, and the
// context lines before it fill the largest buffer.
var errNoRoom = errors.New("the line and its context fill the buffer")

// refill drops what buf holds before the context lines of position p,
// grows buf while it has little room left, and reads r into it; it returns
// the buffer, p in it, and eof once r is done. When there is no room to
// read, it returns buf as it was, with errNoRoom when no line ends after p:
// the line at p is then too long to hold, and the context lines before it
// are still there to report.
func (s *searcher) refill(r io.Reader, buf []byte, p int) ([]byte, int, bool, error) {
	keep := p
	for i := 0; i < s.context && keep > 0; i++ {
		keep = bytes.LastIndexByte(buf[:keep-1], '\n') + 1
	}
	if len(buf)-keep > s.maxLine-s.chunk {
		if bytes.IndexByte(buf[p:], '\n') >= 0 {
			return buf, p, false, nil // lines to search before reading on
		}
		return buf, p, false, errNoRoom
	}
	if keep > 0 {
		n := copy(buf, buf[keep:])
		buf = buf[:n]
		p -= keep
	}
	if cap(buf)-len(buf) < s.chunk/2 && cap(buf) < s.maxLine {
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

// block searches buf from sc.p to end, the end of a line, reporting the
// matching lines and their context.
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
			sc.emit(lineRec{line: sc.lineNo, text: s.trimCR(buf[sc.p:le], le < end)})
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
		line := s.trimCR(buf[ls:le], le < end)
		switch {
		case s.m.Verify(line):
			sc.res.matches++
			if s.first {
				sc.res.partial, sc.stop = true, true
			}
			if s.cap > 0 {
				sc.before(buf, ls, sc.emit)
				sc.emit(lineRec{line: sc.lineNo, text: line, isMatch: true, at: max(0, s.m.FirstMatch(line))})
				sc.afterLeft = s.context
				if sc.res.matches >= s.cap {
					sc.res.partial, sc.stop = true, true
				}
			}
		case sc.afterLeft > 0:
			sc.emit(lineRec{line: sc.lineNo, text: line})
			sc.afterLeft--
		}
		if le < end {
			sc.lineNo++
		}
		sc.p = min(le+1, end)
	}
}

// emit reports a line, unless the search only counts.
func (sc *scan) emit(r lineRec) {
	if sc.s.cap == 0 {
		return
	}
	if sc.res.matches <= sc.s.skip {
		// A match skipped, or its context: reported as if kept, so that
		// the context of the first kept match starts after it.
		if r.isMatch {
			sc.res.skipped = sc.res.matches
			if sc.res.sum != nil {
				addToSum(sc.res.sum, r)
			}
		}
		sc.lastOut = r.line
		return
	}
	r.text = bytes.Clone(r.text)
	sc.res.lines = append(sc.res.lines, r)
	sc.lastOut = r.line
}

var nl = []byte{'\n'}

// before reports the context lines before the match at ls (line
// sc.lineNo) that were not reported yet: those buf holds, and before them
// those of sc.prior when the buffer starts right after those.
func (sc *scan) before(buf []byte, ls int, emit func(lineRec)) {
	n := sc.lineNo
	k := min(sc.s.context, n-1-sc.lastOut)
	if k <= 0 {
		return
	}
	start := ls
	got := 0
	for got < k && start > 0 {
		start = bytes.LastIndexByte(buf[:start-1], '\n') + 1
		got++
	}
	if p := sc.prior; got < k && start == 0 && len(p) > 0 && p[len(p)-1].line == n-got-1 {
		for _, l := range p {
			if l.line >= n-k {
				emit(l)
			}
		}
	}
	for i, p := 0, start; i < got; i++ {
		le := lineEnd(buf, p, ls)
		emit(lineRec{line: n - got + i, text: sc.s.trimCR(buf[p:le], true)})
		p = le + 1
	}
}

// keepBuffer keeps a grown buffer for the next file, unless it grew for
// one huge line: memory stays bounded per worker.
func (s *searcher) keepBuffer(buf []byte) {
	if cap(buf) <= 4*s.chunk {
		s.buf = buf[:0]
	}
}

func lineEnd(buf []byte, from, end int) int {
	if i := bytes.IndexByte(buf[from:end], '\n'); i >= 0 {
		return from + i
	}
	return end
}

// trimCR leaves out the CR of a CRLF ending: of a line that ends with a
// \n (ended), not of the last line when it has none, whose CR read keeps
// too ("a\r" at the end of a file is no line ending), nor when the query
// names a CR (withCR).
func (s *searcher) trimCR(line []byte, ended bool) []byte {
	if n := len(line); ended && !s.withCR && n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
