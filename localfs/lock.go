package localfs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// Cross-process locks. A mutation of p takes a shared flock on the lock file
// of every ancestor of p (the root included) and an exclusive one on p's, in
// order from the root down, so two mutations whose paths nest always meet on
// the shorter path and no two processes can wait for each other in a cycle.
// The lock files live in a state directory outside the user's tree, one
// directory per root (named by the root's device and inode, so every
// spelling of the root shares it) and one empty file per path (named by a
// hash of the path relative to the root). The regular file a mutation
// changes is also locked itself, last (lockData): processes with other
// state directories take other lock files, but meet on the file.
// flock locks belong to the open file description: a process killed with
// SIGKILL frees them as the kernel closes its descriptors.
//
// flock has no timeout and a blocked flock cannot be cancelled, so waiting
// is a LOCK_NB poll with a short backoff (at most lockPollMax between tries).

// StateDirEnv overrides where agentfs keeps its lock files.
const StateDirEnv = "AGENTFS_STATE_DIR"

// lockPollMax bounds the backoff between two tries of a held lock: a lock
// freed by its holder is taken within about this long.
const lockPollMax = 5 * time.Millisecond

// stateDir is the first usable candidate of: $AGENTFS_STATE_DIR,
// $XDG_STATE_HOME/agentfs, ~/.local/state/agentfs, and a per-user directory
// in the temporary directory (for an environment without a writable home).
// Every process with the same environment picks the same one (see
// pickStateDir). Its error is a *fault.Error naming the directory.
func stateDir() (string, error) {
	return pickStateDir(ensurePrivateDir)
}

// StateDir is the user's state directory, created (mode 0700) when
// missing: where agentfs keeps its locks and journals, and other packages
// their files (publish's signing key, the content index).
func StateDir() (string, error) { return stateDir() }

// existingStateDir is stateDir without creating it: "" when none exists,
// as before the first mutation.
func existingStateDir() string {
	d, err := pickStateDir(func(d string) error {
		if !isDir(d) {
			return os.ErrNotExist
		}
		return ensurePrivateDir(d)
	})
	if err != nil {
		return ""
	}
	return d
}

// ExistingStateDir is StateDir without creating it: "" when none exists.
func ExistingStateDir() string { return existingStateDir() }

// pickStateDir returns the first candidate state directory that usable
// accepts. A candidate is passed over only when it cannot be used as the
// environment stands (forGood): one that fails for a while (full, out of
// descriptors) is the error, as a commit journaled in the next one was
// orphaned once the first had room again, every later call using it.
func pickStateDir(usable func(string) error) (string, error) {
	if d := os.Getenv(StateDirEnv); d != "" {
		if !filepath.IsAbs(d) {
			// Relative, each working directory had its own: a journal
			// left by a call from one was never recovered by calls from
			// another, which read the half-applied change.
			return "", fault.Errorf(fault.CodeNotConfigured, "%s is %q, not an absolute path.", StateDirEnv, d).
				WithHint("set %s to an absolute path: relative, each working directory would have its own locks and journals", StateDirEnv)
		}
		if err := usable(d); err != nil {
			return "", stateDirError(d, err)
		}
		return d, nil
	}
	var firstErr error
	for _, d := range stateDirCandidates() {
		err := usable(d)
		if err == nil {
			return d, nil
		}
		if np := (*notPrivate)(nil); errors.As(err, &np) && np.mend != "" {
			// Only mended in place: a state directory set elsewhere
			// (AGENTFS_STATE_DIR) is the only one looked into, and this
			// one's journals would never be again.
			return "", np.fe.WithHint("%s", np.mend)
		}
		if !forGood(err) {
			return "", stateDirError(d, err)
		}
		if firstErr == nil {
			firstErr = stateDirError(d, err)
		}
	}
	return "", firstErr
}

