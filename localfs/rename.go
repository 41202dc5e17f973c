package localfs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

var (
	_ backend.Renamer       = (*FS)(nil)
	_ backend.EntryComparer = (*FS)(nil)
)

// SameEntry reports whether a and b name one entry (see
// backend.EntryComparer): one real path, or one name in one directory by
// identity (a bind mount of it).
func (f *FS) SameEntry(ctx context.Context, a, b string) bool {
	ea, err := f.renameEnd(ctx, a, nil)
	if err != nil {
		return false
	}
	defer ea.dir.Close()
	eb, err := f.renameEnd(ctx, b, nil)
	if err != nil {
		return false
	}
	defer eb.dir.Close()
	same, err := ea.sameEntry(eb)
	return err == nil && same
}

// Rename moves from to to (see backend.Renamer) with one rename(2) between
// descriptors of the two directories, each opened through the roots and
// checked as a write's is; both directories are synced. A file or a
// directory across file systems (EXDEV) is copied and removed in one
// transaction (a directory as movetree.go says). The caller holds the
// locks of both paths.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (_ backend.FileInfo, err error) {
	src, err := f.renameEnd(ctx, from, nil)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer src.dir.Close()
	// A file a failed undo left half changed, moved away, was served
	// under its new name as committed, and its recovery, its name empty,
	// dropped the old content; one moved onto took the name a removed file
	// was to go back to.
	if err := f.refuseUncommitted(src.real, src.display); err != nil {
		return backend.FileInfo{}, err
	}
	// The destination's missing directories are made as a transaction's
	// are, and removed again when the move fails: a move refused (into
	// itself, NOT_A_FILE across file systems) left them, though its hint
	// said nothing was moved.
	made := &madeDirs{}
	defer func() {
		if err != nil {
			made.undo(f)
		} else {
			made.keep()
		}
	}()
	dst, err := f.renameEnd(ctx, to, made)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer dst.dir.Close()
	if err := reservedName(dst.name, dst.display); err != nil {
		return backend.FileInfo{}, err
	}
	if err := f.refuseUncommitted(dst.real, dst.display); err != nil {
		return backend.FileInfo{}, err
	}
	if err := f.refuseRoots(src.real, src.display); err != nil {
		return backend.FileInfo{}, err
	}
	same, err := src.sameEntry(dst)
	switch {
	case err != nil:
		return backend.FileInfo{}, err
	case same && src.name == dst.name:
		// The "other name" of the shortcut below was the only one, and
		// was removed.
		return backend.FileInfo{}, fault.OntoItself(dst.display)
	}
	if _, inside := within(src.real, dst.real); inside {
		return backend.FileInfo{}, fault.InvalidArgument("the destination is the source or inside it.").WithPath(dst.display).
			WithHint("move the directory somewhere outside itself")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(src.fd(), src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return backend.FileInfo{}, mapErr(err, src.display)
	}
	if err := backend.CheckSwap(src.display, backend.WriteOptions{IfVersion: opts.IfVersion}, true, version(&st)); err != nil {
		return backend.FileInfo{}, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := f.refuseHeldRoot(&st, src.display); err != nil {
			return backend.FileInfo{}, err
		}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && f.holdsDenied(src.real) {
		// Moved, the denied location would be reachable by a name no
		// deny path spells.
		return backend.FileInfo{}, fault.Errorf(fault.CodeDenied, "the directory holds a denied location.").WithPath(src.display).
			WithHint("move the files around the denied path one by one; nothing was moved")
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG && f.holdsDenied(dst.real) {
		// A tree (or a link to one) moved to a deny path's parent makes
		// the deny path from what it holds: y/pre-commit moved to
		// .git/hooks planted the denied .git/hooks/pre-commit.
		return backend.FileInfo{}, fault.Errorf(fault.CodeDenied, "the destination is a denied location or holds one, which the move would fill.").WithPath(dst.display).
			WithHint("move the files one by one to paths outside the deny list; nothing was moved")
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		inside, err := holdsDirectory(&st, dst.fd())
		if err != nil {
			return backend.FileInfo{}, mapErr(err, dst.display)
		}
		if inside {
			// Below itself by another name (a bind mount): copied across
			// "file systems", it copied its own copy without end.
			return backend.FileInfo{}, fault.InvalidArgument("the destination is the source or inside it.").WithPath(dst.display).
				WithHint("move the directory somewhere outside itself")
		}
	}
	// The sticky bit (mode +t, as /tmp) of either directory refuses the
	// rename of another user's entry, or the replace of one, which
	// rename(2) does not tell from a directory not writable: checked
	// first, as rm checks it, and named; the source's before the
	// shortcuts below, whose unlink of it the bit refuses the same way (a
	// move onto another name of the file said a bare "permission denied.").
	if err := stickyRefused(src.fd(), &st, src.display, "move"); err != nil {
		return backend.FileInfo{}, err
	}
	if same {
		// README for readme where case is ignored: one entry, whose
		// spelling the move changes. The shortcut below took it for the
		// source onto itself.
		return respell(src, dst)
	}
	if !opts.IfAbsent && isMountPoint(dst.fd(), dst.name) {
		// Before the shortcut below: a file bind-mounted over the name is
		// the source's file by identity, and its one name was unlinked.
		return backend.FileInfo{}, mapErr(unix.EBUSY, dst.display)
	}
	var dstSt unix.Stat_t
	if !opts.IfAbsent && unix.Fstatat(dst.fd(), dst.name, &dstSt, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		sameFile(&dstSt, &st) && st.Mode&unix.S_IFMT == unix.S_IFREG {
		if st.Nlink < 2 {
			// One name seen twice (a mount not told by its mount id).
			return backend.FileInfo{}, fault.OntoItself(dst.display)
		}
		// Two names of one file: rename(2) does nothing and succeeds. The
		// move's outcome is the source's name gone.
		if err := unix.Unlinkat(src.fd(), src.name, 0); err != nil {
			return backend.FileInfo{}, mapErr(pinnedErr(err, src.fd(), src.name, "."), src.display)
		}
		if err := syscalls.fsync(src.fd()); err != nil {
			return backend.FileInfo{}, mapErr(err, src.display)
		}
		return infoAt(dst.fd(), dst.name, dst.display)
	}
	if err := linkOntoItsFile(src, dst, &st); err != nil {
		return backend.FileInfo{}, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 && sameOverlay(src, dst) {
		if err := splitByMove(src, &st); err != nil {
			return backend.FileInfo{}, err
		}
	}
	// The sticky bit of the destination's directory refuses the replace
	// of another user's entry, as the source's refused its move (above).
	if !opts.IfAbsent {
		var dstSt unix.Stat_t
		if unix.Fstatat(dst.fd(), dst.name, &dstSt, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if err := stickyRefused(dst.fd(), &dstSt, dst.display, "replace"); err != nil {
				return backend.FileInfo{}, err
			}
		}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		sweepBelow(ctx, src.real, time.Now().Add(f.lockTimeout))
	}
	if opts.IfAbsent {
		err = renameNoReplace(src.fd(), src.name, dst.fd(), dst.name)
	} else {
		err = syscalls.renameat(src.fd(), src.name, dst.fd(), dst.name)
	}
	if errors.Is(err, unix.EXDEV) && (st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFDIR) {
		if err := acrossOwnerRefused(dst, &st, src.display); err != nil {
			return backend.FileInfo{}, err
		}
	}
	switch {
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFREG:
		return f.moveAcross(ctx, src, dst, &st, opts)
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFDIR && onOverlay(src.fd()):
		return f.moveOverlayDir(ctx, src, dst, &st, opts)
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return f.moveTreeAcross(ctx, src, dst, &st, opts)
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return backend.FileInfo{}, fault.Errorf(fault.CodeInvalidArgument, "the path is a symbolic link, and a link is moved across file systems by rename only.").
			WithPath(src.display).WithHint("make the link at the destination (ls shows its target), then rm this one; nothing was moved")
	case errors.Is(err, unix.EXDEV):
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotAFile, "the path is a special file (a FIFO, socket or device), which a move across file systems does not copy.").
			WithPath(src.display).WithHint("choose a destination on the same file system; nothing was moved")
	case errors.Is(err, unix.EISDIR):
		return backend.FileInfo{}, fault.DirectoryDestination(dst.display, "NAME")
	case !opts.IfAbsent && (errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY)):
		// rename(2) over a directory that holds something (either errno).
		return backend.FileInfo{}, fault.FullDestination(dst.display)
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return backend.FileInfo{}, fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
			WithHint("pass --overwrite to replace a file, or choose another destination")
	case errors.Is(pinnedErr(err, src.fd(), src.name, "."), errPinned):
		return backend.FileInfo{}, mapErr(errPinned, src.display).WithDetail("destination", dst.display)
	case errors.Is(pinnedErr(err, dst.fd(), dst.name, "."), errPinned):
		return backend.FileInfo{}, mapErr(errPinned, dst.display)
	case (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) && movedDirNotWritable(src, dst, &st):
		return backend.FileInfo{}, fault.Errorf(fault.CodePermissionDenied, "permission denied: a directory moved into another directory needs write permission on itself too, as its .. entry changes, and this one has none.").
			WithPath(src.display).WithDetail("destination", dst.display).
			WithHint("give it write permission (chmod u+w) first, or move it within its own directory; nothing was moved").WithCause(err)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		// Either directory may be the one: rename(2) does not say.
		return backend.FileInfo{}, fault.Errorf(fault.CodePermissionDenied, "permission denied: a move needs write permission on the directory it leaves and on the one it enters.").
			WithPath(src.display).WithDetail("destination", dst.display).
			WithHint("check both directories with ls -ld (a sticky directory also asks to own the file); nothing was moved").WithCause(err)
	case errors.Is(err, unix.EBUSY) && isMountPoint(src.fd(), src.name):
		return backend.FileInfo{}, mapErr(err, src.display)
	case err != nil:
		return backend.FileInfo{}, mapErr(err, dst.display)
	}
	return moved(dst, dst.fd(), src.fd())
}

// acrossOwnerRefused refuses, as ownerRefused refuses a replace, the
// move to another file system of a file or directory st (at, in the tree
// moved) whose copy at dst this user may not give st's owner and group:
// the copy would be this user's, the original removed, as GNU mv
// silently makes it. On one file system the move is a rename, which
// keeps the owner. The ids alone decide (idsGiveOwner), not what the file
// system gives (ownerKept) as for a replace: the copy is given a private
// mode and then the original's times, which a file system showing every
// file as one user's (bindfs --force-user) refuses to any other user.
func acrossOwnerRefused(dst renameEndpoint, st *unix.Stat_t, at string) error {
	if idsGiveOwner(dst.fd(), st) {
		return nil
	}
	what := "file"
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		what = "directory"
	}
	whose, lost := ownedAs(what, st)
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: %s; moved to another file system it is copied and then removed, and this user (%d) may not give the copy %s.", whose, os.Geteuid(), lost).
		WithPath(at).WithDetail("owner", st.Uid).WithDetail("group", st.Gid).WithDetail("destination", dst.display).
		WithHint("move it within its own file system, where a rename keeps its owner, or ask its owner to move it; nothing was moved")
}

// moved syncs dirs, the directories a move changed, and answers the entry
// at dst; a failed sync says the move is done.
func moved(dst renameEndpoint, dirs ...int) (backend.FileInfo, error) {
	for _, d := range dirs {
		if err := syscalls.fsync(d); err != nil {
			return backend.FileInfo{}, fault.Errorf(fault.CodeIOError, "the path was moved, but a directory could not be synced: %s.", ErrText(err)).
				WithPath(dst.display).WithHint("the move is done; check the file system before relying on it after a crash").WithCause(err)
		}
	}
	return infoAt(dst.fd(), dst.name, dst.display)
}

// sameOverlay reports whether src and dst lie in one mount of an overlay:
// the EXDEV of a directory's rename between them is then the overlay's
// refusal to rename a directory of its lower layer (see onOverlay), not a
// move to another file system (copied across as if it were, the tree was
// copied whole, then its renaming aside was EXDEV too), and a file's
// rename between them copies up a file of its lower layer (splitByMove).
func sameOverlay(src, dst renameEndpoint) bool {
	a, aok := mountID(src.fd())
	b, bok := mountID(dst.fd())
	return aok && bok && a == b && onOverlay(src.fd())
}

// splitByMove copies up the file src (whose stat is st, with more than one
// link) of an overlay before it is moved within it: a file of the lower
// layer (a container image's) is copied up by its rename, and without
// index=on its hard links are not copied with it, the other names keeping
// the image's file. The rename said nothing, and the advice of HARDLINK
// (move it with mv, which keeps its links, then write --in-place) changed
// one name. A link made beside it and removed copies it up without moving
// it; a split (copiedUp) is HARDLINK, nothing moved. Where the link is
// refused (a file of another owner, protected_hardlinks), the move goes
// on, as GNU mv's does.
func splitByMove(src renameEndpoint, st *unix.Stat_t) error {
	probe := tempName()
	if syscalls.linkat(src.fd(), src.name, src.fd(), probe, 0) != nil {
		return nil
	}
	if err := syscalls.unlinkat(src.fd(), probe, 0); err != nil {
		return mapErr(err, src.display).WithDetail("leftover", probe).
			WithHint("a second name of the file, %s, made to copy it up, could not be removed: rm it; nothing was moved", probe)
	}
	var now unix.Stat_t
	if err := unix.Fstatat(src.fd(), src.name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return mapErr(err, src.display)
	}
	if !copiedUp(src.fd(), &now, st) {
		return nil
	}
	return fault.Errorf(fault.CodeHardlink, "the file comes from a lower layer of an overlay file system (a container image's), which copies it up to move it and split its %d hard links: this name is now a file of its own, its other names keep the image's (the content is still the same); nothing was moved.", st.Nlink).
		WithPath(src.display).WithDetail("links", st.Nlink).
		WithHint("run mv again to move this name alone, or mount the overlay with index=on, which keeps hard links on copy-up; to change the content of every name, write each of them")
}

// overlayDirErr is the refusal of a move of the directory display that an
// overlay will not rename (see onOverlay): it was DENIED as a mount
// point, with the hint to unmount it.
func overlayDirErr(display string) *fault.Error {
	return fault.Errorf(fault.CodeNotSupported, "the directory comes from a lower layer of an overlay file system (a container image's), which renames such a directory only when mounted with redirect_dir=on.").
		WithPath(display).WithHint("move the files in it one by one (a file of the lower layer moves), or mount the overlay with redirect_dir=on; nothing was moved").WithCause(unix.EXDEV)
}

// moveOverlayDir moves the directory src (whose stat is st) of an overlay,
// whose rename(2) was EXDEV: an empty one is made anew (moveEmptyDir),
// one of the lower layer that holds something is refused (see
// sameOverlay), and any other is copied across file systems.
func (f *FS) moveOverlayDir(ctx context.Context, src, dst renameEndpoint, st *unix.Stat_t, opts backend.WriteOptions) (backend.FileInfo, error) {
	sfd, sst, err := openDir(src.fd(), src.name)
	if err != nil {
		return backend.FileInfo{}, mapErr(err, src.display)
	}
	defer unix.Close(sfd)
	if identity(&sst) != identity(st) {
		return backend.FileInfo{}, stale(src.display)
	}
	names, err := dirNames(sfd)
	switch {
	case err != nil:
		return backend.FileInfo{}, mapErr(err, src.display)
	case len(names) == 0:
		return moveEmptyDir(sfd, src, dst, st, opts)
	case sameOverlay(src, dst):
		return backend.FileInfo{}, overlayDirErr(src.display)
	}
	return f.moveTreeAcross(ctx, src, dst, st, opts)
}

// moveEmptyDir moves the empty directory src, open as sfd (whose stat is
// st), that the overlay it lies on will not rename, as GNU mv does: dst is
// made with its mode, owner, extended attributes and times, then src is
// removed. An src no longer empty, or one that cannot be removed, removes
// dst again: nothing moved. A destination that exists is not replaced.
func moveEmptyDir(sfd int, src, dst renameEndpoint, st *unix.Stat_t, opts backend.WriteOptions) (backend.FileInfo, error) {
	switch backup, err := overwritable(dst, opts); {
	case err != nil:
		return backend.FileInfo{}, err
	case backup != "":
		return backend.FileInfo{}, emptyDirOntoDir(src.display, dst.display)
	}
	if err := syscalls.mkdirat(dst.fd(), dst.name, 0o700); err != nil {
		if errors.Is(err, unix.EEXIST) {
			err = fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
				WithHint("another program created it during the move; nothing was moved")
		}
		return backend.FileInfo{}, mapErr(err, dst.display)
	}
	undo := func(err error) (backend.FileInfo, error) {
		syscalls.rmdirat(dst.fd(), dst.name)
		return backend.FileInfo{}, err
	}
	dfd, err := unix.Openat(dst.fd(), dst.name, dirFlags, 0)
	if err != nil {
		return undo(mapErr(err, dst.display))
	}
	err = keepAttrs(sfd, dfd, dst.fd(), dst.name, st, src.display)
	unix.Close(dfd)
	if err != nil {
		return undo(mapped(err, dst.display))
	}
	if err := syscalls.rmdirat(src.fd(), src.name); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			// Something was put in it meanwhile.
			return undo(overlayDirErr(src.display))
		}
		return undo(mapErr(pinnedErr(err, src.fd(), src.name, "."), src.display))
	}
	return moved(dst, dst.fd(), src.fd())
}

