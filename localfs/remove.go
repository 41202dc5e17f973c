package localfs

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// Remove deletes path: a file or a link (never the link's target), an
// empty directory, or with recursive a whole tree. A missing path returns
// false (STALE under IfVersion, which is checked on the entry itself just
// before it goes). A root, an ancestor of a root and a tree holding a
// denied path are refused. The removal is relative to a descriptor of the parent directory
// opened through the root, and a tree by removeTree, which never follows a
// link nor crosses a mount: nothing outside the root can be reached.
func (f *FS) Remove(ctx context.Context, path string, opts backend.RemoveOptions) (bool, error) {
	t, err := f.resolve(path)
	if err != nil {
		return false, err
	}
	display := t.display(f)
	if t.rel == "." {
		return false, fault.RootRefused(display)
	}
	ct, err := f.canonical(t, false)
	if err != nil {
		return false, err
	}
	real := filepath.Join(ct.root.path, ct.rel)
	if err := f.refuseRoots(real, display); err != nil {
		return false, err
	}
	if err := f.refuseUncommitted(real, display); err != nil {
		return false, err // a file a failed undo left removed answered "not there"
	}
	dir, err := f.parentDir(ctx, ct, display, false)
	if err != nil {
		var ce *fault.Error
		if errors.As(err, &ce) && ce.Code == fault.CodeNotFound {
			return false, backend.CheckSwap(display, backend.WriteOptions{IfVersion: opts.IfVersion}, false, "")
		}
		return false, err
	}
	defer dir.Close()
	dfd, base := int(dir.Fd()), filepath.Base(ct.rel)
	var st unix.Stat_t
	err = unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return false, mapErr(err, display)
	}
	present := err == nil
	if err := backend.CheckSwap(display, backend.WriteOptions{IfVersion: opts.IfVersion}, present, versionIf(present, &st)); err != nil || !present {
		return false, err
	}
	if err := stickyRefused(dfd, &st, display, "remove"); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dfd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return false, mapErr(pinnedErr(err, dfd, base, "."), display)
		}
		return true, syncDir(dfd, display)
	}
	if err := f.refuseHeldRoot(&st, display); err != nil {
		return false, err
	}
	if f.holdsDenied(real) {
		return false, fault.Errorf(fault.CodeDenied, "the directory holds a denied location.").WithPath(display).
			WithHint("remove the files around the denied path one by one")
	}
	err = unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
	case (errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)) && opts.Recursive:
		if err := f.removeTree(backend.Preparation(ctx), dfd, base, display); err != nil {
			return false, err
		}
	case errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST):
		return false, fault.Errorf(fault.CodeNotEmpty, "the directory is not empty.").WithPath(display).
			WithHint("pass -r/--recursive to remove it with everything in it")
	default:
		return false, mapErr(pinnedErr(err, dfd, base, "."), display)
	}
	return true, syncDir(dfd, display)
}

// syncDir makes a removal durable.
func syncDir(dfd int, display string) error {
	if err := syscalls.fsync(dfd); err != nil {
		return fault.Errorf(fault.CodeIOError, "the path was removed, but its directory could not be synced: %s.", ErrText(err)).
			WithPath(display).WithHint("check the file system before relying on the removal after a crash").WithCause(err)
	}
	return nil
}
