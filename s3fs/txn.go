package s3fs

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

var _ backend.Transactor = (*FS)(nil)

// journalDir, at the workspace's root, holds the journal of each
// transaction in flight and the copies of the objects it replaces. It is
// left out of listings and walks.
const journalDir = ".agentfs-journal"

// journalKey is the key of the journal of the transaction id, which is
// also the mark (txnMeta) on what it writes.
func (f *FS) journalKey(id string) string { return f.prefix + journalDir + "/" + id + ".json" }

// txnMeta is the user metadata that marks what a transaction writes and
// a move's copies: its value is the journal's Mark. An object keeps it
// once the transaction is done, as a store's copy keeps the metadata of
// its source.
const txnMeta = "agentfs-txn"

// journal is what a transaction will change: enough for another process
// to restore every object as it was.
type journal struct {
	// Lease is how long the journal lives unrenewed (see lease.go), as
	// time.Duration spells it; Renewed counts its renewals.
	Lease   string `json:"lease"`
	Renewed int    `json:"renewed,omitempty"`
	// Claimed is set by the process that rolls it back; Committed by the
	// committer at its commit point (see lease.commit), and RolledBack once
	// a rollback is done, each with Copies, the keys of its backups, in
	// place of its Ops and Moves: an ended journal names no change.
	Claimed    bool        `json:"claimed,omitempty"`
	Committed  bool        `json:"committed,omitempty"`
	RolledBack bool        `json:"rolledBack,omitempty"`
	Copies     []string    `json:"copies,omitempty"`
	Ops        []journalOp `json:"ops,omitempty"`
	// RollbackFailed is set by a claimer whose rollback failed, and which
	// then leaves the journal: the next call claims it again at once,
	// rather than wait for the claim's lease as for a live one.
	RollbackFailed bool `json:"rollbackFailed,omitempty"`
	// Claim is drawn afresh by each claim, so that each writes other
	// bytes (another ETag): two claims of the same journal had one, and a
	// recovery whose claim another had taken over could still mark or end
	// the journal If-Match it, under the other's feet.
	Claim string `json:"claim,omitempty"`
	// Moves are the objects of a move (see move.go). ClaimFirst says the
	// move claims them before it changes anything (claim.go), ClaimsHeld
	// that it has: a journal read back without it made nothing.
	Moves      []journalMove `json:"moves,omitempty"`
	ClaimFirst bool          `json:"claimFirst,omitempty"`
	ClaimsHeld bool          `json:"claimsHeld,omitempty"`
	// Mark is the value of the metadata txnMeta on each object the
	// transaction writes or copies, by which a rollback knows its own; a
	// journal without it knows them by their ETags.
	Mark string `json:"mark,omitempty"`
	// Into is the destination of a directory's move, which it claims.
	Into string `json:"into,omitempty"`
	// Deleting says the transaction may have begun deleting: a move's
	// sources, or the files it removes. Version is journalVersion; a
	// journal of an older agentfs, which never says, may have deleted
	// anything. Undoing says a move that may have begun deleting is
	// rolled back by its committer (see rollsForward).
	Deleting bool `json:"deleting,omitempty"`
	Undoing  bool `json:"undoing,omitempty"`
	Version  int  `json:"version,omitempty"`
	// DeletedTo bounds the removals of Ops the committer may have sent:
	// those from DeletedTo on it had not reached (from Version 4). It is
	// raised, deleteAhead removals at a time, before they are sent.
	DeletedTo int `json:"deletedTo,omitempty"`
	// known is set in the process that runs the transaction: which moves
	// it tried and which deletions it sent, and which claims it holds
	// (with their ETags), are its own record. A journal read back by a
	// recovery knows none of them.
	known  bool
	claims map[string]string
	// deletingSaid is set in the committer's process once its journal
	// says Deleting.
	deletingSaid bool
}