// emptyDirOntoDir is the refusal to move the empty directory display,
// which is made anew rather than renamed (see moveEmptyDir), onto the
// empty directory dst, which rename(2) would have replaced.
func emptyDirOntoDir(display, dst string) *fault.Error {
	return fault.Errorf(fault.CodeNotSupported, "the directory comes from a lower layer of an overlay file system (a container image's), which renames such a directory only when mounted with redirect_dir=on; being empty, it is made anew at the destination, which replaces no directory.").
		WithPath(display).WithDetail("destination", dst).
		WithHint("rm the destination (an empty directory) first, then run mv again; nothing was moved").WithCause(unix.EXDEV)
}

// movedDirNotWritable reports whether the refusal of a move of st, a
// directory, into another directory is its own mode's: rename(2) then
// needs write permission on the directory moved, to change its "..",
// which the message naming the two parents left out.
func movedDirNotWritable(src, dst renameEndpoint, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || os.Geteuid() == 0 {
		return false
	}
	var a, b unix.Stat_t
	if unix.Fstat(src.fd(), &a) != nil || unix.Fstat(dst.fd(), &b) != nil || sameFile(&a, &b) {
		return false
	}
	// The kernel checks both parents first: the refusal is the
	// directory's own only when they may be written.
	if accessAt(src.fd(), ".", unix.W_OK) != nil || accessAt(dst.fd(), ".", unix.W_OK) != nil {
		return false
	}
	return errors.Is(unix.Faccessat(src.fd(), src.name, unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW), unix.EACCES)
}

