package s3fs

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

var (
	_ backend.Renamer   = (*FS)(nil)
	_ backend.RootNamer = (*FS)(nil)
)

// IsRoot reports whether p names the workspace's root, its prefix.
func (f *FS) IsRoot(p string) bool {
	c, err := f.clean(p)
	return err == nil && c == "."
}

// A store has no rename: a file or a directory moves by copying each object
// below it and deleting the originals, as one transaction of the journal
// (txn.go), so that a crash leaves all old or all new:
//
//  1. the source is listed, each object with its ETag, and the destination
//     checked as rename(2) would (EXISTS, NOT_A_FILE, NOT_A_DIRECTORY);
//  2. the journal names every object's old and new key and ETag; each
//     object and each destination is claimed by its key (claim.go), so
//     that of two moves that share one one goes on and the other is STALE
//     or waits; the sources and destinations are checked still as listed
//     (stillAsListed), and the journal rewritten to say the claims are
//     held;
//  3. each object is copied to its new key, the copy conditional on the
//     ETag listed and made If-None-Match: * when the destination was
//     absent, so that the store closes the window after the check: a PUT
//     through agentfs, or for an object over copyThrough the completion
//     of an upload the store copies in parts (versitygw ignores a
//     CopyObject's conditions on its destination), and marked with the journal's Mark (txnMeta), by which a rollback
//     tells the copy from a file another writer put there, of the same
//     bytes or not, and knows a store's copy whose ETag it never learnt;
//  4. the source is listed again: a key added meanwhile undoes it all;
//  5. the journal says deletions begin, and each original is deleted
//     If-Match its ETag, so an object changed since its copy undoes it
//     all (STALE; the journal says so first, see rollsForward) and no
//     update is lost;
//  6. the journal's rewrite as committed is the commit point; the
//     journal, its copies and claims go after it.
//
// A process killed (or paused past its lease) before step 5 leaves a
// journal that the next call rolls back (see Recover): the copies
// removed. From step 5 the next call finishes the move instead: the
// originals whose copies stand deleted, so that a deletion the paused
// process sends late repeats it (see rollsForward). After step 6, only
// the copies of replaced objects remain, which the next call removes.
// Directory markers move without conditions: they hold no data.

// journalMove is one object of a move.
type journalMove struct {
	From string `json:"from"`
	To   string `json:"to"`
	// ETag is From's when listed; New the copy's, when it differs (a
	// multipart object's copy is one part).
	ETag string `json:"etag"`
	New  string `json:"new,omitempty"`
	// Old is the ETag of the object To replaced, "" when there was none;
	// Backup is the key of its copy (a file moved over a file), and Class
	// the storage class of that object (see journalOp.Class), recorded
	// before the copy is made.
	Old    string `json:"old,omitempty"`
	Backup string `json:"backup,omitempty"`
	Class  string `json:"class,omitempty"`

	// tried is set as this process sends the copy (or the marker): from
	// then on it may be there, even when the answer is lost. deleted is
	// set as it sends the deletion of From. size is the copy's, once made.
	tried, deleted bool
	size           int64
}

func (m journalMove) marker() bool { return strings.HasSuffix(m.From, "/") }

func (m journalMove) copied() string {
	if m.New != "" {
		return m.New
	}
	return m.ETag
}

// Rename moves the file or directory from to to (see backend.Renamer) by
// copies and deletions in one journal transaction: all of it moves or none.
// IfVersion is checked on a file; IfAbsent refuses any destination;
// without it a file replaces a file, and a directory an empty directory.
// The directory from came from keeps a marker, as a disk keeps it.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	if _, err := f.Recover(ctx); err != nil {
		return backend.FileInfo{}, err
	}
	src, err := f.place(ctx, from)
	if err != nil {
		return backend.FileInfo{}, err
	}
	dst, err := f.place(ctx, to)
	if err != nil {
		return backend.FileInfo{}, err
	}
	switch {
	case src == ".":
		return backend.FileInfo{}, fault.RootRefused(src)
	case dst == ".":
		return backend.FileInfo{}, fault.RootRefused(dst)
	case dst == src || strings.HasPrefix(dst, src+"/"):
		return backend.FileInfo{}, fault.InvalidArgument("the destination is the source or inside it.").WithPath(dst).
			WithHint("move the directory somewhere outside itself")
	case f.holdsDenied(src):
		return backend.FileInfo{}, fault.Errorf(fault.CodeDenied, "the directory holds a denied location.").WithPath(src).
			WithHint("move the entries outside the denied location one by one")
	}
	moves, srcDir, err := f.listMove(ctx, src, dst, opts)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if err := f.checkDestination(ctx, dst, srcDir, opts, moves); err != nil {
		return backend.FileInfo{}, err
	}
	into := ""
	if srcDir {
		into = dst
	}
	copied, err := f.move(ctx, src, into, moves)
	if err != nil {
		return backend.FileInfo{}, err
	}
	// Committed: an error from here on must say the move was made.
	if err := f.keepParentAfter(ctx, src, "was moved to "+dst); err != nil {
		return backend.FileInfo{}, err
	}
	// The entry as the move made it, not read back: a Stat's HEAD (and a
	// directory's listing) that no caller reads, and whose failure would
	// have failed a move made.
	if srcDir {
		return dirInfo(path.Base(dst)), nil
	}
	return fileInfo(path.Base(dst), copied), nil
}

