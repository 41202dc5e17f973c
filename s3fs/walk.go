package s3fs

import (
	"context"
	"errors"
	"io"
	"iter"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/ignore"
	"github.com/agentfs/agentfs/s3client"
)

// The ignore files a directory may hold, as in every backend.
const (
	agentfsIgnoreFile = ".agentfsignore"
	ignoreFile        = ".ignore"
	gitignoreFile     = ".gitignore"
	gitDir            = ".git"
)

// lastIgnoreName is the greatest of the names above: past it, a listing
// holds no more ignore files.
const lastIgnoreName = ignoreFile

// maxIgnoreFile bounds what is read of one ignore file.
const maxIgnoreFile = 1 << 20

type walker struct {
	f       *FS
	ctx     context.Context
	opts    backend.WalkOptions
	visit   func(backend.WalkEntry) error
	ign     ignore.Sets
	exclude ignore.Excludes
}

// Walk visits the tree below path depth-first, each directory listed (one
// delimiter listing) when the walk comes to it and its names visited in
// byte order. Ignore files are objects, fetched where a listing shows them.
func (f *FS) Walk(ctx context.Context, p string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	c, err := f.place(ctx, p)
	if err != nil {
		return err
	}
	if !opts.Stated {
		// A HEAD and a listing, which a caller's Stat has just made
		// (grep's): asked again, they doubled its cost.
		fi, err := f.Stat(ctx, c)
		if err != nil {
			return err
		}
		if fi.Type != backend.TypeDir {
			// A store may hold a key as a file and a prefix both (a and
			// a/b, put by another tool): the directory is walked, where
			// it was NOT_A_DIRECTORY, and no path named it (a/ is a).
			if dir, err := f.isDir(ctx, c); err != nil {
				return err
			} else if !dir {
				return fault.NotADirectory(c)
			}
		}
	}
	w := &walker{f: f, ctx: ctx, opts: opts, visit: visit, exclude: ignore.NewExcludes(opts.Exclude, opts.ExcludeBase)}
	var comps []string
	if c != "." {
		comps = strings.Split(c, "/")
	}
	if !opts.NoIgnore {
		w.ign.Done = ctx.Done()
		for i := range comps {
			dir := path.Join(append([]string{"."}, comps[:i]...)...)
			names, err := f.dotNames(ctx, dir)
			if err != nil {
				return err
			}
			if err := w.loadIgnores(dir, comps[:i], names); err != nil {
				return err
			}
		}
		if len(comps) > 0 && w.ign.Match(comps, true) {
			w.ign.SetStart(comps)
		}
	}
	var from []string
	if opts.From != "" {
		from = strings.Split(opts.From, "/")
	}
	err = w.walkDir(c, "", comps, from)
	if errors.Is(err, backend.ErrStopWalk) {
		return nil
	}
	return err
}

// dotNames returns the names starting with a dot in directory dir, where
// ignore files and .git are: one listing, short unless the directory holds
// many such names.
func (f *FS) dotNames(ctx context.Context, dir string) (map[string]bool, error) {
	dk := f.dirKey(dir)
	names := map[string]bool{}
	for o, err := range f.c.List(ctx, dk+".", "/", 0, "") {
		if err != nil {
			return nil, f.mapErr(err, dir)
		}
		names[strings.TrimSuffix(o.Key[len(dk):], "/")] = true
	}
	return names, nil
}

