package s3fs

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
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

// versionMarks are the txnMeta marks ("" for none) of the versions this
// process saw at a HEAD, by key and ETag: the read before a swap HEADs the
// version it swaps against. Each keeps what a write over the version
// keeps of it too (see carry). Bounded, for a long MCP session:
// forgotten, a version's mark costs a HEAD again.
type versionMarks struct {
	mu sync.Mutex
	m  map[string]seenVersion
}

type seenVersion struct {
	mark         string
	kept, stored http.Header
	tags         int
	at           time.Time // when the store answered so
}

const maxVersionMarks = 4096

// carryFresh is the age up to which a write keeps what an answer told of
// the version it replaces (see seenAt): tags put with PutObjectTagging, and
// a storage class changed by a copy in place, leave the ETag as it was,
// and an agent in a long MCP session may write minutes after its read. A
// call of its own (the CLI's) asks anyway; a read and a write within one
// call, or at once, are spared the HEAD, and so is each file of a
// replace over a large tree, which may take seconds between its reads and
// its writes.
const carryFresh = time.Minute

// store keeps the mark and headers of o, an answer about key.
func (v *versionMarks) store(key string, o s3client.ObjectInfo) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || len(v.m) >= maxVersionMarks {
		v.m = map[string]seenVersion{}
	}
	v.m[key+"\x00"+o.ETag] = seenVersion{o.Meta[txnMeta], o.Kept, o.Stored, o.Tags, time.Now()}
}

func (v *versionMarks) load(key, etag string) (mark string, seen bool) {
	s, seen := v.seen(key, etag)
	return s.mark, seen
}

func (v *versionMarks) seen(key, etag string) (seenVersion, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, seen := v.m[key+"\x00"+etag]
	return s, seen
}

// Settled implements backend.Settler.
func (f *FS) Settled(ctx context.Context, p, version string) error {
	c, err := f.place(ctx, p)
	if err != nil {
		return err
	}
	return f.settledAt(ctx, c, version)
}

// settledAt is Settled of c, a clean path.
func (f *FS) settledAt(ctx context.Context, c, version string) error {
	if version == "" {
		return f.removedInFlight(ctx, c)
	}
	id, at, err := f.markOf(ctx, c, version)
	if err != nil || !at {
		return err // no longer at version: nothing rests on it
	}
	return f.settledMark(ctx, c, version, id)
}

// markOf is the mark of the transaction that wrote c at version ("" for
// none), known or asked with a HEAD; at is false when c is no longer there.
func (f *FS) markOf(ctx context.Context, c, version string) (id string, at bool, err error) {
	if id, seen := f.marks.load(f.key(c), version); seen {
		return id, true, nil
	}
	o, found, err := f.head(ctx, c)
	if err != nil || !found || o.ETag != version {
		return "", false, err
	}
	return o.Meta[txnMeta], true, nil
}

// settledMark is Settled of c read at version, which the transaction id
// wrote ("" for none: no request).
func (f *FS) settledMark(ctx context.Context, c, version, id string) error {
	if id == "" {
		return nil
	}
	if err := f.txnEnded(ctx, c, id); err != nil {
		return err
	}
	if _, ok := f.committed.Load(id); ok {
		return nil
	}
	// A transaction's change, which has ended: committed, it stands;
	// undone, the file is no longer at version with its mark (the same
	// bytes put back or written again may have the ETag, an MD5, but
	// another mark or none). An ended transaction's change still there proves it
	// committed (its journal goes only once every change is undone), so
	// that the next file it wrote needs no HEAD: a replace reads many a
	// transaction wrote.
	o, found, err := f.head(ctx, c)
	if err != nil {
		return err
	}
	if !found || o.ETag != version || o.Meta[txnMeta] != id {
		return fault.Errorf(fault.CodeStale, "the file held a change of a transaction that was then undone.").WithPath(c).
			WithHint("read the file again")
	}
	f.committed.Store(id, true)
	return nil
}

// settled fails with STALE while the version of c is a change of a
// transaction in flight; it is nil for a version no transaction wrote, or
// one whose transaction has ended, and when c is no longer at version (the
// swap then fails by itself).
func (f *FS) settled(ctx context.Context, c, version string) error {
	id, at, err := f.markOf(ctx, c, version)
	if err != nil || !at || id == "" {
		return err
	}
	return f.txnEnded(ctx, c, id)
}

// txnEnded fails with STALE while the transaction id, whose change c holds,
// is in flight; one that died is recovered there and then.
func (f *FS) txnEnded(ctx context.Context, c, id string) error {
	if _, done := f.ended.Load(id); done {
		return nil
	}
	o, found, err := f.headKey(ctx, f.journalKey(id))
	if err != nil {
		return err
	}
	state := gone
	if found {
		if state, err = f.recoverOne(ctx, o, f.c.Now(), nil); err != nil {
			return err
		}
		if state == live {
			return fault.Errorf(fault.CodeStale, "the file holds a change of another transaction, not yet committed.").WithPath(c).
				WithHint("%s", hintInFlight)
		}
	}
	f.ended.Store(id, true)
	switch state {
	case rolledBack:
		// Undone here and now: the change read is gone (a file it
		// created with it, which a DELETE If-Match of the store then
		// reported removed).
		return fault.Errorf(fault.CodeStale, "the file held a change of a transaction that died, and is now undone.").WithPath(c).
			WithHint("read the file again")
	case finished:
		// The change stands, but its move's sources went here and now:
		// an answer that rests on them too was planned before.
		return fault.Errorf(fault.CodeStale, "the file held a copy of a move that died, now finished.").WithPath(c).
			WithHint("read the files again")
	}
	return nil
}

