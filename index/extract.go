package index

import (
	"bytes"
	"hash/maphash"
	"io"
	"slices"
	"sync"

	"github.com/agentfs/agentfs/textfile"
)

// listFloor is the least capacity of a file's list of trigrams.
const listFloor = 4 << 10

// readPiece is how much of a file a read takes: all of most source files.
const readPiece = 256 << 10

// wholeLimit bounds the files read whole, so named by their content (a
// copy of one is not scanned). Go's source tree holds 72 files above
// readPiece, 29 MB of text, the largest 3 MB; streamed, each copy of them
// was scanned again, and the build of 4 copies of the tree took a third
// longer.
const wholeLimit = 4 << 20

// wholeBuffers are the buffers a build reads files of more than one piece
// whole into, shared by its extractors: four, each grown to the largest
// file it held, whatever the number of workers, so that whole reads add
// at most 16 MiB to a build. A file that finds none free is read in
// pieces, and its copies are scanned again.
type wholeBuffers chan []byte

func newWholeBuffers() wholeBuffers {
	w := make(wholeBuffers, 4)
	for range cap(w) {
		w <- nil
	}
	return w
}

// extractor finds the distinct trigrams of a file, with a bitmap of all
// 2^24 trigrams (2 MiB) it reuses from file to file. The list of a file
// is taken from lists, where its consumer hands it back. A file whose
// content another extractor of the build claimed is not scanned.
type extractor struct {
	seen   *[1 << 24 / 64]uint64 // an array: indexed by a trigram, never out of bounds
	buf    []byte
	list   []uint32
	lists  chan []uint32
	claims *claims
	whole  wholeBuffers
}

// newExtractor makes an extractor that claims contents in c, and shares
// its whole buffers; without c, it has buffers of its own.
func newExtractor(lists chan []uint32, c *claims) *extractor {
	x := &extractor{seen: new([1 << 24 / 64]uint64), buf: make([]byte, readPiece), lists: lists, claims: c}
	if c != nil {
		x.whole = c.whole
	} else {
		x.whole = newWholeBuffers()
	}
	return x
}

// contentKey names a file's content: its length, a 64-bit hash under a
// seed drawn for the build and its CRC-32C (twice as fast as a second
// hash). Two contents with one key are the same bytes but for a chance of
// 2^-96 a pair, and the seed is unknown to whoever writes the files.
type contentKey struct {
	hash uint64
	crc  uint32
	size int
}

// claims are the contents the build's extractors have taken to scan. A
// file whose content was claimed before is not scanned again: its
// trigrams are the claimant's, as GitHub's code search indexes a blob
// once. Vendored copies, checkouts side by side and generated files
// repeat in the trees agents work in.
type claims struct {
	seed  maphash.Seed
	mu    sync.Mutex
	taken map[contentKey]bool
	// whole are the build's buffers for files read whole.
	whole wholeBuffers
}

func newClaims() *claims {
	return &claims{seed: maphash.MakeSeed(), taken: map[contentKey]bool{}, whole: newWholeBuffers()}
}

