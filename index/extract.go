package index

import (
	"bytes"
	"io"
)

// binarySample is the prefix grep checks for a NUL: a file with one there
// is binary to grep, so to the index.
const binarySample = 64 << 10

// extractor finds the distinct trigrams of a file, with a bitmap of all
// 2^24 trigrams (2 MiB) it reuses from file to file.
type extractor struct {
	seen []uint64
	buf  []byte
	list []uint32
}

func newExtractor() *extractor {
	return &extractor{seen: make([]uint64, 1<<24/64), buf: make([]byte, 256<<10)}
}

// extract reads r to the end. A file grep decodes (a UTF-16 byte-order
// mark) is opaque: not indexed, always searched.
func (x *extractor) extract(r io.Reader) readResult {
	n, err := io.ReadFull(r, x.buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return readResult{err: err}
	}
	head := x.buf[:n]
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return readResult{flags: flagOpaque}
	}
	if bytes.IndexByte(head[:min(n, binarySample)], 0) >= 0 {
		return readResult{flags: flagBinary}
	}
	x.list = x.list[:0]
	var t uint32
	have := 0 // bytes of t that are the file's, up to 3
	for {
		chunk := x.buf[:n]
		i := 0
		for ; have < 2 && i < len(chunk); i++ {
			t = t<<8 | uint32(chunk[i])
			have++
		}
		seen := x.seen
		list := x.list
		for ; i < len(chunk); i++ {
			t = (t<<8 | uint32(chunk[i])) & 0xFFFFFF
			w, bit := t>>6, uint64(1)<<(t&63)
			if seen[w]&bit == 0 {
				seen[w] |= bit
				list = append(list, t)
			}
		}
		x.list = list
		if err != nil {
			break // the last read reached the end
		}
		n, err = io.ReadFull(r, x.buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			x.clear()
			return readResult{err: err}
		}
		if n == 0 {
			break
		}
	}
	out := append([]uint32(nil), x.list...)
	x.clear()
	return readResult{trigrams: out}
}

// clear forgets the trigrams of the last file.
func (x *extractor) clear() {
	for _, t := range x.list {
		x.seen[t>>6] = 0
	}
}
