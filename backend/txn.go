package backend

import (
	"context"
	"time"
)

// Op is one change of a transaction: path replaced by Data (under the
// compare-and-swap of Write), or removed when Remove is set (a file or a
// link; IfVersion of Write applies).
type Op struct {
	Path   string
	Data   []byte
	Remove bool
	// Moved marks a removal whose file goes on, changed, under another
	// path (apply-patch's Move to): a new file there, so that a backend
	// with hard links refuses a file that has others (HARDLINK), whose
	// other names would keep the old content, as it refuses to replace it.
	Moved bool
	Write WriteOptions
}

// Transactor is the optional capability of a backend that changes several
// files all or nothing, for apply-patch, replace and mv: the tools stage
// every change in memory (aborting is not committing) and commit them in
// one call. Every compare-and-swap is checked before anything changes; a
// failure before the commit point changes nothing, and a process killed
// during the commit leaves a journal from which the backend restores the
// state before it, at its next start. Readers may see some changes made
// before others while the commit runs, never a file half written.
type Transactor interface {
	// Commit applies ops, whose paths are distinct, and returns the info
	// of each file written (the zero FileInfo for a removal), in order.
	// The caller holds the locks of every path (LockAll) when the backend
	// is a Locker.
	Commit(ctx context.Context, ops []Op) ([]FileInfo, error)
}

// CommitChecker is the optional capability of a Transactor that can tell,
// without changing anything, a commit of ops it would refuse before
// staging them (a hard link, a file or directory the caller may not
// write): a dry run then fails as its run would, where it passed.
type CommitChecker interface {
	CheckCommit(ctx context.Context, ops []Op) error
}

// Settler is the optional capability of a backend whose files may hold a
// change of a transaction not yet committed, visible to readers (an object
// store's, whose transactions are journals and leases). Settled fails
// STALE while the file at path, read at version, is such a change: the
// transaction may yet be undone. A change of a transaction that died is
// undone there and then, and STALE too: the file has moved on. A mutation
// that answers without writing (noChange) calls it first, as its answer
// rests on what it read; one that writes needs not, its compare-and-swap
// settles the version it replaces. A version "" is the file's absence, or
// a directory (which has no version): a removal not yet committed may yet
// be undone, and so may the changes below a directory.
type Settler interface {
	Settled(ctx context.Context, path, version string) error
}

// SettledReader is the optional capability of a reader of a Settler's
// file: Settled is the backend's Settled of the version it reads, without
// a request when no transaction wrote that version. A search that passes
// over a file and answers that it holds no match (replace) calls it, as
// that answer rests on what it read.
type SettledReader interface {
	Settled(ctx context.Context) error
}

// MultiLocker is the Locker of a backend that also locks several paths at
// once, in its global order, so that two transactions over overlapping
// sets of files never wait for each other in a cycle.
type MultiLocker interface {
	Locker
	LockAll(ctx context.Context, paths []string, timeout time.Duration) (unlock func(), err error)
}
