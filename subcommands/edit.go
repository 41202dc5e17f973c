package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func editCommand() subcommand {
	return tool[core.EditRequest, *core.EditResult]{
		Def:       registry.Edit,
		argsUsage: "FILE",
	}
}
