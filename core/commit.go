package core

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// CommitGate lets a caller give up on a tool at once (SIGINT, a deadline)
// without ever reporting a change that then happens, or denying one that
// did. Every mutation passes the gate at its point of no return and holds
// it until its change is durable; Close waits for a change in progress and
// then shuts the gate, so a mutation that has not reached it never will. A
// computation that cannot be cancelled (a regex on a huge line, a large
// batch) is then simply abandoned: the process exits and the kernel frees
// its locks.
type CommitGate struct {
	mu      sync.Mutex
	closed  bool
	entered bool
}

// enter passes the gate, false once it is closed; leave must follow a true.
func (g *CommitGate) enter() bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.entered = true
	return true
}

func (g *CommitGate) leave() { g.mu.Unlock() }

// Close shuts the gate, waiting for a change in progress to be made whole,
// and reports whether a mutation passed it: its tool is then past its point
// of no return, and its outcome must be waited for and reported.
func (g *CommitGate) Close() (committed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.entered
}

// beginCommit is a mutation's point of no return: INTERRUPTED when ctx is
// done or the gate is closed, else the context to make the change with and
// the release to call once it is made (or has failed). That context is
// ctx without its end: a signal from here on waits for the change (the
// gate), which on an object store is many requests, each of which a done
// context failed, the rollback's too, so that a transaction was left half
// made for a recovery while the tool answered INTERRUPTED. It carries ctx
// as its preparation (backend.WithPreparation): a backend's slow work
// that nothing needs undone (a copy to another file system) still stops
// with the caller.
func (t *Tools) beginCommit(ctx context.Context) (context.Context, func(), error) {
	if err := fault.Interrupted(ctx); err != nil {
		return nil, nil, err
	}
	done := func() {}
	if t.Commits != nil {
		if !t.Commits.enter() {
			return nil, nil, fault.Errorf(fault.CodeInterrupted, "the operation was interrupted before it changed anything.").
				WithHint("run it again; nothing was changed")
		}
		done = t.Commits.leave
	}
	return backend.WithPreparation(context.WithoutCancel(ctx), ctx), done, nil
}

// commitWrite writes data through the gate, the point of no return of
// write, append and edit, as a compare-and-swap against cur, the file as
// the attempt read it: a file changed since is errConflict. exclusive is
// the caller's create, whose EXISTS is an answer, not a race.
func (t *Tools) commitWrite(ctx context.Context, m backend.MutableFS, path string, data []byte, cur current, opts backend.WriteOptions) (backend.FileInfo, error) {
	if !cur.exists {
		// A creation has no version to swap against: where a removal not
		// yet committed left the file missing, its rollback would find
		// this file there, keep it as another writer's and lose the
		// original.
		if err := t.settledRead(ctx, path, ""); err != nil {
			return backend.FileInfo{}, err
		}
	}
	ctx, done, err := t.beginCommit(ctx)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer done()
	exclusive := opts.IfAbsent
	opts = swapOn(cur, opts)
	opts.Stated = true // cur is what this attempt found (a Stat, or the read of an edit)
	fi, err := m.WriteFile(ctx, path, data, opts)
	return fi, conflictOf(err, opts, exclusive)
}

// settledRead is errConflict (the mutation reads again) while the file at
// path, read at version, is a change of a transaction not yet committed
// (backend.Settler): an answer that writes nothing rests on what was read,
// and a write reported noChange over a change that was then undone was a
// success lost.
func (t *Tools) settledRead(ctx context.Context, path, version string) error {
	s, ok := t.FS.(backend.Settler)
	if !ok {
		return nil
	}
	err := s.Settled(ctx, path, version)
	if err != nil && fault.AsError(err).Code == fault.CodeStale {
		return fmt.Errorf("%w: %w", errUnsettled, err)
	}
	return err
}

