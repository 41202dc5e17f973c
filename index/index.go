// Package index is a trigram index of a tree's file contents that grep
// consults to read only the files that may match, as google/codesearch
// does: an inverted index from every three-byte sequence to the files that
// hold it. A query (a literal, a regex through regexp/syntax, ignoreCase
// through its case variants) becomes an AND/OR tree of trigrams (Plan);
// the files whose trigrams satisfy it are the candidates, and grep runs its
// one matcher on them, so the results are a scan's. A query that yields no
// trigram (a regex like \w+, a literal shorter than three bytes) scans.
//
// The index is never trusted to be current. grep still walks the tree (the
// backend's walk, ignore files and all) and stats each file; a file is
// skipped only when the index holds it with the same identity (localfs:
// device, inode, size, mtime and ctime) and its trigrams cannot satisfy
// the query. A file new, changed or unindexed is read as without an index,
// a deleted one is never walked. A mutation through agentfs changes the
// file's identity like any other write, so it needs no overlay: the stat
// pass is the proof of freshness, and its cost (one fstatat per file, no
// read) is what an indexed query pays beyond the candidates it reads.
//
// An index lives in the state directory (localfs.StateDir), one file per
// tree named by the root directory's device and inode, so every spelling of
// the root finds it. A build writes a new file beside the old, fsyncs and
// renames it over (a killed build leaves the old one), under an flock that
// serialises builders. Every part read is checked (header, meta, table
// blocks, posting lists carry CRC-32C): a corrupt, truncated or foreign file
// is never trusted; grep scans, and the next build starts afresh. The file
// is mmap'd, so a query holds only the pages it touches.
package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// Index is an open index file, mapped into memory.
type Index struct {
	data []byte
	h    header
	meta
	// checked marks the table blocks whose CRC was checked.
	checked []bool
	table   []byte
	post    []byte
	size    int64
	// name is the file's path; gen tells this build of it from any other
	// (its inode, pinned while mapped, and its build time).
	name, gen string
}

// location is where the index of the directory root lives.
type location struct {
	root string // the real absolute path
	dev  uint64 // its device
	file string
	lock string
	// building is the file a build writes, renamed to file at its end.
	building string
	// runs is the file a build spills its runs to, removed once made.
	runs string
	// watchLock is held by the tree's watcher (Watch).
	watchLock string
	// ended records how the tree's last watcher ended (WatcherEnd).
	ended string
}

// locate names the index files of the directory dir (real path) in state.
func locate(state, dir string) (location, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return location{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return location{}, fmt.Errorf("%s is not a directory", dir)
	}
	loc := locationIn(filepath.Join(state, "index"), treeName(&st))
	loc.root, loc.dev = dir, uint64(st.Dev)
	return loc, nil
}

// locationIn names the files, in the directory base, of the tree named t
// (treeName), its root and device unknown.
func locationIn(base, t string) location {
	return location{file: filepath.Join(base, t+".idx"), lock: filepath.Join(base, t+".lock"),
		building: filepath.Join(base, t+".idx.build"), runs: filepath.Join(base, t+".idx.runs"), watchLock: filepath.Join(base, t+".watch"),
		ended: filepath.Join(base, t+".ended")}
}

// locationOf names the files of the tree whose index file is ix's.
func locationOf(ix *Index) location {
	loc := locationIn(filepath.Dir(ix.name), strings.TrimSuffix(filepath.Base(ix.name), ".idx"))
	loc.root = ix.root
	return loc
}

// treeName is the name of the index files of the directory st describes.
func treeName(st *unix.Stat_t) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%d", st.Dev, st.Ino))
	return hex.EncodeToString(sum[:12])
}

// realDir is the real path of the absolute path abs.
func realDir(abs string) (string, error) {
	return filepath.EvalSymlinks(abs)
}

// open maps and checks the index file at name. A file that is not an index
// of root, or fails a check, is an error: it is never used.
func open(name, root string) (*Index, error) {
	f, st, err := openFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	ix := &Index{data: data, size: st.Size, name: name}
	if err := ix.check(root); err != nil {
		ix.Close()
		return nil, UnusableError{Reason: err}
	}
	ix.gen = fmt.Sprintf("%d.%d.%d", st.Dev, st.Ino, ix.h.built)
	return ix, nil
}