// forGood reports whether err, met making or checking a candidate state
// directory, says it cannot be used while the environment stays as it is:
// missing (existingStateDir), not this user's to write, on a read-only
// file system, a file in the way, another user's (notPrivate). One of
// this user's that is not private is not: this user mends it (chmod 700),
// and it may hold journals of this user's, passed over, never looked at.
func forGood(err error) bool {
	if np := (*notPrivate)(nil); errors.As(err, &np) {
		return np.mend == ""
	}
	for _, e := range []error{os.ErrNotExist, unix.EACCES, unix.EPERM, unix.EROFS, unix.ENOTDIR, unix.ELOOP} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// stateDirError is the error of the state directory d, which cannot be
// made or used for err, coded as StateDirFault says.
func stateDirError(d string, err error) error {
	if fe := (*fault.Error)(nil); errors.As(err, &fe) {
		return fe
	}
	code, hint := stateDirFault(d, err)
	return fault.Errorf(code, "the state directory %s cannot be made: %s.", d, ErrText(err)).WithHint("%s", hint).WithCause(err)
}

// recoveryStateDirs are the state directories whose journals a recovery
// looks at: state, the one this environment picks ("" when none exists
// yet), and, unless $AGENTFS_STATE_DIR chooses one, every other candidate
// that exists and is a directory of this user (journals lists one that is
// not private, but recovers nothing from it). Which candidate is picked
// may change while a journal waits (a home made, or made writable,
// since), and a dead commit is undone wherever it was journaled. A state
// directory set by $AGENTFS_STATE_DIR is another environment's, whose
// writers take other lock files: it is not looked into.
func recoveryStateDirs(state string) []string {
	dirs := []string{state}
	if os.Getenv(StateDirEnv) != "" {
		return dirs
	}
	for _, d := range stateDirCandidates() {
		if d == state || !isDir(d) {
			continue // no Lstat on every call for a candidate not there
		}
		if np := checkPrivate(d); np == nil || np.mend != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// stateDirCandidates are the state directories pickStateDir chooses from,
// in its order, when $AGENTFS_STATE_DIR is not set.
func stateDirCandidates() []string {
	var candidates []string
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		candidates = append(candidates, filepath.Join(x, "agentfs"))
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) && isDir(h) {
		// Only below an existing home: a placeholder HOME (a sandbox's
		// /no-home) is never created, even by root.
		candidates = append(candidates, filepath.Join(h, ".local", "state", "agentfs"))
	}
	tmp := os.TempDir()
	if !filepath.IsAbs(tmp) {
		tmp = "/tmp" // a relative $TMPDIR is one per working directory
	}
	return append(candidates, filepath.Join(tmp, fmt.Sprintf("agentfs-%d", os.Getuid())))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ensurePrivateDir creates d (mode 0700) and checks that it is a directory
// of ours that nobody else can write to: a shared temporary directory could
// otherwise hold a planted one.
func ensurePrivateDir(d string) error {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	if np := checkPrivate(d); np != nil {
		return np
	}
	return nil
}

// notPrivate is the NOT_CONFIGURED error of a state directory that is not
// a private directory of this user. mend is the hint that mends it where
// it is, "" when this user cannot (another user's, not a directory): then
// nothing of this user's can be in it, and a default candidate is passed
// over; one this user can mend may hold this user's journals, never
// recovered while it is not private, and is not passed over.
type notPrivate struct {
	fe   *fault.Error
	why  string
	mend string
	// foreign: journals another user may have written are there, which
	// are never recovered, even once it is private again.
	foreign bool
}

func (e *notPrivate) Error() string { return e.fe.Error() }
func (e *notPrivate) Unwrap() error { return e.fe }

// checkPrivate is the error of d when it is not a private directory of
// this user, nil when it is (or it cannot be looked at: the caller's
// making or listing it says why).
func checkPrivate(d string) *notPrivate {
	var st unix.Stat_t
	if unix.Lstat(d, &st) != nil {
		return nil
	}
	// The cause, and what to do: chmod only mends a directory of ours.
	why, mend := "", ""
	shared, chmod := NotOursAlone(&st)
	switch {
	case shared != "" && !chmod:
		why = shared
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			why = fmt.Sprintf("it is a symbolic link of user %d", st.Uid)
		}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		why = "it is a symbolic link"
		mend = fmt.Sprintf("replace the link %s by the directory it leads to (mode 700)", d)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		why = "it is not a directory"
	case chmod:
		why, mend = shared, fmt.Sprintf("chmod 700 %s", d)
	default:
		return nil
	}
	hint := "set " + StateDirEnv + " to a private directory of this user (mode 700)"
	if mend != "" {
		hint = mend + ", or " + hint
	}
	return &notPrivate{
		fe:   fault.Errorf(fault.CodeNotConfigured, "the state directory %s is not a private directory of this user: %s.", d, why).WithHint("%s", hint),
		why:  why,
		mend: mend,
	}
}

// NotOursAlone says why the directory whose stat is st is not this
// user's alone, where another user could put files: it is another user's,
// or others can write to it (chmod: chmod 700 mends it); "" when it is
// this user's alone. The state directory (checkPrivate) and the assets
// folder are held to it.
func NotOursAlone(st *unix.Stat_t) (why string, chmod bool) {
	switch {
	case int(st.Uid) != os.Getuid():
		return fmt.Sprintf("it belongs to user %d", st.Uid), false
	case st.Mode&0o022 != 0:
		return fmt.Sprintf("others can write to it (mode %04o)", st.Mode&0o7777), true
	}
	return "", false
}

// lockDir is the directory of the lock files. There is one namespace for
// the whole machine, keyed by real absolute paths, so that processes started
// with different --root sets (an agent on repo, a sub-agent on repo/sub)
// still exclude each other.
func lockDir() (string, error) {
	base, err := stateDir()
	if err != nil {
		return "", err
	}
	d := filepath.Join(base, "locks")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", stateDirErr("the lock directory", err)
	}
	return d, nil
}

// lockSweepEvery is how often the lock files no process holds are swept
// from the lock directory. A path's own lock file goes when its mutation
// ends, but its directories' stay, one for every directory a mutation was
// ever below (1,014 on a test machine after some days): without a sweep
// they grow with every temporary tree an agent works in.
const lockSweepEvery = 24 * time.Hour

// lockSweepBudget bounds the time one start gives a sweep: a directory of
// 100,000 lock files took 1.9 s. What is left is swept by the next
// starts, until one reaches the end and stamps the sweep done. (A var: a
// test plays a sweep cut short.)
var lockSweepBudget = 20 * time.Millisecond

// lockSweepStamp is the file in the lock directory whose mtime says when
// its last sweep ended.
const lockSweepStamp = "swept"

// sweepLocks removes from the lock directory of the state directory base
// ("" when there is none) the lock files no process holds, once
// lockSweepEvery has passed since the last sweep ended (a stamp, one
// lstat at every start), within lockSweepBudget, and returns how many it removed. A
// lock file is only a name to meet on: LockFile, which every taker goes
// through, finds a lock file unlinked under it and takes the one at the
// name anew.
func sweepLocks(base string, now time.Time) int {
	if base == "" {
		return 0
	}
	d := filepath.Join(base, "locks")
	stamp := filepath.Join(d, lockSweepStamp)
	if !sweepDue(stamp, now) {
		return 0
	}
	dir, err := os.Open(d)
	if err != nil {
		return 0
	}
	defer dir.Close()
	removed, start := 0, time.Now()
	for time.Since(start) < lockSweepBudget {
		entries, err := dir.ReadDir(256)
		for _, e := range entries {
			if e.Type().IsRegular() && isLockName(e.Name()) && sweepLock(filepath.Join(d, e.Name())) {
				removed++
			}
		}
		if err == io.EOF {
			markSwept(stamp, now)
			break
		}
		if err != nil {
			break
		}
	}
	return removed
}

// sweepDue reports whether a sweep is due at now by the stamp at name, in
// one lstat, what every start pays: when there is none, lockSweepEvery
// after its mtime, or when its mtime is in the future (a clock set back).
// A link, FIFO or device planted there is never due, never opened.
func sweepDue(name string, now time.Time) bool {
	fi, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	age := now.Sub(fi.ModTime())
	return age >= lockSweepEvery || age < 0
}

// markSwept sets the stamp at name to now, made if missing: never through
// a link, nor waiting on a FIFO, planted there since sweepDue.
func markSwept(name string, now time.Time) {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		t := unix.NsecToTimeval(now.UnixNano())
		unix.Futimes(fd, []unix.Timeval{t, t})
	}
}

