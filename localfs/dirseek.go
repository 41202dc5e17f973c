package localfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A journal records each directory by its real path and its identity. A
// plain tool (mv, git, a file manager) may rename or move the directory,
// or one above it, between a crash and the next call: the recorded path
// then leads nowhere, or to another directory, a link. The recovery looks
// for the recorded identity near its path (seekDir): undone where the
// directory is now, a torn commit was dropped as if removed.

// Bounds of one search for a directory (seekDir): it reads at most
// seekEntries directory entries (each directory opened counts as one)
// and runs at most seekTime, so a recovery never crawls a home directory
// or hangs on a huge one. A search cut by them takes a missing directory
// for removed, as before there was a search: kept waiting, the journal of
// one a user deleted in a large directory was sought again by every call
// for good. A variable for the tests.
var seekEntries = 16384

const seekTime = time.Second

// dirVerdict is what a recovery makes of a directory not at its recorded
// path.
type dirVerdict int

const (
	// dirWait: it may be somewhere not looked at (a file system not
	// mounted, a directory that could not be opened or listed): the
	// journal waits for a later call.
	dirWait dirVerdict = iota
	// dirRemoved: not found, and removed on its file system as far as can
	// be told: nothing to undo there.
	dirRemoved
	// dirFound: found, at path.
	dirFound
)

// located is where a journal directory was sought, with its verdict.
type located struct {
	verdict dirVerdict
	path    string
}

// dirsFound memoizes, in one recovery, where each directory of a journal
// not at its recorded path is: each is sought once, not once an entry.
// Its searches share the directories they list: a journal's directories
// are mostly sought in the same ones, and a patch over 200 directories
// whose project, in a directory of 20000, was deleted listed that one 200
// times (1.3 s).
type dirsFound struct {
	at     map[string]located
	listed map[string]subdirList
	reads  int // directories listed, for the tests
	// mounts are the mount points (mountPoints), never opened but those
	// of a bind mount of the file system searched: opening one enters its
	// file system, triggers an automount, or waits with no bound on a
	// network file system that does not answer.
	mounts map[string]string
}

// subdirList is the directories in a directory, whole or cut short by a
// bound after read entries, or by a listing that failed (EIO).
type subdirList struct {
	names         []string
	whole, failed bool
	read          int
}

// locate is where e's directory is, its recorded path having failed to
// open with openErr (nil: it opened another directory).
func (m *dirsFound) locate(e *journalEntry, openErr error) located {
	key := e.Dir + "\x00" + e.DirIdentity
	if l, ok := m.at[key]; ok {
		return l
	}
	if m.at == nil {
		m.at, m.listed, m.mounts = map[string]located{}, map[string]subdirList{}, mountPoints()
	}
	l := seekDir(e.Dir, e.DirIdentity, e.DirFS, errors.Is(openErr, unix.ENOENT), m)
	m.at[key] = l
	return l
}