// listMove lists what moving src to dst copies: the object src, or every
// key below the directory src.
func (f *FS) listMove(ctx context.Context, src, dst string, opts backend.WriteOptions) (moves []journalMove, dir bool, err error) {
	if opts.Stated && opts.IfVersion != "" {
		// The caller's Lstat found the file at IfVersion: its HEAD asked
		// this one's, and the move checks the file again once it holds
		// its claims (stillAsListed).
		return []journalMove{{From: f.key(src), To: f.key(dst), ETag: opts.IfVersion}}, false, nil
	}
	var o s3client.ObjectInfo
	found := false
	if !opts.Stated { // else the caller's Lstat found a directory, no object
		if o, found, err = f.head(ctx, src); err != nil {
			return nil, false, err
		}
	}
	if found {
		if o.ETag == "" {
			return nil, false, noETag(src)
		}
		if err := backend.CheckSwap(src, backend.WriteOptions{IfVersion: opts.IfVersion}, true, o.ETag); err != nil {
			return nil, false, err
		}
		return []journalMove{{From: f.key(src), To: f.key(dst), ETag: o.ETag}}, false, nil
	}
	from, into := f.dirKey(src), f.dirKey(dst)
	var keys, mangled []string
	for o, err := range f.c.List(ctx, from, "", 0, "") {
		if err != nil {
			return nil, false, f.mapErr(err, src)
		}
		if o.ETag == "" && !strings.HasSuffix(o.Key, "/") {
			return nil, false, noETag(f.rel(o.Key))
		}
		if err := f.markerHoldsBytes(o); err != nil {
			return nil, false, err
		}
		moves = append(moves, journalMove{From: o.Key, To: into + o.Key[len(from):], ETag: o.ETag})
		keys = append(keys, o.Key)
		if o.Mangled {
			mangled = append(mangled, o.Key)
		}
	}
	if err := f.journalBelow(src, from, keys); err != nil {
		return nil, false, err
	}
	// A key the listing mangled cannot be copied or deleted by its name:
	// its copy failed as a lost race (LOCK_TIMEOUT after 8 attempts),
	// where rm -r says what it is.
	if err := f.checkListed(ctx, mangled); err != nil {
		return nil, false, err
	}
	if len(moves) == 0 {
		return nil, false, f.missing(ctx, src)
	}
	if opts.IfVersion != "" {
		return nil, false, fault.Errorf(fault.CodeStale, "the path is a directory now, not the file that was read.").WithPath(src).
			WithHint("read the path again and redo the change")
	}
	return moves, true, nil
}

