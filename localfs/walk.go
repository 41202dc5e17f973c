package localfs

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/ignore"
	"golang.org/x/sys/unix"
)

var _ backend.Walker = (*FS)(nil)

// The ignore files a directory may hold (package ignore ranks them).
const (
	agentfsIgnoreFile = ".agentfsignore"
	ignoreFile        = ".ignore"
	gitignoreFile     = ".gitignore"
	gitDir            = ".git"
)

// maxIgnoreFile bounds what is read of one ignore file.
const maxIgnoreFile = 1 << 20

// dirFlags opens a directory of a walk: O_NOFOLLOW makes a directory swapped
// for a link between the listing and the open fail instead of leading away.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

type walker struct {
	f       *FS
	ctx     context.Context
	opts    backend.WalkOptions
	visit   func(backend.WalkEntry) error
	display string
	// baseRel is where the base lies below the start, when the start is
	// shown absolute (outside the base): entries from there on are shown
	// relative, as Display shows them. Every directory on the way is a
	// real one, the base being resolved, so no link is taken for it.
	baseRel string
	ign     ignore.Sets
	exclude ignore.Excludes
	// denyBelow are the deny roots inside the walk, checked by name; the
	// others are checked by the identity of each directory opened.
	denyBelow []string
	realStart string
	dirent    []byte
	// dirs are the directories from the start to the one being listed,
	// and rel the path of that one from the start: one buffer for the
	// whole walk, so that memory grows with the depth, not its square.
	dirs *dirStack
	rel  []byte
	// levels are the directories being listed, from the start, and comps
	// the components of the deepest from the root ruledFrom gave.
	levels []walkLevel
	comps  []string
	// from is WalkOptions.From in components, and startDepth the number of
	// the start's own components in comps; onFrom is set while the level
	// being entered lies on the path of from.
	from       []string
	startDepth int
	onFrom     bool
	// cur is the entry being visited and info its Info, made once: Info is
	// valid only during the visit, so a walk allocates nothing for it.
	cur  curEntry
	info func() (backend.FileInfo, error)
}

type curEntry struct {
	fd            int
	name, display string
	// st is the entry's stat when the walk took one (deniedEntry), which
	// Info then answers from.
	st     unix.Stat_t
	stated bool
}

// Walk implements backend.Walker. Every directory is opened relative to its
// open parent with O_NOFOLLOW, and every file read through Open likewise, so
// the walk cannot be led out of the start directory by a path swapped for a
// link while it runs.
func (f *FS) Walk(ctx context.Context, path string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	t, err := f.resolve(path)
	if err != nil {
		return err
	}
	now := f.listings.clock()
	dir, st, err := f.openChecked(t, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return f.missingUncommitted(t, err)
	}
	defer dir.Close()
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fault.NotADirectory(t.display(f))
	}
	if err := f.checkCommitted(dir, t); err != nil {
		return err
	}
	w := &walker{f: f, ctx: ctx, opts: opts, visit: visit, display: t.display(f), dirent: make([]byte, 32<<10),
		exclude: ignore.NewExcludes(opts.Exclude, opts.ExcludeBase)}
	if filepath.IsAbs(w.display) && f.showsRelative() {
		if rel, ok := within(t.abs, f.base); ok && rel != "." {
			w.baseRel = rel
		}
	}
	w.info = func() (backend.FileInfo, error) {
		if w.cur.stated {
			return infoFromStat(w.cur.name, &w.cur.st), nil
		}
		return infoAt(w.cur.fd, w.cur.name, w.cur.display)
	}
	w.realStart = realPath(dir, t.root.path+"/"+t.rel)
	for _, d := range f.denies() {
		if _, ok := within(w.realStart, d.path); ok {
			w.denyBelow = append(w.denyBelow, d.path)
		}
	}
	rulesRoot, comps := f.ruledFrom(t)
	if !opts.NoIgnore {
		w.ign.Done = ctx.Done()
		if err := w.loadAncestors(rulesRoot, comps); err != nil {
			return err
		}
		if len(comps) > 0 && w.ign.Match(comps, true) {
			w.ign.SetStart(comps)
		}
	}
	fd, err := unix.Dup(int(dir.Fd()))
	if err != nil {
		return mapErr(err, w.display)
	}
	w.dirs = newDirStack(fd, &st)
	defer w.dirs.close()
	w.comps = slices.Clip(comps)
	w.startDepth = len(comps)
	if opts.From != "" {
		w.from, w.onFrom = strings.Split(opts.From, "/"), true
	}
	err = w.walk(&st, now)
	if errors.Is(err, backend.ErrStopWalk) {
		return nil
	}
	return err
}

