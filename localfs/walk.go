package localfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/agentfs/agentfs/core"
	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"
)

var _ core.Walker = (*FS)(nil)

// Ignore files, from the highest precedence to the lowest, as ripgrep ranks
// them (.agentfsignore plays the part of ripgrep's --ignore-file).
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
	opts    core.WalkOptions
	visit   func(core.WalkEntry) error
	display string
	ign     ignoreSets
	// denyBelow are the deny roots inside the walk, checked by name; the
	// others are checked by the identity of each directory opened.
	denyBelow []string
	realStart string
	dirent    []byte
	// kernelDev caches, per device, whether it is a kernel file system.
	kernelDev map[uint64]bool
	// cur is the entry being visited and info its Info, made once: Info is
	// valid only during the visit, so a walk allocates nothing for it.
	cur  curEntry
	info func() (core.FileInfo, error)
}

type curEntry struct {
	fd            int
	name, display string
}

// Walk implements core.Walker. Every directory is opened relative to its
// open parent with O_NOFOLLOW, and every file read through Open likewise, so
// the walk cannot be led out of the start directory by a path swapped for a
// link while it runs.
func (f *FS) Walk(ctx context.Context, path string, opts core.WalkOptions, visit func(core.WalkEntry) error) error {
	t, err := f.resolve(path)
	if err != nil {
		return err
	}
	dir, st, err := f.openChecked(t, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return err
	}
	defer dir.Close()
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return core.Errorf(core.CodeNotADirectory, "the path is a file, not a directory.").
			WithPath(t.display(f)).WithHint("pass a directory; use read to read a file")
	}
	w := &walker{f: f, ctx: ctx, opts: opts, visit: visit, display: t.display(f), dirent: make([]byte, 32<<10)}
	w.info = func() (core.FileInfo, error) { return infoAt(w.cur.fd, w.cur.name, w.cur.display) }
	w.realStart = realPath(dir, t.root.path+"/"+t.rel)
	for _, d := range f.deny {
		if _, ok := within(w.realStart, d.path); ok {
			w.denyBelow = append(w.denyBelow, d.path)
		}
	}
	var comps []string
	if t.rel != "." {
		comps = strings.Split(t.rel, "/")
	}
	if !opts.NoIgnore {
		w.ign.done = ctx.Done()
		w.loadAncestors(t, comps)
		if len(comps) > 0 && w.ign.match(comps, true) {
			w.ign.setStart(comps)
		}
	}
	fd, err := unix.Dup(int(dir.Fd()))
	if err != nil {
		return mapErr(err, w.display)
	}
	err = w.walkDir(fd, "", comps)
	if errors.Is(err, core.ErrStopWalk) {
		return nil
	}
	return err
}

// loadAncestors reads the ignore files of the directories above the start,
// inside its root, so that searching a subdirectory ignores what searching
// the whole tree would. .gitignore files above the nearest git repository
// are not git's, and are left out.
func (w *walker) loadAncestors(t target, comps []string) {
	for i := range comps {
		rel := "."
		if i > 0 {
			rel = strings.Join(comps[:i], "/")
		}
		dir, err := w.f.open(target{root: t.root, rel: rel, abs: t.root.path}, dirFlags&^unix.O_NOFOLLOW)
		if err != nil {
			continue
		}
		w.loadIgnores(int(dir.Fd()), comps[:i], nil)
		dir.Close()
	}
}

// loadIgnores adds the patterns of the directory fd (at root-relative comps)
// to w.ign. names, when known, says which ignore files exist.
func (w *walker) loadIgnores(fd int, comps []string, names map[string]bool) {
	has := func(n string) bool { return names == nil || names[n] }
	depth := len(comps)
	if has(gitDir) && isDirAt(fd, gitDir) {
		// A repository starts here: the outer repository's .gitignore files
		// and info/exclude are not its own.
		w.ign.git = nil
		w.ign.exclude = addIgnore(nil, readIgnore(fd, gitDir+"/info/exclude", depth))
	}
	if has(gitignoreFile) {
		w.ign.git = addIgnore(w.ign.git, readIgnore(fd, gitignoreFile, depth))
	}
	if has(ignoreFile) {
		w.ign.ignore = addIgnore(w.ign.ignore, readIgnore(fd, ignoreFile, depth))
	}
	if has(agentfsIgnoreFile) {
		w.ign.agentfs = addIgnore(w.ign.agentfs, readIgnore(fd, agentfsIgnoreFile, depth))
	}
}

