package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// The masks of the watches: a directory's changes of its entries and of
// itself; a file's writes and attribute changes through any of its names
// (a hard link made elsewhere, a bind mount), which a directory's watch
// does not see.
const (
	dirEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MODIFY |
		unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW
	fileEvents = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
		unix.IN_DONT_FOLLOW
)

// watchTarget is what a watch watches: paths relative to the root (two
// or more for a file with several names in the tree).
type watchTarget struct {
	rels []string
	dir  bool
}

// changeSet is what happened since a build: the directories to check,
// the trees to check whole, and whether events were lost.
type changeSet struct {
	dirs, trees map[string]bool
	// always are the directories whose events cannot be trusted (a
	// network file system, a watch refused): checked by every search.
	always map[string]bool
	lost   bool
	// rules is set when the build could not prove an ignore file's rules
	// (changed as it was walked, or since): searches walk, and the
	// watcher builds again.
	rules bool
	// racy is set when the build holds a file changed too shortly before
	// it to trust (flagRacy), which every search reads and no event will
	// name once it is quiet: the watcher builds again, which trusts it.
	racy bool
}

func newChangeSet() *changeSet {
	return &changeSet{dirs: map[string]bool{}, trees: map[string]bool{}, always: map[string]bool{}}
}

// size counts what an answer names.
func (c *changeSet) size() int {
	n := c.pending()
	for d := range c.always {
		if !c.dirs[d] { // changed too (an event, pollAlways): counted once
			n++
		}
	}
	return n
}

// pending counts what a build would clear: all but the directories
// always checked, which no build makes fewer.
func (c *changeSet) pending() int {
	n := len(c.dirs) + len(c.trees)
	if c.rules {
		n++
	}
	if c.racy {
		n++
	}
	return n
}

// apply records an event of mask on the watch of t, about its entry name
// when t is a directory.
func (c *changeSet) apply(t watchTarget, mask uint32, name string) {
	for _, rel := range t.rels {
		switch {
		case !t.dir:
			c.dirs[parent(rel)] = true
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
			if rel == "" {
				c.lost = true // the root itself went: nothing holds
				continue
			}
			c.trees[rel] = true
			c.dirs[parent(rel)] = true
		default:
			c.dirs[rel] = true
			if mask&unix.IN_ISDIR != 0 && name != "" {
				// A directory made, removed, moved in or out, or changed:
				// all the index holds below it is checked.
				c.trees[path.Join(rel, name)] = true
			}
		}
	}
}

// inotifyAddWatch adds a watch (tests refuse some, as past
// max_user_watches).
var inotifyAddWatch = unix.InotifyAddWatch

// watcher keeps the index of one tree proven fresh.
type watcher struct {
	w    backend.Walker
	path string
	abs  string
	opts WatchOptions
	loc  location
	fd   int // inotify, non-blocking

	// mu guards what follows, and every read of fd: an event read is
	// applied before mu is released, so that a search answered under mu
	// has every event queued before it.
	mu sync.Mutex
	ix *Index
	// mounts are those on the tree before ix was built: a search that
	// sees others is not answered.
	mounts string
	// installing is set while refresh watches a new build (a watch and a
	// stat per file, under mu): a search is answered at once (not OK),
	// not kept waiting.
	installing atomic.Bool
	watches    map[int32]watchTarget
	changes    *changeSet
	// polled are the directories no event covers, which loop looks at
	// (it alone: no lock).
	polled []polledDir
	// nextPoll is when pollAlways looks again.
	nextPoll time.Time
	last     time.Time // of the latest event
	events   []byte    // drain's buffer
	// buildTook is how long the latest build took (refresh), for maxPendingBuilds.
	buildTook time.Duration
	kick      chan struct{}
	// asked is when a search last asked (UnixNano), for Idle.
	asked atomic.Int64
	// dropped is told that the index file is gone (Drop's stop request).
	dropped chan struct{}
	// lockID is the identity of the watch lock file this watcher holds.
	lockID [2]uint64
}

