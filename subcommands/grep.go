package subcommands

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/core"
)

func grepCommand() subcommand {
	return tool[core.GrepRequest, *core.GrepResult]{
		name:      "grep",
		usage:     "search file contents below a path, honouring ignore files, a page at a time",
		argsUsage: "QUERY [PATH...]",
		multi:     true,
		run: func(ctx context.Context, t *core.Tools, req *core.GrepRequest) (*core.GrepResult, error) {
			return t.Grep(ctx, *req)
		},
		text: grepText,
		next: grepNext,
		paths: func(r *core.GrepResult) []string {
			out := make([]string, len(r.Files))
			for i, f := range r.Files {
				out[i] = rawPath(f.Path, f.PathBase64)
			}
			return out
		},
		found: func(r *core.GrepResult) (bool, bool) {
			return r.Count > 0, r.TimedOut
		},
	}
}

// grepText renders a page as rg -n does: path:line:text for a matching
// line, path-line-text for a context line and -- between blocks when there
// is context; as rg -l in files mode (paths) and rg -c in count mode
// (path:count, then the totals).
func grepText(r *core.GrepResult) (string, string) {
	var b, notes strings.Builder
	withContext := false
	for _, f := range r.Files {
		for _, bl := range f.Blocks {
			withContext = withContext || bl.Matches != nil
		}
	}
	blocks := 0
	for _, f := range r.Files {
		switch r.Mode {
		case core.ModeFiles:
			fmt.Fprintf(&b, "%s\n", f.Path)
		case core.ModeCount:
			fmt.Fprintf(&b, "%s:%d\n", f.Path, f.Count)
		}
		for _, bl := range f.Blocks {
			if blocks++; withContext && blocks > 1 {
				b.WriteString("--\n")
			}
			m := bl.Matches
			for i, text := range bl.Lines {
				n, sep := bl.Start+i, ":"
				if bl.Matches != nil {
					if len(m) > 0 && m[0] == n {
						m = m[1:]
					} else {
						sep = "-"
					}
				}
				fmt.Fprintf(&b, "%s%s%d%s%s\n", f.Path, sep, n, sep, text)
			}
		}
	}
	if r.FilesWithMatches != nil {
		fmt.Fprintf(&notes, "... %d matching lines in %d file(s)\n", r.Count, *r.FilesWithMatches)
	}
	if r.TimedOut {
		fmt.Fprintf(&notes, "... timed out: %s\n", r.Hint)
	}
	if r.BinarySkipped > 0 {
		fmt.Fprintf(&notes, "... %d binary file(s) skipped\n", r.BinarySkipped)
	}
	return b.String(), notes.String()
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
