package memfs

import (
	"context"
	"errors"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/ignore"
)

// gitDir is never walked, as in every backend.
const gitDir = ".git"

// Walk visits the tree below p depth-first, names in byte order. Each
// directory is listed when the walk comes to it; an entry removed since is
// NOT_FOUND to Info and Open.
func (m *FS) Walk(ctx context.Context, p string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	c, err := clean(p)
	if err != nil {
		return err
	}
	fi, err := m.Stat(ctx, c)
	if err != nil {
		return err
	}
	if fi.Type != backend.TypeDir {
		return fault.NotADirectory(c)
	}
	var from []string
	if opts.From != "" {
		from = strings.Split(opts.From, "/")
	}
	err = m.walkDir(ctx, c, "", from, opts, ignore.NewExcludes(opts.Exclude, opts.ExcludeBase), visit)
	if errors.Is(err, backend.ErrStopWalk) {
		return nil
	}
	return err
}

// walkDir walks dir, at rel from the start; from, when set, is the rest of
// WalkOptions.From below dir.
func (m *FS) walkDir(ctx context.Context, dir, rel string, from []string, opts backend.WalkOptions, exclude ignore.Excludes, visit func(backend.WalkEntry) error) error {
	m.mu.Lock()
	names := m.children(dir)
	m.mu.Unlock()
	if len(from) > 0 {
		i, _ := slices.BinarySearch(names, from[0])
		names = names[i:]
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		full, erel := path.Join(dir, name), path.Join(rel, name)
		info, err := m.Stat(ctx, full)
		if err != nil {
			continue // removed since the listing
		}
		ignored := name == gitDir
		if ignored && !opts.ShowIgnored || exclude.Match(erel, name, info.Type == backend.TypeDir) {
			continue
		}
		e := backend.WalkEntry{Path: full, Rel: erel, Name: name, Type: info.Type, Ignored: ignored,
			Info: func() (backend.FileInfo, error) { return m.Stat(ctx, full) }}
		if info.Type == backend.TypeFile {
			open := func() (io.ReadCloser, error) { return m.Open(ctx, full) }
			e.Open = open
			e.Later = func() func() (io.ReadCloser, error) { return open }
		}
		// On From's path above its last name, the entry was visited by an
		// earlier page: the walk only goes down into it.
		var below []string
		if len(from) > 1 && name == from[0] {
			below = from[1:]
		} else {
			switch err := visit(e); {
			case errors.Is(err, backend.ErrSkipDir):
				continue
			case err != nil:
				return err
			}
		}
		from = nil
		if info.Type == backend.TypeDir && !ignored {
			if err := m.walkDir(ctx, full, erel, below, opts, exclude, visit); err != nil {
				return err
			}
		}
	}
	return nil
}
