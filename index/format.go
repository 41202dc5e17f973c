package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sort"
	"sync"
)

// The index file: a header, the meta section (the tree's root, its files
// with their identities, the files whose content is another's, and the
// block index of the trigram table), the
// trigram table (16-byte entries sorted by trigram: trigram, offset and
// length of its posting list, and the list's CRC), and the posting lists
// (file numbers, delta-encoded as uvarints; a file whose content is
// another's is in none: it is a candidate when that one is). The header and meta carry
// CRCs checked on open; each block of the table and each posting list has
// its own, checked when read, so a query reads and checks only what it uses.
const (
	magic      = "AGFSIX04"
	headerSize = 96
	entrySize  = 16
	// blockEntries is the trigram table entries one block CRC covers.
	blockEntries = 4096
)

// castagnoli is made on first use: MakeTable builds its tables (0.2 ms),
// which an initialiser would charge to every call, index or not.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }

// Flags of an indexed file.
const (
	// flagBinary: a NUL in the first 64 KiB, as grep decides; never searched.
	flagBinary = 1 << iota
	// flagOpaque: not indexed (UTF-16, which grep decodes): always searched.
	flagOpaque
	// flagRacy: modified so shortly before the build that a later write
	// could leave the same mtime (timestamps are coarse): always searched,
	// and read again by the next build.
	flagRacy
	// flagText: UTF-8 without NUL, the text replace edits, so that a
	// replace need not read a file that cannot match to count it.
	flagText
)

// fileEntry is one indexed file: its path relative to the root and the
// identity it had when read.
type fileEntry struct {
	rel     string
	size    int64
	modTime int64
	version string
	flags   uint8
}

// header is the fixed start of an index file.
type header struct {
	length   uint64
	built    int64
	trigrams uint64
	metaOff  uint64
	metaLen  uint64
	tableOff uint64
	postOff  uint64
	postLen  uint64
	metaCRC  uint32
	// rootDev is the device of the tree's root when the build ran, so
	// that Sweep keeps the index of a tree whose file system is not
	// mounted; an index made before it was recorded has none (hasRootDev).
	rootDev    uint64
	hasRootDev bool
}

func (h header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, magic)
	le := binary.LittleEndian
	le.PutUint64(b[8:], h.length)
	le.PutUint64(b[16:], uint64(h.built))
	le.PutUint64(b[24:], h.trigrams)
	le.PutUint64(b[32:], h.metaOff)
	le.PutUint64(b[40:], h.metaLen)
	le.PutUint64(b[48:], h.tableOff)
	le.PutUint64(b[56:], h.postOff)
	le.PutUint64(b[64:], h.postLen)
	le.PutUint32(b[72:], h.metaCRC)
	if h.hasRootDev {
		le.PutUint64(b[76:], h.rootDev)
		b[84] = 1
	}
	le.PutUint32(b[92:], checksum(b[:92]))
	return b
}

var errCorrupt = errors.New("the index is corrupt")

// errOtherVersion is an index of another format: one another agentfs reads,
// which this one neither uses nor removes.
var errOtherVersion = errors.New("made by another version of agentfs")

// decodeHeader checks the magic, the header's CRC and that every section
// lies inside a file of size n.
func decodeHeader(b []byte, n int) (header, error) {
	if len(b) >= headerSize && string(b[:6]) == magic[:6] && string(b[:8]) != magic {
		return header{}, fmt.Errorf("%w (format %q, this one reads %q)", errOtherVersion, b[6:8], magic[6:])
	}
	if len(b) < headerSize || string(b[:8]) != magic {
		return header{}, errors.New("not an agentfs index (wrong magic)")
	}
	le := binary.LittleEndian
	if checksum(b[:92]) != le.Uint32(b[92:]) {
		return header{}, errCorrupt
	}
	h := header{
		length: le.Uint64(b[8:]), built: int64(le.Uint64(b[16:])), trigrams: le.Uint64(b[24:]),
		metaOff: le.Uint64(b[32:]), metaLen: le.Uint64(b[40:]), tableOff: le.Uint64(b[48:]),
		postOff: le.Uint64(b[56:]), postLen: le.Uint64(b[64:]), metaCRC: le.Uint32(b[72:]),
		rootDev: le.Uint64(b[76:]), hasRootDev: b[84] == 1,
	}
	size := uint64(n)
	if h.length < size {
		return header{}, fmt.Errorf("the index has %d bytes past its end", size-h.length)
	}
	if h.length != size || !inBounds(h.metaOff, h.metaLen, size) || h.trigrams > size/entrySize ||
		!inBounds(h.tableOff, h.trigrams*entrySize, size) || !inBounds(h.postOff, h.postLen, size) || h.metaOff < headerSize {
		return header{}, errors.New("the index is truncated")
	}
	return h, nil
}

