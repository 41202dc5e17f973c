package index

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// Finder finds the index that covers a search, for grep (core.ContentIndex).
type Finder struct {
	// Abs places a path as the backend does (localfs.FS.Abs).
	Abs func(path string) string
	// Walker lists the directories that changed since the build, and
	// Config is the backend's fingerprint as it stands at a search
	// (localfs.FS.Fingerprint): without them, or under another
	// fingerprint than the build's, grep walks the whole tree.
	Walker backend.Walker
	Config func() string
	// View is what a walk of a path shows (localfs.FS.WalkView): the list
	// stands for a walk only of the index's root spelled by its real
	// names, and is shown as that walk shows it.
	View func(path string) (display string, asReal bool, err error)
	// Roots are the backend's: an index whose tree reaches outside them
	// is not used, as index --status does not tell of it.
	Roots []string
	// Direct lets the index open the candidates itself, relative to their
	// proven directories; only for a backend that denies no file by
	// identity (localfs.FS.DeniesFiles).
	Direct bool
}

// Local is the Finder of a local workspace, everything taken from it.
func Local(fsys *localfs.FS) Finder {
	return Finder{Abs: fsys.Abs, Walker: fsys, Config: fsys.Fingerprint, Direct: !fsys.DeniesFiles(), View: fsys.WalkView, Roots: fsys.Roots()}
}

// Within is the Finder of the local roots of a mixed workspace fsys: it
// narrows only a search of a path fsys places in local, so that a path of
// another backend (an object store) is never answered from a local index.
func Within(fsys backend.FS, local *localfs.FS) core.ContentIndex {
	return within{fsys: fsys, local: local, Finder: Local(local)}
}

type within struct {
	fsys  backend.FS
	local *localfs.FS
	Finder
}

func (w within) Narrow(ctx context.Context, q core.IndexQuery) (*core.Narrowing, error) {
	if backend.At(w.fsys, q.Path) != backend.FS(w.local) {
		return nil, nil
	}
	return w.Finder.Narrow(ctx, q)
}

// maxRelisted bounds the directories changed since the build that a
// search lists again rather than walking the whole tree.
const maxRelisted = 256

// Narrow says what the index covering q.Path proves: nil when none covers
// it, it fails a check, or the query yields no trigram. A search of the
// index's root whose ignore files are unchanged gets the whole list of
// files, with no walk: every indexed directory and file is stat'ed, the
// directories changed since the build listed again. Otherwise each file
// the walk visits is tested.
func (f Finder) Narrow(ctx context.Context, q core.IndexQuery) (*core.Narrowing, error) {
	plan := Plan(q.Query, q.IsRegex, q.IgnoreCase)
	if plan.All() {
		return nil, nil
	}
	state := localfs.ExistingStateDir()
	if state == "" {
		return nil, nil
	}
	dir, err := realDir(f.Abs(q.Path))
	if err != nil {
		return nil, nil
	}
	ix, prefix := coveringWithin(state, dir, f.Roots)
	if ix == nil {
		return nil, nil
	}
	defer ix.Close()
	if !builtAs(ix.config, localfs.Credentials()) {
		// Built by a caller of other rights (root, another group): a
		// file it ruled out or found binary may be one this caller
		// cannot open, which a scan counts unreadable, never searched.
		return nil, nil
	}
	cand, err := ix.candidates(plan)
	if err != nil {
		return nil, nil // corrupt: never trusted, the search reads every file
	}
	if prefix == "" && !q.NoIgnore && len(q.Exclude) == 0 && f.Walker != nil && f.View != nil && ix.config == f.Config() {
		// Spelled through a link, the walk reads other rules than the
		// build's: each file it visits is judged instead.
		if display, asReal, err := f.View(q.Path); err == nil && asReal {
			n, err := f.list(ctx, ix, q.Path, cand)
			if n != nil {
				n.Display = display
			}
			if err != nil || n != nil {
				return n, err
			}
		}
	}
	files := ix.files
	byRel := make(map[string]int32, len(files))
	for i := range files {
		if rel, ok := strings.CutPrefix(files[i].rel, prefix); ok {
			byRel[rel] = int32(i)
		}
	}
	return &core.Narrowing{Judge: func(rel string, info backend.FileInfo) core.Verdict {
		i, ok := byRel[rel]
		if !ok {
			return core.Verdict{}
		}
		return verdict(&files[i], info, cand.has(uint32(i)))
	}}, nil
}

