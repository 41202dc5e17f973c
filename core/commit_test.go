package core

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
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

// TestTimedOut: a mutation that ran out of time losing races says what
// the last one met, and where when that is another file; a wait for a
// change not yet committed says so, with its hint when it has one.
func TestTimedOut(t *testing.T) {
	claimed := fault.Errorf(fault.CodeStale, "another move of this file is under way.").WithPath("c.txt").WithHint("list it again")
	inFlight := fault.Errorf(fault.CodeStale, "the file was removed by another transaction, not yet committed.").WithPath("a.txt").
		WithHint("retry once that transaction is done")
	bare := fault.Errorf(fault.CodeStale, "the file holds a change of another transaction, not yet committed.").WithPath("a.txt")
	for _, tt := range []struct {
		name          string
		err           error
		message, hint string
	}{
		{"a race with no cause", errConflict,
			"the file kept changing during the change: 9 attempts lost the race to other writers.", "retry when the other writers are done; nothing was changed"},
		{"a move's claim on another file", raced(claimed, fault.CodeStale),
			"the file kept changing during the change: 9 attempts lost the race to other writers. The last: another move of this file is under way (c.txt).", "retry when the other writers are done; nothing was changed"},
		{"a transaction in flight", fmt.Errorf("%w: %w", errUnsettled, inFlight),
			"9 attempts waited for another writer's change to be committed or undone. The last: the file was removed by another transaction, not yet committed.", "retry once that transaction is done; nothing was changed"},
		{"a transaction, no hint", fmt.Errorf("%w: %w", errUnsettled, bare),
			"9 attempts waited for another writer's change to be committed or undone. The last: the file holds a change of another transaction, not yet committed.", "retry when the other writers are done; nothing was changed"},
	} {
		e := fault.AsError(timedOut(9, "a.txt", tt.err, "30s"))
		if e.Code != fault.CodeLockTimeout || e.Message != tt.message || e.Hint != tt.hint || e.Path != "a.txt" {
			t.Errorf("%s: %s: %q (hint %q, path %q); want %q (hint %q)", tt.name, e.Code, e.Message, e.Hint, e.Path, tt.message, tt.hint)
		}
		if e.Details["timeout"] != "30s" {
			t.Errorf("%s: details %v; want timeout 30s, as a lock's LOCK_TIMEOUT gives it", tt.name, e.Details)
		}
	}
}

// A mutation of many files that ran out of time names the file it kept
// losing on, not the first it changes: an agent retries it, or leaves it
// out. A mutation of one file names that file (the message names another
// that it met). With --lock-timeout 0, details.timeout is what the
// attempts took, as a lock's LOCK_TIMEOUT says what it waited.
func TestTimedOutNamesTheFileLost(t *testing.T) {
	busy := raced(fault.Errorf(fault.CodeStale, "the file changed.").WithPath("z.txt"), fault.CodeStale)
	for _, tt := range []struct {
		paths []string
		want  string
	}{
		{[]string{"a.txt", "z.txt"}, "z.txt"},
		{[]string{"a.txt"}, "a.txt"},
	} {
		tl := &Tools{FS: memfs.New(map[string]string{"a.txt": "a", "z.txt": "z"})}
		_, err := mutate(context.Background(), tl, tl.FS.(*memfs.FS), tt.paths, func() (int, error) { return 0, busy })
		e := fault.AsError(err)
		if e.Code != fault.CodeLockTimeout || e.Path != tt.want {
			t.Errorf("mutation of %q: %s at %q (%s), want LOCK_TIMEOUT at %q", tt.paths, e.Code, e.Path, e.Message, tt.want)
		}
		if d, _ := e.Details["timeout"].(string); d == "" {
			t.Errorf("mutation of %q: details %v, want a timeout", tt.paths, e.Details)
		} else if _, err := time.ParseDuration(d); err != nil {
			t.Errorf("mutation of %q: details.timeout %q: %v", tt.paths, d, err)
		}
	}
}

// A transaction undone but for files another program changed since is
// no race lost: run again, replace counted only the files left unchanged
// and apply-patch took the kept ones for applied already, exit 0.
func TestPartlyUndoneIsNotRunAgain(t *testing.T) {
	stale := fault.Errorf(fault.CodeStale, "the file changed since it was read.").WithPath("b.txt")
	for _, tt := range []struct {
		name string
		err  error
		race bool
	}{
		{"a compare-and-swap lost", stale, true},
		{"a transaction undone but for a.txt", backend.PartlyUndone([]string{"a.txt"}, stale), false},
	} {
		if got := errors.Is(raced(tt.err, fault.CodeStale), errConflict); got != tt.race {
			t.Errorf("%s: run again as a race lost: %v, want %v", tt.name, got, tt.race)
		}
		if got := errors.Is(conflictOf(tt.err, backend.WriteOptions{IfVersion: "v"}, true), errConflict); got != tt.race {
			t.Errorf("%s: conflictOf run again: %v, want %v", tt.name, got, tt.race)
		}
	}
	e := backend.PartlyUndone([]string{"a.txt", "c.txt"}, stale)
	if want := "the transaction was undone (b.txt: the file changed since it was read), but for a.txt, c.txt: another program changed them after the transaction did, and the undo left them as that program made them."; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

// waitedFor gives a LOCK_TIMEOUT's details.timeout: the --lock-timeout
// when there is one, and with 0 what the attempts took since the deadline
// (the call's start), as a lock's LOCK_TIMEOUT says what it waited.
func TestWaitedFor(t *testing.T) {
	if got := waitedFor(time.Now().Add(30*time.Second), 30*time.Second); got != "30s" {
		t.Errorf("a 30s timeout: %q, want 30s", got)
	}
	got, err := time.ParseDuration(waitedFor(time.Now().Add(-50*time.Millisecond), 0))
	if err != nil || got < 50*time.Millisecond || got > time.Minute {
		t.Errorf("--lock-timeout 0, 50 ms spent: %v (%v), want what was spent", got, err)
	}
}
