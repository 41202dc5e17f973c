package localfs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A transaction is committed in two steps, with a journal in the state
// directory between them. First every change is prepared, with nothing
// changed: each path is checked (its compare-and-swap included) and each
// new content staged in a temporary file of its directory, synced. Then the
// journal names every target, its staged file and a backup name, and is
// synced; each old file gets a hard link at its backup name, the staged
// file is renamed over it (or the old file unlinked, for a removal), the
// directories are synced, and the journal is renamed to its committed
// name: that rename is the commit point. The backups and the journal then
// go (the journal stays, committed, while a backup could not be unlinked,
// for the next recovery to remove it). The journal is flocked by its writer for the whole commit: a journal
// whose lock is free belongs to a dead process, and the next agentfs to
// start undoes it (renaming each backup back over its target, unlinking a
// new file that did not exist before) when it was not committed, or
// removes its backups when it was.
//
// The directories a commit makes for new files are made while preparing,
// each recorded in the state directory before it exists, and renamed to
// its name once its identity is recorded (madeDirs); the
// journal names them too, before the files, so that an undo, a refusal's
// or a recovery's, removes them after the files, deepest first, while
// they are still empty. Their records go just before the commit point:
// from there on the journal alone decides.

const (
	journalPending   = ".pending"
	journalCommitted = ".committed"
	// journalRecovering is added to a journal's name for the file whose
	// flock a process recovering it holds (deadJournals).
	journalRecovering = ".recovering"
	// journalAbandoned is added to a journal's name for the file its
	// committer writes when its own undo fails and it gives the journal
	// up to a later recovery: it holds that failure, and tells the
	// refusals of its files that no process died.
	journalAbandoned = ".abandoned"
)

// journalEntry is one change of a transaction, as the journal records it.
type journalEntry struct {
	// Dir is the real absolute path of the target's directory, Name the
	// target's name in it.
	Dir  string `json:"dir"`
	Name string `json:"name"`
	// Staged is the staged file ("" for a removal) and StagedID its
	// identity (device:inode), which the target has once it is renamed.
	Staged   string `json:"staged,omitempty"`
	StagedID string `json:"stagedId,omitempty"`
	// StagedStamp is the staged file's size and mtime: a file written in
	// place keeps its identity.
	StagedStamp string `json:"stagedStamp,omitempty"`
	// Backup is the name of the hard link that keeps the old file, "" when
	// there was none.
	Backup string `json:"backup,omitempty"`
	// Tree marks a directory of a move across file systems (movetree.go):
	// its backup is the directory itself, renamed, and its staged copy a
	// tree.
	Tree bool `json:"tree,omitempty"`
	// DirID marks a directory the transaction made, with its identity: an
	// undo removes it if it is still that directory, and empty.
	DirID string `json:"dirId,omitempty"`
	// DirIdentity is Dir's identity when the journal was written: a
	// recovery acts only in that directory (an unmounted file system's
	// mount point is another, where no backup is found), sought by it
	// when Dir no longer leads to it (renamed since: atJournalDir).
	DirIdentity string `json:"dirIdentity,omitempty"`
	// DirFS is the identity of Dir's file system (fsID), by which a
	// recovery knows Dir on a file system whose device number changed
	// since (renumbered).
	DirFS string `json:"dirFS,omitempty"`
}

// journalNames is a journal entry as written: a Dir or Name that is not
// UTF-8 goes as its bytes in base64 beside it, since encoding/json writes
// a string's invalid bytes as U+FFFD, which named another directory and
// left a dead commit in one such undone.
type journalNames struct {
	plainEntry
	DirBase64  []byte `json:"dirBase64,omitempty"`
	NameBase64 []byte `json:"nameBase64,omitempty"`
}

// plainEntry is journalEntry without its JSON methods.
type plainEntry journalEntry

func (e journalEntry) MarshalJSON() ([]byte, error) {
	w := journalNames{plainEntry: plainEntry(e)}
	if !utf8.ValidString(e.Dir) {
		w.DirBase64 = []byte(e.Dir)
	}
	if !utf8.ValidString(e.Name) {
		w.NameBase64 = []byte(e.Name)
	}
	return json.Marshal(w)
}

func (e *journalEntry) UnmarshalJSON(data []byte) error {
	var w journalNames
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*e = journalEntry(w.plainEntry)
	if w.DirBase64 != nil {
		e.Dir = string(w.DirBase64)
	}
	if w.NameBase64 != nil {
		e.Name = string(w.NameBase64)
	}
	return nil
}

// madeDirs are the directories a commit made, from its workers.
type madeDirs struct {
	mu   sync.Mutex
	dirs []madeDir
}

// madeDir is one directory a commit made, with the record that proves it
// the commit's own until the journal is committed.
type madeDir struct {
	entry journalEntry
	rec   *tempRecord
}

// mkdir makes the directory name in dfd, whose real absolute path is real,
// as the commit's own: its record exists before it does, and holds its
// identity before it has its name, so that a sweep removes it if the
// writer dies before its journal names it. It is made under the record's
// staging name and renamed to its own, never over a directory another
// writer made there meanwhile (EEXIST, as mkdir's). Where the file system
// cannot rename without replacing, it is made at its own name: a writer
// killed between that mkdir and its record then leaves it, empty. An
// error is mkdir's, or the record's.
func (m *madeDirs) mkdir(dfd int, name, real, display string) error {
	if !exclusiveRenames {
		return m.mkdirAs(dfd, name, real, display, false)
	}
	err := m.mkdirAs(dfd, name, real, display, true)
	if noExclusiveRename(err) {
		err = m.mkdirAs(dfd, name, real, display, false)
	}
	return err
}

