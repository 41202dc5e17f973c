//go:build !linux

package index

import (
	"context"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// WatchOptions are a watcher's settings.
type WatchOptions struct {
	BuildOptions
	Ready func(Status)
	Quiet time.Duration
}

// Watch needs inotify: elsewhere a search proves freshness by its stat
// pass alone.
func Watch(ctx context.Context, w backend.Walker, path, abs string, opts WatchOptions) error {
	return fault.Errorf(fault.CodeNotSupported, "index --watch needs Linux's inotify.").
		WithHint("run agentfs index without --watch; every search then proves freshness by a stat pass")
}
