package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func lsCommand() subcommand {
	return tool[core.LsRequest, *core.LsResult]{
		Def:       registry.Ls,
		argsUsage: "[DIR]",
		next: func(req *core.LsRequest, r *core.LsResult) (string, bool) {
			return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
		},
		// ls matches nothing: an empty directory is an answer (a script's
		// `agentfs -q ls DIR`), and only a partial one fails a gate.
		found: func(r *core.LsResult) (bool, bool) {
			return true, r.Unreadable > 0
		},
	}
}
