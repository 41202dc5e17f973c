// Package memfs is a backend held in memory. It is what the tools are
// tested on without a disk, and the simplest complete implementation of the
// contract in package backend: a new backend can be read against it. It has
// what an object store has, no more: files and directories, versions, and
// compare-and-swap writes; no locks (the tools then change files by
// compare-and-swap and retry), no links, no modes but the executable bit,
// no ignore files.
package memfs

import (
	"bytes"
	"context"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// FS is an in-memory tree rooted at ".". Paths are relative to it, with /
// separators; an absolute path or one that climbs out with .. is
// OUTSIDE_ROOT. It is safe for concurrent use.
type FS struct {
	mu    sync.Mutex
	nodes map[string]*node
	gen   uint64
	stats Stats
}

// Stats counts what the backend handed out, so that a test can check what a
// call costs.
type Stats struct {
	// BytesRead is every byte read, by stream or ReadAt.
	BytesRead int64
	// ReadAts counts the ReadAt calls (an object store makes a request
	// each), and ReadAtBytes the bytes they read.
	ReadAts     int
	ReadAtBytes int64
	// Reads counts the stream's Read calls (a system call each on a disk).
	Reads int
	// Writes counts the files written.
	Writes int
}

type node struct {
	dir     bool
	data    []byte // never changed in place: a write replaces it
	exec    bool
	version string
	mod     time.Time
}

var (
	_ backend.MutableFS  = (*FS)(nil)
	_ backend.Walker     = (*FS)(nil)
	_ backend.Moder      = (*FS)(nil)
	_ backend.Transactor = (*FS)(nil)
	_ backend.Renamer    = (*FS)(nil)
	_ backend.RootNamer  = (*FS)(nil)
)

// IsRoot reports whether p names the tree's root.
func (m *FS) IsRoot(p string) bool {
	c, err := clean(p)
	return err == nil && c == "."
}

// HasModes says that files have modes: 0644, or 0755 when written
// executable.
func (m *FS) HasModes() bool { return true }

// New returns a tree holding files (path to content), with their parent
// directories.
func New(files map[string]string) *FS {
	m := &FS{nodes: map[string]*node{}}
	m.nodes["."] = m.newNode(true, nil)
	for p, data := range files {
		if _, err := m.WriteFile(context.Background(), p, []byte(data), backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}
	m.stats = Stats{}
	return m
}

// Stats returns the counts since New or the last ResetStats.
func (m *FS) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// ResetStats sets the counts to zero.
func (m *FS) ResetStats() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats = Stats{}
}

// Content returns the bytes of a file, false when it is not one.
func (m *FS) Content(p string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[path.Clean(p)]
	if !ok || n.dir {
		return "", false
	}
	return string(n.data), true
}

// newNode makes a node with a version never given before. Called with mu
// held (or before the FS is shared).
func (m *FS) newNode(dir bool, data []byte) *node {
	m.gen++
	return &node{dir: dir, data: data, version: "m" + strconv.FormatUint(m.gen, 10), mod: time.Unix(int64(m.gen), 0).UTC()}
}

// touch gives a directory a new version: its entries changed.
func (m *FS) touch(dir string) {
	n := m.nodes[dir]
	m.gen++
	n.version, n.mod = "m"+strconv.FormatUint(m.gen, 10), time.Unix(int64(m.gen), 0).UTC()
}

// clean turns a caller's path into a key of nodes.
func clean(p string) (string, error) {
	if p == "" {
		return "", fault.InvalidArgument("path is empty.").WithHint("pass a path relative to the workspace")
	}
	c := path.Clean(p)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fault.Errorf(fault.CodeOutsideRoot, "the path is outside the workspace.").WithPath(p).
			WithHint("use a path relative to the workspace, without .. above it")
	}
	return c, nil
}

func (m *FS) info(p string, n *node) backend.FileInfo {
	fi := backend.FileInfo{Name: path.Base(p), Size: int64(len(n.data)), ModTime: n.mod, Version: n.version, Type: backend.TypeFile, Mode: 0o644}
	if n.exec {
		fi.Mode = 0o755
	}
	if n.dir {
		fi.Type, fi.Mode, fi.Size = backend.TypeDir, 0o755, 0
	}
	return fi
}

