package localfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// Stat describes path, following a final link that the policy allows. It
// opens with O_PATH, so it never blocks on a FIFO and needs no read permission.
func (f *FS) Stat(_ context.Context, path string) (backend.FileInfo, error) {
	t, err := f.resolve(path)
	if err != nil {
		return backend.FileInfo{}, err
	}
	file, st, err := f.openPath(t)
	if err != nil {
		return backend.FileInfo{}, f.missingUncommitted(t, err)
	}
	file.Close()
	return infoFromStat(filepath.Base(t.abs), &st), nil
}

// resolvedTarget places where the links on t lead in the root that holds
// that place (os.Root refuses absolute links and links out of their root,
// so Stat and open come here for those). A place that does not exist is
// NOT_FOUND when it would lie inside a root, OUTSIDE_ROOT otherwise, and
// DENIED inside a deny root either way.
func (f *FS) resolvedTarget(t target) (target, error) {
	full := filepath.Join(t.root.path, t.rel)
	real, err := f.evalSymlinks(full)
	if err != nil {
		// A dangling final link, where it leads; a missing name, where the
		// links above it lead (l2/new.txt, l2 a link into another root).
		real = f.resolveExisting(full)
		if dest, rerr := os.Readlink(full); rerr == nil {
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(full), dest)
			}
			real = f.resolveExisting(filepath.Clean(dest))
		}
	}
	if f.deniedName(real) {
		// Before NOT_FOUND: whether a name exists in a deny root is not told.
		return target{}, f.deniedErr(t.display(f))
	}
	if rt, ok := f.rootOf(real); ok {
		if err != nil {
			return target{}, f.hiddenErr(rt, t.display(f), mapErr(err, t.display(f)))
		}
		return rt, nil
	}
	return target{}, fault.Errorf(fault.CodeOutsideRoot, "the path goes through a link that leads outside the allowed roots.").
		WithPath(t.display(f)).WithHint("use a path whose links stay inside the roots, or add the target's directory with --root")
}

