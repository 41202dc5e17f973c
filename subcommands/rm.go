package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func rmCommand() subcommand {
	return tool[core.RmRequest, *core.RmResult]{
		Def:       registry.Rm,
		argsUsage: "PATH...",
		multi:     true,
	}
}
