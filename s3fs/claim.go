package s3fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// A move deletes each original If-Match the ETag it copied, but a store
// may answer a conditional DELETE of a key already gone with success
// (versitygw does: 204): two moves of one file at once then both copied
// it, both deleted it, and both exited 0, leaving two files. So a move
// first claims each object it moves, at the ETag it listed, with an
// object put If-None-Match: * (which versitygw honours) under
// claimDir: of two moves at once, one claims the object and the other is
// STALE before it copies anything. A claim holds its journal's key, is
// written after the journal and removed just before it (dropJournal): a
// claim whose journal is gone all the same (its request landed late) is
// taken over by a move, and removed by Recover.

// claimDir, in the journal folder, holds the claims.
const claimDir = "claims"

// claimKey is where a move of m claims its object.
func (f *FS) claimKey(m journalMove) string {
	sum := sha256.Sum256([]byte(m.From + "\x00" + m.ETag))
	return f.prefix + journalDir + "/" + claimDir + "/" + hex.EncodeToString(sum[:16])
}

// claimAll claims every object of the move of l, the first alone: two
// moves of one directory meet at its first object, and of the two, one
// goes on (claimed all at once, each could take some and both fail). The
// claims taken are recorded in j, for their removal.
func (f *FS) claimAll(ctx context.Context, l *lease, j *journal) error {
	j.known, j.claims = true, map[string]string{}
	var mu sync.Mutex
	take := func(_ int, m journalMove) error {
		key, etag, err := f.claim(ctx, l, m)
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
	if err := take(0, j.Moves[0]); err != nil {
		return err
	}
	return f.each(ctx, j.Moves[1:], take)
}

// claim claims m's object for the move of l, taking over a claim whose
// journal is gone, and returns the claim's key and ETag.
func (f *FS) claim(ctx context.Context, l *lease, m journalMove) (string, string, error) {
	key := f.claimKey(m)
	rel := strings.TrimPrefix(m.From, f.prefix)
	busy := fault.Errorf(fault.CodeStale, "another move of this file is under way.").WithPath(rel).
		WithHint("list the source again once that move has ended; nothing was moved")
	for range 3 {
		if err := l.check(); err != nil {
			return "", "", err
		}
		o, err := f.c.Put(ctx, key, []byte(l.key), s3client.Condition("", "*"))
		if _, status := s3client.Code(err); err == nil || status != http.StatusPreconditionFailed {
			return key, o.ETag, f.mapErr(err, rel)
		}
		holder, etag, err := f.claimHolder(ctx, key)
		if err != nil || holder == "" {
			if err != nil {
				return "", "", err
			}
			continue // released meanwhile
		}
		if _, found, err := f.headKey(ctx, holder); err != nil || found {
			return "", "", cmpErr(err, busy)
		}
		// Its journal is gone: that move ended, and the claim is stale.
		if err := f.c.Delete(ctx, key, etag); err != nil && !missingOrChanged(err) {
			return "", "", f.mapErr(err, rel)
		}
	}
	return "", "", busy
}

// claimHolder reads the claim at key: the key of its journal and its
// ETag, or "" when the claim is gone. A claim that names no journal of
// this workspace is refused: nothing of it is acted on.
func (f *FS) claimHolder(ctx context.Context, key string) (holder, etag string, err error) {
	o, err := f.c.Head(ctx, key)
	if err == nil {
		var body io.ReadCloser
		if body, err = f.c.Get(ctx, key, o.ETag, 0, 0); err == nil {
			var data []byte
			data, err = io.ReadAll(io.LimitReader(body, 4096))
			body.Close()
			holder = string(data)
		}
	}
	if err != nil && missingOrChanged(err) {
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
	return holder, o.ETag, nil
}

// releaseClaims removes the claims of the move of the journal jkey:
// those its process recorded, If-Match the ETag each was given; read
// back, those of its moves that name it.
func (f *FS) releaseClaims(ctx context.Context, jkey string, j journal) error {
	drop := func(key, etag string) error {
		if err := f.c.Delete(ctx, key, etag); err != nil && !missingOrChanged(err) {
			return f.mapErr(err, journalDir)
		}
		return nil
	}
	return f.each(ctx, j.Moves, func(_ int, m journalMove) error {
		key := f.claimKey(m)
		if j.known {
			if etag, ok := j.claims[key]; ok {
				return drop(key, etag)
			}
			return nil
		}
		holder, etag, err := f.claimHolder(ctx, key)
		if err != nil || holder != jkey {
			return err
		}
		return drop(key, etag)
	})
}

// missingOrChanged reports a conditional request's failure on a key that
// is gone (404) or not at the ETag given (412).
func missingOrChanged(err error) bool {
	code, status := s3client.Code(err)
	return code == "NoSuchKey" || status == http.StatusNotFound || status == http.StatusPreconditionFailed
}
