package index

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
	"os"
	"slices"
	"sort"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// runPairs is how many (trigram, file) pairs a run holds before it is
// sorted: 16 MiB of trigrams, twice over while one chunk is sorted and the
// next filled, plus the sort's keys.
var runPairs = 1 << 22

// runs collect the posting lists of the files read as codesearch builds
// them: (trigram, file) pairs appended in file order, sorted a chunk at a
// time (by another goroutine, so reading goes on) into runs that hold
// each trigram's files as a delta-encoded list, merged when the index is
// written. Each step reads and writes memory in sequence; adding each
// posting to its own list in a table of all 2^24 trigrams was a cache
// miss per posting.
//
// The runs, about a fifth of the bytes read, are written to a file beside
// the index as they are made and mapped back for the merge. Kept in the
// heap, they grew with the bytes of the tree (gigabytes for a monorepo),
// and copying each out of the sorter's buffers into memory never touched
// before cost 10% of a build on a VM, where the first touch of a page is
// dear; the kernel copies them into its page cache without that cost, and
// may write them out and drop them under pressure.
type runs struct {
	chunk  *chunk // the pairs added since the last run
	sorted []run
	in     chan *chunk
	free   chan *chunk
	done   chan struct{}
	// buffers is how many chunk buffers were made, at most two.
	buffers int
	// name is where the file of the runs is made; spill is that file,
	// its name removed as soon as it is made, so that a build killed
	// leaves nothing (or, killed between the two, a file newRuns removes);
	// spilled is its length and mapped its mapping.
	name    string
	spill   *os.File
	spilled int64
	mapped  []byte
	// trigrams are those of every run, set once done is closed.
	trigrams trigramSet
	// err is the sorter's failure to spill, read once done is closed;
	// failed says so at once, so that the build stops reading.
	err    error
	failed atomic.Bool
}

// chunkFiles bounds the files of a chunk: a file's place in its chunk
// takes 16 bits.
const chunkFiles = 1 << 16

// chunk is (trigram, file) pairs in file order, as each file's trigrams
// and where they end: 4 bytes a pair, against 8 for the pair itself,
// which made the pairs a tenth of a build's memory and their writing 7%
// of its CPU.
type chunk struct {
	trigrams []uint32
	files    []chunkFile
	// base is the first file: a chunk spans fewer than chunkFiles files,
	// so that a pair packs in 32 bits once sorted by its trigram's first
	// byte.
	base uint32
}

// chunkFile is a file of a chunk with trigrams: its number less the
// chunk's base, and the end of its trigrams.
type chunkFile struct {
	end   uint32
	place uint16
}

// add appends the trigrams of file id, which is above every file added
// before and less than chunkFiles past the first; a file with none adds
// nothing.
func (c *chunk) add(id uint32, trigrams []uint32) {
	if len(trigrams) == 0 {
		return
	}
	if len(c.files) == 0 {
		c.base = id
	}
	c.trigrams = append(c.trigrams, trigrams...)
	c.files = append(c.files, chunkFile{end: uint32(len(c.trigrams)), place: uint16(id - c.base)})
}

// placeAt walks a chunk's files from file f, where trigram pos or one
// before it is: the place of pos's file, and its file.
func (c *chunk) placeAt(pos uint32, f int) (uint32, int) {
	for c.files[f].end <= pos {
		f++
	}
	return uint32(c.files[f].place), f
}

// run is one sorted chunk: per trigram, an entry (runEntrySize bytes)
// with the first and last files of its list and where the deltas between
// the others are, at data[off:] up to the next entry's off.
type run struct {
	entries, data []byte
	// at is where the run is in the spill file, its entries then its
	// data; entries and data are set once the file is mapped back. crc
	// is theirs as written, checked then.
	at               int64
	nEntries, nBytes int
	crc              uint32
}

type runEntry struct {
	trigram, off, first, last uint32
}

const runEntrySize = 16

func appendRunEntry(b []byte, e runEntry) []byte {
	b = binary.LittleEndian.AppendUint32(b, e.trigram)
	b = binary.LittleEndian.AppendUint32(b, e.off)
	b = binary.LittleEndian.AppendUint32(b, e.first)
	return binary.LittleEndian.AppendUint32(b, e.last)
}

func (ru *run) len() int { return len(ru.entries) / runEntrySize }

// dataAt is where the deltas of entry i start in data, and past the last
// entry the end of data: entry i's deltas are data[dataAt(i):dataAt(i+1)].
func (ru *run) dataAt(i int) int {
	if i == ru.len() {
		return len(ru.data)
	}
	return int(ru.entry(i).off)
}

