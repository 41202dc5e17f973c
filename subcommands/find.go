package subcommands

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/core"
)

func findCommand() subcommand {
	return tool[core.FindRequest, *core.FindResult]{
		name:      "find",
		usage:     "find paths by glob below a directory, honouring ignore files, a page at a time",
		argsUsage: "[PATTERN] [DIR]",
		run: func(ctx context.Context, t *core.Tools, req *core.FindRequest) (*core.FindResult, error) {
			return t.Find(ctx, *req)
		},
		text: dataOnly(findText),
		next: func(req *core.FindRequest, r *core.FindResult) (string, bool) {
			return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
		},
		paths: func(r *core.FindResult) []string {
			out := make([]string, len(r.Results))
			for i, e := range r.Results {
				out[i] = rawPath(e.Path, e.PathBase64)
			}
			return out
		},
		found: func(r *core.FindResult) (bool, bool) {
			return len(r.Results) > 0, false
		},
	}
}

// findText renders one path a line, / after a directory and @ after a
// link, as ls -F marks them.
func findText(r *core.FindResult) string {
	var b strings.Builder
	for _, e := range r.Results {
		fmt.Fprintf(&b, "%s%s\n", e.Path, typeSuffix(e.Type))
	}
	return b.String()
}