// WalkView is what a walk of the directory p shows: the display its paths
// start with, and whether p is spelled by the real names of its directory
// below its root (no link between them). A walk matches the ignore rules
// above its start against the names as spelled, so a walk through a link
// visits other files than one by the real names.
func (f *FS) WalkView(p string) (display string, asReal bool, err error) {
	t, err := f.resolve(p)
	if err != nil {
		return "", false, err
	}
	real, err := f.evalSymlinks(filepath.Join(t.root.path, t.rel))
	if err != nil {
		return "", false, mapErr(err, t.display(f))
	}
	rel, ok := within(t.root.path, real)
	return t.display(f), ok && rel == t.rel, nil
}

// DirIdentity is the device and inode of the directory p as the backend
// reaches it: through its descriptors, which may hold a directory that
// was removed or replaced since (a root, or a working directory).
func (f *FS) DirIdentity(p string) (dev, ino uint64, err error) {
	t, err := f.resolve(p)
	if err != nil {
		return 0, 0, err
	}
	dir, st, err := f.openChecked(t, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return 0, 0, err
	}
	dir.Close()
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, 0, fault.NotADirectory(t.display(f))
	}
	return uint64(st.Dev), st.Ino, nil
}

// loadAncestors reads the ignore files of the directories above the start,
// at comps below the root r (ruledFrom's), so that searching a
// subdirectory ignores what searching the whole tree would. .gitignore
// files above the nearest git repository are not git's, and are left out.
func (w *walker) loadAncestors(r *root, comps []string) error {
	for i := range comps {
		rel := "."
		if i > 0 {
			rel = strings.Join(comps[:i], "/")
		}
		at := target{root: r, rel: rel, abs: filepath.Join(r.path, rel)}
		dir, err := w.f.open(at, dirFlags&^unix.O_NOFOLLOW)
		if err != nil {
			if goneErr(err) {
				continue
			}
			return err
		}
		err = w.loadIgnores(int(dir.Fd()), comps[:i], nil, at.display(w.f), true)
		dir.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// loadIgnores adds the rules of the directory fd (at comps below the root
// ruledFrom gave, shown as display; above the walk's start when above,
// else at w.rel) to w.ign. names, when known, says which ignore files
// exist.
func (w *walker) loadIgnores(fd int, comps []string, names []string, display string, above bool) error {
	has := func(n string) bool { return names == nil || slices.Contains(names, n) }
	depth := len(comps)
	var failed error
	read := func(k ignore.Kind, name string) {
		data, err := w.f.readIgnore(fd, name, w.opts.RulesRead)
		switch {
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
			// Its rules are unknown, so what they hide is shown: the
			// answer is partial, counted as an unreadable directory
			// is (it passed --exit-status, exit 0), and named as an
			// entry of the walk is; one above the start comes before
			// every entry (rel ""), and is no entry's namesake.
			if above {
				w.unreadable(err, display+"/"+name, "")
			} else {
				fileRel := strings.TrimPrefix(string(w.rel)+"/"+name, "/")
				w.unreadable(err, w.join(fileRel), fileRel)
			}
		case err != nil && failed == nil:
			failed = mapErr(err, display+"/"+name)
		}
		w.ign.Add(k, ignore.Compile(data, depth))
	}
	if has(gitDir) {
		exists, isDir, err := kindAt(fd, gitDir, w.opts.RulesRead)
		if err != nil {
			return mapErr(err, display+"/"+gitDir)
		}
		if exists {
			// A .git file (a submodule's, a worktree's) or link (the
			// repo tool's) starts a repository too, as for git, rg and
			// fd; its info/exclude is in the directory it names, which
			// is not read.
			w.ign.StartRepository()
		}
		if isDir {
			read(ignore.Exclude, gitDir+"/info/exclude")
		}
	}
	if has(gitignoreFile) {
		read(ignore.Git, gitignoreFile)
	}
	if has(ignoreFile) {
		read(ignore.Ignore, ignoreFile)
	}
	if has(agentfsIgnoreFile) {
		read(ignore.Agentfs, agentfsIgnoreFile)
	}
	return failed
}

// kindAt reports whether name in the directory fd exists as a directory,
// a regular file or a link (never followed, whatever it points at), and
// whether it is a directory (not a link to one), and tells found the
// version of one that is.
func kindAt(fd int, name string, found func(string)) (exists, isDir bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if goneErr(err) {
			return false, false, nil
		}
		return false, false, err
	}
	isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
	exists = isDir || st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFLNK
	if found != nil && exists {
		found(version(&st))
	}
	return exists, isDir, nil
}

// readIgnore reads one ignore file of the directory fd, opened without
// following links. A file that is missing, a link, not a regular file or
// unreadable has no rules (no bytes), as in git; any other error is
// returned, since leaving its rules out would show what it ignores. A file
// that is, or is inside, a deny root by identity has no rules either: it
// is not read, as nothing of a deny root is, and its rules would tell of
// its content (what they hide).
//
// read, when set, is told the file's version, stat'ed before its bytes
// are read: a change after the stat gives the file another version.
func (f *FS) readIgnore(dirfd int, name string, read func(string)) ([]byte, error) {
	// The directories on the way (.git/info) are opened one at a time
	// without following a link either: one would lead the read out of
	// the roots or into a deny root.
	if dir, rest, ok := strings.Cut(name, "/"); ok {
		fd, err := unix.Openat(dirfd, dir, dirFlags, 0)
		if err == unix.EMLINK { // a link, on FreeBSD
			err = unix.ELOOP
		}
		if err != nil {
			if goneErr(err) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
				return nil, nil
			}
			return nil, err
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, err
		}
		if f.deniedDirIdentity(&st) {
			return nil, nil
		}
		return f.readIgnore(fd, rest, read)
	}
	var st unix.Stat_t
	fd, err := openRegularAt(dirfd, name, &st)
	if err != nil {
		// ENXIO: a socket, on systems that open to learn the type.
		permission := errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
		if !permission && (goneErr(err) || errors.Is(err, errNotRegular) || errors.Is(err, unix.ENXIO)) {
			return nil, nil
		}
		return nil, err
	}
	defer unix.Close(fd)
	if f.deniedIdentity(&st) {
		return nil, nil
	}
	if read != nil {
		read(version(&st))
	}
	return io.ReadAll(io.LimitReader(&fdReader{fd: fd}, maxIgnoreFile))
}

