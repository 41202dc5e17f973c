// Package mixfs is the backend of a workspace mixing backends: local roots
// (one localfs holding them all) and object-store roots (an s3fs each). It
// routes every path to the member holding it:
//
//   - a path spelled from a member's root, s3://bucket/prefix/key, goes to
//     that member, as the key relative to the root (the longest root wins),
//     after backend.Clean; a path spelled with a scheme no root matches is
//     OUTSIDE_ROOT (a relative local path cannot start with scheme://);
//   - an absolute path goes to the local member, as given;
//   - a relative path goes to the home member, as given: the local member
//     when the working directory lies in a local root or the first root is
//     local, else the first root (then relative paths are keys under it).
//
// Displayed paths can be passed back: the home member's own spelling, and
// a non-home store's paths spelled from its root. An optional capability
// holds per member (backend.At answers with the member of a path); a change
// spanning two members (a move, a transaction) is refused, since no
// journal makes it all or nothing across two backends.
package mixfs

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Member is one backend of the workspace.
type Member struct {
	// Root is how paths of this member are spelled, s3://bucket/prefix
	// (cleaned, no final slash); "" for the local member, which holds the
	// absolute paths and is handed every path as given, so that a tool
	// that works on local trees only may call it directly.
	Root string
	FS   backend.MutableFS
}

// Config lists the members.
type Config struct {
	// Members are the backends, at most one of them local.
	Members []Member
	// Home is the index of the member relative paths go to.
	Home int
}

// FS is a mixed workspace. It is safe for concurrent use when its members
// are.
type FS struct {
	members []Member
	home    int
}

var (
	_ backend.MutableFS   = (*FS)(nil)
	_ backend.Walker      = (*FS)(nil)
	_ backend.MultiLocker = (*FS)(nil)
	_ backend.Transactor  = (*FS)(nil)
	_ backend.Renamer     = (*FS)(nil)
	_ backend.Mixed       = (*FS)(nil)
	_ backend.RootNamer   = (*FS)(nil)
)

// New makes the workspace of cfg.
func New(cfg Config) (*FS, error) {
	locals := 0
	for _, m := range cfg.Members {
		if m.Root == "" {
			locals++
		}
	}
	if len(cfg.Members) == 0 || locals > 1 || cfg.Home < 0 || cfg.Home >= len(cfg.Members) {
		return nil, fault.InvalidArgument("a mixed workspace needs members, at most one local, and a home among them.").
			WithHint("this is a bug in agentfs; please report it with the roots given")
	}
	return &FS{members: cfg.Members, home: cfg.Home}, nil
}

// route places p: the index of the member holding it, and p spelled for
// that member.
func (f *FS) route(p string) (int, string, error) {
	if i := strings.Index(p, "://"); i > 0 && !strings.Contains(p[:i], "/") {
		// Cleaned first, as a local path is: .. never climbs past the
		// bucket, and the spelling then names one root by prefix.
		p = backend.Clean(p)
		best, rel := -1, ""
		for j, m := range f.members {
			if m.Root == "" || best >= 0 && len(m.Root) <= len(f.members[best].Root) {
				continue
			}
			if p == m.Root {
				best, rel = j, "."
			} else if rest, ok := strings.CutPrefix(p, m.Root+"/"); ok {
				best, rel = j, rest
			}
		}
		if best < 0 {
			return 0, "", f.outside(p)
		}
		return best, rel, nil
	}
	if filepath.IsAbs(p) {
		for j, m := range f.members {
			if m.Root == "" {
				return j, p, nil
			}
		}
		return 0, "", f.outside(p)
	}
	return f.home, p, nil
}

