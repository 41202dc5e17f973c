package core

import (
	"context"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/memfs"
)

// lockedFS is the memory backend with the Locker capability (one lock for
// all paths, as a process-wide mutex would be) and a write that fails on
// demand, so that the tools' locked path is tested as well as memfs's
// compare-and-swap one.
type lockedFS struct {
	*memfs.FS
	lock chan struct{}
	// failWrite, when set, is returned by WriteFile.
	failWrite error
}

func newLockedFS(files map[string]string) *lockedFS {
	return &lockedFS{FS: memfs.New(files), lock: make(chan struct{}, 1)}
}

func (m *lockedFS) Lock(ctx context.Context, _ string, timeout time.Duration) (func(), error) {
	// A free lock is taken whatever the timeout, as localfs does (0 tries
	// once); a select would otherwise pick the expired timer half the time.
	select {
	case m.lock <- struct{}{}:
		return func() { <-m.lock }, nil
	default:
	}
	select {
	case m.lock <- struct{}{}:
		return func() { <-m.lock }, nil
	case <-time.After(timeout):
		return nil, fault.Errorf(fault.CodeLockTimeout, "lock timeout.")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *lockedFS) WriteFile(ctx context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	if m.failWrite != nil {
		return backend.FileInfo{}, m.failWrite
	}
	return m.FS.WriteFile(ctx, p, data, opts)
}

// localFS is the local backend over a new directory, its root and working
// directory, with a state directory of its own.
func localFS(t *testing.T) *localfs.FS {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	lfs, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lfs.Close() })
	return lfs
}

// fileText is the file at p, "<missing>" when there is none.
func fileText(m *memfs.FS, p string) string {
	if s, ok := m.Content(p); ok {
		return s
	}
	return "<missing>"
}

// versionOf is the version of the file at p now.
func versionOf(m backend.FS, p string) string {
	fi, err := m.Stat(context.Background(), p)
	if err != nil {
		return "<missing>"
	}
	return fi.Version
}

// backendRemove is the options of a plain removal.
func backendRemove() backend.RemoveOptions { return backend.RemoveOptions{} }

// withoutModes hides the Moder capability of a backend, as an object
// store has none.
type withoutModes struct {
	backend.MutableFS
	backend.Walker
}

// ls --long shows modes only where the backend has them.
func TestLsModesOnlyWhereTheBackendHasThem(t *testing.T) {
	m := memfs.New(map[string]string{"f": "x"})
	for _, tc := range []struct {
		fs   backend.FS
		mode string
	}{{m, "0644"}, {withoutModes{m, m}, ""}} {
		res, err := (&Tools{FS: tc.fs}).Ls(context.Background(), LsRequest{Path: ".", Long: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != 1 || res.Entries[0].Mode != tc.mode || res.Entries[0].Mtime == "" {
			t.Errorf("%T: entries %+v, want mode %q", tc.fs, res.Entries, tc.mode)
		}
	}
}