type journalOp struct {
	Key string `json:"key"`
	// Old is the ETag of the object before, "" when there was none; Backup
	// is the key of its copy.
	Old    string `json:"old,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Class is the storage class of the object at Old, as its HEAD said
	// it (see backupOf), which its restore puts back: the backup is made
	// in the store's default. A journal of an older agentfs has none, its
	// backups made in the object's class, which the restore then keeps.
	Class string `json:"class,omitempty"`
	// New is the MD5 of the bytes the write puts, "" for a removal. A
	// journal with a Mark (every one this agentfs writes) knows its
	// writes by the mark, whatever ETag the store gives them (one no MD5
	// under a KMS key), and New only tells a write from a removal; one
	// without a Mark, of an older agentfs, knew them by New as their
	// ETag (see written).
	New string `json:"new,omitempty"`

	// sent is set as this process sends the change: from then on it may
	// be made, even when the answer is lost (see journal.known). landed
	// is set once the store answers that it made it.
	sent, landed bool
}

// journalVersion is the Version of the journals this agentfs writes: from
// 2 they say when deletions begin (Deleting), from 3 a move that says so
// is finished by a recovery, not undone (rollsForward), and from 4 they
// say how far the removals of Ops may have gone (DeletedTo).
const journalVersion = 4

// deleteAhead is how many ops past a removal a transaction's journal
// allows before it is rewritten to allow more: at most a rewrite per 32
// DELETEs (more often when writes come between them), and a recovery puts
// back at most 32 files another writer removed ahead of a committer that
// died (where it put back every file of the transaction missing).
const deleteAhead = 32

// mayHaveDeleted reports whether the transaction of j may have deleted
// what it deletes when sent says it sent it: in its process, when it
// did; read back, once its journal said deletions began.
func (j journal) mayHaveDeleted(sent bool) bool {
	if j.known {
		return sent
	}
	return j.Deleting || j.Version < 2
}

// removalSent reports whether the transaction of j may have removed the
// file of op i: in its process, when it sent the DELETE; read back, once
// deletions began, when its journal allowed op i (DeletedTo). A journal
// that allows none allows all: an older agentfs's claim writes it back
// without DeletedTo, which a committer sets with Deleting.
func (j journal) removalSent(i int) bool {
	return j.mayHaveDeleted(j.Ops[i].sent) && (j.known || j.Version < 4 || j.DeletedTo == 0 || i < j.DeletedTo)
}

// rollsForward reports whether the move of j is finished by its recovery
// rather than undone: once it may have begun deleting its sources, a
// committer paused past its lease (SIGSTOP, a frozen VM) between its
// lease check and a DELETE If-Match sends it after the recovery, and a
// rollback, which puts the source back at the same ETag, has it deleted
// with its copy gone: the file lost. Finished, a late deletion repeats
// the recovery's. A committer that undoes the move itself says so first
// (Undoing), and so has a recovery that claims it meanwhile undo it too.
func (j journal) rollsForward() bool {
	return len(j.Moves) > 0 && j.Deleting && !j.Undoing && j.Version >= 3
}

// Commit applies ops all or nothing. Every compare-and-swap is checked
// first; then a journal object names the changes and copies of the objects
// they replace are made; then each change is made, itself a
// compare-and-swap (If-Match, If-None-Match: *). The journal's rewrite as
// committed is the commit point (see lease.commit): a failure before it
// restores every object changed, and
// a process killed before it leaves a journal that the next call rolls
// back once its lease has run out (see lease.go). Readers may see some
// changes before others while it runs.
func (f *FS) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	if _, err := f.Recover(ctx); err != nil {
		return nil, err
	}
	keys, olds, err := f.checkOps(ctx, ops)
	if err != nil {
		return nil, err
	}
	keep, err := f.keepAll(ctx, keys, olds, ops)
	if err != nil {
		return nil, err
	}
	id := newID()
	j := journal{Mark: id, Version: journalVersion, known: true}
	for i, op := range ops {
		jo := journalOp{Key: f.key(keys[i]), Old: olds[i], Class: keep[i].class}
		if jo.Old != "" {
			jo.Backup = f.prefix + journalDir + "/" + id + "/" + strconv.Itoa(i)
		}
		if !op.Remove {
			sum := md5.Sum(op.Data)
			jo.New = hex.EncodeToString(sum[:])
		}
		j.Ops = append(j.Ops, jo)
	}
	l, err := f.begin(ctx, f.journalKey(id), j)
	if err != nil {
		return nil, err
	}
	infos, err := f.apply(ctx, l, keys, ops, keep, &j)
	if err == nil {
		err = l.commit(ctx, j)
	}
	if err != nil {
		return nil, f.undo(ctx, l, j, err)
	}
	return infos, nil
}

// carried is what a transaction keeps of an object it replaces or removes:
// put, the headers of the write over it (see carry), and backup and
// class, those of its backup copy and its storage class (see backupOf).
// The store's copy keeps its tags, its metadata and the headers it is
// served with.
type carried struct {
	put, backup http.Header
	class       string
}

// backupOf splits how an object is stored (s3client.ObjectInfo.Stored),
// which a store's copy does not keep, into the headers of its backup copy
// and its storage class, which its journal keeps for the restore (see
// restore). The backup keeps the object's encryption under a KMS key (a
// copy no less protected than the object), but not its class: a backup
// lives seconds, and one in STANDARD_IA, ONEZONE_IA or GLACIER_IR was
// billed each time their minimum of 30 or 90 days and 128 KiB, and a fee
// per GB read back. Sent no class, a store's copy is stored in the store's
// default: STANDARD on AWS (a directory bucket, which refuses STANDARD,
// its own).
func backupOf(stored http.Header) (backup http.Header, class string) {
	backup = stored.Clone()
	class = backup.Get("X-Amz-Storage-Class")
	backup.Del("X-Amz-Storage-Class")
	return backup, class
}

// keepAll is what each op keeps of the object it replaces or removes, at
// olds[i], asked before anything changes.
func (f *FS) keepAll(ctx context.Context, keys, olds []string, ops []backend.Op) ([]carried, error) {
	keep := make([]carried, len(ops))
	for i, op := range ops {
		if olds[i] == "" {
			continue
		}
		s, found, err := f.seenAt(ctx, f.key(keys[i]), olds[i])
		if err != nil {
			return nil, err
		}
		if !found {
			continue // changed since: its backup's copy If-Match refuses it
		}
		keep[i].backup, keep[i].class = backupOf(s.stored)
		if op.Remove {
			continue
		}
		keep[i].put = http.Header{}
		if err := f.carrySeen(ctx, keys[i], s, keep[i].put); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// undo rolls back the transaction of l, which failed with err: nothing of
// it stays, and the journal goes with what was restored. A journal another
// process claimed is its to roll back.
func (f *FS) undo(ctx context.Context, l *lease, j journal, err error) error {
	l.halt()
	if l.lost == nil && j.rollsForward() {
		// Undone only once its journal says so, by a rewrite If-Match
		// that proves no recovery claimed it to finish it.
		j.Undoing = true
		if uerr := l.update(ctx, j); uerr != nil {
			if l.isLost() && j.deletingSaid {
				// Claimed at a version that says Deleting.
				return handedOver(err)
			}
			// Unwritten: the next call finishes it, or undoes it if the
			// rewrite landed unseen; this one may do neither.
			return undecided(err, uerr)
		}
	}
	if l.lost != nil {
		if j.rollsForward() && j.deletingSaid {
			return handedOver(err)
		}
		return err
	}
	left, rerr := f.rollBack(ctx, j)
	if rerr != nil {
		if j.changedAny() {
			return f.sayLeft(err, halfDone(err, rerr))
		}
		return errors.Join(err, rerr)
	}
	if len(left.kept) > 0 {
		return errors.Join(left.undoneBut(err), l.abandon(ctx, j))
	}
	return errors.Join(undoneWhole(err), l.abandon(ctx, j))
}

// leftAlone is what a rollback in the transaction's own process left as
// another writer made it: kept, the files that writer changed after the
// transaction did, and copies, the destinations of moves whose source
// that writer put a file at, kept as they may hold the only bytes of the
// file moved.
type leftAlone struct{ kept, copies []string }

// undoneBut is err, the failure of a transaction rolled back but for
// what a says, saying so: "nothing was changed" would be false.
func (a leftAlone) undoneBut(err error) error {
	e := backend.PartlyUndone(a.kept, err)
	if len(a.copies) == 0 {
		return e
	}
	e.Message = fmt.Sprintf("%s; the move's copy stays at %s, as the file moved may have no other.", strings.TrimSuffix(e.Message, "."), strings.Join(a.copies, ", "))
	return e.WithDetail("copies", a.copies).
		WithHint("read %s and %s before running the change again: no other file was changed", strings.Join(a.kept, ", "), strings.Join(a.copies, ", "))
}

// undoneWhole is err, the store's failure of a transaction then rolled
// back whole, saying so: told only to retry, a caller could not know
// whether some of its files were changed.
func undoneWhole(err error) error {
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeIOError {
		return err
	}
	return e.WithHint("nothing was changed (the transaction was rolled back): %s", e.Hint)
}

// changedAny reports whether this process sent a change of j's
// transaction: a write, a removal, a move's copy.
func (j journal) changedAny() bool {
	for _, jo := range j.Ops {
		if jo.sent {
			return true
		}
	}
	for _, m := range j.Moves {
		if m.tried {
			return true
		}
	}
	return false
}

// halfDone is the failure of a transaction that made some of its changes
// and could not undo them (the store failed meanwhile, err then rerr): its
// journal has them undone by a call once its lease has run out. A retry
// before that would be made over them and undone in part, leaving some
// files changed and others not, so the hint sends the caller to
// --recover first.
func halfDone(err, rerr error) error {
	code, when, grant := fault.CodeIOError, "", ""
	if tagsDenied(rerr) {
		// A recovery meets the same refusal until the credentials may
		// read the tags.
		code, when, grant = fault.CodePermissionDenied, ", once the credentials may read and put tags", "grant s3:GetObjectTagging and s3:PutObjectTagging on the bucket, then "
	}
	var archived *archivedCopy
	if errors.As(rerr, &archived) {
		// So does it until the copy is restored.
		code, when, grant = fault.CodeNotSupported, ", once the copy it reads is restored", "restore that copy ("+archived.restore+"), wait until aws s3api head-object of it shows its Restore ongoing-request=\"false\", then "
	}
	e := fault.Errorf(code, "the transaction stopped part way, after it sent some of its changes, and could not undo them (%v): its journal has them undone by the first call after its lease of 15 seconds%s.", rerr, when).
		WithHint("do not redo it yet: %srun agentfs --recover, which waits for the lease and undoes it, then read the files and make the change again", grant)
	e.Err = err
	return e
}

// checkOps checks every op against the store as it is: distinct files, no
// directory, no file above a new one, and each compare-and-swap. It
// returns the paths cleaned and the ETags of the objects there ("" for
// none).
func (f *FS) checkOps(ctx context.Context, ops []backend.Op) (keys, olds []string, err error) {
	seen := map[string]bool{}
	for _, op := range ops {
		c, err := f.place(ctx, op.Path)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case c == ".":
			return nil, nil, fault.Errorf(fault.CodeNotAFile, "the path is the workspace's root, not a file.").WithPath(c).
				WithHint("name a file inside the workspace")
		case seen[c]:
			return nil, nil, backend.ChangedTwice(c)
		case op.Write.Executable:
			return nil, nil, notSupported(c, "file modes", "drop executable: an object is never executable")
		}
		seen[c] = true
		o, found, err := f.head(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			if err := f.checkNewFile(ctx, c); err != nil {
				return nil, nil, err
			}
		} else if o.ETag == "" {
			return nil, nil, noETag(c)
		}
		version := o.ETag
		if err := backend.CheckSwap(c, op.Write, found, version); err != nil {
			return nil, nil, err
		}
		if found {
			if err := f.settled(ctx, c, version); err != nil {
				return nil, nil, err
			}
		}
		keys, olds = append(keys, c), append(olds, version)
	}
	return keys, olds, nil
}

// apply copies the objects to replace, then makes each change as a
// compare-and-swap against the version checked.
func (f *FS) apply(ctx context.Context, l *lease, keys []string, ops []backend.Op, keep []carried, j *journal) ([]backend.FileInfo, error) {
	if err := f.crossed(ctx, l.key, *j); err != nil {
		return nil, err
	}
	if err := f.claimRemovals(ctx, l, j); err != nil {
		return nil, err
	}
	for i, jo := range j.Ops {
		if jo.Backup == "" {
			continue
		}
		if err := l.check(); err != nil {
			return nil, err
		}
		if _, err := f.c.Copy(ctx, jo.Key, jo.Old, jo.Backup, keep[i].backup); err != nil {
			return nil, f.backupErr(ctx, keys[i], jo.Old, err)
		}
	}
	infos := make([]backend.FileInfo, len(ops))
	for i, op := range ops {
		jo, c := j.Ops[i], keys[i]
		swap := backend.WriteOptions{IfVersion: jo.Old, IfAbsent: jo.Old == ""}
		if err := l.check(); err != nil {
			return nil, err
		}
		if op.Remove {
			if jo.Old == "" {
				continue
			}
			if !j.Deleting || i >= j.DeletedTo {
				// Read back, a journal removed nothing it does not allow:
				// a file missing there is another writer's doing.
				j.Deleting, j.DeletedTo = true, i+deleteAhead
				if err := l.update(ctx, *j); err != nil {
					return nil, err
				}
			}
			// A store answers a DELETE If-Match of a key already gone with
			// success (versitygw does): a file another writer removed
			// since the check was taken for one this transaction removed,
			// and its rollback put it back. Found gone now, it is a lost
			// race, and stays gone.
			o, found, err := f.head(ctx, c)
			if err != nil {
				return nil, err
			}
			if err := backend.CheckSwap(c, swap, found, o.ETag); err != nil {
				return nil, err
			}
			j.Ops[i].sent = true
			if err := f.deleteIf(ctx, c, jo.Old); err != nil {
				j.Ops[i].sent = !refused(err)
				return nil, f.swapErr(ctx, c, swap, err)
			}
			j.Ops[i].landed = true
			continue
		}
		h := s3client.Condition(jo.Old, "")
		if jo.Old == "" {
			h = s3client.Condition("", "*")
		}
		for k, v := range keep[i].put {
			h[k] = v
		}
		h.Set("X-Amz-Meta-"+txnMeta, j.Mark)
		j.Ops[i].sent = true
		up, err := f.c.Put(ctx, jo.Key, op.Data, h)
		if s3client.AnswerLost(err) || errors.Is(err, s3client.ErrUnsent) {
			// Its answer lost, or its body taken for never sent whole
			// (see WriteFile): made when the object is this write's,
			// which only it marked with the journal's Mark (a
			// transaction writes each file once). It was a failure, the
			// transaction undone, made or not.
			if now, _, made, herr := f.landed(ctx, jo.Key, op.Data, txnMeta, j.Mark); herr == nil && made {
				up, err = now, nil
			}
		}
		if err != nil {
			return nil, f.swapErr(ctx, c, swap, err)
		}
		j.Ops[i].landed = true
		// Its version is the ETag answered, whatever it is (under a KMS
		// key, no MD5 of the bytes): a rollback knows the write by its
		// mark, and needs no ETag of it in the journal.
		infos[i] = fileInfo(path.Base(c), up)
	}
	// A directory the removals emptied keeps a marker, as rm leaves one:
	// before the commit point, so that a failure undoes the transaction
	// (a marker left beside restored files names nothing).
	kept := map[string]bool{}
	for i, op := range ops {
		if parent := path.Dir(keys[i]); op.Remove && j.Ops[i].Old != "" && !kept[parent] {
			kept[parent] = true
			if err := f.keepParent(ctx, keys[i]); err != nil {
				return nil, err
			}
		}
	}
	return infos, nil
}

// rollBack restores each object of j that holds what the transaction made
// of it: its copy put back, or, when it had none, the object removed. An
// object another writer put or changed since is left as it is, and said
// to be when the change this process made of it landed first.
func (f *FS) rollBack(ctx context.Context, j journal) (leftAlone, error) {
	var left leftAlone
	for i, jo := range j.Ops {
		o, err := f.c.Head(ctx, jo.Key)
		found := err == nil
		if code, _ := s3client.Code(err); err != nil && code != "NoSuchKey" {
			return left, f.mapErr(err, f.rel(jo.Key))
		}
		cur := o.ETag
		written := found && jo.New != "" && j.written(o, jo.New)
		removed := !found && jo.New == "" && jo.Old != "" && j.removalSent(i)
		err = nil
		theirs := false // another writer's change since, which stays
		switch {
		case written && jo.Old == "":
			// Written where nothing was: removed again.
			theirs, err = f.deleteKey(ctx, jo.Key, cur)
		case written, removed:
			// Replaced or removed: the copy goes back.
			theirs, err = f.restore(ctx, jo, found, cur)
		default:
			theirs = true
		}
		if err != nil {
			return left, err
		}
		// Refused because another writer changed the object after the
		// look, as when the look saw it: kept when this process's change
		// was there first.
		if theirs && (written || jo.landed) {
			left.kept = append(left.kept, f.rel(jo.Key))
		}
	}
	forward := j.rollsForward()
	for _, m := range j.Moves {
		if j.known && !m.tried || j.ClaimFirst && !j.ClaimsHeld {
			// Never copied by this move: what is at its destination is
			// another writer's, even with the same bytes.
			continue
		}
		if forward {
			if err := f.rollForwardMove(ctx, j, m); err != nil {
				return left, err
			}
			continue
		}
		moved, err := f.rollBackMove(ctx, j, m)
		if err != nil {
			return left, err
		}
		left.kept, left.copies = append(left.kept, moved.kept...), append(left.copies, moved.copies...)
	}
	if forward {
		return left, f.keepParent(ctx, f.movedFrom(j))
	}
	return left, nil
}

// written reports whether o is what the transaction of j wrote or copied
// there: marked with its Mark, or, for a journal without one, of the
// ETag etag it gave.
func (j journal) written(o s3client.ObjectInfo, etag string) bool {
	if j.Mark != "" {
		return o.Meta[txnMeta] == j.Mark
	}
	return o.ETag == etag
}

// restore puts the copy of jo's object back, over the version cur, or
// where the object is missing, as it was: with the metadata and the tags
// the copy kept, and its encryption, which the backup was made with (see
// backupOf), all of which CopyThrough keeps, and in its storage class,
// jo.Class (a journal without one made the backup in it). stays says the
// store refused it, which leaves the object as it is.
func (f *FS) restore(ctx context.Context, jo journalOp, found bool, cur string) (stays bool, err error) {
	h := s3client.Condition(cur, "")
	if !found {
		h = s3client.Condition("", "*")
	}
	if jo.Class != "" {
		h.Set("X-Amz-Storage-Class", jo.Class)
	}
	// Through agentfs whatever its size: the store checks h on a PUT.
	_, err = f.c.CopyThrough(ctx, jo.Backup, "", jo.Key, h, math.MaxInt64)
	if refused(err) {
		// A copy never made (the change it would undo was never made
		// either), or the object changed by another writer since: theirs
		// stays.
		return true, nil
	}
	if tagsDenied(err) {
		return false, rollbackTagsErr(f.rel(jo.Key), err)
	}
	if code, _ := s3client.Code(err); s3client.Archived(code) {
		// The copy is what is archived (one an older agentfs made in the
		// object's class, or a lifecycle rule's over the journal folder):
		// the object's own restore would not help.
		return false, f.archivedCopyErr(jo, err)
	}
	return false, f.mapErr(err, f.rel(jo.Key))
}

// archivedCopy is a rollback's failure to read the copy that puts a file
// back, archived by its storage class: restore is the command that
// restores that copy.
type archivedCopy struct {
	restore string
	err     error
}

func (e *archivedCopy) Error() string { return e.err.Error() }
func (e *archivedCopy) Unwrap() error { return e.err }

// archivedCopyErr is the failure, err, of the restore of jo's object from
// its copy, which its storage class keeps archived (s3client.Archived).
func (f *FS) archivedCopyErr(jo journalOp, err error) error {
	restore := s3client.RestoreCommand(f.c.Bucket(), jo.Backup)
	return fault.Errorf(fault.CodeNotSupported, "the copy that puts the file back, %s, is archived by its storage class and cannot be read until it is restored: %s.", f.rel(jo.Backup), strings.TrimSuffix(err.Error(), ".")).WithPath(f.rel(jo.Key)).
		WithHint("restore that copy (%s), then run agentfs --recover once aws s3api head-object of it shows its Restore ongoing-request=\"false\"", restore).
		WithCause(&archivedCopy{restore: restore, err: err})
}

// deleteKey deletes the object key If-Match etag; one changed since stays
// (stays).
func (f *FS) deleteKey(ctx context.Context, key, etag string) (stays bool, err error) {
	err = f.deleteIf(ctx, f.rel(key), etag)
	if refused(err) {
		return true, nil
	}
	return false, f.mapErr(err, f.rel(key))
}

// putJournal writes j at key If-Match etag.
func (f *FS) putJournal(ctx context.Context, key, etag string, j journal) (s3client.ObjectInfo, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return s3client.ObjectInfo{}, err
	}
	return f.c.Put(ctx, key, data, s3client.Condition(etag, ""))
}

// readJournal reads the journal at key, with its ETag.
func (f *FS) readJournal(ctx context.Context, key string) (journal, string, error) {
	data, etag, err := f.readVersion(ctx, key, math.MaxInt64)
	if err != nil {
		return journal{}, "", err
	}
	var j journal
	return j, etag, json.Unmarshal(data, &j)
}

// readVersion reads up to limit bytes of the object at key, with the ETag
// of the version read: a HEAD, then a GET If-Match its ETag. An object
// rewritten between the two (a journal renewed or committed) is read
// again, up to three times.
func (f *FS) readVersion(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	for try := 1; ; try++ {
		o, err := f.c.Head(ctx, key)
		if err != nil {
			return nil, "", err
		}
		body, err := f.c.Get(ctx, key, o.ETag, 0, 0)
		if _, status := s3client.Code(err); status == http.StatusPreconditionFailed && try < 4 {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		data, err := io.ReadAll(io.LimitReader(body, limit))
		body.Close()
		return data, o.ETag, err
	}
}

// dropJournal removes the journal If-Match etag (its version written
// last), then its copies and claims.
func (f *FS) dropJournal(ctx context.Context, jkey, etag string, j journal) error {
	if err := f.c.Delete(ctx, jkey, etag); err != nil {
		return f.mapErr(err, journalDir)
	}
	f.afterJournal(ctx, jkey, j)
	return nil
}

// ended reports whether the transaction of j is over, committed or
// rolled back: its journal is left to be removed, and holds no claim.
func (j journal) ended() bool { return j.Committed || j.RolledBack }

// journalID is the transaction of a journal's key, listed below the
// journal folder as name; ok is false for a folder or another file.
func journalID(name string) (id string, ok bool) {
	id, ok = strings.CutSuffix(name, ".json")
	return id, ok && !strings.Contains(id, "/")
}

// removes reports whether the transaction of j removes the object at key,
// or one below it or above it, or moves it away: undone, the removal puts
// back a directory's files beside a file of its name, or a file above
// one below it, which the store refuses, or holds as a file and a
// directory of one name.
func (j journal) removes(key string) bool {
	for _, jo := range j.Ops {
		if around(jo.Key, key) && jo.New == "" && jo.Old != "" {
			return true
		}
	}
	for _, m := range j.Moves {
		if around(m.From, key) {
			return true
		}
	}
	return false
}

// removesBelow reports whether the transaction of j removes (or moves
// away) an object whose key begins with dir: removes misses them below
// the workspace's root, whose key is the prefix itself.
func (j journal) removesBelow(dir string) bool {
	for _, jo := range j.Ops {
		if strings.HasPrefix(jo.Key, dir) && jo.New == "" && jo.Old != "" {
			return true
		}
	}
	for _, m := range j.Moves {
		if strings.HasPrefix(m.From, dir) {
			return true
		}
	}
	return false
}

// around reports whether the keys a and b are one, or one is below the
// other.
func around(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// creates reports whether the transaction of j creates the object at
// key, where there was none: a write, or a move's copy.
func (j journal) creates(key string) bool {
	return j.created(func(k string) bool { return k == key }, false)
}

// createsBelow reports whether the transaction of j creates an object
// whose key begins with dir, where there was none: a write, or a move's
// copy or marker. Undone, it leaves dir without that object, and dir, a
// directory, may then hold nothing; a change of an object that was there
// leaves dir as it was, undone or not (a rollback restores only a key
// still at the transaction's version).
func (j journal) createsBelow(dir string) bool {
	return j.created(func(k string) bool { return strings.HasPrefix(k, dir) }, true)
}

// created reports whether the transaction of j creates, where there was
// none, an object whose key match takes: a write, or a move's copy (or
// its marker, with markers).
func (j journal) created(match func(key string) bool, markers bool) bool {
	for _, jo := range j.Ops {
		if jo.Old == "" && jo.New != "" && match(jo.Key) {
			return true
		}
	}
	for _, m := range j.Moves {
		if m.Old == "" && (markers || !m.marker()) && match(m.To) {
			return true
		}
	}
	return false
}

// endedAs is what j's journal says once its transaction is over, as
// committed or rolled back: no change, so that no recovery, of this
// agentfs or an older one, acts on it again.
func (j journal) endedAs(committed bool) journal {
	return journal{Committed: committed, RolledBack: !committed, Version: journalVersion, Copies: j.backups()}
}

// backups are the keys of the copies the transaction of j made of the
// objects it replaces.
func (j journal) backups() []string {
	backups := slices.Clone(j.Copies)
	for _, jo := range j.Ops {
		if jo.Backup != "" {
			backups = append(backups, jo.Backup)
		}
	}
	for _, m := range j.Moves {
		if m.Backup != "" {
			backups = append(backups, m.Backup)
		}
	}
	return backups
}

// afterJournal removes the copies and claims of the transaction of the
// journal jkey, removed. The transaction is done: this is housekeeping,
// and a failure here is no failure of the transaction (a caller would undo
// it). A copy left is removed by a later call once a lease old, a claim
// left (it names a journal gone) by a later call with none in flight.
func (f *FS) afterJournal(ctx context.Context, jkey string, j journal) {
	if backups := j.backups(); len(backups) > 0 {
		_ = f.deleteKeys(ctx, journalDir, backups)
	}
	// The claims go once the journal has gone or ended (committed or
	// rolled back): while it stands unended (its removal refused, say,
	// after a lost answer left etag behind), no other move changes what it
	// names.
	_ = f.releaseClaims(ctx, jkey, j)
}

// Recovery is what Recover did.
type Recovery struct {
	// RolledBack counts the transactions of dead processes rolled back.
	RolledBack int `json:"rolledBack"`
	// Finished counts the moves of dead processes finished, since they
	// had begun deleting their sources (see rollsForward).
	Finished int `json:"finished"`
	// CopiesRemoved counts the copies whose journal was gone, left by a
	// transaction that ended.
	CopiesRemoved int `json:"copiesRemoved"`
	// Live counts the journals of transactions still in flight: left
	// alone by Recover, waited for by Settle.
	Live int `json:"live"`
}

// journalState is what recoverOne found of a journal.
type journalState int

const (
	// gone: removed since it was listed, or recovered by another process.
	gone journalState = iota
	live
	rolledBack
	finished
)

// Recover rolls back the transactions whose process died: those whose
// journal has not been renewed for its lease, by the store's clock (see
// lease.go). Copies left by a transaction that committed but died before
// removing them are removed. With no journal it costs one listing.
//
// The journals are recovered newest first, as an undo log is: a
// transaction of an older agentfs may have created a file where an older
// one, in flight, removed it (its creation waited for no removal, see
// crossed; a replacement waits, see settled).
// Undone oldest first, the removal's rollback found the other's file
// there and left it, its copy of the original going with its journal;
// then the creation's rollback removed that file, and the original was
// lost. A journal it cannot recover (unreadable, not agentfs's, its
// rollback refused) is stuck: the others are still recovered, but those
// older that changed one of its files, which wait for it (heldFiles), and
// the error names every stuck one, in the journals' order.
func (f *FS) Recover(ctx context.Context) (Recovery, error) {
	var rec Recovery
	dir := f.prefix + journalDir + "/"
	journals := map[string]s3client.ObjectInfo{}
	// Below dir, by "/": the journals, and the folders of copies (one per
	// transaction) and of claims, listed only when needed: a move of many
	// objects in flight has that many claims, or copies.
	var folders []string
	for o, err := range f.c.List(ctx, dir, "/", 0, "") {
		if err != nil {
			// The first request of most calls: an error here is the
			// store's or the bucket's, not the journal folder's.
			return rec, f.mapErr(err, ".")
		}
		rest := o.Key[len(dir):]
		if id, ok := journalID(rest); ok {
			journals[id] = o
		} else if id, ok := strings.CutSuffix(rest, "/"); ok {
			folders = append(folders, id)
		}
	}
	now := f.c.Now()
	var stuck []stuckJournal
	var held heldFiles
	for _, id := range slices.Backward(slices.Sorted(maps.Keys(journals))) {
		o := journals[id]
		var acted *journal
		state, err := f.recoverOne(ctx, o, now, func(j journal) error {
			acted = &j
			return held.waits(f, o.Key, j)
		})
		if err != nil {
			if ctx.Err() != nil || storeFailed(err) {
				// The call's end, or a store that failed (stopped
				// answering, or a 5xx retried): each journal left would
				// meet it, and wait as long.
				return rec, err
			}
			// Its changes may stand: an older journal that changed one
			// of its files waits for it.
			switch {
			case acted != nil:
				held.add(f.rel(o.Key), *acted)
			case !errors.Is(err, errHoldsNone):
				held.all(f.rel(o.Key)) // unread: its files are unknown
			}
			stuck = append(stuck, stuckJournal{f.rel(o.Key), err})
			continue
		}
		switch state {
		case rolledBack:
			rec.RolledBack++
		case finished:
			rec.Finished++
		case live:
			rec.Live++
		}
	}
	var swept error
	for _, id := range folders {
		var err error
		switch _, ok := journals[id]; {
		case id == claimDir:
			if rec.Live == 0 && len(stuck) == 0 {
				// With a transaction in flight or stuck, its claims are
				// left unread (they stand while its journal does); a
				// stale claim waits for a call with none.
				err = f.dropStaleClaims(ctx, dir+id+"/")
			}
		case !ok:
			// Copies whose journal was not listed: a stuck journal's are
			// never among them.
			var n int
			n, err = f.dropCopies(ctx, dir+id+"/", now)
			rec.CopiesRemoved += n
		}
		if err != nil && (ctx.Err() != nil || storeFailed(err)) {
			return rec, err
		}
		if swept == nil {
			swept = err
		}
	}
	if len(stuck) > 0 {
		slices.Reverse(stuck) // oldest first
		return rec, stuckError(stuck)
	}
	return rec, swept
}

// heldFiles are the files of the journals Recover left stuck, newer than
// the one it comes to: undone before them, a rollback takes what they
// changed for another writer's, and leaves it (a removal, over which a
// stuck creation stands, lost the file once that creation was undone).
type heldFiles struct {
	// by names the stuck journal of each key it changed, and below each
	// of their folders; every, the journal that holds up all (unread).
	by, below map[string]string
	every     string
}

// add holds the files jpath's journal j changed.
func (h *heldFiles) add(jpath string, j journal) {
	if h.by == nil {
		h.by, h.below = map[string]string{}, map[string]string{}
	}
	for _, k := range j.files() {
		h.by[k] = cmp.Or(h.by[k], jpath)
		for d := path.Dir(k); d != "." && d != "/"; d = path.Dir(d) {
			h.below[d] = cmp.Or(h.below[d], jpath)
		}
	}
}

// all holds every file: jpath's journal could not be read.
func (h *heldFiles) all(jpath string) { h.every = cmp.Or(h.every, jpath) }

// waits is the error of the journal jkey, j, while a stuck journal holds
// one of its files (the same key, or one above or below it); nil when
// none does.
func (h *heldFiles) waits(f *FS, jkey string, j journal) error {
	by, file := h.every, ""
	for _, k := range j.files() {
		if by != "" {
			break
		}
		by, file = cmp.Or(h.by[k], h.below[k]), k
		for d := path.Dir(k); by == "" && d != "." && d != "/"; d = path.Dir(d) {
			by = h.by[d]
		}
	}
	if by == "" {
		return nil
	}
	what := "which could not be read, and may have changed its files"
	if file != "" {
		what = fmt.Sprintf("which changed %s after it", f.rel(file))
	}
	return fault.Errorf(fault.CodeIOError, "the journal %s waits for the newer journal %s, %s: undone first, its rollback would take the newer transaction's change for another writer's, and lose the file once that is undone.", f.rel(jkey), by, what).
		WithHint("recover the journal %s first, then run agentfs --recover", by).WithCause(errHeld)
}

// files are the keys j changes, without a directory marker's slash.
func (j journal) files() []string {
	var keys []string
	for _, jo := range j.Ops {
		keys = append(keys, strings.TrimSuffix(jo.Key, "/"))
	}
	for _, m := range j.Moves {
		keys = append(keys, strings.TrimSuffix(m.From, "/"), strings.TrimSuffix(m.To, "/"))
	}
	return keys
}

// stuckJournal is a journal Recover could not recover, by its path in
// the workspace, and why.
type stuckJournal struct {
	path string
	err  error
}

// named is how many stuck journals, or uploads left, an error's message
// names; its details name them all.
const named = 3

// stuckError is the failure of a recovery that left the journals stuck,
// in order: the first's error, which says why and what to do, naming the
// others. One of them goes as it is.
func stuckError(stuck []stuckJournal) error {
	if len(stuck) == 1 {
		return stuck[0].err
	}
	// The first of those that wait for no other says why, and what to do.
	first := fault.AsError(stuck[0].err)
	paths := make([]string, len(stuck))
	causes := make([]error, len(stuck))
	waiting := 0
	for i, s := range stuck {
		paths[i], causes[i] = s.path, s.err
		if errors.Is(s.err, errHeld) {
			waiting++
		} else if errors.Is(first, errHeld) {
			first = fault.AsError(s.err)
		}
	}
	list := strings.Join(paths[:min(named, len(paths))], ", ")
	if more := len(paths) - named; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	if waiting > 0 {
		list += fmt.Sprintf(" (%d held up by a newer one, stuck, that changed their files)", waiting)
	}
	// The names first, before the first's message: a long one is cut.
	e := fault.Errorf(first.Code, "%d journals cannot be recovered: %s. The first stuck: %s", len(paths), list, first.Message).
		WithHint("%s; then run agentfs --recover, which says what the next one needs", strings.TrimSuffix(first.Hint, ".")).
		WithCause(errors.Join(causes...))
	return e.WithPlaceOf(first).WithDetail("journals", paths)
}

// storeFailed reports whether err is the store's failure rather than a
// refusal of the request: no answer (the connection failed, or nothing
// came for the idle timeout), or a 5xx (a read's once retried), or an
// answer that is no S3 store's.
func storeFailed(err error) bool {
	var stall *s3client.StallError
	var se *s3client.Error
	var ne net.Error
	switch {
	case errors.As(err, &stall):
		return true
	case errors.As(err, &se):
		return se.Status >= 500 || se.Code == s3client.CodeNotS3
	}
	return errors.As(err, &ne)
}

// dropCopies removes the copies below folder, a transaction's whose
// journal was not listed, older than a lease: a copy is written after its
// journal and removed after it, so alone and that old, its transaction has
// ended.
func (f *FS) dropCopies(ctx context.Context, folder string, now time.Time) (int, error) {
	var keys []string
	for o, err := range f.c.List(ctx, folder, "", 0, "") {
		if err != nil {
			return 0, f.mapErr(err, journalDir)
		}
		if o.LastModified.Add(defaultLease).Before(now) {
			keys = append(keys, o.Key)
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	return len(keys), f.deleteKeys(ctx, journalDir, keys)
}

// dropStaleClaims removes the claims below folder whose journal is gone.
// A claim is written after its journal, so such a claim's move has ended:
// killed between the removal of its journal and of its claims, or its
// claim landed late (a request cut short on our side, done on the
// store's). A claim made since is left alone (If-Match).
func (f *FS) dropStaleClaims(ctx context.Context, folder string) error {
	for o, err := range f.c.List(ctx, folder, "", 0, "") {
		if err != nil {
			return f.mapErr(err, journalDir)
		}
		holder, etag, err := f.claimHolder(ctx, o.Key)
		if err != nil || holder == "" || etag != o.ETag {
			continue // not agentfs's, or changed since it was listed: left
		}
		if _, found, err := f.headKey(ctx, holder); err != nil || found {
			if err != nil {
				return err
			}
			continue
		}
		if err := f.c.Delete(ctx, o.Key, etag); err != nil && !refused(err) {
			return f.mapErr(err, journalDir)
		}
	}
	return nil
}

// recoverOne rolls back the transaction of the journal o when its lease
// has run out at now: it claims the journal (a rewrite If-Match the
// version listed, which a renewal in between defeats), restores what the
// transaction changed, and removes it.
//
// hold, when set, is asked before a journal is claimed: its error leaves
// the journal as it is, and is recoverOne's.
func (f *FS) recoverOne(ctx context.Context, o s3client.ObjectInfo, now time.Time, hold func(journal) error) (journalState, error) {
	body, err := f.c.Get(ctx, o.Key, o.ETag, 0, 0)
	code, status := s3client.Code(err)
	switch {
	case err != nil && code == "NoSuchKey":
		return gone, nil // ended meanwhile
	case err != nil && status == http.StatusPreconditionFailed:
		// Renewed by its committer, or claimed by another recovery,
		// meanwhile: in flight either way.
		return live, nil
	case err != nil:
		return gone, f.mapErr(err, journalDir)
	}
	// Read whole first: a read that fails part way is the store's failure
	// (a stall, a connection reset), not a journal no agentfs wrote, which
	// holds up no other; its files are unknown.
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		return gone, f.mapErr(err, journalDir)
	}
	var j journal
	unread := false // a newer agentfs's, of a form this one does not read
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&j); err != nil {
		// Whole JSON with a later version, but a field of another type
		// (a version may change one): a newer agentfs's still, live in
		// its lease, and, read as no journal, it was IO_ERROR even then,
		// its hint to remove it, and held none of its files.
		var v struct {
			Version int    `json:"version"`
			Lease   string `json:"lease"`
		}
		_ = json.Unmarshal(data, &v) // a field of another type is left zero
		if v.Version <= journalVersion {
			return gone, fault.Errorf(fault.CodeIOError, "the journal %s cannot be read: %v.", f.rel(o.Key), err).
				WithHint("inspect it, restore the objects it names by hand, then remove it").WithCause(errHoldsNone)
		}
		j, unread = journal{Version: v.Version, Lease: v.Lease}, true
	}
	if !unread && !f.ownKeys(j) {
		return gone, fault.Errorf(fault.CodeIOError, "the journal %s names objects outside the workspace or its journal folder: it is not agentfs's, and is not acted on.", f.rel(o.Key)).
			WithHint("inspect it, then remove it by hand").WithCause(errHoldsNone)
	}
	lease, err := time.ParseDuration(j.Lease)
	if err != nil {
		lease = defaultLease
	}
	// The earlier of two answers' clocks: one odd Date (a proxy's, a
	// node's) must not take a live lease for a dead one.
	if n := f.c.Now(); n.Before(now) {
		now = n
	}
	expired := !o.LastModified.Add(lease).After(now)
	if j.Version > journalVersion {
		// A newer agentfs's, whose version may change how it is undone:
		// left whole for that agentfs, its files held as a live one's.
		if !expired {
			return live, nil
		}
		if hold != nil && !unread {
			// Unread, it holds every file (see Recover): which it
			// changed is unknown.
			if err := hold(j); err != nil {
				return gone, err
			}
		}
		return gone, fault.Errorf(fault.CodeNotSupported, "the journal %s of a dead transaction is of version %d, written by a newer agentfs; this one reads journals up to version %d, and leaves it, its files as that transaction left them.", f.rel(o.Key), j.Version, journalVersion).
			WithHint("run agentfs --recover with the version of agentfs that wrote it (or a later one); without one, inspect it, restore the objects it names by hand, then remove it")
	}
	if j.ended() {
		// Done, not in flight: its committer removes it, or, once its
		// lease is over (it may be deciding its commit point still),
		// this call.
		if expired {
			if err := f.dropJournal(ctx, o.Key, o.ETag, j); err != nil && !refused(err) {
				return gone, errors.Join(err, errHoldsNone)
			}
		}
		return gone, nil
	}
	if !expired && !(j.Claimed && j.RollbackFailed) {
		return live, nil
	}
	if hold != nil {
		if err := hold(j); err != nil {
			return gone, err
		}
	}
	j.Claimed, j.RollbackFailed, j.Claim = true, false, newID()
	claimed, err := f.putJournal(ctx, o.Key, o.ETag, j)
	if code, status := s3client.Code(err); err != nil && code == "NoSuchKey" {
		return gone, nil
	} else if err != nil && status == http.StatusPreconditionFailed {
		return live, nil // renewed, or claimed by another recovery, meanwhile
	}
	if err != nil {
		return gone, f.mapErr(err, journalDir)
	}
	if _, err := f.rollBack(ctx, j); err != nil {
		if ctx.Err() != nil {
			return gone, err // the call's own end, not the store's refusal
		}
		j.RollbackFailed = true
		_, _ = f.putJournal(ctx, o.Key, claimed.ETag, j) // unsaid, the claim's lease runs out
		return gone, rollbackRefused(f.rel(o.Key), err)
	}
	// Ended before it goes: left, it is not rolled back again (over what
	// other calls did since). Still claimed: its committer, alive after
	// all, must not take the journal for its own (see lease.write).
	ended := j.endedAs(j.rollsForward())
	ended.Claimed, ended.Lease = true, j.Lease
	if rewritten, err := f.putJournal(ctx, o.Key, claimed.ETag, ended); err == nil {
		claimed = rewritten
	}
	state := rolledBack
	if j.rollsForward() {
		state = finished
	}
	return state, f.dropJournal(ctx, o.Key, claimed.ETag, j)
}

// errHoldsNone is the cause of a recovery's failure at a journal that
// holds up no other (see heldFiles): one no agentfs wrote (unreadable, or
// naming objects elsewhere), which changed nothing of the workspace's, or
// one ended, whose changes stand or are undone.
var errHoldsNone = errors.New("the journal changes nothing")

// errHeld is the cause of a recovery's failure at a journal that waits
// for a newer one, stuck (see heldFiles).
var errHeld = errors.New("held up by a newer journal")

// rollbackRefused is the failure of the recovery of the journal jkey,
// whose rollback failed with err: it fails the call that ran it, whatever
// that call was about, so it says what is pending and how to end it
// rather than pass on the store's answer about a file it never named.
func rollbackRefused(jkey string, err error) error {
	if tagsDenied(err) {
		return fault.Errorf(fault.CodePermissionDenied, "the rollback of a transaction that stopped part way, journal %s, may not read the tags of a file's copy, which it puts back with the file (%v).", jkey, err).
			WithHint("grant s3:GetObjectTagging and s3:PutObjectTagging on the bucket to these credentials, then run agentfs --recover, which undoes the transaction; then read its files").WithCause(err)
	}
	return fault.Errorf(fault.CodeIOError, "the rollback of a transaction that stopped part way, journal %s, failed (%v).", jkey, err).
		WithHint("fix what the store refuses there (or, if it could not be reached, wait until it can), then run agentfs --recover, which undoes the transaction; then read its files").WithCause(err)
}

// ownKeys reports whether every key j names is one agentfs wrote there:
// the objects below the workspace's prefix and outside its journal
// folder, their copies inside it. A journal is an object like any other,
// and one naming keys elsewhere would have recovery copy, write or delete
// objects outside the workspace.
func (f *FS) ownKeys(j journal) bool {
	copies := f.prefix + journalDir + "/"
	// canonical: no ".." segment, which the store may resolve (versitygw
	// does), to reach outside the workspace or into a journal folder. (Not
	// clean's form: a directory moved may hold keys another tool wrote,
	// "a//b" say, and its journal is agentfs's.)
	canonical := func(rel string) bool {
		return rel != "" && !strings.HasPrefix(rel, "/") && !slices.Contains(strings.Split(rel, "/"), "..")
	}
	object := func(k string) bool {
		rel, ok := strings.CutPrefix(k, f.prefix)
		return ok && canonical(rel) && !inJournal(strings.TrimSuffix(rel, "/"))
	}
	backup := func(k string) bool {
		rel, ok := strings.CutPrefix(k, copies)
		return k == "" || ok && canonical(rel) && !inJournal(rel)
	}
	for _, jo := range j.Ops {
		if !object(jo.Key) || !backup(jo.Backup) {
			return false
		}
	}
	for _, m := range j.Moves {
		if !object(m.From) || !object(m.To) || !backup(m.Backup) {
			return false
		}
	}
	for _, k := range j.Copies {
		if k == "" || !backup(k) {
			return false
		}
	}
	return true
}

// newID names a transaction and its journal: its start time, then 96
// random bits.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	// The start time first, to the nanosecond, so that names sort by age
	// (see claim).
	return time.Now().UTC().Format("20060102T150405.000000000") + "-" + hex.EncodeToString(b)
}
