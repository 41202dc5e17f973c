package core

import (
	"context"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
)

// A closed gate stops a mutation at its point of no return; Close waits
// for a mutation already past it and says so.
func TestCommitGate(t *testing.T) {
	ctx := context.Background()
	tl := &Tools{Commits: &CommitGate{}}
	_, done, err := tl.beginCommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan bool)
	go func() { closed <- tl.Commits.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a commit was in progress")
	case <-time.After(20 * time.Millisecond): // a bound on a wait that must not end, not synchronisation
	}
	done()
	select {
	case committed := <-closed:
		if !committed {
			t.Error("Close did not report the commit that passed the gate")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the commit ended")
	}
	if _, _, err := tl.beginCommit(ctx); fault.AsError(err).Code != fault.CodeInterrupted {
		t.Errorf("a commit after Close: want INTERRUPTED, got %v", err)
	}
	if (&CommitGate{}).Close() {
		t.Error("a gate nobody passed reports a commit")
	}
}
