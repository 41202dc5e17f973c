// Package core holds what agentfs is, independent of where files live: the
// request and result types of every tool and the tools themselves. core
// never touches the disk: every byte comes through the contract of package
// backend, so a backend other than the local directory fits without
// changing a tool.
package core

import (
	"time"

	"github.com/agentfs/agentfs/assets"
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
	// Assets is publish's target; nil leaves publish NOT_CONFIGURED.
	Assets assets.Store
	// PublishMaxSize bounds the file publish takes (0 means
	// DefaultPublishMaxSize).
	PublishMaxSize int64
	// Progress, when set, is told how many bytes of a publish have gone out.
	Progress func(done, total int64)
}

func (t *Tools) maxBytes() int {
	if t.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return t.MaxBytes
}
