package subcommands

import (
	"testing"

	"github.com/agentfs/agentfs/fault"
)

func TestExitCodes(t *testing.T) {
	for c, want := range map[fault.Code]int{fault.CodeInvalidArgument: 2, fault.CodeInvalidRegex: 2, fault.CodeInvalidGlob: 2, fault.CodePatchParse: 2, fault.CodeNotFound: 1, fault.CodeStale: 3, fault.CodeExists: 3, fault.CodeLockTimeout: 3, fault.CodeInterrupted: 130, fault.CodeIOError: 1} {
		if got := exitCode(c); got != want {
			t.Errorf("%s exit %d, want %d", c, got, want)
		}
	}
}
