package localfs

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A directory moved to another file system cannot be renamed; it is copied
// and the source removed, as one transaction (see txn.go) whose journal is
// written before the first byte is copied:
//
//  1. the source tree is checked as rm -r checks it (no mount point, no
//     deny root, no kernel file system inside), since it will be removed;
//  2. a staging directory is made beside the destination and the journal
//     names it, the destination, and a backup name beside the source;
//  3. the tree is copied into the staging directory (files, links and
//     directories with their modes and times; files hard-linked within the
//     tree stay one file, as GNU mv keeps them), each file and directory
//     synced, and the version of every entry recorded;
//  4. the source is renamed to its backup name, so that nothing can change
//     it under its path any more, and the backup is compared with what was
//     copied: an entry added, removed or changed meanwhile undoes it all
//     (STALE), so no update made during the copy is lost;
//  5. the staging directory is renamed to the destination (a destination
//     that is an empty directory, when overwriting, is first renamed to a
//     backup name of its own), both directories are synced, and the journal
//     is committed: the commit point;
//  6. the backups are removed.
//
// A process killed before the commit point leaves a pending journal, which
// the next start undoes (the copy removed, the backups renamed back); after
// it, a committed one, whose backups the next start removes.

// moveTreeAcross moves the directory at src (whose stat is st) to dst, on
// another file system. The caller holds the locks of both paths.
func (f *FS) moveTreeAcross(ctx context.Context, src, dst renameEndpoint, st *unix.Stat_t, opts backend.WriteOptions) (backend.FileInfo, error) {
	from := journalEntry{Dir: filepath.Dir(src.real), Name: src.name, Backup: tempName(), Tree: true}
	to := journalEntry{Dir: filepath.Dir(dst.real), Name: dst.name, Tree: true}
	var err error
	if to.Backup, err = overwritable(dst, opts); err != nil {
		return backend.FileInfo{}, err
	}
	if err := f.checkTree(src.fd(), src.name, src.display, dst); err != nil {
		return backend.FileInfo{}, err
	}
	// The staging directory is recorded before it is made, as a commit's
	// new directories are: killed before the journal names it, it was
	// left empty at the destination for ever, which no recovery knew.
	rec, err := newDirRecord(filepath.Join(to.Dir, to.Name))
	if err != nil {
		return backend.FileInfo{}, stateDirErr("the record of the move's staging directory", err).WithPath(dst.display)
	}
	to.Staged = stagingDirName(rec.path)
	j, err := stageTreeDir(dst, from, &to, rec)
	// The journal names the directory from now on, or it is gone.
	rec.done()
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer j.close()
	entries := []journalEntry{from, to}
	undo := func(err error) (backend.FileInfo, error) {
		if f.rollBack(entries) {
			j.remove()
		}
		return backend.FileInfo{}, err
	}
	// The copy and its comparison, which undo undoes, stop when the
	// caller gives up; from the rename into place on, the move goes on
	// whatever happens.
	prep := backend.Preparation(ctx)
	copied, err := f.copyTree(prep, src, dst, to.Staged, st)
	if err != nil {
		return undo(err)
	}
	if err := syscalls.renameat(src.fd(), src.name, src.fd(), from.Backup); err != nil {
		if errors.Is(err, unix.EXDEV) && onOverlay(src.fd()) {
			// Renamed within its own directory: an overlay's lower
			// directory, moved out of the overlay.
			return undo(overlayDirErr(src.display))
		}
		return undo(mapErr(err, src.display))
	}
	if err := unchangedSince(prep, src.fd(), from.Backup, copied, src.display); err != nil {
		return undo(err)
	}
	if to.Backup != "" {
		if err := syscalls.renameat(dst.fd(), dst.name, dst.fd(), to.Backup); err != nil {
			return undo(mapErr(err, dst.display))
		}
	}
	if err := renameNoReplace(dst.fd(), to.Staged, dst.fd(), dst.name); err != nil {
		if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
			err = fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
				WithHint("another program created it during the move; nothing was moved")
		}
		return undo(mapErr(err, dst.display))
	}
	for _, d := range []int{dst.fd(), src.fd()} {
		if err := syscalls.fsync(d); err != nil {
			return undo(mapErr(err, dst.display))
		}
	}
	if err := j.commit(); err != nil {
		return undo(err)
	}
	if f.finishTrees(entries, &dirsFound{}) {
		j.remove()
	}
	return infoAt(dst.fd(), dst.name, dst.display)
}

