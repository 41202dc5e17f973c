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
	req.Offset, req.ByteOffset = *r.NextOffset, *r.NextByteOffset
	return fmt.Sprintf("--offset %d --byte-offset %d", *r.NextOffset, *r.NextByteOffset), true
}