// openFile opens the index file at name, one that may be an index: a
// regular file of a size an index can have.
func openFile(name string) (*os.File, *unix.Stat_t, error) {
	// Never waiting on a FIFO, nor following a link, planted at the name.
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err == unix.ELOOP || err == unix.EMLINK { // a link (EMLINK: FreeBSD's answer)
		return nil, nil, UnusableError{Reason: errors.New("not an agentfs index (a link)")}
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	switch err := unix.Fstat(fd, &st); {
	case err != nil:
		f.Close()
		return nil, nil, err
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		f.Close()
		return nil, nil, UnusableError{Reason: errors.New("not an agentfs index (not a regular file)")}
	case int(st.Uid) != os.Getuid():
		// Planted while the state directory was not private (chmod 700
		// since): its identities and trigrams are another user's word.
		f.Close()
		return nil, nil, UnusableError{Reason: fmt.Errorf("not this user's index (it belongs to user %d)", st.Uid)}
	case st.Size < headerSize || st.Size > 1<<40:
		f.Close()
		return nil, nil, UnusableError{Reason: errors.New("not an agentfs index (too short)")}
	}
	return f, &st, nil
}

// check decodes and checks the header and meta.
func (ix *Index) check(root string) error {
	h, err := decodeHeader(ix.data, len(ix.data))
	if err != nil {
		return err
	}
	meta := ix.data[h.metaOff : h.metaOff+h.metaLen]
	if checksum(meta) != h.metaCRC {
		return errCorrupt
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return err
	}
	if root != "" && m.root != root {
		return fmt.Errorf("the index is of %s, not of %s", m.root, root)
	}
	table := ix.data[h.tableOff : h.tableOff+h.trigrams*entrySize]
	if uint64(len(m.blocks)) != (h.trigrams+blockEntries-1)/blockEntries {
		return errCorrupt
	}
	ix.h, ix.meta = h, *m
	ix.table, ix.post = table, ix.data[h.postOff:h.postOff+h.postLen]
	ix.checked = make([]bool, len(m.blocks))
	return nil
}

// UnusableError is the error of an index file that is not trusted:
// corrupt, truncated, foreign, or of another version of agentfs. Searches
// scan, and the next build starts afresh.
type UnusableError struct {
	Reason error
	// WatcherPid, of an index of another version of agentfs, is a
	// watcher of that version that runs for the tree: it builds the
	// index again in its own format, over any this version builds.
	WatcherPid int
}

func (e UnusableError) Error() string { return "the index cannot be used: " + e.Reason.Error() }
func (e UnusableError) Unwrap() error { return e.Reason }

// Close unmaps the index.
func (ix *Index) Close() {
	if ix.data != nil {
		unix.Munmap(ix.data)
		ix.data = nil
	}
}

// postings calls f with every file holding trigram t.
func (ix *Index) postings(t uint32, f func(uint32)) error {
	list, _, err := ix.list(t)
	if err != nil {
		return err
	}
	return decodePostings(list, len(ix.files), f)
}

// list is the encoded posting list of trigram t, checked against its CRC,
// and that CRC; none when no file holds t.
func (ix *Index) list(t uint32) ([]byte, uint32, error) {
	e, ok, err := findEntry(ix.table, ix.blocks, ix.checked, t)
	if err != nil || !ok {
		return nil, 0, err
	}
	if uint64(e.off)+uint64(e.len) > uint64(len(ix.post)) {
		return nil, 0, errCorrupt
	}
	list := ix.post[e.off : e.off+e.len]
	if checksum(list) != e.crc {
		return nil, 0, errCorrupt
	}
	return list, e.crc, nil
}

// tableChecks reports whether every block of the table matches its CRC.
func (ix *Index) tableChecks() bool { return slices.Equal(blockCRCs(ix.table), ix.blocks) }

// verify checks every block of the table and every posting list against
// its CRC, as the searches check those they read.
func (ix *Index) verify() error {
	if !ix.tableChecks() {
		return errCorrupt
	}
	for i := range len(ix.table) / entrySize {
		e := entryAt(ix.table, i)
		if uint64(e.off)+uint64(e.len) > uint64(len(ix.post)) || checksum(ix.post[e.off:e.off+e.len]) != e.crc {
			return errCorrupt
		}
	}
	return nil
}

// bitset is a set of file numbers.
type bitset []uint64

func newBitset(n int) bitset       { return make(bitset, (n+63)/64) }
func (b bitset) set(i uint32)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// candidates is the set of files whose trigrams satisfy q (q is not All):
// those the posting lists give, and their copies.
func (ix *Index) candidates(q *Query) (bitset, error) {
	c, err := ix.eval(q)
	if err != nil {
		return nil, err
	}
	for _, cp := range ix.copies {
		if c.has(cp.of) {
			c.set(cp.file)
		}
	}
	return c, nil
}

// copyGroups numbers, by file, the candidates that hold one content the
// build read once: a copy, and the file it copies, get that file's number
// plus one; other files 0. Nil when no candidate is a copy.
func (ix *Index) copyGroups(cand bitset) []uint32 {
	var g []uint32
	for _, c := range ix.copies {
		if cand.has(c.file) {
			if g == nil {
				g = make([]uint32, len(ix.files))
			}
			g[c.file], g[c.of] = c.of+1, c.of+1
		}
	}
	return g
}

// eval is the set of files whose posting lists satisfy q (q is not All).
func (ix *Index) eval(q *Query) (bitset, error) {
	n := len(ix.files)
	out := newBitset(n)
	switch q.op {
	case opAnd:
		for i := range out {
			out[i] = ^uint64(0)
		}
		for _, t := range q.trigrams {
			s := newBitset(n)
			if err := ix.postings(t, s.set); err != nil {
				return nil, err
			}
			for i := range out {
				out[i] &= s[i]
			}
		}
		for _, sub := range q.sub {
			if sub.op == opAll {
				continue
			}
			s, err := ix.eval(sub)
			if err != nil {
				return nil, err
			}
			for i := range out {
				out[i] &= s[i]
			}
		}
	case opOr:
		for _, t := range q.trigrams {
			if err := ix.postings(t, out.set); err != nil {
				return nil, err
			}
		}
		for _, sub := range q.sub {
			s, err := ix.eval(sub)
			if err != nil {
				return nil, err
			}
			for i := range out {
				out[i] |= s[i]
			}
		}
	}
	return out, nil
}

// Status describes an index.
type Status struct {
	// Root is the tree's path as JSON prints it, RootBase64 its bytes
	// when they are not UTF-8 (fault.PathText).
	Root       string    `json:"root"`
	RootBase64 string    `json:"rootBase64,omitempty"`
	Files      int       `json:"files"`
	Bytes      int64     `json:"bytes"`
	Built      time.Time `json:"built"`
	Size       int64     `json:"size"`
	Binary     int       `json:"binary"`
	Opaque     int       `json:"unindexed"`
	Reused     int       `json:"reused,omitempty"`
	Read       int       `json:"read,omitempty"`
	Trigram    uint64    `json:"trigrams"`
	// Copies are the files indexed as another's content.
	Copies int `json:"copies,omitempty"`
	// Watched says that a watcher (index --watch) runs for the index: it
	// answers for this build, or cannot for a moment (installing a build,
	// its events overflowed), when a search takes the stat pass.
	// WatcherPid is which process it is, also of one in another mount
	// namespace (not Watched: it answers no search from here), and
	// WatcherIdle after how long without a search it ends (0: never).
	Watched     bool     `json:"watched,omitempty"`
	WatcherPid  int      `json:"watcherPid,omitempty"`
	WatcherIdle *float64 `json:"watcherIdleSeconds,omitempty"`
	// WatcherEnded, when no watcher runs, is how the last one ended.
	WatcherEnded *WatcherEnd `json:"watcherEnded,omitempty"`
	// OtherSettings says that the index was built under other settings
	// than the caller's (see BuiltUnder): a search then walks the tree,
	// the index only sparing it the files it rules out, which an agent
	// asking why searches are slow after an upgrade could not tell.
	OtherSettings bool `json:"otherSettings,omitempty"`
	// config is the fingerprint the build recorded.
	config string
}

// BuiltUnder sets OtherSettings for a caller whose fingerprint is config
// (roots, deny paths, the meaning of ignore rules, who builds).
func (s *Status) BuiltUnder(config string) {
	s.OtherSettings = s.config != config
}

// watchedBy records that the watcher of reply r answers for the index.
func (s *Status) watchedBy(r watchReply) {
	s.Watched, s.WatcherPid, s.WatcherIdle = true, r.Pid, &r.Idle
}

func (ix *Index) status() Status {
	s := Status{Files: len(ix.files), Built: time.Unix(0, ix.h.built), Size: ix.size, Trigram: ix.h.trigrams, Copies: len(ix.copies), config: ix.config}
	s.Root, s.RootBase64 = fault.PathText(ix.root)
	for _, f := range ix.files {
		s.Bytes += f.size
		switch {
		case f.flags&flagBinary != 0:
			s.Binary++
		case f.flags&flagOpaque != 0:
			s.Opaque++
		}
	}
	return s
}

// same reports whether a walked file is the indexed one: the same identity.
func same(f *fileEntry, info backend.FileInfo) bool {
	return f.size == info.Size && f.modTime == info.ModTime.UnixNano() && f.version == info.Version
}

// isStat reports whether st, of a regular file, is the identity of f:
// same as same, from a stat.
func (f *fileEntry) isStat(st *unix.Stat_t) bool {
	return st.Size == f.size && st.Mtim.Nano() == f.modTime && localfs.IsVersion(st, f.version)
}

// errNoIndex is the error of Status and Drop when no index covers a path.
var errNoIndex = errors.New("no index")

// CoveredError is Drop's error for a directory that has no index of its
// own but lies in the tree of one, which searches of it use.
type CoveredError struct{ Root string }

func (e CoveredError) Error() string { return "covered by the index of " + e.Root }

// IsNoIndex reports whether err says that no index exists.
func IsNoIndex(err error) bool { return errors.Is(err, errNoIndex) }

// StatusOf describes the index that covers the directory at the absolute
// path abs, its own or an ancestor's within roots (whose root the status
// names), all of it checked as a search would check what it reads: a
// corrupt index is UnusableError, never described as usable.
func StatusOf(abs string, roots []string) (Status, error) {
	loc, err := locateExisting(abs)
	if err != nil {
		return Status{}, err
	}
	ix, err := open(loc.file, loc.root)
	if errors.Is(err, os.ErrNotExist) {
		if ix, _ = coveringWithin(localfs.ExistingStateDir(), loc.root, roots); ix == nil {
			return Status{}, errNoIndex
		}
	} else if err != nil {
		var unusable UnusableError
		if errors.As(err, &unusable) && errors.Is(err, errOtherVersion) {
			unusable.WatcherPid, _ = otherVersionWatcher(context.Background(), loc.file, true)
			return Status{}, unusable
		}
		return Status{}, err
	}
	defer ix.Close()
	if err := ix.verify(); err != nil {
		return Status{}, UnusableError{Reason: err}
	}
	st := ix.status()
	// A watcher that answers, even one that cannot vouch for this build
	// now (it installs a build), runs: said with its pid.
	switch r, _ := askWatcher(context.Background(), ix); {
	case r.OtherMounts:
		st.WatcherPid = r.Pid
	case r.Pid != 0:
		st.watchedBy(r)
	default:
		st.WatcherEnded = lastEnd(locationOf(ix))
	}
	return st, nil
}

// ErrOtherSettings is the cause of WatchedStatus's EXISTS: a watcher
// answers for the tree under another fingerprint. Its hint names no
// command to run again, which only the caller knows.
var ErrOtherSettings = errors.New("a watcher serves the index under other settings")

// ErrWatched is the cause of the EXISTS of a watcher started where one
// already answers, whose hint (WatchedHint) names no directory: only the
// caller knows it as it spelt it.
var ErrWatched = errors.New("a watcher already serves the index")

// WatchedHint is the hint of ErrWatched's EXISTS, of the watcher pid of
// the directory dir (given as the caller spelt it, or "").
func WatchedHint(pid int, dir string) string {
	drop := "agentfs index --drop"
	if dir != "" {
		drop += " " + dir
	}
	return fmt.Sprintf("none more is needed; to stop it, run kill %d (the index stays) or %s (the index goes too)", pid, drop)
}

// WatchedStatus describes the index of the directory at abs (its own, not
// an ancestor's) when a watcher answers for it (ok). One built under
// another fingerprint than config is EXISTS: its list serves no search
// under config, and one tree has one watcher.
func WatchedStatus(ctx context.Context, abs, config string) (st Status, ok bool, err error) {
	loc, err := locateExisting(abs)
	if err != nil {
		return Status{}, false, nil
	}
	ix, err := open(loc.file, loc.root)
	if err != nil {
		// An index of another version, kept so by a watcher of that
		// version, which holds the watch lock as long as it runs: a
		// second watcher waited the whole lock timeout, told to wait
		// until the first answered, which it never does to this version.
		if !errors.Is(err, errOtherVersion) {
			return Status{}, false, nil
		}
		if pid, ok := otherVersionWatcher(ctx, loc.file, true); ok {
			return Status{}, false, otherVersionErr(pid)
		}
		return Status{}, false, nil
	}
	defer ix.Close()
	any, peer, err := askAnyWatcher(ctx, ix)
	if pid, ok := otherVersion(any, peer, err); ok {
		return Status{}, false, otherVersionErr(pid)
	}
	r, ok := trusted(any, err, ix)
	if !ok {
		if r.OtherMounts {
			// It holds the watch lock for good: a second watcher waited
			// the whole lock timeout, told to wait until the first
			// answered, which it never does here.
			return Status{}, false, fault.Errorf(fault.CodeExists, "a watcher of this tree (pid %d) runs where other mounts lie on it (another mount namespace): it answers no search from here, which proves freshness by the stat pass.", r.Pid).
				WithDetail("watcherPid", r.Pid).
				WithHint("search from its namespace, or stop it with agentfs index --drop and start the watcher here")
		}
		return Status{}, false, nil
	}
	if ix.config != config {
		return Status{}, false, fault.Errorf(fault.CodeExists, "a watcher of this tree serves an index built under other settings (--root, --deny, --no-ignore, --symlinks, or the state directories' environment).").
			WithHint("drop it with agentfs index --drop, then start this watcher again").WithCause(ErrOtherSettings)
	}
	st = ix.status()
	st.watchedBy(r)
	return st, true, nil
}

// coveringWithin is the index of dir or of its nearest ancestor that has
// one, with the prefix of dir's files in it, if its tree lies within
// roots: one whose tree reaches outside them is neither used nor told of
// (its path, its figures).
func coveringWithin(state, dir string, roots []string) (*Index, string) {
	ix, prefix := findCovering(state, dir)
	if ix == nil {
		return nil, ""
	}
	for _, r := range roots {
		if ix.root == r || strings.HasPrefix(ix.root, strings.TrimSuffix(r, "/")+"/") {
			return ix, prefix
		}
	}
	ix.Close()
	return nil, ""
}

// Drop removes the index of the directory at the absolute path abs, under
// the builders' lock, then ends its watcher if one runs (stopped); a
// directory without an index, in the tree of one within roots, is
// CoveredError.
func Drop(ctx context.Context, abs string, roots []string, timeout time.Duration) (stopped bool, err error) {
	loc, err := locateExisting(abs)
	if err != nil {
		return false, err
	}
	if err := remove(ctx, loc, roots, timeout); err != nil {
		return false, err
	}
	// Not under the builders' lock, which a watcher building again waits
	// for before it sees that the index is gone.
	return stopWatcher(ctx, loc), nil
}

// remove is Drop's removal of the index at loc.
func remove(ctx context.Context, loc location, roots []string, timeout time.Duration) error {
	unlock, err := lock(ctx, loc.lock, timeout)
	if err != nil {
		return err
	}
	defer unlock()
	os.RemoveAll(loc.building) // what a killed build left
	os.RemoveAll(loc.runs)
	removeEnd(loc) // of no index now
	if _, err := os.Lstat(loc.file); errors.Is(err, os.ErrNotExist) {
		if ix, _ := coveringWithin(localfs.ExistingStateDir(), loc.root, roots); ix != nil {
			defer ix.Close()
			return CoveredError{Root: ix.root}
		}
		return errNoIndex
	}
	// Whatever is at the index's name goes, a directory made there too.
	return os.RemoveAll(loc.file)
}

// locateMaking locates the index of abs in the state directory, made if
// need be: for a build or a watcher.
func locateMaking(abs string) (location, error) {
	dir, err := realDir(abs)
	if err != nil {
		return location{}, err
	}
	state, err := localfs.StateDir()
	if err != nil {
		return location{}, err
	}
	return locate(state, dir)
}

// locateExisting locates the index of abs in the existing state directory.
func locateExisting(abs string) (location, error) {
	dir, err := realDir(abs)
	if err != nil {
		return location{}, err
	}
	state := localfs.ExistingStateDir()
	if state == "" {
		return location{}, errNoIndex
	}
	return locate(state, dir)
}
