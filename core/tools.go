// Package core holds what agentfs is, independent of where files live: the
// request and result types of every tool and the tools themselves. core
// never touches the disk: every byte comes through the contract of package
// backend, so a backend other than the local directory fits without
// changing a tool.
package core

import (
	"context"
	"time"

	"github.com/agentfs/agentfs/backend"
)

// DefaultMaxBytes bounds every result, in bytes of JSON, unless --max-bytes
// says otherwise.
const DefaultMaxBytes = 256 << 10

// Tools runs requests against one backend with the global settings.
type Tools struct {
	FS backend.
		// MaxBytes bounds each result (0 means DefaultMaxBytes).
		FS

	MaxBytes int
	// ReadOnly refuses every mutation with READ_ONLY.
	ReadOnly bool
	// LockTimeout is how long a mutation waits for its locks.
	LockTimeout time.Duration
	// Commits, when set, is passed by every mutation at its point of no
	// return (see CommitGate).
	Commits *CommitGate
	// Index, when set, narrows grep to the files that may match.
	Index ContentIndex
}

// ContentIndex is a content index grep consults (package index). Narrow
// returns, for a search of the directory path, a test of each file the walk
// visits (rel to path, with its info from the walk): skip when the index
// proves the file cannot match, binary when it proves the file binary. nil
// when it cannot narrow this search: every file is read.
type ContentIndex interface {
	Narrow(ctx context.Context, path, query string, isRegex, ignoreCase bool) (func(rel string, info backend.FileInfo) (skip, binary bool), error)
}

func (t *Tools) maxBytes() int {
	if t.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return t.MaxBytes
}