// sameFile reports whether a and b describe one file.
func sameFile(a, b *unix.Stat_t) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// holdsDirectory reports whether the directory dir is the directory open
// as fd or one of its ancestors, by identity: ".." by "..", up to the
// process's root (whose ".." is itself), or to a directory the caller may
// not search for its ".." (EACCES, EPERM), past which the paths compared
// before are all there is. Any other failure (EMFILE, EIO) is an error: the
// answer is not known.
func holdsDirectory(dir *unix.Stat_t, fd int) (bool, error) {
	cur, err := unix.Dup(fd)
	if err != nil {
		return false, err
	}
	defer func() { unix.Close(cur) }()
	for {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return false, err
		}
		if sameFile(&st, dir) {
			return true, nil
		}
		// O_PATH (Linux): a parent the caller may not list is still gone through.
		up, err := unix.Openat(cur, "..", pathFlags|unix.O_DIRECTORY, 0)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var upSt unix.Stat_t
		if err := unix.Fstat(up, &upSt); err != nil {
			unix.Close(up)
			return false, err
		}
		unix.Close(cur)
		cur = up
		if sameFile(&upSt, &st) {
			return false, nil // the root
		}
	}
}

// refuseRoots refuses to move or remove real (display to the caller) when
// it is a root or holds one, by their paths.
func (f *FS) refuseRoots(real, display string) error {
	for _, r := range f.roots {
		if _, ok := within(real, r.path); ok {
			return f.rootRefused(display, r, real == r.path)
		}
	}
	return nil
}

