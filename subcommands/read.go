package subcommands

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentfs/agentfs/core"
	"github.com/urfave/cli/v2"
)

func readCommand() *cli.Command {
	return tool[core.ReadRequest, *core.ReadResult]{
		name:      "read",
		usage:     "read a window of lines of a text file, or an image or PDF",
		argsUsage: "FILE",
		run: func(ctx context.Context, t *core.Tools, req *core.ReadRequest) (*core.ReadResult, error) {
			return t.Read(ctx, *req)
		},
		text: readText,
	}.command()
}

// readText renders a read for --format text: the content as it is, then
// how to continue when there is more; media and binaries are described,
// since their bytes are no use on a terminal.
func readText(r *core.ReadResult) string {
	if r.TextWindow == nil {
		if r.Data == "" {
			return fmt.Sprintf("[%s %s, %d bytes: not text]\n", r.Kind, r.MimeType, r.Size)
		}
		return fmt.Sprintf("[%s %s, %d bytes: use --format json for the data]\n", r.Kind, r.MimeType, r.Size)
	}
	var b strings.Builder
	b.WriteString(r.Content)
	if (r.Truncated || r.LinesCut > 0) && r.Content != "" && !strings.HasSuffix(r.Content, "\n") {
		b.WriteByte('\n')
	}
	if r.LinesCut > 0 {
		fmt.Fprintf(&b, "... %d line(s) cut: --line-truncation chars:0 gives whole lines\n", r.LinesCut)
	}
	if r.Truncated {
		fmt.Fprintf(&b, "... more: --offset %d --byte-offset %d\n", *r.NextOffset, *r.NextByteOffset)
	}
	return b.String()
}