// checkDestination refuses what rename(2) refuses at dst, and notes in
// moves the file a file replaces, and the marker of the empty directory a
// directory replaces. A refusal waits (STALE) while what it rests on is a
// change of a transaction in flight, which may yet be undone.
func (f *FS) checkDestination(ctx context.Context, dst string, srcDir bool, opts backend.WriteOptions, moves []journalMove) error {
	exists := fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst).
		WithHint("pass --overwrite to replace a file or an empty directory, or choose another destination")
	refuse := func(version string, refusal error) error {
		if err := f.settledAt(ctx, dst, version); err != nil {
			return err
		}
		return refusal
	}
	if opts.Stated && opts.IfAbsent {
		// The caller's Lstat found nothing at dst, as the HEAD, the
		// listing and the HEADs above below ask: it asked them. The move
		// checks again once it holds its claims (stillAsListed,
		// stillEmpty), and its copies are put If-None-Match: *.
		return nil
	}
	o, found, err := f.head(ctx, dst)
	if err != nil {
		return err
	}
	if found {
		switch {
		case opts.IfAbsent:
			return refuse(o.ETag, exists)
		case srcDir:
			return refuse(o.ETag, fault.DirOntoFile(dst))
		case o.ETag == "":
			return noETag(dst)
		}
		moves[0].Old = o.ETag
		return nil
	}
	var below []s3client.ObjectInfo
	for o, err := range f.c.List(ctx, f.dirKey(dst), "", 2, "") {
		if err != nil {
			return f.mapErr(err, dst)
		}
		below = append(below, o)
	}
	switch {
	case len(below) == 0:
		if d := f.fileAbove(ctx, dst); d != "" {
			return notADirectory(dst, d)
		}
		return nil
	case opts.IfAbsent:
		return refuse("", exists)
	case !srcDir:
		return refuse("", fault.DirectoryDestination(dst, "NAME"))
	case len(below) > 1 || below[0].Key != f.dirKey(dst):
		return refuse("", fault.FullDestination(dst))
	}
	if err := f.markerHoldsBytes(below[0]); err != nil {
		return err // the marker a move replaces
	}
	for i := range moves {
		if moves[i].To == below[0].Key {
			moves[i].Old = below[0].ETag
		}
	}
	return nil
}

// copyThrough is the largest object a move copies through agentfs (a GET
// and a PUT, whose conditions on the destination the store checks); a
// larger one the store copies in parts, the conditions going with the
// upload's completion, which the store checks too (versitygw 1.8 ignores
// those of a CopyObject).
const copyThrough = 8 << 20

// move copies moves and deletes their sources under a journal, undoing
// all of it on a failure; into is the destination of a directory's move.
// It returns the copy of the first move (its key, ETag and size).
func (f *FS) move(ctx context.Context, src, into string, moves []journalMove) (s3client.ObjectInfo, error) {
	id := newID()
	j := journal{Moves: moves, ClaimFirst: true, Mark: id, Into: into, Version: journalVersion}
	for i, m := range j.Moves {
		if m.Old != "" && !m.marker() {
			j.Moves[i].Backup = f.prefix + journalDir + "/" + id + "/0"
		}
	}
	l, err := f.begin(ctx, f.journalKey(id), j)
	if err != nil {
		return s3client.ObjectInfo{}, err
	}
	err = f.moveObjects(ctx, l, src, &j)
	if err == nil {
		err = l.commit(ctx, j)
	}
	if err != nil {
		return s3client.ObjectInfo{}, f.undo(ctx, l, j, err)
	}
	first := j.Moves[0]
	return s3client.ObjectInfo{Key: first.To, ETag: first.copied(), Size: first.size}, nil
}