// lookup finds p: NOT_FOUND when it is missing, NOT_A_DIRECTORY when a
// file stands where a directory of its path should be.
func (m *FS) lookup(p string) (*node, error) {
	if n, ok := m.nodes[p]; ok {
		return n, nil
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if n, ok := m.nodes[d]; ok && !n.dir {
			return nil, fault.Errorf(fault.CodeNotADirectory, "a part of the path is a file, not a directory.").WithPath(p).
				WithHint("check the path; %s is a file", d)
		}
	}
	return nil, fault.Errorf(fault.CodeNotFound, "no such file or directory.").WithPath(p).
		WithHint("check the path with ls or find")
}

// Stat describes path; there are no links to follow.
func (m *FS) Stat(_ context.Context, p string) (backend.FileInfo, error) {
	c, err := clean(p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(c)
	if err != nil {
		return backend.FileInfo{}, err
	}
	return m.info(c, n), nil
}

// Lstat is Stat: the tree has no links.
func (m *FS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) { return m.Stat(ctx, p) }

// Open opens a file: the reader holds the version it opened, whatever is
// written to the path afterwards.
func (m *FS) Open(_ context.Context, p string) (backend.FileReader, error) {
	c, err := clean(p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(c)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(c).
			WithHint("use ls to list a directory, or find to search it")
	}
	return &reader{Reader: bytes.NewReader(n.data), info: m.info(c, n), fs: m}, nil
}

type reader struct {
	*bytes.Reader
	info backend.FileInfo
	fs   *FS
}

func (r *reader) Read(b []byte) (int, error) {
	n, err := r.Reader.Read(b)
	r.fs.count(n, false)
	return n, err
}

func (r *reader) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.Reader.ReadAt(b, off)
	r.fs.count(n, true)
	return n, err
}

func (r *reader) Close() error           { return nil }
func (r *reader) Info() backend.FileInfo { return r.info }

func (m *FS) count(n int, at bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats.BytesRead += int64(n)
	if at {
		m.stats.ReadAts++
		m.stats.ReadAtBytes += int64(n)
	} else {
		m.stats.Reads++
	}
}

// children returns the names in dir, in byte order. Called with mu held.
func (m *FS) children(dir string) []string {
	var names []string
	for k := range m.nodes {
		if k != "." && path.Dir(k) == dir {
			names = append(names, path.Base(k))
		}
	}
	sort.Strings(names)
	return names
}

