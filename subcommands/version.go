package subcommands

import (
	"runtime"
	"runtime/debug"

	"github.com/agentfs/agentfs/fault"
	"github.com/urfave/cli/v2"
)

func versionCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "version",
		Usage: "print the version as JSON",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("version takes no arguments, not %q.", c.Args().First()).
					WithHint("run agentfs version")
			}
			if err := refusePaging(c, "version", false, false); err != nil {
				return err
			}
			return outputOf(c).result(buildVersion())
		},
	}}
}

// fixed is a subcommand without request flags: its header is the command.
type fixed struct{ c *cli.Command }

func (f fixed) command() *cli.Command { return f.c }

func (f fixed) header() *cli.Command { return f.c }

// ResultSchema is the version of the result shapes documented in the man
// page's RESULTS.
const ResultSchema = 2

// versionInfo is what version and --version print.
type versionInfo struct {
	Version string `json:"version"`
	// Schema numbers the shapes of the results; it changes when a field is
	// removed or changes meaning, not when one is added.
	Schema   int    `json:"schema"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// buildVersion is the release's stamp (-ldflags -X ...Version) or, for a
// source build, what the Go toolchain recorded: the module version (from
// go install module@version) and the VCS commit, so that any binary can be
// pinned to its source.
func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Schema: ResultSchema, Commit: Commit, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
