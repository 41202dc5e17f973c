package localfs

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/agentfs/agentfs/core"
	"golang.org/x/sys/unix"
)

// treeRemover removes a directory tree as rm -r --one-file-system would,
// and more carefully: the whole tree is checked before the first unlink
// (no directory on another file system or another mount, none that is a
// deny root by identity, none on a kernel file system), then removed
// bottom-up through descriptors opened with O_NOFOLLOW, checking each
// directory again, so a tree changed between the passes stops the removal
// instead of leading it somewhere else.
type treeRemover struct {
	f       *FS
	dev     uint64
	mnt     uint64
	hasMnt  bool
	display string
}

// removeTree checks, then removes, the directory name of the directory dfd.
func (f *FS) removeTree(dfd int, name, display string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return mapErr(err, display)
	}
	r := &treeRemover{f: f, dev: uint64(st.Dev), display: display}
	fd, err := unix.Openat(dfd, name, dirFlags, 0)
	if err != nil {
		return mapErr(err, display)
	}
	r.mnt, r.hasMnt = mountID(fd)
	unix.Close(fd)
	if err := r.visit(dfd, name, "", false); err != nil {
		return err
	}
	return r.visit(dfd, name, "", true)
}

// visit checks (remove false) or removes (remove true) the directory name of
// parent, at rel below the tree's top.
func (r *treeRemover) visit(parent int, name, rel string, remove bool) error {
	fd, err := unix.Openat(parent, name, dirFlags, 0)
	if err != nil {
		return mapErr(err, r.at(rel))
	}
	defer unix.Close(fd)
	if err := r.check(fd, rel); err != nil {
		return err
	}
	names, err := dirNames(fd)
	if err != nil {
		return mapErr(err, r.at(rel))
	}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return mapErr(err, r.at(filepath.Join(rel, n)))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := r.visit(fd, n, filepath.Join(rel, n), remove); err != nil {
				return err
			}
			continue
		}
		if remove {
			if err := unix.Unlinkat(fd, n, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return mapErr(err, r.at(filepath.Join(rel, n)))
			}
		}
	}
	if remove {
		if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
			return mapErr(err, r.at(rel))
		}
	}
	return nil
}

// check refuses a directory of the tree that rm -r must not enter.
func (r *treeRemover) check(fd int, rel string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return mapErr(err, r.at(rel))
	}
	mnt, hasMnt := mountID(fd)
	if uint64(st.Dev) != r.dev || (hasMnt && r.hasMnt && mnt != r.mnt) {
		return core.Errorf(core.CodeDenied, "the tree holds a mount point; rm -r does not cross into another mount.").
			WithPath(r.at(rel)).WithDetail("mountPoint", r.at(rel)).
			WithHint("unmount it first, or remove the files around it one by one; nothing was removed")
	}
	if r.f.deniedDirIdentity(&st) {
		return core.Errorf(core.CodeDenied, "the tree holds a denied directory (another name of a deny root).").
			WithPath(r.at(rel)).WithHint("remove the files around the denied directory one by one; nothing was removed")
	}
	if err := r.f.checkKernelFS(fd, r.at(rel)); err != nil {
		return err
	}
	return nil
}

func (r *treeRemover) at(rel string) string {
	if rel == "" {
		return r.display
	}
	return r.display + "/" + rel
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