// settledMissing is err, which found path missing, once no removal not
// yet committed took the file (settledRead): a NOT_FOUND over such a
// removal, once it is undone, named a file that is there.
func (t *Tools) settledMissing(ctx context.Context, path string, err error) error {
	if !fault.MissingPath(err) {
		return err
	}
	return t.settledRefusal(ctx, path, "", err)
}

// settledRefusal is err, a refusal resting on the content of path read at
// version (NO_MATCH, a result over the edit limit), once that content is
// no change of a transaction not yet committed (settledRead).
func (t *Tools) settledRefusal(ctx context.Context, path, version string, err error) error {
	if serr := t.settledRead(ctx, path, version); serr != nil {
		return serr
	}
	return err
}

// errUnsettled is errConflict of an attempt that found a change not yet
// committed (settledRead): its cause says what the mutation waits for.
var errUnsettled = fmt.Errorf("%w: a change not yet committed", errConflict)

// maxAttempts bounds the runs of one mutation whose compare-and-swap keeps
// finding the file changed by another writer.
const maxAttempts = 8

// errConflict marks an attempt whose compare-and-swap found the file
// changed since the attempt read it: the mutation runs again.
var errConflict = errors.New("the file changed during the mutation")

// mutate runs attempt, one read-decide-write of paths, so that no change
// made by another writer in between is lost. On a backend with locks it
// runs under the locks of every path (a Locker for one path, a
// MultiLocker for several); on any backend its writes are compare-and-swaps
// against what it read (commitWrite, removeAt, a transaction's ops), and
// an attempt that loses the race (or whose read kept finding the file
// replaced, backend.ErrChangedDuringRead) runs again on the new content, with a
// growing random pause, at least maxAttempts times and on until the lock
// timeout (then LOCK_TIMEOUT): the writers of a backend without locks (an
// object store) wait for each other within --lock-timeout, as those of one
// with locks do. A read that met a change is a lost race too: a large
// object's ranged read meets every append made during it.
func mutate[R any](ctx context.Context, t *Tools, m backend.MutableFS, paths []string, attempt func() (R, error)) (R, error) {
	return mutateBy(ctx, t, m, paths, time.Now().Add(t.LockTimeout), attempt)
}

// mutateBy is mutate within a --lock-timeout that began at deadline less
// LockTimeout: the locks wait what is left of it.
func mutateBy[R any](ctx context.Context, t *Tools, m backend.MutableFS, paths []string, deadline time.Time, attempt func() (R, error)) (R, error) {
	var zero R
	unlock, err := t.lock(ctx, m, paths, max(time.Until(deadline), 0))
	if err != nil {
		return zero, err
	}
	defer unlock()
	lost := func(err error) string {
		// Of many files, the one that kept changing: an agent retries
		// it, or leaves it out. Of one, that one; the message names any
		// other it met.
		if p := fault.AsError(err).Path; p != "" && len(paths) > 1 {
			return p
		}
		return t.FS.Display(paths[0])
	}
	return untilWon(ctx, deadline, t.LockTimeout, lost, attempt)
}

// untilWon runs attempt again while it loses a race (errConflict,
// backend.ErrChangedDuringRead), after a growing random pause, at least
// maxAttempts times and on until deadline, the end of a --lock-timeout of
// timeout, then fails LOCK_TIMEOUT naming the path lost gives for the
// last race lost.
func untilWon[R any](ctx context.Context, deadline time.Time, timeout time.Duration, lost func(error) string, attempt func() (R, error)) (R, error) {
	var zero R
	for n := 1; ; n++ {
		res, err := attempt()
		if !errors.Is(err, errConflict) && !errors.Is(err, backend.ErrChangedDuringRead) {
			return res, err
		}
		if n >= maxAttempts && !time.Now().Before(deadline) {
			return zero, timedOut(n, lost(err), err, waitedFor(deadline, timeout))
		}
		pause := time.NewTimer(time.Duration(rand.Int64N(int64(time.Millisecond) << min(n, maxAttempts))))
		select {
		case <-ctx.Done():
			pause.Stop()
			return zero, fault.Interrupted(ctx)
		case <-pause.C:
		}
	}
}