// refuseHeldRoot refuses to move or remove the directory st describes
// when it is a root or one of its ancestors by identity: a root given by
// another name (a bind mount of it) was removed or moved by this one.
func (f *FS) refuseHeldRoot(st *unix.Stat_t, display string) error {
	for _, r := range f.roots {
		held, err := holdsDirectory(st, int(r.dir.Fd()))
		if err != nil {
			return mapErr(err, display)
		}
		if held {
			return f.rootRefused(display, r, r.is(st))
		}
	}
	return nil
}

// rootRefused is the error for display, the root r itself or a directory
// holding it.
func (f *FS) rootRefused(display string, r *root, itself bool) error {
	if itself {
		return fault.RootRefused(display)
	}
	return fault.RootHeld(display, f.display(r.given))
}

// renameEndpoint is one end of a rename: its directory, opened and checked,
// and its name in it.
type renameEndpoint struct {
	dir           *os.File
	name          string
	real, display string
}

func (e renameEndpoint) fd() int { return int(e.dir.Fd()) }

// sameEntry reports whether e and o are one entry: one real path, one
// name in one directory reached by two (a bind mount of it), or two
// spellings of one name where the file system ignores case (aliases).
func (e renameEndpoint) sameEntry(o renameEndpoint) (bool, error) {
	if e.real == o.real {
		return true, nil
	}
	var a, b unix.Stat_t
	if err := unix.Fstat(e.fd(), &a); err != nil {
		return false, mapErr(err, e.display)
	}
	if err := unix.Fstat(o.fd(), &b); err != nil {
		return false, mapErr(err, o.display)
	}
	if !sameFile(&a, &b) {
		return false, nil
	}
	if e.name == o.name {
		return true, nil
	}
	same, err := aliases(e.fd(), e.name, o.name)
	if err != nil {
		return false, mapErr(err, e.display)
	}
	return same, nil
}

