package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
)

func grepCommand() subcommand {
	return tool[core.GrepRequest, *core.GrepResult]{
		Def:       registry.Grep,
		argsUsage: "QUERY [PATH...]",
		multi:     true,
		next:      grepNext,
		paths: func(r *core.GrepResult) []string {
			out := make([]string, len(r.Files))
			for i, f := range r.Files {
				out[i] = fault.PathBytes(f.Path, f.PathBase64)
			}
			return out
		},
		found: func(r *core.GrepResult) (bool, bool) {
			return r.Count > 0, r.TimedOut || r.Unreadable > 0
		},
	}
}

// grepNext moves a search to the page after r; a timed-out page that
// found nothing and has no cursor has none (it would search the same files
// again).
func grepNext(req *core.GrepRequest, r *core.GrepResult) (string, bool) {
	if r.TimedOut && r.Count == 0 && r.NextCursor == "" {
		return "", false
	}
	return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
}