// watchLockWaitHook, when set (by tests), runs as a watcher starts
// waiting for the tree's watch lock.
var watchLockWaitHook func()

// watchLockPoll is how often a watcher waiting for the tree's watch lock
// looks again.
const watchLockPoll = 50 * time.Millisecond

// awaitWatchLock waits, up to opts.LockTimeout, for the watch lock of the
// tree at abs, which another watcher holds: one that answers searches is
// EXISTS at once; one still building, or ending (it lets go within its
// read loop's 200 ms), is waited for as a lock, then LOCK_TIMEOUT. Tried
// once, a watcher started as another ended was EXISTS, "already
// running", with none running, and two --detach at once gave EXISTS.
func awaitWatchLock(ctx context.Context, loc location, abs string, opts WatchOptions) (func(), error) {
	deadline := time.Now().Add(opts.LockTimeout)
	if watchLockWaitHook != nil {
		watchLockWaitHook()
	}
	for {
		if st, ok, err := WatchedStatus(ctx, abs, opts.Config); err != nil {
			return nil, err // one answers, under other settings
		} else if ok {
			return nil, fault.Errorf(fault.CodeExists, "a watcher of this tree (pid %d) is already running: it keeps the index fresh for every search.", st.WatcherPid).
				WithDetail("watcherPid", st.WatcherPid).
				WithHint("%s", WatchedHint(st.WatcherPid, "")).WithCause(ErrWatched)
		}
		unlock, err := lock(ctx, loc.watchLock, max(0, min(watchLockPoll, time.Until(deadline))))
		if !errors.Is(err, ErrLocked) {
			return unlock, err
		}
		if !time.Now().Before(deadline) {
			return nil, fault.Errorf(fault.CodeLockTimeout, "another watcher of this tree held its lock for %v, building its index or ending.", localfs.LockWaited(opts.LockTimeout)).
				WithHint("run again once it answers (agentfs index --status says watched), or raise --lock-timeout")
		}
	}
}

