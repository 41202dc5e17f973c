package s3fs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// A transaction's journal is its lease. The committer writes in it how
// long the lease lasts (defaultLease) and, while it commits, rewrites it
// every third of that (a new Renewed count, so a new ETag). A journal not
// written for longer than its lease, on the store's clock, is a dead
// process's: the next call claims it by rewriting it If-Match the ETag it
// listed (a renewal in between wins), rolls it back (or finishes a move,
// see rollsForward) and removes it. The
// committer's commit point, a rewrite that says it committed, is If-Match
// the ETag of its own last write, so a claimed journal never commits, and
// a committed one is only removed; and a committer
// that could not renew for two thirds of its lease makes no further change
// (a recovery may be under way), so a live commit, however long, is never
// rolled back under it.

// defaultLease is how long a journal lives unrenewed: 15 s, renewed every
// 5 s, dwarfs a renewal's round trip and the store's clock resolution (1 s).
const defaultLease = 15 * time.Second

// lease is a transaction's journal while its committer lives.
type lease struct {
	f   *FS
	key string
	// renew is how often the journal is rewritten; 0 for never.
	renew time.Duration

	mu   sync.Mutex
	j    journal
	etag string
	// renewed is when the latest write of the journal that succeeded was
	// sent, by the monotonic clock, and renewedWall by the wall clock: a
	// recovery judges the lease on the store's clock, which goes on while
	// this machine sleeps, as the wall clock does and the monotonic clock
	// does not. (Not the store's clock as its answers' Date says: one odd
	// answer would end a live lease.)
	renewed, renewedWall time.Time
	// lost ends the lease: the journal claimed by another process, or
	// gone, or the commit point's outcome unknown; expired is set when
	// it could not be renewed in time.
	lost, expired error

	stop chan struct{}
	done chan struct{}
}

// begin writes the journal j at key, new, and starts renewing it.
func (f *FS) begin(ctx context.Context, key string, j journal) (*lease, error) {
	j.Lease = f.lease.String()
	j.Moves = slices.Clone(j.Moves)
	l := &lease{f: f, key: key, renew: f.lease / 3, j: j, stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.write(ctx, s3client.Condition("", "*")); err != nil {
		return nil, err
	}
	if l.renew <= 0 {
		close(l.done)
		return l, nil
	}
	go l.heartbeat(context.WithoutCancel(ctx))
	return l, nil
}

// write puts the journal under the conditions h; l.mu is held, or l is
// not shared yet. A write answered with an error is made when the journal
// now is that write's (see landed). A rewrite refused is this
// process's own when the journal is there unclaimed (a write of its own
// whose answer was lost, unproven): it is made again over that version.
// Else the refusal, taken for a recovery's claim, would leave the journal
// behind, and its recovery undo what other calls did since. The lease is
// lost only when the journal is claimed or gone.
func (l *lease) write(ctx context.Context, h http.Header) error {
	data, err := json.Marshal(l.j)
	if err != nil {
		return err
	}
	// Each write carries a mark of its own, by which it is known once its
	// answer is lost (see landed): its bytes alone tell it on no store
	// whose ETags are no MD5 of them.
	mark := newID()
	put := func(h http.Header) (s3client.ObjectInfo, error) {
		h.Set("X-Amz-Meta-"+writeMeta, mark)
		return l.f.c.Put(ctx, l.key, data, h)
	}
	sent, sentWall := time.Now(), time.Now().Round(0)
	o, err := put(h.Clone())
	if refused(err) && h.Get("If-Match") != "" {
		cur, etag, rerr := l.f.readJournal(ctx, l.key)
		if code, _ := s3client.Code(rerr); rerr != nil && code != "NoSuchKey" {
			// Claimed or not, it cannot tell: a later write, or the
			// commit point's settling, reads it again.
			return l.f.mapErr(err, journalDir)
		}
		if rerr == nil && !cur.Claimed && !cur.ended() {
			o, err = put(s3client.Condition(etag, ""))
		}
	}
	if refused(err) {
		l.lost = lostLease()
		return l.lost
	}
	if err != nil {
		now, _, made, _ := l.f.landed(ctx, l.key, data, writeMeta, mark)
		if !made {
			return l.f.mapErr(err, journalDir)
		}
		o = now
	}
	l.etag, l.renewed, l.renewedWall = o.ETag, sent, sentWall
	return nil
}

func lostLease() error {
	return fault.Errorf(fault.CodeIOError, "the transaction lost its lease: another process took its journal for a dead one's and rolls it back.").
		WithHint("check the files it changed, then redo the change")
}

func (l *lease) heartbeat(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.renew)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.lost == nil {
			l.j.Renewed++
			// A failed renewal is retried at the next tick; check stops the
			// commit once the lease may have run out.
			_ = l.write(ctx, s3client.Condition(l.etag, ""))
		}
		lost := l.lost != nil
		l.mu.Unlock()
		if lost {
			return
		}
	}
}

