package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func replaceCommand() subcommand {
	return tool[core.ReplaceRequest, *core.ReplaceResult]{
		Def:       registry.Replace,
		argsUsage: "QUERY REPLACEMENT [PATH]",
	}
}
