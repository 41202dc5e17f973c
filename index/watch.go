package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// A watcher (agentfs index --watch, Watch) proves an index fresh without
// the stat pass: it holds an inotify watch on every directory and file of
// the index it built, and answers a search with the directories where
// anything happened since. A search asks it over a Unix socket beside the
// index file in the private state directory; the watcher first reads
// every event the kernel queued before the question (an event is queued
// by the system call that changed the file, so a change made before the
// search began is among them), then answers. The search then checks only
// those directories, as the stat pass checks every one. No answer, an
// answer about another build of the index or of another version of the
// exchange, one naming a directory the index does not hold, or too many
// directories: the stat pass decides, as without a watcher. So it does
// when the mounts on the tree differ between the search and the build the
// watcher watches: a mount raises no inotify event, and a search in
// another mount namespace may see other files.

// WatchOptions are a watcher's settings.
type WatchOptions struct {
	BuildOptions
	// Ready is called once the first build is installed and searches are
	// answered.
	Ready func(Status)
	// Quiet is how long after the last event the watcher builds again when
	// anything changed (the default 10s); many changes build at once.
	Quiet time.Duration
	// Idle, when set, ends the watcher once no search has asked it for
	// that long, letting go of its watches (kernel memory).
	Idle time.Duration
	// Fault, when set, is the error the caller reports for an error the
	// watcher ends with (a *fault.Error), whose code, message and hint
	// its record of its end keeps (WatcherEnd); else fault.AsError's.
	Fault func(error) error
}

// ErrWatchInstances is a watcher's failure to start for inotify's limit of
// instances (fs.inotify.max_user_instances).
var ErrWatchInstances = errors.New("the limit of inotify instances is reached")

// ErrWatchLimit is a watcher's failure for inotify's limit of watches
// (fs.inotify.max_user_watches): more directories of its tree went
// without a watch than an answer names (maxWatchReply), so it would
// answer no search while holding every watch the user may have.
var ErrWatchLimit = errors.New("the limit of inotify watches is reached")

// errStateReplaced ends a watcher whose state directory was removed or
// replaced: the lock it holds is no file's there, so another watcher may
// start, and no search reaches its socket.
var errStateReplaced = fault.Errorf(fault.CodeNotFound, "the index's state directory was removed or replaced since the watcher started.").
	WithHint("run agentfs index --watch again; searches prove freshness without a watcher meanwhile")

// errDropped ends a watcher whose index was removed.
var errDropped = fault.Errorf(fault.CodeNotFound, "the index was removed (agentfs index --drop).").
	WithHint("run agentfs index --watch again to index the tree")

// watchRequest is what a search asks: the changes since the build gen,
// with the mounts it sees on the tree (localfs.MountsBelow). Stop is
// Drop's word that the index is gone: the watcher checks, and ends.
type watchRequest struct {
	Proto  int    `json:"proto"`
	Gen    string `json:"gen"`
	Mounts string `json:"mounts"`
	Stop   bool   `json:"stop,omitempty"`
}

// watchReply is the watcher's answer. OK says that Dirs and Trees hold
// every directory where something may have changed since the build Gen:
// each of Dirs is checked as the stat pass checks it, and every indexed
// directory of each of Trees too (one made, removed or moved, in or out).
type watchReply struct {
	Proto int    `json:"proto"`
	OK    bool   `json:"ok"`
	Gen   string `json:"gen"`
	// Pid is the watcher's process, which SIGTERM ends, and Idle its
	// WatchOptions.Idle in seconds.
	Pid   int      `json:"pid,omitempty"`
	Idle  float64  `json:"idle,omitempty"`
	Dirs  rawPaths `json:"dirs,omitempty"`
	Trees rawPaths `json:"trees,omitempty"`
	// OtherMounts: not OK because the asker sees other mounts on the
	// tree than the watcher, whose own are as it built (another mount
	// namespace, a sandbox's).
	OtherMounts bool `json:"otherMounts,omitempty"`
	// Format is the format of the watcher's index (the magic's last two
	// characters), which a watcher of an index of another format than
	// the asker's is told by, whatever version of the exchange it speaks.
	Format string `json:"format,omitempty"`
}