// Watch builds or updates the index of the directory path (at the absolute
// path abs) as Build does, then keeps it proven fresh until ctx ends: it
// answers the searches' questions (see askWatcher) and builds again once
// changes have been quiet for opts.Quiet, or at once when there are too
// many to name or events were lost. One watcher per tree. One that
// started sweeps the state directory as it ends, its locks let go: a
// watcher ends when its tree is removed or replaced, whose index then
// serves no search again.
func Watch(ctx context.Context, w backend.Walker, path, abs string, opts WatchOptions) (err error) {
	if opts.Quiet <= 0 {
		opts.Quiet = 10 * time.Second
	}
	loc, err := locateMaking(abs)
	if err != nil {
		return err
	}
	// The watcher's own lock, held while it runs: a second is refused.
	unlock, err := lock(ctx, loc.watchLock, 0)
	if errors.Is(err, ErrLocked) {
		unlock, err = awaitWatchLock(ctx, loc, abs, opts)
	}
	if err != nil {
		return err
	}
	defer Sweep() // runs after the unlock deferred below
	defer unlock()
	var lst unix.Stat_t
	if err := unix.Stat(loc.watchLock, &lst); err != nil {
		return err
	}
	lockID := [2]uint64{uint64(lst.Dev), lst.Ino}
	// The record of the last watcher's end goes: this one runs. Its own
	// is written, under the lock, as it ends, whatever ends it.
	reserveEnd(loc)
	defer func() {
		recordEnd(loc, lockID, opts, err, ctx.Err() != nil)
		if errors.Is(err, errIdle) {
			err = nil
		}
	}()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if errors.Is(err, unix.EMFILE) {
		return fmt.Errorf("inotify: %w (%w)", ErrWatchInstances, err)
	}
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	defer unix.Close(fd)
	x := &watcher{w: w, path: path, abs: abs, opts: opts, loc: loc, fd: fd, watches: map[int32]watchTarget{},
		changes: newChangeSet(), events: make([]byte, 64<<10), kick: make(chan struct{}, 1), dropped: make(chan struct{}, 1),
		lockID: lockID}
	defer func() {
		if x.ix != nil {
			x.ix.Close()
		}
	}()
	built, err := x.refresh(ctx)
	if err != nil {
		return err
	}
	sock := socketName(loc.file)
	os.Remove(sock) // a dead watcher's: ours under the lock
	addr, done, err := socketAddr(sock)
	if err != nil {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	done()
	if err != nil {
		return fmt.Errorf("the watcher's socket: %w", err)
	}
	// Removed below by its own name: a /proc/self/fd address is stale
	// once done has closed that descriptor.
	ln.SetUnlinkOnClose(false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		ln.Close() // ends serve's Accept
		wg.Wait()
		os.Remove(sock)
	}()
	wg.Go(func() { x.serve(ln) })
	wg.Go(func() { x.read(stop) })
	x.asked.Store(time.Now().UnixNano())
	if ctx.Err() != nil {
		return nil // ended before it answered: not said to be ready
	}
	if opts.Ready != nil {
		x.mu.Lock()
		st := x.ix.status()
		x.mu.Unlock()
		// What the first build read and reused, as index without --watch
		// says (the index's own description has neither).
		st.Reused, st.Read = built.Reused, built.Read
		st.watchedBy(watchReply{Pid: os.Getpid(), Idle: opts.Idle.Seconds()})
		opts.Ready(st)
	}
	return x.loop(ctx)
}

// loop builds again when asked to (kick) or when changes have been quiet,
// or have waited for that too long (maxPending), and ends when the index
// is dropped or, with Idle, no search asks.
func (x *watcher) loop(ctx context.Context) error {
	tick := time.NewTicker(x.opts.Quiet / 4)
	defer tick.Stop()
	var idle <-chan time.Time
	if x.opts.Idle > 0 {
		idle = time.After(x.opts.Idle)
	}
	// pending is when the loop first saw changes since the build
	// installed, zero while it has seen none.
	var pending time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-x.dropped:
			return errDropped
		case <-idle:
			if left := x.opts.Idle - time.Since(time.Unix(0, x.asked.Load())); left > 0 {
				idle = time.After(left)
				continue
			}
			return errIdle
		case <-x.kick:
		case <-tick.C:
			if _, err := os.Stat(x.loc.file); err != nil {
				return errDropped
			}
			if !x.holdsItsLock() {
				return errStateReplaced
			}
			x.pollAlways()
			x.mu.Lock()
			x.pollRules()
			changed := x.changes.pending() > 0
			quiet := time.Since(x.last) >= x.opts.Quiet
			x.mu.Unlock()
			if changed && pending.IsZero() {
				pending = time.Now()
			}
			if !changed || !quiet && time.Since(pending) < max(maxPending*x.opts.Quiet, maxPendingBuilds*x.buildTook) {
				continue
			}
		}
		if _, err := os.Stat(x.loc.file); err != nil {
			return errDropped
		}
		if _, err := x.refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		pending = time.Time{}
	}
}

// maxPending bounds, in Quiet spells, how long changes wait for a quiet
// one: a file written without a pause of Quiet (a log, even one the rules
// ignore, in an indexed directory) kept the watcher from ever building
// again, and once more directories had changed than a search lists again
// (maxRelisted), every search walked the whole tree for as long as it
// was written. Nor less than maxPendingBuilds times what the last build
// took: a tree whose builds take long is built again less often, so that
// a log written for hours costs at most a twentieth of a core.
const (
	maxPending       = 6
	maxPendingBuilds = 20
)

// holdsItsLock reports whether the watch lock file this watcher holds is
// still the one at its path. With the state directory removed, an index
// built again there within a tick was taken for its own: it went on
// unseen, its socket gone, and a second watcher could start.
func (x *watcher) holdsItsLock() bool { return holdsLock(x.loc, x.lockID) }