// linkOntoItsFile refuses to move the link src (lstat'ed as st) onto the
// file it leads to where that loses something: the file's only name, whose
// content would be gone, or the very entry the link leads to, which it
// would then lead to itself (GNU mv refuses both: "are the same file").
// Onto another hard link of the file it moves, as GNU's does: the link
// still leads to the content. Only identities are compared; nothing is
// read through the link.
func linkOntoItsFile(src, dst renameEndpoint, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nil
	}
	var to, target unix.Stat_t
	if unix.Fstatat(dst.fd(), dst.name, &to, unix.AT_SYMLINK_NOFOLLOW) != nil || to.Mode&unix.S_IFMT == unix.S_IFLNK ||
		unix.Fstatat(src.fd(), src.name, &target, 0) != nil || !sameFile(&target, &to) {
		return nil
	}
	var e *fault.Error
	switch {
	case to.Nlink < 2:
		e = fault.InvalidArgument("the link leads to the destination: moved there, it would replace the file it names, whose content would be lost.")
	case leadsToEntry(src, dst):
		e = fault.InvalidArgument("the link leads to the destination itself: moved there, it would lead to its own name.")
	default:
		return nil
	}
	return e.WithPath(src.display).WithDetail("destination", dst.display).
		WithHint("rm the link if it is no longer wanted, or move it to another name; nothing was moved")
}