// mkdirAs is mkdir, through the staging name when staged is set.
func (m *madeDirs) mkdirAs(dfd int, name, real, display string, staged bool) error {
	rec, err := newDirRecord(real)
	if err != nil {
		return stateDirErr("the record of a new directory", err).WithPath(display)
	}
	at := name
	if staged {
		at = stagingDirName(rec.path)
	}
	if err := syscalls.mkdirat(dfd, at, 0o777); err != nil {
		rec.done() // not made: someone else's, or none
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, at, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		rec.done()
		return err
	}
	id := identity(&st)
	if err := rec.bindIdentity(&st); err != nil {
		removeMadeDir(dfd, at, id)
		rec.done()
		return err
	}
	if staged {
		if err := syscalls.renameExclusive(dfd, at, dfd, name); err != nil {
			removeMadeDir(dfd, at, id)
			rec.done()
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dirs = append(m.dirs, madeDir{entry: journalEntry{Dir: filepath.Dir(real), Name: name, DirID: id}, rec: rec})
	return nil
}

// entries are the journal entries of the directories, parents first.
func (m *madeDirs) entries() []journalEntry {
	out := make([]journalEntry, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = d.entry
	}
	slices.SortStableFunc(out, func(a, b journalEntry) int {
		return strings.Count(a.Dir, "/") - strings.Count(b.Dir, "/")
	})
	return out
}

// keep lets the directories stay: their records go, as the commit point
// comes.
func (m *madeDirs) keep() {
	for _, d := range m.dirs {
		d.rec.done()
	}
	m.dirs = nil
}

// undo removes the directories not kept, deepest first, each while still
// empty, then their records.
func (m *madeDirs) undo(f *FS) {
	f.rollBack(m.entries())
	m.keep()
}

// prepared is one change ready to commit.
type prepared struct {
	op      backend.Op
	display string
	dir     *os.File
	staged  *stagedFile
	entry   journalEntry
}

var _ backend.Transactor = (*FS)(nil)

// Commit applies ops all or nothing (see backend.Transactor and the
// comment above). The caller holds their locks (LockAll).
func (f *FS) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	made := &madeDirs{}
	preps, err := f.prepareAll(ctx, ops, made)
	defer func() {
		release(preps)
		made.undo(f) // after the files in them; none once kept
	}()
	if err != nil {
		return nil, err
	}
	return f.commit(ctx, preps, made)
}

// release discards what preps staged and did not rename (the commit failed
// before its point), and closes their directories.
func release(preps []*prepared) {
	for _, p := range preps {
		if p.staged != nil {
			p.staged.discard()
		}
		p.dir.Close()
	}
}

// commit journals and makes the prepared changes and the directories made
// for them, all or none; the caller releases them and undoes made's
// directories unless kept.
func (f *FS) commit(ctx context.Context, preps []*prepared, made *madeDirs) ([]backend.FileInfo, error) {
	seen := map[string]bool{}
	for _, p := range preps {
		key := filepath.Join(p.entry.Dir, p.entry.Name)
		if seen[key] {
			return nil, backend.ChangedTwice(p.display)
		}
		seen[key] = true
	}
	if p, q := aliasedTwice(preps); p != nil {
		return nil, backend.ChangedTwice(p.display).WithDetail("sameAs", q.display)
	}
	if err := fault.Interrupted(ctx); err != nil {
		return nil, err
	}
	entries := append(made.entries(), entriesOf(preps)...)
	j, err := newJournal(entries)
	if err != nil {
		return nil, err
	}
	defer j.close()
	// undo rolls back es and removes the journal; when some of es cannot
	// be undone now (a file system gone read-only), the journal stays,
	// naming the directories made too, for the next call's recovery.
	undo := func(es []journalEntry, err error) error {
		done, kept, left := f.rollBackKeeping(es, &dirsFound{})
		if done {
			j.remove()
			if len(kept) > 0 {
				return backend.PartlyUndone(displays(preps, kept), err)
			}
			return err
		}
		made.keep()
		j.abandon(err)
		return abandonedErr(err, j.path, left)
	}
	// Every compare-and-swap holds before the first file changes: a file
	// another program changed since it was staged then stops the commit
	// with nothing to undo (apply checks its own again).
	for _, p := range preps {
		if err := swapHolds(int(p.dir.Fd()), p.entry.Name, p.display, p.op.Write); err != nil {
			return nil, undo(nil, err)
		}
	}
	for i, p := range preps {
		if err := p.apply(); err != nil {
			return nil, undo(entriesOf(preps[:i+1]), err)
		}
	}
	synced := map[string]bool{}
	for _, p := range preps {
		if synced[p.entry.Dir] {
			continue
		}
		synced[p.entry.Dir] = true
		if err := syscalls.fsync(int(p.dir.Fd())); err != nil {
			return nil, undo(entriesOf(preps), mapErr(err, p.display))
		}
	}
	made.keep()
	if err := j.commit(); err != nil {
		return nil, undo(entries, err)
	}
	infos := make([]backend.FileInfo, len(preps))
	// A backup left (EIO, a file system gone read-only) keeps the
	// committed journal, whose next recovery removes it: unrecorded, the
	// hidden link kept the old content for good. The change is committed.
	finished := true
	for i, p := range preps {
		if p.entry.Backup != "" && !absent(syscalls.unlinkat(int(p.dir.Fd()), p.entry.Backup, 0)) {
			finished = false
		}
		if p.staged != nil {
			var st unix.Stat_t
			if err := unix.Fstat(int(p.staged.file.Fd()), &st); err == nil {
				infos[i] = infoFromStat(p.entry.Name, &st)
			}
			p.staged.done()
			p.staged = nil
		}
	}
	if finished {
		j.remove()
	}
	return infos, nil
}

// displays are the display names of entries, each one of preps'.
func displays(preps []*prepared, entries []journalEntry) []string {
	var names []string
	for _, e := range entries {
		for _, p := range preps {
			if p.entry.Dir == e.Dir && p.entry.Name == e.Name {
				names = append(names, p.display)
				break
			}
		}
	}
	return names
}

// prepareAll prepares ops in a pool of workers (each staged file is
// synced, and syncs overlap), and returns them in order; on error it
// returns those prepared, for the caller to discard, and the first error
// in order.
func (f *FS) prepareAll(ctx context.Context, ops []backend.Op, made *madeDirs) ([]*prepared, error) {
	preps := make([]*prepared, len(ops))
	errs := make([]error, len(ops))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(ops), stagers) {
		wg.Go(func() {
			for i := range next {
				preps[i], errs[i] = f.prepare(ctx, ops[i], made)
			}
		})
	}
	for i := range ops {
		next <- i
	}
	close(next)
	wg.Wait()
	done := preps[:0]
	var first error
	for i, p := range preps {
		if p != nil {
			done = append(done, p)
		}
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
	}
	return done, first
}

// stagers is how many files a commit stages at once: enough for their
// syncs to overlap on one device.
const stagers = 8

// opDir resolves op's path and opens its directory, made (create) when
// missing, into made.
func (f *FS) opDir(ctx context.Context, op backend.Op, create bool, made *madeDirs) (target, string, *os.File, error) {
	t, err := f.resolve(op.Path)
	if err != nil {
		return target{}, "", nil, err
	}
	ct, err := f.canonical(t, !op.Remove)
	if err != nil {
		return target{}, "", nil, err
	}
	display := t.display(f)
	if ct.rel == "." {
		return target{}, "", nil, fault.RootRefused(display)
	}
	if err := f.refuseUncommitted(filepath.Join(ct.root.path, ct.rel), display); err != nil {
		return target{}, "", nil, err
	}
	dir, err := f.makeParentDir(ctx, ct, display, create, made)
	return ct, display, dir, err
}