// placed is route of a path a call acts on, which also refuses, in an
// s3:// path, a ".." after a name that is not a directory on the member
// holding it (backend.CheckDotDot): route resolves such a path by its
// names, and a member is given the rest with no ".." to check.
func (f *FS) placed(ctx context.Context, p string) (int, string, error) {
	j, rel, err := f.route(p)
	if err != nil || !strings.Contains(p, "://") {
		return j, rel, err
	}
	err = backend.CheckDotDot(p, func(prefix string) (bool, error) {
		k, at, err := f.route(prefix)
		if err != nil {
			return false, nil
		}
		fi, err := f.members[k].FS.Stat(ctx, at)
		switch {
		case err == nil:
			return fi.Type == backend.TypeDir, nil
		case fault.MissingPath(err) || fault.AsError(err).Code == fault.CodeNotADirectory:
			return false, nil
		}
		return false, f.fix(k, err)
	})
	return j, rel, err
}

func (f *FS) outside(p string) error {
	var roots []string
	for _, m := range f.members {
		if m.Root != "" {
			roots = append(roots, m.Root)
		}
	}
	if f.local() >= 0 {
		roots = append(roots, "the local roots")
	}
	return fault.Errorf(fault.CodeOutsideRoot, "the path is in no root of the workspace.").WithPath(p).
		WithHint("use a path inside %s, or add a root with --root", strings.Join(roots, ", "))
}

// local is the index of the local member, or -1.
func (f *FS) local() int {
	for j, m := range f.members {
		if m.Root == "" {
			return j
		}
	}
	return -1
}

// Owner is the member holding path, or nil when none does.
func (f *FS) Owner(path string) backend.FS {
	j, _, err := f.route(path)
	if err != nil {
		return nil
	}
	return f.members[j].FS
}

// VersionBytes is the most bytes a version of any member takes.
func (f *FS) VersionBytes() int {
	n := 0
	for _, m := range f.members {
		n = max(n, backend.VersionBytes(m.FS))
	}
	return n
}

// IsRoot reports whether path names the root of a member that knows its
// root by name; a local root is refused by its lock.
func (f *FS) IsRoot(path string) bool {
	j, rel, err := f.route(path)
	if err != nil {
		return false
	}
	rn, ok := f.members[j].FS.(backend.RootNamer)
	return ok && rn.IsRoot(rel)
}

// spell turns a member's display of one of its paths into the
// workspace's: a non-home store's paths are spelled from its root.
func (f *FS) spell(j int, display string) string {
	m := f.members[j]
	if j == f.home || m.Root == "" {
		return display
	}
	return spelledFrom(m.Root, display)
}

// spelledFrom is display, a store's path, spelled from its root.
func spelledFrom(root, display string) string {
	if display == "." {
		return root
	}
	return root + "/" + display
}

// fix spells the path of a member's error as the workspace does.
func (f *FS) fix(j int, err error) error {
	if j == f.home || f.members[j].Root == "" {
		return err
	}
	return SpellError(f.members[j].Root, err)
}

// SpellError is err, of the store whose root is root (s3://bucket/prefix,
// cleaned), with its path spelled from that root, as a workspace spells
// the paths of a store that does not hold its relative paths: for an
// error met before the workspace is made (its recovery), whose path "."
// would name the home root instead.
func SpellError(root string, err error) error {
	var e *fault.Error
	if err == nil || !errors.As(err, &e) || e.Path == "" {
		return err
	}
	raw := fault.PathBytes(e.Path, e.PathBase64)
	if raw == root || strings.HasPrefix(raw, root+"/") {
		return err
	}
	c := *e
	return c.WithPath(spelledFrom(root, raw))
}

// Display is p as the member holding it displays it, spelled so that it
// can be passed back; a path no member holds is shown as given.
func (f *FS) Display(p string) string {
	j, rel, err := f.route(p)
	if err != nil {
		return p
	}
	return f.spell(j, f.members[j].FS.Display(rel))
}

// Stat is the member's Stat.
func (f *FS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	fi, err := f.members[j].FS.Stat(ctx, rel)
	return fi, f.fix(j, err)
}

// Lstat is the member's Lstat.
func (f *FS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	fi, err := f.members[j].FS.Lstat(ctx, rel)
	return fi, f.fix(j, err)
}

