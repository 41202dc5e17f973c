package s3fs

import (
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// WriteFile replaces or creates the object at path with one PUT, which the
// store makes atomic: readers see the old or the new object. IfVersion is
// If-Match (STALE on 412, or on 404 when the object is gone), IfAbsent is
// If-None-Match: * (EXISTS), so the compare-and-swap is the store's own.
// A write of a new path first checks that it is no directory and lies
// below no file: a store would take both keys, a disk neither. A PUT
// whose answer was lost is judged by the object (see lostWrite).
func (f *FS) WriteFile(ctx context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	switch {
	case c == ".":
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotAFile, "the path is the workspace's root, not a file.").WithPath(c).
			WithHint("write to a file path inside the workspace")
	case opts.Executable:
		return backend.FileInfo{}, notSupported(c, "file modes", "drop executable: an object is never executable")
	case opts.InPlace:
		return backend.FileInfo{}, notSupported(c, "hard links nor in-place rewrites", "drop inPlace: a write replaces the object whole")
	}
	ifNone, was := "", opts.IfVersion // was: the version the write starts from, "" for none
	if opts.IfVersion != "" {
		if err := f.settled(ctx, c, opts.IfVersion); err != nil {
			return backend.FileInfo{}, err
		}
	} else {
		// A creation the caller's Stat found NOT_FOUND needs no check of
		// its own: that Stat's HEAD, listing and HEADs above asked all
		// that checkNewFile asks, and a new file sent them twice.
		if !(opts.Stated && opts.IfAbsent) {
			if err := f.checkNewFile(ctx, c); err != nil {
				return backend.FileInfo{}, err
			}
		}
		if opts.IfAbsent {
			ifNone = "*"
		} else if o, found, err := f.head(ctx, c); err != nil || found && o.ETag == "" {
			// A write with no condition is one over a file read with
			// no version (agentfs conditions every other).
			return backend.FileInfo{}, cmp.Or(err, noETag(c))
		} else {
			was = o.ETag
		}
	}
	h := s3client.Condition(opts.IfVersion, ifNone)
	if err := f.carry(ctx, c, was, h); err != nil {
		return backend.FileInfo{}, err
	}
	mark := newID()
	h.Set("X-Amz-Meta-"+writeMeta, mark)
	up, err := f.c.Put(ctx, f.key(c), data, h)
	if s3client.AnswerLost(err) {
		return f.lostWrite(ctx, c, data, h, mark, was, opts, err)
	}
	if errors.Is(err, s3client.ErrUnsent) {
		// Taken for never sent whole, it may have been all the same: the
		// store can answer before the transport reads the body's end,
		// which is when it counts the body sent. The object says: this
		// write's mark on it, it was made (an append's caller, told the
		// file changed, appended again).
		if now, _, made, herr := f.landed(ctx, f.key(c), data, writeMeta, mark); herr == nil && made {
			return fileInfo(path.Base(c), now), nil
		}
	}
	if err != nil {
		return backend.FileInfo{}, f.swapErr(ctx, c, opts, err)
	}
	return fileInfo(path.Base(c), up), nil
}

// carry adds to h what a write over version was of c ("" for none)
// keeps of it, where it dropped it all:
//   - the headers that say how the object is served, as a copy keeps
//     them (Content-Type, Cache-Control, Content-Disposition,
//     Content-Language, Expires): the page of a website bucket
//     (text/html) became binary/octet-stream, which a browser downloads.
//     Not Content-Encoding: the bytes written are those the call gave,
//     as read shows them (a gzip object's compressed bytes), never
//     encoded again; nor the user metadata, which may describe the bytes
//     replaced (a tool's checksum or mtime);
//   - how it is stored (see s3client.ObjectInfo.Stored): its storage
//     class (an object another tool moved to STANDARD_IA went back to
//     STANDARD) and its encryption under a KMS key, with the key (it was
//     written under the bucket's default, or none);
//   - its tags (lifecycle or cost-allocation rules go by them), which
//     cost a request of their own, sent only when the version has some.
//
// The version's HEAD, or its read, told them up to carryFresh ago;
// forgotten, or older, they cost a HEAD.
func (f *FS) carry(ctx context.Context, c, was string, h http.Header) error {
	if was == "" {
		return nil
	}
	s, found, err := f.seenAt(ctx, f.key(c), was)
	if err != nil || !found {
		return err // gone or changed: the write's condition refuses it
	}
	return f.carrySeen(ctx, c, s, h)
}

