package subcommands

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/core"
	"github.com/urfave/cli/v2"
)

func lsCommand() *cli.Command {
	return tool[core.LsRequest, *core.LsResult]{
		name:      "ls",
		usage:     "list one directory, a page at a time, in name order",
		argsUsage: "[DIR]",
		run: func(ctx context.Context, t *core.Tools, req *core.LsRequest) (*core.LsResult, error) {
			return t.Ls(ctx, *req)
		},
		text: lsText,
	}.command()
}

// lsText renders a listing for --format text: one name a line, / after a
// directory and @ after a link, as ls -F does.
func lsText(r *core.LsResult) string {
	var b strings.Builder
	for _, e := range r.Entries {
		suffix := ""
		switch {
		case e.IsDirectory:
			suffix = "/"
		case e.IsSymbolicLink:
			suffix = "@"
		}
		fmt.Fprintf(&b, "%s%s\n", e.Name, suffix)
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&b, "... more: --offset %d\n", *r.NextOffset)
	}
	return b.String()
}