// verdict is what the index proves of the indexed file f, whose info is
// now info: skip when it is the same file and binary, or cannot match.
func verdict(f *fileEntry, info backend.FileInfo, candidate bool) core.Verdict {
	return judge(f, same(f, info), candidate)
}

// judge is verdict for a file known to be, or not to be, the indexed one.
func judge(f *fileEntry, same, candidate bool) core.Verdict {
	switch {
	case !same || f.flags&(flagOpaque|flagRacy) != 0:
		return core.Verdict{}
	case f.flags&flagBinary != 0:
		return core.Verdict{Skip: true, Binary: true}
	case candidate:
		return core.Verdict{}
	}
	return core.Verdict{Skip: true, Text: f.flags&flagText != 0}
}

// What the stat pass found of an indexed file in an unchanged directory.
const (
	fileGone    = iota // no such regular file: a name the walk skips
	fileChanged        // a regular file of another identity
	fileSame
)

// What the stat pass found of an indexed directory.
const (
	dirSame    = iota
	dirChanged // listed again through the walk
	dirGone    // or no longer a directory: its files are gone from the list
)

// failedDir is what an indexed directory that could not be opened or
// stat'ed is to the stat pass: gone when nothing is there or it is no
// longer a directory (a link), changed when it may not be entered (the
// walk then answers for it as a scan does), errWalk when its path is
// too long to open by name (the walk goes by descriptors), and for any
// other error
// (EMFILE, EIO) the error, which fails the search: a list without the
// directory's files would answer less than the tree holds, with exit 0.
func failedDir(err error) (uint8, error) {
	switch err {
	case unix.ENOENT, unix.ENOTDIR, unix.ELOOP, unix.EMLINK: // EMLINK: a link, on FreeBSD
		return dirGone, nil
	case unix.EACCES, unix.EPERM:
		return dirChanged, nil
	case unix.ENAMETOOLONG:
		// Deeper than a path can name: the walk, which goes by
		// descriptors, lists it.
		return dirGone, errWalk
	}
	return dirGone, err
}

// errWalk says that the list cannot be proven: grep walks.
var errWalk = errors.New("walk the tree")

