package subcommands

import (
	"context"
	"fmt"

	"github.com/agentfs/agentfs/core"
)

func rmCommand() subcommand {
	return tool[core.RmRequest, *core.RmResult]{
		name:      "rm",
		usage:     "remove a file, a link or (with --recursive) a directory; a missing path succeeds",
		argsUsage: "PATH...",
		multi:     true,
		run: func(ctx context.Context, t *core.Tools, req *core.RmRequest) (*core.RmResult, error) {
			return t.Rm(ctx, *req)
		},
		text: dataOnly(rmText),
	}
}

func rmText(r *core.RmResult) string {
	if r.Deleted {
		return fmt.Sprintf("%s: removed\n", r.Path)
	}
	return fmt.Sprintf("%s: not there, nothing removed\n", r.Path)
}
