package subcommands

import "github.com/agentfs/agentfs/fault"

// Exit codes of the contract. They belong to the command line: fault and
// core report codes, and only a process has an exit status.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitConflict    = 3
	ExitInterrupted = 130
	// With --exit-status, for gates: nothing matched (as grep says it), and
	// an answer that is partial (timed out), which must never pass a gate.
	ExitNoMatch = 1
	ExitPartial = 4
	// ExitSearchFailed is a search's failure under --exit-status: 2, as
	// grep and ripgrep say an error, so that 1 says only that nothing
	// matched. A misspelt path failed NOT_FOUND, exit 1, and passed the
	// gate "must find nothing".
	ExitSearchFailed = 2
)

// exitCode is the process exit code the contract gives to an error code.
func exitCode(c fault.Code) int {
	switch c {
	case fault.CodeInvalidArgument, fault.CodeInvalidRegex, fault.CodeInvalidGlob, fault.CodePatchParse:
		return ExitUsage
	case fault.CodeStale, fault.CodeExists, fault.CodeLockTimeout:
		return ExitConflict
	case fault.CodeInterrupted:
		return ExitInterrupted
	}
	return ExitFailure
}

// gatedExitCode is exitCode under --exit-status for a tool that gates:
// a failure is never taken for "nothing matched".
func gatedExitCode(c fault.Code) int {
	if n := exitCode(c); n != ExitFailure {
		return n
	}
	return ExitSearchFailed
}