// leadsToEntry reports whether the link src ends at the entry dst: its
// last directory dst's by identity, and its last name dst's; true when
// that cannot be told, which keeps the move refused.
func leadsToEntry(src, dst renameEndpoint) bool {
	end, err := filepath.EvalSymlinks(src.real)
	if err != nil {
		return true
	}
	if filepath.Base(end) != dst.name {
		return false
	}
	var dir, dstDir unix.Stat_t
	if unix.Stat(filepath.Dir(end), &dir) != nil || unix.Fstat(dst.fd(), &dstDir) != nil {
		return true
	}
	return sameFile(&dir, &dstDir)
}

// renameEnd opens the directory of one end of a rename; made, when set,
// makes its missing directories and records them.
func (f *FS) renameEnd(ctx context.Context, path string, made *madeDirs) (renameEndpoint, error) {
	t, err := f.resolve(path)
	if err != nil {
		return renameEndpoint{}, err
	}
	ct, err := f.canonical(t, false)
	if err != nil {
		return renameEndpoint{}, err
	}
	display := t.display(f)
	if ct.rel == "." {
		return renameEndpoint{}, fault.RootRefused(display)
	}
	dir, err := f.makeParentDir(ctx, ct, display, made != nil, made)
	if err != nil {
		return renameEndpoint{}, err
	}
	return renameEndpoint{dir: dir, name: filepath.Base(ct.rel), real: filepath.Join(ct.root.path, ct.rel), display: display}, nil
}

// renameNoReplace renames only when to does not exist. Where no rename
// refuses to replace (FreeBSD; a file system without RENAME_NOREPLACE),
// a file gets a hard link (which also fails when to exists) and an
// unlink; a directory, which has no hard links, and a file where the file
// system has none (noHardLinks), is renamed once to is seen free: an empty
// directory or a file another program made there in between
// (microseconds) would be replaced.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	err := syscalls.renameExclusive(fromDir, from, toDir, to)
	if !noExclusiveRename(err) {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fromDir, from, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		switch err := syscalls.linkat(fromDir, from, toDir, to, 0); {
		case err == nil:
			return unix.Unlinkat(fromDir, from, 0)
		case !noHardLinks(err):
			return err
		}
	}
	switch err := unix.Fstatat(toDir, to, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		return unix.EEXIST
	case !errors.Is(err, unix.ENOENT):
		return err
	}
	return syscalls.renameat(fromDir, from, toDir, to)
}

