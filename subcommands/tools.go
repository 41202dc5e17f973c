package subcommands

import (
	"bytes"
	"encoding/json"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

// toolList is what agentfs tools prints: the tool list an agent framework
// (or MCP's tools/list) takes.
type toolList struct {
	Tools []registry.Info `json:"tools"`
}

func toolsCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "tools",
		Usage: "print the name, description and request JSON Schema of every tool, as JSON",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("tools takes no arguments.").WithHint("run agentfs tools alone")
			}
			list := toolList{Tools: registry.List()}
			// Bounded as every result is: compact JSON and its newline.
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(list); err != nil {
				return err
			}
			if n, bound := b.Len(), c.Int("max-bytes"); n > bound {
				return fault.Errorf(fault.CodeTooLarge, "the tool list is %d bytes, over --max-bytes %d.", n, bound).
					WithDetail("maxBytes", bound).WithDetail("needed", n).
					WithHint("raise --max-bytes to %d or more", n)
			}
			return outputOf(c).result(list)
		},
	}}
}
