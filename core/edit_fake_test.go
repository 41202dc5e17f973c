package core

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// editFS is an in-memory MutableFS for the edit tests: one lock for all
// paths, a version that counts writes, and modes kept across writes.
type editFS struct {
	mu     sync.Mutex
	lock   chan struct{}
	files  map[string]*editFile
	writes int
	// failWrite, when set, is returned by WriteFile.
	failWrite error
}

type editFile struct {
	data    []byte
	mode    uint32
	version int
}

func newEditFS(files map[string]string) *editFS {
	m := &editFS{lock: make(chan struct{}, 1), files: map[string]*editFile{}}
	for p, d := range files {
		m.files[p] = &editFile{data: []byte(d), mode: 0o644, version: 1}
	}
	return m
}

func (m *editFS) info(p string, f *editFile) backend.FileInfo {
	return backend.FileInfo{Name: p, Size: int64(len(f.data)), Type: backend.TypeFile, Mode: f.mode, Version: fmt.Sprintf("v%d", f.version)}
}

func (m *editFS) get(p string) (*editFile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	if !ok {
		return nil, fault.Errorf(fault.CodeNotFound, "no such file.").WithPath(p)
	}
	return f, nil
}

func (m *editFS) Stat(_ context.Context, p string) (backend.FileInfo, error) {
	f, err := m.get(p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	return m.info(p, f), nil
}

func (m *editFS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	return m.Stat(ctx, p)
}

type editReader struct {
	// Reader holds the whole file, at the offset of the open.
	*bytes.Reader
	info backend.FileInfo
}

func (r editReader) Close() error           { return nil }
func (r editReader) Info() backend.FileInfo { return r.info }

func (m *editFS) Open(_ context.Context, p string, offset int64) (backend.FileReader, error) {
	f, err := m.get(p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := bytes.NewReader(bytes.Clone(f.data))
	r.Seek(offset, io.SeekStart)
	return editReader{r, m.info(p, f)}, nil
}

func (m *editFS) ReadDir(context.Context, string, int, int) (backend.DirPage, error) {
	return backend.DirPage{}, fault.Errorf(fault.CodeNotADirectory, "not a directory.")
}

func (m *editFS) Display(p string) string { return p }

func (m *editFS) Lock(ctx context.Context, _ string, timeout time.Duration) (func(), error) {
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

func (m *editFS) WriteFile(_ context.Context, p string, data []byte, _ backend.WriteOptions) (backend.FileInfo, error) {
	if m.failWrite != nil {
		return backend.FileInfo{}, m.failWrite
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	if !ok {
		f = &editFile{mode: 0o644}
		m.files[p] = f
	}
	f.data = bytes.Clone(data)
	f.version++
	m.writes++
	return m.info(p, f), nil
}

func (m *editFS) Remove(_ context.Context, p string, _ bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.files[p]
	delete(m.files, p)
	return ok, nil
}

func (m *editFS) content(p string) string {
	f, err := m.get(p)
	if err != nil {
		return "<missing>"
	}
	return string(f.data)
}
