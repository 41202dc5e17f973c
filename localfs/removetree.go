package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// treeRemover removes a directory tree as rm -r --one-file-system would,
// and more carefully: the whole tree is checked before the first unlink
// (no directory on another file system or another mount, none that is a
// deny root by identity, none on a kernel file system, no denied file
// under another name, nothing this process may not unlink), then removed
// bottom-up through descriptors opened with O_NOFOLLOW, checking each
// directory again, so a tree changed between the passes stops the removal
// instead of leading it somewhere else. Both passes hold a bounded number
// of descriptors (dirStack), so a tree of any depth is removed within the
// open-file limit.
// emptiedHook, when set (by tests), runs as the removal's second pass
// has emptied a directory, before it removes it: another writer's moment.
var emptiedHook func(display string)

// enteringHook, when set (by tests), runs as either pass is about to open
// a directory of the tree it found by its lstat, and once it has opened
// it, before listing it: another remover's moments.
var enteringHook func(display string, opened bool)

type treeRemover struct {
	f       *FS
	dev     uint64
	mnt     uint64
	hasMnt  bool
	display string
	// copying: the tree is to be copied (a move across file systems), not
	// removed where it is: its check is worded for a move.
	copying bool
	// copyTo is where a tree copying goes, whose copies of the tree's
	// files and directories must keep their owners (acrossOwnerRefused).
	copyTo renameEndpoint
	euid   uint32
	// removed counts the entries the removal pass has unlinked, which an
	// error after the first must own up to.
	removed int
	// stop ends the check, which removes nothing: a caller giving up
	// while a large tree is checked is answered INTERRUPTED with the tree
	// whole, where the removal went on to its end.
	stop context.Context
}

// treeEntry is what a tree's removal reads of one entry (lstatEntry).
type treeEntry struct {
	st     unix.Stat_t
	mnt    uint64
	hasMnt bool
	// pinned: immutable or append-only (chattr +i, +a), which unlink(2)
	// refuses whoever asks.
	pinned bool
}

// treeLevel is a directory of the tree being walked: the names left to
// visit, and what decides who may unlink them (a sticky directory's owner).
type treeLevel struct {
	names  []string
	sticky bool
	uid    uint32
}

// removeTree checks, then removes, the directory name of the directory
// dfd; the check stops when stop is done.
func (f *FS) removeTree(stop context.Context, dfd int, name, display string) error {
	r, err := f.newTreeRemover(dfd, name, display)
	if err != nil {
		return err
	}
	r.stop = stop
	if err := r.pass(dfd, name, false); err != nil {
		return err
	}
	if err := r.pass(dfd, name, true); err != nil {
		return r.partial(err)
	}
	return nil
}

// partial owns up to an error of the removal pass after its first unlink:
// what was removed stays removed, and a caller told only "permission
// denied" would take the tree for whole.
func (r *treeRemover) partial(err error) error {
	if r.removed == 0 {
		return err
	}
	e := mapErr(err, r.display)
	e.Message = fmt.Sprintf("%s The removal stopped there, after removing %d entries of the tree.", e.Message, r.removed)
	return e.WithDetail("removed", r.removed).
		WithHint("what was removed stays removed: check what is left with ls, deal with the cause, then run rm -r again")
}

// checkTree is removeTree's check alone, for a tree to be copied then
// removed: nothing is removed.
func (f *FS) checkTree(dfd int, name, display string, dst renameEndpoint) error {
	r, err := f.newTreeRemover(dfd, name, display)
	if err != nil {
		return err
	}
	r.copying, r.copyTo = true, dst
	return r.pass(dfd, name, false)
}

func (f *FS) newTreeRemover(dfd int, name, display string) (*treeRemover, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, mapErr(err, display)
	}
	r := &treeRemover{f: f, dev: uint64(st.Dev), display: display, euid: uint32(unix.Geteuid()), stop: context.Background()}
	fd, err := unix.Openat(dfd, name, dirFlags, 0)
	if err != nil {
		return nil, mapErr(err, display)
	}
	r.mnt, r.hasMnt = mountID(fd)
	unix.Close(fd)
	return r, nil
}