// isLockName reports whether name is one lockName makes.
func isLockName(name string) bool {
	h, ok := strings.CutSuffix(name, ".lock")
	b, err := hex.DecodeString(h)
	return ok && err == nil && len(b) == 16 && hex.EncodeToString(b) == h
}

// sweepLock unlinks the lock file at p when no process holds it, under
// its exclusive lock, and reports whether it did.
func sweepLock(p string) bool {
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false
	}
	if same, _ := atPath(fd, p); !same {
		return false
	}
	return unix.Unlink(p) == nil
}

// lockName is the lock file of a key (see lockKey).
func lockName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + ".lock"
}

// lockChain lists the paths a mutation of the real absolute path abs locks:
// "/", then every ancestor, then abs itself (the one locked exclusively).
// Starting at "/" rather than at a root makes the order global and lets a
// recursive remove meet a write below it whatever their roots.
func lockChain(abs string) []string {
	chain := []string{string(filepath.Separator)}
	for i := 1; i < len(abs); i++ {
		if abs[i] == filepath.Separator {
			chain = append(chain, abs[:i])
		}
	}
	if abs != chain[0] {
		chain = append(chain, abs)
	}
	return chain
}

// Lock takes the locks of a mutation of path (see backend.Locker). The path
// is placed as the mutation will place it: links on it are followed by the
// link policy, so two spellings of one file share a lock. The root itself is
// refused: agentfs never replaces or removes a root.
func (f *FS) Lock(ctx context.Context, path string, timeout time.Duration) (func(), error) {
	return f.LockAll(ctx, []string{path}, timeout)
}

// LockAll takes the locks of a mutation of every path at once (see
// backend.MultiLocker): exclusive on each path, shared on their ancestors,
// all in one global order (shallower paths first, then by name), which
// every single Lock follows too, so no two processes wait in a cycle.
// The paths are placed before the wait and the mutation places them again
// after it: a path re-pointed meanwhile (its file swapped for a link) is
// locked again where it now leads, so what is written is what is locked.
func (f *FS) LockAll(ctx context.Context, paths []string, timeout time.Duration) (func(), error) {
	state := existingStateDir()
	states := recoveryStateDirs(state)
	// One deadline for every try: each took the whole timeout afresh.
	deadline := time.Now().Add(timeout)
	waited := journalWaits{}
	for attempt := 1; ; attempt++ {
		first, placed, reals, err := f.lockTargets(paths)
		if err != nil {
			return nil, err
		}
		// A transaction whose writer died is finished or undone before
		// this mutation reads what it changes: a long-lived process (a
		// batch, an MCP session) recovered only when it started.
		stuck := f.settle(ctx, states, deadline)
		unlock, files, err := f.lockReal(ctx, reals, max(0, time.Until(deadline)))
		var le *lockError
		if errors.As(err, &le) {
			return nil, f.lockErr(le.err, first, f.display(le.path), timeout)
		}
		if err != nil {
			// The state directory that keeps a dead commit of these
			// paths from being recovered: said so, as the hint to move
			// it elsewhere would hide its journal for good.
			if j, _ := journalFor(states, reals); stuck[j] != nil && !committedJournal(j) {
				return nil, uncommittedErr(first.display(f), j, stuck[j])
			}
			return nil, fault.AsError(err).WithPath(first.display(f))
		}
		moved, err := f.movedSinceLocked(paths, placed, files)
		if err != nil || moved != "" {
			unlock()
			if err != nil {
				return nil, err
			}
			if attempt >= 3 && time.Now().After(deadline) {
				return nil, f.lockErr(errKeptMoved, first, f.display(moved), timeout)
			}
			continue
		}
		j, cause := journalFor(states, reals)
		if cause == nil {
			cause = stuck[j]
		}
		_, isStuck := stuck[j]
		if errors.Is(cause, errRecoveryPending) {
			// Its recovery waits for locks, or for another process:
			// waited for below, as a journal met.
			cause, isStuck = nil, false
		}
		if cause != nil && !committedJournal(j) {
			// Its recovery could not run: these files may hold its
			// content, never committed.
			unlock()
			return nil, uncommittedErr(first.display(f), j, cause)
		}
		if j == "" || isStuck {
			return unlock, nil
		}
		// A writer of these paths died, while this one waited for its
		// locks or before: they are let go for the recovery, which would
		// wait for them, or for another process's recovery to end.
		unlock()
		if live, err := waitLiveCommit(ctx, j, deadline); live {
			// Not dead: a commit of a writer that takes other lock
			// files (another candidate state directory's), waited for.
			if err != nil {
				return nil, f.lockErr(err, first, first.display(f), timeout)
			}
			continue
		}
		if waited.again(j) {
			return nil, fault.Errorf(fault.CodeLockTimeout, "a transaction whose process died left %s half changed, and it cannot be undone yet: another process holds some of its files.", first.display(f)).
				WithPath(first.display(f)).WithDetail("journal", j).
				WithHint("retry once the other agentfs processes are done; nothing was changed")
		}
		if err := waitJournal(ctx, j, deadline); err != nil {
			return nil, f.lockErr(err, first, first.display(f), timeout)
		}
	}
}

