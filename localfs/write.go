package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// tempPrefix starts the name of every temporary file of a replace, so that
// one left by a killed writer is recognised and swept.
const tempPrefix = ".agentfs-tmp-"

// WriteFile replaces path's content atomically: a temporary file in the same
// directory is written, synced, given the old file's mode, owner and
// extended attributes, renamed
// over the path, and the directory is synced. Every step goes through a
// descriptor of the directory, opened through the root. On any failure
// before the rename the temporary file is removed and the path is unchanged.
// With opts.InPlace an existing file is rewritten through its own inode
// instead (not atomic: that is what keeps its hard links one file).
func (f *FS) WriteFile(ctx context.Context, path string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	t, err := f.resolve(path)
	if err != nil {
		return backend.FileInfo{}, err
	}
	ct, err := f.canonical(t, true)
	if err != nil {
		return backend.FileInfo{}, err
	}
	display := t.display(f)
	if ct.rel == "." {
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").
			WithPath(display).WithHint("write to a file path inside the directory")
	}
	if err := f.refuseUncommitted(filepath.Join(ct.root.path, ct.rel), display); err != nil {
		return backend.FileInfo{}, err
	}
	dir, err := f.parentDir(ctx, ct, display, true)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer dir.Close()
	dfd, base := int(dir.Fd()), filepath.Base(ct.rel)
	if err := reservedName(base, display); err != nil {
		return backend.FileInfo{}, err
	}
	var st unix.Stat_t
	exists := true
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		exists = false
	} else if err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if err := backend.CheckSwap(display, opts, exists, versionIf(exists, &st)); err != nil {
		return backend.FileInfo{}, err
	}
	if exists {
		if err := replaceable(&st, display, opts); err != nil {
			return backend.FileInfo{}, err
		}
		// A rename would replace a file its mode forbids writing, as sed -i
		// does; refuse it as open(2) and cp do.
		if err := accessAt(dfd, base, unix.W_OK); err != nil {
			e := mapErr(err, display)
			if e.Code == fault.CodePermissionDenied && !errors.Is(err, errPinned) {
				e.WithHint("the file is not writable; change its mode first if it should be")
			}
			return backend.FileInfo{}, e
		}
		// In place only where a replace would split the file or change
		// its owner: an ordinary file keeps the atomic replace even when
		// inPlace is asked.
		if opts.InPlace && (st.Nlink > 1 || !keepsOwner(dir, &st)) {
			return writeInPlace(dfd, base, &st, data, opts.IfVersion, display)
		}
	}
	// The replace makes a file in the directory: one it may not write
	// (its mode, or chattr +i or +a) is refused first, saying which.
	if err := accessAt(dfd, ".", unix.W_OK); err != nil {
		return backend.FileInfo{}, dirNotWritable(err, display)
	}
	if exists {
		if err := stickyRefused(dfd, &st, display, "replace"); err != nil {
			return backend.FileInfo{}, err
		}
		// Asked above for a write in place, which is here where it was
		// not refused.
		if !opts.InPlace {
			if err := ownerRefused(dir, &st, display); err != nil {
				return backend.FileInfo{}, err
			}
		}
	}
	var old *unix.Stat_t
	if exists {
		old = &st
	}
	owner, attrs, err := f.replaceSources(opts, dir, base, old, display)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if attrs != nil {
		defer attrs.Close()
	}
	return replace(dir, filepath.Join(ct.root.path, filepath.Dir(ct.rel)), base, data, old, owner, attrs, opts, display)
}

// replaceSources are the files a replace of name in dir takes its owner
// and extended attributes from (see stage): opts.OwnerOf's (ownerOf),
// which gives both, or for the attributes the replaced file old's, opened
// where they are kept (keepsXattrs); nils for a new file.
func (f *FS) replaceSources(opts backend.WriteOptions, dir *os.File, name string, old *unix.Stat_t, display string) (owner *unix.Stat_t, attrs *os.File, err error) {
	owner, attrs, err = f.ownerOf(opts, dir, display)
	if err != nil || attrs != nil || old == nil || !keepsXattrs {
		return owner, attrs, err
	}
	dfd := int(dir.Fd())
	// For reading, or, where its mode forbids that, for writing (which
	// the caller checked it may).
	attrs, _, err = openSame(dfd, name, unix.O_RDONLY, old, display)
	if errors.Is(err, unix.EACCES) {
		attrs, _, err = openSame(dfd, name, unix.O_WRONLY, old, display)
	}
	return owner, attrs, err
}

// openSame opens name in dfd with flags (O_NOFOLLOW, O_NONBLOCK and
// O_CLOEXEC added), and only the file old describes: one put in its place
// since is STALE. st is the opened file's.
func openSame(dfd int, name string, flags int, old *unix.Stat_t, display string) (file *os.File, st unix.Stat_t, err error) {
	fd, err := unix.Openat(dfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, st, mapErr(pinnedErr(err, dfd, name), display)
	}
	file = os.NewFile(uintptr(fd), name)
	if err := unix.Fstat(fd, &st); err != nil {
		file.Close()
		return nil, st, mapErr(err, display)
	}
	if !sameFile(&st, old) {
		file.Close()
		return nil, st, fault.Errorf(fault.CodeStale, "the file was replaced by another program during the write.").
			WithPath(display).WithHint("read the file again and retry")
	}
	return file, st, nil
}