// carrySeen is carry of the version s of c.
func (f *FS) carrySeen(ctx context.Context, c string, s seenVersion, h http.Header) error {
	for k, v := range s.kept {
		if k != "Content-Encoding" && h[k] == nil {
			h[k] = v
		}
	}
	for k, v := range s.stored {
		h[k] = v
	}
	if err := f.c.KeepTags(ctx, f.key(c), s.tags, h); err != nil {
		return f.tagsErr(c, s.tags, err)
	}
	return nil
}

// seenAt is what this process saw of the object key at version was, at a
// HEAD or a read up to carryFresh ago; forgotten, or older, a HEAD asks it
// again. found is false when the object is no longer at was.
func (f *FS) seenAt(ctx context.Context, key, was string) (s seenVersion, found bool, err error) {
	if s, seen := f.marks.seen(key, was); seen && time.Since(s.at) < carryFresh {
		return s, true, nil
	}
	o, found, err := f.headKey(ctx, key)
	if err != nil || !found || o.ETag != was {
		return seenVersion{}, false, err
	}
	return seenVersion{mark: o.Meta[txnMeta], kept: o.Kept, stored: o.Stored, tags: o.Tags}, true, nil
}

// tagsErr is the failure to read the n tags of c, which a write or a
// copy keeps: credentials that may not read them (the HEAD or the GET
// passed) are PERMISSION_DENIED, with a hint naming the permissions.
func (f *FS) tagsErr(c string, n int, err error) error {
	if tagsRefused(err) {
		return fault.Errorf(fault.CodePermissionDenied, "the object store refused to tell the file's %d tags, which a write or a move keeps: %s.", n, strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("grant s3:GetObjectTagging and s3:PutObjectTagging on the bucket, or remove the file's tags with another tool to write or move it without them").WithCause(err)
	}
	return f.mapErr(err, c)
}

// tagsDenied reports err, a failure to put an object back from a copy,
// as CopyThrough's refusal to read the copy's tags (s3client.TagsError)
// to credentials that may not: a rollback needs s3:GetObjectTagging to
// read them, and s3:PutObjectTagging to put them back with the object.
func tagsDenied(err error) bool {
	var tags *s3client.TagsError
	return errors.As(err, &tags) && tagsRefused(tags.Err)
}

// tagsRefused reports err, a read of an object's tags (GetObjectTagging),
// refused to credentials that may not read them.
func tagsRefused(err error) bool {
	code, status := s3client.Code(err)
	return code == "AccessDenied" || status == http.StatusForbidden
}

// rollbackTagsErr is the failure, err, of a rollback to put c back from
// its copy, which has tags it may not read (see tagsDenied).
func rollbackTagsErr(c string, err error) error {
	return fault.Errorf(fault.CodePermissionDenied, "the object store refused to tell the tags of the copy that puts the file back, which the rollback keeps: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
		WithHint("grant s3:GetObjectTagging and s3:PutObjectTagging on the bucket, then run agentfs --recover, which undoes the transaction").WithCause(err)
}

// writeMeta is the user metadata that marks the object a write puts: its
// value, new at each write, tells that write's object from another
// writer's once its answer is lost (see landed). A journal's writes carry
// it too.
const writeMeta = "agentfs-write"

// landed judges a PUT of data at key whose answer was lost
// (s3client.AnswerLost), and which carried mark as the metadata meta, by
// the object there now: landed when it is that PUT's. This is proof, not
// a guess: mark is a value no other request to key sent (see newID), so the PUT
// that made the object is this one, not another writer's of the same
// bytes (an append of the same line). It holds on a store whose ETags are
// no MD5 of the bytes (AWS's under a KMS key), where the ETag was the
// proof and never matched: a write made was IO_ERROR "may have been
// made". Where the ETag is the MD5 of the bytes (see contentHashed), it
// must be that of the bytes sent too.
func (f *FS) landed(ctx context.Context, key string, data []byte, meta, mark string) (now s3client.ObjectInfo, found, made bool, err error) {
	now, found, err = f.headKey(ctx, key)
	sum := md5.Sum(data)
	made = found && now.Meta[meta] == mark && (!contentHashed(now.ETag, now.Stored) || now.ETag == hex.EncodeToString(sum[:]))
	return now, found, made, err
}

// lostWrite judges the write of data at c, with the headers h (its
// condition, and its mark), whose answer was lost (err), by the object:
// made (see landed), the write succeeded. Still at was, the version the
// write started from ("" for none), it was not made yet, but may be still:
// a gateway's 504 comes while the store writes, a connection is cut as it
// does. It is then sent again as it was, which makes it or is refused for
// good: the first, landing after, is refused by its condition (or puts the
// same bytes again), and a refusal is the file changed by another writer,
// the compare-and-swap's answer. Otherwise (another writer's version, or
// none that can be read) the change may have been made, and a retry could
// make it twice (an append).
func (f *FS) lostWrite(ctx context.Context, c string, data []byte, h http.Header, mark, was string, opts backend.WriteOptions, err error) (backend.FileInfo, error) {
	key := f.key(c)
	now, found, made, herr := f.landed(ctx, key, data, writeMeta, mark)
	why := "the file is at another version now, another writer's, or this write's changed since"
	if !made && herr == nil && found == (was != "") && now.ETag == was {
		up, rerr := f.c.Put(ctx, key, data, h)
		if rerr == nil {
			return fileInfo(path.Base(c), up), nil
		}
		if refused(rerr) || s3client.AnswerLost(rerr) {
			now, _, made, herr = f.landed(ctx, key, data, writeMeta, mark)
			if !made && herr == nil && refused(rerr) {
				return backend.FileInfo{}, f.swapErr(ctx, c, opts, rerr)
			}
		} else {
			why = fmt.Sprintf("not made when looked at, and sent again it failed (%s), while the first may still be made", strings.TrimSuffix(rerr.Error(), "."))
		}
	}
	if made {
		return fileInfo(path.Base(c), now), nil
	}
	if herr != nil {
		why = fmt.Sprintf("the file could not be read to tell (%s)", strings.TrimSuffix(fault.AsError(herr).Message, "."))
	}
	return backend.FileInfo{}, fault.Errorf(fault.CodeIOError, "the write's answer was lost (%s), and whether it was made is unknown: %s.", strings.TrimSuffix(err.Error(), "."), why).WithPath(c).
		WithHint("the change may have been made: read the file before retrying").WithCause(err)
}

// noETag refuses a change of c, an object the store gives no ETag (a file
// put in a versitygw bucket's directory by hand): a change of it can be
// neither conditional nor undone from a backup, and the rollback of a
// transaction over such objects took them for files it had created, and
// deleted them.
func noETag(c string) error {
	return fault.Errorf(fault.CodeNotSupported, "the store gives this object no ETag (version), so agentfs cannot change it safely.").WithPath(c).
		WithHint("rewrite the object through the S3 API (a copy onto itself gives it one), then retry")
}

// checkNewFile refuses a write to c when c is a directory or a file lies
// above it.
func (f *FS) checkNewFile(ctx context.Context, c string) error {
	dir, err := f.isDir(ctx, c)
	if err != nil {
		return err
	}
	if dir {
		return fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(c).
			WithHint("write to a file path inside the directory")
	}
	if parent := path.Dir(c); parent != "." {
		if dir, err := f.isDir(ctx, parent); err != nil || dir {
			return err
		}
		if d := f.fileAbove(ctx, c); d != "" {
			return notADirectory(c, d)
		}
	}
	return nil
}

// swapErr maps the failure of a conditional change of c: a 412, or a 404
// under If-Match, is the compare-and-swap refused, described by the object
// as it is now. So is a change whose body was never sent whole while the
// object no longer meets its condition: the refusal was lost with the
// connection (s3client.ErrUnsent), and the change surely did not land.
func (f *FS) swapErr(ctx context.Context, c string, opts backend.WriteOptions, err error) error {
	code, status := s3client.Code(err)
	refused := status == http.StatusPreconditionFailed || opts.IfVersion != "" && code == "NoSuchKey"
	conditional := opts.IfVersion != "" || opts.IfAbsent
	if !refused && !(conditional && errors.Is(err, s3client.ErrUnsent)) {
		return f.mapErr(err, c)
	}
	o, found, herr := f.head(ctx, c)
	if herr != nil {
		return herr
	}
	version := o.ETag
	if serr := backend.CheckSwap(c, opts, found, version); serr != nil {
		return serr
	}
	if !refused {
		return f.mapErr(err, c)
	}
	// The object changed back to the expected version since the refusal.
	return fault.Errorf(fault.CodeStale, "the file changed while it was written.").WithPath(c).
		WithDetail("currentVersion", version).
		WithHint("read the file again and redo the change against its current content")
}

// backupErr maps the failure of the copy of c, read at version old, to a
// backup beside a journal: a store may answer a copy whose source a
// writer deletes meanwhile with a 500, not a 404 (versitygw does). Nothing
// is changed yet, so a source found gone or changed is a lost race, as a
// 404 or a 412 is.
func (f *FS) backupErr(ctx context.Context, c, old string, err error) error {
	swap := backend.WriteOptions{IfVersion: old}
	if _, status := s3client.Code(err); status >= http.StatusInternalServerError {
		if o, found, herr := f.head(ctx, c); herr == nil {
			if serr := backend.CheckSwap(c, swap, found, o.ETag); serr != nil {
				return serr
			}
		}
	}
	return f.swapErr(ctx, c, swap, err)
}

// Remove deletes the object at path, or the directory at path: an empty
// one's marker, or with Recursive every key below it, by batch deletes of
// a recursive listing. IfVersion makes the deletion of an object
// conditional (If-Match, STALE on 412). A directory a removal empties keeps
// a marker, as a disk keeps the parent of a removed file.
func (f *FS) Remove(ctx context.Context, p string, opts backend.RemoveOptions) (bool, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return false, err
	}
	if c == "." {
		return false, fault.RootRefused(c)
	}
	swap := backend.WriteOptions{IfVersion: opts.IfVersion}
	// A file the caller's Stat found at IfVersion, or a directory, needs
	// no HEAD: that Stat's asked it (and keeps the file's mark for
	// settled), and an rm sent it twice. The DELETE is If-Match
	// IfVersion all the same, and a directory's removal lists it.
	o, found := s3client.ObjectInfo{ETag: opts.IfVersion}, opts.Stated && opts.IfVersion != ""
	if !opts.Stated {
		if o, found, err = f.head(ctx, c); err != nil {
			return false, err
		}
		if found && backend.NamesDirectory(p) {
			// A final slash names the directory of a name that is a file
			// and a directory both (see Stat): it is removed, not the
			// file.
			dir, err := f.isDir(ctx, c)
			if err != nil {
				return false, err
			}
			found = !dir
		}
	}
	if found {
		if o.ETag == "" {
			return false, noETag(c)
		}
		var below []string
		if opts.Recursive {
			// A store may hold c as a file and a directory both (a and
			// a/b, put by another tool): rm -r removes both, where it
			// removed the file alone, said deleted, and left c there.
			if below, err = f.treeBelow(ctx, c); err != nil {
				return false, err
			}
			if len(below) > 0 && opts.Checked {
				// The precondition is the file's: the directory, which
				// no read covered, was removed with it.
				return false, fault.InvalidArgument("the path is a file and a directory both, and a precondition covers the file, not what lies below the directory, so a recursive removal cannot be conditional on it.").WithPath(c).
					WithHint("drop -r/--recursive to remove the file alone under the precondition, or drop the precondition to remove both; nothing was removed")
			}
		}
		if opts.IfVersion != "" {
			if err := f.settled(ctx, c, opts.IfVersion); err != nil {
				return false, err
			}
		}
		if err := f.keepParentOf(ctx, c); err != nil {
			return false, err
		}
		if err := f.deleteIf(ctx, c, opts.IfVersion); err != nil {
			if !s3client.AnswerLost(err) {
				return false, f.swapErr(ctx, c, swap, err)
			}
			if err := f.lostRemoval(ctx, c, cmp.Or(opts.IfVersion, o.ETag), err); err != nil {
				return false, err
			}
		}
		if len(below) > 0 {
			if err := f.deleteKeys(ctx, c, below); err != nil {
				return true, err
			}
			if err := f.emptied(ctx, c); err != nil {
				return true, err
			}
		}
		return true, f.keepParentAfter(ctx, c, "was removed")
	}
	keys, mangled, unversioned, err := f.listBelow(ctx, c)
	if err != nil {
		return false, err
	}
	switch {
	case len(keys) == 0:
		return false, backend.CheckSwap(c, swap, false, "")
	case f.holdsDenied(c):
		return false, fault.Errorf(fault.CodeDenied, "the directory holds a denied location.").WithPath(c).
			WithHint("remove the entries outside the denied location one by one")
	case opts.IfVersion != "":
		return false, fault.Errorf(fault.CodeStale, "the path is a directory now, not the file that was read.").WithPath(c).
			WithHint("read the path again and redo the change")
	case !opts.Recursive && (len(keys) > 1 || keys[0] != f.dirKey(c)):
		return false, fault.Errorf(fault.CodeNotEmpty, "the directory is not empty.").WithPath(c).
			WithHint("pass -r/--recursive to remove it with everything in it")
	case unversioned != "":
		return false, noETag(f.rel(unversioned)) // before anything is deleted
	}
	if err := f.checkListed(ctx, mangled); err != nil {
		return false, err
	}
	if err := f.keepParentOf(ctx, c); err != nil {
		return false, err
	}
	if err := f.deleteKeys(ctx, c, keys); err != nil {
		return false, err
	}
	if opts.Recursive {
		if err := f.emptied(ctx, c); err != nil {
			return true, err
		}
	}
	return true, f.keepParentAfter(ctx, c, "was removed")
}

// emptied is the NOT_EMPTY of directory c when a key lies below it once a
// recursive removal deleted the keys it listed: another writer put it
// meanwhile, and the removal answered deleted with the directory there,
// holding that file. A disk's removal answers so (see localfs). One
// listing of at most one key.
func (f *FS) emptied(ctx context.Context, c string) error {
	for o, err := range f.c.List(ctx, f.dirKey(c), "", 1, "") {
		if err != nil {
			return f.mapErr(err, c)
		}
		return fault.Errorf(fault.CodeNotEmpty, "entries appeared in the directory while it was being removed (%s).", f.rel(o.Key)).WithPath(c).
			WithHint("another process writes there; what was removed stays removed: stop that writer, then remove the rest again")
	}
	return nil
}

// listBelow lists every key below directory c, with those the store
// listed mangled (see checkListed) and the first it gives no ETag.
func (f *FS) listBelow(ctx context.Context, c string) (keys, mangled []string, unversioned string, err error) {
	for o, err := range f.c.List(ctx, f.dirKey(c), "", 0, "") {
		if err != nil {
			return nil, nil, "", f.mapErr(err, c)
		}
		if o.ETag == "" && !strings.HasSuffix(o.Key, "/") && unversioned == "" {
			unversioned = o.Key
		}
		if err := f.markerHoldsBytes(o); err != nil {
			return nil, nil, "", err
		}
		keys = append(keys, o.Key)
		if o.Mangled {
			mangled = append(mangled, o.Key)
		}
	}
	return keys, mangled, unversioned, f.journalBelow(c, f.dirKey(c), keys)
}

// markerHoldsBytes is the NOT_SUPPORTED of a directory's marker (a key
// with a final /) that holds bytes, as another tool may put it: ls, find
// and read never show them, and a removal or a move of the directory,
// which deleted the marker (a move put an empty one in its place), would
// lose them unseen.
func (f *FS) markerHoldsBytes(o s3client.ObjectInfo) error {
	if o.Size == 0 || !strings.HasSuffix(o.Key, "/") {
		return nil
	}
	dir := f.rel(strings.TrimSuffix(o.Key, "/"))
	return fault.Errorf(fault.CodeNotSupported, "the marker of directory %s (the key %s, which another tool put) holds %d bytes, which agentfs neither shows nor moves, so the directory is not removed or moved with them; nothing was changed.", dir, o.Key, o.Size).
		WithPath(dir).WithDetail("markerBytes", o.Size).
		WithHint("read the marker with another S3 tool (aws s3api get-object --bucket %s --key %s FILE) and delete it there if its bytes are not needed, then retry", f.c.Bucket(), o.Key)
}

// treeBelow is the keys below c that a recursive removal of c deletes
// once it has removed the file c: none, unless c is a directory too. They
// are checked, as a directory's removal checks them, before anything is
// deleted.
func (f *FS) treeBelow(ctx context.Context, c string) ([]string, error) {
	keys, mangled, unversioned, err := f.listBelow(ctx, c)
	switch {
	case err != nil || len(keys) == 0:
		return nil, err
	case f.holdsDenied(c):
		return nil, fault.Errorf(fault.CodeDenied, "the path is a file and a directory both, and the directory holds a denied location.").WithPath(c).
			WithHint("remove the file without -r/--recursive, and the entries outside the denied location one by one")
	case unversioned != "":
		return nil, noETag(f.rel(unversioned))
	}
	return keys, f.checkListed(ctx, mangled)
}

// lostRemoval judges the removal of c, whose answer was lost (err), by
// the object: gone, it was removed (by this DELETE, or by another at
// once, which a store answers alike). Still at was, the version it
// removes, the DELETE has not landed yet, and is sent again If-Match was:
// whichever arrives first removes that version, and the other finds it
// gone (a store may answer that resend 404, or 412 once another writer
// put a file after the first landed: judged by the object again, not
// STALE for a removal that was made). At another version, another
// writer's, the removal may or may not have been made before that
// writer's.
func (f *FS) lostRemoval(ctx context.Context, c, was string, err error) error {
	now, found, herr := f.head(ctx, c)
	if herr == nil && found && now.ETag == was {
		rerr := f.deleteIf(ctx, c, was)
		if rerr == nil {
			return nil
		}
		if !s3client.AnswerLost(rerr) && !refused(rerr) {
			return f.mapErr(rerr, c)
		}
		now, found, herr = f.head(ctx, c)
	}
	switch {
	case herr != nil:
		return f.mapErr(err, c)
	case !found:
		return nil
	case now.ETag == was:
		return f.mapErr(err, c) // the resend's answer lost too
	}
	e := fault.AsError(f.mapErr(err, c))
	return e.WithDetail("currentVersion", now.ETag).
		WithHint("the removal's answer was lost and the file is at another version now, another writer's: it may have been removed and written again; read it before removing it again")
}

// keepParentAfter is keepParent once c is removed (or moved away, done
// saying which): two removals at once of the two entries of a directory
// each saw the other's before, and neither put the marker, so the
// directory vanished, and its parents with it. The change is made
// whatever this answers, and its error says so: a caller told only that
// the store failed would retry a change already made.
func (f *FS) keepParentAfter(ctx context.Context, c, done string) error {
	if err := f.keepParent(ctx, c); err != nil {
		e := fault.AsError(err)
		return fault.Errorf(e.Code, "%s %s, but whether its directory is still there could not be checked, or its marker not put: %s", c, done, e.Message).
			WithPath(c).WithHint("do not redo the change; check the directory with ls, and write a file into it if it is gone").WithCause(err)
	}
	return nil
}

// checkListed fails, before anything is deleted or moved, when a key a
// listing may have mangled is not held as listed: the key stored cannot be
// named, and deleting the one listed, which does not exist, would succeed
// and leave it.
func (f *FS) checkListed(ctx context.Context, mangled []string) error {
	for _, k := range mangled {
		_, found, err := f.headKey(ctx, k)
		if err != nil {
			return err
		}
		if !found {
			return fault.Errorf(fault.CodeIOError, "the store listed a key it does not hold: it wrote a byte of the key that XML cannot carry (a control byte, or one not UTF-8) as U+FFFD, ignoring encoding-type=url, so the object cannot be named and nothing was changed.").
				WithPath(f.rel(k)).WithHint("remove or rename that object with a tool that reads the store's keys some other way, then retry")
		}
	}
	return nil
}

// deleteKeys deletes keys in batches (DeleteObjects, up to 1,000 a
// request), the first failure returned. One after a batch that landed
// says how many keys are gone: the failed request's own "nothing was
// written" read as if the whole removal had changed nothing.
func (f *FS) deleteKeys(ctx context.Context, c string, keys []string) error {
	for done := 0; done < len(keys); {
		n := min(len(keys)-done, 1000)
		if err := f.c.DeleteBatch(ctx, keys[done:done+n]); err != nil {
			e := fault.AsError(f.mapErr(err, c))
			if done == 0 || e == nil {
				return f.mapErr(err, c)
			}
			partial := fault.Errorf(e.Code, "deleting stopped after %d of the %d keys were deleted: %s", done, len(keys), e.Message).
				WithPath(e.Path).WithDetail("deleted", done).WithCause(err)
			if e.Code == fault.CodeIOError {
				return partial.WithHint("run it again to delete what is left")
			}
			return partial.WithHint("%s", e.Hint)
		}
		done += n
	}
	return nil
}

// keepParent puts the marker of the directory of c when the removal of c
// left it with no key.
func (f *FS) keepParent(ctx context.Context, c string) error {
	parent := path.Dir(c)
	if parent == "." {
		return nil
	}
	dir, err := f.isDir(ctx, parent)
	if err != nil || dir {
		return err
	}
	_, err = f.c.Put(ctx, f.dirKey(parent), nil, nil)
	return f.mapErr(err, parent)
}

// keepParentOf puts the marker of the directory of c, before c (a file
// or a directory) is removed, when c is all it holds: the directory then
// has a key all along, as a disk keeps the parent of a removed file. Put
// after the removal, it left a moment with none, in which a write of the
// directory's name made a file there (NOT_A_FILE on a disk), and the rm
// then failed with the removal made.
func (f *FS) keepParentOf(ctx context.Context, c string) error {
	parent := path.Dir(c)
	if parent == "." {
		return nil
	}
	for o, err := range f.c.List(ctx, f.dirKey(parent), "/", 2, "") {
		if err != nil {
			return f.mapErr(err, parent)
		}
		if o.Key != f.key(c) && o.Key != f.dirKey(c) {
			return nil // another entry, or the marker, keeps it
		}
	}
	_, err := f.c.Put(ctx, f.dirKey(parent), nil, nil)
	return f.mapErr(err, parent)
}

// deleteIf deletes the object at c, If-Match etag when etag is set.
func (f *FS) deleteIf(ctx context.Context, c, etag string) error {
	return f.c.Delete(ctx, f.key(c), etag)
}
