package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func editCommand() *cli.Command {
	return tool[core.EditRequest, *core.EditResult]{
		Def:       registry.Edit,
		argsUsage: "FILE",
	}.command()
}
