package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func rmCommand() *cli.Command {
	return tool[core.RmRequest, *core.RmResult]{
		Def:       registry.Rm,
		argsUsage: "PATH...",
		multi:     true,
	}.command()
}