// waitedFor is details.timeout of a LOCK_TIMEOUT at the end (deadline)
// of a --lock-timeout of timeout, as a lock's gives it: the timeout, or
// with --lock-timeout 0 what the attempts took.
func waitedFor(deadline time.Time, timeout time.Duration) string {
	if timeout > 0 {
		return timeout.String()
	}
	return time.Since(deadline).Round(time.Millisecond).String()
}

// timedOut is the LOCK_TIMEOUT of a mutation of path whose n attempts,
// over waited, lost their races, the last with err. What that one met (a transaction
// not yet committed, a move under way) tells the caller what it waits
// for; a transaction's hint, how long.
func timedOut(n int, path string, err error, waited string) error {
	e := fault.Errorf(fault.CodeLockTimeout, "the file kept changing during the change: %d attempts lost the race to other writers.", n).
		WithPath(path).WithDetail("timeout", waited).WithHint("retry when the other writers are done; nothing was changed")
	var why *fault.Error
	if !errors.As(err, &why) {
		return e
	}
	if errors.Is(err, errUnsettled) {
		e.Message = fmt.Sprintf("%d attempts waited for another writer's change to be committed or undone.", n)
		if why.Hint != "" {
			e.WithHint("%s; nothing was changed", strings.TrimSuffix(why.Hint, "; nothing was changed"))
		}
	}
	e.Message += " The last: " + why.Message
	if why.Path != "" && why.Path != path {
		e.Message = strings.TrimSuffix(e.Message, ".") + " (" + why.Path + ")."
	}
	return e
}

// checkDry fails as a commit of ops would before it stages them, where the
// backend can tell (backend.CommitChecker): a dry run that passed where
// its run is refused (a hard link, a file the caller may not write)
// promised a change that cannot be made.
func (t *Tools) checkDry(ctx context.Context, ops []backend.Op) error {
	if c, ok := t.FS.(backend.CommitChecker); ok {
		return c.CheckCommit(ctx, ops)
	}
	return nil
}

// lock takes the locks of paths where the backend has them, waiting up to
// timeout.
func (t *Tools) lock(ctx context.Context, m backend.MutableFS, paths []string, timeout time.Duration) (func(), error) {
	if ml, ok := m.(backend.MultiLocker); ok {
		return ml.LockAll(ctx, paths, timeout)
	}
	if l, ok := m.(backend.Locker); ok && len(paths) == 1 {
		return l.Lock(ctx, paths[0], timeout)
	}
	return func() {}, nil
}

// conflictOf turns the compare-and-swap failure of a write or removal into
// errConflict: STALE under IfVersion, EXISTS under an IfAbsent that the
// tool set itself (exclusive false) because the path was missing.
func conflictOf(err error, opts backend.WriteOptions, exclusive bool) error {
	if err == nil {
		return nil
	}
	switch fault.AsError(err).Code {
	case fault.CodeStale:
		if opts.IfVersion != "" {
			return raced(err, fault.CodeStale)
		}
	case fault.CodeExists:
		if opts.IfAbsent && !exclusive {
			return raced(err, fault.CodeExists)
		}
	}
	return err
}

// raced marks err as errConflict when its code is one of codes: the
// compare-and-swap failures that mean another writer won the race. A
// transaction that could not be undone whole (backend.ErrPartlyUndone) is
// not one: run again, it would build on the files it left changed.
func raced(err error, codes ...fault.Code) error {
	if err != nil && !errors.Is(err, backend.ErrPartlyUndone) && slices.Contains(codes, fault.AsError(err).Code) {
		return fmt.Errorf("%w: %w", errConflict, err)
	}
	return err
}

// swapOn sets the compare-and-swap of a change to cur, the path as the
// attempt read it.
func swapOn(cur current, opts backend.WriteOptions) backend.WriteOptions {
	if cur.exists {
		opts.IfVersion = cur.info.Version
	} else {
		opts.IfAbsent = true
	}
	return opts
}
