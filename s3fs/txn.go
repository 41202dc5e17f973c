package s3fs

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path"
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

// defaultLease is how long a transaction may take: a journal older than
// this is taken for the journal of a process that died, and rolled back by
// the next transaction. It dwarfs a commit's few seconds and a clock's
// skew.
const defaultLease = 2 * time.Minute

// journal is what a transaction will change: enough for another process
// to restore every object as it was.
type journal struct {
	Ops []journalOp `json:"ops,omitempty"`
	// Moves are the objects of a move (see move.go).
	Moves []journalMove `json:"moves,omitempty"`
}

type journalOp struct {
	Key string `json:"key"`
	// Old is the ETag of the object before, "" when there was none; Backup
	// is the key of its copy.
	Old    string `json:"old,omitempty"`
	Backup string `json:"backup,omitempty"`
	// New is the ETag the write gives (the MD5 of its bytes), "" for a
	// removal.
	New string `json:"new,omitempty"`
}

// Commit applies ops all or nothing. Every compare-and-swap is checked
// first; then a journal object names the changes and copies of the objects
// they replace are made; then each change is made, itself a
// compare-and-swap (If-Match, If-None-Match: *). Removing the journal is
// the commit point: a failure before it restores every object changed, and
// a process killed before it leaves a journal that the next transaction
// rolls back once its lease has passed. Readers may see some changes before
// others while it runs.
func (f *FS) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	if err := f.Recover(ctx); err != nil {
		return nil, err
	}
	keys, olds, err := f.checkOps(ctx, ops)
	if err != nil {
		return nil, err
	}
	id := newID()
	jkey := f.prefix + journalDir + "/" + id + ".json"
	var j journal
	for i, op := range ops {
		jo := journalOp{Key: f.key(keys[i]), Old: olds[i]}
		if jo.Old != "" {
			jo.Backup = f.prefix + journalDir + "/" + id + "/" + strconv.Itoa(i)
		}
		if !op.Remove {
			sum := md5.Sum(op.Data)
			jo.New = hex.EncodeToString(sum[:])
		}
		j.Ops = append(j.Ops, jo)
	}
	data, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	if _, err := f.c.Put(ctx, jkey, data, nil); err != nil {
		return nil, f.mapErr(err, journalDir)
	}
	infos, err := f.apply(ctx, keys, ops, j)
	if err != nil {
		// Nothing of it stays: the journal goes with what was restored.
		if rerr := f.rollBack(ctx, j); rerr != nil {
			return nil, rerr
		}
		return nil, errors.Join(err, f.dropJournal(ctx, jkey, j))
	}
	if err := f.dropJournal(ctx, jkey, j); err != nil {
		return nil, err
	}
	return infos, nil
}

// checkOps checks every op against the store as it is: distinct files, no
// directory, no file above a new one, and each compare-and-swap. It
// returns the paths cleaned and the ETags of the objects there ("" for
// none).
func (f *FS) checkOps(ctx context.Context, ops []backend.Op) (keys, olds []string, err error) {
	seen := map[string]bool{}
	for _, op := range ops {
		c, err := f.clean(op.Path)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case c == ".":
			return nil, nil, fault.Errorf(fault.CodeNotAFile, "the path is the workspace's root, not a file.").WithPath(c).
				WithHint("name a file inside the workspace")
		case seen[c]:
			return nil, nil, fault.InvalidArgument("a transaction changes the file twice.").WithPath(c).
				WithHint("make one change per file, with its final content")
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
		}
		version := o.ETag
		if err := backend.CheckSwap(c, op.Write, found, version); err != nil {
			return nil, nil, err
		}
		keys, olds = append(keys, c), append(olds, version)
	}
	return keys, olds, nil
}

// apply copies the objects to replace, then makes each change as a
// compare-and-swap against the version checked.
func (f *FS) apply(ctx context.Context, keys []string, ops []backend.Op, j journal) ([]backend.FileInfo, error) {
	for i, jo := range j.Ops {
		if jo.Backup == "" {
			continue
		}
		if _, err := f.c.Copy(ctx, jo.Key, jo.Old, jo.Backup, nil); err != nil {
			return nil, f.swapErr(ctx, keys[i], backend.WriteOptions{IfVersion: jo.Old}, err)
		}
	}
	infos := make([]backend.FileInfo, len(ops))
	for i, op := range ops {
		jo, c := j.Ops[i], keys[i]
		swap := backend.WriteOptions{IfVersion: jo.Old, IfAbsent: jo.Old == ""}
		if op.Remove {
			if jo.Old == "" {
				continue
			}
			if err := f.deleteIf(ctx, c, jo.Old); err != nil {
				return nil, f.swapErr(ctx, c, swap, err)
			}
			continue
		}
		h := s3client.Condition(jo.Old, "")
		if jo.Old == "" {
			h = s3client.Condition("", "*")
		}
		up, err := f.c.Put(ctx, jo.Key, op.Data, h)
		if err != nil {
			return nil, f.swapErr(ctx, c, swap, err)
		}
		if up.ETag != jo.New {
			return nil, notSupported(c, "content-hash ETags here, which a transaction needs to recognise its own writes",
				"use write and edit, which need none")
		}
		infos[i] = fileInfo(path.Base(c), up)
	}
	return infos, nil
}