// Lstat describes path itself; a final link is described, not followed.
func (f *FS) Lstat(_ context.Context, path string) (backend.FileInfo, error) {
	t, err := f.resolve(path)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if t.rel == "." {
		file, st, err := f.openChecked(t, pathFlags)
		if err != nil {
			return backend.FileInfo{}, err
		}
		file.Close()
		return infoFromStat(filepath.Base(t.abs), &st), nil
	}
	parent, base := f.parentOf(t)
	dir, _, err := f.openChecked(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return backend.FileInfo{}, f.missingUncommitted(t, pathAsGiven(err, parent.display(f), t.display(f)))
	}
	defer dir.Close()
	if err := f.checkDeny(filepath.Join(realPath(dir, filepath.Join(parent.root.path, parent.rel)), base), t.display(f)); err != nil {
		return backend.FileInfo{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if which := f.dirAccessErr(t, t.display(f), false, err); which != nil {
			return backend.FileInfo{}, which
		}
		// A file a failed undo left removed: rm of it answered "not
		// there" (deleted false), and the recovery later put it back.
		return backend.FileInfo{}, f.missingUncommitted(t, mapErr(err, t.display(f)))
	}
	return infoFromStat(base, &st), nil
}

// pathAsGiven is err, an error of opening the parent of a path, naming
// the path as the caller gave it, as an open of the path itself does: rm
// a.txt/x was NOT_A_DIRECTORY of "a.txt", and mv nodir/x y NOT_FOUND of
// "nodir", which read as the path itself, and in mv as the source or the
// destination it was not. An error of another path (a link's target) is
// left as it is.
func pathAsGiven(err error, parent, display string) error {
	var e *fault.Error
	if !errors.As(err, &e) || e.Path != parent {
		return err
	}
	switch e.Code {
	case fault.CodeNotFound, fault.CodeNotADirectory, fault.CodePermissionDenied:
		c := *e
		return c.WithPath(display)
	}
	return err
}

// parentOf splits t into its parent directory and final name.
func (f *FS) parentOf(t target) (target, string) {
	return target{root: t.root, rel: filepath.Dir(t.rel), abs: filepath.Dir(t.abs)}, filepath.Base(t.rel)
}

type fileReader struct {
	*os.File
	info backend.FileInfo
}

func (r *fileReader) Info() backend.FileInfo { return r.info }

// Open opens a regular file for reading. A directory is
// NOT_A_FILE, a FIFO, socket or device NOT_REGULAR: the open is non-blocking,
// so neither waits for a writer.
func (f *FS) Open(_ context.Context, path string) (backend.FileReader, error) {
	t, err := f.resolve(path)
	if err != nil {
		return nil, err
	}
	file, st, err := f.openChecked(t, openFlags)
	if err != nil {
		return nil, f.missingUncommitted(t, err)
	}
	if err := f.checkCommitted(file, t); err != nil {
		file.Close()
		return nil, err
	}
	info := infoFromStat(filepath.Base(t.abs), &st)
	switch info.Type {
	case backend.TypeFile:
	case backend.TypeDir:
		file.Close()
		return nil, fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(t.display(f)).
			WithHint("use ls to list a directory, or find to search it")
	default:
		file.Close()
		return nil, fault.Errorf(fault.CodeNotRegular, "the path is not a regular file (a FIFO, socket or device).").
			WithPath(t.display(f)).WithHint("only regular files can be read")
	}
	return &fileReader{File: file, info: info}, nil
}

// ReadDir lists entries [offset, offset+limit) in byte order of their names.
// All names are read (sorting needs them), but only the page is stat'ed,
// relative to the open directory so that no entry is reached by a path.
// Entries inside a deny root, by name or by identity, are left out.
func (f *FS) ReadDir(_ context.Context, path string, offset, limit int) (backend.DirPage, error) {
	t, err := f.resolve(path)
	if err != nil {
		return backend.DirPage{}, err
	}
	dir, dirSt, err := f.openChecked(t, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		var ce *fault.Error
		if errors.As(err, &ce) && ce.Code == fault.CodeNotADirectory {
			if fi, serr := f.Stat(context.Background(), path); serr == nil && fi.Type != backend.TypeDir {
				return backend.DirPage{}, fault.NotADirectory(t.display(f))
			}
		}
		return backend.DirPage{}, f.missingUncommitted(t, err)
	}
	defer dir.Close()
	if err := f.checkCommitted(dir, t); err != nil {
		return backend.DirPage{}, err
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return backend.DirPage{}, mapErr(err, t.display(f))
	}
	real := realPath(dir, filepath.Join(t.root.path, t.rel))
	kept := names[:0]
	for _, n := range names {
		if !f.deniedName(filepath.Join(real, n)) {
			kept = append(kept, n)
		}
	}
	names = kept
	sort.Strings(names)
	var page backend.DirPage
	if offset >= len(names) {
		return page, nil
	}
	end := min(len(names), offset+limit)
	for _, n := range names[offset:end] {
		var st unix.Stat_t
		if err := unix.Fstatat(int(dir.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed since the listing
			}
			return backend.DirPage{}, mapErr(err, f.display(filepath.Join(t.abs, n)))
		}
		if f.deniedIdentity(&st) || st.Mode&unix.S_IFMT == unix.S_IFDIR && f.deniedDirIdentity(&st) {
			continue // a hard link to a denied file, a bind mount of a deny root
		}
		if st.Dev != dirSt.Dev && onKernelFS(int(dir.Fd()), n) {
			continue // a kernel file system mounted there
		}
		page.Entries = append(page.Entries, infoFromStat(n, &st))
	}
	return page, nil
}

// onKernelFS reports whether the entry name of the directory dfd, a mount
// point, is on a kernel file system.
func onKernelFS(dfd int, name string) bool {
	fd, err := unix.Openat(dfd, name, mountProbeFlags, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return kernelFSOf(fd) != ""
}

// deniedName is the cheap, by-name deny check for entries of a directory
// whose real path is already known.
func (f *FS) deniedName(real string) bool {
	for _, d := range f.denies() {
		if d.covers(real) {
			return true
		}
	}
	return false
}
