package subcommands

import (
	"slices"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func toolsCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "tools",
		Usage: "print every tool's name, description, request and result JSON Schemas, as JSON, for agentfs, MCP, OpenAI or Anthropic",
		Flags: []cli.Flag{
			// The command's own --format, which reorderArgs gives it before
			// the global one: the list is JSON whatever its shape.
			&cli.StringFlag{Name: "format", Value: registry.Formats[0],
				Usage: "the list's shape: " + core.OrList(registry.Formats) + "; with --readonly, only the tools that change no file"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("tools takes no arguments.").WithHint("run agentfs tools alone")
			}
			if err := refusePaging(c, "tools", false, false); err != nil {
				return err
			}
			format := c.String("format")
			if !slices.Contains(registry.Formats, format) {
				return fault.InvalidArgument("--format must be %s, not %q.", core.OrList(registry.Formats), format).
					WithHint("use --format openai for OpenAI, anthropic for Anthropic, mcp for an MCP client's names")
			}
			list, err := registry.ListIn(format, c.Bool("readonly"))
			if err != nil {
				return err
			}
			o := outputOf(c)
			// The list is JSON whatever the global --format says.
			o.format = "json"
			return o.result(list)
		},
	}}
}