// list is every file a walk of the index's root (spelled searchPath)
// would visit, in walk order, with what the index proves of each, and the
// directories the walk could not read (Unreadable); nil when
// it cannot be proven without a walk (an ignore file changed, too many
// directories changed).
func (f Finder) list(ctx context.Context, ix *Index, searchPath string, cand bitset) (*core.Narrowing, error) {
	if ix.rulesChanged() {
		return nil, nil
	}
	dirOf := make(map[string]int32, len(ix.dirs))
	for i, d := range ix.dirs {
		dirOf[d.path] = int32(i)
	}
	// One pass over the files: the directory of each (-1 when the index
	// holds none), asked of the map once per run of files of one
	// directory, as the walk lists them; and the indexed ignore files:
	// one changed or gone changes the rules, and one racy may have
	// changed during the build, so the search walks.
	fileDir := make([]int32, len(ix.files))
	lastDir, last := "", int32(-1)
	if d, ok := dirOf[""]; ok {
		last = d
	}
	for i := range ix.files {
		fe := &ix.files[i]
		dir, base := "", fe.rel
		if slash := strings.LastIndexByte(fe.rel, '/'); slash >= 0 {
			dir, base = fe.rel[:slash], fe.rel[slash+1:]
		}
		if isIgnoreName(base) {
			fi, err := localfs.LstatAbs(ix.root + "/" + fe.rel)
			if err != nil || fi.Type != backend.TypeFile || !same(fe, fi) || fe.flags&flagRacy != 0 {
				return nil, nil
			}
		}
		if dir != lastDir {
			lastDir, last = dir, -1
			if d, ok := dirOf[dir]; ok {
				last = d
			}
		}
		fileDir[i] = last
	}
	filesOf := groupByDir(fileDir, len(ix.dirs))
	// Each directory is opened (not followed) and its identity compared;
	// the files of an unchanged one are stat'ed relative to it, a short
	// lookup, and are in that very directory. A watcher's answer spares
	// the directories where nothing happened since the build.
	var check []bool
	if r, ok := askWatcher(ctx, ix); ok {
		if c, ok := r.toCheck(ix); ok {
			check = c
		}
	}
	dirState := make([]uint8, len(ix.dirs))
	dirErr := make([]error, len(ix.dirs))
	fileState := make([]uint8, len(ix.files))
	parallel(len(ix.dirs), func(i int) {
		if check != nil && !check[i] {
			for _, j := range filesOf.of(i) {
				fileState[j] = fileSame
			}
			return
		}
		fd, err := unix.Open(filepath.Join(ix.root, ix.dirs[i].path), dirFlags, 0)
		if err != nil {
			dirState[i], dirErr[i] = failedDir(err)
			return
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			dirState[i], dirErr[i] = failedDir(err)
			return
		}
		if !localfs.IsVersion(&st, ix.dirs[i].version) {
			dirState[i] = dirChanged
			return
		}
		for _, j := range filesOf.of(i) {
			fe := &ix.files[j]
			err := unix.Fstatat(fd, path.Base(fe.rel), &st, unix.AT_SYMLINK_NOFOLLOW)
			switch {
			case err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG:
				fileState[j] = fileChanged
				if fe.isStat(&st) {
					fileState[j] = fileSame
				}
			case err != nil && err != unix.ENOENT:
				// Not known gone: the walk lists the directory again
				// and answers for its files as a scan does.
				dirState[i] = dirChanged
				return
			}
		}
	})
	if slices.Contains(dirErr, errWalk) {
		return nil, nil
	}
	for _, err := range dirErr {
		if err != nil {
			return nil, fault.Errorf(fault.CodeIOError, "checking the index against the tree failed: %v.", err).WithCause(err).
				WithHint("retry; if it persists, raise the limit it hit (ulimit -n for open files) or search with --no-index")
		}
	}
	changed := map[string]bool{}
	var gone []string
	for i, s := range dirState {
		switch s {
		case dirChanged:
			changed[ix.dirs[i].path] = true
		case dirGone:
			gone = append(gone, ix.dirs[i].path+"/")
		}
	}
	if len(changed) > maxRelisted {
		return nil, nil
	}
	groups := ix.copyGroups(cand)
	out := make([]core.IndexedFile, 0, len(ix.files))
	for i := range ix.files {
		fe := &ix.files[i]
		d := fileDir[i]
		if d >= 0 && dirState[d] == dirChanged || len(gone) > 0 && underAny(fe.rel, gone) {
			continue // listed again below, or gone
		}
		if fileState[i] == fileGone {
			continue // gone since, with its directory unchanged: a name the walk skips
		}
		file := core.IndexedFile{Rel: fe.rel, Verdict: judge(fe, fileState[i] == fileSame, cand.has(uint32(i)))}
		if !file.Skip && groups != nil && groups[i] != 0 && fileState[i] == fileSame && fe.flags&(flagOpaque|flagRacy) == 0 {
			file.Same, file.Still = int(groups[i]), ix.still(fe)
		}
		if !file.Skip && f.Direct {
			version := ""
			if d >= 0 {
				version = ix.dirs[d].version
			}
			file.Open = ix.opener(fe.rel, version)
		}
		out = append(out, file)
	}
	if len(changed) == 0 {
		return &core.Narrowing{Files: out}, nil
	}
	extra, unreadable, err := f.relist(ctx, ix, searchPath, changed, gone, cand)
	if errors.Is(err, errWalk) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(unreadable) > 0 {
		// A walk does not go below a directory it cannot list: the
		// directories the index holds there, still reachable by path
		// (chmod 311 keeps x), are not searched, whether unchanged or
		// listed again (recorded racy, with no version), nor counted.
		closed := make([]string, len(unreadable))
		for i, u := range unreadable {
			closed[i] = u + "/"
		}
		below := func(file core.IndexedFile) bool { return underAny(file.Rel, closed) }
		out, extra = slices.DeleteFunc(out, below), slices.DeleteFunc(extra, below)
		unreadable = slices.DeleteFunc(unreadable, func(u string) bool {
			return slices.ContainsFunc(closed, func(c string) bool { return strings.HasPrefix(u, c) })
		})
	}
	slices.SortFunc(extra, func(a, b core.IndexedFile) int { return core.WalkOrder(a.Rel, b.Rel) })
	return &core.Narrowing{Files: mergeWalkOrder(out, extra), Unreadable: unreadable}, nil
}