func (ru *run) entry(i int) runEntry {
	e := ru.entries[i*runEntrySize : (i+1)*runEntrySize]
	return runEntry{trigram: binary.LittleEndian.Uint32(e), off: binary.LittleEndian.Uint32(e[4:]),
		first: binary.LittleEndian.Uint32(e[8:]), last: binary.LittleEndian.Uint32(e[12:])}
}

// newRuns collects runs in a file made at name. Any file there is a
// killed build's (under the builders' lock) and is removed first; one that
// cannot be removed fails the build when it writes its first run.
func newRuns(name string) *runs {
	os.RemoveAll(name)
	r := &runs{in: make(chan *chunk), free: make(chan *chunk, 2), done: make(chan struct{}), buffers: 1, name: name}
	go func() {
		defer close(r.done)
		s := sorter{trigrams: newTrigramSet()}
		for c := range r.in {
			r.keep(s.sort(c))
			c.trigrams, c.files = c.trigrams[:0], c.files[:0]
			r.free <- c
		}
		r.trigrams = s.trigrams
	}()
	return r
}

// keep writes a run the sorter made in its buffers to the spill file.
// Once a spill failed, nothing more is kept: the build fails.
func (r *runs) keep(ru run) {
	if r.err != nil {
		return
	}
	if ru, r.err = r.write(ru); r.err != nil {
		r.failed.Store(true)
		return
	}
	r.sorted = append(r.sorted, ru)
}

// write appends a run to the spill file and returns it as spilled.
func (r *runs) write(ru run) (run, error) {
	if r.spill == nil {
		f, err := os.OpenFile(r.name, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return ru, err
		}
		if err := os.Remove(r.name); err != nil {
			f.Close()
			return ru, err
		}
		r.spill = f
	}
	crc := uint32(0)
	for _, b := range [][]byte{ru.entries, ru.data} {
		if _, err := r.spill.Write(b); err != nil {
			return ru, err
		}
		crc = crc32.Update(crc, castagnoli(), b)
	}
	at := r.spilled
	r.spilled += int64(len(ru.entries) + len(ru.data))
	return run{at: at, nEntries: len(ru.entries), nBytes: len(ru.data), crc: crc}, nil
}

// errRunsCorrupt is finish's error when a run read back is not the bytes
// written: the file is never synced, and a page the kernel failed to
// write out and dropped reads back as something else. A run of zeros
// would drop its files from every list, and the index's own checksums,
// taken of what it was made from, would vouch for it.
var errRunsCorrupt = errors.New("the build's runs read back differ from those written; build again")

// errSpill is add's error once the runs could not be spilled; finish
// returns why.
var errSpill = errors.New("the runs could not be spilled")

// add appends the pairs of file id, which is above every file added
// before; errSpill once a spill failed, when reading on is in vain.
func (r *runs) add(id uint32, trigrams []uint32) error {
	if r.failed.Load() {
		return errSpill
	}
	c := r.chunk
	if c != nil && len(c.files) > 0 && id-c.base >= chunkFiles {
		r.flush()
		c = r.chunk
	}
	if c == nil {
		// Whole at once: growing by appends would copy it over and over.
		// Pages never written are never touched.
		c = &chunk{trigrams: make([]uint32, 0, runPairs+1<<16)}
		r.chunk = c
	}
	c.add(id, trigrams)
	if len(c.trigrams) >= runPairs {
		r.flush()
	}
	return nil
}

// flush hands the chunk to the sorter and takes a buffer for the next.
func (r *runs) flush() {
	r.in <- r.chunk
	r.chunk = nil
	select {
	case r.chunk = <-r.free:
	default:
		if r.buffers == 2 {
			r.chunk = <-r.free
		} else {
			r.buffers++
		}
	}
}

// finish sorts the last chunk and waits for the sorter; the runs are then
// in file order, mapped back.
func (r *runs) finish() error {
	if err := r.wait(); err != nil {
		return err
	}
	return r.mapBack()
}

// wait sorts the last chunk and waits for the sorter to write every run.
func (r *runs) wait() error {
	if r.chunk != nil && len(r.chunk.files) > 0 {
		r.in <- r.chunk
	}
	r.chunk = nil
	close(r.in)
	<-r.done
	return r.err
}