// noHardLinks reports link(2)'s refusal where the file system has no hard
// links: EOPNOTSUPP (FreeBSD's msdosfs and smbfs), ENOTSUP (macOS's, 45,
// apart from its EOPNOTSUPP), EPERM (Linux's vfat and exfat, or
// protected_hardlinks, where a rename is allowed all the same), ENOSYS (a
// FUSE file system without link).
func noHardLinks(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)
}

// moveAcross moves the regular file at src (whose stat is st) to dst, on
// another file system, in one transaction (txn.go): its content streamed
// into a file staged beside dst, then dst replaced by it and src removed.
// dst is not followed: a link there is replaced itself, as rename(2)
// replaces it, and its target is left alone.
func (f *FS) moveAcross(ctx context.Context, src, dst renameEndpoint, st *unix.Stat_t, opts backend.WriteOptions) (backend.FileInfo, error) {
	to := &prepared{op: backend.Op{Write: backend.WriteOptions{IfAbsent: opts.IfAbsent}}, display: dst.display, dir: dst.dir,
		entry: journalEntry{Dir: filepath.Dir(dst.real), Name: dst.name}}
	// The source is removed only as the copy found it: a program that
	// takes no agentfs lock (an editor saving, echo >>) may change it
	// after stageCopy's last look, while the journal is written, and the
	// commit then removed its change, the old content moved, exit 0.
	from := &prepared{op: backend.Op{Remove: true, Write: backend.WriteOptions{IfVersion: version(st)}}, display: src.display, dir: src.dir,
		entry: journalEntry{Dir: filepath.Dir(src.real), Name: src.name, Backup: tempName()}}
	var dstSt unix.Stat_t
	err := unix.Fstatat(dst.fd(), dst.name, &dstSt, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return backend.FileInfo{}, mapErr(err, dst.display)
	case opts.IfAbsent:
		return backend.FileInfo{}, fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
			WithHint("pass --overwrite to replace a file, or choose another destination")
	case dstSt.Mode&unix.S_IFMT == unix.S_IFDIR:
		return backend.FileInfo{}, fault.DirectoryDestination(dst.display, "NAME") // as rename(2) answers
	default:
		to.entry.Backup = tempName()
	}
	// The copy, which nothing needs undone, stops when the caller gives
	// up; the commit goes on whatever happens.
	staged, err := stageCopy(backend.Preparation(ctx), src, dst, st)
	if err != nil {
		return backend.FileInfo{}, err
	}
	to.staged = staged
	defer func() {
		if to.staged != nil {
			to.staged.discard() // not renamed: the commit failed before its point
		}
	}()
	var sst unix.Stat_t
	if err := unix.Fstat(int(staged.file.Fd()), &sst); err != nil {
		return backend.FileInfo{}, mapErr(err, dst.display)
	}
	to.entry.Staged, to.entry.StagedID, to.entry.StagedStamp = staged.name, identity(&sst), stamp(&sst)
	infos, err := f.commit(ctx, []*prepared{to, from}, &madeDirs{}) // the destination's directory is there
	if err != nil {
		return backend.FileInfo{}, err
	}
	return infos[0], nil
}

// stageCopy streams the regular file src, as st found it, into a file
// staged beside dst, which gets its owner, mode, extended attributes and
// times, synced. A file
// replaced or changed meanwhile is STALE.
func stageCopy(ctx context.Context, src, dst renameEndpoint, st *unix.Stat_t) (*stagedFile, error) {
	// O_NONBLOCK: a FIFO put in the file's place since the stat must not
	// block the open; the identity check refuses it.
	fd, err := unix.Openat(src.fd(), src.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, mapErr(err, src.display)
	}
	in := os.NewFile(uintptr(fd), src.display)
	defer in.Close()
	var ist unix.Stat_t
	if err := unix.Fstat(fd, &ist); err != nil {
		return nil, mapErr(err, src.display)
	}
	if identity(&ist) != identity(st) || ist.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fileStale(src.display)
	}
	// Private (0600) until the copy is whole and gets the source's mode.
	s, err := stage(dst.dir, filepath.Dir(dst.real), nil, backend.WriteOptions{Mode: 0o600}, nil, nil, nil, dst.display)
	if err != nil {
		return nil, err
	}
	err = copyStopping(ctx, s.file, in)
	if err == nil {
		err = keepAttrs(fd, int(s.file.Fd()), dst.fd(), s.name, st, src.display)
	}
	if err == nil {
		err = unix.Fstat(fd, &ist)
		if err == nil && version(&ist) != version(st) {
			err = fileStale(src.display)
		}
	}
	if err != nil {
		s.discard()
		return nil, mapErr(err, dst.display)
	}
	return s, nil
}

