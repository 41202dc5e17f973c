package subcommands

import (
	"context"
	"fmt"

	"github.com/agentfs/agentfs/core"
)

func editCommand() subcommand {
	return tool[core.EditRequest, *core.EditResult]{
		name:      "edit",
		usage:     "replace text in a file: --old-text TEXT --new-text TEXT (or --old, --new), or several edits with --json",
		argsUsage: "FILE",
		run: func(ctx context.Context, t *core.Tools, req *core.EditRequest) (*core.EditResult, error) {
			return t.Edit(ctx, *req)
		},
		text: dataOnly(editText),
	}
}

// editText renders an edit for --format text: the diff, as git prints it.
func editText(r *core.EditResult) string {
	switch {
	case r.NoChange:
		return fmt.Sprintf("%s: unchanged (every edit was already applied)\n", r.Path)
	case r.DryRun:
		return r.Diff + fmt.Sprintf("%s: dry run, nothing written\n", r.Path)
	}
	return r.Diff
}