// mapBack maps the runs written back, each checked against the CRC-32C of
// what was written: 30 to 40 ms for the 110 MB of runs of 510 MB of text,
// most of it faulting in the pages the merge reads next (a build took
// 2.158 s against 2.124, within its spread of 0.07).
func (r *runs) mapBack() error {
	if r.spilled == 0 {
		return nil
	}
	m, err := unix.Mmap(int(r.spill.Fd()), 0, int(r.spilled), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	r.mapped = m
	for i := range r.sorted {
		ru := &r.sorted[i]
		ru.entries = m[ru.at : ru.at+int64(ru.nEntries)]
		ru.data = m[ru.at+int64(ru.nEntries) : ru.at+int64(ru.nEntries+ru.nBytes)]
		if crc32.Update(checksum(ru.entries), castagnoli(), ru.data) != ru.crc {
			return errRunsCorrupt
		}
	}
	return nil
}

// release lets go of the spill file; the runs are then gone, their
// slices cleared.
func (r *runs) release() {
	if r.mapped != nil {
		for i := range r.sorted {
			r.sorted[i].entries, r.sorted[i].data = nil, nil
		}
		unix.Munmap(r.mapped)
		r.mapped = nil
	}
	if r.spill != nil {
		r.spill.Close()
		r.spill = nil
	}
}

// sorter sorts chunks into runs, keeping its buffers from chunk to chunk.
type sorter struct {
	keys, tmp []uint32
	// entries and data are where a run is encoded before it is kept.
	entries, data []byte
	// trigrams gathers the trigrams of the runs made, marked as each
	// bucket is sorted, in cache and in order: a pass over the runs'
	// entries once all were made cost a build 2% of its time, none of it
	// in parallel.
	trigrams trigramSet
}

// sort sorts a chunk's pairs by trigram, keeping the files' order, and
// encodes them as a run. A stable radix sort: first by the trigram's first
// byte into 256 buckets of 32-bit keys (its other two bytes and the
// file's place in the chunk), then each bucket, which mostly fits in
// cache, by the two other bytes. Sorting whole 64-bit pairs by 12 bits a
// pass wrote to 4096 places at once and missed the cache at each.
func (s *sorter) sort(c *chunk) run {
	tgs := c.trigrams
	if cap(s.keys) < len(tgs) {
		// With room for the next chunk, which may be a little longer.
		s.keys = make([]uint32, len(tgs)+len(tgs)/8)
	}
	keys := s.keys[:len(tgs)]
	// Four streams, one per quarter of the pairs, each with its own
	// counters: a counter is loaded, added to and stored per pair, and one
	// stream waits for its last store whenever two pairs in a row fall in
	// the same bucket, which in text they often do.
	var count [4][256]int
	q := len(tgs) / 4
	t0, t1, t2, t3 := tgs[:q], tgs[q:2*q], tgs[2*q:3*q], tgs[3*q:]
	for i := range t0 {
		count[0][t0[i]>>16]++
		count[1][t1[i]>>16]++
		count[2][t2[i]>>16]++
		count[3][t3[i]>>16]++
	}
	for _, t := range t3[q:] {
		count[3][t>>16]++
	}
	var starts [257]int
	for b := range 256 {
		starts[b+1] = starts[b]
		for st := range count {
			n := count[st][b]
			count[st][b] = starts[b+1]
			starts[b+1] += n
		}
	}
	// A key is the trigram's two low bytes over its file's place, which
	// each stream follows through the files as it goes.
	n0, n1, n2, n3 := &count[0], &count[1], &count[2], &count[3]
	var f0, f1, f2, f3 int
	var pl0, pl1, pl2, pl3 uint32
	for i := range uint32(q) {
		pl0, f0 = c.placeAt(i, f0)
		pl1, f1 = c.placeAt(uint32(q)+i, f1)
		pl2, f2 = c.placeAt(uint32(2*q)+i, f2)
		pl3, f3 = c.placeAt(uint32(3*q)+i, f3)
		a, b, d, e := t0[i], t1[i], t2[i], t3[i]
		keys[n0[a>>16]] = a<<16 | pl0
		n0[a>>16]++
		keys[n1[b>>16]] = b<<16 | pl1
		n1[b>>16]++
		keys[n2[d>>16]] = d<<16 | pl2
		n2[d>>16]++
		keys[n3[e>>16]] = e<<16 | pl3
		n3[e>>16]++
	}
	for i, t := range t3[q:] {
		pl3, f3 = c.placeAt(uint32(4*q+i), f3)
		keys[n3[t>>16]] = t<<16 | pl3
		n3[t>>16]++
	}
	groups := 0
	for b := range 256 {
		bucket := keys[starts[b]:starts[b+1]]
		s.sortBucket(bucket)
		groups += countGroups(bucket, uint32(b), s.trigrams)
	}
	// A delta takes a byte but for files far apart: room for the run's
	// lists at once, where growing them by doubling copied each over and
	// touched twice the pages (1% of a build).
	data := slices.Grow(s.data[:0], len(keys)+len(keys)/8)
	s.entries, s.data = encodeRun(keys, &starts, c.base, slices.Grow(s.entries[:0], groups*runEntrySize), data)
	return run{entries: s.entries, data: s.data}
}

// countGroups counts the trigrams of a sorted bucket (the first byte of
// each is b) while it is in cache, and adds them to set: a run's entries
// are made room for at their size, not grown (a copy, and pages touched
// twice).
func countGroups(bucket []uint32, b uint32, set trigramSet) int {
	groups := 0
	for i, k := range bucket {
		if i == 0 || k>>16 != bucket[i-1]>>16 {
			groups++
			set.add(b<<16 | k>>16)
		}
	}
	return groups
}

// encodeRun encodes the sorted buckets of keys as a run's entries and
// lists, appended to entries and data. A function of its own, so that its
// loop keeps its variables in registers. Most deltas take a byte.
func encodeRun(keys []uint32, starts *[257]int, base uint32, entries, data []byte) ([]byte, []byte) {
	for b := range 256 {
		bucket := keys[starts[b]:starts[b+1]]
		for i := 0; i < len(bucket); {
			k := bucket[i] >> 16
			e := runEntry{trigram: uint32(b)<<16 | k, off: uint32(len(data)), first: base + bucket[i]&0xFFFF}
			prev := e.first
			i++
			for ; i < len(bucket) && bucket[i]>>16 == k; i++ {
				id := base + bucket[i]&0xFFFF
				if d := id - prev; d < 0x80 {
					data = append(data, byte(d)) // most: files close together
				} else {
					data = binary.AppendUvarint(data, uint64(d))
				}
				prev = id
			}
			e.last = prev
			entries = appendRunEntry(entries, e)
		}
	}
	return entries, data
}

// sortBucket sorts keys stably by their top 16 bits, a byte a pass. In
// one stream: a bucket's keys are in cache, and four streams as in sort's
// first pass measured no faster.
func (s *sorter) sortBucket(keys []uint32) {
	if len(keys) < 2 {
		return
	}
	if cap(s.tmp) < len(keys) {
		s.tmp = make([]uint32, len(keys), max(len(keys), 2*cap(s.tmp)))
	}
	tmp := s.tmp[:len(keys)]
	var low, high [256]int
	for _, k := range keys {
		low[k>>16&0xFF]++
		high[k>>24]++
	}
	radixPass(keys, tmp, 16, &low)
	radixPass(tmp, keys, 24, &high)
}

// radixPass moves src to dst stably ordered by the byte at shift, whose
// counts are count.
func radixPass(src, dst []uint32, shift uint, count *[256]int) {
	sum := 0
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, k := range src {
		d := k >> shift & 0xFF
		dst[count[d]] = k
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

// listBytes bounds the bytes of the lists of the trigrams from the
// cursor's up to last that the runs hold, joined: their deltas, and a
// first file each.
func (c *cursor) listBytes(last uint32) int {
	n := 0
	for i := range c.runs {
		ru := &c.runs[i]
		from := c.next[i]
		to := from + sort.Search(ru.len()-from, func(j int) bool { return ru.entry(from+j).trigram > last })
		n += ru.dataAt(to) - ru.dataAt(from) + binary.MaxVarintLen32*(to-from)
	}
	return n
}

// pieces appends the pieces of trigram t, which is above every trigram
// asked before, in file order.
func (c *cursor) pieces(t uint32, out []piece) []piece {
	for i := range c.runs {
		ru := &c.runs[i]
		j := c.next[i]
		if j == ru.len() {
			continue
		}
		e := ru.entry(j)
		if e.trigram != t {
			continue
		}
		out = append(out, piece{first: e.first, last: e.last, deltas: ru.data[e.off:ru.dataAt(j+1)]})
		c.next[i] = j + 1
	}
	return out
}

// appendPieces appends the list the pieces make, one after the other:
// each piece's first file is re-encoded as a delta from the last of the
// piece before, the rest is copied. Into one buffer, so that the list
// takes one write and one CRC, not two of each per piece.
func appendPieces(b []byte, ps []piece) []byte {
	var last uint32
	for i, p := range ps {
		d := p.first
		if i > 0 {
			d -= last
		}
		b = binary.AppendUvarint(b, uint64(d))
		b = append(b, p.deltas...)
		last = p.last
	}
	return b
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
	n := 0
	for _, set := range s {
		n += bits.OnesCount64(set)
	}
	ts := make([]uint32, 0, n)
	for w, set := range s {
		for set != 0 {
			b := uint32(bits.TrailingZeros64(set))
			ts = append(ts, uint32(w)<<6|b)
			set &= set - 1
		}
	}
	return ts
}