// dirFiles are the files of each directory, in one slice: those of
// directory d are files[start[d]:start[d+1]].
type dirFiles struct{ start, files []int32 }

// groupByDir groups files by their directories, fileDir[i] being file i's
// (-1: none), in file order.
func groupByDir(fileDir []int32, dirs int) dirFiles {
	g := dirFiles{start: make([]int32, dirs+1), files: make([]int32, 0, len(fileDir))}
	for _, d := range fileDir {
		if d >= 0 {
			g.start[d+1]++
		}
	}
	for d := range dirs {
		g.start[d+1] += g.start[d]
	}
	g.files = g.files[:g.start[dirs]]
	next := slices.Clone(g.start[:dirs])
	for i, d := range fileDir {
		if d >= 0 {
			g.files[next[d]] = int32(i)
			next[d]++
		}
	}
	return g
}

func (g dirFiles) of(d int) []int32 { return g.files[g.start[d]:g.start[d+1]] }

// relist lists the changed directories again through the backend's walk,
// ignore files and all, going into the directories the index does not
// hold (new ones); those it holds are checked on their own.
func (f Finder) relist(ctx context.Context, ix *Index, searchPath string, changed map[string]bool, gone []string, cand bitset) ([]core.IndexedFile, []string, error) {
	known := make(map[string]bool, len(ix.dirs))
	for _, d := range ix.dirs {
		known[d.path] = true
	}
	byRel := make(map[string]int, len(ix.files))
	for i := range ix.files {
		byRel[ix.files[i].rel] = i
	}
	recorded := make(map[string]bool, len(ix.watched))
	for _, w := range ix.watched {
		recorded[w.path] = true
	}
	var extra []core.IndexedFile
	var unreadable []string
	for d := range changed {
		if underAny(d, gone) {
			continue
		}
		if ix.rulesAppeared(d, byRel, recorded) {
			return nil, nil, errWalk
		}
		start := searchPath
		if d != "" {
			start = searchPath + "/" + d
		}
		opts := backend.WalkOptions{Unreadable: func(_, rel string) { unreadable = append(unreadable, path.Join(d, rel)) }}
		err := f.Walker.Walk(ctx, start, opts, func(e backend.WalkEntry) error {
			rel := e.Rel
			if d != "" {
				rel = d + "/" + e.Rel
			}
			switch e.Type {
			case backend.TypeDir:
				if known[rel] {
					return backend.ErrSkipDir
				}
				return nil
			case backend.TypeFile:
			default:
				return nil
			}
			if isIgnoreFile(rel) {
				if i, ok := byRel[rel]; !ok || !sameNow(&ix.files[i], e) {
					return errWalk // a new or changed ignore file: the rules may have changed
				}
			}
			file := core.IndexedFile{Rel: rel}
			if i, ok := byRel[rel]; ok {
				if info, err := e.Info(); err == nil {
					file.Verdict = verdict(&ix.files[i], info, cand.has(uint32(i)))
				}
			}
			extra = append(extra, file)
			return nil
		})
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err != nil && !errors.Is(err, errWalk) && fault.AsError(err).Code == fault.CodePermissionDenied && d != "" {
			// The directory itself may not be read (the build recorded it
			// without a version): a walk skips and counts it, and so does
			// this list, rather than walking the whole tree each time. The
			// search's own start is not skipped: the walk fails there.
			unreadable = append(unreadable, d)
			continue
		}
		if err != nil {
			return nil, nil, errWalk // a new ignore file, or a directory gone since: the walk decides
		}
	}
	return extra, unreadable, nil
}

