package backend

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentfs/agentfs/fault"
)

// ErrChangedDuringRead is the cause of a read that kept finding its file
// replaced between two of its requests (an object store without locks):
// a mutation that meets it lost a race, and runs again as for a failed
// compare-and-swap.
var ErrChangedDuringRead = errors.New("the file changed while it was read")

// WriteOptions shape one atomic replace.
type WriteOptions struct {
	// IfAbsent makes the write exclusive: EXISTS when the path is present
	// (an object store's If-None-Match: *).
	IfAbsent bool
	// IfVersion makes the write a compare-and-swap: STALE unless the path
	// holds the file of this version when it is replaced (an object
	// store's If-Match). The tools set it (or IfAbsent) to what they read,
	// so that a change made in between is never overwritten unseen.
	IfVersion string
	// Executable gives a new file mode 0777 instead of 0666 (less the
	// umask), on a backend with modes.
	Executable bool
	// Mode, when not 0, is the permission bits the file gets (a moved
	// file keeps its source's, 0600 included), in place of a new file's
	// 0666 or 0777 less the umask and of a replaced file's own, on a
	// backend with modes;
	// Executable should agree with it for one without.
	Mode uint32
	// OwnerOf is a path of the same backend whose owner and group the file
	// gets (a moved file keeps its source's, as mv keeps them), in place
	// of a new file's (the process's) and of a replaced file's own, on a
	// backend with owners; where the process may not give them, the
	// write is refused with PERMISSION_DENIED.
	OwnerOf string
	// InPlace writes through the existing inode, so a file with other hard
	// links stays one file, and one whose owner and group a replace could
	// not keep (another user's) keeps them; without it such a file is
	// refused, with HARDLINK or PERMISSION_DENIED.
	// A backend without hard links ignores it.
	InPlace bool
	// Stated says that the caller found the path as IfVersion or
	// IfAbsent asks by a Stat of this attempt, IfAbsent's NOT_FOUND
	// (neither a directory there nor a file above it): a backend whose
	// own check would ask again what that Stat just asked (an object
	// store's HEAD and listings, each a request) may skip it. The swap
	// itself is still made against IfVersion or IfAbsent.
	Stated bool
}

// RemoveOptions shape one removal.
type RemoveOptions struct {
	// Recursive removes a directory with everything in it.
	Recursive bool
	// IfVersion makes the removal a compare-and-swap, as in WriteOptions.
	IfVersion string
	// Stated says that the caller found at the path, by a Stat or Lstat
	// of this attempt, a file of IfVersion or, IfVersion empty, a
	// directory, as in WriteOptions.
	Stated bool
	// Checked says that IfVersion is the caller's own precondition (a
	// version or sha256 it read), not only the version this attempt
	// found: a recursive removal then removes nothing the read did not
	// cover (on an object store, the directory of a name that is a file
	// and a directory both).
	Checked bool
}

// MutableFS is the write side of the file-system contract. Each call is
// atomic on its own; the tools make a read-decide-write atomic with the
// compare-and-swap of WriteOptions and RemoveOptions, and, on a backend that
// is also a Locker, under its lock as well.
type MutableFS interface {
	FS
	// WriteFile atomically replaces (or creates, with missing parents) the
	// content of path, keeping an existing file's mode, and returns the new
	// file's info. Readers see the old or the new content, never a mix.
	WriteFile(ctx context.Context, path string, data []byte, opts WriteOptions) (FileInfo, error)
	// Remove deletes path (a directory only when empty or recursive); a
	// missing path returns false and no error (STALE under IfVersion). A
	// root or an ancestor of one is refused.
	Remove(ctx context.Context, path string, opts RemoveOptions) (deleted bool, err error)
}

// Locker is the optional capability of a backend that can exclude other
// writers for the length of a mutation, across processes. Without it the
// tools retry a mutation whose compare-and-swap failed.
type Locker interface {
	// Lock takes what a mutation of path needs: a shared lock on every
	// ancestor and an exclusive one on path, in one global order, waiting up
	// to timeout (then LOCK_TIMEOUT). A recursive remove of a directory holds
	// its exclusive lock, so no write below it can interleave. The returned
	// func releases them; a killed holder's locks are freed by the OS.
	Lock(ctx context.Context, path string, timeout time.Duration) (unlock func(), err error)
}

