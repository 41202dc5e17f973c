package s3fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// A move deletes each original If-Match the ETag it copied, but a store
// may answer a conditional DELETE of a key already gone with success
// (versitygw does: 204): two moves of one file at once then both copied
// it, both deleted it, and both exited 0, leaving two files. So a move
// first claims each object it moves and each destination, by its key
// (claimsOf), with an object put If-None-Match: * (which versitygw
// honours) under claimDir: of two moves at once that share a key, as a
// source or a destination, one claims it and the other is STALE before it
// copies anything. A claim holds
// its journal's key, is written after the journal and removed once the
// journal is removed or ended (afterJournal): a claim whose journal is
// gone or ended (its process killed in between, or its request landed
// late) is taken over by a move, and removed by Recover.

// claimDir, in the journal folder, holds the claims.
const claimDir = "claims"

// claimKey is where a move claims the object at key. (The NUL ended a
// version in claims of an older agentfs, whose destinations' claims
// these are.)
func (f *FS) claimKey(key string) string {
	sum := sha256.Sum256([]byte(key + "\x00"))
	return f.prefix + journalDir + "/" + claimDir + "/" + hex.EncodeToString(sum[:16])
}

// claimsOf are the objects a move of m claims, by their claim's key,
// each with its path: its source and its destination, whatever is there.
// The destination's claim keeps another move from putting a file there,
// or moving the copy on, while this one runs or waits for its rollback,
// even after a write or removal there: the store may ignore a copy's
// conditions on its destination (versitygw does, for an object over
// copyThrough bytes), and a copy moved on would leave the file at two
// places once the original is put back.
func (f *FS) claimsOf(m journalMove) map[string]string {
	c := map[string]string{f.claimKey(m.From): f.rel(m.From)}
	if !m.marker() {
		c[f.claimKey(m.To)] = f.rel(m.To)
	}
	return c
}

// intoClaim is the claim of a directory's move on its destination into:
// the claim a file's move there takes (claimsOf).
func (f *FS) intoClaim(into string) string { return f.claimKey(f.key(into)) }

// claimAll claims what every object of the move of l claims, the first
// move's source alone: two moves of one directory meet there, and of the
// two, one goes on (claimed all at once, each could take some and both
// fail). A directory's move claims its destination (j.Into) too, as a
// file's move there would: two directories moved there at once do not
// merge. The claims taken are recorded in j, for their removal.
func (f *FS) claimAll(ctx context.Context, l *lease, j *journal) error {
	j.known, j.claims = true, map[string]string{}
	var mu sync.Mutex
	take := func(key, path string) error {
		etag, err := f.claim(ctx, l, key, path, moveBusy)
		if err == nil {
			mu.Lock()
			j.claims[key] = etag
			mu.Unlock()
		}
		return err
	}
	if len(j.Moves) == 0 {
		return nil
	}
	first := j.Moves[0]
	if err := take(f.claimKey(first.From), f.rel(first.From)); err != nil {
		return err
	}
	if j.Into != "" {
		if err := take(f.intoClaim(j.Into), j.Into); err != nil {
			return err
		}
	}
	return f.each(ctx, j.Moves, func(_ int, m journalMove) error {
		for key, path := range f.claimsOf(m) {
			mu.Lock()
			_, taken := j.claims[key]
			mu.Unlock()
			if taken {
				continue
			}
			if err := take(key, path); err != nil {
				return err
			}
		}
		return nil
	})
}

// removalClaims are the claims of the files the transaction of j removes
// (its Ops that remove an object), by their claim's key, each with its
// path. A removal is a DELETE If-Match, which such a store also answers
// with success for a key already gone: of two transactions at once that
// removed one file, each took the removal for its own, and the one then
// refused put the file back though the other had committed its removal.
func (f *FS) removalClaims(j journal) map[string]string {
	c := map[string]string{}
	for _, jo := range j.Ops {
		if jo.New == "" && jo.Old != "" {
			c[f.claimKey(jo.Key)] = f.rel(jo.Key)
		}
	}
	return c
}

// claimRemovals claims, for the transaction of l, each file it removes
// (see removalClaims), before it changes anything: of two transactions
// that remove one file, or of a move and a transaction, one goes on and
// the other is STALE. The claims taken are recorded in j, for their
// removal.
func (f *FS) claimRemovals(ctx context.Context, l *lease, j *journal) error {
	claims := f.removalClaims(*j)
	if len(claims) == 0 {
		return nil
	}
	if j.claims == nil {
		j.claims = map[string]string{}
	}
	for _, key := range slices.Sorted(maps.Keys(claims)) {
		etag, err := f.claim(ctx, l, key, claims[key], removalBusy)
		if err != nil {
			return err
		}
		j.claims[key] = etag
	}
	return nil
}

