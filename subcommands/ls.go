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
		found: func(r *core.LsResult) (bool, bool) {
			return len(r.Entries) > 0, r.Unreadable > 0
		},
	}
}
