package index

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/ordered"
	"golang.org/x/sys/unix"
)

// errReplaced is a walked file's that is no longer a regular file.
var errReplaced = errors.New("no longer a regular file")

// ErrLocked is the error of a build that could not take the builders' lock
// in time.
var ErrLocked = errors.New("another build of this index holds its lock")

// lock takes the builders' flock at name, waiting up to timeout: on the
// file at the name once taken, which Sweep may unlink under it.
func lock(ctx context.Context, name string, timeout time.Duration) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	fd, err := localfs.LockFile(ctx, name, unix.LOCK_EX, deadline)
	// A lock is a file: an empty directory at its name is no lock anyone
	// holds, and rmdir removes nothing else. It failed every build.
	if errors.Is(err, unix.EISDIR) && unix.Rmdir(name) == nil {
		fd, err = localfs.LockFile(ctx, name, unix.LOCK_EX, deadline)
	}
	if errors.Is(err, localfs.ErrLockTimeout) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, lockFileErr(name, err)
	}
	return func() { unix.Close(fd) }, nil
}

// lockFileErr is err, met taking the lock file at name, with the name:
// what is there but a file (a link, a directory with entries) is left
// for the user to remove, since only a file can be another's live lock
// and no unlink can tell them apart atomically.
func lockFileErr(name string, err error) error {
	fi, lerr := os.Lstat(name)
	if lerr != nil || fi.Mode().IsRegular() {
		return &os.PathError{Op: "lock", Path: name, Err: err}
	}
	what := "a special file"
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		what = "a symbolic link"
	case fi.IsDir():
		what = "a directory"
	}
	return fault.Errorf(fault.CodeIOError, "the lock file %s is not a file (%s).", name, what).
		WithHint("remove %s (agentfs makes the file again), then retry", name).WithCause(err)
}

// BuildOptions are what a caller can change of a build.
type BuildOptions struct {
	// LockTimeout is how long to wait for another builder.
	LockTimeout time.Duration
	// Progress, when set, is called now and then with the files and bytes
	// walked so far.
	Progress func(files int, bytes int64)
	// Config is the backend's fingerprint (localfs.FS.Fingerprint), and
	// Roots its roots: the ignore files between the root and the tree are
	// watched too.
	Config string
	Roots  []string
	// View is what a walk of the tree shows (localfs.FS.WalkView): a tree
	// spelled through a link is walked under other rules than its real
	// names, and its index's list is then never used for a search's walk
	// (its config is left empty); its files are judged one by one.
	View func(path string) (display string, asReal bool, err error)
	// onlyExisting, for a watcher's build again, builds only over an index
	// in place: a dropped one is errDropped.
	onlyExisting bool
}

// ConfigOf is the fingerprint a build of the directory path under o
// records: for a tree spelled through a link (see View), only the
// credentials it was built with (see builtAs).
func (o BuildOptions) ConfigOf(path string) string {
	if o.View != nil {
		if _, asReal, err := o.View(path); err != nil || !asReal {
			return localfs.Credentials()
		}
	}
	return o.Config
}

// builtAs reports whether an index whose build recorded config was built
// with the credentials creds (localfs.Credentials), which its fingerprint
// begins with.
func builtAs(config, creds string) bool {
	return config == creds || strings.HasPrefix(config, creds+" ")
}

// Build builds or updates the index of the directory path (at the absolute
// path abs), walked through w as grep walks it (ignore files honoured). A file whose identity is the
// one the old index holds keeps its trigrams without being read. An old
// index that fails a check is not used: the build starts afresh.
func Build(ctx context.Context, w backend.Walker, path, abs string, opts BuildOptions) (Status, error) {
	// A watcher of another version would write its own format over this
	// build at once (it takes the build for one it does not know, and
	// builds again): this build said built, and searches read every file.
	if loc, err := locateExisting(abs); err == nil {
		if pid, ok := otherVersionWatcher(ctx, loc.file, ofOtherFormat(loc.file)); ok {
			return Status{}, otherVersionErr(pid)
		}
	}
	ix, st, err := buildOpen(ctx, w, path, abs, opts)
	if err != nil {
		return Status{}, err
	}
	ix.Close()
	return st, nil
}