// newMode is the mode a write gives the file: opts.Mode exactly (exact)
// when set, else 0666, or 0777 when Executable, for a new file, less the
// umask or as the directory's default ACL narrows it, as a shell's > and
// cp make a file (0644 gave a group's umask 002 and a default ACL letting
// another user write no say); a replaced file keeps its own unless exact.
func newMode(opts backend.WriteOptions) (mode uint32, exact bool) {
	switch {
	case opts.Mode != 0:
		return keptMode(opts.Mode&0o7777, os.Geteuid() == 0), true
	case opts.Executable:
		return 0o777, false
	}
	return 0o666, false
}

// parentDir opens the directory that holds ct, creating it and its missing
// parents when create is set. It goes one directory at a time, each opened
// by the link policy (never following a link under refuse) and checked on
// its descriptor (deny roots by name and identity, kernel file systems)
// before anything is created in it or below it: a directory swapped for a
// link between a check and a use cannot make a write land, or a directory
// be made, where the policy forbids.
func (f *FS) parentDir(ctx context.Context, ct target, display string, create bool) (*os.File, error) {
	return f.makeParentDir(ctx, ct, display, create, nil)
}

// makeParentDir is parentDir, adding each directory it makes to made when
// that is not nil. Its walk, which a deep path makes long, stops
// (INTERRUPTED) at any level once the preparation of ctx is done
// (backend.Preparation), unless it made a directory that nothing undoes
// (made is nil): the change has not reached its commit.
func (f *FS) makeParentDir(ctx context.Context, ct target, display string, create bool, made *madeDirs) (*os.File, error) {
	stop := backend.Preparation(ctx)
	rel := filepath.Dir(ct.rel)
	cur, err := f.checkedDir(target{root: ct.root, rel: ".", abs: ct.root.path}, display, f.open)
	if err != nil {
		return nil, err
	}
	if rel != "." {
		kept := false // a directory made that nothing undoes
		next := target{root: ct.root, rel: "", abs: ct.abs}
		for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
			if !kept {
				if err := fault.Interrupted(stop); err != nil {
					cur.Close()
					return nil, err
				}
			}
			next.rel = filepath.Join(next.rel, c)
			spelled := filepath.Join(ct.root.path, next.rel)
			mkdir := func() error {
				// A directory made under a temporary file's name would
				// hide all it holds from find and grep.
				if err := reservedName(c, display); err != nil {
					return err
				}
				var err error
				if made != nil {
					err = made.mkdir(int(cur.Fd()), c, spelled, display)
				} else {
					err = unix.Mkdirat(int(cur.Fd()), c, 0o777)
					kept = kept || err == nil
				}
				if err != nil && !errors.Is(err, unix.EEXIST) {
					return mapErr(err, display)
				}
				return nil
			}
			dir, missing := f.stepDir(cur, c, spelled)
			switch {
			case dir != nil:
			case missing && create:
				if err = mkdir(); err == nil {
					if dir, _ = f.stepDir(cur, c, spelled); dir == nil {
						dir, err = f.checkedDir(next, display, f.open)
					}
				}
			default:
				dir, err = f.walkedDir(next, display, create, mkdir)
			}
			cur.Close()
			if err != nil {
				return nil, err
			}
			cur = dir
		}
	}
	real := filepath.Join(realPath(cur, filepath.Join(ct.root.path, rel)), filepath.Base(ct.rel))
	if err := f.checkDeny(real, display); err != nil {
		cur.Close()
		return nil, err
	}
	return cur, nil
}

// stepDir opens c in cur, a directory checked on the way down, when it is
// a directory itself (no link followed), and checks it at the cost of one
// level: its identity (fstat of the descriptor opened) against the deny
// roots, its real name against the roots and the deny roots, and its file
// system. cur's ancestors were checked as the walk went through them: the
// check of each level by its full path made a deep write's cost grow with
// the cube of its depth. The real name is what keeps the walk, which goes
// from descriptor to descriptor, inside the roots: an ancestor renamed out
// of them (or into a deny root) since it was checked takes the walk with
// it. It is nil when anything fails, for the full check (walkedDir) to
// tell why, with missing set when c does not exist.
func (f *FS) stepDir(cur *os.File, c, spelled string) (dir *os.File, missing bool) {
	fd, err := unix.Openat(int(cur.Fd()), c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errors.Is(err, unix.ENOENT)
	}
	dir = os.NewFile(uintptr(fd), spelled)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || f.deniedDirIdentity(&st) || !f.insideAllowed(realPath(dir, spelled)) || kernelFSOf(fd) != "" {
		dir.Close()
		return nil, false
	}
	return dir, false
}

// insideAllowed reports whether the real path real lies in a root and
// outside the deny roots, by name.
func (f *FS) insideAllowed(real string) bool {
	_, in := f.rootOf(real)
	return in && !f.deniedName(real)
}