// journalWaits counts LockAll's waits for the recovery of each dead
// journal it met holding its locks. Counted over every journal, three dead
// writers in a row, each undone at once, failed a call as if one
// recovery could not run (hunt35: 184 of 2,080 appends beside writers
// killed mid-commit).
type journalWaits map[string]int

// again counts a wait for the journal j, and reports whether it is the
// third: its recovery keeps not running.
func (w journalWaits) again(j string) bool {
	w[j]++
	return w[j] == 3
}

// waitLiveCommit waits, until deadline, while the journal at path is a
// live commit's: its flock held, and not by a recovery (which holds its
// recovery file, waited for by waitJournal). live is false when it is not.
// The journal's flock is only probed, shared as deadJournals' look takes
// it (no look mistakes the other for a live commit), and waited for from
// a descriptor that lets it go at once.
func waitLiveCommit(ctx context.Context, path string, deadline time.Time) (live bool, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == nil || recoveryHeld(path) {
		return false, nil
	}
	return true, FlockWait(ctx, fd, unix.LOCK_SH, deadline)
}

// recoveryHeld reports whether a process holds the recovery file of the
// journal at path: it is recovering the journal.
func recoveryHeld(path string) bool {
	fd, err := unix.Open(path+journalRecovering, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) != nil
}

// lockTargets places every path for its lock (lockTarget): the first
// one's target, for the errors, the real absolute paths to lock of each
// path, and all of them.
func (f *FS) lockTargets(paths []string) (target, [][]string, []string, error) {
	placed := make([][]string, len(paths))
	var all []string
	var first target
	for i, path := range paths {
		t, reals, err := f.lockTarget(path)
		if err != nil {
			return target{}, nil, nil, err
		}
		if i == 0 {
			first = t
		}
		placed[i] = reals
		all = append(all, reals...)
	}
	return first, placed, all, nil
}

// movedSinceLocked places paths again, under the locks of placed, and
// returns the locked real path of the first one that no longer leads to
// what was locked: another lock (a file swapped for a link, a directory on
// the way for a link elsewhere), or another file than the one data-locked
// (files, by real path, as lockDataFiles took them), or a file where there
// was none. "" when every path still leads to what is locked.
func (f *FS) movedSinceLocked(paths []string, placed [][]string, files map[string][2]uint64) (string, error) {
	mounts := mountTable()
	for i, path := range paths {
		_, reals, err := f.lockTarget(path)
		if err != nil {
			return "", err
		}
		if len(reals) != len(placed[i]) {
			return placed[i][0], nil
		}
		for k, real := range reals {
			was := placed[i][k]
			if lockKey(mounts, real) != lockKey(mounts, was) {
				return was, nil
			}
			st, err := f.lstatBelow(real)
			regular := err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
			id, locked := files[was]
			if regular != locked || regular && id != [2]uint64{uint64(st.Dev), st.Ino} {
				return was, nil
			}
		}
	}
	return "", nil
}

// errKeptMoved is the lock timeout of a path that led elsewhere at every
// try.
var errKeptMoved = fmt.Errorf("%w: the path kept being re-pointed", ErrLockTimeout)

// lockError is a lock that could not be taken in time, at path.
type lockError struct {
	err  error
	path string
}

func (e *lockError) Error() string { return e.path + ": " + e.err.Error() }

// lockKey names the real absolute path p by the device of the file system
// it lies on and its path within that file system, so that one file reached
// through a bind mount and through its own directory has one key. A name,
// not an inode: every write replaces the file (a new inode), and a file not
// yet created has none, while the name within its file system is the same
// before, during and after the replace.
func lockKey(mounts []mountEntry, p string) string {
	return keyOf(lockKeyParts(mounts, p))
}

// keyOf is the lock key of the path fsPath in the file system dev (""
// when no mount is known: the path alone).
func keyOf(dev, fsPath string) string {
	if dev == "" {
		return fsPath
	}
	return dev + ":" + fsPath
}