// checkEntry makes the checks of op's entry, name in the directory dfd,
// that come before anything is staged: a name agentfs keeps, a mount
// point, the compare-and-swap, a removal of a directory, and that a file
// to replace may be replaced (its kind and links, the caller's permission
// to write it and its directory).
func checkEntry(dir *os.File, name, display string, op backend.Op) (unix.Stat_t, bool, error) {
	dfd := int(dir.Fd())
	var st unix.Stat_t
	if err := reservedName(name, display); err != nil {
		return st, false, err
	}
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return st, false, mapErr(err, display)
	}
	exists := err == nil
	if exists && isMountPoint(dfd, name) {
		// Neither replaced nor unlinked (EBUSY), and its backup, a link of
		// the mounted file, changed that file's ctime: each attempt read
		// its own as another writer's change until LOCK_TIMEOUT.
		return st, exists, mapErr(unix.EBUSY, display)
	}
	if err := backend.CheckSwap(display, op.Write, exists, versionIf(exists, &st)); err != nil {
		return st, exists, err
	}
	switch {
	case op.Remove && exists && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return st, exists, fault.Errorf(fault.CodeNotAFile, "the path is a directory; a transaction removes files.").
			WithPath(display).WithHint("remove the directory with rm")
	case op.Remove && op.Moved && exists && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1:
		return st, exists, fault.Errorf(fault.CodeHardlink, "the file has %d hard links; moving it with a change would split them, its other names keeping the old content.", st.Nlink).
			WithPath(display).WithDetail("links", st.Nlink).
			WithHint("move it with mv, which keeps its links, then change it with write --in-place (not atomic), or move a copy")
	case !op.Remove && exists:
		if err := replaceable(&st, display, backend.WriteOptions{}); err != nil {
			return st, exists, err
		}
		if err := accessAt(dfd, name, unix.W_OK); err != nil {
			return st, exists, mapErr(err, display)
		}
	}
	if exists || !op.Remove {
		// The change renames or unlinks in the directory: one it may not
		// write, append-only (chattr +a) too, is refused here, before the
		// backup link and the staged file that a refused rename left
		// there, which could not be unlinked either.
		if err := accessAt(dfd, ".", unix.W_OK); err != nil {
			return st, exists, dirNotWritable(err, display)
		}
	}
	if exists {
		verb := "replace"
		if op.Remove {
			verb = "remove"
		}
		if err := stickyRefused(dfd, &st, display, verb); err != nil {
			return st, exists, err
		}
		if !op.Remove {
			if err := ownerRefused(dir, &st, display); err != nil {
				return st, exists, err
			}
		}
	}
	return st, exists, nil
}

// CheckCommit makes, for each op, the checks Commit makes before it
// stages anything, and that the caller may write the op's directory, and
// changes nothing: a dry run then fails as the run would for a hard link,
// a file or a directory the caller may not write, where it passed. A
// directory to make is not looked at.
func (f *FS) CheckCommit(ctx context.Context, ops []backend.Op) error {
	var checked []*prepared
	defer func() {
		for _, p := range checked {
			p.dir.Close()
		}
	}()
	for _, op := range ops {
		if err := ctx.Err(); err != nil {
			return fault.Interrupted(ctx)
		}
		ct, display, dir, err := f.opDir(ctx, op, false, nil)
		if fault.MissingPath(err) && !op.Remove {
			// Made by the commit, below the nearest directory there,
			// whose set-group-ID bit and group they take.
			if err := f.checkMovedOwner(op, nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		checked = append(checked, &prepared{display: display, dir: dir, entry: journalEntry{Name: filepath.Base(ct.rel)}})
		if _, _, err = checkEntry(dir, filepath.Base(ct.rel), display, op); err != nil {
			return err
		}
		if !op.Remove {
			if err := f.checkMovedOwner(op, dir); err != nil {
				return err
			}
		}
	}
	// As the commit refuses them: a dry run passed.
	if p, q := aliasedTwice(checked); p != nil {
		return backend.ChangedTwice(p.display).WithDetail("sameAs", q.display)
	}
	return nil
}

// checkMovedOwner makes the check of a moved file's owner (ownerOf) that
// the commit's staging makes, in dir, op's directory, or when that is
// still to be made, in the nearest directory above it that is there.
func (f *FS) checkMovedOwner(op backend.Op, dir *os.File) error {
	if op.Write.OwnerOf == "" {
		return nil
	}
	t, err := f.resolve(op.Path)
	if err != nil {
		return err
	}
	if dir == nil {
		for rel := filepath.Dir(t.rel); dir == nil; rel = filepath.Dir(rel) {
			dir, err = t.root.r.OpenFile(rel, pathFlags|unix.O_DIRECTORY, 0)
			if err != nil && rel == "." {
				return mapErr(err, t.display(f))
			}
		}
		defer dir.Close()
	}
	_, from, err := f.ownerOf(op.Write, dir, t.display(f))
	if err == nil {
		from.Close()
	}
	return err
}

// prepare checks one change and stages its content; nothing is changed
// but the directories it makes for a new file, added to made.
func (f *FS) prepare(ctx context.Context, op backend.Op, made *madeDirs) (*prepared, error) {
	ct, display, dir, err := f.opDir(ctx, op, !op.Remove, made)
	if err != nil {
		return nil, err
	}
	p := &prepared{op: op, display: display, dir: dir}
	p.entry.Dir = filepath.Join(ct.root.path, filepath.Dir(ct.rel))
	p.entry.Name = filepath.Base(ct.rel)
	fail := func(err error) (*prepared, error) {
		dir.Close()
		return nil, err
	}
	st, exists, err := checkEntry(dir, p.entry.Name, display, op)
	if err != nil {
		return fail(err)
	}
	if op.Remove {
		if exists {
			p.entry.Backup = tempName()
		}
		return p, nil
	}
	var old *unix.Stat_t
	if exists {
		old, p.entry.Backup = &st, tempName()
	}
	owner, attrs, err := f.replaceSources(op.Write, dir, p.entry.Name, old, display)
	if err != nil {
		return fail(err)
	}
	if attrs != nil {
		defer attrs.Close()
	}
	if p.staged, err = stage(dir, p.entry.Dir, op.Data, op.Write, old, owner, attrs, display); err != nil {
		return fail(err)
	}
	var sst unix.Stat_t
	if err := unix.Fstat(int(p.staged.file.Fd()), &sst); err != nil {
		p.staged.discard()
		return fail(mapErr(err, display))
	}
	p.entry.Staged, p.entry.StagedID, p.entry.StagedStamp = p.staged.name, identity(&sst), stamp(&sst)
	return p, nil
}

// apply makes one prepared change: the old file linked at its backup name,
// then replaced by the staged file or unlinked. Its compare-and-swap is
// checked again first (swapHolds), as replace checks a write's: prepare checked it
// before the staged files and the journal were synced, and a program that
// takes no agentfs lock (an editor saving, echo >>) changed the file in
// between, to have its change replaced with exit 0.
func (p *prepared) apply() error {
	dfd := int(p.dir.Fd())
	if err := swapHolds(dfd, p.entry.Name, p.display, p.op.Write); err != nil {
		return err
	}
	if p.entry.Backup != "" {
		if err := syscalls.linkat(dfd, p.entry.Name, dfd, p.entry.Backup, 0); err != nil {
			if errors.Is(err, unix.ENOENT) {
				// Removed since its compare-and-swap held (git checkout
				// unlinks a file and makes it anew): a lost race, not a
				// missing path, which may be there again by now.
				if serr := swapHolds(dfd, p.entry.Name, p.display, p.op.Write); serr != nil {
					return serr
				}
			}
			return mapErr(pinnedErr(err, dfd, p.entry.Name, "."), p.display)
		}
	}
	var err error
	switch {
	case p.op.Remove:
		if p.entry.Backup == "" {
			return nil // nothing there: nothing to remove
		}
		err = unix.Unlinkat(dfd, p.entry.Name, 0)
	case p.op.Write.IfAbsent || p.entry.Backup == "":
		err = renameNoReplace(dfd, p.staged.name, dfd, p.entry.Name)
	default:
		err = syscalls.renameat(dfd, p.staged.name, dfd, p.entry.Name)
	}
	if errors.Is(err, unix.EEXIST) {
		return fault.Errorf(fault.CodeExists, "the file already exists.").WithPath(p.display).
			WithHint("another program created it during the transaction; nothing was changed")
	}
	if err != nil {
		return mapErr(pinnedErr(err, dfd, p.entry.Name, "."), p.display)
	}
	return nil
}

func entriesOf(preps []*prepared) []journalEntry {
	out := make([]journalEntry, len(preps))
	for i, p := range preps {
		out[i] = p.entry
	}
	return out
}

// journal is the open, flocked journal of a commit in progress.
type journal struct {
	fd   int
	path string
}

func journalDir() (string, error) {
	base, err := stateDir()
	if err != nil {
		return "", err
	}
	d := filepath.Join(base, "journal")
	return d, os.MkdirAll(d, 0o700)
}

// stateDirErr is the error of what could not be written in the state
// directory, which it names, coded as StateDirFault says.
func stateDirErr(what string, err error) *fault.Error {
	if fe := (*fault.Error)(nil); errors.As(err, &fe) {
		return fe // the state directory's own (stateDirError)
	}
	code, hint := StateDirFault(err)
	if limitHint(err) != "" {
		// The process's limit, not the directory, is at fault.
		return fault.Errorf(code, "%s cannot be opened: %s.", what, ErrText(err)).WithHint("%s", hint).WithCause(err)
	}
	return fault.Errorf(code, "%s cannot be written in the state directory %s: %s.", what, existingStateDir(), ErrText(err)).
		WithHint("%s", hint).WithCause(err)
}

// StateDirFault is the code and hint of err, met making or writing in the
// state directory, one for every file there (lock files, journals,
// records, indexes, the signing key): NO_SPACE when it is full (or its
// quota is), as a full workspace's is, READ_ONLY on a read-only file
// system, PERMISSION_DENIED when this user may not write it, else
// IO_ERROR, with what to do about it (a process's limit of open files
// first, when that is the cause). The hint names the state directory.
func StateDirFault(err error) (fault.Code, string) {
	return stateDirFault(existingStateDir(), err)
}

// stateDirFault is StateDirFault for the state directory dir. Where it
// can be mended as it is, that comes first: a state directory moved
// elsewhere (AGENTFS_STATE_DIR) is the only one looked into, and a
// transaction left pending in this one would stay half applied.
func stateDirFault(dir string, err error) (fault.Code, string) {
	code, hint := mendStateDir(dir, err)
	switch {
	case errors.Is(err, unix.EROFS):
		hint += ", or set " + StateDirEnv + " to a directory on a writable one"
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		hint += ", or set " + StateDirEnv + " to a directory of this user's"
	case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EEXIST):
		hint += ", or set " + StateDirEnv + " to another path"
	default:
		return code, hint
	}
	return code, hint + " (once no transaction is pending there: no .pending file in its journal directory)"
}

// mendStateDir is the code of err, met in the state directory dir, and
// the hint of what mends it as it is.
func mendStateDir(dir string, err error) (fault.Code, string) {
	named := "the state directory"
	if dir != "" {
		named += " " + dir
	}
	if np := (*notPrivate)(nil); errors.As(err, &np) && np.mend != "" {
		return np.fe.Code, np.mend
	}
	switch {
	case errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT):
		return fault.CodeNoSpace, "free some space on the file system of " + named + ", and retry"
	case errors.Is(err, unix.EROFS):
		return fault.CodeReadOnly, named + " is on a read-only file system: remount it read-write"
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return fault.CodePermissionDenied, "this user may not write " + named + ": make it, and the directories in it, this user's and writable again (chmod 700)"
	case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EEXIST):
		return fault.CodeIOError, "a file is in the way of " + named + " (at its path, or at a directory's above it): move the file"
	case errors.Is(err, unix.EFBIG):
		// An index, or its runs, past RLIMIT_FSIZE: no retry passes it.
		return fault.CodeTooLarge, "raise the limit on a file's size (ulimit -f), or set " + StateDirEnv + " to a file system that holds files this large"
	}
	return fault.CodeIOError, cmp.Or(limitHint(err), "check that "+named+" is writable, and its disk")
}