// walkedDir opens the directory next from its root by the link policy and
// checks it in full (checkedDir), making it with mkdir when create is set
// and it is missing: the way a level goes that stepDir did not open (a
// link, a refusal, an error to tell as the policy tells it).
func (f *FS) walkedDir(next target, display string, create bool, mkdir func() error) (*os.File, error) {
	// A directory to make is NOT_FOUND as such: its parent, where it is
	// made, was checked, and the open after the mkdir tells the rest
	// (hiddenErr, for each missing directory, made a deep write's cost
	// grow with the square of its depth).
	open := f.open
	if create {
		open = f.openByPolicy
	}
	dir, err := f.checkedDir(next, display, open)
	var ce *fault.Error
	switch {
	case create && errors.As(err, &ce) && ce.Code == fault.CodeNotFound:
		if err := mkdir(); err != nil {
			return nil, err
		}
		return f.checkedDir(next, display, f.open)
	case err != nil && create:
		return nil, f.hiddenErr(next, display, err)
	}
	return dir, err
}

// checkedDir opens the directory t with open (f.open, or f.openByPolicy
// for an error told as it is) and checks it on its descriptor.
func (f *FS) checkedDir(t target, display string, open func(target, int) (*os.File, error)) (*os.File, error) {
	dir, err := open(t, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		e := fault.AsError(err)
		if which := f.dirAccessErr(t, display, true, err); which != nil {
			return nil, which
		}
		e.WithPath(display)
		return nil, e
	}
	if err := f.checkOpenDir(dir, filepath.Join(t.root.path, t.rel), display); err != nil {
		dir.Close()
		return nil, err
	}
	return dir, nil
}

// dirAccessErr says which permission of which directory this user lacks
// where err, an access to t, was refused (EACCES): the search permission
// (x) of a directory above t, which reaching a name needs, or the read
// permission (r) of t's directory, or with listed (t is a directory
// opened for reading) of t, which agentfs needs, as it opens for reading
// each directory on the path of a file it changes (an ancestor too, not
// only the file's own) and the directory of a file it looks at. It is nil
// for another error, and where every one is there, t's own mode refuses
// reading (which may be the cause), or it cannot be told.
func (f *FS) dirAccessErr(t target, display string, listed bool, err error) *fault.Error {
	var e *fault.Error
	if !errors.Is(err, unix.EACCES) || errors.As(err, &e) && e.Code != fault.CodePermissionDenied {
		return nil
	}
	if t.rel == "." {
		return nil // a root, which resolve checked
	}
	top, oerr := t.root.r.OpenFile(".", pathFlags|unix.O_DIRECTORY, 0)
	if oerr != nil {
		return nil
	}
	defer top.Close()
	names := strings.Split(t.rel, string(filepath.Separator))
	dirAt := func(n int) string { return f.display(filepath.Join(t.root.path, filepath.Join(names[:n]...))) }
	pfd := int(top.Fd())
	for i, name := range names {
		if aerr := unix.Faccessat(pfd, ".", unix.X_OK, unix.AT_EACCESS); aerr != nil {
			if errors.Is(aerr, unix.EACCES) {
				return notSearchable(dirAt(i), display).WithCause(err)
			}
			return nil
		}
		if i == len(names)-1 {
			dir := i + 1 // t, opened for reading
			if !listed {
				// A name agentfs looks up in its directory opened for
				// reading, unless the name's own mode is the refusal.
				if aerr := unix.Faccessat(pfd, name, unix.R_OK, unix.AT_EACCESS); aerr != nil && !errors.Is(aerr, unix.ENOENT) {
					return nil
				}
				dir, name = i, "."
			}
			if errors.Is(unix.Faccessat(pfd, name, unix.R_OK, unix.AT_EACCESS), unix.EACCES) {
				why := ""
				if display != dirAt(dir) {
					// Not the directory asked for: say why it is read.
					why = ", which agentfs needs: it opens each directory on the path of a file it changes for reading, and the directory of a file it looks at (a shell's > needs only search permission on them, and write permission on the file's own)"
				}
				lacks, grant := "read, r, permission", "read permission on the directory (chmod +r"
				if errors.Is(unix.Faccessat(pfd, name, unix.X_OK, unix.AT_EACCESS), unix.EACCES) {
					// Listed, its entries are stat'ed too: r alone would
					// not do.
					lacks, grant = "read, r, and execute, x, permissions", "read and search permission on the directory (chmod +rx"
				}
				return fault.Errorf(fault.CodePermissionDenied, "permission denied: the directory %s may not be listed by this user (%s)%s.", dirAt(dir), lacks, why).
					WithPath(display).WithDetail("directory", dirAt(dir)).
					WithHint("give this user %s, for its owner, group or others as fits), or choose another path; nothing was changed", grant).WithCause(err)
			}
			return nil
		}
		fd, oerr := unix.Openat(pfd, name, pathFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if oerr != nil {
			return nil
		}
		defer unix.Close(fd)
		pfd = fd
	}
	return nil
}

// notSearchable is the refusal of a change of display, a name in the
// directory dir (or below it), which this user may not search (x).
func notSearchable(dir, display string) *fault.Error {
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: the directory %s may not be searched by this user (execute, x, permission), which reaching any name in it needs.", dir).
		WithPath(display).WithDetail("directory", dir).
		WithHint("give this user search permission on the directory (chmod +x, for its owner, group or others as fits), or choose another path; nothing was changed")
}

// replaceable refuses what a write must not replace.
func replaceable(st *unix.Stat_t, display string, opts backend.WriteOptions) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").
			WithPath(display).WithHint("write to a file path inside the directory")
	case unix.S_IFLNK:
		return fault.Errorf(fault.CodeSymlink, "the path is a link whose target is missing or outside the roots.").
			WithPath(display).WithHint("write to the link's target path, or remove the link first")
	default:
		return fault.Errorf(fault.CodeNotRegular, "the path is not a regular file (a FIFO, socket or device).").
			WithPath(display).WithHint("only regular files can be written")
	}
	if st.Nlink > 1 && !opts.InPlace {
		return fault.Errorf(fault.CodeHardlink, "the file has %d hard links; replacing it would split them.", st.Nlink).
			WithPath(display).WithDetail("links", st.Nlink).
			WithHint("pass --in-place to rewrite the shared file (not atomic), or write to a new path")
	}
	return nil
}

