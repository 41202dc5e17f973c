// Command agentfs is the agentfs binary; everything but the process exit
// lives in package subcommands.
package main

import (
	"os"

	"github.com/agentfs/agentfs/subcommands"
)

func main() {
	os.Exit(subcommands.Run())
}
