// Package core holds what agentfs is, independent of where files live: the
// request and result types of every tool and the tools themselves. core
// never touches the disk: every byte comes through the contract of package
// backend, so a backend other than the local directory fits without
// changing a tool.
package core

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/backend"
)

// DefaultMaxBytes bounds every result, in bytes of JSON, unless --max-bytes
// says otherwise.
const DefaultMaxBytes = 256 << 10

// Tools runs requests against one backend with the global settings.
type Tools struct {
	FS backend.FS
	// MaxBytes bounds each result (0 means DefaultMaxBytes).
	MaxBytes int
	// Framing is what of MaxBytes the caller's frame around each result
	// takes: batch's id and {"id":...,"result":}; Share, when above 1, how
	// many results share the rest (several paths in one call). Results
	// are sized within their share; a TOO_LARGE names MaxBytes, and the
	// bound that holds the result in its share (needed), as the caller
	// counts them.
	Framing, Share int
	// ReadOnly refuses every mutation with READ_ONLY.
	ReadOnly bool
	// ReadOnlyFix is how to leave read-only mode, as READ_ONLY's hint
	// says it: "run without --readonly" when empty.
	ReadOnlyFix string
	// LockTimeout is how long a mutation waits for its locks.
	LockTimeout time.Duration
	// Commits, when set, is passed by every mutation at its point of no
	// return (see CommitGate).
	Commits *CommitGate
	// Assets opens publish's target, at each publish; nil leaves publish
	// NOT_CONFIGURED.
	Assets assets.Opener
	// PublishMaxSize bounds the file publish takes (0 means
	// DefaultPublishMaxSize).
	PublishMaxSize int64
	// Progress, when set, is told how many bytes of a publish have gone out.
	Progress func(done, total int64)
	// Index, when set, narrows grep to the files that may match.
	Index ContentIndex
	// TextLinePrefix, when set, is the bytes of what a result printed as
	// text puts before each line grep shows (path:N: as rg -n): a page is
	// then sized for that text too, which repeats the path on each line
	// where the JSON has it once, so that it fits MaxBytes as well.
	TextLinePrefix func(path string, line int) int
	// LineCounts, when set, remembers the line counts of files read, so
	// that paging a file in one process counts its lines once.
	LineCounts *LineCounts
	// BeginRequest, when set, readies the backend for a request of a
	// long-lived session (batch, MCP), which outlives what a process
	// checks when it starts: it finishes or undoes the transactions of
	// writers that died, and fails while a root's name leads elsewhere
	// than the directory the session holds open.
	BeginRequest func(context.Context) error
}

// ContentIndex is a content index grep consults (package index).
type ContentIndex interface {
	// Narrow says what the index proves of a search of a directory; nil
	// when it cannot narrow it: every file is read.
	Narrow(ctx context.Context, q IndexQuery) (*Narrowing, error)
}

// IndexQuery is a search of a directory, as a content index sees it.
type IndexQuery struct {
	Path                string
	Query               string
	IsRegex, IgnoreCase bool
	NoIgnore            bool
	Exclude             []string
}

// Narrowing is what a content index proves of a search.
type Narrowing struct {
	// Judge tests a file the walk visits (rel to the search's path, with
	// its info from the walk).
	Judge func(rel string, info backend.FileInfo) Verdict
	// Files, when set, stands for the walk: every file it would visit, in
	// its order, each proven current (or not skipped); Unreadable are the
	// directories (rel) that walk could not read, which a page resumed by
	// cursor counts only past the cursor, as a walk from it meets them.
	Files      []IndexedFile
	Unreadable []string
	// Display is the search's path as a walk of it shows it, the start of
	// the paths of Files.
	Display string
}

// Verdict is what an index proves of a file it holds as it is now: Skip
// when it cannot match or is binary (Binary), and Text, of a file it
// skips, when it is UTF-8 without NUL: text to replace, which then counts
// the file searched without reading it.
type Verdict struct{ Skip, Binary, Text bool }

// IndexedFile is a file of a Narrowing's list. Open, when set, opens it
// (relative to its directory, proven unchanged); else, or when it returns
// ErrReopen, the backend does.
type IndexedFile struct {
	Rel string
	Verdict
	Open func() (io.ReadCloser, error)
	// Same, above 0, is shared by the files of the list that the index
	// proved held the same bytes (a content it indexed once, each file
	// unchanged since the build): a search reads one of them and gives
	// its result for the others, as a scan of each would find it. Still
	// (set with Same) reports whether the file is as the index holds it
	// now: a result is kept only when the file read still is after the
	// read, and given only to a file that still is; any other is read.
	Same  int
	Still func() bool
}

// ErrReopen is an IndexedFile's Open's error when it could not open the
// file as proven: the search opens it by its path instead, and that open's
// error (a file gone is skipped, EMFILE fails the search) is the answer.
// Never a skip of its own: the file may well be there.
var ErrReopen = errors.New("open the file by its path")

// maxBytes is the bound a result's JSON must fit.
func (t *Tools) maxBytes() int { return (t.bound() - t.Framing) / t.share() }

// share is how many results share the bound.
func (t *Tools) share() int { return max(t.Share, 1) }

// bound is --max-bytes, as the caller gave it.
func (t *Tools) bound() int {
	if t.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return t.MaxBytes
}

// raiseTo is the --max-bytes that holds a result of n bytes.
func (t *Tools) raiseTo(n int) int { return n*t.share() + t.Framing }