// claim names content and reports whether it is new to the build, which
// then takes it.
func (c *claims) claim(content []byte) (contentKey, bool) {
	k := contentKey{hash: maphash.Bytes(c.seed, content), crc: checksum(content), size: len(content)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taken[k] {
		return k, false
	}
	c.taken[k] = true
	return k, true
}

// extract reads r, a file stat'ed at size bytes. A file grep decodes (a
// UTF-16 byte-order mark) is opaque: not indexed, always searched.
func (x *extractor) extract(r io.Reader, size int64) readResult {
	if size > 0 {
		// Past its size, what a file holds was written since the stat,
		// which changed its identity: a search reads it anyway. Reading
		// no further spares the read that finds the end.
		r = io.LimitReader(r, size)
	}
	n, err := io.ReadFull(r, x.buf[:readPiece])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return readResult{err: err}
	}
	head := x.buf[:n]
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return readResult{flags: flagOpaque}
	}
	// grep checks for a NUL after a UTF-8 byte-order mark, as its lines
	// start there: the sample is the same bytes.
	_, sample := textfile.CutUTF8BOM(head)
	if textfile.BinaryStart(sample) {
		return readResult{flags: flagBinary}
	}
	buf := x.buf
	if err == nil && int64(n) < size && size < wholeLimit {
		select {
		case big := <-x.whole:
			// The rest of a text file that fits whole, and a byte more,
			// so that the read ends at its end (or its size) as the
			// first did.
			if len(big) <= int(size) {
				big = make([]byte, size+1)
			}
			defer func() { x.whole <- big }()
			buf = big
			copy(buf, head)
			var m int
			m, err = io.ReadFull(r, buf[n:size+1])
			if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
				return readResult{err: err}
			}
			n += m
			head = buf[:n]
		default:
		}
	}
	// head is all of the file, as stat'ed, when the reads reached its end
	// or its size: one piece, or the whole read.
	whole := err != nil || int64(n) == size
	var res readResult
	if whole && n >= 3 && x.claims != nil {
		// The whole file, read at once: a content seen before is not
		// scanned. (A file of fewer than three bytes has no trigram.)
		k, isNew := x.claims.claim(head)
		if !isNew {
			return readResult{content: k, repeated: true}
		}
		res.content, res.claimed = k, true
	}
	select {
	case x.list = <-x.lists:
	default:
		x.list = nil
	}
	if cap(x.list) < listFloor {
		// Room for a part at once: a list handed back from a small file
		// was otherwise grown again for the next, a new allocation and
		// its page faults per file.
		x.list = make([]uint32, 0, listFloor)
	}
	var t uint32
	have := 0 // bytes of t that are the file's, up to 3
	for {
		chunk := buf[:n]
		i := 0
		for ; have < 2 && i < len(chunk); i++ {
			t = t<<8 | uint32(chunk[i])
			have++
		}
		for chunk = chunk[i:]; len(chunk) > 0; {
			// In parts that fit the list's room (scan may store every
			// trigram), so that it grows only when mostly full.
			room := cap(x.list) - len(x.list)
			if room < listFloor/4 {
				x.list = slices.Grow(x.list, cap(x.list))
				room = cap(x.list) - len(x.list)
			}
			part := chunk[:min(len(chunk), room)]
			chunk = chunk[len(part):]
			x.list, t = scan(x.seen, x.list, t, part)
		}
		if err != nil {
			break // the last read reached the end
		}
		n, err = io.ReadFull(r, buf[:readPiece])
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			x.clear()
			return readResult{err: err}
		}
		if n == 0 {
			break
		}
	}
	x.clear()
	res.trigrams = x.list
	if utf8Text(x.list, head, whole) {
		res.flags |= flagText
	}
	return res
}

// utf8Text reports whether a file of the distinct trigrams list is UTF-8
// text without NUL, as replace takes it: from the trigrams when every byte
// is ASCII (every byte of a file of three or more is in one), else from
// the bytes of a file read whole into head; a larger one is not known.
func utf8Text(list []uint32, head []byte, whole bool) bool {
	var bad uint32
	for _, t := range list {
		// A byte at or above 0x80, or a NUL (t-0x010101 borrows through
		// a zero byte, setting its top bit where t's is clear).
		bad |= t | (t-0x010101)&^t
	}
	if len(list) > 0 && bad&0x808080 == 0 {
		return true
	}
	return whole && textfile.IsUTF8Text(head)
}

// clear forgets the trigrams of the last file.
func (x *extractor) clear() {
	for _, t := range x.list {
		x.seen[t>>6] = 0
	}
}

// scan adds to list the trigrams of chunk not in seen, t holding the two
// bytes before it. Without a branch on whether a trigram is new, which in
// a small file it is at random a quarter of the time: every trigram is
// stored, and the count moves past the new ones. A function of its own,
// so that the loop's variables stay in registers.
func scan(seen *[1 << 24 / 64]uint64, list []uint32, t uint32, chunk []byte) ([]uint32, uint32) {
	list = slices.Grow(list, len(chunk))
	n := len(list)
	list = list[:n+len(chunk)]
	for _, c := range chunk {
		t = (t<<8 | uint32(c)) & 0xFFFFFF
		w := &seen[t>>6]
		old, bit := *w, uint64(1)<<(t&63)
		isNew := 0
		if old&bit == 0 {
			isNew = 1
		}
		*w = old | bit
		list[n] = t
		n += isNew
	}
	return list[:n], t
}
