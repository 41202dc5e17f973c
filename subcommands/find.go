package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
)

func findCommand() subcommand {
	return tool[core.FindRequest, *core.FindResult]{
		Def:       registry.Find,
		argsUsage: "[PATTERN] [DIR]",
		next: func(req *core.FindRequest, r *core.FindResult) (string, bool) {
			return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
		},
		paths: func(r *core.FindResult) []string {
			out := make([]string, len(r.Results))
			for i, e := range r.Results {
				out[i] = fault.PathBytes(e.Path, e.PathBase64)
			}
			return out
		},
		found: func(r *core.FindResult) (bool, bool) {
			return len(r.Results) > 0 || r.Matched, r.Unreadable > 0
		},
	}
}