// openJournalDir opens the directory at dir, a real path a journal
// recorded, without following a final link.
func openJournalDir(dir string) (int, error) {
	return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// isJournalDir reports whether fd is e's directory, given e's identities
// on the new device number if its file system has another since
// (renumbered).
func (e *journalEntry) isJournalDir(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && (identity(&st) == e.DirIdentity || e.renumbered(fd, &st))
}

// seeker is one search for the directory of identity id on the file
// system fs, at depth len(names) (its recorded path's names).
type seeker struct {
	names    []string
	dev, ino string // id's
	fs       string
	onDev    uint64 // the device searched, the one of where it starts
	left     int
	deadline time.Time
	cut      bool // a bound was hit, or blind
	blind    bool // a directory could not be looked at (EMFILE, EIO)
	seen     *dirsFound
	found    string
}

// seekDir looks for the directory of identity id and file system fs,
// recorded at the real path dir, which does not lead to it (missing says
// the path does not exist). The search starts at the nearest ancestor of
// dir its names lead to through real directories on the recorded file
// system, and goes down to dir's depth through real directories (no link
// followed) of that one device, the recorded name first at each level and
// then the other directories there: first changing one name, then more.
// One directory of the path renamed in the directory it was in (its old
// name left free or a link there, or another directory at the last
// level) is always found, unless that directory is too big for the
// bounds; more renames, a move elsewhere at the same depth or another
// directory at the old name higher up, while the bounds allow. Only the
// directory of that identity is accepted. Not found, a missing dir is
// removed when every directory the search met on the recorded file system
// could be looked at, within the bounds or not; anything else waits, as a
// file system not mounted leaves its mount point.
func seekDir(dir, id, fs string, missing bool, seen *dirsFound) located {
	dev, ino, _ := strings.Cut(id, ":")
	s := &seeker{dev: dev, ino: ino, fs: fs, left: seekEntries, deadline: time.Now().Add(seekTime), seen: seen}
	if rel := strings.TrimPrefix(filepath.Clean(dir), "/"); rel != "" {
		s.names = strings.Split(rel, "/")
	}
	if len(s.names) == 0 {
		return located{verdict: dirWait}
	}
	// The chain of ancestors dir's names lead to, from "/".
	var chain []int
	defer func() {
		for _, fd := range chain {
			unix.Close(fd)
		}
	}()
	root, err := openJournalDir("/")
	if err != nil {
		return located{verdict: dirWait}
	}
	chain = append(chain, root)
	for _, name := range s.names[:len(s.names)-1] {
		fd, err := unix.Openat(chain[len(chain)-1], name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if !notThere(err) {
				return located{verdict: dirWait} // EMFILE, EIO: where it starts unknown
			}
			break
		}
		chain = append(chain, fd)
	}
	start := len(chain) - 1
	var st unix.Stat_t
	if unix.Fstat(chain[start], &st) != nil || !s.onRecordedFS(chain[start], &st) {
		return located{verdict: dirWait} // below a mount point, its file system not mounted
	}
	s.onDev = uint64(st.Dev)
	for subs := 1; subs <= len(s.names)-start && !s.spent(); subs++ {
		if s.seek(chain[start], start, subs) {
			return located{verdict: dirFound, path: s.found}
		}
	}
	for from := start - 1; from >= 0 && !s.spent(); from-- {
		if unix.Fstat(chain[from], &st) != nil || uint64(st.Dev) != s.onDev {
			break
		}
		for subs := 1; subs <= 2 && !s.spent(); subs++ {
			if s.seek(chain[from], from, subs) {
				return located{verdict: dirFound, path: s.found}
			}
		}
	}
	if missing && !s.blind {
		return located{verdict: dirRemoved}
	}
	return located{verdict: dirWait}
}

// onRecordedFS reports whether st, of the directory fd, is on the
// recorded file system: its device, or its fsID (renumbered since).
func (s *seeker) onRecordedFS(fd int, st *unix.Stat_t) bool {
	return strconv.FormatUint(uint64(st.Dev), 10) == s.dev ||
		s.fs != "" && fsID(func(f *unix.Statfs_t) error { return unix.Fstatfs(fd, f) }) == s.fs
}

// notLooked notes a directory the search could not look at (EMFILE,
// EIO): it may be there, so its absence proves no removal.
func (s *seeker) notLooked() { s.blind, s.cut = true, true }

// spent reports whether a bound was hit, and notes it.
func (s *seeker) spent() bool {
	if s.left <= 0 || time.Now().After(s.deadline) {
		s.cut = true
	}
	return s.cut
}

// seek looks below fd, the directory at level (its path the first level
// names, or as found), changing at most subs names, and sets found.
func (s *seeker) seek(fd, level, subs int) bool {
	return s.seekAt(fd, "/"+filepath.Join(s.names[:level]...), level, subs)
}

func (s *seeker) seekAt(fd int, path string, level, subs int) bool {
	if level == len(s.names) {
		return false
	}
	name := s.names[level]
	if s.try(fd, filepath.Join(path, name), name, level, subs) {
		return true
	}
	if subs == 0 {
		return false
	}
	for _, other := range s.subdirs(fd) {
		if s.cut {
			break // not a path joined and a clock read a name left
		}
		if other != name && s.try(fd, filepath.Join(path, other), other, level, subs-1) {
			return true
		}
	}
	return false
}

// try looks at the directory name in fd, at path and level+1: the one
// sought at the recorded depth, or one to look below.
func (s *seeker) try(fd int, path, name string, level, subs int) bool {
	if s.spent() {
		return false
	}
	s.left--
	if dev, ok := s.seen.mounts[path]; ok && dev != devName(s.onDev) {
		return false // another file system mounted there
	}
	child, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if !notThere(err) {
			s.notLooked() // EMFILE, EIO
		}
		return false
	}
	defer unix.Close(child)
	var st unix.Stat_t
	if err := unix.Fstat(child, &st); err != nil {
		s.notLooked()
		return false
	}
	if uint64(st.Dev) != s.onDev {
		return false // another file system mounted there
	}
	if level+1 < len(s.names) {
		return s.seekAt(child, path, level+1, subs)
	}
	if strconv.FormatUint(st.Ino, 10) == s.ino && s.onRecordedFS(child, &st) {
		s.found = path
		return true
	}
	return false
}

// subdirs are the names of the directories in fd, within the bounds,
// listed once a recovery (seen): a listing cut short by another search's
// bounds cuts this one too, unless this one has more entries left to read
// (the other ran out of them on its way there). A directory that cannot
// be listed (EMFILE) cuts the search: not all was looked at.
func (s *seeker) subdirs(fd int) []string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		s.notLooked()
		return nil
	}
	key := identity(&st)
	if l, ok := s.seen.listed[key]; ok && (l.whole || l.failed || s.left <= l.read) {
		if l.failed {
			s.notLooked()
		}
		if !l.whole {
			s.cut = true
		}
		return l.names
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		s.notLooked()
		return nil
	}
	d := os.NewFile(uintptr(dup), "")
	defer d.Close()
	unix.Seek(dup, 0, 0) // fd may have been listed through another dup
	s.seen.reads++
	var names []string
	whole, failed, read := false, false, 0
	for !s.spent() {
		batch, err := d.ReadDir(256)
		s.left -= len(batch)
		read += len(batch)
		for _, e := range batch {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		if err != nil {
			whole, failed = err == io.EOF, err != io.EOF
			break
		}
	}
	if failed {
		s.notLooked() // EIO
	}
	if !whole {
		s.cut = true
	}
	s.seen.listed[key] = subdirList{names: names, whole: whole, failed: failed, read: read}
	return names
}

// movedTo is where e's directory is found when its recorded path no
// longer leads to it, "" when it does or it is not found.
func (m *dirsFound) movedTo(e *journalEntry) string {
	if e.DirIdentity == "" {
		return ""
	}
	fd, err := openJournalDir(e.Dir)
	if err == nil {
		c := *e // renumbered rewrites the identities of the one it checks
		here := c.isJournalDir(fd)
		unix.Close(fd)
		if here {
			return ""
		}
	}
	return m.locate(e, err).path
}

// notThere reports whether err, of an open of a directory in a search,
// says there is no directory to search there (none, a file, a link:
// ELOOP, FreeBSD's EMLINK), or one the recovery could not act in either
// (EACCES).
func notThere(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) ||
		errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}