// watchProto is the version of the exchange on the socket, sent both
// ways: a watcher answers OK, and a search trusts its answer, only in
// this one. Version 1 sent paths as JSON strings, which turn bytes that
// are not UTF-8 into U+FFFD: its answers named no such directory.
const watchProto = 2

// rawPaths are paths sent byte for byte (base64 in JSON).
type rawPaths []string

func (p rawPaths) MarshalJSON() ([]byte, error) {
	b := make([][]byte, len(p))
	for i, s := range p {
		b[i] = []byte(s)
	}
	return json.Marshal(b)
}

func (p *rawPaths) UnmarshalJSON(data []byte) error {
	var b [][]byte
	if err := json.Unmarshal(data, &b); err != nil {
		return err
	}
	*p = make(rawPaths, len(b))
	for i, s := range b {
		(*p)[i] = string(s)
	}
	return nil
}

// maxWatchReply bounds the directories a reply names: a watcher with more
// answers not OK (and builds again), and the search stats everything.
const maxWatchReply = 4 * maxRelisted

// watchTimeout bounds a search's wait for a watcher that does not answer
// (starved of CPU, or stopped where peerStopped cannot tell); one
// installing a new build answers at once that it cannot vouch.
const watchTimeout = 2 * time.Second

// socketName is the watcher's socket of the index file name.
func socketName(indexFile string) string {
	return strings.TrimSuffix(indexFile, ".idx") + ".sock"
}

// socketAddr is an address for the socket at name that fits a sockaddr_un
// (108 bytes): name itself, or name's directory opened and reached through
// /proc/self/fd when the path is longer; done closes that directory.
func socketAddr(name string) (addr string, done func(), err error) {
	if len(name) < 100 {
		return name, func() {}, nil
	}
	fd, err := unix.Open(filepath.Dir(name), dirFlags, 0)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(name)), func() { unix.Close(fd) }, nil
}

// askWatcher asks the watcher of ix what changed since ix was built; false
// when none answers for this very build, or ctx ends first. Then the reply
// is the one that came in this exchange's version, if any: OtherMounts
// says a watcher answers, but not for this process (another mount
// namespace).
func askWatcher(ctx context.Context, ix *Index) (watchReply, bool) {
	r, _, err := askAnyWatcher(ctx, ix)
	return trusted(r, err, ix)
}

// askAnyWatcher is askWatcher's exchange, its reply in whatever version
// it came and the pid of the process that answered; an error when none
// answers.
func askAnyWatcher(ctx context.Context, ix *Index) (watchReply, int, error) {
	name := socketName(ix.name)
	if _, err := os.Lstat(name); err != nil {
		return watchReply{}, 0, err // no watcher: no need to try
	}
	mounts, ok := localfs.MountsBelow(ix.root)
	if !ok {
		return watchReply{}, 0, errors.New("the mounts on the tree cannot be read")
	}
	return exchangePeer(ctx, name, watchRequest{Proto: watchProto, Gen: ix.gen, Mounts: mounts})
}

// trusted is askWatcher's answer of the exchange that gave r or err.
func trusted(r watchReply, err error, ix *Index) (watchReply, bool) {
	if err != nil || r.Proto != watchProto {
		return watchReply{}, false
	}
	return r, r.OK && r.Gen == ix.gen && len(r.Dirs)+len(r.Trees) <= maxWatchReply
}

// errWatcherStopped is exchange's answer when the watcher is stopped.
var errWatcherStopped = errors.New("the watcher is stopped")

// errUntrustedPeer is exchange's answer when the socket is answered by a
// process of another user.
var errUntrustedPeer = errors.New("the watcher's socket is answered by another user")

// asUID, set by a test, is the user a peer must run as in place of this
// process's effective user: a test plays another user so.
var asUID atomic.Pointer[int]