// newJournal writes and syncs the journal of entries, flocked.
func newJournal(entries []journalEntry) (*journal, error) {
	ioErr := func(err error) error {
		e := stateDirErr("the journal of the transaction", err)
		return e.WithHint("%s; nothing was changed", e.Hint)
	}
	d, err := journalDir()
	if err != nil {
		return nil, ioErr(err)
	}
	entries = slices.Clone(entries)
	for i, e := range entries {
		var st unix.Stat_t
		if unix.Lstat(e.Dir, &st) == nil {
			entries[i].DirIdentity = identity(&st)
			entries[i].DirFS = fsID(func(s *unix.Statfs_t) error { return unix.Statfs(e.Dir, s) })
		}
	}
	data, err := json.Marshal(entries)
	if err != nil {
		return nil, ioErr(err)
	}
	p := filepath.Join(d, strings.TrimPrefix(tempName(), tempPrefix)+journalPending)
	fd, err := createLocked(p, data)
	if err != nil {
		return nil, ioErr(err)
	}
	j := &journal{fd: fd, path: p}
	err = syscalls.fsync(fd)
	if err == nil {
		err = syncPath(d)
	}
	if err != nil {
		j.remove()
		j.close()
		return nil, ioErr(err)
	}
	return j, nil
}

// commit renames the journal to its committed name, synced: the commit
// point.
func (j *journal) commit() error {
	done := strings.TrimSuffix(j.path, journalPending) + journalCommitted
	err := syscalls.renameat(unix.AT_FDCWD, j.path, unix.AT_FDCWD, done)
	if err == nil {
		pending := j.path
		j.path = done
		// Not known durable, the commit is undone: a journal kept for a
		// later recovery must not say committed, which would remove the
		// backups of the files it could not put back.
		if err = syncPath(filepath.Dir(done)); err != nil && syscalls.renameat(unix.AT_FDCWD, done, unix.AT_FDCWD, pending) == nil {
			j.path = pending
		}
	}
	if err != nil {
		return fault.Errorf(fault.CodeIOError, "the transaction could not be committed: %s.", ErrText(err)).
			WithHint("nothing was changed; check the state directory (%s)", StateDirEnv).WithCause(err)
	}
	return nil
}

func (j *journal) remove() { unix.Unlink(j.path) } // housekeeping: a leftover is recovered
func (j *journal) close()  { unix.Close(j.fd) }

// abandon writes, beside the journal its committer gives up to a later
// recovery (its own undo failed), why the commit failed: the refusals of
// its files then say so, not that its process died. At worst (not
// written) they say that. The note is whole or absent, and synced
// (writeSynced): written in place and unsynced, a crash left it empty or
// cut, and every refusal read it back whole.
func (j *journal) abandon(err error) {
	why := ErrText(err)
	if fe := (*fault.Error)(nil); errors.As(err, &fe) {
		why = strings.TrimSuffix(fe.Message, ".")
		if fe.Path != "" {
			why = fe.Path + ": " + why
		}
	}
	writeSynced(j.path+journalAbandoned, []byte(abandonedNote(why)))
}

