package core

import (
	"context"
	"sync"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// CommitGate lets a caller give up on a tool at once (SIGINT, a deadline)
// without ever reporting a change that then happens, or denying one that
// did. Every mutation passes the gate at its point of no return and holds
// it until its change is durable; Close waits for a change in progress and
// then shuts the gate, so a mutation that has not reached it never will. A
// computation that cannot be cancelled (a regex on a huge line, a large
// batch) is then simply abandoned: the process exits and the kernel frees
// its locks.
type CommitGate struct {
	mu      sync.Mutex
	closed  bool
	entered bool
}

// enter passes the gate, false once it is closed; leave must follow a true.
func (g *CommitGate) enter() bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.entered = true
	return true
}

func (g *CommitGate) leave() { g.mu.Unlock() }

// Close shuts the gate, waiting for a change in progress to be made whole,
// and reports whether a mutation passed it: its tool is then past its point
// of no return, and its outcome must be waited for and reported.
func (g *CommitGate) Close() (committed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.entered
}

// beginCommit is a mutation's point of no return: INTERRUPTED when ctx is
// done or the gate is closed, else the release to call once the change is
// made (or has failed).
func (t *Tools) beginCommit(ctx context.Context) (func(), error) {
	if err := fault.Interrupted(ctx); err != nil {
		return nil, err
	}
	if t.Commits == nil {
		return func() {}, nil
	}
	if !t.Commits.enter() {
		return nil, fault.Errorf(fault.CodeInterrupted, "the operation was interrupted before it changed anything.").
			WithHint("run it again; nothing was changed")
	}
	return t.Commits.leave, nil
}

// commitWrite writes data through the gate: the write is the point of no
// return of write, append and edit.
func (t *Tools) commitWrite(ctx context.Context, m backend.MutableFS, path string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	done, err := t.beginCommit(ctx)
	if err != nil {
		return backend.FileInfo{}, err
	}
	defer done()
	return m.WriteFile(ctx, path, data, opts)
}