// errNotRegular refuses a file that is not a regular one (openRegularAt).
var errNotRegular = errors.New("not a regular file")

// openRegularAt opens the regular file name of the directory dirfd for
// reading, never following a link, and stats it into st. The name is
// stat'ed first: a FIFO, device or link put in a listed file's place
// since the listing is refused (errNotRegular) unopened, so a blocked
// writer is not released nor a device's open run. What is then opened is
// read if it is a regular file, whichever: one renamed over the name in
// between (a write's temp file) is the file there now, not a file to
// skip. An O_PATH descriptor reopened through /proc/self/fd would shut
// the microseconds between the two calls too, but cost grep over Go's
// source 31% of its time, against 11% for this (hyperfine, 20 runs each);
// and off Linux there is no O_PATH.
func openRegularAt(dirfd int, name string, st *unix.Stat_t) (int, error) {
	var was unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &was, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, err
	}
	if was.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, errNotRegular
	}
	return openReadAt(dirfd, name, st)
}

// openReadAt opens name of the directory dirfd for reading, without
// following a link or waiting on a FIFO, and refuses anything but a
// regular file (errNotRegular: the signing key too); st gets the stat of
// what was opened, which every identity check is made on.
func openReadAt(dirfd int, name string, st *unix.Stat_t) (int, error) {
	fd, err := syscalls.openRead(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.EMLINK { // a link (EMLINK: FreeBSD's answer)
		return -1, errNotRegular
	}
	if err != nil {
		return -1, err
	}
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || isSigningKey(st) {
		// The signing key by another name is skipped as a special file
		// is: no search reads it.
		unix.Close(fd)
		return -1, errNotRegular
	}
	return fd, nil
}

// fdReader reads a raw descriptor: cheaper than an *os.File, which asks the
// runtime poller about every file it wraps.
type fdReader struct {
	fd int
	// st is the file's stat, taken when it was opened, if stated.
	st     unix.Stat_t
	stated bool
}

func (r *fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(r.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *fdReader) Close() error { return unix.Close(r.fd) }

// Info describes the file open, by its descriptor: the identity of the
// very bytes read, without a second lookup of its name. The stat of the
// open is its answer when there was one.
func (r *fdReader) Info() (backend.FileInfo, error) {
	if !r.stated {
		if err := unix.Fstat(r.fd, &r.st); err != nil {
			return backend.FileInfo{}, err
		}
		r.stated = true
	}
	return infoFromStat("", &r.st), nil
}

// FDReader reads and closes the raw descriptor fd as a walk's opens do
// (the content index opens files itself, relative to their directories).
func FDReader(fd int) io.ReadCloser { return &fdReader{fd: fd} }

type dirEntry struct {
	name string
	typ  backend.FileType
}

// infoAt describes the entry name of the directory fd without following
// it, with a link's text.
func infoAt(fd int, name, display string) (backend.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return infoFromStat(name, &st), nil
	}
	st, target, err := linkAt(fd, name)
	if err != nil {
		return backend.FileInfo{}, mapErr(err, display)
	}
	fi := infoFromStat(name, &st)
	if fi.Type == backend.TypeSymlink {
		fi.Target = target
	}
	return fi, nil
}

// openFileAt opens the regular file name of the directory fd. The listing
// said regular file: anything put in its place since (a link, a FIFO, a
// device) is refused unopened, NOT_REGULAR, and the walk's callers skip it
// as one gone; a regular file renamed over it is read. The stat of what
// was opened tells the type and gives the identity, which a deny root
// that is a file is compared with, since a hard link elsewhere in the
// tree is the same file under another name.
func (w *walker) openFileAt(fd int, dirDev uint64, name, display string) (io.ReadCloser, error) {
	var st unix.Stat_t
	f, err := openRegularAt(fd, name, &st)
	if err != nil {
		return nil, mapErr(err, display)
	}
	if w.f.deniedIdentity(&st) {
		unix.Close(f)
		return nil, w.f.deniedErr(display)
	}
	if uint64(st.Dev) != dirDev {
		// Another device than its directory's: a file of a kernel file
		// system may be bind-mounted over a listed one.
		if name := kernelFSOf(f); name != "" {
			unix.Close(f)
			return nil, kernelFSErr(name, display)
		}
	}
	return &fdReader{fd: f, st: st, stated: true}, nil
}

// walkLevel is the state of one directory of the walk: its entries, the
// next to visit, and what the directories below it change and leave.
type walkLevel struct {
	entries []dirEntry
	next    int
	// relLen and depth are the lengths of its path in w.rel and of its
	// components in w.comps; the deeper levels write after them.
	relLen, depth int
	saved         ignore.Sets
	// onFrom: the level lies on the path of WalkOptions.From, whose
	// component at this level is fromName.
	onFrom   bool
	fromName string
}

// walk visits the tree below the start, the directory at the top of
// w.dirs with the stat st (taken after now) and the components w.comps,
// depth first. It keeps a level per directory on its way down, not a
// call, so that a deep tree costs a few hundred bytes a level. Every
// error fails the walk but for an entry gone, swapped for a link or
// unreadable (goneErr), which is skipped as ripgrep skips it.
func (w *walker) walk(st *unix.Stat_t, now time.Time) error {
	if _, err := w.enter(st, now); err != nil {
		return err
	}
	for len(w.levels) > 0 {
		lv := &w.levels[len(w.levels)-1]
		if lv.next == len(lv.entries) {
			w.leave()
			continue
		}
		e := lv.entries[lv.next]
		lv.next++
		if err := w.visitEntry(lv, e); err != nil {
			return err
		}
	}
	return nil
}

// enter starts the level of the directory at the top of w.dirs (with the
// stat st of its descriptor, taken after now, at w.rel and w.comps). It
// reports false, for the caller to leave the directory, when it is
// denied, gone or moved.
func (w *walker) enter(st *unix.Stat_t, now time.Time) (bool, error) {
	onFrom := w.onFrom
	w.onFrom = false
	if err := w.ctx.Err(); err != nil {
		return false, err
	}
	dir, err := w.dirs.top()
	if err != nil {
		return false, w.dirErr(err)
	}
	if _, parentDev := w.dirs.devs(); w.deniedDir(dir.fd, st, parentDev) {
		return false, nil
	}
	entries, err := w.list(dir.fd, st, now)
	if err != nil {
		return false, w.dirErr(err)
	}
	lv := walkLevel{entries: entries, relLen: len(w.rel), depth: len(w.comps), saved: w.ign}
	if onFrom {
		// Resumed: the entries before From's name at this level were
		// walked by an earlier page.
		lv.onFrom, lv.fromName = true, w.from[lv.depth-w.startDepth]
		lv.next, _ = slices.BinarySearchFunc(entries, lv.fromName, func(e dirEntry, name string) int { return strings.Compare(e.name, name) })
	}
	w.levels = append(w.levels, lv)
	if w.opts.NoIgnore && w.opts.RulesListed == nil {
		return true, nil
	}
	var names []string
	for _, e := range entries {
		switch e.name {
		case gitDir, gitignoreFile, ignoreFile, agentfsIgnoreFile:
			names = append(names, e.name)
		}
	}
	if w.opts.RulesListed != nil {
		w.opts.RulesListed(string(w.rel), names)
	}
	if w.opts.NoIgnore || names == nil {
		return true, nil
	}
	return true, w.loadIgnores(dir.fd, w.comps, names, w.here(), false)
}

// list is the listing of the directory fd, whose stat st was taken after
// now: the one kept of it while st proves it current (listings), kept
// only on a file system whose times this machine gives (trusts).
func (w *walker) list(fd int, st *unix.Stat_t, now time.Time) ([]dirEntry, error) {
	if entries, ok := w.f.listings.get(st); ok {
		return entries, nil
	}
	entries, err := w.readNames(fd)
	if err != nil {
		return nil, err
	}
	if len(entries) >= memoMin && w.f.listings.trusts(fd) {
		w.f.listings.put(st, now, entries)
	}
	return entries, nil
}

// leave ends the level of the directory at the top of w.dirs.
func (w *walker) leave() {
	w.ign = w.levels[len(w.levels)-1].saved
	w.levels[len(w.levels)-1] = walkLevel{}
	w.levels = w.levels[:len(w.levels)-1]
	w.dirs.pop()
}

// visitEntry visits the entry e of the directory of level lv, and enters
// it when it is a directory to walk.
func (w *walker) visitEntry(lv *walkLevel, e dirEntry) error {
	// .git is never searched; a write's temporary file is another
	// process's unfinished content, never a result.
	ignored := e.name == gitDir || isTempName(e.name)
	if ignored && !w.opts.ShowIgnored {
		return nil
	}
	w.rel = w.rel[:lv.relLen]
	if lv.relLen > 0 {
		w.rel = append(w.rel, '/')
	}
	w.rel = append(w.rel, e.name...)
	erel := string(w.rel)
	w.rel = w.rel[:lv.relLen]
	isDir := e.typ == backend.TypeDir
	if w.exclude.Match(erel, e.name, isDir) {
		return nil
	}
	w.comps = append(w.comps[:lv.depth], e.name)
	if !w.opts.NoIgnore && !ignored && !w.ign.Empty() {
		ignored = w.ign.Match(w.comps, isDir)
		if err := w.ctx.Err(); err != nil {
			return err // the match may have been cut short
		}
		if ignored && !w.opts.ShowIgnored {
			return nil
		}
	}
	if len(w.denyBelow) > 0 && w.f.deniedName(w.realStart+"/"+erel) {
		return nil
	}
	// The directory may have been closed while a subdirectory was walked:
	// top opens it again.
	dir, err := w.dirs.top()
	if err != nil {
		lv.next = len(lv.entries)
		return w.dirErr(err)
	}
	fd := dir.fd
	w.cur = curEntry{fd: fd, name: e.name}
	if (isDir || w.f.DeniesFiles()) && w.deniedEntry(isDir) {
		if isDir && w.opts.LeftOut != nil {
			w.opts.LeftOut(erel, version(&w.cur.st))
		}
		return nil
	}
	// On From's path above its last name, the entry was visited by an
	// earlier page: the walk only goes down into it.
	passed := lv.onFrom && e.name == lv.fromName && lv.depth-w.startDepth < len(w.from)-1
	entry := backend.WalkEntry{Path: w.join(erel), Rel: erel, Name: e.name, Type: e.typ, Ignored: ignored, Info: w.info}
	w.cur.display = entry.Path
	if e.typ == backend.TypeFile {
		name, display := e.name, entry.Path
		dirDev, _ := w.dirs.devs()
		entry.Open = func() (io.ReadCloser, error) { return w.openFileAt(fd, dirDev, name, display) }
		entry.Later = func() func() (io.ReadCloser, error) {
			dir.refs.Add(1)
			return func() (io.ReadCloser, error) {
				defer dir.release()
				return w.openFileAt(dir.fd, dirDev, name, display)
			}
		}
	}
	err = nil
	if !passed {
		err = w.visit(entry)
	}
	switch {
	case errors.Is(err, backend.ErrSkipDir):
		return nil
	case err != nil:
		return err
	case !isDir || ignored:
		return nil
	}
	now := w.f.listings.clock()
	sub, st, err := openDir(fd, e.name)
	if err != nil {
		if goneErr(err) {
			w.unreadable(err, entry.Path, entry.Rel)
			return nil // gone, swapped for a link, or unreadable: skipped
		}
		return mapErr(err, entry.Path)
	}
	w.dirs.push(e.name, sub, &st)
	w.rel = append(w.rel, erel[lv.relLen:]...)
	w.onFrom = passed
	entered, err := w.enter(&st, now)
	if !entered {
		w.dirs.pop()
		w.rel = w.rel[:lv.relLen]
	}
	return err
}

// dirErr maps an error of the directory being listed: one moved or gone
// meanwhile is skipped with the rest of its entries, as one gone before
// the walk came to it would be.
func (w *walker) dirErr(err error) error {
	if errors.Is(err, errMoved) || goneErr(err) {
		w.unreadable(err, w.here(), string(w.rel))
		return nil
	}
	return mapErr(err, w.here())
}

// unreadable tells WalkOptions.Unreadable of the directory at path (rel),
// skipped for err, when err is a lack of permission.
func (w *walker) unreadable(err error, path, rel string) {
	if w.opts.Unreadable != nil && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
		w.opts.Unreadable(path, rel)
	}
}