// abandonedMax bounds the note of why a commit gave its journal up
// (journal.abandon): written no longer, and read no further by the
// refusals of the journal's files, each of which reads it.
const abandonedMax = 4 << 10

// abandonedNote is why as the note holds it: valid UTF-8 without control
// characters (a path's newline made a space), cut to abandonedMax bytes
// at a character's start. abandonedWhy takes anything else for garbage.
func abandonedNote(why string) string {
	why = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(why, "\uFFFD"))
	if len(why) > abandonedMax {
		cut := abandonedMax
		for cut > 0 && !utf8.RuneStart(why[cut]) {
			cut--
		}
		why = why[:cut]
	}
	return why
}

// writeSynced puts data at path, a state file, whole or not at all, and
// durably: written under a fresh name (partialSuffix, which a sweep takes
// only from a dead writer: it is flocked meanwhile) and synced, renamed
// to path, its directory synced.
func writeSynced(path string, data []byte) error {
	tmp := path + partialSuffix + strings.TrimPrefix(tempName(), tempPrefix)
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		err = writeFull(fd, data)
	}
	if err == nil {
		err = syscalls.fsync(fd)
	}
	if err == nil {
		err = syscalls.renameat(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path)
	}
	if err != nil {
		unix.Unlink(tmp)
		return err
	}
	return syncPath(filepath.Dir(path))
}

func syncPath(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return syscalls.fsync(fd)
}

// recoverJournals finishes the transactions of dead processes, whose
// journals are in the state directories bases ("" for none): each
// journal whose flock is free is undone when pending, its backups removed
// when committed, under the locks of its files. It runs when a process
// starts and before each mutation takes its locks (LockAll), holding
// none: a lock of the caller's own, taken through another descriptor,
// would stand in its way. What it cannot do now (a file locked by a live
// process) a later call does.
//
// It waits for a journal's locks until deadline, the caller's, and at
// most journalWait. It returns the journals it could not finish: nil for
// one it could not finish under its locks (a tree's backup that cannot go
// back), which no retry will, left for a person without holding up the
// mutations of its paths but those of the files it left half changed
// (refuseUncommitted); the cause for one whose recovery could not run
// (its recovery file or its lock files cannot be made: a full state
// directory, no descriptor left), which a later call runs; and
// errRecoveryPending for one whose recovery did not run in time (its
// locks held past the wait, another process's recovery of it not done).
//
// It returns too, for a journal left, the real paths of its files in
// directories moved since the crash and found (recoverJournal), refused as
// its recorded paths are, and, for one it could not finish under its
// locks, what it left (undoLeft), by which only the files not undone are
// refused. It counts the journals it undid and finished.
func recoverJournals(ctx context.Context, f *FS, bases []string, deadline time.Time) (r recovered) {
	deadJournals(ctx, bases, deadline, f.touchesRoots, func(fd int, path string, committed bool, err error) {
		stuck := err != nil
		var at []string
		var left []undoLeft
		if !stuck {
			wait := min(journalWait, max(0, time.Until(deadline)))
			stuck, at, left, err = recoverJournal(f, fd, path, committed, wait)
			if !stuck {
				r.count(committed)
			}
		}
		if stuck {
			if r.stuck == nil {
				r.stuck, r.moved, r.left = map[string]error{}, map[string][]string{}, map[string][]undoLeft{}
			}
			r.stuck[path], r.moved[path], r.left[path] = err, at, left
		}
	})
	return r
}

// deadJournals calls visit with each journal in bases whose writer is dead,
// holding its flock. A journal's flock is held exclusive by its live
// committer or by a process recovering it, which also holds the flock of
// the journal's recovery file, taken before the journal's and kept to the
// end, and shared a moment by a look (this one's, or waitLiveCommit's),
// which no other look mistakes for a live commit: a call
// that finds a journal held and its recovery file held waits for that
// recovery (until deadline, when relevant says the journal names a file
// it may read), as a reader that went on read the files of the dead
// commit before they were put back, and one that recovery left (its
// locks not had) is looked at again, until deadline, past which a
// recovery met again is not waited for and the journal is visited with
// errRecoveryPending. A live commit costs two looks and two failed opens
// of its recovery file (a recovery that let the journal go between a
// look's probe and its open was taken for one) and is not waited for. A
// journal this process cannot
// open, or whose recovery file it cannot make, is visited with the error
// (and no descriptor): it may be a dead writer's, and skipped, its files
// were read as if committed.
func deadJournals(ctx context.Context, bases []string, deadline time.Time, relevant func(journal string) bool, visit func(fd int, path string, committed bool, err error)) {
	for p, err := range journals(bases) {
		if err != nil {
			visit(-1, p, false, err)
			continue
		}
		committed := strings.HasSuffix(p, journalCommitted)
		held := false   // the last look found it held, and no recovery
		metOne := false // another process's recovery of it waited for
		for look := 1; ; look++ {
			fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				if !errors.Is(err, unix.ENOENT) {
					visit(-1, p, committed, err)
				}
				break // gone: committed and removed, or recovered
			}
			// Shared: only a committer and a recoverer hold a journal
			// exclusive, and a look taken exclusive failed against
			// another's look, and took the journal for a live commit's.
			free := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == nil
			unix.Close(fd)
			if free && !recoverHolding(ctx, p, committed, deadline, visit) {
				break // recovered here, or could not be
			}
			// Held by its committer or a recoverer, or its recovery file
			// taken by another: that recovery is waited for.
			if !relevant(p) {
				break
			}
			if look > 1 && !held && !time.Now().Before(deadline) {
				// Another recovery met again past the deadline: not
				// waited for again, as a stream of them (each let go
				// for want of locks, the next begun) kept this loop
				// going for as long as they came.
				visit(-1, p, committed, errRecoveryPending)
				break
			}
			if metOne && recoveryHeld(p) {
				// One other recovery waited for and a turn taken or
				// lost, another begun: pending. Waiting for each attempt
				// in turn (each let go for want of the files' locks),
				// calls that do not even read its files queued for the
				// whole lock timeout.
				visit(-1, p, committed, errRecoveryPending)
				break
			}
			waited, err := waitRecovery(ctx, p, deadline)
			metOne = metOne || waited
			if err != nil {
				// Still recovered at the deadline: its files may hold
				// the dead commit's content, refused until it is done.
				visit(-1, p, committed, errRecoveryPending)
				break
			}
			if !waited && !free {
				if held {
					break // a live commit's
				}
				// A live commit's, or a recovery that let the journal go
				// between the probe and the look at its recovery file
				// (it lets the journal go first), its locks not had:
				// taken for a live commit, the journal was neither
				// recovered nor refused, and its files read as
				// committed. Looked at once more.
				held = true
				continue
			}
			held = false
			// Its recovery ended (done, or let go for want of locks), or
			// was over as this look met it: looked at again.
		}
	}
}