// ofOtherFormat reports whether the file at name is an index of another
// format than this version's, by its header as a sweep reads it.
func ofOtherFormat(name string) bool {
	_, _, err := rootOf(name)
	return errors.Is(err, errOtherVersion)
}

// buildOpen is Build, the new index left open: taken under the builders'
// lock, it is the one this build wrote.
func buildOpen(ctx context.Context, w backend.Walker, path, abs string, opts BuildOptions) (*Index, Status, error) {
	opts.Config = opts.ConfigOf(path)
	loc, err := locateMaking(abs)
	if err != nil {
		return nil, Status{}, err
	}
	unlock, err := lock(ctx, loc.lock, opts.LockTimeout)
	if err != nil {
		return nil, Status{}, err
	}
	defer unlock()
	if _, err := os.Lstat(loc.file); opts.onlyExisting && errors.Is(err, os.ErrNotExist) {
		return nil, Status{}, errDropped
	}
	old, err := open(loc.file, loc.root)
	if err == nil && !old.tableChecks() {
		// The build reads every trigram of the table: one out of range
		// indexed past the set of trigrams (a panic on every build).
		old.Close()
		err = errCorrupt
	}
	if err != nil {
		old = nil // none, or not trusted: rebuilt from the files
	} else {
		defer old.Close()
	}
	b, err := build(ctx, w, path, loc, old, opts)
	if errors.Is(err, errCorrupt) && old != nil {
		// A posting list of the old index failed its check: read everything.
		b, err = build(ctx, w, path, loc, nil, opts)
	}
	if err != nil {
		return nil, Status{}, err
	}
	ix, err := open(loc.file, loc.root)
	if err != nil {
		return nil, Status{}, fmt.Errorf("the index just written does not check: %w", err)
	}
	st := ix.status()
	st.Reused, st.Read = b.reused, b.read
	return ix, st, nil
}

// build walks the tree and writes the index, reusing old's trigrams.
func build(ctx context.Context, w backend.Walker, path string, loc location, old *Index, opts BuildOptions) (*builder, error) {
	b := &builder{old: old, progress: opts.Progress, racy: now().Add(-backend.RacySlack).UnixNano(), lists: make(chan []uint32, 256),
		claims: newClaims(), claimant: map[contentKey]uint32{}, rulesRead: map[string]bool{}, unreadable: map[string]bool{},
		rulesIn: map[string][]string{}}
	rootInfo, err := localfs.LstatAbs(loc.root)
	if err != nil {
		return nil, err
	}
	b.dirs = []record{b.dirRecord("", rootInfo)}
	if err := sameTree(w, path, loc.root); err != nil {
		return nil, err
	}
	b.post = newRuns(loc.runs)
	defer b.post.release()
	// The ignore files to watch are looked up (a few stats per directory)
	// once the walk has listed the tree, while the last files are read,
	// and the old index is checked or the posting lists are written.
	watched := make(chan []record, 1)
	listed := func() { go func() { watched <- b.watch(loc.root, opts.Roots) }() }
	if err := b.walk(ctx, w, path, listed); err != nil {
		return nil, err
	}
	if err := sameTree(w, path, loc.root); err != nil {
		return nil, err
	}
	b.link()
	b.distrustChangedRules()
	for i := range b.dirs {
		if b.unreadable[b.dirs[i].path] {
			b.dirs[i].version = ""
		}
	}
	// An index made before the root's device was recorded is written
	// again, unchanged or not, so that Sweep can tell its file system away.
	if b.unchanged(old, opts.Config) && old.h.hasRootDev {
		// Every file, directory and ignore file as the old index holds
		// it: that index stands, once all of it checks.
		if err := old.verify(); err != nil {
			return nil, err
		}
		w := <-watched
		if slices.Equal(w, old.watched) {
			return b, nil
		}
		watched <- w
	}
	return b, b.write(loc, watched, opts.Config)
}

