package subcommands

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// oneShotGC is the collector's target (GOGC) for a call that answers once: its
// heap dies with the process a few milliseconds later, so collecting at
// twice the live heap, Go's default, is work thrown away. An indexed grep
// of 46,000 files took 82 ms of CPU with the default and 51 ms with 400,
// at the same peak RSS, 39 MB (bench/index.md). Long-lived calls (batch,
// mcp, serve) and index builds, whose heap is large, keep the default, as
// does a GOGC the caller set.
const oneShotGC = 400

// Run is the process entry point: Main on the real streams, cancelled by
// SIGINT or SIGTERM (the error is then INTERRUPTED, exit code 130).
func Run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, set := os.LookupEnv("GOGC"); !set && !largeHeap[calledName(os.Args[1:], globalFlags())] {
		debug.SetGCPercent(oneShotGC)
	}
	return Main(ctx, os.Args[1:], Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}

// largeHeap are the commands that keep Go's default GOGC: they serve many
// requests, or build an index in hundreds of megabytes.
var largeHeap = map[string]bool{"batch": true, "mcp": true, "serve": true, "index": true}