// holdsLock reports whether the watch lock file at loc is the one of
// identity id.
func holdsLock(loc location, id [2]uint64) bool {
	var st unix.Stat_t
	return unix.Stat(loc.watchLock, &st) == nil && [2]uint64{uint64(st.Dev), st.Ino} == id
}

// errIdle is loop's end when no search asked for WatchOptions.Idle: no
// failure, Watch returns nil.
var errIdle = errors.New("idle")

// reserveEnd writes, at a watcher's start, the record of its end that
// says it ended without a word (no At), padded to its size: the end
// overwrites it, and a watcher killed leaves it. It replaces the last
// watcher's.
func reserveEnd(loc location) {
	if writeEnd(loc.ended+".tmp", WatcherEnd{Pid: os.Getpid()}, true) != nil || os.Rename(loc.ended+".tmp", loc.ended) != nil {
		removeEnd(loc) // no record rather than the last watcher's
	}
}

// recordEnd records, as a watcher that holds the watch lock of identity
// lockID ends with err, how it ended: over the record reserved, in place
// (its blocks are had: a full disk does not refuse them), or by a new
// one renamed over. Under the lock, which lastEnd takes to read it, it is
// never read half-written. None for an index dropped, nor where the state
// directory is another's since (the lock at its path is not this one).
// stopped says that the watcher was told to end (its context), which is
// no failure, whatever the build it stopped said.
func recordEnd(loc location, lockID [2]uint64, opts WatchOptions, err error, stopped bool) {
	if !holdsLock(loc, lockID) {
		return
	}
	if _, serr := os.Lstat(loc.file); errors.Is(serr, os.ErrNotExist) || errors.Is(err, errDropped) {
		removeEnd(loc)
		return
	}
	now := time.Now()
	e := WatcherEnd{Pid: os.Getpid(), At: &now}
	switch {
	case errors.Is(err, errIdle):
		e.Message = fmt.Sprintf("the watcher ended idle: no search asked it for %s (--idle).", opts.Idle)
	case err == nil || stopped:
		e.Message = "the watcher was stopped: SIGTERM or SIGINT, or the session that ran it ended."
	default:
		if opts.Fault != nil {
			err = opts.Fault(err)
		}
		fe := fault.AsError(err)
		e.Code, e.Message, e.Hint = string(fe.Code), fe.Message, fe.Hint
	}
	if writeEnd(loc.ended, e, false) == nil {
		return
	}
	if writeEnd(loc.ended+".tmp", e, true) != nil || os.Rename(loc.ended+".tmp", loc.ended) != nil {
		removeEnd(loc)
	}
}

