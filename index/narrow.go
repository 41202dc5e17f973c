package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/localfs"
)

// Finder finds the index that covers a search, for grep (core.ContentIndex).
type Finder struct {
	// Abs places a path as the backend does (localfs.FS.Abs).
	Abs func(path string) string
}

// Narrow returns, for a search of the directory path, a test of each file
// the walk visits (rel to path): skip when the file is the indexed one and
// cannot match, with binary when it is binary. It returns nil, and grep
// reads every file, when no index covers path, the index fails a check, or
// the query yields no trigram.
func (f Finder) Narrow(ctx context.Context, path, query string, isRegex, ignoreCase bool) (func(rel string, info backend.FileInfo) (skip, binary bool), error) {
	q := Plan(query, isRegex, ignoreCase)
	if q.All() {
		return nil, nil
	}
	state := localfs.ExistingStateDir()
	if state == "" {
		return nil, nil
	}
	dir, err := realDir(f.Abs(path))
	if err != nil {
		return nil, nil
	}
	ix, prefix := findCovering(state, dir)
	if ix == nil {
		return nil, nil
	}
	defer ix.Close()
	cand, err := ix.eval(q)
	if err != nil {
		return nil, nil // corrupt: never trusted, the search reads every file
	}
	files := ix.files
	byRel := make(map[string]int32, len(files))
	for i := range files {
		if rel, ok := strings.CutPrefix(files[i].rel, prefix); ok {
			byRel[rel] = int32(i)
		}
	}
	return func(rel string, info backend.FileInfo) (bool, bool) {
		i, ok := byRel[rel]
		if !ok {
			return false, false
		}
		f := &files[i]
		switch {
		case !same(f, info) || f.flags&(flagOpaque|flagRacy) != 0:
			return false, false
		case f.flags&flagBinary != 0:
			return true, true
		}
		return !cand.has(uint32(i)), false
	}, nil
}

// findCovering opens the index of dir or of its nearest ancestor that has
// one, with the prefix of dir's files in it ("" or "sub/dir/").
func findCovering(state, dir string) (*Index, string) {
	prefix := ""
	for d := dir; ; {
		loc, err := locate(state, d)
		if err == nil {
			if _, err := os.Stat(loc.file); err == nil {
				ix, err := open(loc.file, loc.root)
				if err != nil {
					return nil, ""
				}
				return ix, prefix
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, ""
		}
		prefix = filepath.Base(d) + "/" + prefix
		d = parent
	}
}