// dirNotWritable is the error of accessAt(dfd, ".", W_OK) for a change
// of display in the directory dfd: by its mode, it says that the change
// makes a new file there (a temporary one renamed over the file), which a
// writable file does not spare.
func dirNotWritable(err error, display string) *fault.Error {
	e := mapErr(err, display)
	if errors.Is(err, unix.EACCES) {
		e.Message = "permission denied: the file's directory is not writable, which a change of the file needs even where the file itself is writable: a write makes a temporary file there and renames it over the file, so that it is atomic."
		e.WithHint("give the directory write permission (chmod u+w) first; nothing was changed")
	}
	return e
}

// stickyRefused refuses a replace, removal or move (verb) of the entry st in
// the directory dfd that the kernel would refuse for its sticky bit
// (mode +t, as /tmp): one that is neither this user's nor in a directory
// of this user's, when this user is not root. A transaction found out only
// at its rename, past the backup link it had made of the file, which it
// could not unlink either (the link is the other user's too): its
// journal stayed, and every later call on the tree failed until that
// user removed the link.
func stickyRefused(dfd int, st *unix.Stat_t, display, verb string) error {
	if st.Uid == uint32(os.Geteuid()) {
		return nil // the common case, without the directory's stat
	}
	var d unix.Stat_t
	if err := unix.Fstat(dfd, &d); err != nil {
		return mapErr(err, display)
	}
	if !stickyBars(st, &d) {
		return nil
	}
	what := "file"
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		what = "directory"
	}
	instead := ", or write a new path"
	if verb == "move" {
		instead = ""
	}
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: the %s is user %d's, in a sticky directory (mode +t, as /tmp) that is not this user's either, where only the owner of the %s or of the directory may %s it.", what, st.Uid, what, verb).
		WithPath(display).WithHint("ask the %s's owner to %s it%s; nothing was changed", what, verb, instead)
}

// ownerRefused refuses a replace of the file st in the directory dir by
// a process other than root that could not give the new file st's owner
// and group (keepsOwner): st is another user's, or of a group that is
// neither one of this user's nor the one a set-group-ID directory gives,
// on a file system that keeps each file's owner. The new file
// would be this user's and of its group, which can take the owner's
// access away (a file of user b, mode 600 with an ACL entry letting user
// a write it, was a's after a's edit, and b could no longer read it), as
// sed -i silently does. Written in place (write --in-place) the file keeps
// its inode, and so its owner, group, mode and ACLs.
func ownerRefused(dir *os.File, st *unix.Stat_t, display string) error {
	if keepsOwner(dir, st) {
		return nil
	}
	whose, lost := ownedAs("file", st)
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: %s; a change replaces it with a new file (a temporary one renamed over it, so that it is atomic), which this user (%d) may not give %s.", whose, os.Geteuid(), lost).
		WithPath(display).WithDetail("owner", st.Uid).WithDetail("group", st.Gid).
		WithHint(inPlaceHint)
}

// inPlaceHint is the way on from a replace refused over the file's owner.
const inPlaceHint = "rewrite it through its own inode, which keeps its owner, group and mode: write --in-place with its whole new content (not atomic; --append cannot be in place), or ask its owner to change it; nothing was changed"

// ownedAs says whose the file or directory st is (what), and what a new
// one of this user's would lose of it: its owner, or, where this user owns
// it, only its group (named as the cause, not the owner).
func ownedAs(what string, st *unix.Stat_t) (whose, lost string) {
	if st.Uid == uint32(os.Geteuid()) {
		return fmt.Sprintf("the %s is this user's but of group %d, not one of this user's groups", what, st.Gid),
			"that group: it would be of this user's group, which can take that group's access away"
	}
	return fmt.Sprintf("the %s is user %d's, of group %d", what, st.Uid, st.Gid),
		"that owner and group: it would be this user's, which can take its owner's access away"
}