// recoverHolding takes the recovery file of the journal p, then the
// journal's flock, and calls visit with them held; nothing when another
// process has either (busy when it has the recovery file: it recovers
// the journal). Any other failure is visited with its error: only a lock
// held by a live process says another recovers the journal.
func recoverHolding(ctx context.Context, p string, committed bool, deadline time.Time, visit func(fd int, path string, committed bool, err error)) (busy bool) {
	rec, err := lockRecoveryFile(p + journalRecovering)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true
	}
	if err != nil {
		visit(-1, p, committed, err)
		return false
	}
	defer func() {
		unix.Unlink(p + journalRecovering) // still held, and still ours: no one else unlinks it
		unix.Close(rec)
	}()
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			visit(-1, p, committed, err)
		}
		return false
	}
	defer unix.Close(fd)
	// Free at deadJournals' look, and its recovery file ours: a hold of
	// the journal's flock now is another process's look (its probe, or a
	// check for a live commit), a moment long. Waited for: passed over,
	// the journal was neither recovered nor kept, and its files were read
	// as committed. It is waited for until deadline (a reader of
	// --lock-timeout 0 waited 2 s), and a wait that ends first is a
	// recovery that has not run yet, as one whose files' locks are held
	// past it: the timeout as the cause refused the files IO_ERROR, telling
	// to check the state directory's disk, and failed a mutation that
	// waits for a recovery not run.
	if most := time.Now().Add(journalWait); most.Before(deadline) {
		deadline = most
	}
	if err := FlockWait(ctx, fd, unix.LOCK_EX, deadline); err != nil {
		if waitEnded(err) {
			err = errRecoveryPending
		}
		visit(-1, p, committed, err)
		return false
	}
	visit(fd, p, committed, nil)
	return false
}

// lockRecoveryFile takes the flock of the recovery file at path without
// waiting (lockNamed: a recovery ends by unlinking it, and a lock of the
// file it unlinked is no one's).
func lockRecoveryFile(path string) (int, error) {
	return lockNamed(path, func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
}

// waitRecovery waits while a process holds the recovery file of the
// journal p: waited once it let it go, an error when deadline or ctx ended
// first, neither when none held it (the journal is a live commit's, its
// recovery file a leftover, or the recovery just ended).
func waitRecovery(ctx context.Context, p string, deadline time.Time) (waited bool, err error) {
	fd, err := unix.Open(p+journalRecovering, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == nil {
		return false, nil
	}
	if err := FlockWait(ctx, fd, unix.LOCK_SH, deadline); err != nil {
		return false, err
	}
	return true, nil
}

// errRecoveryPending is the cause of a dead journal whose recovery did not
// run in time: another process held its files' locks past the wait (or
// its journal's flock, looking at it), or recovered it past the deadline. Its files are refused to readers (they
// may hold its content, never committed) until a call recovers it; a
// mutation waits for it as for a journal it meets (LockAll).
var errRecoveryPending = errors.New("the recovery of a dead transaction has not run yet")

// touchesRoots reports whether the journal p names a file under one of
// f's roots, or cannot be read (and may): only such a journal's recovery
// is waited for, as one of another project's is nothing to this call.
func (f *FS) touchesRoots(p string) bool {
	entries, err := readJournal(p)
	if err != nil {
		return true
	}
	for _, e := range entries {
		for _, r := range f.roots {
			if _, in := within(r.path, e.Dir); in {
				return true
			}
		}
	}
	return false
}

// journals yields the path of each journal in the state directories
// bases ("" for none), with a nil error, and the journal directory of a
// base that cannot be listed (any error but a missing one), or that holds
// journals but is not private (notPrivate), with the error: it may hold a
// dead commit's journal, and skipped, its files were read as if
// committed.
func journals(bases []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, base := range bases {
			if base == "" {
				continue
			}
			d := filepath.Join(base, "journal")
			names, err := syscalls.readDir(d)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				if !yield(d, err) {
					return
				}
				continue
			}
			if !slices.ContainsFunc(names, func(n os.DirEntry) bool { return isJournal(n.Name()) }) {
				continue // the hot path: no journal, nothing to trust
			}
			// A journal planted in a directory others can write, or
			// could once (chmod 700 since, as the refusal's hint says),
			// could rename files over the user's: never recovered, every
			// file refused while it is there.
			np := checkPrivate(base)
			if np == nil {
				if np = checkPrivate(d); np != nil {
					np.why = "its journal directory: " + np.why
					if np.mend == "" {
						np.foreign = true
						np.mend = fmt.Sprintf("remove %s, which another user could write: no journal in it is recovered (undo by hand what they name, if they are transactions of yours)", d)
					}
				}
			}
			if np == nil {
				np = foreignJournal(d, names)
			}
			if np != nil {
				if !yield(d, np) {
					return
				}
				continue
			}
			for _, n := range names {
				if !isJournal(n.Name()) {
					continue
				}
				if !yield(filepath.Join(d, n.Name()), nil) {
					return
				}
			}
		}
	}
}

// errNoJournal is readJournal's error for a journal gone, or that is no
// JSON (cut short).
var errNoJournal = errors.New("no journal")

// errTornJournal is readJournal's error, an errNoJournal, for a journal
// that is no JSON (cut short).
var errTornJournal = fmt.Errorf("%w: not a journal's JSON", errNoJournal)

// errNewerJournal is readJournal's error for a journal that is whole JSON
// but not of the form this agentfs writes: a newer agentfs's.
var errNewerJournal = errors.New("the journal is not in the form this agentfs writes: a newer agentfs wrote it")

// readJournal reads the entries of the journal at path: errNoJournal for
// one gone or cut short, another error for one that is there but cannot
// be read (a failing disk, no descriptor left) or is whole JSON of
// another form (a newer agentfs's), which names files no one here can
// tell. Taken as torn, a newer agentfs's pending journal was removed,
// and its files left half changed.
func readJournal(path string) ([]journalEntry, error) {
	data, err := syscalls.readFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoJournal
	}
	if err != nil {
		return nil, err
	}
	var entries []journalEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		if json.Valid(data) {
			// Whole, but not as this agentfs writes one: a newer
			// agentfs's, whose files it alone can tell.
			return nil, fmt.Errorf("%w (%v)", errNewerJournal, err)
		}
		return nil, errTornJournal
	}
	return entries, nil
}

// foreignJournal is the error of the journal directory d when one of its
// journals (names) is not a file of this user's: another user wrote it,
// while the state directory was not private, and it is never recovered.
func foreignJournal(d string, names []os.DirEntry) *notPrivate {
	for _, n := range names {
		if !isJournal(n.Name()) {
			continue
		}
		p := filepath.Join(d, n.Name())
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || int(st.Uid) == os.Getuid() {
			continue // gone, or this user's: its open and read say the rest
		}
		why := fmt.Sprintf("it holds %s, a journal of user %d", n.Name(), st.Uid)
		mend := fmt.Sprintf("remove %s, which another user wrote: it is never recovered (undo by hand what it names, if it is a transaction of yours)", p)
		return &notPrivate{
			fe:      fault.Errorf(fault.CodeNotConfigured, "the journal directory %s is not this user's alone: %s.", d, why).WithHint("%s", mend),
			why:     why,
			mend:    mend,
			foreign: true,
		}
	}
	return nil
}

