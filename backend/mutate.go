package backend

import (
	"context"
	"time"
)

// WriteOptions shape one atomic replace.
type WriteOptions struct {
	// Create makes the write exclusive: EXISTS when the path is present.
	Create bool
	// Executable gives a new file mode 0755 instead of 0644.
	Executable bool
	// InPlace writes through the existing inode, so a file with other hard
	// links stays one file; without it such a file is refused with HARDLINK.
	InPlace bool
}

// MutableFS is the write side of the file-system contract. Mutations are
// coordinated across processes by Lock; WriteFile and Remove assume the
// caller holds the lock of their path.
type MutableFS interface {
	FS
	// Lock takes what a mutation of path needs: a shared lock on every
	// ancestor and an exclusive one on path, in one global order, waiting up
	// to timeout (then LOCK_TIMEOUT). A recursive remove of a directory holds
	// its exclusive lock, so no write below it can interleave. The returned
	// func releases them; a killed holder's locks are freed by the OS.
	Lock(ctx context.Context, path string, timeout time.Duration) (unlock func(), err error)
	// WriteFile atomically replaces (or creates, with missing parents) the
	// content of path, keeping an existing file's mode, and returns the new
	// file's info. Readers see the old or the new content, never a mix.
	WriteFile(ctx context.Context, path string, data []byte, opts WriteOptions) (FileInfo, error)
	// Remove deletes path (a directory only when empty or recursive); a
	// missing path returns false and no error. A root or an ancestor of one
	// is refused.
	Remove(ctx context.Context, path string, recursive bool) (deleted bool, err error)
}