// movedOwnerRefused refuses, as ownerRefused refuses a replace, a move
// with a change of the file st (opts.OwnerOf, from) to a new file in the
// directory dir (display): the new file is this user's where it may not
// give it st's owner and group. It was, silently: apply-patch's Update
// File with Move to of another user's file made it the writer's, exit 0.
// A move without a change (mv) is a rename, which keeps the inode.
func movedOwnerRefused(dir *os.File, st *unix.Stat_t, from, display string) error {
	if keepsOwner(dir, st) {
		return nil
	}
	whose, lost := ownedAs("file", st)
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: %s; moved with a change it becomes a new file at %s, which this user (%d) may not give %s.", whose, display, os.Geteuid(), lost).
		WithPath(from).WithDetail("owner", st.Uid).WithDetail("group", st.Gid).WithDetail("destination", display).
		WithHint("move it with mv, which keeps its owner and group, then change it through its own inode with write --in-place (not atomic), or ask its owner to; nothing was changed")
}

// keepsOwner reports whether a file this process makes in the directory
// dir can be given the owner and group of st: its own user and a group
// keepsGroup allows, and otherwise whatever the file system gives
// (ownerKept), root's too: one that gives every file the same owner and
// group whoever makes it (bindfs --force-user, vfat or cifs mounted with
// uid=) keeps them on a replace, which changes nothing there, and one
// that refuses or ignores root's chown (NFS's root_squash, bindfs
// --chown-deny) does not, which root's ids alone (mayChown) said it did.
func keepsOwner(dir *os.File, st *unix.Stat_t) bool {
	if st.Uid == uint32(os.Geteuid()) && keepsGroup(int(dir.Fd()), st.Gid) {
		return true // the common case, asking nothing of the file system
	}
	return ownerKept(dir, st)
}

// idsGiveOwner reports whether this process's ids let it give a file it
// makes in the directory dfd the owner and group of st: one that may
// chown any (mayChown: root, as long as it holds CAP_CHOWN), another
// only its own user and a group keepsGroup allows. Root without CAP_CHOWN
// was let through, and silently made another user's file its own.
func idsGiveOwner(dfd int, st *unix.Stat_t) bool {
	return mayChown() || st.Uid == uint32(os.Geteuid()) && keepsGroup(dfd, st.Gid)
}

// keptOwners are ownerKept's answers, by the directory's file system and
// the owner, group and mode asked for: a replace over 1,000 files of
// another user asks the file system once, not 1,000 times. A wrong
// answer costs no owner: stage refuses a new file keepOwner could not
// give st's owner and group.
var keptOwners sync.Map

type keptOwnerKey struct {
	dev      uint64
	uid, gid uint32
	mode     uint32
}

// ownerKept asks the file system of the directory dir whether a file
// this process makes there ends with st's owner, group and mode once
// given them as a replace gives them (keepOwnerAndMode): it makes an
// unnamed file there (unnamedFile), or where the file system has none a
// temporary file as stage makes one, with its record, removed at once,
// gives it st's owner, group and mode and looks at what it has. False
// where no file can be made (the replace could not make its own either),
// and where the file system keeps the owner but not the mode (bindfs
// --force-user without --perms shows a new file's own mode, which only
// its shown owner may change): the replace would change the mode.
func ownerKept(dir *os.File, st *unix.Stat_t) bool {
	dfd := int(dir.Fd())
	var d unix.Stat_t
	if unix.Fstat(dfd, &d) != nil {
		return false
	}
	key := keptOwnerKey{dev: uint64(d.Dev), uid: st.Uid, gid: st.Gid, mode: uint32(st.Mode) & 0o7777}
	if kept, ok := keptOwners.Load(key); ok {
		return kept.(bool)
	}
	kept := probeOwner(dir, st)
	keptOwners.Store(key, kept)
	return kept
}

// probeOwner is ownerKept's question to the file system, asked.
func probeOwner(dir *os.File, st *unix.Stat_t) bool {
	dfd := int(dir.Fd())
	if fd, err := unnamedFile(dfd); err == nil {
		defer unix.Close(fd)
		return givesOwner(fd, st)
	}
	tmp := tempName()
	rec, err := newTempRecord(filepath.Join(realPath(dir, dir.Name()), tmp))
	if err != nil {
		return false
	}
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		rec.done()
		return false
	}
	s := &stagedFile{dfd: dfd, name: tmp, file: os.NewFile(uintptr(fd), tmp), rec: rec}
	defer s.discard()
	return rec.bind(fd) == nil && givesOwner(fd, st)
}

// givesOwner gives the file fd st's owner, group and mode as a replace
// gives them (keepOwnerAndMode), and reports whether it has them then.
func givesOwner(fd int, st *unix.Stat_t) bool {
	var now unix.Stat_t
	return keepOwnerAndMode(fd, st) == nil && unix.Fstat(fd, &now) == nil && now.Uid == st.Uid && now.Gid == st.Gid &&
		uint32(now.Mode)&0o7777 == keptMode(uint32(st.Mode)&0o7777, os.Geteuid() == 0)
}