// journalFor is a journal in bases that names one of reals, or a path
// above or below one, "" when there is none; or a journal directory that
// cannot be listed, or a pending journal that cannot be read, with the
// error (any journal, or any file, may be there). Asked while
// the caller holds the locks of reals, it is no live commit's (a committer
// holds the locks of what it names until its journal is gone, or, kept for
// a backup it could not unlink, committed and its flock let go): its
// writer died or is done with it, and it is to recover, or another process
// is recovering it. But a
// directory the commit made is only above what it writes there, locked
// shared as by any writer below it: it counts only when it is one of reals
// or below one.
func journalFor(bases []string, reals []string) (string, error) {
	for path, err := range journals(bases) {
		if err != nil {
			return path, err
		}
		entries, err := readJournal(path)
		if err != nil && !errors.Is(err, errNoJournal) && strings.HasSuffix(path, journalPending) {
			return path, err // any of reals may be among its files
		}
		for _, e := range entries {
			p := filepath.Join(e.Dir, e.Name)
			for _, r := range reals {
				if p == r || strings.HasPrefix(p, r+"/") || e.DirID == "" && strings.HasPrefix(r, p+"/") {
					return path, nil
				}
			}
		}
	}
	return "", nil
}

// waitJournal waits while a process recovers the journal at path (it
// holds the journal's recovery file), or until deadline. It takes no
// flock of the journal's own: a waiter's shared one, however short, made
// a recovery that probed it then take the journal for a live commit's.
func waitJournal(ctx context.Context, path string, deadline time.Time) error {
	waitRecovery(ctx, path, deadline) // its end, by deadline too, is LockAll's to judge
	return ctx.Err()
}

// journalWait is the longest a recovery waits for one journal's locks.
const journalWait = 2 * time.Second

// recoverJournal recovers the journal at path, waiting up to wait for its
// locks, and reports whether it could not finish it, with the error that
// kept it from taking them (errRecoveryPending for a wait for locks a live
// process holds: the journal is left to the next call), or none when it
// took them and still could not. Stuck, it returns the real paths of the
// journal's files in directories moved since and found there, and, when
// it took the locks, what it could not undo or finish (left).
func recoverJournal(f *FS, fd int, path string, committed bool, wait time.Duration) (stuck bool, moved []string, left []undoLeft, err error) {
	entries, err := readJournal(path)
	if errors.Is(err, errTornJournal) && !committed {
		// A pending journal is whole and synced before the first file
		// changes: one cut short (a power cut before its sync) is a
		// writer's that changed nothing, and would be read again by
		// every later call.
		unix.Unlink(path)
	}
	if errors.Is(err, errNoJournal) {
		return false, nil, nil, nil
	}
	if err != nil {
		return true, nil, nil, err // EMFILE, EIO: a dead commit not looked at
	}
	// Files in a directory moved since are locked where it is now too: a
	// writer of theirs locks them by that path.
	seen := &dirsFound{}
	var reals, movedReals []string
	for _, e := range entries {
		reals = append(reals, filepath.Join(e.Dir, e.Name))
		if to := seen.movedTo(&e); to != "" {
			movedReals = append(movedReals, filepath.Join(to, e.Name))
		}
	}
	reals = append(reals, movedReals...)
	unlock, _, err := f.lockReal(context.Background(), reals, wait)
	if le := (*lockError)(nil); errors.As(err, &le) {
		return true, movedReals, nil, errRecoveryPending
	}
	if err != nil {
		return true, movedReals, nil, err
	}
	defer unlock()
	done := true
	if committed {
		for _, e := range entries {
			if e.Backup != "" && !e.Tree {
				ok := atJournalDir(&e, seen, func(dfd int) bool {
					err := unix.Unlinkat(dfd, e.Backup, 0)
					if !absent(err) {
						l := undoNotes{dfd: dfd, e: &e}
						l.note(leftBackup, e.Backup, err)
						left = append(left, l.left...)
					}
					return absent(err)
				})
				done = ok && done
			}
		}
		if !f.finishTrees(entries, seen) {
			done = false
			for _, e := range entries {
				if e.Tree && e.Backup != "" {
					left = append(left, undoLeft{real: filepath.Join(e.Dir, e.Name), dir: e.Dir, kind: leftBackup, file: e.Backup})
				}
			}
		}
	} else {
		done, _, left = f.rollBackKeeping(entries, seen)
	}
	if done {
		unix.Unlink(path)
		unix.Unlink(path + journalAbandoned)
		return false, nil, nil, nil
	}
	return true, movedReals, left, nil
}

// rollBack undoes entries, the last first: a backup goes back over its
// target, a new file (the staged one, by identity) is unlinked, a staged
// file not renamed is removed, a directory the transaction made (by
// identity) is removed while empty. A target another writer changed since
// the commit died (its identity or stamp not the staged file's, or a file
// where one was removed) is left as that writer made it: its success was
// reported, and the backup would undo it. It says whether every
// directory's backup is back in place (a file's always is, or it is still
// its target).
func (f *FS) rollBack(entries []journalEntry) bool {
	done, _, _ := f.rollBackKeeping(entries, &dirsFound{})
	return done
}

// rollBackKeeping is rollBack, and also returns the entries of files it
// left as another writer made them over this transaction's change, in
// order: a staged file changed in place since it was renamed in, or a
// file made where this transaction removed one (whose backup then goes).
// Either holds what no undo of this transaction gives back. seen holds
// where directories moved since were found. It returns too what it could
// not undo (undoLeft), entry by entry, last first.
func (f *FS) rollBackKeeping(entries []journalEntry, seen *dirsFound) (bool, []journalEntry, []undoLeft) {
	done := true
	var kept []journalEntry
	var left []undoLeft
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		ran := false
		ok := atJournalDir(&e, seen, func(dfd int) bool {
			ran = true
			l := undoNotes{dfd: dfd, e: &e}
			if e.DirID != "" {
				if err := removeMadeDirErr(dfd, e.Name, e.DirID); err != nil {
					l.note(leftMadeDir, e.Name, err)
				} else if err := fileSync(dfd); err != nil {
					l.note(leftUnsynced, "", err)
				}
				left = append(left, l.left...)
				return len(l.left) == 0
			}
			if e.Tree {
				if err := f.rollBackTree(dfd, e); err != nil {
					l.note(leftTree, e.Backup, err)
				}
				left = append(left, l.left...)
				return len(l.left) == 0
			}
			var b, cur unix.Stat_t
			exists := unix.Fstatat(dfd, e.Name, &cur, unix.AT_SYMLINK_NOFOLLOW) == nil
			staged := exists && e.isStaged(&cur)
			if exists && !staged && e.StagedID != "" && identity(&cur) == e.StagedID {
				kept = append(kept, e) // this change, and another writer's in place
			}
			if e.Backup != "" {
				switch {
				case unix.Fstatat(dfd, e.Backup, &b, unix.AT_SYMLINK_NOFOLLOW) != nil:
					// The link was never made: the target was not touched.
				case exists && identity(&cur) == identity(&b):
					// Not replaced yet (rename over a link of the same
					// file would do nothing): only the link goes.
					if err := unix.Unlinkat(dfd, e.Backup, 0); !absent(err) {
						l.note(leftBackup, e.Backup, err)
					}
				case staged:
					if err := unix.Renameat(dfd, e.Backup, dfd, e.Name); err != nil {
						l.note(leftReplaced, e.Backup, err)
					}
				case !exists && e.Staged == "":
					// Removed by this transaction, and nothing there since
					// (or another writer's file just now, which stays).
					if err := renameNoReplace(dfd, e.Backup, dfd, e.Name); err != nil && !errors.Is(err, unix.EEXIST) {
						l.note(leftRemoved, e.Backup, err)
					}
				default:
					if exists && e.Staged == "" {
						kept = append(kept, e) // another writer's file where this one removed the old
					}
					if err := unix.Unlinkat(dfd, e.Backup, 0); !absent(err) {
						l.note(leftBackup, e.Backup, err)
					}
				}
			} else if staged {
				if err := unix.Unlinkat(dfd, e.Name, 0); !absent(err) {
					l.note(leftCreated, e.Name, err)
				}
			}
			if e.Staged != "" {
				if err := unix.Unlinkat(dfd, e.Staged, 0); !absent(err) { // absent once renamed
					l.note(leftStaged, e.Staged, err)
				}
			}
			if err := fileSync(dfd); err != nil {
				l.note(leftUnsynced, "", err)
			}
			left = append(left, l.left...)
			return len(l.left) == 0
		})
		if !ok && !ran {
			// Its directory not found, or not opened: what is there is
			// not known.
			left = append(left, undoLeft{real: filepath.Join(e.Dir, e.Name), dir: e.Dir, kind: leftNoDir})
		}
		done = ok && done
	}
	slices.Reverse(kept)
	return done, kept, left
}

