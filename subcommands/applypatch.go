package subcommands

import (
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func applyPatchCommand() subcommand {
	return tool[core.ApplyPatchRequest, *core.ApplyPatchResult]{
		Def:       registry.ApplyPatch,
		argsUsage: "< PATCH",
		fromFlags: patchFromStdin,
	}
}

// patchFromStdin reads the patch from standard input when no flag gives
// it (or --patch-file - does), as Codex's apply_patch takes it. A terminal
// is never read (it would wait for a patch typed by hand), and an empty or
// closed stdin is no patch, refused: nothing is changed.
func patchFromStdin(c *cli.Context, req *core.ApplyPatchRequest) error {
	if req.Patch != "" || req.PatchFile != "" && req.PatchFile != "-" {
		return nil
	}
	stdin := streamsOf(c).Stdin
	if req.PatchFile == "" && isTerminal(stdin) {
		return fault.InvalidArgument("no patch is given, and standard input is a terminal.").
			WithHint("pipe the patch to agentfs apply-patch, or pass --patch-file FILE")
	}
	data, err := readInput(c.Context, stdin, core.MaxPatchBytes)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return fault.InvalidArgument("standard input is empty (or closed): no patch is given.").
			WithHint("pipe the patch to agentfs apply-patch, or pass --patch-file FILE; nothing was changed")
	}
	req.Patch, req.PatchFile = string(data), ""
	return nil
}