// keepsGroup reports whether a file this process makes in the directory
// dfd can be given the group gid: the directory's own, when it gives it
// (dirGivesGroup), or one of this process's groups (chown(2) with owner -1).
func keepsGroup(dfd int, gid uint32) bool {
	if gid == uint32(os.Getegid()) {
		return true
	}
	var d unix.Stat_t
	if unix.Fstat(dfd, &d) == nil && dirGivesGroup(&d) && d.Gid == gid {
		return true
	}
	groups, err := ownGroups()
	return err == nil && slices.Contains(groups, int(gid))
}

// ownGroups are this process's supplementary groups, asked once: a
// replace over 3,000 files of one of them asked 3,000 times.
var ownGroups = sync.OnceValues(os.Getgroups)

// stickyBars reports whether the sticky bit of the directory d keeps this
// user, not root, from renaming or unlinking the entry st in it: neither
// is this user's.
func stickyBars(st, d *unix.Stat_t) bool {
	euid := uint32(os.Geteuid())
	return euid != 0 && d.Mode&unix.S_ISVTX != 0 && st.Uid != euid && d.Uid != euid
}

// stagedFile is new content in a temporary file of its target's
// directory: written, synced and given its mode and owner, waiting to be
// renamed over its target. Its record in the state directory (see
// tempRecord) is held until done, so that no sweep takes it meanwhile.
type stagedFile struct {
	dfd  int
	name string
	file *os.File
	rec  *tempRecord
}

// stage writes data to a new temporary file in dir, whose real absolute
// path is dirReal. old is the file it will replace (nil for a new one):
// its mode and, where permitted, its owner are kept; a new file gets the
// mode opts give (newMode), and so does any file when opts.Mode is set.
// owner, when not nil, is the file whose owner the new one gets
// (opts.OwnerOf), in place of old's. attrs, when not nil, is the file
// whose extended attributes it gets (keepXattrs): old, or owner's.
func stage(dir *os.File, dirReal string, data []byte, opts backend.WriteOptions, old, owner *unix.Stat_t, attrs *os.File, display string) (*stagedFile, error) {
	dfd := int(dir.Fd())
	tmp := tempName()
	mode, exact := newMode(opts)
	create := mode
	if old != nil || exact {
		create = 0o600 // private until it gets its mode
	}
	rec, err := newTempRecord(filepath.Join(dirReal, tmp))
	if err != nil {
		return nil, stateDirErr("the record of a temporary file", err).WithPath(display)
	}
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, create)
	if err != nil {
		rec.done()
		return nil, mapErr(pinnedErr(err, dfd, "."), display)
	}
	s := &stagedFile{dfd: dfd, name: tmp, file: os.NewFile(uintptr(fd), tmp), rec: rec}
	err = rec.bind(fd)
	if err == nil {
		_, err = syscalls.write(s.file, data)
	}
	if err == nil && old != nil {
		err = leaveAfter(fd, old)
	}
	switch {
	case err != nil:
	case owner != nil:
		// The owner first: chown clears set-id bits, so the mode comes last.
		err = keepOwner(fd, owner)
		switch {
		case err != nil:
		case exact:
			err = setMode(fd, mode)
		case old != nil:
			err = setMode(fd, keptMode(uint32(old.Mode)&0o7777, os.Geteuid() == 0))
		}
	case exact:
		err = setMode(fd, mode) // exactly, the umask aside
	case old != nil:
		err = keepOwnerAndMode(fd, old)
	}
	if err == nil && attrs != nil {
		// Last: an ACL set is the mode's group bits too.
		err = keepXattrs(int(attrs.Fd()), fd)
	}
	if err == nil {
		err = syscalls.fsync(fd)
	}
	if err != nil {
		s.discard()
		if errors.Is(err, errOwnerLost) {
			if owner == nil {
				owner = old
			}
			return nil, ownerLost(owner, display)
		}
		return nil, mapErr(err, display)
	}
	return s, nil
}

// discard removes a staged file that was not renamed, and its record.
func (s *stagedFile) discard() {
	unix.Unlinkat(s.dfd, s.name, 0) // the failure that led here is what is reported
	s.done()
}

// done releases a staged file once it is renamed or removed.
func (s *stagedFile) done() {
	s.file.Close()
	s.rec.done()
}

// swapHolds checks the compare-and-swap of opts (IfVersion) against the
// file at name in dfd as it is now, just before it is replaced: a program
// that takes no agentfs lock may have changed it since it was checked.
func swapHolds(dfd int, name, display string, opts backend.WriteOptions) error {
	if opts.IfVersion == "" {
		return nil
	}
	var now unix.Stat_t
	err := unix.Fstatat(dfd, name, &now, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return mapErr(err, display)
	}
	return backend.CheckSwap(display, opts, err == nil, versionIf(err == nil, &now))
}

