package subcommands

import (
	"context"
	"fmt"

	"github.com/agentfs/agentfs/core"
)

func readCommand() subcommand {
	return tool[core.ReadRequest, *core.ReadResult]{
		name:      "read",
		usage:     "read a window of lines of a text file, or an image or PDF",
		argsUsage: "FILE...",
		multi:     true,
		run: func(ctx context.Context, t *core.Tools, req *core.ReadRequest) (*core.ReadResult, error) {
			return t.Read(ctx, *req)
		},
		text: readText,
		next: readNext,
	}
}

// readText renders a read for --format text: the content as it is, then
// how to continue when there is more; media and binaries are described,
// since their bytes are no use on a terminal.
func readText(r *core.ReadResult) (string, string) {
	if r.TextWindow == nil {
		if r.Data == "" {
			return "", fmt.Sprintf("[%s %s, %d bytes: not text]\n", r.Kind, r.MimeType, r.Size)
		}
		return "", fmt.Sprintf("[%s %s, %d bytes: use --format json for the data]\n", r.Kind, r.MimeType, r.Size)
	}
	var notes string
	if r.LinesCut > 0 {
		notes = fmt.Sprintf("... %d line(s) cut: --line-truncation chars:0 gives whole lines\n", r.LinesCut)
	}
	return r.Content, notes
}

// readNext moves a read to the window after r.
func readNext(req *core.ReadRequest, r *core.ReadResult) (string, bool) {
	if r.TextWindow == nil || !r.Truncated || r.NextOffset == nil || r.NextByteOffset == nil {
		return "", false
	}
	req.Offset, req.ByteOffset = *r.NextOffset, *r.NextByteOffset
	return fmt.Sprintf("--offset %d --byte-offset %d", *r.NextOffset, *r.NextByteOffset), true
}