// moveBusy is the failure of a move whose claim on the object at path is
// another's; removalBusy that of a transaction's removal of it.
func moveBusy(path string) error {
	return fault.Errorf(fault.CodeStale, "another move of this file is under way.").WithPath(path).
		WithHint("list it again once that move has ended; nothing was moved")
}

func removalBusy(path string) error {
	return fault.Errorf(fault.CodeStale, "another transaction that moves or removes this file is under way.").WithPath(path).
		WithHint("read it again once that transaction has ended; nothing was changed")
}

// claimWait bounds how long a move waits for a claim a younger move holds.
const claimWait = 5 * time.Second

// claim takes the claim key, of the object at path, for the move of l,
// taking over a claim whose journal is gone or ended, and returns its
// ETag. A claim that a live move holds is waited for, up to claimWait,
// when that move is younger (its journal's name, which begins with its
// start time, sorts after l's); else this move is STALE at once. Two moves
// that each hold a claim the other needs (a to b and b to a at once) were
// both STALE, again on every retry while the store was slower than the
// retries' pauses: now the younger gives way and the older goes on, and
// since a move waits only for younger ones, none waits for itself. A
// transaction's removal claims as a move does (claimRemovals); busy says
// that the claim is another's (moveBusy, removalBusy).
func (f *FS) claim(ctx context.Context, l *lease, key, path string, busy func(path string) error) (string, error) {
	deadline := time.Now().Add(claimWait)
	pause := 5 * time.Millisecond
	for time.Now().Before(deadline) {
		if err := l.check(); err != nil {
			return "", err
		}
		o, err := f.c.Put(ctx, key, []byte(l.key), s3client.Condition("", "*"))
		if _, status := s3client.Code(err); err == nil || status != http.StatusPreconditionFailed {
			return o.ETag, f.mapErr(err, path)
		}
		holder, etag, err := f.claimHolder(ctx, key)
		if err != nil {
			return "", err
		}
		if holder == "" {
			continue // released meanwhile
		}
		// An ended journal's move is done (committed or rolled back): its
		// claim is as stale as that of a journal gone.
		cur, _, err := f.readJournal(ctx, holder)
		found := err == nil && !cur.ended()
		if code, _ := s3client.Code(err); err != nil && code != "NoSuchKey" {
			return "", f.mapErr(err, journalDir)
		}
		switch {
		case found && holder < l.key:
			return "", busy(path)
		case found:
			select {
			case <-ctx.Done():
				return "", context.Cause(ctx)
			case <-time.After(pause):
			}
			pause = min(2*pause, 100*time.Millisecond)
			continue
		}
		// Its journal is gone or ended: that move is over, and the claim
		// is stale.
		if err := f.c.Delete(ctx, key, etag); err != nil && !refused(err) {
			return "", f.mapErr(err, path)
		}
	}
	return "", busy(path)
}

// claimHolder reads the claim at key: the key of its journal and its
// ETag, or "" when the claim is gone. A claim that names no journal of
// this workspace is refused: nothing of it is acted on.
func (f *FS) claimHolder(ctx context.Context, key string) (holder, etag string, err error) {
	data, etag, err := f.readVersion(ctx, key, 4096)
	holder = string(data)
	if refused(err) {
		return "", "", nil // released meanwhile, or taken: tried again
	}
	if err != nil {
		return "", "", f.mapErr(err, journalDir)
	}
	dir := f.prefix + journalDir + "/"
	if id, ok := strings.CutPrefix(holder, dir); !ok || !strings.HasSuffix(id, ".json") || strings.Contains(id, "/") {
		return "", "", fault.Errorf(fault.CodeIOError, "the claim %s does not name a journal of this workspace: it is not agentfs's.", key).
			WithHint("inspect it, then remove it by hand")
	}
	return holder, etag, nil
}

// releaseClaims removes the claims of the move or transaction of the
// journal jkey: those its process recorded, If-Match the ETag each was
// given; read back, those of its moves (and of its Into) and of its
// removals that name it.
func (f *FS) releaseClaims(ctx context.Context, jkey string, j journal) error {
	release := func(key string) error {
		etag, ok := j.claims[key]
		if !j.known {
			var holder string
			var err error
			if holder, etag, err = f.claimHolder(ctx, key); err != nil {
				return err
			}
			ok = holder == jkey
		}
		if !ok {
			return nil
		}
		if err := f.c.Delete(ctx, key, etag); err != nil && !refused(err) {
			return f.mapErr(err, journalDir)
		}
		return nil
	}
	if j.Into != "" {
		if err := release(f.intoClaim(j.Into)); err != nil {
			return err
		}
	}
	for key := range f.removalClaims(j) {
		if err := release(key); err != nil {
			return err
		}
	}
	return f.each(ctx, j.Moves, func(_ int, m journalMove) error {
		for key := range f.claimsOf(m) {
			if err := release(key); err != nil {
				return err
			}
		}
		return nil
	})
}