// writeEnd writes the record e, padded to endRecordSize, to the file at
// name: a new one when create, else over the one there, and syncs it.
func writeEnd(name string, e WatcherEnd, create bool) error {
	b, err := json.Marshal(e)
	for err == nil && len(b) > endRecordSize && len(e.Message)+len(e.Hint) > 64 {
		// Texts this long name long paths: their ends go.
		e.Message, e.Hint = cut(e.Message), cut(e.Hint)
		b, err = json.Marshal(e)
	}
	if err == nil && len(b) > endRecordSize {
		err = errors.New("the record is too long")
	}
	if err != nil {
		return err
	}
	flags := os.O_WRONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK // never waiting on a FIFO planted there
	if create {
		os.Remove(name)
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(name, flags, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	b = append(b, bytes.Repeat([]byte{' '}, endRecordSize-len(b))...)
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if err := f.Truncate(endRecordSize); err != nil {
		return err
	}
	return f.Sync()
}

// cut is s without the last half of it, and an ellipsis.
func cut(s string) string {
	if len(s) < 16 {
		return s
	}
	return strings.ToValidUTF8(s[:len(s)/2], "") + "…"
}

// pollRules looks at the rules files outside the index's files (a
// repository's .git/info/exclude, the ignore files above the tree), which
// no watch covers, as a search does: one changed makes every search walk,
// so it counts as a change, and the watcher builds again once it is quiet.
// mu is held.
func (x *watcher) pollRules() {
	if x.ix != nil && !x.changes.rules && x.ix.rulesChanged() {
		x.changes.rules = true
		x.last = time.Now()
	}
}

// polledDir is a directory of the build that no event covers (a watch
// refused past max_user_watches, a network file system): searches check
// it every time, and the watcher looks at it every tick, so that a change
// there brings a build as an event would. Never built again, every file
// changed there was read by every search from then on, and one that
// became a match or none was never so in the index.
type polledDir struct {
	dir   int32   // in ix.dirs
	files []int32 // its files, in ix.files
	seen  uint64  // what the last look saw, 0 before the first
	// differs is whether the last look found it other than built.
	differs bool
	// unbuilt is what the last look found under the build before, when
	// that differed from it (0 if not): seen so again, the directory is
	// as this build found it, which recorded it no better (a file it
	// cannot read, a directory dated ahead of the clock), nor would
	// another.
	unbuilt uint64
}

// pollShare bounds what pollAlways costs: it looks again no sooner than
// this many times what its last look took, so that a directory of a
// million files polled costs a twentieth of a core, not all of it.
const pollShare = 20

// pollSeed makes the signatures of pollAlways.
var pollSeed = maphash.MakeSeed()

// pollAlways looks at the polled directories and their files as a search
// does: one that differs from the build is a change, unless the look
// that brought this build found it just so (unbuilt: counted, the
// watcher built again at every quiet spell for as long as a file there
// could not be read), and one that differs from the last look is an
// event (a file written without a pause is built again as maxPending
// says, not at every quiet spell). It runs from loop, which alone
// installs builds; mu is taken only to record.
func (x *watcher) pollAlways() {
	began := time.Now()
	if began.Before(x.nextPoll) {
		return
	}
	defer func() { x.nextPoll = began.Add(pollShare * time.Since(began)) }()
	var changed []string
	active := false
	for i := range x.polled {
		p := &x.polled[i]
		seen, same := x.ix.look(p)
		active = active || p.seen != 0 && seen != p.seen
		p.seen, p.differs = seen, !same
		if !same && seen != p.unbuilt {
			changed = append(changed, x.ix.dirs[p.dir].path)
		}
	}
	if len(changed) == 0 && !active {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, d := range changed {
		if !x.changes.dirs[d] {
			x.changes.dirs[d], active = true, true
		}
	}
	if active {
		x.last = time.Now()
	}
}

// look stats the polled directory p and its files: seen is a signature of
// what it found (never 0), same whether that is as built.
func (ix *Index) look(p *polledDir) (seen uint64, same bool) {
	var h maphash.Hash
	h.SetSeed(pollSeed)
	var b []byte
	record := func(err error, st *unix.Stat_t) {
		b = b[:0]
		if err != nil {
			b = append(b, err.Error()...)
		} else {
			b = binary.NativeEndian.AppendUint64(b, st.Ino)
			b = binary.NativeEndian.AppendUint32(b, st.Mode)
			b = binary.NativeEndian.AppendUint64(b, uint64(st.Size))
			b = binary.NativeEndian.AppendUint64(b, uint64(st.Mtim.Nano()))
			b = binary.NativeEndian.AppendUint64(b, uint64(st.Ctim.Nano()))
		}
		h.Write(b)
	}
	var st unix.Stat_t
	fd, err := unix.Open(filepath.Join(ix.root, ix.dirs[p.dir].path), dirFlags, 0)
	if err == nil {
		defer unix.Close(fd)
		err = unix.Fstat(fd, &st)
	}
	record(err, &st)
	if err != nil {
		return h.Sum64() | 1, false
	}
	same = localfs.IsVersion(&st, ix.dirs[p.dir].version)
	for _, j := range p.files {
		f := &ix.files[j]
		err := unix.Fstatat(fd, path.Base(f.rel), &st, unix.AT_SYMLINK_NOFOLLOW)
		record(err, &st)
		same = same && err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && f.isStat(&st)
	}
	return h.Sum64() | 1, same
}

// polledDirs are the directories of ix in always, with their files, and
// what the last looks found of those that differed from the build
// before, by path (unbuilt).
func polledDirs(ix *Index, always map[string]bool, unbuilt map[string]uint64) []polledDir {
	if len(always) == 0 {
		return nil
	}
	at := map[string]int{}
	var polled []polledDir
	for i, d := range ix.dirs {
		if always[d.path] {
			at[d.path] = len(polled)
			polled = append(polled, polledDir{dir: int32(i), unbuilt: unbuilt[d.path]})
		}
	}
	for j := range ix.files {
		if k, ok := at[parent(ix.files[j].rel)]; ok {
			polled[k].files = append(polled[k].files, int32(j))
		}
	}
	return polled
}

// read applies the events as they come, until stop.
func (x *watcher) read(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		fds := []unix.PollFd{{Fd: int32(x.fd), Events: unix.POLLIN}}
		// A bounded wait, so that stop is seen: the events themselves are
		// read under mu, never held back by this goroutine.
		if n, err := unix.Poll(fds, 200); err != nil || n == 0 {
			continue
		}
		x.mu.Lock()
		x.drain()
		x.mu.Unlock()
	}
}

// drain reads and applies every queued event; mu is held.
func (x *watcher) drain() {
	buf := x.events
	for {
		n, err := unix.Read(x.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: the queue is empty
		}
		x.last = time.Now()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			start := off + unix.SizeofInotifyEvent
			off = start + nameLen
			name := string(bytes.TrimRight(buf[start:min(off, n)], "\x00"))
			switch {
			case mask&(unix.IN_Q_OVERFLOW|unix.IN_UNMOUNT) != 0:
				x.changes.lost = true
			case mask&unix.IN_IGNORED != 0:
				delete(x.watches, wd)
			default:
				if t, ok := x.watches[wd]; ok {
					x.changes.apply(t, mask, name)
				}
			}
		}
		// Too many to name: a build names none. Not for the directories
		// always checked, which no build makes fewer.
		if x.changes.lost || x.changes.pending() > maxWatchReply {
			x.rebuildSoon()
		}
	}
}

// rebuildSoon asks loop to build again now.
func (x *watcher) rebuildSoon() {
	select {
	case x.kick <- struct{}{}:
	default: // asked already
	}
}

// serve answers the searches' questions.
func (x *watcher) serve(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		if !peerTrusted(conn) {
			conn.Close() // another user's question: no answer, no word to stop
			continue
		}
		go x.answer(conn)
	}
}