// byDepth orders paths (or lock keys) shallower first, then by name.
func byDepth(a, b string) int {
	return cmp.Or(cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")), strings.Compare(a, b))
}

// lockDepth is the deepest a lock file's path is: the lock of a path
// deeper than that is its ancestor lockDepth deep's, exclusive (see
// lockAnchor). Every lock held is a descriptor, and a lock file for every
// ancestor made a write 200 directories deep hold 204 of them, over
// ulimit -n 128 (IO_ERROR), where echo > wrote the file.
const lockDepth = 32

// lockAnchor is the path whose lock stands for the lock of the absolute
// path fsPath: fsPath itself when it is at most lockDepth names deep, its
// ancestor lockDepth deep when it is deeper. A mutation then holds at most
// lockDepth+1 lock files for a path, whatever its depth. keyChains takes
// the anchor exclusive for any path below it that is locked exclusive,
// shared for one only passed through (an ancestor): every lock below the
// anchor still meets every lock below it, or of one of its ancestors, held
// exclusive, on the anchor, and one held shared on an ancestor no deeper
// than the anchor, as before. What it costs: two mutations of unrelated
// paths below one anchor wait for each other. A process locking every
// ancestor (an older agentfs) still meets this one: a lock below the
// anchor holds the anchor, shared or exclusive.
func lockAnchor(fsPath string) string {
	n := 0
	for i := 1; i < len(fsPath); i++ {
		if fsPath[i] == '/' {
			if n++; n == lockDepth {
				return fsPath[:i]
			}
		}
	}
	return fsPath
}

// keyChains are the lock keys of the paths of order, locked how, in the
// one order of keys every process follows (byDepth), with the path each
// is first taken for. A path below a bind mount of a directory (its key
// the directory's path in its file system) also takes shared locks on that
// directory's ancestors there: a write through the mount took none, so a
// recursive remove of an ancestor, holding it exclusively, interleaved
// with the write, and failed half done.
func keyChains(mounts []mountEntry, order []string, how map[string]int) (keys []string, keyHow map[string]int, keyPath map[string]string) {
	keyHow, keyPath = map[string]int{}, map[string]string{}
	within := map[string]string{} // a key's path within its file system
	add := func(dev, fsPath string, h int, p string) {
		fsPath = lockAnchor(fsPath)
		k := keyOf(dev, fsPath)
		if keyHow[k] != unix.LOCK_EX {
			keyHow[k] = h
		}
		if _, ok := keyPath[k]; !ok {
			keyPath[k], within[k] = p, fsPath
		}
	}
	for _, p := range order {
		dev, fsPath := lockKeyParts(mounts, p)
		if dev != "" {
			chain := lockChain(fsPath)
			for _, a := range chain[:len(chain)-1] {
				add(dev, a, unix.LOCK_SH, p)
			}
		}
		add(dev, fsPath, how[p], p)
	}
	for k := range keyHow {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(byDepth(within[a], within[b]), strings.Compare(a, b))
	})
	return keys, keyHow, keyPath
}

// lockReal locks the real absolute paths reals (see LockAll), and
// returns the (device, inode) of each regular file it data-locked, by path.
func (f *FS) lockReal(ctx context.Context, reals []string, timeout time.Duration) (func(), map[string][2]uint64, error) {
	how := map[string]int{}
	for _, real := range reals {
		chain := lockChain(real)
		for _, p := range chain[:len(chain)-1] {
			if how[p] == 0 {
				how[p] = unix.LOCK_SH
			}
		}
		how[real] = unix.LOCK_EX
	}
	order := make([]string, 0, len(how))
	for p := range how {
		order = append(order, p)
	}
	slices.SortFunc(order, byDepth)
	dir, err := lockDir()
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(timeout)
	mounts := mountTable()
	keys, keyHow, keyPath := keyChains(mounts, order, how)
	held := make([]int, 0, len(keys))
	// release removes the lock files of the first n keys, those of them
	// held exclusively, then closes every lock held. A path's own lock
	// file goes while it is held exclusively, so the state directory keeps
	// only the lock files of directories; a process that opened it
	// meanwhile notices and takes a new one. A try that failed does so
	// too: it left them, and a replace over 600 files that timed out, or
	// met a full state directory, left 600 (that directory stayed full).
	release := func(n int) {
		for _, k := range keys[:n] {
			if keyHow[k] == unix.LOCK_EX {
				unix.Unlink(filepath.Join(dir, lockName(k))) // housekeeping: a leftover file is still a valid lock file
			}
		}
		for _, fd := range held {
			unix.Close(fd) // closing the only descriptor releases its flock
		}
	}
	for i, k := range keys {
		// Asked to end (SIGINT), it ends now: a lock free at once never
		// looked, and a replace over 3,000 files went on taking the rest,
		// past the caller's grace, leaving them all (2,976 lock files).
		err := ctx.Err()
		fd := -1
		if err == nil {
			fd, err = LockFile(ctx, filepath.Join(dir, lockName(k)), keyHow[k], deadline)
		}
		if err != nil {
			release(i)
			if waitEnded(err) {
				return nil, nil, &lockError{err: err, path: keyPath[k]}
			}
			return nil, nil, stateDirErr("a lock file", err)
		}
		held = append(held, fd)
	}
	data, files, err := f.lockDataFiles(ctx, order, how, deadline)
	if err != nil {
		release(len(keys))
		return nil, nil, err
	}
	held = append(held, data...)
	return sync.OnceFunc(func() { release(len(keys)) }), files, nil
}

// lockTarget places path for its lock, and returns the real absolute
// paths to lock: the path's and, for a final link, the link's own name
// too, which mv replaces and rm removes while a write changes its target.
func (f *FS) lockTarget(path string) (target, []string, error) {
	t, err := f.resolve(path)
	if err != nil {
		return target{}, nil, err
	}
	// The final name, placed once: each placing resolves the path's
	// directories again, and what it found could differ between two.
	name, nameErr := f.canonical(t, false)
	own := "" // the final name's real path, but for a root
	if nameErr == nil && name.rel != "." {
		// A final name that is no link is the file itself: following it
		// would resolve the path again to the same place.
		own = filepath.Join(name.root.path, name.rel)
		var st unix.Stat_t
		if err := unix.Lstat(own, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return t, []string{own}, nil
		}
	}
	ct, err := f.canonical(t, true)
	followed := err == nil && ct.rel != "."
	if !followed {
		// A final link that may not be followed, or one to a root (a link
		// to "."), is locked by its own name: rm removes such a link, and
		// write refuses it after the lock.
		if nameErr != nil {
			return target{}, nil, nameErr
		}
		ct = name
	}
	if ct.rel == "." {
		return target{}, nil, fault.RootRefused(t.display(f))
	}
	reals := []string{filepath.Join(ct.root.path, ct.rel)}
	if followed && own != "" && own != reals[0] {
		reals = append(reals, own)
	}
	return t, reals, nil
}