// replace writes data to a new temporary file in dir and renames it over
// base. old is the file being replaced (nil for a new one): its mode and,
// where permitted, its owner are kept, and attrs' extended attributes
// (replaceSources). The compare-and-swap of opts is
// checked again just before the rename, under the caller's lock: what the
// rename replaces is the version asked for (a program that takes no
// agentfs lock can still slip a change in between the check and the
// rename, as it can between any two system calls).
func replace(dir *os.File, dirReal, base string, data []byte, old, owner *unix.Stat_t, attrs *os.File, opts backend.WriteOptions, display string) (backend.FileInfo, error) {
	s, err := stage(dir, dirReal, data, opts, old, owner, attrs, display)
	if err != nil {
		return backend.FileInfo{}, err
	}
	dfd := s.dfd
	if err := swapHolds(dfd, base, display, opts); err != nil {
		s.discard()
		return backend.FileInfo{}, err
	}
	if opts.IfAbsent {
		err = renameNoReplace(dfd, s.name, dfd, base)
	} else {
		err = syscalls.renameat(dfd, s.name, dfd, base)
	}
	if err != nil {
		s.discard()
		if errors.Is(err, unix.EEXIST) {
			return backend.FileInfo{}, fault.Errorf(fault.CodeExists, "the file already exists.").WithPath(display).
				WithHint("drop --create to replace it, or choose another path")
		}
		return backend.FileInfo{}, mapErr(err, display)
	}
	defer s.done()
	var st unix.Stat_t
	if err := unix.Fstat(int(s.file.Fd()), &st); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if err := syscalls.fsync(dfd); err != nil {
		return backend.FileInfo{}, fault.Errorf(fault.CodeIOError, "the file was replaced, but its directory could not be synced: %s.", ErrText(err)).
			WithPath(display).WithHint("the new content is in place; check the file system before relying on it after a crash").
			WithCause(err)
	}
	sweep(dir, dirReal)
	return infoFromStat(base, &st), nil
}

// keepOwnerAndMode gives the temporary file the replaced file's owner (when
// the process may: an unprivileged one keeps at least the group it can) and
// then its mode (chown clears set-id bits, so the mode comes last).
func keepOwnerAndMode(fd int, old *unix.Stat_t) error {
	if err := keepOwner(fd, old); err != nil {
		return err
	}
	return setMode(fd, keptMode(uint32(old.Mode)&0o7777, os.Geteuid() == 0))
}

// setMode gives the file fd the mode m where it has another: a file
// system that shows every file with one owner and mode (vfat mounted with
// uid= and fmask=, bindfs --force-user --perms) refuses a chmod by any
// other user, even one to the mode the file has.
func setMode(fd int, m uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if uint32(st.Mode)&0o7777 == m {
		return nil
	}
	return unix.Fchmod(fd, m)
}

// errOwnerLost is keepOwner's failure: the file system refused or
// ignored the chown (NFS's root_squash, bindfs --chown-deny or
// --chown-ignore, or a user other than root giving another's owner).
var errOwnerLost = fmt.Errorf("the file system did not give the new file the owner and group asked: %w", unix.EPERM)

// keepOwner gives the file fd the owner and group of st, or fails with
// errOwnerLost: it was silently left the writer's where the chown was
// refused, and another user's file replaced by root on NFS with
// root_squash became root's (nobody's there), exit 0. The file's own
// owner is compared, not the process's: in a set-group-ID directory a
// new file takes the directory's group, which would let that group read
// what the old group alone could.
func keepOwner(fd int, st *unix.Stat_t) error {
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Uid == st.Uid && now.Gid == st.Gid {
		return nil
	}
	if err := unix.Fchown(fd, int(st.Uid), int(st.Gid)); errors.Is(err, unix.EPERM) {
		return errOwnerLost
	} else if err != nil {
		return err
	}
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Uid != st.Uid || now.Gid != st.Gid {
		return errOwnerLost
	}
	return nil
}

// ownerLost is the refusal of a replace (display) whose new file the file
// system did not let this process give the owner and group of st
// (errOwnerLost), which its ids or an earlier answer of the file system
// (ownerKept) said it could.
func ownerLost(st *unix.Stat_t, display string) *fault.Error {
	whose, lost := ownedAs("file", st)
	return fault.Errorf(fault.CodePermissionDenied, "permission denied: %s; a change replaces it with a new file, and the file system refused to let this user (%d) give the new file %s.", whose, os.Geteuid(), lost).
		WithPath(display).WithDetail("owner", st.Uid).WithDetail("group", st.Gid).
		WithHint(inPlaceHint)
}

// ownerOf stats the file opts.OwnerOf names (a final link followed, as
// Stat follows it), and opens it for its extended attributes: nils when
// none is named. Its owner and group must be ones a new file in the
// directory dir (display) can be given (movedOwnerRefused).
func (f *FS) ownerOf(opts backend.WriteOptions, dir *os.File, display string) (*unix.Stat_t, *os.File, error) {
	if opts.OwnerOf == "" {
		return nil, nil, nil
	}
	t, err := f.resolve(opts.OwnerOf)
	if err != nil {
		return nil, nil, err
	}
	file, st, err := f.openChecked(t, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY)
	if err != nil {
		return nil, nil, err
	}
	if err := movedOwnerRefused(dir, &st, t.display(f), display); err != nil {
		file.Close()
		return nil, nil, err
	}
	return &st, file, nil
}

// keptMode is the mode a replace keeps. New content drops the set-user-ID
// bit, and the set-group-ID bit of a group-executable file, unless the
// writer is privileged: the kernel does so on a write (file_remove_privs),
// and so do sed -i and cp.
func keptMode(mode uint32, privileged bool) uint32 {
	if privileged {
		return mode
	}
	mode &^= unix.S_ISUID
	if mode&unix.S_IXGRP != 0 {
		mode &^= unix.S_ISGID
	}
	return mode
}

