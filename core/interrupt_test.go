package core

import (
	"context"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// cancelAfterLock is a backend on which the signal arrives while the
// mutation holds its lock: the last check before the commit must catch it.
type cancelAfterLock struct {
	*lockedFS
	cancel context.CancelFunc
}

func (c cancelAfterLock) Lock(ctx context.Context, p string, timeout time.Duration) (func(), error) {
	unlock, err := c.lockedFS.Lock(ctx, p, timeout)
	c.cancel()
	return unlock, err
}

// LockAll takes one lock for several paths, enough for one mutation at a
// time.
func (c cancelAfterLock) LockAll(ctx context.Context, paths []string, timeout time.Duration) (func(), error) {
	return c.Lock(ctx, paths[0], timeout)
}

// mutations are calls of each mutating tool that change a file f holding
// "old\n".
func mutations() map[string]func(context.Context, *Tools) error {
	content, newText := "a\n", "new"
	return map[string]func(context.Context, *Tools) error{
		"write": func(ctx context.Context, t *Tools) error {
			_, err := t.Write(ctx, WriteRequest{Path: "f", Content: &content})
			return err
		},
		"edit": func(ctx context.Context, t *Tools) error {
			_, err := t.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{{OldText: "old", NewText: &newText}}})
			return err
		},
		"apply-patch": func(ctx context.Context, t *Tools) error {
			_, err := t.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-old\n+new\n*** End Patch\n"})
			return err
		},
		"replace": func(ctx context.Context, t *Tools) error {
			_, err := t.Replace(ctx, ReplaceRequest{Query: "old", Replacement: &newText})
			return err
		},
		"mv": func(ctx context.Context, t *Tools) error {
			_, err := t.Mv(ctx, MvRequest{From: "f", To: "g"})
			return err
		},
		"rm": func(ctx context.Context, t *Tools) error {
			_, err := t.Rm(ctx, RmRequest{Path: "f"})
			return err
		},
	}
}

func TestMutationsStopWhenInterrupted(t *testing.T) {
	for name, call := range mutations() {
		fs := newLockedFS(map[string]string{"f": "old\n"})
		ctx, cancel := context.WithCancel(context.Background())
		err := call(ctx, &Tools{FS: cancelAfterLock{fs, cancel}, LockTimeout: time.Second})
		if err == nil || fault.AsError(err).Code != fault.CodeInterrupted {
			t.Errorf("%s interrupted under its lock: %v, want INTERRUPTED", name, err)
		}
		if fileText(fs.FS, "f") != "old\n" || fs.Stats().Writes != 0 {
			t.Errorf("%s interrupted under its lock changed the file", name)
		}
	}
}

// signalMidCommit is a backend on which the signal arrives once a change
// has begun, and whose changes fail on a done context, as an object
// store's requests do: a transaction cut off half made, its rollback's
// requests failing too, was left for a recovery 15 s later while the
// tool answered INTERRUPTED.
type signalMidCommit struct {
	*memfs.FS
	cancel context.CancelFunc
}

func (s signalMidCommit) begin(ctx context.Context) error {
	s.cancel()
	return ctx.Err()
}

func (s signalMidCommit) WriteFile(ctx context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	if err := s.begin(ctx); err != nil {
		return backend.FileInfo{}, err
	}
	return s.FS.WriteFile(ctx, p, data, opts)
}

func (s signalMidCommit) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	return s.FS.Commit(ctx, ops)
}

func (s signalMidCommit) Remove(ctx context.Context, p string, opts backend.RemoveOptions) (bool, error) {
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	return s.FS.Remove(ctx, p, opts)
}

func (s signalMidCommit) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	if err := s.begin(ctx); err != nil {
		return backend.FileInfo{}, err
	}
	return s.FS.Rename(ctx, from, to, opts)
}

// TestSignalMidCommitFinishesTheChange: past its point of no return a
// change is made whole and reported, whatever signal arrives: the
// backend's calls get a context the signal does not end.
func TestSignalMidCommitFinishesTheChange(t *testing.T) {
	for name, call := range mutations() {
		fs := memfs.New(map[string]string{"f": "old\n"})
		ctx, cancel := context.WithCancel(context.Background())
		if err := call(ctx, &Tools{FS: signalMidCommit{fs, cancel}, LockTimeout: time.Second, Commits: &CommitGate{}}); err != nil {
			t.Errorf("%s, signalled once its change began: %v, want it made", name, err)
		}
		if fileText(fs, "f") == "old\n" {
			t.Errorf("%s, signalled once its change began: the file is unchanged", name)
		}
	}
}

// preparingRename is a backend whose move prepares (a copy to another
// file system) as the caller gives up, and stops when its preparation's
// context says so, as localfs's does.
type preparingRename struct {
	*memfs.FS
	cancel context.CancelFunc
}

func (p preparingRename) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	p.cancel()
	if ctx.Err() != nil {
		return backend.FileInfo{}, ctx.Err()
	}
	if err := fault.Interrupted(backend.Preparation(ctx)); err != nil {
		return backend.FileInfo{}, err
	}
	return p.FS.Rename(ctx, from, to, opts)
}

// TestMoveStopsPreparingWhenInterrupted: past the point of no return the
// change is made with a context no signal ends, but the preparation a
// backend can still drop untouched (localfs's copy of a gigabyte to
// another file system) stops with the caller's: mv is INTERRUPTED and
// nothing moves.
func TestMoveStopsPreparingWhenInterrupted(t *testing.T) {
	fs := memfs.New(map[string]string{"f": "old\n"})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := (&Tools{FS: preparingRename{fs, cancel}, LockTimeout: time.Second, Commits: &CommitGate{}}).Mv(ctx, MvRequest{From: "f", To: "g"})
	if err == nil || fault.AsError(err).Code != fault.CodeInterrupted {
		t.Errorf("mv interrupted as the backend prepared: %v, want INTERRUPTED", err)
	}
	if fileText(fs, "f") != "old\n" {
		t.Errorf("mv interrupted as the backend prepared moved the file")
	}
}
