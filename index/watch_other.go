//go:build !linux

package index

import (
	"context"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Watch needs inotify: elsewhere a search proves freshness by its stat
// pass alone.
func Watch(ctx context.Context, w backend.Walker, path, abs string, opts WatchOptions) error {
	return fault.Errorf(fault.CodeNotSupported, "index --watch needs Linux's inotify.").
		WithHint("run agentfs index without --watch; every search then proves freshness by a stat pass")
}