// ErrTreeReplaced is a build's error when the directory the backend walks
// is not the one the index is named and stamped by.
var ErrTreeReplaced = errors.New("the directory was removed or replaced")

// sameTree checks that the directory the walker reaches as path (through
// its descriptors: a root, or a working directory held open) is the one
// at root by name, which the index is named by. A watcher started inside
// a tree that was then removed and made again walked the removed, empty
// directory and stamped the result as the new one's index: every search
// of the new tree found nothing, with exit 0.
func sameTree(w backend.Walker, path, root string) error {
	id, ok := w.(interface {
		DirIdentity(string) (uint64, uint64, error)
	})
	if !ok {
		return nil
	}
	dev, ino, err := id.DirIdentity(path)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(root, &st); err != nil {
		return err
	}
	if uint64(st.Dev) != dev || st.Ino != ino {
		return ErrTreeReplaced
	}
	return nil
}

// unchanged reports whether the walk found the tree as old recorded it,
// under the same configuration: nothing read, every file and directory
// with its recorded identity, in the same order.
func (b *builder) unchanged(old *Index, config string) bool {
	return old != nil && b.read == 0 && old.config == config &&
		slices.Equal(b.files, old.files) && slices.Equal(b.dirs, old.dirs) && slices.Equal(b.copies, old.copies)
}

// distrustChangedRules flags racy each indexed ignore file whose identity
// is not one the walk read its rules at: changed in between, the
// recorded identity would vouch for rules the index's list does not obey.
// A flagged ignore file makes every search walk until the next build.
func (b *builder) distrustChangedRules() {
	for i := range b.files {
		if f := &b.files[i]; isIgnoreFile(f.rel) && !b.rulesRead[f.version] {
			f.flags |= flagRacy
		}
	}
}

// unprovenVersion is the version recorded of an unindexed ignore file (or
// .git directory) that the walk did not read as it is now: no file has
// it, so every search walks until the next build.
const unprovenVersion = "unproven"

// dirRecord is what the index records of the directory at rel: no version
// when it changed too recently to prove its listing, so that every search
// lists it again.
func (b *builder) dirRecord(rel string, info backend.FileInfo) record {
	if changedAt(info) >= b.racy {
		return record{path: rel}
	}
	return record{path: rel, version: info.Version}
}

// now is the clock of the racy rule. The tests set it ahead: their trees,
// dated back by mtime, cannot date back the ctime of what they just wrote.
var now = time.Now

// changedAt is when info's file last changed, in ns: the later of its
// mtime and ctime. A file whose mtime a tool set back (tar x, cp -p,
// rsync -a) changed when its ctime says, and on a file system of coarse
// timestamps a second change in the same tick keeps its identity.
func changedAt(info backend.FileInfo) int64 {
	return max(info.ModTime.UnixNano(), info.ChangeTime.UnixNano())
}

// builder accumulates the files of a walk and the trigrams of those read.
type builder struct {
	old      *Index
	oldByRel map[string]int
	files    []fileEntry
	// oldID is, per file, its number in the old index when its trigrams
	// are taken from there, else -1.
	oldID []int32
	// repOfOld maps a file of the old index whose posting lists name it
	// to the file of the new index they then name, -1 when none.
	repOfOld []int32
	post     *runs
	// claims are the contents the extractors claimed; claimant, the file
	// that claimed each; repeats, the files of a content claimed before.
	claims   *claims
	claimant map[contentKey]uint32
	repeats  []repeat
	copies   []copyOf
	reused   int
	read     int
	progress func(int, int64)
	bytes    int64
	// racy is the change time (changedAt) from which a file read is
	// flagRacy.
	racy int64
	dirs []record
	// lists are trigram lists handed back by the consumer for the
	// extractors to fill again.
	lists chan []uint32
	// rulesRead are the versions of the ignore files and .git
	// directories the walk read, as it read them.
	rulesRead map[string]bool
	// unreadable are the directories the walk could not enter or list
	// (no permission): recorded without a version, so that every search
	// lists them again and counts them unreadable, as a walk does.
	unreadable map[string]bool
	// leftOut are the directories the walk left out by what they are (a
	// kernel file system mounted there), by path below the tree, with
	// their versions: watched, so that a search walks once one is another
	// directory (the mount taken off), which its listed parent does not say.
	leftOut []record
	// listedRules are the ignore files the walk listed, each a file of
	// the index (by path below the tree); rulesIn are, by directory the
	// walk listed, the names there that may hold rules. Set by list, read
	// by watch.
	listedRules []string
	rulesIn     map[string][]string
}