func (x *watcher) answer(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(watchTimeout))
	var req watchRequest
	if err := json.NewDecoder(conn).Decode(&req); err != nil {
		return
	}
	if req.Stop {
		// Only a dropped index's watcher ends: the word is checked.
		if _, err := os.Lstat(x.loc.file); errors.Is(err, os.ErrNotExist) {
			select {
			case x.dropped <- struct{}{}:
			default:
			}
		}
		json.NewEncoder(conn).Encode(watchReply{})
		return
	}
	x.asked.Store(time.Now().UnixNano())
	if x.installing.Load() {
		json.NewEncoder(conn).Encode(x.notOK(req))
		return
	}
	x.mu.Lock()
	x.drain()
	r := x.reply(req)
	x.mu.Unlock()
	json.NewEncoder(conn).Encode(r)
}

// notOK is the answer to req of a watcher that cannot vouch for its
// build now: it names the watcher, which runs (index --status).
func (x *watcher) notOK(req watchRequest) watchReply {
	return watchReply{Proto: watchProto, Gen: req.Gen, Pid: os.Getpid(), Idle: x.opts.Idle.Seconds(), Format: magic[6:]}
}

// reply is the answer to req; mu is held.
func (x *watcher) reply(req watchRequest) watchReply {
	c, gen := x.changes, req.Gen
	notOK := x.notOK(req)
	switch {
	case x.ix == nil, req.Proto != watchProto:
		return notOK
	case gen != x.ix.gen:
		x.rebuildSoon() // another build replaced ours: build again, and watch that
		return notOK
	case req.Mounts != x.mounts:
		// Mounted or taken off since the build, or another mount
		// namespace: build again in the first case, to watch the
		// tree's files as they are now.
		if now, ok := localfs.MountsBelow(x.loc.root); ok && now != x.mounts {
			x.rebuildSoon()
			return notOK
		}
		notOK.OtherMounts = true
		return notOK
	case c.lost || c.size() > maxWatchReply:
		return notOK
	}
	r := watchReply{Proto: watchProto, OK: true, Gen: gen, Pid: os.Getpid(), Idle: x.opts.Idle.Seconds(), Format: magic[6:]}
	for d := range c.dirs {
		r.Dirs = append(r.Dirs, d)
	}
	for d := range c.always {
		if !c.dirs[d] { // changed, as pollAlways found: named above
			r.Dirs = append(r.Dirs, d)
		}
	}
	for t := range c.trees {
		r.Trees = append(r.Trees, t)
	}
	return r
}

