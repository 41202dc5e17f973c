package subcommands

import (
	"unsafe"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/urfave/cli/v2"
)

func applyPatchCommand() subcommand {
	return tool[core.ApplyPatchRequest, *core.ApplyPatchResult]{
		Def:       registry.ApplyPatch,
		argsUsage: "--patch-file - < PATCH | PATCH",
		fromFlags: patchFromStdin,
	}
}

// patchFromStdin reads the patch from standard input when --patch-file -
// asks for it, as gh's --body-file - does: stdin is never read
// implicitly, so a harness that leaves it open cannot hang a call. No
// patch given is refused, and so is an empty or closed stdin: nothing is
// changed.
func patchFromStdin(c *cli.Context, req *core.ApplyPatchRequest) error {
	if req.Patch != "" || req.PatchFile != "" && req.PatchFile != "-" {
		return nil
	}
	if req.PatchFile == "" {
		return fault.InvalidArgument("no patch is given.").
			WithHint("pass --patch-file - to read it from standard input (agentfs apply-patch --patch-file - <<'EOF'), --patch-file FILE or --patch TEXT")
	}
	data, err := readInput(c.Context, streamsOf(c).Stdin, core.MaxPatchBytes)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return fault.InvalidArgument("standard input is empty (or closed): no patch is given.").
			WithHint("pipe the patch to agentfs apply-patch --patch-file -, or pass --patch-file FILE; nothing was changed")
	}
	// The bytes read, which nothing else holds or writes, not a copy:
	// an 8 MB patch was held twice.
	req.Patch, req.PatchFile = unsafe.String(&data[0], len(data)), ""
	return nil
}
