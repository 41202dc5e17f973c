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

	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// Sweep removes from the state directory the indexes that no search can
// use again: of a tree whose root is gone or is now another directory (a
// removed worktree, a tree made again at its path, a tree renamed, whose
// index names the old path) and those whose header or root is unreadable
// (corrupt, truncated, or not an index); with them
// go what their builds and watchers left and the lock files of trees with
// no index. Nothing else removes them, and an index is a twentieth of its
// tree. A tree whose builders' or watcher's lock is held is left, as is
// an index of another version of agentfs. It returns how many index files
// it removed.
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
	var trees []string
	for _, e := range entries {
		if t, _, ok := strings.Cut(e.Name(), "."); ok && isTreeName(t) {
			trees = append(trees, t)
		}
	}
	removed := 0
	for _, t := range slices.Compact(trees) {
		if sweepTree(dir, t) {
			removed++
		}
	}
	return removed
}

// isTreeName reports whether s is a name treeName makes.
func isTreeName(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 12 && hex.EncodeToString(b) == s
}

// sweepTree removes the files of the tree named t in dir when it holds no
// usable index of an existing tree, and reports whether an index file was
// among them. It holds the tree's builders' lock and, when there is one,
// its watch lock while it decides and removes, and unlinks the lock files
// last: lock, which every taker goes through, finds a lock file unlinked
// under it and takes the one at the name again.
func sweepTree(dir, t string) bool {
	loc := location{file: filepath.Join(dir, t+".idx"), lock: filepath.Join(dir, t+".lock"),
		building: filepath.Join(dir, t+".idx.build"), runs: filepath.Join(dir, t+".idx.runs"), watchLock: filepath.Join(dir, t+".watch")}
	unlock, err := lock(context.Background(), loc.lock, 0)
	if err != nil {
		return false // a build runs
	}
	defer unlock()
	// A watch lock is taken only where there is one: made, it would stay
	// beside every tree kept.
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
	if !useless {
		return false
	}
	if os.RemoveAll(loc.file) != nil {
		return false
	}
	os.Remove(loc.building) // what a killed build left
	os.Remove(loc.runs)
	if watchLocked {
		os.Remove(socketName(loc.file)) // a dead watcher's
		os.Remove(loc.watchLock)
	}
	os.Remove(loc.lock)
	return hadIndex
}

// unusable reports whether the index file at name, of the tree named t,
// can serve no search again (useless), and whether there is one (has): a
// missing one is useless, so that its tree's leftovers go; one that
// cannot be read now (EACCES, EMFILE) is kept.
func unusable(name, t string) (useless, has bool) {
	root, err := rootOf(name)
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
	switch err := unix.Stat(root, &st); err {
	case nil:
		return st.Mode&unix.S_IFMT != unix.S_IFDIR || treeName(&st) != t, true
	case unix.ENOENT, unix.ENOTDIR:
		return true, true
	}
	return false, true
}

// rootOf reads the root recorded in the index file at name, from its
// header and the start of its meta, unchecked by the meta's CRC: opened
// in full, the index of the corpus (46,000 files) took 3 to 26 ms
// to sweep, this 0.03 to 0.3 ms. A root damaged so names no tree of this
// index: the index goes, which a damaged index may.
func rootOf(name string) (string, error) {
	f, st, err := openFile(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, headerSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		return "", err
	}
	h, err := decodeHeader(b, int(st.Size))
	if err != nil {
		return "", UnusableError{err}
	}
	b = make([]byte, min(h.metaLen, binary.MaxVarintLen64+unix.PathMax))
	if _, err := f.ReadAt(b, int64(h.metaOff)); err != nil {
		return "", err
	}
	r := &metaReader{s: string(b)}
	root := r.string()
	if r.err != nil {
		return "", UnusableError{errCorrupt}
	}
	return root, nil
}