// copyPiece is how much of a file a copy to another file system moves
// between two looks at its context: a caller giving up waits for one piece
// at most, and the kernel copies each (copy_file_range where it can).
const copyPiece = 4 << 20

// copyStopping copies the regular file src, opened at its start, to the
// new empty file dst, piece by piece, and stops (INTERRUPTED) between two
// once ctx is done. Only the data is copied (SEEK_DATA, SEEK_HOLE): a hole
// stays a hole, as GNU mv and cp keep them, where a sparse file (a disk
// image) was written whole, NO_SPACE on a file system with room for it
// and a large one filling the disk. A file system that tells no holes
// answers its whole file as data.
func copyStopping(ctx context.Context, dst, src *os.File) error {
	fd := int(src.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	var off int64
	copied := false
	for {
		data, hole, ok, err := nextData(func(off int64, whence int) (int64, error) { return unix.Seek(fd, off, whence) }, off, st.Size)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if _, err := src.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := dst.Seek(data, io.SeekStart); err != nil {
			return err
		}
		for off = data; off < hole; {
			if err := fault.Interrupted(ctx); err != nil {
				return err
			}
			copied = true
			n, err := io.CopyN(dst, src, min(copyPiece, hole-off))
			off += n
			if errors.Is(err, io.EOF) {
				return nil // shorter than it was: the caller's version check tells
			}
			if err != nil {
				return err
			}
		}
	}
	if !copied {
		if err := fault.Interrupted(ctx); err != nil {
			return err
		}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Size > off {
		return dst.Truncate(st.Size) // the hole at its end
	}
	return nil
}

// nextData is the next run of data of a file (seek is its lseek) at or past off, from
// data to hole; ok is false past the last. A file system that cannot
// tell its holes (EINVAL, ENOTSUP, ENOTTY: some network and FUSE ones
// on the BSDs) is taken as data from off to its size, stat'ed before the
// copy: the move goes on, copying the whole file, as before holes were
// kept.
func nextData(seek func(off int64, whence int) (int64, error), off, size int64) (data, hole int64, ok bool, err error) {
	data, err = seek(off, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO):
		return 0, 0, false, nil // no data past off: a hole to the end, or the end
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOTTY):
		return off, size, off < size, nil
	case err != nil:
		return 0, 0, false, err
	}
	hole, err = seek(data, unix.SEEK_HOLE)
	if errors.Is(err, unix.ENXIO) {
		// Truncated between the two seeks: no data is left, and the
		// caller's version check answers STALE. Returned, the ENXIO
		// failed the move NOT_REGULAR, naming its destination.
		return 0, 0, false, nil
	}
	return data, hole, err == nil, err
}

func fileStale(at string) error {
	return fault.Errorf(fault.CodeStale, "the file changed while it was being copied to the other file system.").
		WithPath(at).WithHint("nothing was moved; run mv again")
}

// noExclusiveRename reports the error of a rename that refuses to replace
// where the system (ENOSYS) or the file system (EINVAL on Linux, ENOTSUP
// on darwin) has none.
func noExclusiveRename(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP)
}

// respell renames src to dst, one entry by two spellings (see aliases),
// so that the directory lists it as dst spells it, as APFS's rename(2)
// does. Where the file system keeps the stored spelling and answers
// success (Linux, a casefold directory or a FUSE one: the kernel sees one
// file and does nothing), the move is refused: it was reported done.
func respell(src, dst renameEndpoint) (backend.FileInfo, error) {
	if err := syscalls.renameat(src.fd(), src.name, dst.fd(), dst.name); err != nil {
		return backend.FileInfo{}, mapErr(err, dst.display)
	}
	switch ok, err := stored(dst.fd(), dst.name); {
	case err != nil:
		return backend.FileInfo{}, mapErr(err, dst.display)
	case !ok:
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotSupported, "the file system takes %s and %s for one name (it ignores case), and its rename kept the name as it was.", src.display, dst.display).
			WithPath(src.display).WithDetail("destination", dst.display).
			WithHint("move it to another name first, then to %s; nothing was moved", dst.display)
	}
	return moved(dst, dst.fd())
}