// inBounds reports whether the section of length n at off lies in size
// bytes, without the sum wrapping past 2^64 (a crafted header whose
// checksum holds once made every search panic).
func inBounds(off, n, size uint64) bool { return off <= size && n <= size-off }

// meta is the meta section: what the index is of and what it proves.
type meta struct {
	root string
	// config is the backend's fingerprint (localfs.FS.Fingerprint).
	config string
	// racy is the change time (the later of mtime and ctime) from which
	// a file or directory was recorded too close to the build to be
	// trusted.
	racy  int64
	files []fileEntry
	// copies are the files whose posting lists are another's (the same
	// content, indexed once), ascending by file.
	copies []copyOf
	// dirs are the directories walked, the root ("") first, in walk order.
	dirs []record
	// watched are the absolute paths of the ignore files (and .git
	// directories) that are not indexed files, "" version when absent.
	watched []record
	blocks  []uint32
}

// copyOf says that the posting lists of file are those of file of, which
// is no copy itself.
type copyOf struct {
	file, of uint32
}

// record is a path and its identity (backend.FileInfo.Version).
type record struct {
	path, version string
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendRecords(b []byte, rs []record) []byte {
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, r := range rs {
		b = appendString(b, r.path)
		b = appendString(b, r.version)
	}
	return b
}

func (m *meta) encode() []byte {
	b := make([]byte, 0, m.size())
	b = appendString(b, m.root)
	b = appendString(b, m.config)
	b = binary.AppendVarint(b, m.racy)
	b = binary.AppendUvarint(b, uint64(len(m.files)))
	for _, f := range m.files {
		b = appendString(b, f.rel)
		b = binary.AppendUvarint(b, uint64(f.size))
		b = binary.AppendVarint(b, f.modTime)
		b = appendString(b, f.version)
		b = append(b, f.flags)
	}
	b = binary.AppendUvarint(b, uint64(len(m.copies)))
	for _, c := range m.copies {
		b = binary.AppendUvarint(b, uint64(c.file))
		b = binary.AppendUvarint(b, uint64(c.of))
	}
	b = appendRecords(b, m.dirs)
	b = appendRecords(b, m.watched)
	b = binary.AppendUvarint(b, uint64(len(m.blocks)))
	for _, c := range m.blocks {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	return b
}

// size is the length of the encoded meta: made room for at once, the
// section (5 MB for 46,000 files) was copied over and over as it grew,
// each time into pages never touched before.
func (m *meta) size() int {
	str := func(s string) int { return uvarintLen(uint64(len(s))) + len(s) }
	n := str(m.root) + str(m.config) + varintLen(m.racy) + uvarintLen(uint64(len(m.files)))
	for _, f := range m.files {
		n += str(f.rel) + uvarintLen(uint64(f.size)) + varintLen(f.modTime) + str(f.version) + 1
	}
	n += uvarintLen(uint64(len(m.copies)))
	for _, c := range m.copies {
		n += uvarintLen(uint64(c.file)) + uvarintLen(uint64(c.of))
	}
	for _, rs := range [][]record{m.dirs, m.watched} {
		n += uvarintLen(uint64(len(rs)))
		for _, r := range rs {
			n += str(r.path) + str(r.version)
		}
	}
	return n + uvarintLen(uint64(len(m.blocks))) + 4*len(m.blocks)
}

// uvarintLen is the length of x as binary.AppendUvarint writes it.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// varintLen is the length of x as binary.AppendVarint writes it.
func varintLen(x int64) int { return uvarintLen(uint64(x<<1) ^ uint64(x>>63)) }

// metaReader decodes the meta section, failing once on any overrun. It
// reads a copy of the section made once: the strings it returns are
// parts of that copy, not an allocation each (a query decodes every
// file's path and identity).
type metaReader struct {
	s   string
	err error
}

func (r *metaReader) uvarint() uint64 {
	var v uint64
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		v |= uint64(c&0x7F) << (7 * i)
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			r.s = r.s[i+1:]
			return v
		}
	}
	r.fail()
	return 0
}

func (r *metaReader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *metaReader) bytes(n uint64) string {
	if n > uint64(len(r.s)) {
		r.fail()
		return ""
	}
	v := r.s[:n]
	r.s = r.s[n:]
	return v
}

func (r *metaReader) string() string { return r.bytes(r.uvarint()) }

// count reads a count of items of at least one byte each.
func (r *metaReader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return 0
	}
	return n
}

func (r *metaReader) records() []record {
	n := r.count()
	rs := make([]record, 0, n)
	for range n {
		rs = append(rs, record{path: r.string(), version: r.string()})
	}
	return rs
}

