package subcommands

import (
	"fmt"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"
)

func readCommand() subcommand {
	return tool[core.ReadRequest, *core.ReadResult]{
		Def:       registry.Read,
		argsUsage: "FILE...",
		multi:     true,
		next:      readNext,
	}
}

// readNext moves a read to the window after r.
func readNext(req *core.ReadRequest, r *core.ReadResult) (string, bool) {
	if r.TextWindow == nil || !r.Truncated || r.NextOffset == nil || r.NextByteOffset == nil {
		return "", false
	}
	// The next window is of this version of the file, or STALE: --all
	// joined the pages of two files (a file replaced between them), exit
	// 0, and one that shrank gave a usage error for offsets never typed.
	req.Offset, req.ByteOffset, req.ExpectedVersion = *r.NextOffset, *r.NextByteOffset, r.Version
	flags := fmt.Sprintf("--offset %d --byte-offset %d", *r.NextOffset, *r.NextByteOffset)
	if r.Version != "" {
		flags += " --expected-version " + r.Version
	}
	return flags, true
}