// watch lists the ignore files (and .git directories, whose info/exclude
// may appear) that a walk reads and that are not indexed files: in every
// directory of the tree, and in those between the backend's root and the
// tree. An absent one is watched too outside the tree, and inside a .git
// directory (.git/info): elsewhere inside, its creation changes its
// directory, which a search lists again (Finder.relist), so only the names
// a directory's listing held are stat'ed (a stat of every name in every
// directory was a twentieth of a build). One the walk did not read as it
// is now is recorded unproven. The directories the walk left out by what
// they are (leftOut) are watched too.
func (b *builder) watch(root string, roots []string) []record {
	// The rules files that are indexed files, by directory and name.
	indexed := map[[2]string]bool{}
	for _, rel := range b.listedRules {
		indexed[[2]string{parent(rel), filepath.Base(rel)}] = true
	}
	var out []record
	// add records the one at dir/name, when absent too if absentToo, and
	// reports whether it is there: stat'ed relative to dirfd, dir open,
	// or by its path when dirfd is -1.
	add := func(dirfd int, dir, name string, absentToo bool) bool {
		var st unix.Stat_t
		var err error
		if dirfd >= 0 {
			err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(filepath.Join(dir, name), &st)
		}
		if err != nil {
			if absentToo {
				out = append(out, record{path: filepath.Join(dir, name)})
			}
			return false
		}
		v, info := rulesVersion(name, &st), localfs.InfoOfStat(name, &st)
		switch {
		case name != gitInfoDir && !b.rulesRead[info.Version]:
			v = unprovenVersion
		case changedAt(info) >= b.racy && (name != ".git" || info.Type != backend.TypeDir):
			// Racy as an indexed ignore file is: a same-size change in
			// the same tick, its mtime set back, keeps the identity.
			// A .git directory is recorded by which one it is alone.
			v = unprovenVersion
		}
		out = append(out, record{path: filepath.Join(dir, name), version: v})
		return true
	}
	opened := &dirOpener{root: root}
	defer opened.close()
	for i := range b.dirs {
		// Only the path: the build may blank a version meanwhile.
		dir := b.dirs[i].path
		names, listed := b.rulesIn[dir]
		if listed && names == nil {
			continue // none listed: one made since changes dir
		}
		hasGit := false
		fd := opened.at(dir)
		abs := filepath.Join(root, dir)
		for _, name := range rulesFiles {
			if first, _, _ := strings.Cut(name, "/"); listed && !slices.Contains(names, first) {
				continue
			}
			if !indexed[[2]string{dir, name}] {
				// .git/info made with its exclude changes .git alone,
				// which is recorded by identity only (rulesVersion).
				there := add(fd, abs, name, name == gitInfoDir && hasGit)
				hasGit = hasGit || (name == ".git" && there)
			}
		}
	}
	for _, d := range b.leftOut {
		out = append(out, record{path: filepath.Join(root, d.path), version: d.version})
	}
	for _, r := range roots {
		rel, err := filepath.Rel(r, root)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		for d := filepath.Dir(root); ; d = filepath.Dir(d) {
			for _, name := range rulesFiles {
				add(-1, d, name, true)
			}
			if d == r || d == filepath.Dir(d) {
				break
			}
		}
	}
	return out
}