// LockFile opens the lock file at path and takes a flock on it, waiting up
// to deadline. A lock file unlinked by its holder while this process waited
// is no lock any more: the lock is taken again on the file now at path.
func LockFile(ctx context.Context, path string, how int, deadline time.Time) (int, error) {
	return lockNamed(path, func(fd int) error { return FlockWait(ctx, fd, how, deadline) })
}

// lockNamed opens (creating) the lock file at path and takes its flock with
// take, again on the file now at path when the one it locked was unlinked
// or replaced meanwhile.
func lockNamed(path string, take func(fd int) error) (int, error) {
	for {
		fd, err := syscalls.openLock(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return -1, err
		}
		if err := take(fd); err != nil {
			unix.Close(fd)
			return -1, err
		}
		same, err := atPath(fd, path)
		if same {
			return fd, nil
		}
		unix.Close(fd)
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return -1, err
		}
	}
}

// atPath reports whether the open file fd is the file at path: not one
// unlinked since it was opened, nor replaced by another.
func atPath(fd int, path string) (bool, error) {
	var held, named unix.Stat_t
	if err := unix.Fstat(fd, &held); err != nil {
		return false, err
	}
	if err := unix.Stat(path, &named); err != nil {
		return false, err
	}
	return held.Dev == named.Dev && held.Ino == named.Ino, nil
}

// flockData takes a data file's flock: FlockWait, which a test replaces
// to play a file system without flock.
var flockData = FlockWait

// dataFile is a regular file a mutation changes, and which one it is.
type dataFile struct {
	path string
	id   [2]uint64
}

// lockDataFiles takes the data locks (lockData) of the files among
// paths that how locks exclusively, in (device, inode) order, which every
// process follows: two mutations naming hard links of the same files in
// opposite orders cannot wait for each other. A file replaced since the
// order was made (each write renames a new inode in) would be waited for
// out of order, holding later ones, and two processes then waited for
// each other until their timeouts: its locks are let go and the order made
// again. It returns the locks' descriptors and the (device, inode) of each
// file it ordered, by path: the file that path led to once its lock files
// were held.
func (f *FS) lockDataFiles(ctx context.Context, paths []string, how map[string]int, deadline time.Time) ([]int, map[string][2]uint64, error) {
	for attempt := 1; ; attempt++ {
		var files []dataFile
		for _, p := range paths {
			if how[p] != unix.LOCK_EX {
				continue
			}
			if st, err := f.lstatBelow(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				files = append(files, dataFile{path: p, id: [2]uint64{uint64(st.Dev), st.Ino}})
			}
		}
		slices.SortFunc(files, func(a, b dataFile) int {
			return cmp.Or(cmp.Compare(a.id[0], b.id[0]), cmp.Compare(a.id[1], b.id[1]))
		})
		var held []int
		locked := map[[2]uint64]bool{} // a file under two names (hard links) is locked once
		var err error
		at := "" // the file that failed
		for _, df := range files {
			var fd int
			if fd, err = f.lockData(ctx, df, deadline, locked); err != nil {
				at = df.path
				break
			}
			if fd >= 0 {
				held = append(held, fd)
			}
		}
		if err == nil {
			ids := make(map[string][2]uint64, len(files))
			for _, df := range files {
				ids[df.path] = df.id
			}
			return held, ids, nil
		}
		for _, fd := range held {
			unix.Close(fd)
		}
		if err != errReplaced {
			return nil, nil, err
		}
		if attempt >= 3 && time.Now().After(deadline) {
			return nil, nil, &lockError{err: errKeptReplaced, path: at}
		}
		// A growing pause: a writer that keeps replacing the file is let
		// finish, not raced in a busy loop.
		pause := time.NewTimer(min(time.Millisecond<<min(attempt, 6), 50*time.Millisecond))
		select {
		case <-ctx.Done():
			pause.Stop()
			return nil, nil, &lockError{err: ctx.Err(), path: at}
		case <-pause.C:
		}
	}
}

// errKeptReplaced is the lock timeout of a file replaced at every try.
var errKeptReplaced = fmt.Errorf("%w: the file kept being replaced", ErrLockTimeout)

// errReplaced is lockData's answer for a file that is no longer the one
// the order was made with.
var errReplaced = errors.New("replaced since the order was made")