// Open is the member's Open.
func (f *FS) Open(ctx context.Context, p string) (backend.FileReader, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return nil, err
	}
	r, err := f.members[j].FS.Open(ctx, rel)
	return r, f.fix(j, err)
}

// OpenKnown is the member's OpenKnown, else its Open.
func (f *FS) OpenKnown(ctx context.Context, p string, info backend.FileInfo) (backend.FileReader, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return nil, err
	}
	r, err := backend.OpenKnown(ctx, f.members[j].FS, rel, info)
	return r, f.fix(j, err)
}

// ReadDir is the member's ReadDir.
func (f *FS) ReadDir(ctx context.Context, p string, offset, limit int) (backend.DirPage, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return backend.DirPage{}, err
	}
	page, err := f.members[j].FS.ReadDir(ctx, rel, offset, limit)
	return page, f.fix(j, err)
}

// WriteFile is the member's WriteFile.
func (f *FS) WriteFile(ctx context.Context, p string, data []byte, opts backend.WriteOptions) (backend.FileInfo, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	fi, err := f.members[j].FS.WriteFile(ctx, rel, data, opts)
	return fi, f.fix(j, err)
}

// Remove is the member's Remove.
func (f *FS) Remove(ctx context.Context, p string, opts backend.RemoveOptions) (bool, error) {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return false, err
	}
	deleted, err := f.members[j].FS.Remove(ctx, rel, opts)
	return deleted, f.fix(j, err)
}

// Walk is the member's walk, its entries' paths spelled as the workspace
// spells them.
func (f *FS) Walk(ctx context.Context, p string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	j, rel, err := f.placed(ctx, p)
	if err != nil {
		return err
	}
	w, ok := f.members[j].FS.(backend.Walker)
	if !ok {
		return fault.Errorf(fault.CodeNotSupported, "this backend cannot walk directories.").WithPath(p).
			WithHint("read files by their paths")
	}
	if j == f.home || f.members[j].Root == "" {
		return w.Walk(ctx, rel, opts, visit)
	}
	// The visit's own error is the caller's, returned as it is.
	var visitErr error
	err = w.Walk(ctx, rel, opts, func(e backend.WalkEntry) error {
		e.Path = f.spell(j, e.Path)
		info, open := e.Info, e.Open
		e.Info = func() (backend.FileInfo, error) {
			fi, err := info()
			return fi, f.fix(j, err)
		}
		e.Open = func() (io.ReadCloser, error) {
			r, err := open()
			return r, f.fix(j, err)
		}
		if later := e.Later; later != nil {
			e.Later = func() func() (io.ReadCloser, error) {
				open := later()
				return func() (io.ReadCloser, error) {
					r, err := open()
					return r, f.fix(j, err)
				}
			}
		}
		visitErr = visit(e)
		return visitErr
	})
	if err != nil && err == visitErr {
		return err
	}
	return f.fix(j, err)
}

// apart refuses a change whose paths lie in two members: no journal makes
// it all or nothing across two backends, and half of it must never land.
func (f *FS) apart(p, q string) error {
	return fault.Errorf(fault.CodeNotSupported, "the change spans two roots of the workspace (%s and %s), and no journal makes it all or nothing across two backends; nothing was changed.", f.Display(p), f.Display(q)).
		WithPath(f.Display(q)).
		WithHint("make one call per root: to move a file between roots, read it and write it to the other root, then rm the original")
}

// Rename is the member's rename, when both paths are in one member that
// renames.
func (f *FS) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	j, relFrom, err := f.placed(ctx, from)
	if err != nil {
		return backend.FileInfo{}, err
	}
	k, relTo, err := f.placed(ctx, to)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if j != k {
		return backend.FileInfo{}, f.apart(from, to)
	}
	rn, ok := f.members[j].FS.(backend.Renamer)
	if !ok {
		return backend.FileInfo{}, fault.Errorf(fault.CodeNotSupported, "this backend cannot rename.").WithPath(f.Display(from)).
			WithHint("copy the file with read and write, then remove it with rm")
	}
	fi, err := rn.Rename(ctx, relFrom, relTo, opts)
	return fi, f.fix(j, err)
}