// absent reports an unlink done, or with nothing to do.
func absent(err error) bool { return err == nil || errors.Is(err, unix.ENOENT) }

// removeMadeDir removes the directory name in dfd if it is still the one
// with identity id, and empty: one another writer filled stays. It says
// whether that is so, false when the removal failed otherwise (EIO, a
// read-only remount), so that a recovery keeps its journal and tries again.
func removeMadeDir(dfd int, name, id string) bool { return removeMadeDirErr(dfd, name, id) == nil }

// removeMadeDirErr is removeMadeDir, with the error of the removal that
// failed.
func removeMadeDirErr(dfd int, name, id string) error {
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || identity(&st) != id {
		return nil // gone, or not the one made
	}
	err := syscalls.rmdirat(dfd, name)
	if absent(err) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

// isStaged reports whether st is the entry's staged file, unchanged.
func (e journalEntry) isStaged(st *unix.Stat_t) bool {
	return e.StagedID != "" && identity(st) == e.StagedID && (e.StagedStamp == "" || stamp(st) == e.StagedStamp)
}

// rollBackTree undoes one directory of a move across file systems: the
// copy (by identity, at its staging name or already at its target's) is
// removed, then the backup renamed back to the target's name, never over
// something that took that name since. Its error is that rename's: the
// backup is not back.
func (f *FS) rollBackTree(dfd int, e journalEntry) error {
	var st unix.Stat_t
	for _, name := range []string{e.Name, e.Staged} {
		if name != "" && e.StagedID != "" && unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && identity(&st) == e.StagedID {
			f.removeTree(context.Background(), dfd, name, name)
		}
	}
	if e.Backup == "" || unix.Fstatat(dfd, e.Backup, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return nil
	}
	err := renameNoReplace(dfd, e.Backup, dfd, e.Name)
	fileSync(dfd)
	return err
}

// atDir runs fn on a descriptor of the directory dir, a real path a
// journal recorded, opened without following a final link.
func atDir(dir string, fn func(dfd int)) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	fn(fd)
}

// atJournalDir runs fn, which says whether it did all it had to, on the
// directory of the journal entry e, and says so too. When e.Dir does not
// lead to the directory the journal recorded (missing, a link, another
// directory), it is sought by its identity (seen.locate), and fn runs
// where it is found. Not found, fn does not run: e has nothing to undo
// when its directory was removed, and waits for a later call otherwise (a
// file system not mounted leaves its mount point, another directory).
// Only an entry that recorded no directory (one not there when the
// journal was written) has nothing to do where there is none. On a file
// system whose device number changed since, e's identities are given the
// new one (renumbered) before fn sees them.
func atJournalDir(e *journalEntry, seen *dirsFound, fn func(dfd int) bool) bool {
	fd, err := openJournalDir(e.Dir)
	if err == nil {
		defer unix.Close(fd)
		if e.DirIdentity == "" || e.isJournalDir(fd) {
			return fn(fd)
		}
	} else if e.DirIdentity == "" {
		return errors.Is(err, unix.ENOENT)
	}
	switch l := seen.locate(e, err); l.verdict {
	case dirRemoved:
		return true
	case dirFound:
		at, err := openJournalDir(l.path)
		if err != nil {
			return false
		}
		defer unix.Close(at)
		return e.isJournalDir(at) && fn(at)
	}
	return false
}

// renumbered reports whether st, e's directory as opened at fd, is the
// one recorded on a file system that got another device number since: a
// btrfs subvolume, an overlay or an NFS mount is given one when mounted,
// which may differ at each boot, and a journal of a crash was kept for
// good. It is the same inode on the file system of the same fsID; e's
// identities on the old device are then given the new one.
func (e *journalEntry) renumbered(fd int, st *unix.Stat_t) bool {
	dev, ino, _ := strings.Cut(e.DirIdentity, ":")
	if e.DirFS == "" || ino != strconv.FormatUint(st.Ino, 10) || fsID(func(s *unix.Statfs_t) error { return unix.Fstatfs(fd, s) }) != e.DirFS {
		return false
	}
	now := strconv.FormatUint(uint64(st.Dev), 10)
	for _, id := range []*string{&e.DirIdentity, &e.DirID, &e.StagedID} {
		if d, rest, ok := strings.Cut(*id, ":"); ok && d == dev {
			*id = now + ":" + rest
		}
	}
	return true
}

// aliasedTwice is the second and the first of two preps that name one
// entry by two spellings (see aliases), such as Foo.go and foo.go where
// the file system ignores case, or nils. Keyed by spelling, they passed as two
// files: the second change's compare-and-swap met the first's file and
// failed, the transaction was undone (respelling the file) and run again,
// at every attempt for the whole --lock-timeout, then said that other
// writers kept changing the file.
func aliasedTwice(preps []*prepared) (second, first *prepared) {
	type id struct{ dev, ino uint64 }
	at := map[id][]*prepared{}
	for _, p := range preps {
		var st unix.Stat_t
		if unix.Fstatat(int(p.dir.Fd()), p.entry.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // made by the commit: no other spelling finds it yet
		}
		k := id{uint64(st.Dev), st.Ino}
		for _, q := range at[k] {
			var a, b unix.Stat_t
			if unix.Fstat(int(p.dir.Fd()), &a) != nil || unix.Fstat(int(q.dir.Fd()), &b) != nil || !sameFile(&a, &b) {
				continue
			}
			if same, err := aliases(int(p.dir.Fd()), q.entry.Name, p.entry.Name); err == nil && same {
				return p, q
			}
		}
		at[k] = append(at[k], p)
	}
	return nil, nil
}
