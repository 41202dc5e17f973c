package core

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/textfile"
)

// ReadCountMaxBytes is the largest file whose lines read counts when a
// window alone does not tell its totalLines: a newline count runs at memory
// speed, so counting this much costs a few milliseconds.
const ReadCountMaxBytes = 64 << 20

// StoreCountMaxBytes is ReadCountMaxBytes on an object store, where the
// count downloads what it counts: the first line of a 40 MiB object cost
// 41.9 MB of GETs, where a window's own bytes are a few KiB. 8 MiB is an
// upload's part, a tenth of a second or so on a store's link.
const StoreCountMaxBytes = 8 << 20

// countMax is the largest file at path whose lines read counts:
// StoreCountMaxBytes where path lies on an object store.
func (t *Tools) countMax(path string) int64 {
	if _, remote := backend.At(t.FS, path).(backend.RemoteReader); remote {
		return StoreCountMaxBytes
	}
	return ReadCountMaxBytes
}

// sizeText names n bytes in MiB, as the man page names the count's bounds.
func sizeText(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

const (
	// tailChunk is the size of each read backwards from the end.
	tailChunk = 64 << 10
	// countChunk is the size of each read of a newline count.
	countChunk = 256 << 10
)

// errChanged is a file shorter than its size at open: it changed during
// the read.
var errChanged = errors.New("the file became shorter while it was read")

// tail places a window on the last n lines of the file, n being -offset: it
// finds where they start by reading backwards from the end, so its cost is
// that of the lines it passes, whatever the file's size. It returns the line
// reader at that start and the start's line number: counted from the
// beginning when the window reaches line 1 or the file is at most
// countMax, otherwise counted from the end (-n, the last line being
// -1). br is the stream f opened at 0, through h, of which only a prefix was
// peeked.
func (w *window) tail(ctx context.Context, f backend.FileReader, br *bufio.Reader, h hash.Hash) (*lineReader, int, error) {
	req, c, display := w.req, w.codec, w.display
	n := int64(req.Offset)
	if n == math.MinInt64 {
		n++
	}
	n = -n
	size, lo := f.Info().Size, int64(c.BOMLen())
	start, err := tailStart(ctx, f, size, c, n)
	if err != nil {
		return nil, 0, ioError(err, display)
	}
	switch {
	case start == lo:
		// From line 1: the stream as a read from the start, hash included.
		if _, err := br.Discard(c.BOMLen()); err != nil {
			return nil, 0, ioError(err, display)
		}
		return &lineReader{br: br, c: c, pos: lo, hash: h, src: f}, 1, nil
	case size <= w.countMax:
		// Count the lines before start in the stream itself, which then
		// stands at start for the window; the hash is left behind.
		raw := rawStream(br, f)
		backend.ReadAhead(f, start)
		before, read, err := countLines(ctx, io.LimitReader(raw, start), c, 0, start)
		if err == nil && read < start {
			err = errChanged
		}
		if err != nil {
			return nil, 0, ioError(err, display)
		}
		lr := &lineReader{br: bufio.NewReaderSize(raw, bufSize(size-start)), c: c, pos: start, src: raw}
		return lr, before + 1, nil
	}
	sec := io.NewSectionReader(f, start, size-start)
	return &lineReader{br: bufio.NewReaderSize(sec, bufSize(size-start)), c: c, pos: start, src: sec}, int(-n), nil
}

// tailStart returns the offset of the first of the last n lines of a file of
// size bytes: just after the n-th newline before the end, a final newline not
// counted (it ends the last line). A file of fewer lines starts after its
// byte-order mark. It reads backwards through r, tailChunk bytes at a time.
func tailStart(ctx context.Context, r io.ReaderAt, size int64, c textfile.Codec, n int64) (int64, error) {
	lo, unit := int64(c.BOMLen()), int64(c.Unit())
	// Newline units lie at multiples of the unit; a last odd byte of
	// UTF-16 is none.
	end := lo + (size-lo)/unit*unit
	nl := c.Newline()
	buf := make([]byte, tailChunk)
	for pos := end; pos > lo; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k := min(tailChunk, pos-lo)
		chunk := buf[:k]
		if got, err := r.ReadAt(chunk, pos-k); int64(got) < k {
			if err == nil || err == io.EOF {
				err = errChanged
			}
			return 0, err
		}
		i := len(chunk)
		if pos == size && endsWith(chunk, nl) {
			i -= c.Unit() // the final newline ends the last line
		}
		for {
			j := lastIndexUnit(chunk[:i], nl, c.Unit())
			if j < 0 {
				break
			}
			if n--; n == 0 {
				return pos - k + int64(j) + unit, nil
			}
			i = j
		}
		pos -= k
	}
	return lo, nil
}

// lastIndexUnit finds the last newline unit in b, at a multiple of width.
func lastIndexUnit(b, unit []byte, width int) int {
	if width == 1 {
		return bytes.LastIndexByte(b, unit[0])
	}
	for i := len(b)/width*width - width; i >= 0; i -= width {
		if string(b[i:i+width]) == string(unit) {
			return i
		}
	}
	return -1
}

// rawStream is the rest of a stream past what br has handed out: the bytes
// br holds, then src, the reader under br, without the hash br may feed.
func rawStream(br *bufio.Reader, src io.Reader) io.Reader {
	held, _ := br.Peek(br.Buffered())
	return io.MultiReader(bytes.NewReader(held), src)
}

// countLines counts the lines of r to its end, r starting at file offset
// from: its newline units, and one more for bytes after the last. It also
// returns how many bytes it read. expect, the bytes it should find, sizes
// its buffer: counting the rest of a small file needs no 256 KiB, whose
// pages a new process would fault in and clear on every call.
func countLines(ctx context.Context, r io.Reader, c textfile.Codec, from, expect int64) (int, int64, error) {
	buf := make([]byte, min(max(expect+1, textfile.SniffBytes+1), countChunk))
	lines, read := 0, int64(0)
	// tail: some bytes follow the last newline; prev: for UTF-16, the
	// first byte of a unit split across two reads.
	tail, prev, nl := false, -1, c.Newline()
	for {
		if err := ctx.Err(); err != nil {
			return 0, read, err
		}
		got, err := r.Read(buf)
		b := buf[:got]
		switch {
		case c.Unit() == 1:
			lines += bytes.Count(b, nl)
			if got > 0 {
				tail = b[got-1] != nl[0]
			}
		default:
			for i, x := range b {
				if (from+read+int64(i))%2 == 0 {
					prev = int(x)
					tail = true
					continue
				}
				if prev == int(nl[0]) && x == nl[1] {
					lines++
					tail = false
				}
			}
		}
		read += int64(got)
		if err == io.EOF {
			if tail {
				lines++
			}
			return lines, read, nil
		}
		if err != nil {
			return 0, read, err
		}
	}
}
