package subcommands

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
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
// SIGINT, SIGTERM or SIGHUP (the error is then INTERRUPTED, exit code 130).
func Run() int {
	// First, and never stopped: stopped as Run returned, a signal between
	// the answer and the exit took its default action and killed the
	// process, so that a write --append that printed its success exited
	// 130 (10 in 1,500 calls sent two SIGTERMs), and a caller trusting
	// the status would append again. The process exits as Run returns.
	ctx, _ := signal.NotifyContext(context.Background(), interrupts()...)
	// A reader that closed its end of stdout (or stderr) gives the write
	// EPIPE, which is IO_ERROR saying the call ran; SIGPIPE killed the
	// process silently (exit 141), a batch half done.
	signal.Ignore(syscall.SIGPIPE)
	if err := startPoller(); err != nil {
		return (&output{streams: Streams{Stdout: os.Stdout, Stderr: os.Stderr}, format: "json"}).fail(err)
	}
	if _, set := os.LookupEnv("GOGC"); !set && !largeHeap[calledName(os.Args[1:], globalFlags())] {
		debug.SetGCPercent(oneShotGC)
	}
	return Main(ctx, os.Args[1:], Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}

// startPoller starts Go's poller, which timers need, and which takes two
// descriptors when first used (epoll and eventfd on Linux). Started by the
// first timer of a process at its limit of open files, it killed the
// process in the runtime (exit 2, a Go trace) where an IO_ERROR was due.
// It starts once two descriptors are proven free: a process without two
// to spare could do nothing, and says so.
func startPoller() error {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return fault.Errorf(fault.CodeIOError, "too many open files: agentfs needs a few more to start.").
			WithHint("raise the limit on open files (ulimit -n) and retry").WithCause(err)
	}
	unix.Close(p[0])
	unix.Close(p[1])
	time.AfterFunc(time.Hour, func() {}).Stop()
	return nil
}

// largeHeap are the commands that keep Go's default GOGC: they serve many
// requests, or build an index in hundreds of megabytes.
var largeHeap = map[string]bool{"batch": true, "mcp": true, "serve": true, "index": true}

// interrupts are the signals that interrupt a call: SIGINT, SIGTERM, and
// SIGHUP (the terminal or pty a harness ran agentfs in closed, an ssh
// session dropped), which killed the process mid-mutation: a replace
// hung up after a second had changed 532 of its 2,200 files, the tree
// half replaced until the next start rolled it back. SIGHUP ignored
// (nohup) stays ignored: Notify would take it back.
func interrupts() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
