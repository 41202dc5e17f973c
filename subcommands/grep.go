package subcommands

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/core"
	"github.com/urfave/cli/v2"
)

func grepCommand() *cli.Command {
	return tool[core.GrepRequest, *core.GrepResult]{
		name:      "grep",
		usage:     "search file contents below a path, honouring ignore files, a page at a time",
		argsUsage: "QUERY [PATH]",
		run: func(ctx context.Context, t *core.Tools, req *core.GrepRequest) (*core.GrepResult, error) {
			return t.Grep(ctx, *req)
		},
		text: grepText,
	}.command()
}

// grepText renders matches as grep -n does: path:line:text, and path-line-text
// for context lines.
func grepText(r *core.GrepResult) string {
	var b strings.Builder
	for _, m := range r.Matches {
		if len(m.Context) == 0 {
			fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
			continue
		}
		for _, l := range m.Context {
			sep := "-"
			if l.IsMatch {
				sep = ":"
			}
			fmt.Fprintf(&b, "%s%s%d%s%s\n", m.Path, sep, l.Line, sep, l.Text)
		}
		b.WriteString("--\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "%s:%d\n", f.Path, f.Count)
	}
	if r.Mode == core.ModeCount {
		fmt.Fprintf(&b, "%d\n", r.Count)
	}
	if r.TimedOut {
		fmt.Fprintf(&b, "... timed out: %s\n", r.Hint)
	}
	if r.BinarySkipped > 0 {
		fmt.Fprintf(&b, "... %d binary file(s) skipped\n", r.BinarySkipped)
	}
	if r.NextOffset != nil && !(r.TimedOut && r.Count == 0) {
		fmt.Fprintf(&b, "... more: --offset %d\n", *r.NextOffset)
	}
	return b.String()
}