func addIgnore(set []*ruleSet, f *ruleSet) []*ruleSet {
	if f == nil {
		return set
	}
	return append(set, f)
}

func isDirAt(fd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// readIgnore reads and compiles one ignore file, opened without following
// links, of the directory fd at depth components below the root; a missing
// or unreadable file has no rules, as in git.
func readIgnore(dirfd int, name string, depth int) *ruleSet {
	fd, err := openatNoFollow(dirfd, name)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	data, err := io.ReadAll(io.LimitReader(&fdReader{fd: fd}, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return compileIgnore(data, depth)
}

// openatNoFollow opens a regular file relative to dirfd, refusing a link or
// anything but a regular file (a FIFO would block a reader).
func openatNoFollow(dirfd int, name string) (int, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, unix.EINVAL
	}
	return fd, nil
}

// fdReader reads a raw descriptor: cheaper than an *os.File, which asks the
// runtime poller about every file it wraps.
type fdReader struct{ fd int }

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

type dirEntry struct {
	name string
	typ  core.FileType
}

// readNames lists a directory by getdents, with the type the kernel gives
// (lstat relative to the directory when it gives none), in name order.
func (w *walker) readNames(fd int) ([]dirEntry, error) {
	var out []dirEntry
	for {
		n, err := unix.ReadDirent(fd, w.dirent)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		for b := w.dirent[:n]; len(b) > 0; {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen == 0 || reclen > len(b) {
				break
			}
			typ := b[18]
			nameb := b[19:reclen]
			if i := bytes.IndexByte(nameb, 0); i >= 0 {
				nameb = nameb[:i]
			}
			b = b[reclen:]
			if string(nameb) == "." || string(nameb) == ".." {
				continue
			}
			e := dirEntry{name: string(nameb)}
			switch typ {
			case unix.DT_REG:
				e.typ = core.TypeFile
			case unix.DT_DIR:
				e.typ = core.TypeDir
			case unix.DT_LNK:
				e.typ = core.TypeSymlink
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue // gone since the listing
				}
				e.typ = infoFromStat(e.name, &st).Type
			default:
				e.typ = core.TypeOther
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// infoAt describes the entry name of the directory fd without following
// it, with a link's text.
func infoAt(fd int, name, display string) (core.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return core.FileInfo{}, mapErr(err, display)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return infoFromStat(name, &st), nil
	}
	// The link itself is opened (O_PATH), so that its text and its stat
	// are of one file even when the name is replaced meanwhile.
	lfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return core.FileInfo{}, mapErr(err, display)
	}
	defer unix.Close(lfd)
	if err := unix.Fstat(lfd, &st); err != nil {
		return core.FileInfo{}, mapErr(err, display)
	}
	fi := infoFromStat(name, &st)
	if fi.Type != core.TypeSymlink {
		return fi, nil
	}
	// lstat gives the text's length, except on file systems that say 0: a
	// full buffer may be short, and grows (a link's text never changes).
	for size := int(st.Size) + 1; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(lfd, "", buf)
		if err != nil {
			return core.FileInfo{}, mapErr(err, display)
		}
		if n < size {
			fi.Target = string(buf[:n])
			return fi, nil
		}
	}
}

// dirRef is an open directory of a walk, closed when the walk has left it
// and every file opener handed out for it has run.
type dirRef struct {
	fd   int
	refs atomic.Int32
}

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// openFileAt opens the regular file name of the directory fd. The listing
// said regular file; O_NONBLOCK keeps a FIFO swapped in since from
// blocking, and O_NOFOLLOW a link from being followed. There is no fstat per
// file unless a deny root is a file: then the opened file's identity is
// compared with it, since a hard link elsewhere in the tree is the same file
// under another name.
func (w *walker) openFileAt(fd int, name, display string) (io.ReadCloser, error) {
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, mapErr(err, display)
	}
	if w.f.denyFiles {
		var st unix.Stat_t
		if unix.Fstat(f, &st) != nil || w.f.deniedIdentity(&st) {
			unix.Close(f)
			return nil, w.f.deniedErr(display)
		}
	}
	return &fdReader{fd: f}, nil
}

// walkDir visits the entries of the directory fd (which it closes once
// every opener handed out for its files has run), at rel from the start and
// comps from the root.
func (w *walker) walkDir(fd int, rel string, comps []string) error {
	dir := &dirRef{fd: fd}
	dir.refs.Store(1)
	defer dir.release()
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if w.deniedDir(fd) {
		return nil
	}
	entries, err := w.readNames(fd)
	if err != nil {
		return nil // unreadable directories are skipped, as ripgrep does
	}
	saved := w.ign
	defer func() { w.ign = saved }()
	if !w.opts.NoIgnore {
		var names map[string]bool
		for _, e := range entries {
			switch e.name {
			case gitDir, gitignoreFile, ignoreFile, agentfsIgnoreFile:
				if names == nil {
					names = map[string]bool{}
				}
				names[e.name] = true
			}
		}
		if names != nil {
			w.loadIgnores(fd, comps, names)
		}
	}
	useIgnore := !w.opts.NoIgnore && !w.ign.empty()
	depth := len(comps)
	for _, e := range entries {
		// .git is never searched; a write's temporary file is another
		// process's unfinished content, never a result.
		ignored := e.name == gitDir || isTempName(e.name)
		if ignored && !w.opts.ShowIgnored {
			continue
		}
		erel := e.name
		if rel != "" {
			erel = rel + "/" + e.name
		}
		isDir := e.typ == core.TypeDir
		if w.excluded(erel, e.name, isDir) {
			continue
		}
		if useIgnore && !ignored {
			comps = append(comps[:depth], e.name)
			ignored = w.ign.match(comps, isDir)
			if err := w.ctx.Err(); err != nil {
				return err // the match may have been cut short
			}
			if ignored && !w.opts.ShowIgnored {
				continue
			}
		}
		if len(w.denyBelow) > 0 && w.f.deniedName(w.realStart+"/"+erel) {
			continue
		}
		entry := core.WalkEntry{Path: w.join(erel), Rel: erel, Name: e.name, Type: e.typ, Ignored: ignored, Info: w.info}
		w.cur = curEntry{fd: fd, name: e.name, display: entry.Path}
		if e.typ == core.TypeFile {
			name, display := e.name, entry.Path
			entry.Open = func() (io.ReadCloser, error) { return w.openFileAt(fd, name, display) }
			entry.Later = func() func() (io.ReadCloser, error) {
				dir.refs.Add(1)
				return func() (io.ReadCloser, error) {
					defer dir.release()
					return w.openFileAt(dir.fd, name, display)
				}
			}
		}
		err := w.visit(entry)
		if errors.Is(err, core.ErrSkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if !isDir || ignored {
			continue
		}
		sub, err := unix.Openat(fd, e.name, dirFlags, 0)
		if err != nil {
			continue // gone, swapped for a link, or unreadable: skipped
		}
		if err := w.walkDir(sub, erel, append(comps[:depth], e.name)); err != nil {
			return err
		}
	}
	return nil
}

// excluded applies --exclude: a glob with a slash matches the path from the
// start, one without matches the name at any depth, and a final slash
// (build/) matches directories only, as in an ignore file.
func (w *walker) excluded(rel, name string, isDir bool) bool {
	for _, g := range w.opts.Exclude {
		if dirOnly := strings.HasSuffix(g, "/"); dirOnly {
			if !isDir {
				continue
			}
			g = strings.TrimSuffix(g, "/")
		}
		subject := name
		if strings.Contains(g, "/") {
			subject = rel
		}
		if doublestar.MatchUnvalidated(g, subject) {
			return true
		}
	}
	return false
}

// deniedDir reports a directory that is a deny root by identity (a bind
// mount or another spelling of it), or on a kernel file system (asked once
// per device: a walk enters a new one only at a mount point).
func (w *walker) deniedDir(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return true
	}
	kernel, known := w.kernelDev[uint64(st.Dev)]
	if !known {
		kernel = kernelFSOf(fd) != ""
		if w.kernelDev == nil {
			w.kernelDev = map[uint64]bool{}
		}
		w.kernelDev[uint64(st.Dev)] = kernel
	}
	return kernel || w.f.deniedDirIdentity(&st)
}

func (w *walker) join(rel string) string {
	switch w.display {
	case ".":
		return rel
	case "/":
		return "/" + rel
	}
	return w.display + "/" + rel
}