// check refuses a further change once the lease is lost or may have run
// out.
func (l *lease) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	since := max(time.Since(l.renewed), time.Now().Round(0).Sub(l.renewedWall))
	if l.expired == nil && l.renew > 0 && since > l.f.lease-l.renew {
		l.expired = fault.Errorf(fault.CodeIOError, "the transaction could not renew its lease for %s: the store is out of reach.", since.Round(time.Second)).
			WithHint("check that the store is up, then read the files it changes: this call or the next undoes the transaction (a move that began deleting its sources is finished instead)")
	}
	return l.expired
}

// isLost reports whether the lease is lost (see lease.lost).
func (l *lease) isLost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost != nil
}

// update rewrites the journal as j.
func (l *lease) update(ctx context.Context, j journal) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	j.Lease, j.Renewed = l.j.Lease, l.j.Renewed+1
	// Its own moves: the renewals marshal them while the move writes its
	// own (New, tried).
	j.Moves = slices.Clone(j.Moves)
	l.j = j
	return l.write(ctx, s3client.Condition(l.etag, ""))
}

// commit stops the renewals and rewrites the journal committed, If-Match
// its last version: after all changes, the commit point. Its success
// proves that no recovery claimed the journal before it (a claim is a
// rewrite too, and a journal removed answers a rewrite with 404); after
// it, a recovery only removes the journal. The removal of the journal, its
// copies and claims is then housekeeping: left, a later call does it.
//
// The removal was the commit point, and could not tell: a store answers a
// DELETE If-Match of a key already gone with success (versitygw does), so
// a removal delayed past the lease, after a recovery had rolled the
// transaction back and removed the journal, reported a commit.
func (l *lease) commit(ctx context.Context, j journal) error {
	l.halt()
	if err := l.check(); err != nil {
		return err
	}
	// Committed, the journal names no change: an older agentfs, which does
	// not know Committed, then rolls nothing back. Its copies and claims
	// are removed here, or, left, by later calls (the copies it names,
	// claims whose journal is gone or committed).
	done := j.endedAs(true)
	if err := l.update(ctx, done); err != nil {
		if l.lost != nil {
			return err // claimed: the recovery rolls it back
		}
		if err := l.settle(ctx, done, err); err != nil {
			return err
		}
	}
	_ = l.f.c.Delete(ctx, l.key, l.etag)
	l.f.afterJournal(ctx, l.key, j)
	return nil
}

