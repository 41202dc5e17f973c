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
			return r.Count > 0 || r.Matched, r.TimedOut || r.Unreadable > 0
		},
		pageBreak: grepPageBreak,
	}
}

// grepNext moves a search to the page after r; a timed-out page that
// found nothing and has no cursor, or gave back the cursor it was given
// (cut short before the cursor's file), has none: it would search the same
// files again, and --all did so for ever, each page timing out where the
// one before did.
func grepNext(req *core.GrepRequest, r *core.GrepResult) (string, bool) {
	if r.TimedOut && r.Count == 0 && (r.NextCursor == "" || r.NextCursor == req.Cursor) {
		return "", false
	}
	return walkPage(&req.Offset, &req.Cursor, r.NextOffset, r.NextCursor)
}

// grepPageBreak is the -- that rg -n -C prints between two blocks with
// context, when the last of prev and the first of next are two: in two
// files, or apart (rg joins a block that starts on the line after
// another's end).
func grepPageBreak(prev, next *core.GrepResult) string {
	if len(prev.Files) == 0 || len(next.Files) == 0 {
		return ""
	}
	pf, nf := prev.Files[len(prev.Files)-1], next.Files[0]
	if len(pf.Blocks) == 0 || len(nf.Blocks) == 0 {
		return ""
	}
	pb, nb := pf.Blocks[len(pf.Blocks)-1], nf.Blocks[0]
	if next.Context == 0 && pb.Matches == nil && nb.Matches == nil {
		// Without context (a block of matches alone lists none) rg prints
		// no --. With it, rg does even between two blocks that hold no
		// context line (a page whose matches' context the page before
		// gave), which --all left out at small pages.
		return ""
	}
	if pf.Path == nf.Path && pf.PathBase64 == nf.PathBase64 && nb.Start <= pb.Start+len(pb.Lines) {
		return ""
	}
	return "--\n"
}