// copies reads the copies of an index of n files, failing unless each
// names two files, ascending, of a file that is no copy itself.
func (r *metaReader) copies(n int) []copyOf {
	k := r.count()
	cs := make([]copyOf, 0, k)
	isCopy := newBitset(n)
	for range k {
		c := copyOf{file: uint32(r.uvarint()), of: uint32(r.uvarint())}
		if r.err != nil || uint64(c.file) >= uint64(n) || uint64(c.of) >= uint64(n) || c.file == c.of ||
			len(cs) > 0 && c.file <= cs[len(cs)-1].file {
			r.fail()
			return nil
		}
		cs = append(cs, c)
		isCopy.set(c.file)
	}
	for _, c := range cs {
		if isCopy.has(c.of) {
			r.fail()
			return nil
		}
	}
	return cs
}

func (r *metaReader) fail() {
	r.err = errCorrupt
	r.s = ""
}

func decodeMeta(b []byte) (*meta, error) {
	r := &metaReader{s: string(b)}
	m := &meta{root: r.string(), config: r.string(), racy: r.varint()}
	n := r.count()
	m.files = make([]fileEntry, 0, n)
	for range n {
		var f fileEntry
		f.rel = r.string()
		f.size = int64(r.uvarint())
		f.modTime = r.varint()
		f.version = r.string()
		if fl := r.bytes(1); len(fl) == 1 {
			f.flags = fl[0]
		}
		if r.err != nil {
			return nil, r.err
		}
		m.files = append(m.files, f)
	}
	m.copies = r.copies(len(m.files))
	m.dirs = r.records()
	m.watched = r.records()
	nb := r.count()
	raw := r.bytes(nb * 4)
	if r.err != nil || len(r.s) != 0 {
		return nil, errCorrupt
	}
	for i := range nb {
		b := raw[i*4:]
		m.blocks = append(m.blocks, uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)
	}
	return m, nil
}

// tableEntry is one trigram's row of the table.
type tableEntry struct {
	trigram  uint32
	off, len uint32
	crc      uint32
}

func appendEntry(b []byte, e tableEntry) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, e.trigram)
	b = le.AppendUint32(b, e.off)
	b = le.AppendUint32(b, e.len)
	return le.AppendUint32(b, e.crc)
}

func entryAt(table []byte, i int) tableEntry {
	le := binary.LittleEndian
	e := table[i*entrySize:]
	return tableEntry{trigram: le.Uint32(e), off: le.Uint32(e[4:]), len: le.Uint32(e[8:]), crc: le.Uint32(e[12:])}
}

// blockCRCs is the CRC of each block of the table.
func blockCRCs(table []byte) []uint32 {
	var crcs []uint32
	for off := 0; off < len(table); off += blockEntries * entrySize {
		crcs = append(crcs, checksum(table[off:min(len(table), off+blockEntries*entrySize)]))
	}
	return crcs
}

// findEntry looks trigram t up in the table, checking the CRC of the block
// it reads (once: checked records the blocks already checked).
func findEntry(table []byte, blocks []uint32, checked []bool, t uint32) (tableEntry, bool, error) {
	n := len(table) / entrySize
	i := sort.Search(n, func(i int) bool {
		return binary.LittleEndian.Uint32(table[i*entrySize:]) >= t
	})
	if i == n {
		return tableEntry{}, false, nil
	}
	bl := i / blockEntries
	if !checked[bl] {
		start := bl * blockEntries * entrySize
		if checksum(table[start:min(len(table), start+blockEntries*entrySize)]) != blocks[bl] {
			return tableEntry{}, false, errCorrupt
		}
		checked[bl] = true
	}
	e := entryAt(table, i)
	return e, e.trigram == t, nil
}

// appendPostings delta-encodes ids, sorted ascending.
func appendPostings(b []byte, ids []uint32) []byte {
	prev := uint32(0)
	for i, id := range ids {
		d := id - prev
		if i == 0 {
			d = id
		}
		b = binary.AppendUvarint(b, uint64(d))
		prev = id
	}
	return b
}

// namesNone reports whether the posting list b, of an index of n files,
// names no file of set.
func namesNone(b []byte, n int, set bitset) (bool, error) {
	none := true
	err := decodePostings(b, n, func(id uint32) { none = none && !set.has(id) })
	return none, err
}

// decodePostings calls f with each file number of a list, failing on a
// list that does not decode or names a file past n.
func decodePostings(b []byte, n int, f func(uint32)) error {
	id := uint64(0)
	for first := true; len(b) > 0; first = false {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return errCorrupt
		}
		b = b[k:]
		if first {
			id = d
		} else {
			id += d
		}
		if id >= uint64(n) {
			return errCorrupt
		}
		f(uint32(id))
	}
	return nil
}
