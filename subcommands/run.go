package subcommands

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Run is the process entry point: Main on the real streams, cancelled by
// SIGINT or SIGTERM (the error is then INTERRUPTED, exit code 130).
func Run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Main(ctx, os.Args[1:], Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}
