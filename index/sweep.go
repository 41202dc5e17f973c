package index

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// Sweep removes from the state directory the indexes that no search can
// use again, which nothing else removes (an index is a twentieth of its
// tree): one whose root is gone or is now another directory or a file (a
// removed worktree, a tree made again at its path, a tree renamed, whose
// index names the old path) on the file system the build found it on, and
// one whose header or root is unreadable (corrupt, truncated, not an
// index). With each go what its builds and watcher left, as do the lock
// files of a tree without an index. It keeps, for awayKept after its
// build, an index whose root is gone or replaced where the directory now
// at its path, or the nearest one above it, is on another device than the
// build found: its file system may be away (a disk not mounted) and the
// index of use once it is back; past that, or if the device's number
// changed at a new mount (tmpfs, NFS), it goes. It keeps an index of
// another version of agentfs, and a tree whose builders' or watcher's lock
// is held. It returns how many index files it removed, within sweepWait:
// a root on a hung network file system leaves the rest of the sweep to
// the background, never the caller waiting.
func Sweep() int {
	state := localfs.ExistingStateDir()
	if state == "" {
		return 0
	}
	dir := filepath.Join(state, "index")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var trees []string // sorted as ReadDir sorts: a tree's files are adjacent
	for _, e := range entries {
		if t, _, ok := strings.Cut(e.Name(), "."); ok && isTreeName(t) {
			trees = append(trees, t)
		}
	}
	var removed atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, t := range slices.Compact(trees) {
			if sweepTree(dir, t) {
				removed.Add(1)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(sweepWait):
	}
	return int(removed.Load())
}

// sweepWait bounds how long Sweep keeps its caller; rootStat looks up an
// index's root (a test plays a hung mount with it).
var (
	sweepWait = 2 * time.Second
	rootStat  = unix.Stat
)

// awayKept is how long after its build an index whose file system may be
// away is kept.
const awayKept = 30 * 24 * time.Hour

// isTreeName reports whether s is a name treeName makes.
func isTreeName(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 12 && hex.EncodeToString(b) == s
}

// sweepTree removes the files of the tree named t in dir when it holds no
// usable index of an existing tree, and reports whether an index file was
// among them. A tree whose index is usable is decided without a lock: a
// build or watcher that takes its lock with no wait (--lock-timeout 0)
// never finds it held by a sweep. Any other is decided again under the
// tree's builders' lock and, when there is one, its watch lock, which it
// holds while it removes; it unlinks the lock files last: LockFile, which
// every taker goes through, finds a lock file unlinked under it and takes
// the one at the name again.
func sweepTree(dir, t string) bool {
	loc := locationIn(dir, t)
	if useless, _ := unusable(loc.file, t); !useless {
		return false
	}
	unlock, err := lock(context.Background(), loc.lock, 0)
	if err != nil {
		return false // a build runs
	}
	defer unlock()
	// A watch lock is taken only where there is one: made, it would stay.
	_, err = os.Lstat(loc.watchLock)
	watchLocked := err == nil
	switch {
	case watchLocked:
		unlockWatch, err := lock(context.Background(), loc.watchLock, 0)
		if err != nil {
			return false // a watcher runs
		}
		defer unlockWatch()
	case !errors.Is(err, os.ErrNotExist):
		return false
	}
	useless, hadIndex := unusable(loc.file, t)
	if !useless || os.RemoveAll(loc.file) != nil {
		return false
	}
	os.RemoveAll(loc.building) // what a killed build left
	os.RemoveAll(loc.runs)
	removeEnd(loc)
	// A watcher makes its socket while it holds its watch lock: with that
	// lock ours, or no watch lock file, the socket is a dead watcher's.
	os.Remove(socketName(loc.file))
	if watchLocked {
		os.Remove(loc.watchLock)
	}
	os.Remove(loc.lock)
	return hadIndex
}

// unusable reports whether the index file at name, of the tree named t,
// can serve no search again (useless), and whether there is one (has): a
// missing one is useless, so that its tree's leftovers go; one that
// cannot be read now (EACCES, EMFILE), or whose root cannot be looked up,
// is kept.
func unusable(name, t string) (useless, has bool) {
	root, h, err := rootOf(name)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, false
	case errors.Is(err, errOtherVersion):
		return false, true
	case errors.As(err, new(UnusableError)):
		return true, true
	case err != nil:
		return false, true
	}
	var st unix.Stat_t
	switch err := rootStat(root, &st); err {
	case nil:
		if st.Mode&unix.S_IFMT == unix.S_IFDIR && treeName(&st) == t {
			return false, true
		}
	case unix.ENOENT, unix.ENOTDIR:
		if !nearestExisting(root, &st) {
			return false, true
		}
	default:
		return false, true
	}
	away := h.hasRootDev && h.rootDev != uint64(st.Dev) && time.Since(time.Unix(0, h.built)) < awayKept
	return !away, true
}

// nearestExisting stats into st the nearest ancestor of path that exists,
// and reports whether it found one.
func nearestExisting(path string, st *unix.Stat_t) bool {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		switch err := rootStat(dir, st); err {
		case nil:
			return true
		case unix.ENOENT, unix.ENOTDIR:
			if dir == "/" || dir == "." {
				return false
			}
		default:
			return false
		}
	}
}

// rootOf reads the root recorded in the index file at name, and the
// file's header, from the header and the start of its meta, unchecked by
// the meta's CRC: opened in full, the index of the corpus (46,000
// files) took 3 to 26 ms to sweep, this 0.03 to 0.3 ms. A root damaged so
// names no tree of this index: the index goes, which a damaged index may.
func rootOf(name string) (string, header, error) {
	f, st, err := openFile(name)
	if err != nil {
		return "", header{}, err
	}
	defer f.Close()
	b := make([]byte, headerSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		return "", header{}, err
	}
	h, err := decodeHeader(b, int(st.Size))
	if err != nil {
		return "", header{}, UnusableError{Reason: err}
	}
	b = make([]byte, min(h.metaLen, binary.MaxVarintLen64+unix.PathMax))
	if _, err := f.ReadAt(b, int64(h.metaOff)); err != nil {
		return "", header{}, err
	}
	r := &metaReader{s: string(b)}
	root := r.string()
	if r.err != nil {
		return "", header{}, UnusableError{Reason: errCorrupt}
	}
	return root, h, nil
}
