package subcommands

import (
	"runtime"

	"github.com/urfave/cli/v2"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version as JSON",
		Action: func(c *cli.Context) error {
			return outputOf(c).result(map[string]string{
				"version": Version,
				"go":      runtime.Version(),
				"os":      runtime.GOOS,
				"arch":    runtime.GOARCH,
			}, nil)
		},
	}
}