// CheckSwap is the compare-and-swap of a write or a removal, for a backend
// that compares versions itself at the moment of the change: exists and
// version describe path then. Every backend answers with these errors, so a
// tool tells a lost race from any other failure by its code.
func CheckSwap(path string, opts WriteOptions, exists bool, version string) error {
	switch {
	case opts.IfAbsent && exists:
		return fault.Errorf(fault.CodeExists, "the file already exists.").WithPath(path).
			WithHint("drop --create to replace it, or choose another path")
	case opts.IfVersion == "":
		return nil
	case !exists:
		return fault.Errorf(fault.CodeStale, "the file changed since it was read: it no longer exists.").WithPath(path).
			WithHint("read the file again and redo the change against its current content")
	case version != opts.IfVersion:
		return fault.Errorf(fault.CodeStale, "the file changed since it was read: its version is %s, not %s.", version, opts.IfVersion).
			WithPath(path).WithDetail("currentVersion", version).
			WithHint("read the file again and redo the change against its current content")
	}
	return nil
}

// RootNamer is the optional capability of a backend whose workspace root
// is known by its name alone (an object store's prefix, which has no
// identity): IsRoot reports whether path names it, so that a tool refuses
// to move or replace it before any other check. A backend with locks
// refuses its roots, by identity, when it locks them.
type RootNamer interface {
	IsRoot(path string) bool
}

// EntryComparer is the optional capability of a backend on which one
// directory entry has several spellings (through a link to its directory,
// a bind mount, or a file system that ignores case, where README names
// readme): SameEntry reports whether a and b name one entry, not merely
// one file (two hard links are two entries), false when it cannot tell.
// Without it, only paths spelled alike name one entry. Two spellings of
// one entry whose last names differ (readme, README) are a move that
// changes the name's stored spelling, which its Rename makes.
type EntryComparer interface {
	SameEntry(ctx context.Context, a, b string) bool
}

// Renamer is the optional capability of a backend that moves a file or a
// whole directory in one step (an object store's by a journal transaction
// of copies and deletions). Without it the tools copy and remove a file in
// a transaction.
type Renamer interface {
	// Rename moves the entry at from (a link itself, not its target) to to,
	// creating to's missing parents. With IfAbsent, to must not exist
	// (EXISTS); without it, a file at to is replaced, as is an empty
	// directory by a directory. IfVersion of opts is checked on from. It
	// returns the info of the entry at its new place. Stated (see
	// WriteOptions) says that the caller's Lstat of this attempt found
	// from a file of IfVersion or, IfVersion empty, a directory, and,
	// with IfAbsent, nothing at to (neither a directory there nor a file
	// above it).
	Rename(ctx context.Context, from, to string, opts WriteOptions) (FileInfo, error)
}

// preparationKey is the context key of a change's preparation.
type preparationKey struct{}

// WithPreparation returns ctx, the context a change is made with once past
// its point of no return (never cancelled, so that a change is never left
// half made), carrying prep, the caller's context before that point: the
// slow part of a change that touches nothing a failure does not undo (a
// copy to another file system before its commit) stops with prep, so that
// a caller giving up on a long move is answered at once.
func WithPreparation(ctx, prep context.Context) context.Context {
	return context.WithValue(ctx, preparationKey{}, prep)
}

// Preparation is the context the preparation of a change made with ctx
// stops with: the one WithPreparation gave it, else ctx.
func Preparation(ctx context.Context) context.Context {
	if prep, ok := ctx.Value(preparationKey{}).(context.Context); ok {
		return prep
	}
	return ctx
}

// ErrPartlyUndone is the cause of a transaction undone but for files
// another program changed after the transaction wrote them (PartlyUndone):
// never run again as a race lost, which would build on those files.
var ErrPartlyUndone = errors.New("a transaction undone but for files another program changed since")

// PartlyUndone is the failure cause of a transaction whose undo left kept,
// the files another program changed after the transaction changed them, as
// that program made them: one written holds this transaction's change under
// that program's, one removed that program's file alone (the old one is
// gone), and an undo would lose that program's change.
func PartlyUndone(kept []string, cause error) *fault.Error {
	them := "it"
	if len(kept) > 1 {
		them = "them"
	}
	why := fault.AsError(cause)
	stopped := strings.TrimSuffix(why.Message, ".")
	if why.Path != "" {
		stopped = why.Path + ": " + stopped
	}
	return fault.Errorf(fault.CodeStale, "the transaction was undone (%s), but for %s: another program changed %s after the transaction did, and the undo left %s as that program made %s.",
		stopped, strings.Join(kept, ", "), them, them, them).
		WithPath(kept[0]).WithDetail("kept", kept).
		WithHint("read %s before running the change again: no other file was changed", strings.Join(kept, ", ")).WithCause(ErrPartlyUndone)
}

// ErrChangedTwice is the cause of a transaction refused because two of
// its ops name one file (ChangedTwice).
var ErrChangedTwice = errors.New("a transaction changes the file twice")

// ChangedTwice is a Transactor's refusal of ops that name the file at path
// twice, by one spelling or two (a link to a directory on the way).
func ChangedTwice(path string) *fault.Error {
	return fault.InvalidArgument("a transaction changes the file twice.").WithPath(path).
		WithHint("make one change per file, with its final content").WithCause(ErrChangedTwice)
}