// rulesAppeared reports whether the directory d holds a rules file (an
// ignore file, .git) that was not there at the build. Its walk below
// would visit it only when not ignored, and never a .git directory, and
// the directories below d that the index holds keep lists made under the
// old rules: a new nested repository drops the outer .gitignore there.
// Those there at the build are checked on their own (indexed files, and
// the records of rulesChanged).
func (ix *Index) rulesAppeared(d string, byRel map[string]int, recorded map[string]bool) bool {
	for _, name := range rulesFiles {
		rel := path.Join(d, name)
		if _, ok := byRel[rel]; ok {
			continue
		}
		abs := filepath.Join(ix.root, rel)
		if recorded[abs] {
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(abs, &st); err != unix.ENOENT && err != unix.ENOTDIR {
			return true // there, or not known absent: the walk decides
		}
	}
	return false
}

// inDir reports whether rel is the directory dir or below it ("" is the
// tree's root).
func inDir(rel, dir string) bool {
	return dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// parent is the directory of rel, "" for the root.
func parent(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ""
	}
	return rel[:i]
}

// opener opens the file at rel relative to its directory, once that is
// proven to be the one the stat pass found (an ancestor swapped for a link
// since is a directory of another identity), never following a link:
// what a walk's open does, at the cost of three system calls. When it
// cannot (the directory changed since, the open failed), the error is
// core.ErrReopen: the search opens the file by its path, whose error, if
// any, is the answer, as in a walk.
func (ix *Index) opener(rel, dirVersion string) func() (io.ReadCloser, error) {
	dir := filepath.Join(ix.root, parent(rel))
	name := path.Base(rel)
	return func() (io.ReadCloser, error) {
		dfd, err := unix.Open(dir, dirFlags, 0)
		if err != nil {
			return nil, core.ErrReopen
		}
		defer unix.Close(dfd)
		var st unix.Stat_t
		if unix.Fstat(dfd, &st) != nil || !localfs.IsVersion(&st, dirVersion) {
			return nil, core.ErrReopen
		}
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, core.ErrReopen
		}
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return nil, core.ErrReopen
		}
		return localfs.FDReader(fd), nil
	}
}

// still reports, when called, whether the file f is now as the index
// holds it (its identity by its path, not following a link).
func (ix *Index) still(f *fileEntry) func() bool {
	return func() bool {
		var st unix.Stat_t
		return unix.Lstat(filepath.Join(ix.root, f.rel), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && f.isStat(&st)
	}
}

// sameNow reports whether a walked file is the indexed one.
func sameNow(f *fileEntry, e backend.WalkEntry) bool {
	info, err := e.Info()
	return err == nil && same(f, info)
}

// isIgnoreFile reports whether the file at rel holds rules a walk reads.
// (.git/info/exclude, the one of localfs.IgnoreFiles below a directory,
// is never indexed: the walk skips .git.)
func isIgnoreFile(rel string) bool { return isIgnoreName(path.Base(rel)) }

// isIgnoreName reports whether a file named base holds rules a walk
// reads: each is a dot file, and most names are not.
func isIgnoreName(base string) bool {
	return strings.HasPrefix(base, ".") && slices.Contains(localfs.IgnoreFiles, base)
}

// underAny reports whether rel lies below one of the directories (each
// with a trailing slash; "/" is the root).
func underAny(rel string, dirs []string) bool {
	for _, d := range dirs {
		if d == "/" || strings.HasPrefix(rel, d) || rel+"/" == d {
			return true
		}
	}
	return false
}

// mergeWalkOrder merges two lists sorted in walk order.
func mergeWalkOrder(a, b []core.IndexedFile) []core.IndexedFile {
	out := make([]core.IndexedFile, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if core.WalkOrder(a[0].Rel, b[0].Rel) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// parallel runs f(0..n-1) on as many goroutines as there are processors:
// the stat pass is system calls, one per path.
func parallel(n int, f func(int)) {
	workers := max(1, runtime.GOMAXPROCS(0))
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		if lo >= hi {
			break
		}
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
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
