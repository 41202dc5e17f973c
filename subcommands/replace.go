package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func replaceCommand() subcommand {
	return tool[core.ReplaceRequest, *core.ReplaceResult]{
		Def:       registry.Replace,
		argsUsage: "QUERY REPLACEMENT [PATH]",
		// A replace with no match is no failure; one that skipped what
		// it could not read, or left matches in files it skipped as
		// binary, is partial.
		found: func(r *core.ReplaceResult) (bool, bool) { return true, r.Unreadable > 0 || r.BinaryWithMatches > 0 },
	}
}
