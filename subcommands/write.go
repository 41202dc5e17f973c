package subcommands

import (
	"context"
	"fmt"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/urfave/cli/v2"
)

func writeCommand() subcommand {
	return tool[core.WriteRequest, *core.WriteResult]{
		name:      "write",
		usage:     "replace or create a whole file atomically (content from --content or --content-file)",
		argsUsage: "FILE",
		run: func(ctx context.Context, t *core.Tools, req *core.WriteRequest) (*core.WriteResult, error) {
			return t.Write(ctx, *req)
		},
		fromFlags: contentFromStdin,
		text:      dataOnly(writeText),
	}
}

// contentFromStdin gives --content-file - its content: stdin is read only
// because the caller asked, as gh reads --body-file -. Given with --content,
// it is left for core to refuse the two sources. An empty (or closed) stdin
// is refused, never taken for an empty content: only an explicit empty
// --content empties a file.
func contentFromStdin(c *cli.Context, req *core.WriteRequest) error {
	if req.ContentFile != "-" || req.Content != nil {
		return nil
	}
	data, err := readInput(c.Context, streamsOf(c).Stdin, core.MaxWriteBytes)
	if err != nil {
		return err
	}
	if len(data) > core.MaxWriteBytes {
		return fault.Errorf(fault.CodeTooLarge, "the content on stdin is over %d bytes (2 MiB).", core.MaxWriteBytes).
			WithPath(req.Path).WithDetail("limit", core.MaxWriteBytes).
			WithHint("write a smaller file, then grow it with edit")
	}
	if len(data) == 0 {
		return fault.InvalidArgument("--content-file - found standard input empty (or closed): no content is given.").
			WithPath(req.Path).
			WithHint("pipe the content to agentfs, or pass --content '' to empty the file on purpose")
	}
	content := string(data)
	req.Content, req.ContentFile = &content, ""
	return nil
}

func writeText(r *core.WriteResult) string {
	switch {
	case r.NoChange:
		return fmt.Sprintf("%s: unchanged (already this content)\n", r.Path)
	case r.Created:
		return fmt.Sprintf("%s: created, %d bytes\n", r.Path, r.BytesWritten)
	}
	return fmt.Sprintf("%s: replaced, %d bytes\n", r.Path, r.BytesWritten)
}
