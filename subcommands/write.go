package subcommands

import (
	"context"
	"fmt"
	"os"

	"github.com/agentfs/agentfs/core"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

func writeCommand() *cli.Command {
	return tool[core.WriteRequest, *core.WriteResult]{
		name:      "write",
		usage:     "replace or create a whole file atomically (content from --content or stdin)",
		argsUsage: "FILE",
		run: func(ctx context.Context, t *core.Tools, req *core.WriteRequest) (*core.WriteResult, error) {
			return t.Write(ctx, *req)
		},
		fromFlags: writeContentFromStdin,
		text:      writeText,
	}.command()
}

// writeContentFromStdin gives a flags-form write its content from stdin when
// --content is not set. A terminal is refused at once: a person or a harness
// that forgot the content must not be left waiting for an end of file.
func writeContentFromStdin(c *cli.Context, req *core.WriteRequest) error {
	if req.Content != nil {
		return nil
	}
	in := streamsOf(c).Stdin
	if f, ok := in.(*os.File); in == nil || ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return core.InvalidArgument("write needs the content: --content is not given and stdin is a terminal.").
			WithHint("pass --content TEXT, or pipe the content: agentfs write FILE < source")
	}
	data, err := readInput(c.Context, in, core.MaxWriteBytes)
	if err != nil {
		return err
	}
	if len(data) > core.MaxWriteBytes {
		return core.Errorf(core.CodeTooLarge, "the content on stdin is over %d bytes (2 MiB).", core.MaxWriteBytes).
			WithPath(req.Path).WithDetail("limit", core.MaxWriteBytes).
			WithHint("write a smaller file, then grow it with edit")
	}
	content := string(data)
	req.Content = &content
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