// dirOpener opens the directories of a tree in walk order, each relative
// to its parent when that is the last one open: five stats by a full path
// per directory were a tenth of a build's CPU, most of it the kernel
// looking up the same directories again.
type dirOpener struct {
	root string
	// open are the directories open, each below the one before, by path
	// below the tree; fds are their descriptors.
	open []string
	fds  []int
}

// at opens the directory rel (dirFlags), or returns -1 when it cannot (a
// directory replaced by a link since the walk, or, without O_PATH, one
// that may not be read): its names are then stat'ed by path, following
// what the path reaches.
func (o *dirOpener) at(rel string) int {
	for len(o.open) > 0 && !inDir(rel, o.open[len(o.open)-1]) {
		o.pop()
	}
	var fd int
	var err error
	if len(o.open) > 0 && parent(rel) == o.open[len(o.open)-1] {
		fd, err = unix.Openat(o.fds[len(o.fds)-1], filepath.Base(rel), dirFlags, 0)
	} else {
		fd, err = unix.Open(filepath.Join(o.root, rel), dirFlags, 0)
	}
	if err != nil {
		return -1
	}
	o.open, o.fds = append(o.open, rel), append(o.fds, fd)
	return fd
}

func (o *dirOpener) pop() {
	unix.Close(o.fds[len(o.fds)-1])
	o.open, o.fds = o.open[:len(o.open)-1], o.fds[:len(o.fds)-1]
}

func (o *dirOpener) close() {
	for len(o.open) > 0 {
		o.pop()
	}
}

// rulesVersion is what the index records of the rules file name (st):
// its version, but of a .git directory only which one it is. Git writes
// below it all the time (its index, objects, refs), none of it a rule
// (info/exclude is recorded on its own), and every search would walk.
func rulesVersion(name string, st *unix.Stat_t) string {
	if name == ".git" && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Sprintf("git directory %d:%d", st.Dev, st.Ino)
	}
	return localfs.InfoOfStat(name, st).Version
}

// rulesVersionNow is rulesVersion of the rules file at abs now, "" when
// it cannot be stat'ed.
func rulesVersionNow(abs string) string {
	var st unix.Stat_t
	if unix.Lstat(abs, &st) != nil {
		return ""
	}
	return rulesVersion(filepath.Base(abs), &st)
}

// rulesChanged reports whether a rules file the index records outside its
// files (see builder.watch) is not as it was built: the file list may not
// obey the rules in force.
func (ix *Index) rulesChanged() bool {
	for _, w := range ix.watched {
		if rulesVersionNow(w.path) != w.version {
			return true
		}
	}
	return false
}

// gitInfoDir holds a repository's exclude file: watched for that file's
// creation, it is not read by the walk itself.
const gitInfoDir = ".git/info"

// rulesFiles are what a directory holds that decide a walk's rules: its
// ignore files, and the .git directory where a repository's start.
var rulesFiles = append(slices.Clip(localfs.IgnoreFiles), ".git", gitInfoDir)

// readResult is what reading one file gives.
type readResult struct {
	trigrams []uint32
	flags    uint8
	err      error
	// content names the file's bytes when claimed (trigrams are those of
	// content) or repeated (no trigrams: they are the claimant's).
	content           contentKey
	claimed, repeated bool
	// info is the file's, when stat'ed by the descriptor read.
	info *backend.FileInfo
}

// buildItem is a file of the walk, read by a worker and consumed in walk
// order.
type buildItem struct {
	entry fileEntry
	// open is nil for a file whose trigrams are the old index's.
	open func() (io.ReadCloser, error)
	// statOpened marks a file not stat'ed before it is read: its reader
	// stats what it opened.
	statOpened bool
	// changed is the file's changedAt, when stat'ed by the walk.
	changed int64
}

// errNoStat is the error of a reader asked to stat what it opened that
// cannot.
var errNoStat = errors.New("the reader cannot stat the file it opened")