// lockData takes an exclusive flock on the regular file df itself, once
// the lock files are held: those live in a state directory of one user's
// environment, and a process with another (another HOME, user or container
// sharing the tree) takes other lock files. The file's own lock excludes
// any two agentfs processes that change it. It is opened for its type
// first (O_PATH): a FIFO or a device is never opened for reading, which
// would release a writer blocked on it. -1 when there is no regular file
// to lock (gone, a directory), it may not be opened for reading, or it is
// in locked, the files (device, inode) this process holds, where it is
// added; errReplaced when the file at its path is not df's (device, inode)
// any more, before or after the wait.
func (f *FS) lockData(ctx context.Context, df dataFile, deadline time.Time, locked map[[2]uint64]bool) (int, error) {
	fd, st, err := f.openRegular(df.path)
	if err != nil {
		return -1, mapErr(err, df.path)
	}
	if fd < 0 {
		return -1, nil // absent, a link, not a regular file, unreadable
	}
	id := [2]uint64{uint64(st.Dev), st.Ino}
	if id != df.id {
		unix.Close(fd)
		return -1, errReplaced
	}
	if locked[id] {
		unix.Close(fd)
		return -1, nil
	}
	if err := flockData(ctx, fd, unix.LOCK_EX, deadline); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
			// A file system without flock (an NFS mount without its
			// lock service; macOS answers ENOTSUP, which is not its
			// EOPNOTSUPP): the lock files alone, as before.
			return -1, nil
		}
		if waitEnded(err) {
			return -1, &lockError{err: err, path: df.path}
		}
		return -1, err
	}
	now, err := f.lstatBelow(df.path)
	if err != nil {
		unix.Close(fd)
		return -1, nil // gone while this process waited
	}
	if st.Dev != now.Dev || st.Ino != now.Ino {
		unix.Close(fd)
		return -1, errReplaced
	}
	locked[id] = true
	return fd, nil
}

