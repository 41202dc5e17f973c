package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func writeCommand() subcommand {
	return tool[core.WriteRequest, *core.WriteResult]{
		Def:       registry.Write,
		argsUsage: "FILE",
		fromFlags: contentFromStdin,
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
			WithHint(core.TooLargeToWriteHint)
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