// lockInstall takes mu to install a new build, searches meanwhile told at
// once that the watcher cannot vouch; the function returned releases it.
func (x *watcher) lockInstall() func() {
	x.installing.Store(true)
	x.mu.Lock()
	return func() {
		x.mu.Unlock()
		x.installing.Store(false)
	}
}

// refresh builds the index, then installs it: every directory and file it
// holds is watched, then stat'ed; one that differs from the build is a
// change already. From then on, the events are the changes since this
// build: none is missed between the build's stat and the watch, since the
// stat after the watch sees it.
func (x *watcher) refresh(ctx context.Context) (Status, error) {
	// Before the build: a mount made during it differs from a search's.
	mounts, ok := localfs.MountsBelow(x.loc.root)
	if !ok {
		mounts = "unknown" // no search's is that
	}
	opts := x.opts.BuildOptions
	// A build again only of an index still there: one that waited for
	// the builders' lock while Drop held it writes nothing.
	opts.onlyExisting = x.ix != nil
	began := time.Now()
	ix, st, err := buildOpen(ctx, x.w, x.path, x.abs, opts)
	x.buildTook = time.Since(began)
	if err != nil {
		return Status{}, err
	}
	if err := x.install(ix, mounts); err != nil {
		return Status{}, err
	}
	return st, nil
}