// writeInPlace rewrites an existing file through its own inode: data from
// offset 0, the tail cut, synced. Readers may see a mix while it runs.
func writeInPlace(dfd int, base string, old *unix.Stat_t, data []byte, ifVersion, display string) (backend.FileInfo, error) {
	file, st, err := openSame(dfd, base, unix.O_WRONLY, old, display)
	if err != nil {
		if copiedUp(dfd, &st, old) {
			return backend.FileInfo{}, splitByCopyUp(old, display)
		}
		return backend.FileInfo{}, err
	}
	defer file.Close()
	fd := int(file.Fd())
	if err := backend.CheckSwap(display, backend.WriteOptions{IfVersion: ifVersion}, true, version(&st)); err != nil {
		return backend.FileInfo{}, err
	}
	head := data
	if int64(len(data)) > st.Size {
		// Out of space now, the old content is still whole.
		reserved, err := syscalls.reserve(fd, int64(len(data)))
		if err != nil {
			return backend.FileInfo{}, mapErr(err, display).WithHint("free some space and retry; the file is unchanged")
		}
		if !reserved {
			// No fallocate here (ext2, vfat, NFSv3; not Linux): the part
			// past the old end goes first, its failure cut off again, so
			// that running out of space overwrites nothing old (it left
			// a file of the new content's first bytes).
			_, err := syscalls.writeAt(file, data[st.Size:], st.Size)
			if err == nil {
				err = syscalls.fsync(fd) // NFS tells of no space only here
			}
			if err != nil {
				e := mapErr(err, display)
				if terr := file.Truncate(st.Size); terr != nil {
					return backend.FileInfo{}, e.WithHint("the file keeps its old content, followed by part of the new: write it again once the cause is gone")
				}
				return backend.FileInfo{}, e.WithHint("free some space and retry; the file is unchanged")
			}
			head = data[:st.Size]
		}
	}
	if _, err := syscalls.writeAt(file, head, 0); err != nil {
		return backend.FileInfo{}, mapErr(err, display).
			WithHint("the write through the file's own inode (inPlace) may have left it part old, part new: write it again once the cause is gone")
	}
	if err := file.Truncate(int64(len(data))); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if err := leaveAfter(fd, &st); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if err := syscalls.fsync(fd); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	return infoFromStat(base, &st), nil
}

// copiedUp reports whether the file old, of the directory dfd, opened for
// writing as st, was copied up by an overlay: a file of its lower layer (a
// container image's) is copied to the upper layer when first opened for
// writing, a new inode with the old content, size and mtime, and without
// index=on its hard links are not copied with it (fewer links).
func copiedUp(dfd int, st, old *unix.Stat_t) bool {
	return st.Ino != 0 && !sameFile(st, old) && st.Nlink < old.Nlink &&
		st.Size == old.Size && st.Mtim == old.Mtim && onOverlay(dfd)
}

// splitByCopyUp is the refusal of a write in place of the file old that
// the overlay copied up (copiedUp), which split its hard links: the
// other names keep the lower layer's file, and writing the copy would
// change one name only.
func splitByCopyUp(old *unix.Stat_t, display string) *fault.Error {
	return fault.Errorf(fault.CodeHardlink, "the file comes from a lower layer of an overlay file system (a container image's), which copied it up when it was opened for writing and split its %d hard links: this name is now a file of its own, its other names keep the image's; nothing was written.", old.Nlink).
		WithPath(display).WithDetail("links", old.Nlink).
		WithHint("write each of its names (their content is still the same), or mount the overlay with index=on, which keeps hard links on copy-up")
}

// versionIf is the version of the file st describes, "" when it does not
// exist.
func versionIf(exists bool, st *unix.Stat_t) string {
	if !exists {
		return ""
	}
	return version(st)
}

// mtimeSteps are what leaveAfter adds to the replaced content's mtime,
// finest first, until the file system keeps a later one: nanoseconds on
// most, whole seconds on ext3 or ext4 with 128-byte inodes, two seconds
// on FAT; futimes(2) sets microseconds at best.
var mtimeSteps = []int64{1, 1e3, 1e6, 1e9, 2e9}

// leaveAfter gives fd, just written with content that replaces the
// content old describes, an mtime later than old's when the clock did not
// move past it (a write within the timestamps' granularity, or an old
// mtime in the future). A version is taken from the stat (inode, size,
// mtime, ctime), and ext4 and xfs give a freed inode number to the next
// file: without this, two same-size writes within one tick brought back
// the version read before them, and a write made with that version passed
// its check, losing both. A file the process may not set the time of
// (another user's, written in place) keeps the kernel's.
func leaveAfter(fd int, old *unix.Stat_t) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	for _, step := range mtimeSteps {
		if later(st.Mtim, old.Mtim) {
			return nil
		}
		err := setTimes(fd, st.Atim, unix.NsecToTimespec(old.Mtim.Nano()+step))
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
	}
	return nil
}

// later reports whether a is after b.
func later(a, b unix.Timespec) bool {
	return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec
}