// rollBack restores each object of j that holds what the transaction made
// of it: its copy put back, or, when it had none, the object removed. An
// object another writer changed since is left as it is.
func (f *FS) rollBack(ctx context.Context, j journal) error {
	for _, jo := range j.Ops {
		o, err := f.c.Head(ctx, jo.Key)
		found := err == nil
		if code, _ := s3client.Code(err); err != nil && code != "NoSuchKey" {
			return f.mapErr(err, jo.Key)
		}
		cur := o.ETag
		err = nil
		switch {
		case found && jo.New != "" && cur == jo.New && jo.Old == "":
			// Written where nothing was: removed again.
			err = f.deleteKey(ctx, jo.Key, cur)
		case found && jo.New != "" && cur == jo.New, !found && jo.New == "" && jo.Old != "":
			// Replaced or removed: the copy goes back.
			err = f.restore(ctx, jo, found, cur)
		}
		if err != nil {
			return err
		}
	}
	for _, m := range j.Moves {
		if err := f.rollBackMove(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// restore puts the copy of jo's object back, over the version cur, or
// where the object is missing.
func (f *FS) restore(ctx context.Context, jo journalOp, found bool, cur string) error {
	body, err := f.c.Get(ctx, jo.Backup, "", 0, 0)
	if err != nil {
		// A copy never made: the change it would undo was never made either.
		if code, _ := s3client.Code(err); code == "NoSuchKey" {
			return nil
		}
		return f.mapErr(err, jo.Key)
	}
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		return f.mapErr(err, jo.Key)
	}
	h := s3client.Condition(cur, "")
	if !found {
		h = s3client.Condition("", "*")
	}
	_, err = f.c.Put(ctx, jo.Key, data, h)
	if code, status := s3client.Code(err); err != nil && (status == 412 || code == "NoSuchKey") {
		return nil // changed by another writer since: theirs stays
	}
	return f.mapErr(err, jo.Key)
}

// deleteKey deletes the object key If-Match etag; one changed since stays.
func (f *FS) deleteKey(ctx context.Context, key, etag string) error {
	err := f.deleteIf(ctx, strings.TrimPrefix(key, f.prefix), etag)
	if code, status := s3client.Code(err); err != nil && (status == 412 || code == "NoSuchKey") {
		return nil
	}
	return f.mapErr(err, key)
}

// dropJournal removes the journal, the commit point, then the copies.
func (f *FS) dropJournal(ctx context.Context, jkey string, j journal) error {
	if err := f.c.Delete(ctx, jkey, ""); err != nil {
		return f.mapErr(err, journalDir)
	}
	var backups []string
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
	if len(backups) == 0 {
		return nil
	}
	return f.deleteKeys(ctx, journalDir, backups)
}

// Recover rolls back the transactions whose process died: those whose
// journal is older than the lease. Copies left by a transaction that
// committed but died before removing them are removed.
func (f *FS) Recover(ctx context.Context) error {
	dir := f.prefix + journalDir + "/"
	journals, copies := map[string]bool{}, map[string][]string{}
	stale := time.Now().Add(-f.lease)
	for o, err := range f.c.List(ctx, dir, "", 0, "") {
		if err != nil {
			return f.mapErr(err, journalDir)
		}
		rest := o.Key[len(dir):]
		if id, ok := strings.CutSuffix(rest, ".json"); ok && !strings.Contains(id, "/") {
			journals[id] = o.LastModified.Before(stale)
			continue
		}
		if id, _, ok := strings.Cut(rest, "/"); ok && o.LastModified.Before(stale) {
			copies[id] = append(copies[id], o.Key)
		}
	}
	for id, old := range journals {
		if !old {
			continue
		}
		if err := f.recoverOne(ctx, dir+id+".json"); err != nil {
			return err
		}
	}
	for id, keys := range copies {
		if _, ok := journals[id]; !ok {
			if err := f.deleteKeys(ctx, journalDir, keys); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *FS) recoverOne(ctx context.Context, jkey string) error {
	body, err := f.c.Get(ctx, jkey, "", 0, 0)
	if err != nil {
		if code, _ := s3client.Code(err); code == "NoSuchKey" {
			return nil // recovered by another process meanwhile
		}
		return f.mapErr(err, journalDir)
	}
	var j journal
	err = json.NewDecoder(body).Decode(&j)
	body.Close()
	if err != nil {
		return fault.Errorf(fault.CodeIOError, "the journal %s cannot be read: %v.", jkey, err).
			WithHint("inspect it, restore the objects it names by hand, then remove it")
	}
	if err := f.rollBack(ctx, j); err != nil {
		return err
	}
	return f.dropJournal(ctx, jkey, j)
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}