// moveObjects makes the copies, checks that the source gained no key,
// and deletes the originals.
func (f *FS) moveObjects(ctx context.Context, l *lease, src string, j *journal) error {
	// Of two moves of an object at once, or to one destination, one
	// claims it (claim.go), and the other stops here.
	if err := f.claimAll(ctx, l, j); err != nil {
		return err
	}
	// What was listed is checked again once claimed: a move that ended
	// between the listing and the claims (they were free then) moved the
	// source, or filled the destination.
	if err := f.each(ctx, j.Moves, func(_ int, m journalMove) error { return f.stillAsListed(ctx, m, j.Into != "") }); err != nil {
		return err
	}
	if j.Into != "" {
		if err := f.stillEmpty(ctx, j.Into); err != nil {
			return err
		}
		if err := f.noFileAbove(ctx, j.Into, src); err != nil {
			return err
		}
	}
	if err := f.crossed(ctx, l.key, *j); err != nil {
		return err
	}
	// The store's copy of an object replaced keeps its tags and metadata,
	// not how it is stored: its backup is sent its encryption, and the
	// journal keeps its class for the restore (see backupOf).
	// stillAsListed saw it: no request.
	backups := make([]http.Header, len(j.Moves))
	for i, m := range j.Moves {
		if m.Backup != "" {
			s, _, err := f.seenAt(ctx, m.To, m.Old)
			if err != nil {
				return err
			}
			backups[i], j.Moves[i].Class = backupOf(s.stored)
		}
	}
	// Recorded before anything changes: the journal of a move killed
	// before it holds its claims is rolled back as one that made nothing,
	// whatever is at its destinations (another move's, of the same bytes).
	j.ClaimsHeld = true
	if err := l.update(ctx, *j); err != nil {
		return err
	}
	for i, m := range j.Moves {
		if m.Backup != "" {
			if err := l.check(); err != nil {
				return err
			}
			if _, err := f.c.Copy(ctx, m.To, m.Old, m.Backup, backups[i]); err != nil {
				return f.backupErr(ctx, f.rel(m.To), m.Old, err)
			}
		}
	}
	var mu sync.Mutex
	tried := func(i int, sent bool) {
		mu.Lock()
		j.Moves[i].tried = sent
		mu.Unlock()
	}
	err := f.each(ctx, j.Moves, func(i int, m journalMove) error {
		if err := l.check(); err != nil {
			return err
		}
		if m.marker() {
			tried(i, true)
			_, err := f.c.Put(ctx, m.To, nil, nil)
			return f.mapErr(err, f.rel(m.To))
		}
		// Through agentfs up to copyThrough bytes: versitygw ignores a
		// copy's conditions on its destination, and a file created there
		// after the check (stillAsListed) was overwritten, both calls
		// exiting 0.
		tried(i, true)
		if f.paused != nil {
			f.paused("copy", m.From)
		}
		h := s3client.Condition(m.Old, ifNone(m.Old))
		h.Set("X-Amz-Meta-"+txnMeta, j.Mark)
		// As read: whether the source is still at m.ETag once copied is
		// asked by the HEAD before its deletion, which comes next (and
		// by the DELETE If-Match): a change there undoes the move as one
		// found now would. A HEAD here asked it twice.
		o, err := f.c.CopyAsRead(ctx, m.From, m.ETag, m.To, h, copyThrough)
		if err != nil {
			if refused(err) {
				// A condition refused: nothing of this copy is there (an
				// object of its bytes there is another writer's).
				tried(i, false)
			}
			return f.copyErr(ctx, m, err)
		}
		mu.Lock()
		if o.ETag != m.ETag {
			j.Moves[i].New = o.ETag
		}
		j.Moves[i].size = o.Size
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	if err := f.sameSource(ctx, src, j.Moves); err != nil {
		return err
	}
	// Recorded before the first deletion (with the copies' own ETags, for
	// an older agentfs's rollback): from then on a recovery finishes the
	// move (see rollsForward).
	j.Deleting = true
	if err := l.update(ctx, *j); err != nil {
		// Refused, the journal never said so, and is rolled back.
		j.Deleting = !l.isLost()
		return err
	}
	j.deletingSaid = true
	var markers []string
	err = f.each(ctx, j.Moves, func(i int, m journalMove) error {
		if err := l.check(); err != nil {
			return err
		}
		if m.marker() {
			mu.Lock()
			j.Moves[i].deleted = true
			markers = append(markers, m.From)
			mu.Unlock()
			return nil
		}
		if f.paused != nil {
			f.paused("delete", m.From)
		}
		// A store answers a DELETE If-Match of a key already gone with
		// success (versitygw does): a source another writer removed
		// since the copy was taken for one this move deleted, both calls
		// told they succeeded, and a rollback put it back. Found gone or
		// changed now, it is a lost race, and stays as the writer left it.
		if src, found, err := f.headKey(ctx, m.From); err != nil || !found || src.ETag != m.ETag {
			return cmpErr(err, f.sourceChanged(m))
		}
		mu.Lock()
		j.Moves[i].deleted = true
		mu.Unlock()
		if err := f.c.Delete(ctx, m.From, m.ETag); err != nil {
			if refused(err) {
				mu.Lock()
				j.Moves[i].deleted = false
				mu.Unlock()
			}
			return f.swapErr(ctx, f.rel(m.From), backend.WriteOptions{IfVersion: m.ETag}, err)
		}
		return nil
	})
	if err != nil || len(markers) == 0 {
		return err
	}
	if err := l.check(); err != nil {
		return err
	}
	return f.deleteKeys(ctx, src, markers)
}

// stillAsListed checks that m's source is at the ETag listed and its
// destination as found: STALE, or EXISTS for a file put there. A
// directory's move (into) leaves its destinations to stillEmpty, whose
// one listing finds any object below it: a HEAD of each asked again.
func (f *FS) stillAsListed(ctx context.Context, m journalMove, into bool) error {
	src, found, err := f.headKey(ctx, m.From)
	if err != nil {
		return err
	}
	if !found || !m.marker() && src.ETag != m.ETag {
		return f.sourceChanged(m)
	}
	if m.marker() {
		return nil
	}
	if into {
		return f.settled(ctx, f.rel(m.From), m.ETag)
	}
	dst, found, err := f.headKey(ctx, m.To)
	switch {
	case err != nil:
		return err
	case found && m.Old == "":
		return fault.Errorf(fault.CodeExists, "a file appeared at the destination during the move.").WithPath(f.rel(m.To)).
			WithHint("nothing was moved; check the destination and move again")
	case !found && m.Old != "" || found && dst.ETag != m.Old:
		return fault.Errorf(fault.CodeStale, "the file at the destination changed during the move.").WithPath(f.rel(m.To)).
			WithHint("nothing was moved; check the destination and move again")
	}
	// Neither is a change of a transaction in flight, which that
	// transaction, undone, would put back beside the move's copy of it
	// (the HEADs above know their marks: no request in the usual case).
	if err := f.settled(ctx, f.rel(m.From), m.ETag); err != nil {
		return err
	}
	if m.Old != "" {
		return f.settled(ctx, f.rel(m.To), m.Old)
	}
	// Nor a directory put at the new destination, or a file above it,
	// which a store that holds a key as a file and a prefix at once (S3)
	// would keep beside the copy: mv's Lstat asked, before the journal
	// and the claims, which bind no writer.
	dir, err := f.isDir(ctx, f.rel(m.To))
	switch {
	case err != nil:
		return err
	case dir:
		return destinationChanged(f.rel(m.To))
	}
	return f.noFileAbove(ctx, f.rel(m.To), f.rel(m.From))
}

// noFileAbove checks that no file was put above dst, the new destination
// of a move from src, since it was found absent: STALE, and mv looks
// again. The directories that hold src too hold it still (stillAsListed
// found it), and are not asked.
func (f *FS) noFileAbove(ctx context.Context, dst, src string) error {
	for d := path.Dir(dst); d != "." && !strings.HasPrefix(src, d+"/"); d = path.Dir(d) {
		if _, found, err := f.head(ctx, d); err != nil || found {
			return cmpErr(err, destinationChanged(dst))
		}
	}
	return nil
}

// destinationChanged is the error of a move whose destination dst, found
// absent, was made a directory, or put below a file, since.
func destinationChanged(dst string) error {
	return fault.Errorf(fault.CodeStale, "the destination changed during the move: a directory was put there, or a file above it.").WithPath(dst).
		WithHint("look at the destination again; nothing was moved")
}

// stillEmpty checks that the destination dir of a directory's move is
// still as checkDestination found it: no file, and no key below it but
// its marker (an empty directory, which the move may replace). Another
// directory moved there since would merge with this one.
func (f *FS) stillEmpty(ctx context.Context, dir string) error {
	changed := fault.Errorf(fault.CodeExists, "the destination was filled during the move.").WithPath(dir).
		WithHint("nothing was moved; check the destination and move again")
	if _, found, err := f.head(ctx, dir); err != nil || found {
		return cmpErr(err, changed)
	}
	for o, err := range f.c.List(ctx, f.dirKey(dir), "", 2, "") {
		if err != nil {
			return f.mapErr(err, dir)
		}
		if o.Key != f.dirKey(dir) {
			return changed
		}
	}
	return nil
}

// sourceChanged is the error of a move whose source m is no longer as
// listed.
func (f *FS) sourceChanged(m journalMove) error {
	return fault.Errorf(fault.CodeStale, "the source was moved or changed since it was listed.").WithPath(f.rel(m.From)).
		WithHint("list it again; nothing was moved")
}

// copyErr maps the failure of m's copy: a refusal with the source as
// listed is the destination's (a file put there, or the one replaced
// changed), else the source's.
func (f *FS) copyErr(ctx context.Context, m journalMove, err error) error {
	// Before the copy's own failure, a refusal said in other words.
	var left *s3client.LeftError
	if errors.As(err, &left) {
		return f.uploadsLeft(f.copyErr(ctx, m, left.Err), []*s3client.LeftError{left})
	}
	var tags *s3client.TagsError
	if errors.As(err, &tags) {
		return f.tagsErr(f.rel(m.From), tags.Count, tags.Err)
	}
	if _, status := s3client.Code(err); status == http.StatusPreconditionFailed {
		o, found, herr := f.headKey(ctx, m.From)
		switch {
		case herr != nil:
			return herr
		case found && o.ETag == m.ETag && m.Old == "":
			return fault.Errorf(fault.CodeExists, "a file appeared at the destination during the move.").WithPath(f.rel(m.To)).
				WithHint("nothing was moved; check the destination and move again")
		case found && o.ETag == m.ETag:
			return f.swapErr(ctx, f.rel(m.To), backend.WriteOptions{IfVersion: m.Old}, err)
		}
	}
	var dst *s3client.DestinationError
	if errors.As(err, &dst) {
		return f.swapErr(ctx, f.rel(m.To), backend.WriteOptions{IfVersion: m.Old, IfAbsent: m.Old == ""}, err)
	}
	return f.swapErr(ctx, f.rel(m.From), backend.WriteOptions{IfVersion: m.ETag}, err)
}

func ifNone(old string) string {
	if old == "" {
		return "*"
	}
	return ""
}

// cmpErr is err when set, else refused.
func cmpErr(err error, refused error) error {
	if err != nil {
		return err
	}
	return refused
}

// sameSource checks that the directory src holds no key but those listed:
// a file added during the copies would be left behind.
func (f *FS) sameSource(ctx context.Context, src string, moves []journalMove) error {
	if len(moves) == 1 && moves[0].From == f.key(src) {
		return nil
	}
	listed := make(map[string]bool, len(moves))
	for _, m := range moves {
		listed[m.From] = true
	}
	for o, err := range f.c.List(ctx, f.dirKey(src), "", 0, "") {
		if err != nil {
			return f.mapErr(err, src)
		}
		if !listed[o.Key] {
			return fault.Errorf(fault.CodeStale, "the directory changed during the move: %s appeared.", f.rel(o.Key)).
				WithPath(src).WithHint("nothing was moved; list the directory again and move it again")
		}
	}
	return nil
}

// each runs do on every move, readsInFlight at a time, and returns the
// first failure; after one, no new request starts. The uploads that the
// others left (see uploadsLeft) are said with it: no other answer would.
func (f *FS) each(ctx context.Context, moves []journalMove, do func(int, journalMove) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	slots := make(chan struct{}, readsInFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i, m := range moves {
		if ctx.Err() != nil {
			break
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if ctx.Err() != nil {
				return
			}
			if err := do(i, m); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel(err)
			}
		})
	}
	wg.Wait()
	if len(errs) == 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	var lefts []*s3client.LeftError
	for _, err := range errs[1:] {
		var said *leftBehind
		if errors.As(err, &said) {
			lefts = append(lefts, said.lefts...)
		}
	}
	if len(lefts) == 0 {
		return errs[0]
	}
	return f.uploadsLeft(errs[0], lefts)
}

// rollBackMove undoes what a move did to m: the original put back from
// its copy when it is gone, the copy removed, and the object it replaced
// restored (see journal.written). An object another writer put or
// changed since is left as it is, and so is the copy when another
// writer's file took the source's place: it then holds the only bytes of
// the file moved. What is so left, and was the move's first, is said.
func (f *FS) rollBackMove(ctx context.Context, j journal, m journalMove) (leftAlone, error) {
	if m.marker() {
		if _, err := f.c.Put(ctx, m.From, nil, nil); err != nil {
			return leftAlone{}, f.mapErr(err, f.rel(m.From))
		}
		if m.Old == "" {
			return leftAlone{}, f.mapErr(f.c.Delete(ctx, m.To, ""), f.rel(m.To))
		}
		return leftAlone{}, nil
	}
	dst, dstFound, err := f.headKey(ctx, m.To)
	if err != nil {
		return leftAlone{}, err
	}
	if !dstFound || !j.written(dst, m.copied()) {
		return leftAlone{}, nil // never copied, or put or changed by another writer since: theirs stays
	}
	// Before any deletion, what is at the source, or its absence, is the
	// original or another writer's change, and the copy goes.
	if j.mayHaveDeleted(m.deleted) {
		src, srcFound, err := f.headKey(ctx, m.From)
		if err != nil {
			return leftAlone{}, err
		}
		if !srcFound {
			// Through agentfs up to copyThrough bytes, so that the store
			// checks If-None-Match (versitygw ignores it on a copy).
			etag, err := f.c.CopyThrough(ctx, m.To, dst.ETag, m.From, s3client.Condition("", "*"), copyThrough)
			switch {
			case err == nil:
				// The copy's, its metadata (its mark) and all.
				src, srcFound = s3client.ObjectInfo{ETag: etag, Meta: dst.Meta}, true
			case refused(err), errors.Is(err, s3client.ErrSourceChanged):
				// A file put at the source, or the copy changed, meanwhile.
				if src, srcFound, err = f.headKey(ctx, m.From); err != nil {
					return leftAlone{}, err
				}
			default:
				return leftAlone{}, f.mapErr(err, f.rel(m.From))
			}
		}
		if !srcFound || src.ETag != m.ETag && !j.written(src, dst.ETag) {
			// Another writer's file at the source, put where this move
			// may have deleted the original: the copy may hold its only
			// bytes. The original, or the copy put back (by its mark,
			// whatever its ETag: under a KMS key the same bytes put
			// again have another), is the move's.
			return leftAlone{kept: []string{f.rel(m.From)}, copies: []string{f.rel(m.To)}}, nil
		}
	}
	var theirs bool
	if m.Backup != "" {
		theirs, err = f.restore(ctx, journalOp{Key: m.To, Backup: m.Backup, Class: m.Class}, true, dst.ETag)
	} else {
		theirs, err = f.deleteKey(ctx, m.To, dst.ETag)
	}
	if theirs {
		// Changed by another writer after the copy this move made there.
		return leftAlone{kept: []string{f.rel(m.To)}}, err
	}
	return leftAlone{}, err
}

// rollForwardMove finishes what a move that may have begun deleting its
// sources did to m: the source deleted If-Match its ETag while the copy
// stands, marked as the move's. A source another writer changed since
// stays (its deletion refused), beside the copy; so does one whose copy
// another writer changed or removed: a recovery never deletes the only
// bytes of a file.
func (f *FS) rollForwardMove(ctx context.Context, j journal, m journalMove) error {
	if m.marker() {
		return f.mapErr(f.c.Delete(ctx, m.From, ""), f.rel(m.From))
	}
	dst, found, err := f.headKey(ctx, m.To)
	if err != nil {
		return err
	}
	if !found || !j.written(dst, m.copied()) {
		return nil
	}
	_, err = f.deleteKey(ctx, m.From, m.ETag)
	return err
}

// movedFrom is the path the move of j moved: a file, or the directory
// whose keys moved below j.Into.
func (f *FS) movedFrom(j journal) string {
	m := j.Moves[0]
	if j.Into == "" {
		return f.rel(m.From)
	}
	below := strings.TrimPrefix(m.To, f.dirKey(j.Into))
	return strings.TrimSuffix(f.rel(strings.TrimSuffix(m.From, below)), "/")
}

// handedOver is the error of a move that stopped with err once its
// journal said it may delete its sources, and that another call finishes
// (see rollsForward): this one, having lost or outlived its lease, may no
// longer undo it.
func handedOver(err error) error {
	e := fault.Errorf(fault.CodeIOError, "the move stopped after it began deleting its sources, and another call finishes it once its lease has run out (or already has): each file ends at its destination, and a source another writer changed meanwhile stays beside its copy.").
		WithHint("do not redo the move; run agentfs --recover, which waits for its lease, then list the destination")
	e.Err = err
	return e
}

// undecided is the error of a move that stopped with err once its journal
// said it may delete its sources, and whose rewrite to say it undoes
// itself failed with uerr: the recovery finishes the move, or undoes it if
// that rewrite landed unseen. err's own hint (a STALE's "nothing was
// moved") would be wrong either way.
func undecided(err, uerr error) error {
	e := fault.Errorf(fault.CodeIOError, "the move stopped after it began deleting its sources (%s), and its journal could not be rewritten to undo it: the next recovery finishes the move, or undoes it if that rewrite landed.", strings.TrimSuffix(fault.AsError(err).Message, ".")).
		WithHint("do not redo the move; run agentfs --recover, which waits for its lease, then list the source and the destination")
	e.Err = errors.Join(err, uerr)
	return e
}

// headKey describes the object at key, found false when there is none.
func (f *FS) headKey(ctx context.Context, key string) (s3client.ObjectInfo, bool, error) {
	o, err := f.c.Head(ctx, key)
	if err != nil && missing(s3client.Code(err)) {
		return o, false, nil
	}
	if err == nil {
		f.marks.store(key, o)
	}
	return o, err == nil, f.mapErr(err, cmp.Or(f.rel(key), "."))
}