// openRegular opens the regular file at the real path p for reading
// (through its root, see atBelow), never following a link and never
// opening anything else (see lockData), with its stat: -1 when there is
// none to open. Its error is the limit on open files alone, which must
// fail the lock: it says nothing of the file.
func (f *FS) openRegular(p string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	none := func(err error) (int, unix.Stat_t, error) {
		if limitHint(err) != "" {
			return -1, st, err
		}
		return -1, st, nil
	}
	pfd := -1
	err := f.atBelow(p, func(dirfd int, name string) (err error) {
		pfd, err = unix.Openat(dirfd, name, pathFlags|unix.O_NOFOLLOW, 0)
		return err
	})
	if err != nil {
		return none(err)
	}
	pf := os.NewFile(uintptr(pfd), p)
	defer pf.Close()
	if unix.Fstat(int(pf.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, st, nil
	}
	rf, err := reopen(pf, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return none(err)
	}
	defer rf.Close()
	// A descriptor of its own, close-on-exec from the start: the lock's
	// holder closes it by number.
	fd, err := unix.FcntlInt(rf.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return none(err)
	}
	return fd, st, nil
}

// atBelow calls fn with the directory holding the real path p in a root,
// opened from the root's descriptor name by name with no link followed,
// and p's last name. The locks are taken by real path, placed before:
// opened by that name, a directory on it swapped since for a link out of
// the root was followed, and a file outside the root opened and locked.
// Here the swap fails the walk (ELOOP, ENOTDIR), as the mutation's own
// walk fails, and the lock's recheck (movedSinceLocked) places it again.
// A path in no root is a dead writer's, of other roots, whose recovery
// acts on it by name (atJournalDir): it is locked by name too.
func (f *FS) atBelow(p string, fn func(dirfd int, name string) error) error {
	t, ok := f.rootOf(p)
	if !ok {
		fd, err := unix.Open(filepath.Dir(p), pathFlags|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return fn(fd, filepath.Base(p))
	}
	if t.rel == "." {
		return unix.EISDIR // a root is never a file to lock
	}
	parts := strings.Split(t.rel, string(filepath.Separator))
	dirfd, owned := int(t.root.dir.Fd()), -1
	defer func() {
		if owned >= 0 {
			unix.Close(owned)
		}
	}()
	for _, part := range parts[:len(parts)-1] {
		fd, err := unix.Openat(dirfd, part, pathFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		if owned >= 0 {
			unix.Close(owned)
		}
		dirfd, owned = fd, fd
	}
	return fn(dirfd, parts[len(parts)-1])
}

// lstatBelow is the lstat of the real path p through its root (atBelow).
func (f *FS) lstatBelow(p string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := f.atBelow(p, func(dirfd int, name string) error {
		return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	return st, err
}

// ErrLockTimeout is FlockWait's error when its deadline passed.
var ErrLockTimeout = errors.New("lock timeout")

// waitEnded reports whether err ended a wait for a held lock (its timeout,
// or the call interrupted) rather than the lock failing.
func waitEnded(err error) bool {
	return errors.Is(err, ErrLockTimeout) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// lockGrace is the least a lock is waited for, --lock-timeout 0 included:
// a sweep of the state directory holds a lock file no one uses for
// microseconds (sweepLocks), an index's useless files' for milliseconds
// (index.Sweep), and a take with no wait was refused for them, blamed on
// a process that did not exist (130 of 2,000 while lock files were swept).
const lockGrace = 10 * time.Millisecond

// LockWaited is how long a wait for a lock with timeout lasted before
// giving up, as its LOCK_TIMEOUT says: at least lockGrace (--lock-timeout
// 0 said "for longer than 0s").
func LockWaited(timeout time.Duration) time.Duration {
	return max(timeout, lockGrace)
}

// lockWaitHook, when set by a test, is called when a lock is found held and
// the wait for it begins.
var lockWaitHook func()

// FlockWait takes a flock on fd, trying again with a growing pause until
// deadline (a blocked flock cannot be cancelled); ctx cancels the wait.
// Every flock agentfs waits for goes through it: the locks of files, the
// index's builders' lock, publish's folder lock. It waits at least
// lockGrace, whatever the deadline.
func FlockWait(ctx context.Context, fd, how int, deadline time.Time) error {
	if least := time.Now().Add(lockGrace); deadline.Before(least) {
		deadline = least
	}
	pause := 100 * time.Microsecond
	var timer *time.Timer
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return err
		}
		if timer == nil && lockWaitHook != nil {
			lockWaitHook()
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrLockTimeout
		}
		wait := min(pause, left)
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		pause = min(2*pause, lockPollMax)
	}
}

func (f *FS) lockErr(err error, t target, heldPath string, timeout time.Duration) error {
	// What was left of --lock-timeout 1s when the lock was asked for is
	// 999.99ms: said as the caller gave it.
	timeout = timeout.Round(time.Millisecond)
	if errors.Is(err, errKeptReplaced) {
		return fault.Errorf(fault.CodeLockTimeout, "%s kept being replaced by another writer while its lock was taken, for longer than %s.", heldPath, timeout).
			WithPath(t.display(f)).WithDetail("lockedPath", heldPath).WithDetail("timeout", timeout.String()).
			WithHint("retry when the other writer is done, or wait longer with --lock-timeout")
	}
	if errors.Is(err, errKeptMoved) {
		return fault.Errorf(fault.CodeLockTimeout, "%s kept leading to another file (a link swapped in or re-pointed) while its lock was taken, for longer than %s.", heldPath, timeout).
			WithPath(t.display(f)).WithDetail("lockedPath", heldPath).WithDetail("timeout", timeout.String()).
			WithHint("retry when the other writer is done, or wait longer with --lock-timeout")
	}
	if errors.Is(err, ErrLockTimeout) {
		// The wait it had, at least lockGrace, in the message and the
		// details alike (details.timeout said 0s beside 10ms).
		waited := LockWaited(timeout)
		return fault.Errorf(fault.CodeLockTimeout, "another agentfs process kept %s locked for longer than %s.", heldPath, waited).
			WithPath(t.display(f)).WithDetail("lockedPath", heldPath).WithDetail("timeout", waited.String()).
			WithHint("retry later, or wait longer with --lock-timeout")
	}
	return fault.Errorf(fault.CodeInterrupted, "the operation was interrupted while waiting for a lock.").
		WithPath(t.display(f)).WithHint("run it again; nothing was changed").WithCause(err)
}

// canonical places t as a mutation sees it: links on the path are resolved
// (the final one too when followFinal), a missing tail is kept as spelled,
// and the result is placed in the root that holds it, so that two spellings
// of one file name the same lock and the same file. With SymlinksRefuse any
// link is SYMLINK; a link out of every root is OUTSIDE_ROOT. The deny check
// applies to the resolved path. The operations that follow still go through
// the root's handle, so a link swapped in afterwards cannot lead outside.
func (f *FS) canonical(t target, followFinal bool) (target, error) {
	full := filepath.Join(t.root.path, t.rel)
	var real string
	if followFinal || t.rel == "." {
		real = f.resolveExisting(full)
	} else {
		real = filepath.Join(f.resolveExisting(filepath.Dir(full)), filepath.Base(full))
	}
	display := t.display(f)
	if real != full && f.policy == SymlinksRefuse {
		return target{}, fault.Errorf(fault.CodeSymlink, "the path goes through a link, and links are refused.").
			WithPath(display).WithHint("use the link's target path, or run with --symlinks within")
	}
	if rt, ok := f.rootOf(real); ok {
		if err := f.checkDeny(real, display); err != nil {
			return target{}, err
		}
		rt.abs = t.abs
		return rt, nil
	}
	if moved := rootMoved(t.root); moved != nil {
		return target{}, moved.WithPath(display)
	}
	return target{}, fault.Errorf(fault.CodeOutsideRoot, "the path goes through a link that leads outside the allowed roots.").
		WithPath(display).WithHint("use a path whose links stay inside the roots, or add a root with --root")
}

// rootMoved is the error of a request under the root r once r's name, as
// given or with its links resolved, leads elsewhere (the directory
// renamed, a link re-pointed or another directory in its place): the
// files are reached through the root held open, the locks by its name, so
// nothing is read or changed. (A mutation's path was said to go through a
// link out of the roots, though none lay under the root.)
func rootMoved(r *root) *fault.Error {
	if r.named() {
		return nil
	}
	hint := "start agentfs again (a new batch or MCP session) with --root naming the directory as it is now; nothing was changed"
	if _, err := os.Lstat(r.given); errors.Is(err, os.ErrNotExist) {
		return fault.Errorf(fault.CodeOutsideRoot, "the root %s was removed or renamed away since agentfs opened it: nothing is at its name now.", r.given).WithHint("%s", hint)
	}
	return fault.Errorf(fault.CodeOutsideRoot, "the root %s was renamed or replaced since agentfs opened it: its name leads elsewhere now.", r.given).WithHint("%s", hint)
}

// resolveExisting resolves the links of the longest existing prefix of the
// absolute path p and appends the rest as spelled. A link that leads
// nowhere yet is followed to where it leads, as open(2) with O_CREAT
// follows it: a write through it creates its target.
func (f *FS) resolveExisting(p string) string { return f.resolveFrom(p, 0) }

// maxLinks bounds the dangling links resolveFrom follows, as the kernel's
// 40 bounds a lookup's.
const maxLinks = 40

func (f *FS) resolveFrom(p string, links int) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if real, err := f.evalSymlinks(q); err == nil {
			return filepath.Join(real, rest)
		}
		if target, err := os.Readlink(q); err == nil && links < maxLinks {
			if !filepath.IsAbs(target) {
				// Relative to the directory that holds the link, as the
				// kernel reads it: that directory's own links resolved
				// first (ld/dang, ld a link to a/b, dang to ../x: a/x).
				dir := filepath.Dir(q)
				if real, err := f.evalSymlinks(dir); err == nil {
					dir = real
				}
				target = filepath.Join(dir, target)
			}
			return f.resolveFrom(filepath.Join(target, rest), links+1)
		}
		if filepath.Dir(q) == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}