// stageTreeDir makes the staging directory of to, records its identity in
// rec, and writes the journal of the move from to; on a failure the
// directory goes.
func stageTreeDir(dst renameEndpoint, from journalEntry, to *journalEntry, rec *tempRecord) (*journal, error) {
	if err := syscalls.mkdirat(dst.fd(), to.Staged, 0o700); err != nil {
		return nil, mapErr(err, dst.display)
	}
	var sst unix.Stat_t
	err := unix.Fstatat(dst.fd(), to.Staged, &sst, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil {
		to.StagedID = identity(&sst)
		err = rec.bindIdentity(&sst)
	}
	if err != nil {
		unix.Unlinkat(dst.fd(), to.Staged, unix.AT_REMOVEDIR)
		return nil, mapErr(err, dst.display)
	}
	j, err := newJournal([]journalEntry{from, *to})
	if err != nil {
		unix.Unlinkat(dst.fd(), to.Staged, unix.AT_REMOVEDIR)
		return nil, err
	}
	return j, nil
}

// overwritable is the backup name for the destination of a directory move
// when it exists and may be replaced ("" when it is absent): as rename(2)
// does, only an empty directory is replaced, and only when overwriting.
func overwritable(dst renameEndpoint, opts backend.WriteOptions) (string, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dst.fd(), dst.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return "", nil
	}
	if err != nil {
		return "", mapErr(err, dst.display)
	}
	exists := fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
		WithHint("pass --overwrite to replace an empty directory, or choose another destination")
	if opts.IfAbsent {
		return "", exists
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", mapErr(unix.ENOTDIR, dst.display)
	}
	fd, err := unix.Openat(dst.fd(), dst.name, dirFlags, 0)
	if err != nil {
		return "", mapErr(err, dst.display)
	}
	names, err := dirNames(fd)
	unix.Close(fd)
	if err != nil {
		return "", mapErr(err, dst.display)
	}
	if len(names) > 0 {
		return "", fault.FullDestination(dst.display)
	}
	return tempName(), nil
}

// copyTree copies the tree of src into the empty directory staged beside
// dst, syncing what it writes, and returns the version of each entry it
// copied by its path below src.
func (f *FS) copyTree(ctx context.Context, src, dst renameEndpoint, staged string, st *unix.Stat_t) (map[string]string, error) {
	c := &treeCopier{f: f, ctx: ctx, display: src.display, to: dst.display, versions: map[string]string{}, linked: map[string]string{}}
	sfd, _, err := openDir(src.fd(), src.name)
	if err != nil {
		return nil, mapErr(err, src.display)
	}
	defer unix.Close(sfd)
	dfd, err := unix.Openat(dst.fd(), staged, dirFlags, 0)
	if err != nil {
		return nil, mapErr(err, dst.display)
	}
	defer unix.Close(dfd)
	c.top = dfd
	if err := c.dir(sfd, dfd, ""); err != nil {
		return nil, err
	}
	if err := c.finish(sfd, dfd, dst.fd(), staged, st, ""); err != nil {
		return nil, err
	}
	return c.versions, nil
}

// treeCopier copies a tree between directory descriptors, never following
// a link, recording each entry's version.
type treeCopier struct {
	f   *FS
	ctx context.Context
	// display and to name the tree's top as the caller named its source
	// and its destination: an error of the copy's side (a full disk)
	// names the destination.
	display, to string
	versions    map[string]string
	// top is the copy's top directory; linked names the first copy, by
	// its path below top, of each file with other hard links, by identity.
	top    int
	linked map[string]string
}