// pass checks (remove false) or removes (remove true) the tree name of the
// directory dfd, depth first.
func (r *treeRemover) pass(dfd int, name string, remove bool) error {
	fd, st, err := openDir(dfd, name)
	if err != nil {
		return mapErr(err, r.display)
	}
	dirs := newDirStack(fd, &st)
	defer dirs.close()
	// levels holds, per directory of dirs, the names left to visit.
	var levels []treeLevel
	enter := func(fd int, st *unix.Stat_t) error {
		at := func() string { return r.at(dirs.path()) }
		if err := r.check(fd, st, at); err != nil {
			return err
		}
		names, err := dirNames(fd)
		if errors.Is(err, unix.ENOENT) {
			// Removed since it was opened (getdents(2) of a removed
			// directory): nothing left in it to remove, and its own
			// removal finds it gone.
			names, err = nil, nil
		}
		if err != nil {
			return mapErr(err, at())
		}
		if !remove && len(names) > 0 {
			// Its entries go by unlink(2) in it, which needs write and
			// search permission, a writable file system and a directory
			// not immutable: faccessat(2) asks the kernel all of it, for
			// the effective user, as unlink(2) is. (An empty directory
			// needs only its parent's.)
			if err := unix.Faccessat(fd, ".", unix.W_OK|unix.X_OK, unix.AT_EACCESS); err != nil {
				return r.unremovable(err, at(), "a directory whose entries could not be removed")
			}
		}
		levels = append(levels, treeLevel{names: names, sticky: st.Mode&unix.S_ISVTX != 0, uid: st.Uid})
		return nil
	}
	if err := enter(fd, &st); err != nil {
		return err
	}
	for len(levels) > 0 {
		dir, err := dirs.top()
		if err != nil {
			return r.changed(err, dirs.path())
		}
		level := &levels[len(levels)-1]
		if len(level.names) == 0 {
			// The directory is done: leave it, and remove it from its parent.
			levels = levels[:len(levels)-1]
			base := dirs.frames[len(dirs.frames)-1].name
			dirs.pop()
			if !remove {
				continue
			}
			parent, rel := dfd, func() string { return "" }
			if len(levels) > 0 {
				up, err := dirs.top()
				if err != nil {
					return r.changed(err, dirs.path())
				}
				parent, rel = up.fd, func() string { return join(dirs.path(), base) }
			} else {
				base = name
			}
			if emptiedHook != nil {
				emptiedHook(r.at(rel()))
			}
			if err := unix.Unlinkat(parent, base, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
				if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
					// Emptied, then written into by a process that takes
					// no lock of this tree (a bind mount of a directory
					// in it, another program): the hint said to pass
					// --recursive, which was passed.
					return fault.Errorf(fault.CodeNotEmpty, "entries appeared in the directory while it was being removed.").WithPath(r.at(rel())).
						WithHint("another process writes there; what was removed stays removed: stop that writer, then remove the rest again")
				}
				return mapErr(err, r.at(rel()))
			}
			r.removed++
			continue
		}
		if !remove {
			if err := fault.Interrupted(r.stop); err != nil {
				return err
			}
		}
		n := level.names[0]
		level.names = level.names[1:]
		at := func() string { return r.at(join(dirs.path(), n)) }
		entry, err := lstatEntry(dir.fd, n)
		est := &entry.st
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return mapErr(err, at())
		}
		if !remove {
			if err := r.unlinkable(level, &entry, at); err != nil {
				return err
			}
		}
		if est.Mode&unix.S_IFMT == unix.S_IFDIR {
			if enteringHook != nil {
				enteringHook(at(), false)
			}
			sub, sst, err := openDir(dir.fd, n)
			if errors.Is(err, unix.ENOENT) {
				// Removed since its lstat (another rm -r of the tree), as
				// a file gone meanwhile: NOT_FOUND stopped the removal,
				// "run rm -r again", with nothing left of it to remove.
				continue
			}
			if !remove && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
				// A directory this user may not enter (mode 000): its
				// hint said to choose another path, and not that the
				// tree was whole.
				return r.unremovable(err, at(), "a directory this user may not open")
			}
			if err != nil {
				return mapErr(err, at())
			}
			if enteringHook != nil {
				enteringHook(at(), true)
			}
			dirs.push(n, sub, &sst)
			if err := enter(sub, &sst); err != nil {
				return err
			}
			continue
		}
		if err := r.checkEntry(&entry, at); err != nil {
			return err
		}
		if remove {
			if err := unix.Unlinkat(dir.fd, n, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return mapErr(err, at())
			}
			r.removed++
		}
	}
	return nil
}

// changed maps an error of going back up to a directory of the tree.
func (r *treeRemover) changed(err error, rel string) error {
	if errors.Is(err, errMoved) {
		return fault.Errorf(fault.CodeIOError, "a directory of the tree was moved or replaced during the removal, which stopped there.").
			WithPath(r.at(rel)).WithHint("check what is left with ls, then run rm -r again")
	}
	return mapErr(err, r.at(rel))
}

// check refuses a directory of the tree that rm -r must not enter; at
// gives its display path.
func (r *treeRemover) check(fd int, st *unix.Stat_t, at func() string) error {
	if r.copying {
		if err := acrossOwnerRefused(r.copyTo, st, at()); err != nil {
			return err
		}
	}
	mnt, hasMnt := mountID(fd)
	if err := r.sameMount(st, mnt, hasMnt, at); err != nil {
		return err
	}
	if r.f.deniedDirIdentity(st) {
		return fault.Errorf(fault.CodeDenied, "the tree holds a denied directory (another name of a deny root).").
			WithPath(at()).WithHint("remove the files around the denied directory one by one; nothing was removed")
	}
	for _, root := range r.f.roots {
		// Another name of a root (the source of a bind mount that is
		// one), which no walk up from the root's own name meets.
		if root.is(st) {
			return r.f.rootRefused(r.display, root, false)
		}
	}
	if kernelFSOf(fd) != "" {
		return r.f.checkKernelFS(fd, at())
	}
	return nil
}