// peerTrusted reports whether the process at the other end of conn, a
// Unix socket, runs as this process's user. Both ends check: a search
// acts on the directories a watcher names (a watcher of another user's
// could hide a change, and a search would answer from a stale index),
// and a watcher's answer names the directories that changed (another
// user's question learns them, and its word to stop could end it). The
// state directory is private, but AGENTFS_STATE_DIR can name one that is
// not. A peer whose user cannot be learnt is not trusted.
func peerTrusted(conn net.Conn) bool {
	uid, ok := peerUID(conn)
	want := os.Geteuid()
	if p := asUID.Load(); p != nil {
		want = *p
	}
	return ok && uid == want
}

// exchange sends req to the watcher listening on the socket sock and
// reads its reply, within watchTimeout or until ctx ends.
func exchange(ctx context.Context, sock string, req watchRequest) (watchReply, error) {
	r, _, err := exchangePeer(ctx, sock, req)
	return r, err
}

// exchangePeer is exchange, with the pid of the process that answered
// (0 where the socket does not name it).
func exchangePeer(ctx context.Context, sock string, req watchRequest) (watchReply, int, error) {
	addr, done, err := socketAddr(sock)
	if err != nil {
		return watchReply{}, 0, err
	}
	defer done()
	d := net.Dialer{Timeout: watchTimeout}
	conn, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return watchReply{}, 0, err
	}
	defer conn.Close()
	if !peerTrusted(conn) {
		return watchReply{}, 0, errUntrustedPeer
	}
	if peerStopped(conn) {
		return watchReply{}, 0, errWatcherStopped
	}
	pid := peerPid(conn)
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	conn.SetDeadline(time.Now().Add(watchTimeout))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return watchReply{}, pid, err
	}
	var r watchReply
	err = json.NewDecoder(io.LimitReader(conn, 4<<20)).Decode(&r)
	return r, pid, err
}

// ErrOtherVersionWatcher is the cause of the EXISTS of a watcher started,
// or an index built, where a watcher of another version of agentfs runs
// for the tree (one started before an upgrade, which runs on for its
// --idle): it answers no search of this version, holds the tree's watch
// lock for as long as it runs, and builds the index again in its own
// format over one this version builds, which searches then cannot use.
var ErrOtherVersionWatcher = errors.New("a watcher of another version of agentfs serves the tree")

// probeProto is the version of the exchange that a probe for a watcher of
// another version asks in: none speaks it, so a watcher of version 2 on
// answers at once, not OK, and acts on nothing (one of version 1, which
// knows no versions, takes it for a build it does not know and builds
// again, as it does at every search of this version).
const probeProto = -1

// otherVersionWatcher is the pid of the watcher that answers on the socket
// beside the index file at name when it is of another version of agentfs
// (its answer is in another version of the exchange, or, for an index
// file of another format, names none or another), by its answer or its
// credentials on the socket; ok is false when none answers (or one that
// is stopped), or this version's.
func otherVersionWatcher(ctx context.Context, name string, otherFormat bool) (pid int, ok bool) {
	sock := socketName(name)
	if _, err := os.Lstat(sock); err != nil {
		return 0, false
	}
	r, peer, err := exchangePeer(ctx, sock, watchRequest{Proto: probeProto})
	if otherFormat && err == nil && r.Format != magic[6:] {
		r.Proto = 0 // of whatever version: not this one's
	}
	return otherVersion(r, peer, err)
}

// otherVersion is otherVersionWatcher's answer of the exchange that gave
// r, answered by the process peer, or err.
func otherVersion(r watchReply, peer int, err error) (pid int, ok bool) {
	if err != nil || r.Proto == watchProto {
		return 0, false
	}
	if r.Pid != 0 {
		peer = r.Pid
	}
	return peer, true
}

