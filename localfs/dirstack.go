package localfs

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirStack is the chain of directories from the top of a walk (or of a tree
// being removed) down to the one being listed, with a bounded number of
// them open, so that a tree of any depth is walked within the open-file
// limit. Past the bound the shallowest open directories are closed, never
// the first, from which the others are reached again, nor the last, being
// listed. A closed directory is opened again when the walk comes back to
// it, from its nearest open ancestor one component at a time with
// O_NOFOLLOW, as it was first opened, and must be the very directory it was
// (device and inode): every open stays relative to a descriptor held from
// the top, never a path through a link. Reopening keeps the directories
// nearest the one needed open, for the way back up, and spaces the rest of
// the free descriptors along the way as checkpoints, so that the next
// reopen starts near; a chain of any depth costs a few opens per level in
// all.
type dirStack struct {
	frames []dirFrame
	open   int // frames holding a descriptor
	max    int
	// low is where to look for the shallowest open frame but the first:
	// frames 1 to low-1 are all closed.
	low int
	// lost is the first frame that could not be opened again (moved or
	// replaced since): it and those below it are gone for the walk.
	lost int
}

type dirFrame struct {
	name string // in the parent directory
	dir  *dirRef
	dev  uint64
	ino  uint64
}

// dirRef is an open directory, closed when its frame lets it go and every
// file opener handed out for it (WalkEntry.Later) has run.
type dirRef struct {
	fd   int
	refs atomic.Int32
}

func newDirRef(fd int) *dirRef {
	d := &dirRef{fd: fd}
	d.refs.Store(1)
	return d
}

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// errMoved says that a directory of the chain is no longer where the walk
// found it (moved, removed or replaced), so the walk cannot go back to it.
var errMoved = errors.New("a directory was moved or replaced during the walk")

// maxDirFDs bounds the descriptors a walk holds for directories.
const maxDirFDs = 256

// dirFDBudget is how many directories a walk keeps open: maxDirFDs, or a
// quarter of the open-file limit when that is lower, leaving the rest to
// the files being read and to the rest of the process.
func dirFDBudget() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur/4 >= maxDirFDs {
		return maxDirFDs
	}
	return max(4, int(lim.Cur/4))
}

// newDirStack starts a chain at the open directory fd, which it owns.
func newDirStack(fd int, st *unix.Stat_t) *dirStack {
	s := &dirStack{max: dirFDBudget(), low: 1, lost: math.MaxInt}
	s.frames = append(s.frames, dirFrame{dir: newDirRef(fd), dev: uint64(st.Dev), ino: st.Ino})
	s.open = 1
	return s
}

// push adds the directory name of the top frame, opened as fd (which the
// stack now owns) with the identity st.
func (s *dirStack) push(name string, fd int, st *unix.Stat_t) {
	s.frames = append(s.frames, dirFrame{name: name, dir: newDirRef(fd), dev: uint64(st.Dev), ino: st.Ino})
	s.open++
	for s.open > s.max && s.closeShallowest() {
	}
}

// closeShallowest closes the shallowest open frame below the top one but
// the first, and reports whether there was one.
func (s *dirStack) closeShallowest() bool {
	top := len(s.frames) - 1
	for s.low < top && s.frames[s.low].dir == nil {
		s.low++
	}
	if s.low >= top {
		return false
	}
	s.frames[s.low].dir.release()
	s.frames[s.low].dir = nil
	s.open--
	s.low++
	return true
}

// pop leaves the top frame.
func (s *dirStack) pop() {
	top := len(s.frames) - 1
	if d := s.frames[top].dir; d != nil {
		d.release()
		s.open--
	}
	s.frames[top] = dirFrame{}
	s.frames = s.frames[:top]
	if s.lost >= top {
		s.lost = math.MaxInt
	}
}

// close releases every frame.
func (s *dirStack) close() {
	for len(s.frames) > 0 {
		s.pop()
	}
}

// devs are the devices of the directory at the top and of its parent (the
// top's own for the first directory).
func (s *dirStack) devs() (top, parent uint64) {
	i := len(s.frames) - 1
	return s.frames[i].dev, s.frames[max(0, i-1)].dev
}

// top returns the top frame's directory, opening it again if it was closed.
// The error is errMoved when that directory, or one on the way to it, is
// no longer what the walk found there, or the open's.
func (s *dirStack) top() (*dirRef, error) {
	i := len(s.frames) - 1
	if d := s.frames[i].dir; d != nil {
		return d, nil
	}
	if i >= s.lost {
		return nil, errMoved
	}
	a := i - 1
	for s.frames[a].dir == nil {
		a--
	}
	// Keep the directories nearest i (half the free descriptors), and
	// checkpoints spaced evenly between a and them (the other half).
	free := max(1, s.max-s.open)
	window := max(1, free/2)
	from := max(a+1, i-window+1)
	step := (from-1-a)/(free-window+1) + 1
	fd := s.frames[a].dir.fd
	for j := a + 1; j <= i; j++ {
		next, err := s.reopen(fd, j)
		if s.frames[j-1].dir == nil {
			unix.Close(fd) // a step on the way, not kept (frame a is open)
		}
		if err != nil {
			if errors.Is(err, errMoved) {
				s.lost = j
			}
			return nil, err
		}
		if j >= from || (j-a)%step == 0 {
			s.frames[j].dir = newDirRef(next)
			s.open++
			s.low = min(s.low, j)
		}
		fd = next
	}
	return s.frames[i].dir, nil
}

// openDir opens the directory name of dfd without following a link, and
// gives its identity.
func openDir(dfd int, name string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Openat(dfd, name, dirFlags, 0)
	if err != nil {
		return -1, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// reopen opens the directory of frame j relative to its parent's
// descriptor parent, and checks that it is the one the walk found.
func (s *dirStack) reopen(parent, j int) (int, error) {
	f := &s.frames[j]
	fd, st, err := openDir(parent, f.name)
	if err != nil {
		if goneErr(err) {
			return -1, errMoved
		}
		return -1, err
	}
	if uint64(st.Dev) != f.dev || st.Ino != f.ino {
		unix.Close(fd)
		return -1, errMoved
	}
	return fd, nil
}

// path is the chain's path below its first frame, for messages.
func (s *dirStack) path() string {
	names := make([]string, 0, len(s.frames)-1)
	for _, f := range s.frames[1:] {
		names = append(names, f.name)
	}
	return strings.Join(names, "/")
}

// goneErr reports an error of opening or listing an entry that a walk met
// which means that the entry is not there to walk, as ripgrep takes it:
// gone since the listing (ENOENT), swapped for a link or a file (ELOOP,
// FreeBSD's EMLINK, ENOTDIR), or unreadable (EACCES, EPERM). Any other (EMFILE, ENFILE,
// ENOMEM, EIO...) must fail the walk: skipping would turn it into a result
// that silently misses part of the tree.
func goneErr(err error) bool {
	for _, e := range [...]error{unix.ENOENT, unix.ELOOP, unix.EMLINK, unix.ENOTDIR, unix.EACCES, unix.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
