package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func mvCommand() subcommand {
	return tool[core.MvRequest, *core.MvResult]{
		Def:       registry.Mv,
		argsUsage: "FROM TO",
	}
}