// here is the display path of the directory being listed.
func (w *walker) here() string {
	if len(w.rel) == 0 {
		return w.display
	}
	return w.join(string(w.rel))
}

// deniedEntry reports the entry being visited denied by identity: a bind
// mount of a deny root, a kernel file system, a hard link to a denied
// file. It is left out of the walk as one denied by name is, not listed
// and then refused; the directory is checked again when entered, and the
// file when opened, for one put in its place since. The stat it takes
// answers the entry's Info, unless the entry is a link.
func (w *walker) deniedEntry(isDir bool) bool {
	fd, name, st := w.cur.fd, w.cur.name, &w.cur.st
	if unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false // gone: the visit or the open says so
	}
	w.cur.stated = st.Mode&unix.S_IFMT != unix.S_IFLNK
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return !isDir && w.f.deniedIdentity(st)
	}
	if w.f.deniedDirIdentity(st) {
		return true
	}
	if dirDev, _ := w.dirs.devs(); uint64(st.Dev) == dirDev {
		return false // its directory's file system, checked when entered
	}
	// A mount point, whose file system is asked.
	return onKernelFS(fd, name)
}

// deniedDir reports a directory (fd, with the identity st) that is a deny
// root by identity (a bind mount or another spelling of it), or on a
// kernel file system, asked of fd when its device is not its parent's
// (parentDev): a mount point. The answer is not kept by device number,
// which a file system mounted later may be given again.
func (w *walker) deniedDir(fd int, st *unix.Stat_t, parentDev uint64) bool {
	return uint64(st.Dev) != parentDev && kernelFSOf(fd) != "" || w.f.deniedDirIdentity(st)
}

func (w *walker) join(rel string) string {
	if w.baseRel != "" {
		if rel == w.baseRel {
			return "."
		}
		if inBase, ok := strings.CutPrefix(rel, w.baseRel+"/"); ok {
			return inBase
		}
	}
	switch w.display {
	case ".":
		return rel
	case "/":
		return "/" + rel
	}
	return w.display + "/" + rel
}

// readLink reads a link's text with read, lstat's size a first guess: a
// file system may say 0, so a full buffer grows (a link's text never
// changes).
func readLink(read func([]byte) (int, error), size int64) (string, error) {
	for n := int(size) + 1; ; n *= 2 {
		buf := make([]byte, n)
		got, err := read(buf)
		if err != nil {
			return "", err
		}
		if got < n {
			return string(buf[:got]), nil
		}
	}
}
