package subcommands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentfs/agentfs/core"
)

func lsCommand() subcommand {
	return tool[core.LsRequest, *core.LsResult]{
		name:      "ls",
		usage:     "list a directory (or with --depth a bounded tree), a page at a time, in name order",
		argsUsage: "[DIR]",
		run: func(ctx context.Context, t *core.Tools, req *core.LsRequest) (*core.LsResult, error) {
			return t.Ls(ctx, *req)
		},
		text: dataOnly(lsText),
		next: func(req *core.LsRequest, r *core.LsResult) (string, bool) {
			return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
		},
	}
}

// lsText renders a listing for --format text, as ls -F does: one entry a
// line (its path with a depth), / after a directory and @ after a link,
// whose target follows ->. With --long, mode, size and mtime come first, as
// in ls -l.
func lsText(r *core.LsResult) string {
	var b strings.Builder
	width := 0
	for _, e := range r.Entries {
		width = max(width, len(strconv.FormatInt(e.Size, 10)))
	}
	for _, e := range r.Entries {
		if e.Mode != "" {
			fmt.Fprintf(&b, "%s %*d %s ", e.Mode, width, e.Size, e.Mtime)
		}
		name := e.Name
		if e.Path != "" {
			name = e.Path
		}
		b.WriteString(name)
		b.WriteString(typeSuffix(e.Type))
		if e.Type == "symlink" {
			b.WriteString(" -> " + e.Target)
		}
		if e.Ignored {
			b.WriteString("  (ignored)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// typeSuffix is ls -F's mark of an entry type: / for a directory, @ for a
// link, nothing for a regular file or another kind.
func typeSuffix(typ string) string {
	switch typ {
	case "dir":
		return "/"
	case "symlink":
		return "@"
	}
	return ""
}
