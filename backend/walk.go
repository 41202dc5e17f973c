package backend

import (
	"context"
	"errors"
	"io"
)

// Walker is the tree walk a backend offers to find and grep (and later to
// rm -r and publish). core never walks a directory itself: confinement, deny
// roots and ignore files are the backend's business, so that every tool sees
// the same tree.
type Walker interface {
	// Walk visits every entry below the directory path, depth-first, the
	// entries of each directory in byte order of their names, so that the
	// order is the same on every run. The directory itself is not visited.
	// visit returning ErrSkipDir for a directory skips its contents; returning
	// ErrStopWalk (or any error) ends the walk, and Walk returns that error
	// unless it is ErrStopWalk. Links are reported, never followed.
	Walk(ctx context.Context, path string, opts WalkOptions, visit func(WalkEntry) error) error
}

// RemoteReader is the optional capability of a backend whose reads wait on
// the network (an object store): a search then keeps this many opens in
// flight, more than it has processors, since they mostly wait.
type RemoteReader interface {
	ReadsInFlight() int
}

// WalkOptions are what a caller can change of a walk.
type WalkOptions struct {
	// NoIgnore turns off .gitignore, .ignore, .git/info/exclude and
	// .agentfsignore. .git/ is skipped in any case.
	NoIgnore bool
	// Exclude prunes entries whose path relative to the start (or, for a
	// pattern without a slash, whose name) matches one of these globs.
	Exclude []string
	// ExcludeBase is the start as the answers spell it (FS.Display; "" or
	// "." for the root): a glob of Exclude that starts with **/ is matched
	// against ExcludeBase/rel, as rg -g takes it (ignore.FromRoot), so
	// that **/src/*.go leaves out src/main.go of a walk of src.
	ExcludeBase string
	// ShowIgnored visits, with Ignored set, the entries a search leaves
	// out: those the ignore files name, .git and a write's temporary files.
	// The walk never descends into such a directory.
	ShowIgnored bool
	// From resumes a walk: entries before the one at this path (relative
	// to the start, / separators) in walk order are not visited, nor are
	// their directories listed, so that a late page of a search costs what
	// the first costs. The entry itself is visited when it still exists;
	// when it is gone the walk goes on from where it would be.
	From string
	// RulesRead, when set, is called with the Version of each ignore file
	// the walk reads its rules from, stat'ed as it is read, and of each
	// .git directory it finds (where a repository's rules start). A
	// content index records the ignore files whose rules its list obeys:
	// one that changed between the walk's read and the index's own stat
	// must not pass for the file the walk read. A backend may leave it
	// uncalled; the index then proves no rules.
	RulesRead func(version string)
	// RulesListed, when set, is called once for each directory the walk
	// lists, with its path relative to the start ("" for the start) and
	// the names of its entries that may hold rules (an ignore file, .git),
	// whatever they are, none too. A content index stats those alone: a
	// name made after the listing changes its directory, which a search
	// lists again. A directory it is not called for may hold any.
	RulesListed func(dir string, names []string)
	// Unreadable, when set, is called with the display path (and the path
	// relative to the start) of each directory the walk may not enter or
	// list (EACCES, EPERM), which it skips as ripgrep does, and of each
	// file a store lists under a name it does not hold (s3fs): a search
	// then says its answer is partial instead of passing a gate.
	Unreadable func(path, rel string)
	// LeftOut, when set, is called with the path relative to the start and
	// the Version of each directory the walk leaves out by what it is, not
	// by its name (a kernel file system mounted there, a deny root's bind
	// mount): a content index records it, since a mount taken off since
	// makes it another directory, which a walk enters.
	LeftOut func(rel, version string)
	// Stated says that the caller found the path a directory by a Stat
	// of this call: a backend whose own check would ask again (an object
	// store's HEAD and listing) may skip it, and then walks a directory
	// removed since as an empty one.
	Stated bool
}

// WalkEntry is one entry of a walk.
type WalkEntry struct {
	// Path is the entry's display path: it can be passed back as input.
	Path string
	// Rel is the path relative to the walk's start, with / separators.
	Rel  string
	Name string
	Type FileType
	// Ignored is set, under ShowIgnored, on an entry a search leaves out.
	Ignored bool
	// Info describes the entry itself (a link is not followed; its Target
	// is read), relative to its open parent directory. It is valid only
	// during the visit call; an entry gone since the listing is NOT_FOUND.
	Info func() (FileInfo, error)
	// Open reads the entry when it is a regular file, relative to its open
	// parent directory, never following a link. It is valid only during the
	// visit call.
	Open func() (io.ReadCloser, error)
	// Later, which a backend may leave nil, gives for a regular file an
	// Open that stays valid after the visit call and may run on another
	// goroutine, so that a pool of readers shares the cost of the opens:
	// the walk keeps what it needs (the open parent) until it is called, so
	// each one Later returns must be called exactly once.
	Later func() func() (io.ReadCloser, error)
}

// ErrSkipDir and ErrStopWalk steer a walk from visit.
var (
	ErrSkipDir  = errors.New("skip this directory")
	ErrStopWalk = errors.New("stop the walk")
)