// install watches what the build ix holds, seen with mounts, and makes it
// the index the watcher answers about. It is ErrWatchLimit when the
// watches refused past max_user_watches leave more directories to check
// by every search than an answer names: the watcher would answer none,
// said to watch (--detach), yet never so by --status, a second --detach
// kept waiting for it the whole --lock-timeout.
func (x *watcher) install(ix *Index, mounts string) error {
	defer x.lockInstall()()
	x.mounts = mounts
	x.drain() // the events so far are about the build replaced
	// A build asked for racy files alone (no event since the one before)
	// asks for no other: a file written through mmap raises no event and
	// is racy at every build, which would build every tick. Such a file is
	// read by each search until an event brings a build. The directories
	// checked by every search are no event (as loop counts them).
	racyAgain := !x.changes.racy || x.changes.pending() > 1
	fresh := newChangeSet()
	watches := map[int32]watchTarget{}
	remote := map[uint64]bool{}
	var st unix.Stat_t
	refused := false // a watch, past max_user_watches
	// A directory without a watch, replaced under a parent without one
	// either, raises no event, nor do those it took along, whose watches
	// stay on them: every directory below it is checked every time too,
	// watched or not (watches freed meanwhile: a refusal need not last).
	unwatched := map[string]bool{}
	for _, d := range ix.dirs {
		if d.path != "" && unwatched[parent(d.path)] {
			fresh.always[d.path], unwatched[d.path] = true, true
			continue
		}
		name := filepath.Join(ix.root, d.path)
		wd, err := inotifyAddWatch(x.fd, name, dirEvents)
		if err != nil {
			fresh.always[d.path] = true // ENOSPC past max_user_watches, or gone: checked every time
			unwatched[d.path] = true
			refused = refused || err == unix.ENOSPC
			continue
		}
		t := watches[int32(wd)]
		watches[int32(wd)] = watchTarget{rels: append(t.rels, d.path), dir: true}
		switch {
		case unix.Lstat(name, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR:
			fresh.trees[d.path] = true
		case isRemote(name, st.Dev, remote):
			fresh.always[d.path] = true
		case d.version == "" && max(st.Mtim.Nano(), st.Ctim.Nano()) > now().UnixNano():
			// Dated ahead of the clock: every build records it with no
			// version (too recent to trust), which every search lists
			// again. Counted, the watcher built again at every tick.
		case !localfs.IsVersion(&st, d.version):
			fresh.dirs[d.path] = true
		}
	}
	for i := range ix.files {
		f := &ix.files[i]
		name := filepath.Join(ix.root, f.rel)
		wd, err := inotifyAddWatch(x.fd, name, fileEvents|unix.IN_MASK_ADD)
		if err != nil {
			fresh.always[parent(f.rel)] = true
			refused = refused || err == unix.ENOSPC
			continue
		}
		t := watches[int32(wd)]
		if t.dir {
			// A directory swapped in for a parent since the build: the
			// path reached an indexed directory, whose watch stays one.
			fresh.dirs[parent(f.rel)] = true
			for _, r := range t.rels {
				fresh.always[r] = true
			}
			continue
		}
		watches[int32(wd)] = watchTarget{rels: append(t.rels, f.rel)}
		if unix.Lstat(name, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || !f.isStat(&st) {
			fresh.dirs[parent(f.rel)] = true
		} else if racyAgain && f.flags&flagRacy != 0 && max(st.Mtim.Nano(), st.Ctim.Nano()) <= now().UnixNano() {
			// Racy, and a build from RacySlack on trusts it: one dated
			// ahead of the clock would be built again and again.
			fresh.racy = true
		}
		if isIgnoreFile(f.rel) && f.flags&flagRacy != 0 {
			fresh.rules = true
		}
	}
	// Their events since the build were drained above with the rest.
	fresh.rules = fresh.rules || ix.rulesChanged()
	for wd := range x.watches {
		if _, ok := watches[wd]; !ok {
			unix.InotifyRmWatch(x.fd, uint32(wd)) // a file gone from the tree: its watch is spent
		}
	}
	unbuilt := map[string]uint64{}
	for _, p := range x.polled {
		if p.differs {
			unbuilt[x.ix.dirs[p.dir].path] = p.seen
		}
	}
	if x.ix != nil {
		x.ix.Close()
	}
	x.ix, x.watches, x.changes = ix, watches, fresh
	x.polled = polledDirs(ix, fresh.always, unbuilt)
	// A build asked for meanwhile was asked of the build replaced (its
	// mounts, its generation, its changes): a search asks again if this
	// one differs too. Built again at once, it kept searches unanswered
	// while it installed.
	select {
	case <-x.kick:
	default:
	}
	if refused && len(fresh.always) > maxWatchReply {
		return fmt.Errorf("inotify: %w (max_user_watches): %d directories of the tree would be checked by every search, short of a watch on them or their files, more than a watcher's answer names (%d), so it would answer none", ErrWatchLimit, len(fresh.always), maxWatchReply)
	}
	return nil
}

// isRemote reports whether the file system of name (device dev) is shared
// with other machines, whose changes raise no event here.
func isRemote(name string, dev uint64, seen map[uint64]bool) bool {
	r, ok := seen[dev]
	if !ok {
		var fs unix.Statfs_t
		r = unix.Statfs(name, &fs) != nil || localfs.RemoteFS[int64(fs.Type)]
		seen[dev] = r
	}
	return r
}