// ReadDir lists entries [offset, offset+limit) in byte order of names.
func (m *FS) ReadDir(_ context.Context, p string, offset, limit int) (backend.DirPage, error) {
	c, err := clean(p)
	if err != nil {
		return backend.DirPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(c)
	if err != nil {
		return backend.DirPage{}, err
	}
	if !n.dir {
		return backend.DirPage{}, fault.NotADirectory(c)
	}
	names := m.children(c)
	var page backend.DirPage
	for _, name := range names[min(offset, len(names)):min(offset+limit, len(names))] {
		k := path.Join(c, name)
		page.Entries = append(page.Entries, m.info(k, m.nodes[k]))
	}
	return page, nil
}

// Display is the path as given, cleaned: relative to the root.
func (m *FS) Display(p string) string { return path.Clean(p) }

// WriteFile replaces or creates path with data, creating missing parents,
// all at once under the tree's mutex: a reader sees the old or the new file.
func (m *FS) WriteFile(_ context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	c, err := clean(p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, err := m.lookup(c)
	exists := err == nil
	if err != nil && fault.AsError(err).Code != fault.CodeNotFound {
		return backend.FileInfo{}, err
	}
	if exists && old.dir {
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(c).
			WithHint("write to a file path inside the directory")
	}
	if err := backend.CheckSwap(c, opts, exists, old.versionOf()); err != nil {
		return backend.FileInfo{}, err
	}
	return m.put(c, data, opts.Executable), nil
}

// put writes a file at c, its parents made: an existing file keeps its
// mode, a new one is executable when asked. Called with mu held, the
// checks done.
func (m *FS) put(c string, data []byte, executable bool) backend.FileInfo {
	n := m.newNode(false, bytes.Clone(data))
	n.exec = executable
	if old := m.nodes[c]; old != nil {
		n.exec = old.exec
	}
	m.makeParents(c)
	m.nodes[c] = n
	m.stats.Writes++
	return m.info(c, n)
}

// makeParents creates the missing directories above c and gives the
// nearest existing one a new version. Called with mu held.
func (m *FS) makeParents(c string) {
	for d := path.Dir(c); ; d = path.Dir(d) {
		if _, ok := m.nodes[d]; ok {
			m.touch(d)
			return
		}
		m.nodes[d] = m.newNode(true, nil)
	}
}

func (n *node) versionOf() string {
	if n == nil {
		return ""
	}
	return n.version
}

// Remove deletes a file or a directory (with recursive, everything in it).
func (m *FS) Remove(_ context.Context, p string, opts backend.RemoveOptions) (bool, error) {
	c, err := clean(p)
	if err != nil {
		return false, err
	}
	if c == "." {
		return false, fault.RootRefused(c)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(c)
	if err != nil && fault.AsError(err).Code != fault.CodeNotFound {
		return false, err
	}
	if err := backend.CheckSwap(c, backend.WriteOptions{IfVersion: opts.IfVersion}, n != nil, n.versionOf()); err != nil || n == nil {
		return false, err
	}
	if n.dir && len(m.children(c)) > 0 {
		if !opts.Recursive {
			return false, fault.Errorf(fault.CodeNotEmpty, "the directory is not empty.").WithPath(c).
				WithHint("pass -r/--recursive to remove it with everything in it")
		}
		for k := range m.nodes {
			if strings.HasPrefix(k, c+"/") {
				delete(m.nodes, k)
			}
		}
	}
	delete(m.nodes, c)
	m.touch(path.Dir(c))
	return true, nil
}

// Commit applies ops all or nothing under the tree's mutex: every check
// first, then every change (see backend.Transactor).
func (m *FS) Commit(_ context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	keys := make([]string, len(ops))
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	for i, op := range ops {
		c, err := clean(op.Path)
		if err != nil {
			return nil, err
		}
		if c == "." {
			return nil, fault.Errorf(fault.CodeNotAFile, "the path is the workspace's root, not a file.").WithPath(c).
				WithHint("name a file inside the workspace")
		}
		if seen[c] {
			return nil, backend.ChangedTwice(c)
		}
		seen[c], keys[i] = true, c
		n, err := m.lookup(c)
		if err != nil && fault.AsError(err).Code != fault.CodeNotFound {
			return nil, err
		}
		if n != nil && n.dir {
			return nil, fault.Errorf(fault.CodeNotAFile, "the path is a directory, not a file.").WithPath(c).
				WithHint("a transaction writes and removes files")
		}
		if err := backend.CheckSwap(c, op.Write, n != nil, n.versionOf()); err != nil {
			return nil, err
		}
	}
	infos := make([]backend.FileInfo, len(ops))
	for i, op := range ops {
		c := keys[i]
		if op.Remove {
			if _, ok := m.nodes[c]; ok {
				delete(m.nodes, c)
				m.touch(path.Dir(c))
			}
			continue
		}
		infos[i] = m.put(c, op.Data, op.Write.Executable)
	}
	return infos, nil
}

// Rename moves a file or a whole directory (see backend.Renamer), as
// rename(2) does, under the tree's mutex.
func (m *FS) Rename(_ context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	src, err := clean(from)
	if err != nil {
		return backend.FileInfo{}, err
	}
	dst, err := clean(to)
	if err != nil {
		return backend.FileInfo{}, err
	}
	for _, p := range []string{src, dst} {
		if p == "." {
			return backend.FileInfo{}, fault.RootRefused(p)
		}
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return backend.FileInfo{}, fault.InvalidArgument("the destination is the source or inside it.").WithPath(dst).
			WithHint("move the directory somewhere outside itself")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(src)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if err := backend.CheckSwap(src, backend.WriteOptions{IfVersion: opts.IfVersion}, true, n.version); err != nil {
		return backend.FileInfo{}, err
	}
	old, err := m.lookup(dst)
	if err != nil && fault.AsError(err).Code != fault.CodeNotFound {
		return backend.FileInfo{}, err
	}
	switch {
	case old == nil:
	case opts.IfAbsent:
		return backend.FileInfo{}, fault.Errorf(fault.CodeExists, "the destination already exists.").WithPath(dst).
			WithHint("pass --overwrite to replace a file, or choose another destination")
	case old.dir && n.dir && len(m.children(dst)) > 0:
		return backend.FileInfo{}, fault.FullDestination(dst)
	case old.dir && !n.dir:
		return backend.FileInfo{}, fault.DirectoryDestination(dst, "NAME")
	case !old.dir && n.dir:
		return backend.FileInfo{}, fault.DirOntoFile(dst)
	}
	moved := map[string]*node{dst: n}
	for k, v := range m.nodes {
		if rest, ok := strings.CutPrefix(k, src+"/"); ok {
			moved[dst+"/"+rest] = v
			delete(m.nodes, k)
		}
	}
	delete(m.nodes, src)
	m.touch(path.Dir(src))
	m.makeParents(dst)
	for k, v := range moved {
		m.nodes[k] = v
	}
	return m.info(dst, n), nil
}