// settle decides a commit point answered with an error, unproven (see
// write), by reading the journal, a few times: committed, it was made;
// claimed, a recovery rolls the transaction back; neither, it was not
// made, and is made again. After the last try the journal is rewritten,
// If-Match the version read, as it was: a commit point still on its way
// (If-Match an older version) can no longer land, and the caller rolls
// back. Gone or never read, no one can tell whether it committed or a
// recovery rolled it back, and the answer is an error that says so:
// undoing would undo what other calls may have built on a commit.
func (l *lease) settle(ctx context.Context, j journal, err error) error {
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		cur, etag, rerr := l.f.readJournal(ctx, l.key)
		code, _ := s3client.Code(rerr)
		switch {
		case rerr == nil && cur.Committed && !cur.Claimed:
			l.etag = etag
			return nil
		case rerr == nil && cur.Claimed:
			return l.end(lostLease())
		case rerr == nil && try == 4:
			return l.fence(ctx, cur, etag, err)
		case rerr == nil:
			l.etag = etag
			if err = l.update(ctx, j); err == nil || l.lost != nil {
				return err
			}
		case code == "NoSuchKey":
			return l.unknown(err, "its journal is gone: it committed, or another process rolled it back",
				"read the files it changes, then redo what is missing")
		case try == 4:
			return l.unknown(err, "its journal cannot be read: the next call rolls the transaction back, or removes its journal if it committed", recoverHint)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// fence rewrites the journal cur, read at etag and not committed, as it
// is, If-Match etag, so that no commit point sent before can land, and
// returns err, the commit point's failure, for the caller to roll back.
// Refused, the journal is read again: committed meanwhile, the
// transaction is done; else its outcome is unknown.
func (l *lease) fence(ctx context.Context, cur journal, etag string, err error) error {
	cur.Renewed++
	o, perr := l.f.putJournal(ctx, l.key, etag, cur)
	if perr == nil {
		l.etag = o.ETag
		return err
	}
	if now, etag, rerr := l.f.readJournal(ctx, l.key); rerr == nil && now.Committed && !now.Claimed {
		l.etag = etag
		return nil
	}
	return l.unknown(err, fmt.Sprintf("so did the rewrite that would exclude it (%v)", perr), recoverHint)
}

// recoverHint is the hint of a commit point whose outcome a later call
// settles.
const recoverHint = "run agentfs --recover, which waits for its lease, then read the files it changes"

// unknown ends the lease on a commit point, failed with err, whose outcome
// cannot be known, and why.
func (l *lease) unknown(err error, why, hint string) error {
	return l.end(fault.Errorf(fault.CodeIOError, "the transaction's outcome is unknown: its commit point failed (%v), and %s.", err, why).WithHint("%s", hint))
}

// end records err as the lease's end: the caller's rollback then undoes
// nothing.
func (l *lease) end(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = err
	return err
}

// abandon removes the journal of a transaction rolled back, unless
// another process claimed it (and removes it).
func (l *lease) abandon(ctx context.Context, j journal) error {
	l.halt()
	if l.lost != nil {
		return nil
	}
	// Ended before it goes: left (its removal failed), it is not rolled
	// back again over what other calls did since.
	_ = l.update(ctx, j.endedAs(false))
	if l.lost != nil {
		return nil
	}
	err := l.f.dropJournal(ctx, l.key, l.etag, j)
	if !refused(err) {
		return err
	}
	// Claimed meanwhile, or rewritten by a write of this process whose
	// answer was lost: then still its own, and removed as it is now (left,
	// a journal that says removals began would have a recovery put back
	// a file another writer removed since).
	cur, etag, err := l.f.readJournal(ctx, l.key)
	if err != nil || cur.Claimed {
		return nil
	}
	if err := l.f.dropJournal(ctx, l.key, etag, j); !refused(err) {
		return err
	}
	return nil
}

// halt stops the renewals.
func (l *lease) halt() {
	select {
	case <-l.done:
	default:
		close(l.stop)
		<-l.done
	}
}

// RecoverFirst makes the store's first request wait for Recover: the
// transactions of dead processes are rolled back before anything is read
// or written, and only when a call uses the store (a call on the local
// root of a mixed workspace never reaches it). A failed recovery fails
// that request, and is tried again at the next.
func (f *FS) RecoverFirst() {
	f.c.Prepare(func(ctx context.Context) error {
		_, err := f.Recover(ctx)
		return err
	})
}

// settlePoll is how often Settle looks again at the journals in flight.
const settlePoll = time.Second

// Settle recovers as Recover does, then waits, up to timeout, for every
// transaction still in flight to end, or to die and be rolled back. It
// never rolls back a live lease: one still live after timeout is
// LOCK_TIMEOUT. Live in its answer counts the transactions waited for.
func (f *FS) Settle(ctx context.Context, timeout time.Duration) (Recovery, error) {
	deadline := time.Now().Add(timeout)
	var total Recovery
	for round := 0; ; round++ {
		rec, err := f.Recover(ctx)
		total.RolledBack += rec.RolledBack
		total.Finished += rec.Finished
		total.CopiesRemoved += rec.CopiesRemoved
		if round == 0 {
			total.Live = rec.Live
		}
		if err != nil || rec.Live == 0 {
			return total, err
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			// details.timeout is the wait, as the message says it and
			// as the local backend's LOCK_TIMEOUT carries it.
			if timeout >= f.lease {
				// Live at the first look and still within its lease a
				// lease later: renewed meanwhile, by a live process.
				return total, fault.Errorf(fault.CodeLockTimeout, "%d transaction(s) still in flight after %s, their leases renewed meanwhile: their processes are alive.", rec.Live, timeout).
					WithDetail("timeout", timeout.String()).
					WithHint("retry once they are done; a live transaction is never rolled back")
			}
			// A journal within its lease may be a dead process's, rolled
			// back only once the lease has run out.
			return total, fault.Errorf(fault.CodeLockTimeout, "%d transaction(s) still in flight after %s: within the lease of %s from a journal's last renewal, its process is alive or died too recently to tell.", rec.Live, timeout, f.lease).
				WithDetail("timeout", timeout.String()).
				WithHint("retry with a --lock-timeout over %s: a transaction whose process died is then rolled back, and a live one never is", f.lease)
		}
		t := time.NewTimer(min(wait, settlePoll))
		select {
		case <-ctx.Done():
			t.Stop()
			return total, ctx.Err()
		case <-t.C:
		}
	}
}
