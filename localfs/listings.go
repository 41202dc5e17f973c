package localfs

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// The memo of listings: directories of fewer than memoMin entries are
// listed again at no great cost; at most memoKeep listings are kept, and
// memoBytes of them. One larger (the newest alone) is let go once unused
// for memoIdle: the pages of find --all still list it once (listed again
// each page, 320,000 entries took 204 s, not 1.8), and a long batch or
// mcp session does not hold it after its walks end.
const (
	memoMin   = 1024
	memoKeep  = 4
	memoBytes = 64 << 20
	memoIdle  = 30 * time.Second
)

// listings memoises the sorted listings of wide directories, so that the
// pages of a walk resumed by WalkOptions.From (find --all, ls --all) list
// such a directory once, not once a page: a page would otherwise cost as
// much as listing and sorting the whole directory. A listing is given
// back only for the stat it was kept with, of the descriptor listed.
type listings struct {
	mu sync.Mutex
	// kept are the listings, the one used last at the end.
	kept []listing
	// big is the newest listing over memoBytes, bigUsed when it was last
	// kept or given back; bigTimer lets it go once unused for memoIdle.
	big      *listing
	bigUsed  time.Time
	bigTimer *time.Timer
	// now is the clock, time.Now when nil; local tells a directory's
	// descriptor on a file system whose times witness its changes,
	// localTimes when nil.
	now   func() time.Time
	local func(fd int) bool
}

type listing struct {
	dirStamp
	entries []dirEntry
	bytes   int
}

// dirStamp is what a stat of a directory says of its entries: a listing
// is the same while the stamp is.
type dirStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func stampOf(st *unix.Stat_t) dirStamp {
	return dirStamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// proves reports whether the stamp, of a stat taken after now, proves a
// later change: its mtime and ctime are over backend.RacySlack before now, so a
// change made after the stat gives it newer times (ctime, which no call
// sets, is what catches a change followed by an mtime set back).
func (s dirStamp) proves(now time.Time) bool {
	edge := now.Add(-backend.RacySlack).UnixNano()
	return s.mtime.Nano() < edge && s.ctime.Nano() < edge
}

// clock is the time to take before the stat of a directory to be listed.
func (m *listings) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// trusts reports whether the times of the directory fd, on a file system
// that this machine alone changes and stamps, may prove its listing: on a
// network or FUSE file system they are a server's clock's, which may lag
// this one's by more than backend.RacySlack, or made up.
func (m *listings) trusts(fd int) bool {
	if m.local != nil {
		return m.local(fd)
	}
	return localTimes(fd)
}

// get is the listing kept of the directory whose stat is st, if its times
// and size are those it was kept with. The entries are shared: read only.
func (m *listings) get(st *unix.Stat_t) ([]dirEntry, bool) {
	now := stampOf(st)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, l := range m.kept {
		if l.dev != now.dev || l.ino != now.ino {
			continue
		}
		m.kept = slices.Delete(m.kept, i, i+1)
		if l.dirStamp != now {
			return nil, false // changed since: listed again
		}
		m.kept = append(m.kept, l)
		return l.entries, true
	}
	if l := m.big; l != nil && l.dev == now.dev && l.ino == now.ino {
		if l.dirStamp != now {
			m.big = nil
			return nil, false
		}
		m.bigUsed = m.clock()
		return l.entries, true
	}
	return nil, false
}

// put keeps entries, the listing of the directory whose stat st was taken
// after now and before the listing, when st proves a later change
// (dirStamp.proves).
func (m *listings) put(st *unix.Stat_t, now time.Time, entries []dirEntry) {
	stamp := stampOf(st)
	if len(entries) < memoMin || !stamp.proves(now) {
		return
	}
	l := listing{dirStamp: stamp, entries: entries, bytes: entryBytes(entries)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kept = slices.DeleteFunc(m.kept, func(k listing) bool { return k.dev == l.dev && k.ino == l.ino })
	if m.big != nil && m.big.dev == l.dev && m.big.ino == l.ino {
		m.big = nil
	}
	if l.bytes > memoBytes {
		m.big, m.bigUsed = &l, m.clock()
		if m.bigTimer == nil {
			m.bigTimer = time.AfterFunc(memoIdle, m.releaseIdle)
		} else {
			m.bigTimer.Reset(memoIdle)
		}
		return
	}
	m.kept = append(m.kept, l)
	total := 0
	for _, k := range m.kept {
		total += k.bytes
	}
	for len(m.kept) > memoKeep || total > memoBytes {
		total -= m.kept[0].bytes
		m.kept = slices.Delete(m.kept, 0, 1)
	}
}

// releaseIdle lets the listing over memoBytes go once unused for
// memoIdle, and otherwise looks again when it would be.
func (m *listings) releaseIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.big == nil {
		return
	}
	if idle := m.clock().Sub(m.bigUsed); idle < memoIdle {
		m.bigTimer.Reset(memoIdle - idle)
		return
	}
	m.big = nil
}

// entryBytes is about what entries hold in memory.
func entryBytes(entries []dirEntry) int {
	n := cap(entries) * int(unsafe.Sizeof(dirEntry{}))
	for _, e := range entries {
		n += len(e.name)
	}
	return n
}