// loadIgnores adds the rules of the ignore files of directory dir (at
// comps from the root) to w.ign; names, from a listing, says which of
// them exist.
func (w *walker) loadIgnores(dir string, comps []string, names map[string]bool) error {
	has := func(n string) bool { return names[n] }
	read := func(k ignore.Kind, name string) error {
		data, err := w.f.readIgnore(w.ctx, path.Join(dir, name))
		w.ign.Add(k, ignore.Compile(data, len(comps)))
		return err
	}
	if has(gitDir) {
		// A .git object (a submodule's file) starts a repository too, as
		// a .git directory does; only a directory has an info/exclude.
		w.ign.StartRepository()
		isDir, err := w.f.isDir(w.ctx, path.Join(dir, gitDir))
		if err != nil {
			return err
		}
		if isDir {
			if err := read(ignore.Exclude, gitDir+"/info/exclude"); err != nil {
				return err
			}
		}
	}
	for _, k := range []struct {
		kind ignore.Kind
		name string
	}{{ignore.Git, gitignoreFile}, {ignore.Ignore, ignoreFile}, {ignore.Agentfs, agentfsIgnoreFile}} {
		if has(k.name) {
			if err := read(k.kind, k.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// readIgnore reads an ignore file: a missing one has no rules; any other
// failure is returned, since leaving its rules out would show what it
// ignores.
func (f *FS) readIgnore(ctx context.Context, c string) ([]byte, error) {
	if f.denied(c) {
		// Not read, as nothing denied is: its rules would tell of its
		// content (what they hide).
		return nil, nil
	}
	body, err := f.c.Get(ctx, f.key(c), "", 0, 0)
	if err != nil {
		if code, _ := s3client.Code(err); code == "NoSuchKey" {
			return nil, nil
		}
		return nil, f.mapErr(err, c)
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxIgnoreFile))
	return data, f.mapErr(err, c)
}

// walkDir walks directory c, at rel from the start and comps from the
// root; from, when set, is the rest of WalkOptions.From below c.
func (w *walker) walkDir(c, rel string, comps, from []string) error {
	start := ""
	if len(from) > 0 {
		start = from[0]
	}
	// A key no path can name is skipped as unreadable, as one listed
	// under a name the store does not hold is: a search says it is
	// partial instead of passing over a file it could not read.
	next, stop := iter.Pull2(w.f.entries(w.ctx, c, start, func(name string) {
		if w.opts.Unreadable != nil {
			w.opts.Unreadable(strings.TrimPrefix(c+"/"+name, "/"), strings.TrimPrefix(rel+"/"+name, "/"))
		}
	}))
	defer stop()
	saved := w.ign
	defer func() { w.ign = saved }()
	head, err := w.dirIgnores(c, comps, start, next)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		info := backend.FileInfo{}
		if i < len(head) {
			info = head[i]
		} else {
			e, err, ok := next()
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			info = e
		}
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name, isDir := info.Name, info.Type == backend.TypeDir
		full, erel := path.Join(c, name), path.Join(rel, name)
		ecomps := append(slices.Clip(comps), name)
		ignored := name == gitDir
		if ignored && !w.opts.ShowIgnored || w.exclude.Match(erel, name, isDir) {
			continue
		}
		if !w.opts.NoIgnore && !ignored && !w.ign.Empty() {
			ignored = w.ign.Match(ecomps, isDir)
			if err := w.ctx.Err(); err != nil {
				return err // the match may have been cut short
			}
			if ignored && !w.opts.ShowIgnored {
				continue
			}
		}
		if strings.ContainsRune(name, utf8.RuneError) {
			// A store that ignores encoding-type=url (versitygw) lists a
			// byte XML cannot carry as U+FFFD: a name it does not hold is
			// counted unreadable, so that a search says it is partial
			// instead of passing over a file it could not read, or the
			// files below a directory it listed empty.
			found, err := w.f.holds(w.ctx, full, isDir)
			if err != nil {
				return err
			}
			if !found {
				if w.opts.Unreadable != nil {
					w.opts.Unreadable(full, erel)
				}
				continue
			}
		}
		e := backend.WalkEntry{Path: full, Rel: erel, Name: name, Type: info.Type, Ignored: ignored,
			Info: func() (backend.FileInfo, error) { return info, nil }}
		if !isDir {
			open := func() (io.ReadCloser, error) { return w.f.get(w.ctx, full) }
			e.Open = open
			e.Later = func() func() (io.ReadCloser, error) { return open }
		}
		// On From's path above its last name, the entry was visited by an
		// earlier page: the walk only goes down into it.
		var below []string
		if len(from) > 1 && name == from[0] {
			if !isDir {
				// A file of the directory's name (a store holds both a
				// and a/b), visited before it: From is below the
				// directory, which was taken for visited and walked
				// again from its start, page after page.
				continue
			}
			below = from[1:]
		} else {
			switch err := w.visit(e); {
			case errors.Is(err, backend.ErrSkipDir):
				continue
			case err != nil:
				return err
			}
		}
		from = nil
		if isDir && !ignored {
			if err := w.walkDir(full, erel, ecomps, below); err != nil {
				return err
			}
		}
	}
}

// dirIgnores puts the rules of directory c's ignore files in force before
// any of its entries is visited. They are dot-names, which sort early: the
// entries up to the first name past them are read from next and returned,
// to be visited first. A walk resumed at start, past them, lists the
// dot-names apart.
func (w *walker) dirIgnores(c string, comps []string, start string, next func() (backend.FileInfo, error, bool)) ([]backend.FileInfo, error) {
	if w.opts.NoIgnore {
		return nil, nil
	}
	if start != "" {
		names, err := w.f.dotNames(w.ctx, c)
		if err != nil {
			return nil, err
		}
		return nil, w.loadIgnores(c, comps, names)
	}
	var head []backend.FileInfo
	names := map[string]bool{}
	for {
		e, err, ok := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		head = append(head, e)
		names[e.Name] = true
		if e.Name > lastIgnoreName {
			break
		}
	}
	return head, w.loadIgnores(c, comps, names)
}

// get streams the object at c with one GET, which says what version it
// serves and which transaction wrote it (backend.SettledReader).
func (f *FS) get(ctx context.Context, c string) (io.ReadCloser, error) {
	body, o, err := f.c.GetObject(ctx, f.key(c))
	if err != nil {
		return nil, f.mapErr(err, c)
	}
	return &settledReader{ReadCloser: body, f: f, c: c, version: o.ETag, mark: o.Meta[txnMeta]}, nil
}
