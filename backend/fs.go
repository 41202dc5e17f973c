package backend

import (
	"context"

	"io"

	"time"
)

// FileType is what a directory entry is, after lstat (links are not followed).
type FileType uint8

// File types.
const (
	TypeFile FileType = iota
	TypeDir
	TypeSymlink
	// TypeOther is a FIFO, socket or device: never opened for reading.
	TypeOther
)

func (t FileType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	}
	return "other"
}

// Noun is the type in prose, after "a": an error's words, where String
// is the JSON's ("a other" said nothing of a FIFO).
func (t FileType) Noun() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "directory"
	case TypeSymlink:
		return "symbolic link"
	}
	return "special file (a FIFO, socket or device)"
}

// EntryType is the type field of an entry in ls and find output: dir,
// symlink or other, and "" (left out) for a regular file, the common case.
func (t FileType) EntryType() string {
	if t == TypeFile {
		return ""
	}
	return t.String()
}

// MaxVersionBytes bounds FileInfo.Version, so that a mutation can size its
// result before it writes, when the new version is not yet known.
const MaxVersionBytes = 64

// VersionSizer is the optional capability of a backend whose versions
// are shorter than MaxVersionBytes: a result sized before a write (when
// the new version is not yet known) reserves that much, not 64 bytes a
// file, which refused a patch of many files whose result fitted.
type VersionSizer interface {
	VersionBytes() int
}

// VersionBytes is the most bytes a version of fs takes.
func VersionBytes(fs FS) int {
	if vs, ok := fs.(VersionSizer); ok {
		return vs.VersionBytes()
	}
	return MaxVersionBytes
}

// FileInfo is what a backend knows of one file. Version is opaque: it changes
// whenever the content may have changed (for the local backend: device,
// inode, size, mtime and ctime), so that a caller can detect a lost update.
// It is printable ASCII of at most MaxVersionBytes bytes.
type FileInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
	// ChangeTime is the last change of the file's content or metadata
	// (ctime), where the backend knows it (zero elsewhere). Unlike
	// ModTime, no call sets it back (tar, cp -p and rsync -a set mtime):
	// it tells a file changed just now.
	ChangeTime time.Time
	Type       FileType
	// Mode is the permission bits, on a backend that is a Moder.
	Mode    uint32
	Version string
	// Target is a link's text, as readlink gives it, when the info comes
	// from a walk entry's Info; empty otherwise.
	Target string
}

// RacySlack bounds the granularity of file timestamps: a change within it
// of a stat may leave the times that stat gave, so times that recent prove
// nothing of what is read after the stat. The content index, the walk's
// memo of listings and read's memo of line counts go by it.
const RacySlack = 2 * time.Second

// FileReader is one open file: a stream of its bytes from the start, and
// ReadAt at any offset without moving the stream, as io.ReaderAt does (an
// object store serves it with a ranged GET of the version Info describes).
// Info describes the very file being read, not a later one at the same
// path, so everything read through one FileReader is of that one version:
// read's continuations and tails come from ReadAt at a cost independent of
// the file's size.
type FileReader interface {
	io.ReadCloser
	io.ReaderAt
	Info() FileInfo
}

// ReadAheader is the optional capability of a FileReader that fetches
// its stream in requests over the network (an object store's ranged
// GETs), each larger than the last, for a caller that may stop early:
// ReadAhead says the caller will read the stream on to offset end, so
// that the reader may fetch those bytes in one request.
type ReadAheader interface {
	ReadAhead(end int64)
}

// ReadAhead is r's ReadAhead, when it has one.
func ReadAhead(r FileReader, end int64) {
	if a, ok := r.(ReadAheader); ok {
		a.ReadAhead(end)
	}
}

// KnownOpener is the optional capability of a backend that opens a file
// with fewer requests (an object store's HEAD) given info, what a Stat of
// path in this call answered: OpenKnown is Open, and may read a later
// version than info's when the file changed since (as Open would).
type KnownOpener interface {
	OpenKnown(ctx context.Context, path string, info FileInfo) (FileReader, error)
}

// OpenKnown is fsys's OpenKnown, else its Open.
func OpenKnown(ctx context.Context, fsys FS, path string, info FileInfo) (FileReader, error) {
	if k, ok := fsys.(KnownOpener); ok {
		return k.OpenKnown(ctx, path, info)
	}
	return fsys.Open(ctx, path)
}

// Moder is the optional capability of a backend whose files have POSIX
// permission bits: FileInfo.Mode is theirs, and WriteOptions.Executable
// makes a new file executable (localfs: 0777 less the umask, memfs: 0755).
// ls --long shows a mode only on such a backend; an object store has none
// to show.
type Moder interface {
	HasModes() bool
}

// DirPage is one page of a directory listing, in name order.
type DirPage struct {
	Entries []FileInfo
}

// FS is the read side of the file-system contract. Every byte the tools see
// comes through it, so that a backend other than the local disk (an object
// store) serves the same tools. Paths are the caller's spelling; the backend
// resolves them against its roots and returns *Error values with stable codes
// (NOT_FOUND, OUTSIDE_ROOT, DENIED, SYMLINK, NOT_REGULAR...).
type FS interface {
	// Stat follows a final link that the link policy allows.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Lstat describes the path itself, a link included.
	Lstat(ctx context.Context, path string) (FileInfo, error)
	// Open opens the regular file for reading: a stream from its start and
	// ReadAt at any offset, both of the one version Info describes. A FIFO,
	// socket or device is NOT_REGULAR, answered without blocking.
	Open(ctx context.Context, path string) (FileReader, error)
	// ReadDir returns entries [offset, offset+limit) of a directory in name
	// order, links described, not followed. A page may hold fewer while
	// more follow (an entry gone or found denied once the page was cut):
	// the listing ends at an empty page.
	ReadDir(ctx context.Context, path string, offset, limit int) (DirPage, error)
	// Display is the spelling of path in output: relative to the base where
	// relative paths start (the working directory when it lies in a root,
	// else the first root), absolute otherwise, so it can be passed back.
	Display(path string) string
}