// otherVersionErr is the EXISTS of a watcher of another version of
// agentfs, pid, running for the tree.
func otherVersionErr(pid int) error {
	return fault.Errorf(fault.CodeExists, "a watcher of this tree from another version of agentfs (pid %d) is running: it answers no search of this version, and builds the index again in its own format over any this version builds, which searches then cannot use.", pid).
		WithDetail("watcherPid", pid).
		WithHint("stop it with agentfs index --drop (or kill %d), then run this command again", pid).WithCause(ErrOtherVersionWatcher)
}

// watchStopWait bounds Drop's wait for a watcher to end.
const watchStopWait = 10 * time.Second

// stopWatcher tells the watcher of the index at loc, just removed, to end,
// and waits until it has let go of its lock: true when one did. None
// answering: false at once.
func stopWatcher(ctx context.Context, loc location) bool {
	// Its reply says that it has checked that the index is gone.
	if _, err := exchange(ctx, socketName(loc.file), watchRequest{Stop: true}); err != nil {
		return false
	}
	unlock, err := lock(ctx, loc.watchLock, watchStopWait)
	if err != nil {
		return false
	}
	unlock()
	return true
}

// toCheck marks the directories of ix that r says to check; false when
// r names a directory ix does not hold, which no check would then cover
// (the stat pass decides). Trees may name directories made since.
func (r watchReply) toCheck(ix *Index) ([]bool, bool) {
	check := make([]bool, len(ix.dirs))
	dirs := make(map[string]bool, len(r.Dirs))
	for _, d := range r.Dirs {
		dirs[d] = true
	}
	matched := 0
	for i, d := range ix.dirs {
		if dirs[d.path] {
			check[i] = true
			matched++
			continue
		}
		for _, t := range r.Trees {
			if inDir(d.path, t) {
				check[i] = true
				break
			}
		}
	}
	return check, matched == len(dirs)
}

// WatcherEnd is how the last watcher of an index ended, which it records
// beside the index (a --detach watcher's output goes nowhere once it
// answers): when (At), and the error it ended with (Code, Message, Hint:
// what index --watch prints), none when it ended by itself (idle) or was
// stopped. A record without At is of a watcher that ended without
// writing it: killed (SIGKILL, the OOM killer), crashed, or the machine
// stopped.
type WatcherEnd struct {
	Pid     int        `json:"pid"`
	At      *time.Time `json:"at,omitempty"`
	Code    string     `json:"code,omitempty"`
	Message string     `json:"message"`
	Hint    string     `json:"hint,omitempty"`
}

// endRecordSize is the size of the record of a watcher's end, padded
// with spaces: a watcher reserves it as it starts and overwrites it in
// place as it ends, which a full disk does not refuse.
const endRecordSize = 2048

// unrecordedEnd is the message of a watcher that ended without a word.
const unrecordedEnd = "the watcher ended without recording why: killed (SIGKILL, the OOM killer), crashed, or the machine stopped."

// lastEnd is how the last watcher of the tree at loc ended, read under
// its watch lock, which a watcher holds while it runs and writes its
// record: nil while one runs (or starts, or ends), and when none ran
// since the index was built or dropped, or the record cannot be read.
func lastEnd(loc location) *WatcherEnd {
	fd, err := unix.Open(loc.watchLock, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var held, named unix.Stat_t
	if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) != nil || unix.Fstat(fd, &held) != nil ||
		unix.Stat(loc.watchLock, &named) != nil || held.Dev != named.Dev || held.Ino != named.Ino {
		return nil // held, or replaced: a watcher runs or starts
	}
	f, err := os.OpenFile(loc.ended, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, endRecordSize+1))
	var e WatcherEnd
	if err != nil || len(b) > endRecordSize || json.Unmarshal(b, &e) != nil || e.Pid <= 0 {
		return nil
	}
	if e.At == nil {
		e.Code, e.Message, e.Hint = "", unrecordedEnd, ""
	}
	return &e
}

// removeEnd removes the record of the tree's last watcher's end, and
// what writing it left.
func removeEnd(loc location) {
	os.Remove(loc.ended)
	os.Remove(loc.ended + ".tmp")
}
