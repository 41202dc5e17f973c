package localfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syscalls is the seam of the calls that make a change durable: writing the
// bytes, fsync of the file, the rename, fsync of the directory. Production
// code calls the real ones through it; a test wraps them to record their
// order (write, fsync(file), rename, fsync(dir)) and to make any one fail,
// so that a step dropped or replaced by a no-op is caught.
var syscalls = struct {
	write    func(f *os.File, b []byte) (int, error)
	writeAt  func(f *os.File, b []byte, off int64) (int, error)
	fsync    func(fd int) error
	renameat func(olddirfd int, oldpath string, newdirfd int, newpath string) error
	mkdirat  func(dirfd int, path string, mode uint32) error
	rmdirat  func(dirfd int, path string) error
	// unlinkat removes a committed transaction's backup: a test makes it
	// fail as a failing disk or a file system gone read-only does.
	unlinkat func(dirfd int, path string, flags int) error
	// renameExclusive renames only when to does not exist.
	renameExclusive func(fromDir int, from string, toDir int, to string) error
	// reserve allocates the blocks of a file's first size bytes without
	// changing its size, where the file system can (reserved): an
	// in-place write then cannot run out of space half-way, having
	// overwritten the old bytes.
	reserve func(fd int, size int64) (reserved bool, err error)
	// openLock opens (creating) a lock or recovery file in the state
	// directory: a test makes it fail as a full one does.
	openLock func(path string, mode int, perm uint32) (int, error)
	// readDir lists a journal directory, or that of the records of
	// made directories: a test makes it fail as a process out of
	// descriptors or a failing disk does, or kills a writer between a
	// sweep's temp files and its directories.
	readDir func(name string) ([]os.DirEntry, error)
	// readFile reads a journal: a test makes it fail as a failing disk
	// or a process out of descriptors does.
	readFile func(name string) ([]byte, error)
	// openRead opens a walked file for reading once its type is known: a
	// test renames another file over the name first, as a writer may
	// between the stat and the open.
	openRead func(dirfd int, path string, flags int, mode uint32) (int, error)
	// linkat links a file a commit replaces at its backup name: a test
	// removes the file first, as another program (git checkout) may
	// between the commit's compare-and-swap and the link.
	linkat func(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error
}{
	write:           (*os.File).Write,
	writeAt:         (*os.File).WriteAt,
	fsync:           syncWith(fileSync),
	renameat:        unix.Renameat,
	mkdirat:         unix.Mkdirat,
	rmdirat:         func(dirfd int, path string) error { return unix.Unlinkat(dirfd, path, unix.AT_REMOVEDIR) },
	unlinkat:        unix.Unlinkat,
	renameExclusive: renameExclusive,
	reserve:         reserve,
	openLock:        unix.Open,
	readDir:         os.ReadDir,
	readFile:        os.ReadFile,
	openRead:        unix.Openat,
	linkat:          unix.Linkat,
}

// syncWith is fsync by sync, but a directory whose file system cannot sync
// one (EINVAL, ENOTSUP, ENOSYS: a FUSE server without fsyncdir, some
// network file systems) counts as synced, as SQLite and PostgreSQL count
// it: the change is made and nothing more can make its entry durable,
// where every write, mv and rm there failed IO_ERROR after it was made (a
// caller told so may make it again: an append twice). A file's sync, and
// any other error, still fails.
func syncWith(sync func(fd int) error) func(fd int) error {
	return func(fd int) error {
		err := sync(fd)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			if st := (unix.Stat_t{}); unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				return nil
			}
		}
		return err
	}
}
