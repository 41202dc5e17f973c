package localfs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

var _ backend.Renamer = (*FS)(nil)

// Rename moves from to to (see backend.Renamer) with one rename(2) between
// descriptors of the two directories, each opened through the roots and
// checked as a write's is; both directories are synced. A file or a
// directory across file systems (EXDEV) is copied and removed in one
// transaction (a directory as movetree.go says). The caller holds the
// locks of both paths.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	src, err := f.renameEnd(from, false)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer src.dir.Close()
	dst, err := f.renameEnd(to, true)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer dst.dir.Close()
	if err := reservedName(dst.name, dst.display); err != nil {
		return backend.FileInfo{}, err
	}
	for _, r := range f.roots {
		if _, ok := within(src.real, r.path); ok {
			return backend.FileInfo{}, rootRefused(src.display)
		}
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
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && f.holdsDenied(src.real) {
		// Moved, the denied location would be reachable by a name no
		// deny path spells.
		return backend.FileInfo{}, fault.Errorf(fault.CodeDenied, "the directory holds a denied location.").WithPath(src.display).
			WithHint("move the files around the denied path one by one; nothing was moved")
	}
	var dstSt unix.Stat_t
	if !opts.IfAbsent && unix.Fstatat(dst.fd(), dst.name, &dstSt, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		dstSt.Dev == st.Dev && dstSt.Ino == st.Ino && st.Mode&unix.S_IFMT == unix.S_IFREG {
		// Two names of one file: rename(2) does nothing and succeeds. The
		// move's outcome is the source's name gone.
		if err := unix.Unlinkat(src.fd(), src.name, 0); err != nil {
			return backend.FileInfo{}, mapErr(err, src.display)
		}
		if err := syscalls.fsync(src.fd()); err != nil {
			return backend.FileInfo{}, mapErr(err, src.display)
		}
		return infoAt(dst.fd(), dst.name, dst.display)
	}
	if opts.IfAbsent {
		err = renameNoReplace(src.fd(), src.name, dst.fd(), dst.name)
	} else {
		err = syscalls.renameat(src.fd(), src.name, dst.fd(), dst.name)
	}
	switch {
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFREG:
		return f.moveAcross(ctx, from, to, &st, opts)
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return f.moveTreeAcross(ctx, src, dst, &st, opts)
	case errors.Is(err, unix.EXDEV) && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return backend.FileInfo{}, fault.Errorf(fault.CodeInvalidArgument, "the path is a symbolic link, and a link is moved across file systems by rename only.").
			WithPath(src.display).WithHint("make the link at the destination (ls shows its target), then rm this one; nothing was moved")
	case errors.Is(err, unix.EXDEV):
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotAFile, "the path is a special file (a FIFO, socket or device), which a move across file systems does not copy.").
			WithPath(src.display).WithHint("choose a destination on the same file system; nothing was moved")
	case !opts.IfAbsent && (errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY)):
		// rename(2) over a directory that holds something (either errno).
		return backend.FileInfo{}, fault.FullDestination(dst.display)
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return backend.FileInfo{}, fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst.display).
			WithHint("pass --overwrite to replace a file, or choose another destination")
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
	for _, d := range []int{dst.fd(), src.fd()} {
		if err := syscalls.fsync(d); err != nil {
			return backend.FileInfo{}, fault.Errorf(fault.CodeIOError, "the path was moved, but a directory could not be synced: %s.", errText(err)).
				WithPath(dst.display).WithHint("the move is done; check the file system before relying on it after a crash").WithCause(err)
		}
	}
	return infoAt(dst.fd(), dst.name, dst.display)
}

// renameEndpoint is one end of a rename: its directory, opened and checked,
// and its name in it.
type renameEndpoint struct {
	dir           *os.File
	name          string
	real, display string
}

func (e renameEndpoint) fd() int { return int(e.dir.Fd()) }

func (f *FS) renameEnd(path string, create bool) (renameEndpoint, error) {
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
		return renameEndpoint{}, rootRefused(display)
	}
	dir, err := f.parentDir(ct, display, create)
	if err != nil {
		return renameEndpoint{}, err
	}
	return renameEndpoint{dir: dir, name: filepath.Base(ct.rel), real: filepath.Join(ct.root.path, ct.rel), display: display}, nil
}

// renameNoReplace renames only when to does not exist. A file system
// without RENAME_NOREPLACE gets a hard link (which also fails when to
// exists) and an unlink.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	err := syscalls.renameExclusive(fromDir, from, toDir, to)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	if err := unix.Linkat(fromDir, from, toDir, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(fromDir, from, 0)
}

// moveAcross moves a regular file to another file system: its content is
// written at to and from removed, in one transaction.
func (f *FS) moveAcross(ctx context.Context, from, to string, st *unix.Stat_t, opts backend.WriteOptions) (backend.FileInfo, error) {
	r, err := f.Open(ctx, from)
	if err != nil {
		return backend.FileInfo{}, err
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return backend.FileInfo{}, mapErr(err, from)
	}
	infos, err := f.Commit(ctx, []backend.Op{
		{Path: to, Data: data, Write: backend.WriteOptions{IfAbsent: opts.IfAbsent, Executable: st.Mode&0o111 != 0, Mode: uint32(st.Mode) & 0o7777}},
		{Path: from, Remove: true, Write: backend.WriteOptions{IfVersion: version(st)}},
	})
	if err != nil {
		return backend.FileInfo{}, err
	}
	return infos[0], nil
}