// hintInFlight is the hint of a change that waits for a transaction in
// flight.
const hintInFlight = "retry once that transaction is done: it commits or is undone within its lease"

// settledReader is a reader of one version of c, which the transaction
// mark wrote ("" for none), with the backend's Settled.
type settledReader struct {
	io.ReadCloser
	f                *FS
	c, version, mark string
}

// Read fails as a read of c does (its path, the store's hint): a search
// gave the body's failure bare, with a local file system's hint.
func (r *settledReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = r.f.mapErr(err, r.c)
	}
	return n, err
}

// Settled implements backend.SettledReader.
func (r *settledReader) Settled(ctx context.Context) error {
	return r.f.settledMark(ctx, r.c, r.version, r.mark)
}

// removedInFlight fails with STALE while a transaction in flight removes
// (or moves away) c, found missing, or a file below c: that removal may
// yet be undone; or creates a file below c, a directory (which has no
// version) that may hold nothing else once it is undone (a file's change
// there leaves c as it is). One that died is recovered there and then,
// and STALE too, as one that ended meanwhile. It costs a listing of the
// journals, and a read of each.
func (f *FS) removedInFlight(ctx context.Context, c string) error {
	key, below := f.key(c), f.dirKey(c)
	return f.eachInFlight(ctx, c, "", func(o s3client.ObjectInfo, j journal) error {
		removes := j.removes(key) || j.removesBelow(below)
		if !removes && !j.createsBelow(below) {
			return nil
		}
		inFlight, ended, again := "the directory holds changes of another transaction, not yet committed.",
			"the directory held changes of a transaction that has ended since: undone, finished or committed.", "read the directory again"
		if removes {
			inFlight, ended, again = "the file was removed by another transaction, not yet committed.",
				"the file was removed by a transaction that has ended since: undone, finished or committed.", "read the file again"
		}
		state, err := f.recoverOne(ctx, o, f.c.Now(), nil)
		switch {
		case err != nil:
			return err
		case state == live:
			return fault.Errorf(fault.CodeStale, "%s", inFlight).WithPath(c).WithHint("%s", hintInFlight)
		}
		// Ended since c was read (recovered here, or by its committer
		// or another recovery): the file put back, or a move's sources
		// gone, which an answer planned before did not see.
		return fault.Errorf(fault.CodeStale, "%s", ended).WithPath(c).WithHint("%s", again)
	})
}

// eachInFlight calls visit with each journal of a transaction in flight
// and its object, until visit fails: one ended meanwhile (gone, or
// rewritten as ended) is skipped, and the one at key skip is not read. A
// store's error is mapped for path p.
func (f *FS) eachInFlight(ctx context.Context, p, skip string, visit func(s3client.ObjectInfo, journal) error) error {
	dir := f.prefix + journalDir + "/"
	for o, err := range f.c.List(ctx, dir, "/", 0, "") {
		if err != nil {
			return f.mapErr(err, p)
		}
		if _, ok := journalID(o.Key[len(dir):]); !ok || o.Key == skip {
			continue
		}
		j, _, err := f.readJournal(ctx, o.Key)
		if code, _ := s3client.Code(err); code == "NoSuchKey" {
			continue // ended meanwhile
		}
		if err != nil {
			return f.mapErr(err, p)
		}
		if j.ended() {
			continue
		}
		if err := visit(o, j); err != nil {
			return err
		}
	}
	return nil
}

// A creation has no version to swap against, and so waits for no
// transaction the way a replacement does (settled): a file created where
// a transaction in flight had removed one was taken by that removal's
// rollback for another writer's and left, the copy of the original going
// with its journal, and the original was lost once the creation was
// undone too. So a transaction, once its journal is written and before it
// changes anything, reads the journals in flight (crossed): one that
// removes a file it creates, or creates one it removes, makes it STALE.
// Of two at once, the later to write its journal sees the other's.

// crossed fails with STALE while a transaction in flight, other than that
// of j and its journal jkey, removes a file j creates or creates one j
// removes (another's move counts its source as removed, its destination as
// created; j's own move only its destinations: a move that deleted a
// source under a creation there is finished by its recovery, or keeps its
// copy, see rollsForward and rollBackMove). It costs a listing of the
// journals, and a read of each, when j creates or removes a file.
func (f *FS) crossed(ctx context.Context, jkey string, j journal) error {
	var creates, removes []string
	for _, jo := range j.Ops {
		switch {
		case jo.Old == "" && jo.New != "":
			creates = append(creates, jo.Key)
		case jo.Old != "" && jo.New == "":
			removes = append(removes, jo.Key)
		}
	}
	for _, m := range j.Moves {
		if m.Old == "" && !m.marker() {
			creates = append(creates, m.To)
		}
	}
	if len(creates)+len(removes) == 0 {
		return nil
	}
	return f.eachInFlight(ctx, journalDir, jkey, func(_ s3client.ObjectInfo, other journal) error {
		for _, k := range creates {
			if other.removes(k) {
				return fault.Errorf(fault.CodeStale, "the file was removed by another transaction, not yet committed: created now, it would be lost once that removal is undone.").WithPath(f.rel(k)).
					WithHint("%s; nothing was changed", hintInFlight)
			}
		}
		for _, k := range removes {
			if other.creates(k) {
				return fault.Errorf(fault.CodeStale, "the file is being created by another transaction, not yet committed.").WithPath(f.rel(k)).
					WithHint("%s; nothing was changed", hintInFlight)
			}
		}
		return nil
	})
}