// dir copies the entries of the directory sfd into dfd; rel is its path
// below the tree's top.
func (c *treeCopier) dir(sfd, dfd int, rel string) error {
	names, err := dirNames(sfd)
	if err != nil {
		return mapErr(err, join(c.display, rel))
	}
	for _, name := range names {
		if err := fault.Interrupted(c.ctx); err != nil {
			return err
		}
		if err := c.entry(sfd, dfd, name, join(rel, name)); err != nil {
			return err
		}
	}
	return nil
}

func (c *treeCopier) entry(sfd, dfd int, name, rel string) error {
	at := join(c.display, rel)
	var st unix.Stat_t
	if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return changedOr(err, at)
	}
	c.versions[rel] = version(&st)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return c.subdir(sfd, dfd, name, rel, &st)
	case unix.S_IFREG:
		if st.Nlink > 1 {
			if first, ok := c.linked[identity(&st)]; ok {
				// Another name of a file already copied: a link to the
				// copy, so that the tree keeps its hard links.
				return mapped(unix.Linkat(c.top, first, dfd, name, 0), join(c.to, rel))
			}
			c.linked[identity(&st)] = rel
		}
		return c.file(sfd, dfd, name, &st, rel)
	case unix.S_IFLNK:
		target, err := readLink(func(buf []byte) (int, error) { return unix.Readlinkat(sfd, name, buf) }, st.Size)
		if errors.Is(err, unix.EINVAL) { // no longer a link
			return stale(at)
		}
		if err != nil {
			return changedOr(err, at)
		}
		err = unix.Symlinkat(target, dfd, name)
		if err == nil {
			err = unix.UtimesNanoAt(dfd, name, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
		}
		return mapped(err, join(c.to, rel))
	}
	return fault.Errorf(fault.CodeNotAFile, "the directory holds a special file (a FIFO, socket or device), which a move across file systems does not copy.").
		WithPath(at).WithHint("remove it or move it aside, or choose a destination on the same file system; nothing was moved")
}

func (c *treeCopier) subdir(sfd, dfd int, name, rel string, st *unix.Stat_t) error {
	at := join(c.display, rel)
	cs, cst, err := openDir(sfd, name)
	if err != nil {
		return changedOr(err, at)
	}
	defer unix.Close(cs)
	if identity(&cst) != identity(st) {
		return stale(at)
	}
	if err := unix.Mkdirat(dfd, name, 0o700); err != nil {
		return mapErr(err, join(c.to, rel))
	}
	cd, err := unix.Openat(dfd, name, dirFlags, 0)
	if err != nil {
		return mapErr(err, join(c.to, rel))
	}
	defer unix.Close(cd)
	if err := c.dir(cs, cd, rel); err != nil {
		return err
	}
	return c.finish(cs, cd, dfd, name, st, rel)
}

// finish gives the copied directory fd (name in parent) the owner, mode,
// extended attributes and times of the original, src as st found it,
// and syncs it.
func (c *treeCopier) finish(src, fd, parent int, name string, st *unix.Stat_t, rel string) error {
	return mapped(keepAttrs(src, fd, parent, name, st, join(c.display, rel)), join(c.to, rel))
}