// read opens a file and finds its trigrams: a file stat'ed at size, or,
// when statOpened, one stat'ed now by the descriptor its reader opened.
func (x *extractor) read(open func() (io.ReadCloser, error), statOpened bool, size int64) readResult {
	r, err := open()
	if err != nil {
		return readResult{err: err}
	}
	defer r.Close()
	if !statOpened {
		return x.extract(r, size)
	}
	info, err := backend.FileInfo{}, errNoStat
	if s, ok := r.(interface {
		Info() (backend.FileInfo, error)
	}); ok {
		info, err = s.Info()
	}
	if err == nil && info.Type != backend.TypeFile {
		err = errReplaced
	}
	if err != nil {
		return readResult{err: err}
	}
	res := x.extract(r, info.Size)
	res.info = &info
	return res
}

// buildBatch is the number of files in a batch.
const buildBatch = 16

// walk reads the tree; listed is called once it is listed whole (every
// directory and file recorded by list), if it is.
func (b *builder) walk(ctx context.Context, w backend.Walker, path string, listed func()) error {
	if b.old != nil {
		b.oldByRel = make(map[string]int, len(b.old.files))
		for i, f := range b.old.files {
			b.oldByRel[f.rel] = i
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reader := func() func(buildItem) readResult {
		x := newExtractor(b.lists, b.claims)
		return func(it buildItem) readResult {
			if it.open == nil {
				return readResult{}
			}
			return x.read(it.open, it.statOpened, it.entry.size)
		}
	}
	order, wait := ordered.Start(ctx, max(1, runtime.GOMAXPROCS(0)), buildBatch, reader, nil, func(add func(buildItem) error) error {
		if err := b.list(ctx, w, path, add); err != nil {
			return err
		}
		listed()
		return nil
	})
	consumeErr := b.consume(ctx, order)
	if consumeErr != nil {
		cancel()
	}
	walkErr := wait()
	runsErr := b.post.finish()
	if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return walkErr
	}
	if err := ctx.Err(); err != nil && consumeErr == nil {
		return err
	}
	if consumeErr != nil && !errors.Is(consumeErr, errSpill) {
		return consumeErr
	}
	return runsErr
}

// opener opens the file of e when called: in a worker, relative to its
// directory, when the walker can.
func opener(e backend.WalkEntry) func() (io.ReadCloser, error) {
	if e.Later != nil {
		return e.Later()
	}
	r, err := e.Open()
	return func() (io.ReadCloser, error) { return r, err }
}

// list walks the tree and lists its files, in walk order: open nil when
// a file's trigrams are the old index's, statOpened when it is stat'ed
// only once open.
func (b *builder) list(ctx context.Context, w backend.Walker, path string, add func(buildItem) error) error {
	opts := backend.WalkOptions{RulesRead: func(v string) { b.rulesRead[v] = true },
		RulesListed: func(dir string, names []string) { b.rulesIn[dir] = names },
		Unreadable:  func(_, rel string) { b.unreadable[rel] = true },
		LeftOut:     func(rel, v string) { b.leftOut = append(b.leftOut, record{path: rel, version: v}) }}
	return w.Walk(ctx, path, opts, func(e backend.WalkEntry) error {
		if e.Type == backend.TypeDir {
			info, err := e.Info()
			if err != nil || info.Type != backend.TypeDir {
				return backend.ErrSkipDir // gone since the listing
			}
			b.dirs = append(b.dirs, b.dirRecord(e.Rel, info))
			return nil
		}
		if e.Type != backend.TypeFile {
			return nil
		}
		if isIgnoreFile(e.Rel) {
			b.listedRules = append(b.listedRules, e.Rel)
		}
		if _, byFD := w.(*localfs.FS); byFD && b.old == nil {
			// Nothing to reuse, so no stat before the read: localfs's
			// reader stats the file it opened, the identity of what it
			// reads (e.Info is valid only now, during the visit).
			return add(buildItem{entry: fileEntry{rel: e.Rel}, open: opener(e), statOpened: true})
		}
		info, err := e.Info()
		if err == nil && info.Type != backend.TypeFile {
			err = errReplaced
		}
		if err != nil {
			// Gone or replaced since the listing: recorded unindexed, so
			// that a search stats it, and reads it if it is back.
			return add(buildItem{entry: fileEntry{rel: e.Rel}, open: func() (io.ReadCloser, error) { return nil, err }})
		}
		f := fileEntry{rel: e.Rel, size: info.Size, modTime: info.ModTime.UnixNano(), version: info.Version}
		var open func() (io.ReadCloser, error)
		if i, ok := b.oldByRel[e.Rel]; !ok || !same(&b.old.files[i], info) || b.old.files[i].flags&flagRacy != 0 {
			open = opener(e)
		}
		return add(buildItem{entry: f, open: open, changed: changedAt(info)})
	})
}

// consume numbers the files in walk order and adds their trigrams.
func (b *builder) consume(ctx context.Context, order <-chan *ordered.Batch[buildItem, readResult]) error {
	for j := range order {
		res, err := j.Results(ctx)
		if err != nil {
			return err
		}
		for i, it := range j.Items {
			f := it.entry
			if it.open == nil {
				oid := b.oldByRel[f.rel]
				f.flags = b.old.files[oid].flags
				b.files = append(b.files, f)
				b.oldID = append(b.oldID, int32(oid))
				b.reused++
				b.bytes += f.size
				continue
			}
			r := res[i]
			if r.err != nil && !errors.Is(r.err, errReplaced) && !core.SkippedFile(r.err) {
				// EMFILE, EIO: the process's or the device's, not the
				// file's. Recorded unindexed, the build said success
				// with some files missing from the index, and its next
				// run, at the same limit, another count of them.
				return r.err
			}
			if r.err != nil {
				// Unreadable, or changed as it was opened: recorded with no
				// identity and unindexed, so that every search reads it
				// (a file left out would be missing from the list of an
				// unchanged directory) and the next build tries again.
				f.version, f.flags = "", flagOpaque
				b.files = append(b.files, f)
				b.oldID = append(b.oldID, -1)
				continue
			}
			changed := it.changed
			if r.info != nil {
				f.size, f.modTime, f.version = r.info.Size, r.info.ModTime.UnixNano(), r.info.Version
				changed = changedAt(*r.info)
			}
			id := uint32(len(b.files))
			f.flags = r.flags
			if changed >= b.racy {
				f.flags |= flagRacy
			}
			b.files = append(b.files, f)
			b.oldID = append(b.oldID, -1)
			switch {
			case r.repeated:
				b.repeats = append(b.repeats, repeat{file: id, content: r.content})
			default:
				if r.claimed {
					b.claimant[r.content] = id
				}
				if err := b.post.add(id, r.trigrams); err != nil {
					return err
				}
				select {
				case b.lists <- r.trigrams[:0]:
				default:
				}
			}
			b.read++
			b.bytes += f.size
		}
		if b.progress != nil {
			b.progress(len(b.files), b.bytes)
		}
	}
	if len(b.files) >= 1<<31 {
		return errors.New("too many files to index")
	}
	return nil
}

// repeat is a file read whose content another file claimed.
type repeat struct {
	file    uint32
	content contentKey
}

// link lists the files whose posting lists are another's (copies): those
// read whose content another claimed, and those reused that share the
// old lists of a file. The old lists of a file go to it when it is
// reused, else to the first reused file that shares them (repOfOld); the
// others that share them are its copies.
func (b *builder) link() {
	for _, r := range b.repeats {
		of, ok := b.claimant[r.content]
		if !ok {
			// Not possible (the claimant was read whole before it was
			// handed on), and never trusted: searched every time.
			b.files[r.file].version, b.files[r.file].flags = "", flagOpaque
			continue
		}
		b.copies = append(b.copies, copyOf{file: r.file, of: of})
		b.files[r.file].flags |= b.files[of].flags & flagText
	}
	if b.old != nil {
		oldRep := make([]uint32, len(b.old.files))
		for i := range oldRep {
			oldRep[i] = uint32(i)
		}
		for _, c := range b.old.copies {
			oldRep[c.file] = c.of
		}
		b.repOfOld = make([]int32, len(b.old.files))
		for i := range b.repOfOld {
			b.repOfOld[i] = -1
		}
		for id, oid := range b.oldID {
			if oid >= 0 && oldRep[oid] == uint32(oid) {
				b.repOfOld[oid] = int32(id)
			}
		}
		for id, oid := range b.oldID {
			if oid < 0 {
				continue
			}
			r := oldRep[oid]
			if b.repOfOld[r] < 0 {
				b.repOfOld[r] = int32(id)
			}
			if of := b.repOfOld[r]; of != int32(id) {
				b.copies = append(b.copies, copyOf{file: uint32(id), of: uint32(of)})
			}
		}
	}
	slices.SortFunc(b.copies, func(x, y copyOf) int { return cmp.Compare(x.file, y.file) })
}

// write writes the index to a temporary file beside the old one, syncs it
// and renames it over: a build killed at any point leaves the old index.
// The temporary file has one name per index, taken under the builders'
// lock, so what a killed build left is truncated by the next.
func (b *builder) write(loc location, watched <-chan []record, config string) error {
	// Whatever else is there (a link, a FIFO, a directory) is no build's.
	if err := os.RemoveAll(loc.building); err != nil {
		return err
	}
	tmp, err := os.OpenFile(loc.building, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing of that name is left
	defer tmp.Close()
	trigrams := b.trigrams()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if _, err := bw.Write(make([]byte, headerSize)); err != nil {
		return err
	}
	table := make([]byte, 0, len(trigrams)*entrySize)
	var off uint64
	err = b.merge(trigrams, func(l mergedList) error {
		if _, err := bw.Write(l.list); err != nil {
			return err
		}
		n := len(l.list)
		if off+uint64(n) >= 1<<32 {
			return errors.New("the posting lists exceed 4 GiB")
		}
		table = appendEntry(table, tableEntry{trigram: l.trigram, off: uint32(off), len: uint32(n), crc: l.crc})
		off += uint64(n)
		return nil
	})
	if err != nil {
		return err
	}
	h := header{built: time.Now().UnixNano(), trigrams: uint64(len(table) / entrySize),
		postOff: headerSize, postLen: off, tableOff: headerSize + off, rootDev: loc.dev, hasRootDev: true}
	if _, err := bw.Write(table); err != nil {
		return err
	}
	m := &meta{root: loc.root, config: config, racy: b.racy, files: b.files, copies: b.copies, dirs: b.dirs, watched: <-watched, blocks: blockCRCs(table)}
	meta := m.encode()
	h.metaOff, h.metaLen, h.metaCRC = h.tableOff+uint64(len(table)), uint64(len(meta)), checksum(meta)
	h.length = h.metaOff + h.metaLen
	if _, err := bw.Write(meta); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if _, err := tmp.WriteAt(h.encode(), 0); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if fi, err := os.Lstat(loc.file); err == nil && fi.IsDir() {
		// No index is a directory: one made at its name would fail every
		// build's rename.
		if err := os.RemoveAll(loc.file); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), loc.file); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(loc.file))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// sameIDs reports whether every file of the old index that the new one
// reuses keeps its number there, and the old files it does not reuse.
func (b *builder) sameIDs() (bool, bitset) {
	if b.old == nil {
		return false, nil
	}
	dropped := newBitset(len(b.old.files))
	for oid, id := range b.repOfOld {
		switch {
		case id < 0:
			dropped.set(uint32(oid))
		case id != int32(oid):
			return false, nil
		}
	}
	return true, dropped
}

// trigrams is every trigram of the new index, sorted: those of the files
// read and those the old index holds (some may have lost all their files).
func (b *builder) trigrams() []uint32 {
	set := b.post.trigrams
	if b.old != nil {
		for i := range len(b.old.table) / entrySize {
			set.add(entryAt(b.old.table, i).trigram)
		}
	}
	return set.sorted()
}
