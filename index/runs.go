package index

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/bits"
	"slices"
)

// runPairs is how many (trigram, file) pairs a run holds before it is
// sorted: 32 MiB of pairs, twice over while one chunk is sorted and the
// next filled, plus the sort's scratch.
var runPairs = 1 << 22

// runs collect the posting lists of the files read as codesearch builds
// them: (trigram, file) pairs appended in file order, sorted a chunk at a
// time (by another goroutine, so reading goes on) into runs that hold
// each trigram's files as a delta-encoded list, merged when the index is
// written. Each step reads and writes memory in sequence; adding each
// posting to its own list in a table of all 2^24 trigrams was a cache
// miss per posting.
type runs struct {
	pairs  []uint64 // trigram<<32 | file, files ascending
	sorted []run
	in     chan []uint64
	free   chan []uint64
	done   chan struct{}
	// buffers is how many chunk buffers were made, at most two.
	buffers int
}

// run is one sorted chunk: per trigram, the first and last files of its
// list and the deltas between the others, at data[off:] up to the next
// entry's off.
type run struct {
	entries []runEntry
	data    []byte
}

type runEntry struct {
	trigram, off, first, last uint32
}

func newRuns() *runs {
	r := &runs{in: make(chan []uint64), free: make(chan []uint64, 2), done: make(chan struct{}), buffers: 1}
	go func() {
		defer close(r.done)
		var scratch []uint64
		for chunk := range r.in {
			var ru run
			ru, scratch = sortRun(chunk, scratch)
			r.sorted = append(r.sorted, ru)
			r.free <- chunk[:0]
		}
	}()
	return r
}

// add appends the pairs of file id, which is above every file added before.
func (r *runs) add(id uint32, trigrams []uint32) {
	if r.pairs == nil {
		// Whole at once: growing by appends would copy it over and over.
		// Pages never written are never touched.
		r.pairs = make([]uint64, 0, runPairs+1<<16)
	}
	for _, t := range trigrams {
		r.pairs = append(r.pairs, uint64(t)<<32|uint64(id))
	}
	if len(r.pairs) >= runPairs {
		r.in <- r.pairs
		r.pairs = nil
		select {
		case r.pairs = <-r.free:
		default:
			if r.buffers == 2 {
				r.pairs = <-r.free
			} else {
				r.buffers++
			}
		}
	}
}

// finish sorts the last chunk and waits for the sorter; the runs are then
// in file order.
func (r *runs) finish() {
	if len(r.pairs) > 0 {
		r.in <- r.pairs
	}
	r.pairs = nil
	close(r.in)
	<-r.done
}

// sortRun sorts pairs by trigram, keeping the files' order (a stable
// radix sort on the trigram's two halves of 12 bits: 4096 counters and
// as many write streams stay in cache), and encodes them as a run.
func sortRun(pairs, scratch []uint64) (run, []uint64) {
	if cap(scratch) < len(pairs) {
		scratch = make([]uint64, len(pairs))
	}
	scratch = scratch[:len(pairs)]
	var low, high [1 << 12]int
	for _, p := range pairs {
		low[p>>32&0xFFF]++
		high[p>>44&0xFFF]++
	}
	radixPass(pairs, scratch, 32, &low)
	radixPass(scratch, pairs, 44, &high)
	groups := 0
	for i, p := range pairs {
		if i == 0 || p>>32 != pairs[i-1]>>32 {
			groups++
		}
	}
	// Most deltas take a byte or two.
	ru := run{entries: make([]runEntry, 0, groups), data: make([]byte, 0, len(pairs)+len(pairs)/2)}
	for i := 0; i < len(pairs); {
		t := uint32(pairs[i] >> 32)
		e := runEntry{trigram: t, off: uint32(len(ru.data)), first: uint32(pairs[i])}
		prev := e.first
		i++
		for ; i < len(pairs) && uint32(pairs[i]>>32) == t; i++ {
			id := uint32(pairs[i])
			if d := id - prev; d < 0x80 {
				ru.data = append(ru.data, byte(d)) // most: files close together
			} else {
				ru.data = binary.AppendUvarint(ru.data, uint64(d))
			}
			prev = id
		}
		e.last = prev
		ru.entries = append(ru.entries, e)
	}
	return ru, scratch
}

// radixPass moves src to dst stably ordered by the 12 bits at shift,
// whose counts are count.
func radixPass(src, dst []uint64, shift uint, count *[1 << 12]int) {
	sum := 0
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, p := range src {
		d := p >> shift & 0xFFF
		dst[count[d]] = p
		count[d]++
	}
}

// piece is one run's part of a trigram's list.
type piece struct {
	first, last uint32
	deltas      []byte
}

// cursor walks the runs' entries in trigram order.
type cursor struct {
	runs []run
	next []int
}

func newCursor(rs []run) *cursor { return &cursor{runs: rs, next: make([]int, len(rs))} }

// pieces appends the pieces of trigram t, which is above every trigram
// asked before, in file order.
func (c *cursor) pieces(t uint32, out []piece) []piece {
	for i := range c.runs {
		ru := &c.runs[i]
		j := c.next[i]
		if j == len(ru.entries) || ru.entries[j].trigram != t {
			continue
		}
		end := len(ru.data)
		if j+1 < len(ru.entries) {
			end = int(ru.entries[j+1].off)
		}
		e := ru.entries[j]
		out = append(out, piece{first: e.first, last: e.last, deltas: ru.data[e.off:end]})
		c.next[i] = j + 1
	}
	return out
}

// writePieces writes the list the pieces make, one after the other, and
// returns its length and CRC: each piece's first file is re-encoded as a
// delta from the last of the piece before, the rest is copied.
func writePieces(w io.Writer, ps []piece) (int, uint32, error) {
	var (
		head [binary.MaxVarintLen64]byte
		n    int
		crc  uint32
		last uint32
	)
	for i, p := range ps {
		d := p.first
		if i > 0 {
			d -= last
		}
		k := binary.PutUvarint(head[:], uint64(d))
		for _, b := range [][]byte{head[:k], p.deltas} {
			if _, err := w.Write(b); err != nil {
				return 0, 0, err
			}
			crc = crc32.Update(crc, castagnoli(), b)
			n += len(b)
		}
		last = p.last
	}
	return n, crc, nil
}

// appendIDs appends the files of the pieces, in order.
func appendIDs(ids []uint32, ps []piece) []uint32 {
	for _, p := range ps {
		id := p.first
		ids = append(ids, id)
		for b := p.deltas; len(b) > 0; {
			d, k := binary.Uvarint(b)
			b = b[k:]
			id += uint32(d)
			ids = append(ids, id)
		}
	}
	return ids
}

// trigramSet is a set of trigrams, iterated in order.
type trigramSet []uint64

func newTrigramSet() trigramSet   { return make(trigramSet, 1<<24/64) }
func (s trigramSet) add(t uint32) { s[t>>6] |= 1 << (t & 63) }

// sorted lists the set's trigrams in ascending order.
func (s trigramSet) sorted() []uint32 {
	var ts []uint32
	for w, set := range s {
		for set != 0 {
			b := uint32(bits.TrailingZeros64(set))
			ts = append(ts, uint32(w)<<6|b)
			set &= set - 1
		}
	}
	return slices.Clip(ts)
}