// SameEntry is the member's SameEntry, when both paths are in one member
// that has it.
func (f *FS) SameEntry(ctx context.Context, a, b string) bool {
	j, relA, err := f.placed(ctx, a)
	if err != nil {
		return false
	}
	k, relB, err := f.placed(ctx, b)
	if err != nil || j != k {
		return false
	}
	ec, ok := f.members[j].FS.(backend.EntryComparer)
	return ok && ec.SameEntry(ctx, relA, relB)
}

// Commit is the member's transaction, when every op is in one member that
// has transactions.
// Settled is the Settled of the backend that holds path, nil for one
// without (its files hold no change not committed).
func (f *FS) Settled(ctx context.Context, path, version string) error {
	j, rel, err := f.placed(ctx, path)
	if err != nil {
		return err
	}
	if s, ok := f.members[j].FS.(backend.Settler); ok {
		return f.fix(j, s.Settled(ctx, rel, version))
	}
	return nil
}

func (f *FS) Commit(ctx context.Context, ops []backend.Op) ([]backend.FileInfo, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	j, _, err := f.route(ops[0].Path)
	if err != nil {
		return nil, err
	}
	routed := make([]backend.Op, len(ops))
	for i, op := range ops {
		k, rel, err := f.placed(ctx, op.Path)
		if err != nil {
			return nil, err
		}
		if k != j {
			return nil, f.apart(ops[0].Path, op.Path)
		}
		op.Path = rel
		routed[i] = op
	}
	tx, ok := f.members[j].FS.(backend.Transactor)
	if !ok {
		return nil, fault.Errorf(fault.CodeNotSupported, "this backend has no transactions.").WithPath(f.Display(ops[0].Path)).
			WithHint("change the files one by one with write and edit")
	}
	infos, err := tx.Commit(ctx, routed)
	return infos, f.fix(j, err)
}

// CheckCommit is each op's member's CheckCommit, for a member that has it.
func (f *FS) CheckCommit(ctx context.Context, ops []backend.Op) error {
	for _, op := range ops {
		j, rel, err := f.placed(ctx, op.Path)
		if err != nil {
			return err
		}
		if c, ok := f.members[j].FS.(backend.CommitChecker); ok {
			op.Path = rel
			if err := c.CheckCommit(ctx, []backend.Op{op}); err != nil {
				return f.fix(j, err)
			}
		}
	}
	return nil
}

// Lock is the member's lock of path; a member without locks takes none
// (the tools' compare-and-swaps still hold there).
func (f *FS) Lock(ctx context.Context, path string, timeout time.Duration) (func(), error) {
	return f.LockAll(ctx, []string{path}, timeout)
}

// LockAll takes each member's locks of its paths, member by member in one
// order, so that two callers never wait for each other in a cycle.
func (f *FS) LockAll(ctx context.Context, paths []string, timeout time.Duration) (func(), error) {
	groups := make([][]string, len(f.members))
	for _, p := range paths {
		j, rel, err := f.route(p)
		if err != nil {
			return nil, err
		}
		groups[j] = append(groups[j], rel)
	}
	var unlocks []func()
	unlockAll := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for j, group := range groups {
		var unlock func()
		var err error
		switch l := f.members[j].FS.(type) {
		case backend.MultiLocker:
			if len(group) == 0 {
				continue
			}
			unlock, err = l.LockAll(ctx, group, timeout)
		case backend.Locker:
			if len(group) != 1 {
				continue
			}
			unlock, err = l.Lock(ctx, group[0], timeout)
		default:
			continue
		}
		if err != nil {
			unlockAll()
			return nil, f.fix(j, err)
		}
		unlocks = append(unlocks, unlock)
	}
	return unlockAll, nil
}