// keepAttrs gives fd, a copy named name in parent, the owner, mode,
// extended attributes (of src, at) and times of the original, as st
// found it, and syncs it: the times last, which the other changes would
// move.
func keepAttrs(src, fd, parent int, name string, st *unix.Stat_t, at string) error {
	err := keepOwnerAndMode(fd, st)
	if err == nil {
		err = copyXattrs(src, fd, at)
	}
	if err == nil {
		err = syscalls.fsync(fd)
	}
	if err == nil {
		err = unix.UtimesNanoAt(parent, name, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
	return err
}

func (c *treeCopier) file(sfd, dfd int, name string, st *unix.Stat_t, rel string) error {
	at, to := join(c.display, rel), join(c.to, rel)
	// Anything put in the file's place since the stat (a FIFO, a device,
	// a link) is refused unopened, and another file by identity.
	var ist unix.Stat_t
	in, err := openRegularAt(sfd, name, &ist)
	if errors.Is(err, errNotRegular) {
		return stale(at)
	}
	if err != nil {
		return changedOr(err, at)
	}
	src := os.NewFile(uintptr(in), at)
	defer src.Close()
	if identity(&ist) != identity(st) {
		return stale(at)
	}
	if c.f.deniedIdentity(&ist) {
		return c.f.deniedFileErr(at) // linked since checkTree
	}
	out, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return mapErr(err, to)
	}
	dst := os.NewFile(uintptr(out), to)
	defer dst.Close()
	if err := copyStopping(c.ctx, dst, src); err != nil {
		return mapErr(err, copySide(err, at, to))
	}
	return mapped(keepAttrs(in, out, dfd, name, st, at), to)
}

// unchangedSince checks that the tree name of dfd holds what was copied:
// the same entries, each at the same version.
func unchangedSince(ctx context.Context, dfd int, name string, copied map[string]string, display string) error {
	fd, _, err := openDir(dfd, name)
	if err != nil {
		return mapErr(err, display)
	}
	defer unix.Close(fd)
	now := map[string]string{}
	if err := treeVersions(ctx, fd, "", now, display); err != nil {
		return err
	}
	if !maps.Equal(now, copied) {
		return stale(display)
	}
	return nil
}

// treeVersions records the version of each entry below the directory fd.
func treeVersions(ctx context.Context, fd int, rel string, into map[string]string, display string) error {
	names, err := dirNames(fd)
	if err != nil {
		return mapErr(err, join(display, rel))
	}
	for _, name := range names {
		if err := fault.Interrupted(ctx); err != nil {
			return err
		}
		r := join(rel, name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return changedOr(err, join(display, r))
		}
		into[r] = version(&st)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, _, err := openDir(fd, name)
		if err != nil {
			return changedOr(err, join(display, r))
		}
		err = treeVersions(ctx, sub, r, into, display)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// copySide is the path that names err, a copy's failure from the file at
// to the file to: the destination for a write's (a full disk), the
// source for a read's. copy_file_range's name the destination either
// way, so its errno tells: one that only a write meets.
func copySide(err error, at, to string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "write" {
		return to
	}
	for _, e := range []error{unix.ENOSPC, unix.EDQUOT, unix.EFBIG, unix.EROFS} {
		if errors.Is(err, e) {
			return to
		}
	}
	return at
}

// mapped is mapErr of a step chain's error, nil when every step succeeded.
func mapped(err error, at string) error {
	if err == nil {
		return nil
	}
	return mapErr(err, at)
}

// changedOr is err, met on an entry of a tree being copied or compared
// after the entry was listed or stat'ed, as the caller's error: STALE when
// it says the entry went or became another kind (removed or renamed away,
// a directory replaced by a file or a link), which is a change of the
// tree as the comparison finds one. Mapped as it came, it was NOT_FOUND
// naming the vanished entry, often another writer's temporary file,
// which the caller never named.
func changedOr(err error, at string) error {
	// A link opened with O_NOFOLLOW is ELOOP, or EMLINK on FreeBSD.
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
		return stale(at)
	}
	return mapErr(err, at)
}

func stale(at string) error {
	return fault.Errorf(fault.CodeStale, "the directory changed while it was being copied to the other file system.").
		WithPath(at).WithHint("nothing was moved; run mv again")
}

// finishTrees removes the backups of a committed directory move, and says
// whether none is left; while one is, the journal stays, and each start's
// recovery tries again. seen holds where directories moved since were
// found.
func (f *FS) finishTrees(entries []journalEntry, seen *dirsFound) bool {
	done := true
	for _, e := range entries {
		if e.Backup == "" {
			continue
		}
		done = atJournalDir(&e, seen, func(dfd int) bool {
			err := f.removeTree(context.Background(), dfd, e.Backup, e.Backup)
			var st unix.Stat_t
			return err == nil || unix.Fstatat(dfd, e.Backup, &st, unix.AT_SYMLINK_NOFOLLOW) != nil
		}) && done
	}
	return done
}