// checkEntry refuses a file of the tree that is a denied file under
// another name (a hard link), which rm refuses by itself and whose copy
// would be a new file no deny recognises, or a mount point: a file
// bind-mounted there (a container's mounted secret) cannot be unlinked,
// and the files removed before it was met would be gone.
func (r *treeRemover) checkEntry(e *treeEntry, at func() string) error {
	if r.copying && e.st.Mode&unix.S_IFMT == unix.S_IFREG {
		if err := acrossOwnerRefused(r.copyTo, &e.st, at()); err != nil {
			return err
		}
	}
	if r.f.deniedIdentity(&e.st) {
		if r.copying {
			return r.f.deniedFileErr(at())
		}
		return fault.Errorf(fault.CodeDenied, "the tree holds a denied file under another name (a hard link).").WithPath(at()).
			WithHint("remove the files around it one by one; nothing was removed")
	}
	if e.hasMnt && r.hasMnt {
		// By the mount id alone: a file of an overlay's lower layer
		// reports that layer's device, and is no mount point.
		if e.mnt != r.mnt {
			return r.mountPoint(at)
		}
		return nil
	}
	return r.sameMount(&e.st, e.mnt, e.hasMnt, at)
}

// unlinkable refuses an entry of the directory level that unlink(2) would
// refuse: an immutable or append-only one, or one of a sticky directory
// that neither it nor the directory is this user's (root may).
func (r *treeRemover) unlinkable(level *treeLevel, e *treeEntry, at func() string) error {
	switch {
	case e.pinned:
		return r.unremovable(unix.EPERM, at(), "an immutable or append-only entry (chattr), which could not be removed")
	case level.sticky && r.euid != 0 && r.euid != level.uid && r.euid != e.st.Uid:
		return r.unremovable(unix.EPERM, at(), "an entry of a sticky directory, neither of them this user's, which could not be removed")
	}
	return nil
}

// unremovable is the check pass's refusal of an entry the removal (or a
// move's removal of the tree copied) could not remove, found before
// anything was.
func (r *treeRemover) unremovable(err error, at, what string) error {
	e := fault.Errorf(mapErr(err, at).Code, "the tree holds %s (%s).", what, ErrText(err)).WithPath(at).WithCause(err)
	switch {
	case errors.Is(err, unix.EROFS) && r.copying:
		return e.WithHint("nothing was moved; the file system is read-only (a read-only mount), so nothing can leave it: copy the files to the destination instead")
	case errors.Is(err, unix.EROFS):
		return e.WithHint("nothing was removed; the file system is read-only (a read-only mount): remount it read-write, or work on a writable one")
	case r.copying:
		return e.WithHint("nothing was moved; change its permissions, or move the files around it one by one")
	}
	return e.WithHint("nothing was removed; change its permissions, or remove the files around it one by one")
}

// sameMount refuses what lies on another device or mount than the tree.
func (r *treeRemover) sameMount(st *unix.Stat_t, mnt uint64, hasMnt bool, at func() string) error {
	if hasMnt && r.hasMnt && mnt == r.mnt && uint64(st.Dev) != r.dev {
		return r.subvolume(at)
	}
	if uint64(st.Dev) != r.dev || (hasMnt && r.hasMnt && mnt != r.mnt) {
		return r.mountPoint(at)
	}
	return nil
}

// subvolume refuses a directory of another device in the tree's own mount:
// a btrfs subvolume or snapshot, which no umount takes off (the hint to
// unmount it, as of a mount point, named nothing to do).
func (r *treeRemover) subvolume(at func() string) error {
	what, undo := "rm -r does not cross into it", "nothing was removed"
	if r.copying {
		what, undo = "mv does not move it to another file system", "nothing was moved"
	}
	return fault.Errorf(fault.CodeDenied, "the tree holds another file system in the same mount (a btrfs subvolume or snapshot); %s.", what).
		WithPath(at()).WithDetail("mountPoint", at()).
		WithHint("delete or move the subvolume first (btrfs subvolume delete), or handle the files around it one by one; %s", undo)
}

func (r *treeRemover) mountPoint(at func() string) error {
	if r.copying {
		return fault.Errorf(fault.CodeDenied, "the tree holds a mount point; mv does not move a mount point to another file system.").
			WithPath(at()).WithDetail("mountPoint", at()).
			WithHint("unmount it first, or move the files around it one by one; nothing was moved")
	}
	return fault.Errorf(fault.CodeDenied, "the tree holds a mount point; rm -r does not cross into another mount.").
		WithPath(at()).WithDetail("mountPoint", at()).
		WithHint("unmount it first, or remove the files around it one by one; nothing was removed")
}

func (r *treeRemover) at(rel string) string {
	return join(r.display, rel)
}

// join joins two slash paths, either of which may be empty.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "/" + b
}

// dirNames lists the names of the directory fd, which it leaves open.
func dirNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(dup), "")
	defer d.Close()
	return d.Readdirnames(-1)
}
