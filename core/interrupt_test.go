package core

import (
	"context"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
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

func TestMutationsStopWhenInterrupted(t *testing.T) {
	content, newText := "a\n", "new"
	for name, call := range map[string]func(context.Context, *Tools) error{
		"write": func(ctx context.Context, t *Tools) error {
			_, err := t.Write(ctx, WriteRequest{Path: "f", Content: &content})
			return err
		},
		"edit": func(ctx context.Context, t *Tools) error {
			_, err := t.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{{OldText: "old", NewText: &newText}}})
			return err
		},
		"rm": func(ctx context.Context, t *Tools) error {
			_, err := t.Rm(ctx, RmRequest{Path: "f"})
			return err
		},
	} {
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
