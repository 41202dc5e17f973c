package s3fs

import (
	"context"

	"github.com/agentfs/agentfs/fault"
)

// A transaction's changes are in the store before its commit point, and a
// failure undoes them. A writer that read one and swapped its own change
// in over it built on a change about to be undone; the rollback keeps that
// writer's change, whose success was reported, and so left the
// transaction half made: a replace whose second file lost its race kept
// its change to the first, under another writer's edit, and answered
// STALE, "nothing was changed". So a compare-and-swap against a version
// that a transaction wrote (marked txnMeta) first waits for that
// transaction to end: its journal gone or ended, or recovered once its
// lease is over. Until then the swap is STALE, a lost race, which a
// mutation retries within --lock-timeout as a writer waits for a lock.

// markKey is the key of marks: an object's version.
func markKey(key, etag string) string { return key + "\x00" + etag }

// settled fails with STALE while the version of c is a change of a
// transaction in flight; it is nil for a version no transaction wrote, or
// one whose transaction has ended, and when c is no longer at version (the
// swap then fails by itself).
func (f *FS) settled(ctx context.Context, c, version string) error {
	key := f.key(c)
	mark, seen := f.marks.Load(markKey(key, version))
	if !seen {
		o, found, err := f.head(ctx, c)
		if err != nil || !found || o.ETag != version {
			return err
		}
		mark = o.Meta[txnMeta]
	}
	id, _ := mark.(string)
	if id == "" {
		return nil
	}
	if _, done := f.ended.Load(id); done {
		return nil
	}
	o, found, err := f.headKey(ctx, f.prefix+journalDir+"/"+id+".json")
	if err != nil {
		return err
	}
	if found {
		state, err := f.recoverOne(ctx, o, f.c.Now())
		if err != nil {
			return err
		}
		if state == live {
			return fault.Errorf(fault.CodeStale, "the file holds a change of another transaction, not yet committed.").WithPath(c).
				WithHint("retry once that transaction is done: it commits or is undone within its lease")
		}
	}
	f.ended.Store(id, true)
	return nil
}
