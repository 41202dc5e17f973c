// Package localfs is the local-directory backend of agentfs. It confines
// every access to a set of allowed roots: paths are resolved through file
// descriptors held from each root (os.Root, or a component-by-component
// O_NOFOLLOW walk when links are refused), so that a directory swapped for a
// link mid-operation cannot lead outside; roots and deny roots are compared by
// path component after resolution, never by string prefix.
package localfs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/ignore"
	"golang.org/x/sys/unix"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// SymlinkPolicy says which links a path may go through.
type SymlinkPolicy string

// Link policies.
const (
	// SymlinksWithin follows a link only when it resolves inside a root.
	SymlinksWithin SymlinkPolicy = "within"
	// SymlinksRefuse refuses any link on the path with SYMLINK.
	SymlinksRefuse SymlinkPolicy = "refuse"
)

// DefaultDeny is denied whatever the roots: reading them is never file work.
var DefaultDeny = []string{"/proc", "/sys", "/dev"}

// Config describes one workspace.
type Config struct {
	// Roots are the allowed roots; empty means the working directory.
	Roots []string
	// Deny are paths refused after resolution, added to DefaultDeny.
	Deny     []string
	Symlinks SymlinkPolicy
	// Cwd is the directory relative paths start from; empty means os.Getwd.
	Cwd string
	// RelativeElsewhere says that relative paths name another backend's
	// files unless the working directory lies in a root (a mixed workspace
	// whose first root is an object store): paths are then shown absolute,
	// so that a displayed path passed back still comes here.
	RelativeElsewhere bool
	// OtherRoots are the workspace's roots held by other backends (a
	// mixed workspace's stores, s3://bucket/prefix), which an
	// OUTSIDE_ROOT hint names after the local roots: an absolute path
	// outside them all was told of the local roots only.
	OtherRoots []string
	// LockTimeout bounds how long New waits for the locks of a dead
	// writer's files to undo its transaction (at most 2 s a journal): one
	// it cannot lock now, a later mutation undoes.
	LockTimeout time.Duration
}

// dirName is a directory by identity and the names it was opened by,
// which may come to lead elsewhere while a session holds it.
type dirName struct {
	path  string // absolute, links resolved
	given string // absolute, as spelled in the configuration
	dev   uint64
	ino   uint64
}

// is reports whether st describes the directory, by device and inode:
// another name of it (a link, a bind mount) is the directory as well.
func (d *dirName) is(st *unix.Stat_t) bool { return uint64(st.Dev) == d.dev && st.Ino == d.ino }

// named reports whether the directory's names, as given and with links
// resolved, still lead to it: one stat, or two through a link.
func (d *dirName) named() bool {
	return d.leads(d.given) && (d.path == d.given || d.leads(d.path))
}

// leads reports whether name leads to the directory: one stat.
func (d *dirName) leads(name string) bool {
	var st unix.Stat_t
	return unix.Stat(name, &st) == nil && d.is(&st)
}

type root struct {
	dirName
	r   *os.Root
	dir *os.File // the root directory, for *at system calls
	// above caches whether an ancestor is denied (FS.deniedAbove).
	above atomic.Pointer[aboveRoot]
}

type denied struct {
	path     string // absolute, links resolved where they exist
	dev, ino uint64
	exists   bool
	isFile   bool // a file has other names (hard links) that no path check sees
	// state is a state directory's (see Fingerprint).
	state bool
	// system is one of DefaultDeny: a kernel file system's mount point,
	// which is not replaced while the system runs.
	system bool
}

// FS is the local backend: a backend.MutableFS, backend.Walker and
// backend.Locker.
type FS struct {
	// lockTimeout bounds a wait for the locks of a dead writer's files.
	lockTimeout time.Duration
	// cwd is where the configuration's own relative paths (roots, deny
	// roots) start; base is where a request's relative paths start and
	// output paths are relative to: the working directory when it lies in a
	// root, else the first root, so that --root DIR works from anywhere.
	cwd, base string
	// cwdLink is the working directory as spelled (through a link) when it
	// lies in a root under another name than base, for display.
	cwdLink string
	// wd is the working directory when relative paths start there; wdOwn
	// says it is the process's, wdRoot that it is a root (whose own check
	// covers it). wdLost is what the session's last request found of it
	// (BeginRequest): wdKept, wdRemoved or wdMoved; cwdLinkGone, that
	// cwdLink leads elsewhere now.
	wd          *dirName
	wdOwn       bool
	wdRoot      bool
	wdLost      atomic.Int32
	cwdLinkGone atomic.Bool
	wdMu        sync.Mutex // one look and note at a time (noteWd)
	// absDisplay shows every path absolute (Config.RelativeElsewhere).
	absDisplay bool
	roots      []*root
	// named is the roots' real paths in the order given, each once: the
	// roots an OUTSIDE_ROOT hint names.
	named []string
	// deny is the deny list, whole: replaced, never changed in place, when
	// the identity of a deny path changed (refreshDenies).
	deny      atomic.Pointer[[]denied]
	refreshMu sync.Mutex // one refreshDenies at a time
	// denyFiles is set when a deny root is a file: a walk must then compare
	// the identity of each file it opens, since a hard link elsewhere in the
	// tree is the same file under another name.
	denyFiles atomic.Bool
	policy    SymlinkPolicy
	// listings are the wide directories' listings kept for the next page
	// of a walk.
	listings listings
	// uncommitted are the files of the transactions whose undo failed
	// when the dead writers' journals were last recovered (settle).
	uncommitted atomic.Pointer[[]uncommittedFile]
	// recoveries is what the recoveries of dead writers' journals did
	// (Recovery).
	recoveries recoveries
	// swept is the state directory's record directories as the last sweep
	// that found them empty saw them (sweepChanged), nil when none did.
	swept atomic.Pointer[sweptDirs]
}

var (
	_ backend.MutableFS   = (*FS)(nil)
	_ backend.Walker      = (*FS)(nil)
	_ backend.MultiLocker = (*FS)(nil)
	_ backend.Moder       = (*FS)(nil)
)

// HasModes says that files here have POSIX permission bits.
func (f *FS) HasModes() bool { return true }

// New opens the roots of cfg. A root that does not exist or is not a
// directory is an error naming it.
func New(cfg Config) (*FS, error) {
	cwd := cfg.Cwd
	if cwd == "" {
		var err error
		if cwd, err = workingDir(); err != nil {
			if err = cwdNeeded(err, cfg.Roots); err != nil {
				return nil, err
			}
		}
	}
	f := &FS{policy: cfg.Symlinks}
	if cwd != "" {
		f.cwd = filepath.Clean(cwd)
	}
	switch f.policy {
	case "":
		f.policy = SymlinksWithin
	case SymlinksWithin, SymlinksRefuse:
	default:
		return nil, fault.InvalidArgument("--symlinks must be within or refuse, not %q.", cfg.Symlinks).
			WithHint("use --symlinks within (the default) or --symlinks refuse")
	}
	roots := cfg.Roots
	if len(roots) == 0 {
		roots = []string{f.cwd}
	}
	for _, r := range roots {
		abs := joinAbs(f.cwd, r)
		real, err := evalSymlinks(abs)
		var osr *os.Root
		if err == nil {
			osr, err = OpenRoot(real)
		}
		if err != nil {
			return nil, rootErr(err, abs)
		}
		dir, err := osr.Open(".")
		if err != nil {
			osr.Close()
			return nil, mapErr(err, abs)
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(dir.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			osr.Close()
			dir.Close()
			return nil, fault.Errorf(fault.CodeNotADirectory, "the root %s is not a directory.", abs).WithPath(abs).
				WithHint("pass a directory to --root")
		}
		f.roots = append(f.roots, &root{dirName: dirName{path: real, given: abs, dev: uint64(st.Dev), ino: st.Ino}, r: osr, dir: dir})
	}
	// The working directory is resolved once, as the roots are: a shell in
	// ~/link-to-ws is not a path through a link that --symlinks refuse
	// must refuse.
	f.base = f.roots[0].path
	if real, err := evalSymlinks(f.cwd); f.cwd != "" && err == nil && f.inRoots(real) {
		f.base = real
		if real != f.cwd {
			f.cwdLink = f.cwd
		}
		f.identifyWd(real, cfg.Cwd == "")
	} else {
		f.absDisplay = cfg.RelativeElsewhere
	}
	for _, r := range f.roots {
		if !slices.Contains(f.named, r.path) {
			f.named = append(f.named, r.path)
		}
	}
	f.named = append(f.named, cfg.OtherRoots...)
	// The longest root first, so a nested root wins over its parent.
	sort.SliceStable(f.roots, func(i, j int) bool { return len(f.roots[i].path) > len(f.roots[j].path) })
	var denyPaths []string
	for _, d := range append(append([]string{}, DefaultDeny...), cfg.Deny...) {
		if filepath.IsAbs(d) || f.cwd != "" {
			denyPaths = append(denyPaths, joinAbs(f.cwd, d))
		}
		if !filepath.IsAbs(d) && f.base != f.cwd {
			// Where relative paths start, as for any path given (the first
			// root from a working directory outside the roots); and in the
			// working directory too, so that no reading loses a deny.
			denyPaths = append(denyPaths, joinAbs(f.base, d))
		}
	}
	states := len(denyPaths)
	stateDirs, err := f.stateDirs()
	if err != nil {
		f.Close()
		return nil, err
	}
	denyPaths = append(denyPaths, stateDirs...)
	var deny []denied
	for i, d := range denyPaths {
		// Resolved as far as it exists: a deny path spelled through a link
		// must hold for a file not yet created there. (stateDirs resolved
		// its own.)
		e := denied{path: d, state: i >= states, system: i < len(DefaultDeny)}
		if !e.state {
			e.path = f.resolveExisting(d)
		}
		e.identify()
		deny = append(deny, e)
	}
	f.storeDenies(deny)
	// A transaction whose process died during its commit is undone (or
	// finished) before anything reads its files, dead writers' temp files
	// go, and, once a day, the lock files no process holds.
	f.lockTimeout = cfg.LockTimeout
	f.SettleDead(context.Background())
	sweepLocks(existingStateDir(), time.Now())
	return f, nil
}

// BeginRequest readies the backend for a request of a long-lived session
// (batch, MCP): it fails while a root's name leads elsewhere than the
// directory held open (renamed, removed and made again, a link
// re-pointed), whose files the request would otherwise read and change
// where no root names them any more, then settles the transactions of
// writers that died since (SettleDead). One stat or two per root, and
// for a working directory below one (wdState).
func (f *FS) BeginRequest(ctx context.Context) error {
	for _, r := range f.roots {
		if moved := rootMoved(r); moved != nil {
			return moved.WithPath(r.given)
		}
	}
	f.noteWd()
	f.SettleDead(ctx)
	return nil
}

// SettleDead finishes or undoes the transactions of writers that died
// (within the lock timeout), then sweeps what they left before their
// journals named it: temp files, directories made for new files. New
// calls it, and a batch or MCP session before each request, whose reads
// would otherwise see a dead commit's files until a mutation of theirs
// recovered it, and its leftovers until the next process started.
func (f *FS) SettleDead(ctx context.Context) {
	state := existingStateDir()
	f.settle(ctx, recoveryStateDirs(state), time.Now().Add(f.lockTimeout))
	f.sweepChanged(state)
}

// What a session's last request found of its working directory.
const (
	wdKept    int32 = iota
	wdRemoved       // unlinked (rm -r)
	wdMoved         // its name leads elsewhere: renamed, replaced
)

// identifyWd takes the identity of the working directory real (the base),
// the process's own when own, else the configuration's: a session's
// relative paths must go on starting there, not wherever its name comes
// to lead. A root's BeginRequest checks already; its link (cwdLink) is
// looked at all the same.
func (f *FS) identifyWd(real string, own bool) {
	isRoot := slices.ContainsFunc(f.roots, func(r *root) bool { return r.path == real })
	if isRoot && f.cwdLink == "" {
		return
	}
	name := real
	if own {
		name = "." // the directory getcwd named, whatever its name is now
	}
	var st unix.Stat_t
	if unix.Stat(name, &st) != nil {
		return
	}
	f.wd = &dirName{path: real, given: f.cwd, dev: uint64(st.Dev), ino: st.Ino}
	f.wdOwn, f.wdRoot = own, isRoot
}

// wdCheckedHook, when set (by tests), runs between the look at the
// working directory and the note of what it found.
var wdCheckedHook func(state int32)

// noteWd notes what became of the working directory for the session's
// requests. Looks and notes go in one order (wdMu): requests run at once
// (MCP), and an older look noted after a newer one (kept, before the
// directory was renamed) let a request whose own look found it moved go
// on through its name into the directory put there.
func (f *FS) noteWd() {
	if f.wd == nil {
		return
	}
	f.wdMu.Lock()
	defer f.wdMu.Unlock()
	state := wdKept
	if !f.wdRoot {
		state = f.wdState()
	}
	linkGone := f.cwdLink != "" && !f.wd.leads(f.cwdLink)
	if wdCheckedHook != nil {
		wdCheckedHook(state)
	}
	f.wdLost.Store(state)
	f.cwdLinkGone.Store(linkGone)
}

// wdState is what became of the working directory: kept while its name,
// links resolved, leads to it, which is where relative paths start (a
// link to it removed or re-pointed leaves them there, as it leaves a
// shell's); removed when it is the process's and unlinked, as a call of
// its own, whose getcwd then fails, finds it; else moved. One stat; one
// more once its name leads elsewhere.
func (f *FS) wdState() int32 {
	if f.wd.leads(f.wd.path) {
		return wdKept
	}
	var st unix.Stat_t
	if f.wdOwn && (unix.Stat(".", &st) != nil || st.Nlink == 0) {
		return wdRemoved
	}
	return wdMoved
}

// startsNowhere is the error of the relative path p when the working
// directory it starts at is gone: removed before the call began, or,
// within a session, removed, renamed or replaced since it began (the
// session's last BeginRequest). It meant a file of that directory, not
// one of the first root nor of whatever now bears the directory's name;
// nil while relative paths start where they did.
func (f *FS) startsNowhere(p string) error {
	removed := func() *fault.Error {
		return fault.InvalidArgument("the working directory was removed, so a relative path starts nowhere.").WithPath(p)
	}
	if f.cwd == "" {
		// An rm -r out after rm -r of the directory the shell sits in.
		return removed().WithHint("give the path absolute (below %s), or cd to a directory that exists", f.base)
	}
	switch f.wdLost.Load() {
	case wdRemoved:
		return removed().WithHint("give the path absolute, or start the session again from a directory that exists")
	case wdMoved:
		return fault.InvalidArgument("the working directory %s was renamed or replaced since the session started: its name leads elsewhere now.", f.wd.given).
			WithPath(p).WithHint("give the path absolute, or start the session again from the directory where it is now")
	}
	return nil
}

// showsRelative reports whether paths below the base are shown relative
// to it: not once relative paths start nowhere (startsNowhere), so that
// every path shown can be passed back.
func (f *FS) showsRelative() bool {
	return !f.absDisplay && f.cwd != "" && f.wdLost.Load() == wdKept
}

// denies is the deny list as it stands.
func (f *FS) denies() []denied { return *f.deny.Load() }

// covers reports whether the real path real is the deny path or lies
// below it; within whether the deny path lies in the directory real (or
// is it). A deny path that does not exist matches any letter case: on a
// file system that ignores case (macOS's APFS, vfat, ext4's casefold),
// the file that .git/hooks/PRE-COMMIT makes is .git/hooks/pre-commit,
// which no identity then guarded. Where case counts, a name that differs
// only in case from a missing deny path is refused too.
func (d *denied) covers(real string) bool { return d.leadsTo(d.path, real) }

func (d *denied) within(real string) bool { return d.leadsTo(real, d.path) }

// leadsTo reports whether abs is base or lies below it, by component,
// folding case where the deny path is missing.
func (d *denied) leadsTo(base, abs string) bool {
	if _, ok := within(base, abs); ok || d.exists {
		return ok
	}
	// A component at a time, past the components the two spell alike
	// (the root's, mostly), allocating nothing for ASCII names: every
	// entry a walk lists is asked about every missing deny path (state
	// directories not made).
	n := 0
	for n < len(base) && n < len(abs) && base[n] == abs[n] {
		n++
	}
	if i := strings.LastIndexByte(base[:n], '/'); i >= 0 {
		base, abs = base[i+1:], abs[i+1:]
	}
	for {
		b, baseRest, more := strings.Cut(base, "/")
		a, absRest, absMore := strings.Cut(abs, "/")
		switch {
		case !sameNameFolded(b, a):
			return false
		case !more:
			return true
		case !absMore:
			return false
		}
		base, abs = baseRest, absRest
	}
}

// sameNameFolded reports whether a file system that ignores case takes a
// and b for one name: in any letter case (Unicode simple folding, the
// Kelvin sign for K), and, where either is not ASCII, in either Unicode
// form, as APFS and ext4's casefold do (a decomposed e + U+0301 for the
// precomposed é), which only such names pay for. A name not UTF-8 is its
// bytes there too (ext4's casefold compares it so; APFS refuses it):
// strings.EqualFold would take any two invalid bytes for one.
func sameNameFolded(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return strings.EqualFold(a, b)
	}
	if !utf8.ValidString(a) || !utf8.ValidString(b) {
		return a == b
	}
	return strings.EqualFold(a, b) || caseless(a) == caseless(b)
}

// caseless is Unicode's canonical caseless form of s, NFD(fold(NFD(s))):
// full case folding, so that straße is STRASSE, as ext4's casefold takes
// it (strings.EqualFold folds one rune to one rune only). Default-ignorable
// code points are dropped, as HFS+ and ext4's casefold before Linux 6.13
// drop them, so that pre-<U+200D>commit is pre-commit there; the set
// taken (format characters, variation selectors and the other
// default-ignorables) holds a few format characters more, whose names are
// only refused the more.
//
// The forms made last are kept (caselessForms): a walk compares each entry
// with each missing deny path at the first name they differ in, which is
// mostly the same directory's name for all the entries below it, and
// folding one name costs 0.6 us; without them a missing --deny path made
// find over 20,000 files of Japanese names three times as slow.
func caseless(s string) string {
	slot := &caselessForms[maphash.String(caselessSeed, s)%uint64(len(caselessForms))]
	if kept := slot.Load(); kept != nil && kept.name == s {
		return kept.form
	}
	folded := norm.NFD.String(cases.Fold().String(norm.NFD.String(s)))
	form := strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return -1
		}
		return r
	}, folded)
	slot.Store(&caselessForm{name: s, form: form})
	return form
}

// caselessForms are names' caseless forms made last, one per slot of a
// name's hash, shared by the walk's goroutines.
var (
	caselessForms [256]atomic.Pointer[caselessForm]
	caselessSeed  = maphash.MakeSeed()
)

type caselessForm struct{ name, form string }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// identify takes the identity of the deny path as it stands now.
func (d *denied) identify() {
	var st unix.Stat_t
	d.dev, d.ino, d.exists, d.isFile = 0, 0, false, false
	if unix.Stat(d.path, &st) == nil {
		d.dev, d.ino, d.exists = uint64(st.Dev), st.Ino, true
		d.isFile = st.Mode&unix.S_IFMT != unix.S_IFDIR
	}
}

func (f *FS) storeDenies(deny []denied) {
	f.deny.Store(&deny)
	f.denyFiles.Store(slices.ContainsFunc(deny, func(d denied) bool { return d.isFile }))
}

// refreshDenies takes the identity of each deny path again, so that a
// session (batch, mcp) answers each call as a fresh process would: a denied
// file replaced by a rename (as editors, git and agentfs's own writes do)
// is a new inode, which a hard link made since must not read; a state
// directory made since (agentfs index) is denied by identity as the
// index's build did, and the session has the build's Fingerprint, so its
// searches use that index. It runs at each path resolved: one stat per
// --deny path, and per state directory and default deny (/proc, /sys,
// /dev) only while it is missing (a state directory is agentfs's own,
// made once; stat'ing each at every resolve took replace --dry-run over
// Go's source from 109 stats to 11,610; the default denies are mount
// points, and devtmpfs, which no file system check tells from tmpfs, is
// not remounted while the system runs).
func (f *FS) refreshDenies() {
	due := func(d denied) bool { return !d.state && !d.system || !d.exists }
	if !slices.ContainsFunc(f.denies(), due) {
		return
	}
	f.refreshMu.Lock()
	defer f.refreshMu.Unlock()
	deny := f.denies()
	var fresh []denied
	for i, d := range deny {
		if !due(d) {
			continue
		}
		d.identify()
		if d == deny[i] {
			continue
		}
		if fresh == nil {
			fresh = slices.Clone(deny)
		}
		fresh[i] = d
	}
	if fresh != nil {
		f.storeDenies(fresh)
	}
}

// stateDirs are the places agentfs keeps its state (locks, journals, the
// index, publish's signing key), denied as /proc is: with --root ~, a
// publish of ~/.local/state/agentfs/publish.key gave away the key that
// signs every link, and an rm there would drop other processes' locks.
// Each place another environment might pick is denied too. A root in one
// of them is refused: a deny there would refuse the root, and no deny
// would leave the key to that root and to any other root holding it. The
// places are returned resolved as far as they exist.
func (f *FS) stateDirs() ([]string, error) {
	places := stateDirCandidates()
	if d := os.Getenv(StateDirEnv); filepath.IsAbs(d) {
		// A relative one is never a state directory (NOT_CONFIGURED):
		// denied, it hid a folder of that name from grep, exit 1.
		places = append(places, d)
	}
	for i, d := range places {
		places[i] = f.resolveExisting(d)
		for _, r := range f.roots {
			if _, in := within(places[i], r.path); in {
				return nil, fault.Errorf(fault.CodeDenied, "the root %s lies in agentfs's state directory %s, which holds its locks, journals and signing key.", r.given, d).
					WithPath(r.given).WithHint("give a root outside it, or set %s to a directory outside the roots", StateDirEnv)
			}
		}
	}
	return places, nil
}

// Close releases the roots.
func (f *FS) Close() error {
	for _, r := range f.roots {
		r.dir.Close()
		r.r.Close()
	}
	return nil
}

// Roots returns the resolved allowed roots.
func (f *FS) Roots() []string {
	out := make([]string, len(f.roots))
	for i, r := range f.roots {
		out[i] = r.path
	}
	return out
}

// inRoots reports whether the absolute path abs lies in a root, by name or,
// spelled through a link, by the identity of an ancestor.
func (f *FS) inRoots(abs string) bool {
	if _, ok := f.rootOf(abs); ok {
		return true
	}
	_, _, ok := f.rootByIdentity(abs)
	return ok
}

// absolute places a request's path: relative paths start at the base.
func (f *FS) absolute(p string) string {
	return joinAbs(f.base, p)
}

func joinAbs(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// Abs is where a request's path p lies, absolute: a relative path starts
// at the base, as every tool places it.
func (f *FS) Abs(p string) string { return f.absolute(p) }

// HoldsRelative reports whether relative paths start here: they do unless
// Config.RelativeElsewhere is set and the working directory lies in no
// root.
func (f *FS) HoldsRelative() bool { return !f.absDisplay }

// Display is p relative to the base when inside it, else absolute.
func (f *FS) Display(p string) string {
	return f.display(f.absolute(p))
}

// A path spelled through the root's given name or the working
// directory's link is shown relative as its resolved spelling is: the
// same directory came back relative under one name, absolute under the
// other. Not when links are refused: such a spelling is refused, and an
// error naming it relative named a path that is not.
func (f *FS) display(abs string) string {
	if !f.showsRelative() {
		return abs // or it could not be given back
	}
	if rel, ok := within(f.base, abs); ok {
		return rel
	}
	if f.policy == SymlinksRefuse {
		return abs
	}
	for _, respelled := range [...]func(string) string{f.resolvedRootSpelling, f.resolvedCwdSpelling} {
		if rel, ok := within(f.base, respelled(abs)); ok {
			return rel
		}
	}
	return abs
}

// resolvedCwdSpelling rewrites an absolute path spelled below the working
// directory's link to the resolved base, which the link was resolved to
// once at start, as the roots are: while a session's last request found
// it leading there (cwdLinkGone), since a path through it re-pointed
// names another directory's file.
func (f *FS) resolvedCwdSpelling(abs string) string {
	if f.cwdLink == "" || f.cwdLinkGone.Load() {
		return abs
	}
	if rel, ok := within(f.cwdLink, abs); ok {
		return filepath.Join(f.base, rel)
	}
	return abs
}

// within reports whether abs is base or below it, comparing whole path
// components, and returns abs relative to base ("." for base itself).
func within(base, abs string) (string, bool) {
	if abs == base {
		return ".", true
	}
	prefix := base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(abs, prefix) {
		return abs[len(prefix):], true
	}
	return "", false
}

// target is a caller's path resolved to one root.
type target struct {
	root *root
	rel  string // relative to root.path, "." for the root itself
	abs  string // the lexical absolute path (for display and locks)
}

func (t target) display(f *FS) string { return f.display(t.abs) }

// resolve checks a caller's path and places it in a root. A path that is
// lexically outside every root may still reach one through a link or a bind
// mount (compared by file identity); otherwise it is OUTSIDE_ROOT.
func (f *FS) resolve(p string) (target, error) {
	f.refreshDenies()
	if p == "" {
		return target{}, fault.InvalidArgument("path is empty.").WithHint("pass a file or directory path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, fault.InvalidArgument("the path contains a NUL byte.").
			WithHint("remove the NUL byte; no file name can hold one")
	}
	if len(p) > 4095 {
		// As the kernel refuses it (ENAMETOOLONG), and before the check
		// of its "..", which walks it.
		return target{}, pathTooLong(p, len(p))
	}
	if !filepath.IsAbs(p) {
		if err := f.startsNowhere(p); err != nil {
			return target{}, err
		}
	}
	if strings.HasPrefix(p, "s3://") {
		// A local name would be s3:/bucket/...: a write there made a
		// folder s3: where the caller meant the store.
		return target{}, fault.Errorf(fault.CodeOutsideRoot, "the path names an object store, and the workspace has no s3:// root.").
			WithPath(p).WithHint("add the store as a root (--root s3://bucket/prefix, beside this root), or use a local path")
	}
	if err := f.checkDotDot(p); err != nil {
		return target{}, err
	}
	abs := f.absolute(p)
	for _, c := range strings.Split(abs, string(filepath.Separator)) {
		if len(c) > 255 {
			return target{}, fault.InvalidArgument("a name in the path is %d bytes long; the limit is 255.", len(c)).
				WithPath(p).WithHint("shorten the file name")
		}
	}
	if len(abs) > 4095 {
		return target{}, pathTooLong(p, len(abs))
	}
	abs = f.resolvedRootSpelling(abs)
	if t, ok := f.rootOf(abs); ok {
		return t, nil
	}
	denied, err := f.deniedOnTheWay(abs)
	if err != nil {
		return target{}, mapErr(err, f.display(abs))
	}
	if denied || f.deniedName(abs) {
		// Spelled in a denied place outside the roots (/proc/self/cwd/f),
		// or passing through one by a link: refused before its links are
		// followed to a root, which would tell what lies there.
		return target{}, f.deniedErr(f.display(abs))
	}
	if r, rel, ok := f.rootByIdentity(abs); ok {
		if f.policy == SymlinksRefuse {
			return target{}, fault.Errorf(fault.CodeSymlink, "the path reaches a root through a link, and links are refused.").
				WithPath(f.display(abs)).WithHint("use the path inside the root, or run with --symlinks within")
		}
		return target{root: r, rel: rel, abs: abs}, nil
	}
	return target{}, f.outside(abs)
}

// pathTooLong is the error of the path p whose absolute form is n bytes,
// over the kernel's PATH_MAX. Relative, p may be far shorter: its length
// alone told the caller nothing, and "use a shorter path" nothing to do,
// for a file find had just listed. Relative and over the limit itself, p
// names a file as deep: grep and find list it, and replace of a directory
// above it failed with "use a shorter path", given none.
func pathTooLong(p string, n int) error {
	deep := "a file this deep can be listed and searched, but not named: move it nearer the root, leave it out (--exclude), or use another tool"
	if n == len(p) {
		hint := "use a shorter path"
		if !filepath.IsAbs(p) {
			hint = deep
		}
		return fault.InvalidArgument("the path is %d bytes long, over the kernel's limit of 4095.", n).
			WithPath(p).WithHint("%s", hint)
	}
	return fault.InvalidArgument("the path is %d bytes long from /, over the kernel's limit of 4095 (%d bytes as given).", n, len(p)).
		WithPath(p).WithHint("%s", deep)
}

// checkDotDot refuses a path whose ".." the kernel (sh, cat, an editor)
// would resolve otherwise than the names by which a path is placed here:
// after a link, the kernel goes to the parent of the link's target
// (link/../f.txt is a sibling of the target, not f.txt); after a file or a
// missing name it fails. A success would be for another file than the one
// named. Each name a ".." follows must be a directory reached from a root
// without following a link (one descriptor walk, whatever the depth), and
// not a denied one. A path that ends outside the roots or denied is left
// to those checks, and any other refusal is the same INVALID_ARGUMENT, so
// that nothing is told of what lies where the caller may not look.
func (f *FS) checkDotDot(p string) error {
	if !slices.Contains(strings.Split(p, "/"), "..") {
		return nil
	}
	final := f.resolvedRootSpelling(f.absolute(p))
	if f.deniedName(final) {
		return nil // DENIED, before anything below it is looked at
	}
	viaLink := false
	if _, ok := f.rootOf(final); !ok {
		if denied, err := f.deniedOnTheWay(final); denied || err != nil {
			return nil // DENIED or SYMLINK, before anything below it is looked at
		}
		if _, _, byLink := f.rootByIdentity(final); !byLink {
			return nil // outside the roots: OUTSIDE_ROOT
		}
		// Through a link to a root from outside the roots, whose names
		// the walk does not look at: any ".." is refused, for that link.
		viaLink = true
	}
	refused := fault.InvalidArgument("the path has \"..\" after a name that is not a directory reached without a link, which the kernel would resolve otherwise.").
		WithPath(p).WithHint("name the path without that \"..\" (a link's target, or the directory itself)")
	// Up out of the roots and back in (../../w/f.txt from the root w's
	// subdirectory): what a ".." leads to out there is not looked at.
	outAndBack := fault.InvalidArgument("the path goes up out of the roots and back in; a \"..\" outside the roots is not followed, as what lies there is not looked at.").
		WithPath(p).WithHint("name the path without leaving the roots: relative to the working directory, or absolute")
	cur, fd := f.base, -1
	if filepath.IsAbs(p) {
		cur = "/"
	}
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
	}()
	// enter makes fd the directory cur when it lies in a root, spelled by
	// its real path or as the configuration spelled it (through a link,
	// followed as the root's), or -1 when it lies outside the roots;
	// within a root, fd follows cur by openat.
	enter := func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		fd = -1
		if r, rel, ok := f.spelledIn(cur); ok {
			fd = f.walkNoLink(r, rel)
			f.leaveDenied(&fd, cur)
		}
	}
	enter()
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if fd < 0 {
				if f.passesDenied(cur) {
					// The walk stopped at a denied directory, which a
					// path through it is, whatever its "..".
					return f.deniedErr(p)
				}
				if _, _, in := f.spelledIn(cur); !in && !viaLink {
					return outAndBack
				}
				return refused
			}
			if f.isRootSpelling(cur) {
				// Up from a root: the kernel's parent when spelled real,
				// its link's parent's otherwise.
				if !f.isRootPath(cur) {
					return refused
				}
				cur = filepath.Dir(cur)
				enter()
				continue
			}
			up, err := unix.Openat(fd, "..", dirFlags|unix.O_NONBLOCK, 0)
			unix.Close(fd)
			fd, cur = up, filepath.Dir(cur)
			if err != nil {
				fd = -1
			}
		default:
			cur = filepath.Join(cur, c)
			if fd < 0 {
				// A walk that stopped comes back into a root only at a
				// root's own spelling (checking every name again from the
				// root was quadratic in the path's length).
				if f.isRootSpelling(cur) {
					enter()
				}
				continue
			}
			fd = f.stepNoLink(fd, c)
			f.leaveDenied(&fd, cur)
		}
	}
	return nil
}

// spelledIn places cur in a root, spelled by its real path or as the
// configuration spelled it (through a link, followed as the root's): ok
// is false when it lies outside the roots.
func (f *FS) spelledIn(cur string) (r *root, rel string, ok bool) {
	for _, r := range f.roots {
		rel, ok := within(r.path, cur)
		if !ok {
			rel, ok = within(r.given, cur)
		}
		if ok {
			return r, rel, true
		}
	}
	return nil, "", false
}

// passesDenied reports whether the directory cur, where a walk of names
// stopped, or one of the directories above it is denied, by name or by
// identity (each looked at without following a link): the refusal of a
// ".." after it is then DENIED, as any path through it is, not the
// INVALID_ARGUMENT of a name that is no directory.
func (f *FS) passesDenied(cur string) bool {
	for d := cur; ; d = filepath.Dir(d) {
		if f.deniedName(f.resolvedRootSpelling(d)) {
			return true
		}
		// Looked at only inside a root: a name outside is not (an
		// automount, a hung network file system).
		var st unix.Stat_t
		if _, in := f.rootOf(d); in && unix.Lstat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && f.deniedDirIdentity(&st) {
			return true
		}
		if d == filepath.Dir(d) || f.isRootSpelling(d) {
			return false
		}
	}
}

// leaveDenied closes *fd, the directory cur, when cur is denied by its
// name: a deny root made after the start has no identity to compare, and
// below a root, walked without a link, cur's name is its real path.
func (f *FS) leaveDenied(fd *int, cur string) {
	if *fd >= 0 && f.deniedName(f.resolvedRootSpelling(cur)) {
		unix.Close(*fd)
		*fd = -1
	}
}

// isRootPath reports whether abs is a root's real path; isRootSpelling,
// whether it is that or the spelling the configuration gave it.
func (f *FS) isRootPath(abs string) bool {
	return slices.ContainsFunc(f.roots, func(r *root) bool { return r.path == abs })
}

func (f *FS) isRootSpelling(abs string) bool {
	return slices.ContainsFunc(f.roots, func(r *root) bool { return r.path == abs || r.given == abs })
}

// walkNoLink opens the directory rel of root r name by name, following no
// link and entering no denied directory; -1 when it cannot.
func (f *FS) walkNoLink(r *root, rel string) int {
	fd, err := unix.Dup(int(r.dir.Fd()))
	if err != nil {
		return -1
	}
	if rel == "." {
		return fd
	}
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if fd = f.stepNoLink(fd, c); fd < 0 {
			break
		}
	}
	return fd
}

// stepNoLink opens the directory name of the directory fd, which it
// closes, following no link (and never blocking on a FIFO); -1 when it
// cannot, or when the directory is a denied one by identity or on a kernel
// file system: a ".." below either is then refused whether the name before
// it exists or not, which would otherwise tell.
func (f *FS) stepNoLink(fd int, name string) int {
	down, err := unix.Openat(fd, name, dirFlags|unix.O_NONBLOCK, 0)
	unix.Close(fd)
	if err != nil {
		return -1
	}
	var st unix.Stat_t
	if unix.Fstat(down, &st) != nil || f.deniedDirIdentity(&st) || kernelFSOf(down) != "" {
		unix.Close(down)
		return -1
	}
	return down
}

// deniedOnTheWay reports whether the path abs, outside the roots, passes
// through a denied place, by its names or by the targets of its links (sl
// -> secret, p -> /proc, or a link to a link into one): the names are
// resolved from the top, a link's target read and walked name by name,
// and each directory reached is checked, by name and identity, before
// anything below it is looked at. Past 40 links it answers errLinkLoop,
// as the kernel answers ELOOP: such a path reaches nothing.
func (f *FS) deniedOnTheWay(abs string) (bool, error) {
	todo := strings.Split(abs, "/")
	real, links := "/", 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			real = filepath.Dir(real)
			continue
		}
		next := filepath.Join(real, c)
		var st unix.Stat_t
		if unix.Lstat(next, &st) != nil {
			return false, nil // nothing below it to look at
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := os.Readlink(next)
			if links++; links > 40 {
				return false, errLinkLoop
			}
			if err != nil {
				return false, nil
			}
			if filepath.IsAbs(target) {
				real = "/"
			}
			todo = append(strings.Split(target, "/"), todo...)
			continue
		}
		if f.deniedName(next) || st.Mode&unix.S_IFMT == unix.S_IFDIR && f.deniedDirIdentity(&st) {
			return true, nil
		}
		real = next
	}
	return false, nil
}

// workingDir is the working directory as the kernel has it (getcwd(2)),
// or $PWD when that is a clean spelling of the very same path through
// links (a shell in ~/link-to-ws, or in /tmp on macOS), so that paths
// spelled from it are the roots' own. os.Getwd answers $PWD whenever it
// names a directory of the same identity, which another path to a bind
// mount does, or a spelling with ".." after a link, whose ".." is not the
// kernel's. Past PATH_MAX getcwd fails, and so does this: no path of the
// working directory can be trusted then.
// OpenRoot is os.OpenRoot for a directory that must be one: the name
// is first opened as a directory (O_DIRECTORY), which fails ENOTDIR at
// anything else without opening it. os.OpenRoot opens it to read: a FIFO
// there waited for a writer for ever, deaf to SIGTERM, and the error of
// a file said nothing of what it was. (A FIFO put in the directory's
// place between the two opens still waits.)
func OpenRoot(name string) (*os.Root, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	unix.Close(fd)
	return os.OpenRoot(name)
}

// cwdNeeded is the error of New when the working directory cannot be
// read (err from workingDir), or nil when the call can go on without one:
// it was removed (an rm -r of the directory the shell sits in), so it is
// outside every root and relative paths start at the first root, as from
// any directory outside them; only a relative root needs it.
func cwdNeeded(err error, roots []string) error {
	const hint = "cd to a directory that exists, or give --root an absolute path"
	if !errors.Is(err, unix.ENOENT) {
		return fault.Errorf(fault.CodeIOError, "the working directory cannot be read (%s).", ErrText(err)).WithCause(err).
			WithHint("cd to another directory: getcwd fails past PATH_MAX (4096 bytes)")
	}
	if len(roots) == 0 {
		return fault.Errorf(fault.CodeIOError, "the working directory was removed, and it is the root (no --root given).").WithCause(err).WithHint(hint)
	}
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return fault.Errorf(fault.CodeIOError, "the working directory was removed, and the root %s is relative to it.", r).WithCause(err).WithHint(hint)
		}
	}
	return nil
}

func workingDir() (string, error) {
	kernel, err := unix.Getwd()
	if err != nil {
		return "", err
	}
	if pwd := os.Getenv("PWD"); filepath.IsAbs(pwd) && pwd != kernel && pwd == filepath.Clean(pwd) {
		if real, err := filepath.EvalSymlinks(pwd); err == nil && real == kernel {
			return pwd, nil
		}
	}
	return kernel, nil
}

func (f *FS) outside(abs string) *fault.Error {
	return fault.Errorf(fault.CodeOutsideRoot, "the path is outside the allowed roots.").WithPath(f.display(abs)).
		WithHint("use a path inside %s, or add a root with --root", strings.Join(f.named, ", "))
}

// resolvedRootSpelling rewrites an absolute path spelled below a root as
// the configuration spelled it (through a link) to the root's real path:
// links above a root were resolved at start, only those below it count.
func (f *FS) resolvedRootSpelling(abs string) string {
	for _, r := range f.roots {
		if r.given == r.path {
			continue
		}
		if rel, ok := within(r.given, abs); ok {
			return filepath.Join(r.path, rel)
		}
	}
	return abs
}

// rootOf places an absolute path in the root that holds it, comparing
// whole path components; roots are sorted longest first, so a nested root
// wins over its parent.
func (f *FS) rootOf(abs string) (target, bool) {
	for _, r := range f.roots {
		if rel, ok := within(r.path, abs); ok {
			return target{root: r, rel: rel, abs: abs}, true
		}
	}
	return target{}, false
}

// ruledFrom places t in the outermost root that holds it, as the names of
// its path below that root: ignore files are read from there down, so that
// a path below a nested root is ruled as with the outer root alone, not
// by which of the two its name happens to fall in.
func (f *FS) ruledFrom(t target) (*root, []string) {
	var comps []string
	if t.rel != "." {
		comps = strings.Split(t.rel, "/")
	}
	for _, r := range slices.Backward(f.roots) { // the shortest first
		if rel, ok := within(r.path, t.root.path); ok && rel != "." {
			return r, append(strings.Split(rel, "/"), comps...)
		}
	}
	return t.root, comps
}

// rootByIdentity finds a root among the ancestors of abs by device and inode,
// after following links: /tmp/link/x where /tmp/link points at a root.
func (f *FS) rootByIdentity(abs string) (*root, string, bool) {
	dir, rest := abs, ""
	for {
		var st unix.Stat_t
		if unix.Stat(dir, &st) == nil {
			for _, r := range f.roots {
				if r.is(&st) {
					if rest == "" {
						rest = "."
					}
					return r, rest, true
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, "", false
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// isEscape reports the error os.Root gives for a path that leaves it.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// openFlags opens anything without blocking: a FIFO answers at once.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// open opens t with flags, following links by the policy. Under
// SymlinksWithin a link into another root is followed by that root's handle.
func (f *FS) open(t target, flags int) (*os.File, error) {
	file, err := f.openByPolicy(t, flags)
	if err != nil {
		return nil, f.hiddenErr(t, t.display(f), err)
	}
	return file, nil
}

// hiddenErr is err, the failed open of t, unless the nearest directory
// above t that opens is on a kernel file system or inside a deny root by
// identity (a bind mount of one): then it is DENIED, whatever the errno,
// so that which names exist there is never told, as a deny root by name
// never tells. Both t's directories as spelled below its root and those
// its links lead to are asked; display names t in the refusal.
func (f *FS) hiddenErr(t target, display string, err error) error {
	if isDenied(err) {
		return err
	}
	for dir := filepath.Dir(t.rel); ; dir = filepath.Dir(dir) {
		if d, oerr := t.root.r.OpenFile(dir, pathFlags|unix.O_DIRECTORY, 0); oerr == nil {
			derr := f.checkOpenDir(d, filepath.Join(t.root.path, dir), display)
			d.Close()
			if isDenied(derr) {
				return derr
			}
			break
		}
		if dir == "." {
			break
		}
	}
	spelled := filepath.Join(t.root.path, t.rel)
	real := f.resolveExisting(spelled)
	if real == spelled {
		return err
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if _, in := f.rootOf(dir); !in {
			return err
		}
		if d, oerr := os.OpenFile(dir, pathFlags|unix.O_DIRECTORY, 0); oerr == nil {
			derr := f.checkOpenDir(d, dir, display)
			d.Close()
			if isDenied(derr) {
				return derr
			}
			return err
		}
		if filepath.Dir(dir) == dir {
			return err
		}
	}
}

// isDenied reports an error with the code DENIED.
func isDenied(err error) bool {
	e := fault.AsError(err)
	return e != nil && e.Code == fault.CodeDenied
}

// checkOpenDir refuses the open directory d (at path, as far as is
// known) when it is a deny root by identity, inside a deny root, or on a
// kernel file system: DENIED, or the error of its stat.
func (f *FS) checkOpenDir(d *os.File, path, display string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return mapErr(err, display)
	}
	if f.deniedDirIdentity(&st) {
		return f.deniedErr(display)
	}
	if err := f.checkDeny(realPath(d, path), display); err != nil {
		return err
	}
	return f.checkKernelFS(int(d.Fd()), display)
}

// openByPolicy opens t, following links as the policy allows.
func (f *FS) openByPolicy(t target, flags int) (*os.File, error) {
	if f.policy == SymlinksRefuse {
		return f.openNoFollow(t, flags)
	}
	file, err := t.root.r.OpenFile(t.rel, flags, 0)
	if err == nil {
		return file, nil
	}
	if errors.Is(err, unix.EACCES) {
		// os.Root opens each directory on the way for reading: one that
		// may be gone through but not listed (0711) refused a file below
		// it that cat reads. Walked with O_PATH and no link followed, a
		// path with no link on the way reaches it (a final link is then
		// followed by openPath); one with a link on the way keeps the
		// refusal. A name such a walk found missing is missing: it was
		// PERMISSION_DENIED, where cat says "No such file".
		file, werr := f.openNoFollow(t, flags)
		switch {
		case werr == nil:
			return file, nil
		case errors.Is(werr, unix.ENOENT):
			return nil, werr
		}
		return nil, mapErr(err, t.display(f))
	}
	if !isEscape(err) {
		return nil, mapErr(err, t.display(f))
	}
	// os.Root refuses every absolute link and any link out of the root: one
	// that resolves inside a root (this one or another) is followed through
	// that root's handle, so it still cannot lead outside.
	rt, err := f.resolvedTarget(t)
	if err != nil {
		return nil, err
	}
	if file, err = rt.root.r.OpenFile(rt.rel, flags, 0); err != nil {
		return nil, mapErr(err, t.display(f))
	}
	return file, nil
}

// openNoFollow walks t component by component with O_NOFOLLOW from the
// root's descriptor: no link anywhere on the path is followed. The
// directories on the way are opened only to go through (O_PATH on Linux),
// so one that may be searched but not read is no obstacle, as for any
// other program.
func (f *FS) openNoFollow(t target, flags int) (*os.File, error) {
	if t.rel == "." {
		return t.root.r.OpenFile(".", flags, 0)
	}
	parts := strings.Split(t.rel, string(filepath.Separator))
	dirfd := int(t.root.dir.Fd())
	owned := -1
	defer func() {
		if owned >= 0 {
			unix.Close(owned)
		}
	}()
	for i, part := range parts {
		last := i == len(parts)-1
		fl := pathFlags | unix.O_DIRECTORY | unix.O_NOFOLLOW
		if last {
			fl = flags | unix.O_NOFOLLOW
		}
		fd, err := unix.Openat(dirfd, part, fl, 0)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
				var st unix.Stat_t
				if unix.Fstatat(dirfd, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
					return nil, fault.Errorf(fault.CodeSymlink, "the path goes through a link, and links are refused.").
						WithPath(t.display(f)).WithHint("use the link's target path, or run with --symlinks within")
				}
			}
			return nil, mapErr(&fs.PathError{Op: "open", Path: t.rel, Err: err}, t.display(f))
		}
		if owned >= 0 {
			unix.Close(owned)
		}
		owned, dirfd = fd, fd
	}
	file := os.NewFile(uintptr(owned), filepath.Join(t.root.path, t.rel))
	owned = -1
	return file, nil
}

// realPath is where an open file really is, for the deny check: a link
// inside a root may lead into a denied directory.
func realPath(file *os.File, fallback string) string {
	if p, ok := kernelPath(int(file.Fd())); ok {
		return p
	}
	if p, err := evalSymlinks(fallback); err == nil {
		return p
	}
	return fallback
}

// kernelPath is the kernel's name of the open file fd (Linux's
// /proc/self/fd), false where it cannot be read.
func kernelPath(fd int) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return p, err == nil && filepath.IsAbs(p)
}

// holdsDenied reports whether the directory at the real path real is a
// deny root or holds one: removed or moved whole, it would take what the
// deny protects with it.
func (f *FS) holdsDenied(real string) bool {
	for _, d := range f.denies() {
		if d.within(real) {
			return true
		}
	}
	return false
}

// checkDeny refuses a real path inside a deny root, by path component or by
// the identity of any ancestor (another spelling of the same directory).
func (f *FS) checkDeny(real, display string) error {
	if f.deniedName(real) {
		return f.deniedErr(display)
	}
	// Below a root, the ancestors are stat'ed up to the root; those above
	// it once for each deny list (deniedAbove).
	top, in := f.rootOf(real)
	for dir := real; ; {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) == nil && f.deniedDirIdentity(&st) {
			return f.deniedErr(display)
		}
		parent := filepath.Dir(dir)
		switch {
		case in && dir == top.root.path:
			if f.deniedAbove(top.root) {
				return f.deniedErr(display)
			}
			return nil
		case parent == dir:
			return nil
		}
		dir = parent
	}
}

// aboveRoot is whether an ancestor of a root is a deny root by identity,
// as of one deny list.
type aboveRoot struct {
	deny   *[]denied
	denied bool
}

// deniedAbove reports whether an ancestor of r (above it) is a deny root
// by identity, stat'ing them once for each deny list: the root is held
// open, and what its ancestors' names lead to since changes none of its
// files.
func (f *FS) deniedAbove(r *root) bool {
	deny := f.deny.Load()
	if c := r.above.Load(); c != nil && c.deny == deny {
		return c.denied
	}
	c := &aboveRoot{deny: deny}
	for dir := r.path; filepath.Dir(dir) != dir && !c.denied; {
		dir = filepath.Dir(dir)
		var st unix.Stat_t
		c.denied = unix.Lstat(dir, &st) == nil && f.deniedDirIdentity(&st)
	}
	r.above.Store(c)
	return c.denied
}

// deniedDirIdentity reports a directory that is a deny root by identity (a
// bind mount or another spelling of it).
func (f *FS) deniedDirIdentity(st *unix.Stat_t) bool {
	for _, d := range f.denies() {
		if d.exists && uint64(st.Dev) == d.dev && st.Ino == d.ino {
			return true
		}
	}
	return false
}

// deniedIdentity reports an open file that is a denied file by identity.
func (f *FS) deniedIdentity(st *unix.Stat_t) bool {
	for _, d := range f.denies() {
		if d.isFile && uint64(st.Dev) == d.dev && st.Ino == d.ino {
			return true
		}
	}
	return false
}

// deniedFileErr refuses a move across file systems of a tree holding a
// denied file under another name (a hard link).
func (f *FS) deniedFileErr(display string) error {
	return fault.Errorf(fault.CodeDenied, "the tree holds a denied file under another name (a hard link), which a copy to another file system would make readable.").
		WithPath(display).WithHint("move the link out of the tree, or choose a destination on the same file system; nothing was moved")
}

func (f *FS) deniedErr(display string) error {
	return fault.Errorf(fault.CodeDenied, "the path is inside a denied location.").WithPath(display).
		WithHint("this location is refused by --deny or by default (/proc, /sys, /dev, agentfs's state directory); work elsewhere")
}

// SigningKeyName is the file in the state directory that holds publish's
// signing key: whoever reads it makes links to every asset.
const SigningKeyName = "publish.key"

// isSigningKey reports whether st, a file of more than one name, is the
// signing key: a hard link to it made in a root (the state directory is
// denied by name, which a hard link escapes) read it, and published it.
// Only such a file costs anything, one stat of the state directory: the
// key's identity is kept until the directory changes (a key made or
// removed changes its mtime), as a walk over a tree of hard links (a
// pnpm store) looked the state directory up for each file: grep 53%
// slower.
func isSigningKey(st *unix.Stat_t) bool {
	if st.Nlink < 2 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	c := &signingKey
	c.mu.Lock()
	defer c.mu.Unlock()
	var now unix.Stat_t
	env := os.Getenv(StateDirEnv)
	if c.dir == "" || c.env != env || unix.Stat(c.dir, &now) != nil || !sameFile(&now, &c.dirAt) || now.Mtim != c.dirAt.Mtim {
		c.env, c.dir, c.found = env, existingStateDir(), false
		if c.dir == "" || unix.Stat(c.dir, &c.dirAt) != nil {
			c.dir = ""
			return false
		}
		c.found = unix.Stat(filepath.Join(c.dir, SigningKeyName), &c.key) == nil
	}
	return c.found && sameFile(&c.key, st)
}

// signingKey is what isSigningKey last found: the state directory (for
// the value of StateDirEnv), as it was then, and the key in it.
var signingKey struct {
	mu         sync.Mutex
	env, dir   string
	dirAt, key unix.Stat_t
	found      bool
}

// openChecked opens t and applies the deny check to where it really is. The
// path is checked before the open too, so that whether a name exists inside a
// deny root is never told (DENIED, not NOT_FOUND). A file is first opened
// with O_PATH, which opens nothing: only a regular file or a directory is
// then opened for reading, so a FIFO's blocked writer is never released and
// a device never opened. The returned file of any other type is an O_PATH
// descriptor, good for its type and nothing else.
func (f *FS) openChecked(t target, flags int) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	if f.deniedName(f.resolveExisting(filepath.Join(t.root.path, t.rel))) {
		return nil, st, f.deniedErr(t.display(f))
	}
	if flags != pathFlags && flags&unix.O_DIRECTORY == 0 {
		file, st, err := f.openPath(t)
		if err != nil {
			return nil, st, err
		}
		if isSigningKey(&st) {
			file.Close()
			return nil, st, f.deniedErr(t.display(f))
		}
		if typ := st.Mode & unix.S_IFMT; typ == unix.S_IFREG || typ == unix.S_IFDIR {
			opened, err := reopen(file, flags)
			if errors.Is(err, unix.ENOENT) {
				// No /proc: open by name again, and only the same file.
				opened, err = f.sameFile(t, flags, &st)
			}
			file.Close()
			if err != nil {
				// Reading a directory is listing it, which needs its read
				// permission.
				if which := f.dirAccessErr(t, t.display(f), typ == unix.S_IFDIR, err); which != nil {
					return nil, st, which
				}
				return nil, st, mapErr(err, t.display(f))
			}
			file = opened
		}
		return file, st, nil
	}
	file, err := f.open(t, flags)
	if err != nil {
		// A directory opened for reading needs its read permission.
		if which := f.dirAccessErr(t, t.display(f), flags != pathFlags && flags&unix.O_DIRECTORY != 0, err); which != nil {
			return nil, st, which
		}
		return nil, st, err
	}
	if err := f.checkDeny(realPath(file, filepath.Join(t.root.path, t.rel)), t.display(f)); err != nil {
		file.Close()
		return nil, st, err
	}
	if err := unix.Fstat(int(file.Fd()), &st); err != nil {
		file.Close()
		return nil, st, mapErr(err, t.display(f))
	}
	if err := f.checkKernelFS(int(file.Fd()), t.display(f)); err != nil {
		file.Close()
		return nil, st, err
	}
	return file, st, nil
}

// openPath opens t with O_PATH, following a final link that the policy
// allows, and returns the checked descriptor of what it names (never a
// link) with its type.
func (f *FS) openPath(t target) (*os.File, unix.Stat_t, error) {
	// os.Root opens every component with O_NOFOLLOW, and O_PATH|O_NOFOLLOW
	// opens a final link itself instead of failing, so a link is followed
	// here: to where it resolves, through the root that holds that place.
	for hops := 0; ; hops++ {
		file, st, err := f.openChecked(t, pathFlags)
		if err != nil {
			return nil, st, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return file, st, nil
		}
		file.Close()
		if f.policy == SymlinksRefuse {
			return nil, st, fault.Errorf(fault.CodeSymlink, "the path is a link, and links are refused.").
				WithPath(t.display(f)).WithHint("use the link's target path, or run with --symlinks within")
		}
		next, err := f.resolvedTarget(t)
		if err == nil && hops == 40 {
			err = fault.Errorf(fault.CodeSymlink, "the path has too many levels of links.").
				WithPath(t.display(f)).WithHint("resolve the link loop")
		}
		if err != nil {
			return nil, st, err
		}
		next.abs = t.abs
		t = next
	}
}

// sameFile opens t by name with flags, refusing anything but the file st
// describes.
func (f *FS) sameFile(t target, flags int, st *unix.Stat_t) (*os.File, error) {
	if f.policy == SymlinksRefuse {
		flags |= unix.O_NOFOLLOW
	}
	file, err := f.open(t, flags|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	var now unix.Stat_t
	if err := unix.Fstat(int(file.Fd()), &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		file.Close()
		return nil, fault.Errorf(fault.CodeIOError, "the file was replaced while it was being opened.").
			WithPath(t.display(f)).WithHint("retry; another process is replacing it")
	}
	return file, nil
}

// checkKernelFS refuses a descriptor on a kernel file system (procfs,
// sysfs...), wherever it is mounted: decided on the descriptor in use, not
// on a path.
func (f *FS) checkKernelFS(fd int, display string) error {
	if name := kernelFSOf(fd); name != "" {
		return kernelFSErr(name, display)
	}
	return nil
}

// kernelFSErr refuses display, on the kernel file system name.
func kernelFSErr(name, display string) error {
	return fault.Errorf(fault.CodeDenied, "the path is on a kernel file system (%s), which is never file work.", name).
		WithPath(display).WithDetail("fsType", name).
		WithHint("work on files of an ordinary file system")
}

func infoFromStat(name string, st *unix.Stat_t) backend.FileInfo {
	fi := backend.FileInfo{
		Name:       name,
		Size:       st.Size,
		ModTime:    time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		ChangeTime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
		Mode:       uint32(st.Mode & 0o7777),
		Version:    version(st),
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		fi.Type = backend.TypeFile
	case unix.S_IFDIR:
		fi.Type = backend.TypeDir
	case unix.S_IFLNK:
		fi.Type = backend.TypeSymlink
	default:
		fi.Type = backend.TypeOther
	}
	return fi
}

// VersionBytes is the length of every version: 16 hexadecimal digits.
func (f *FS) VersionBytes() int { return 16 }

// version changes whenever the content may have: a replace (new inode), a
// write in place (size, mtime, and ctime, which no caller can set back).
func version(st *unix.Stat_t) string {
	var v [16]byte
	return string(appendVersion(v[:0], st))
}

// appendVersion appends the version of st to b: version without its
// allocation.
func appendVersion(b []byte, st *unix.Stat_t) []byte {
	var raw [56]byte
	binary.LittleEndian.PutUint64(raw[0:], uint64(st.Dev))
	binary.LittleEndian.PutUint64(raw[8:], st.Ino)
	binary.LittleEndian.PutUint64(raw[16:], uint64(st.Size))
	binary.LittleEndian.PutUint64(raw[24:], uint64(st.Mtim.Sec))
	binary.LittleEndian.PutUint64(raw[32:], uint64(st.Mtim.Nsec))
	binary.LittleEndian.PutUint64(raw[40:], uint64(st.Ctim.Sec))
	binary.LittleEndian.PutUint64(raw[48:], uint64(st.Ctim.Nsec))
	sum := sha256.Sum256(raw[:])
	return hex.AppendEncode(b, sum[:8])
}

// rootErr is the error of a root that cannot be opened: NOT_FOUND only
// when it is missing (EMFILE or EACCES said "does not exist").
func rootErr(err error, abs string) *fault.Error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fault.Errorf(fault.CodeNotFound, "the root %s does not exist.", abs).WithPath(abs).
			WithHint("pass an existing directory to --root").WithCause(err)
	case errors.Is(err, unix.ENOTDIR):
		var st unix.Stat_t
		if unix.Stat(abs, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// The root itself, not "a component of the path".
			return fault.Errorf(fault.CodeNotADirectory, "the root %s is a %s, not a directory.", abs, infoFromStat("", &st).Type.Noun()).
				WithPath(abs).WithHint("pass an existing directory to --root").WithCause(err)
		}
		return mapErr(err, abs).WithHint("pass an existing directory to --root")
	case errors.Is(err, unix.EACCES) && unix.Access(abs, unix.X_OK) == nil:
		// Searchable, not readable (mode 711): a file below it may be
		// read (see DECISIONS), but a root is opened for reading.
		return fault.Errorf(fault.CodePermissionDenied, "the root %s may be searched but not listed by this user (execute without read permission), and a root is opened for reading.", abs).
			WithPath(abs).WithHint("pass a directory this user may read as --root: its parent, or one below it; or give this user read permission on it").WithCause(err)
	}
	return mapErr(err, abs)
}

// mapErr turns an OS error into a contract error for display path p.
// errLinkLoop is what evalSymlinks returns for a loop of links, where
// filepath.EvalSymlinks gives an error with no errno.
var errLinkLoop = errors.New("too many levels of links")

// evalSymlinks is the package's evalSymlinks, which lstat's only the
// components of p below a root that holds p as spelled, while the kernel
// still names the root it holds open by the root's path: no ancestor of
// it was renamed (a link left at the old name would lead elsewhere for a
// process started since, and locks must have one key), so its ancestors'
// links resolved again would lead to the same place. Otherwise (and where
// the kernel's name of a descriptor cannot be read, off Linux), and for a
// path through a link below the root or in no root, the path is resolved
// whole.
func (f *FS) evalSymlinks(p string) (string, error) {
	for _, r := range f.roots {
		if rel, ok := within(r.path, p); ok {
			return r.evalBelow(rel)
		}
	}
	return evalSymlinks(p)
}

// evalBelow resolves the links of the path rel below r.
func (r *root) evalBelow(rel string) (string, error) {
	full := filepath.Join(r.path, rel)
	if held, ok := kernelPath(int(r.dir.Fd())); !ok || held != r.path {
		return evalSymlinks(full)
	}
	if rel == "." {
		return r.path, nil
	}
	var st unix.Stat_t
	cur := r.path
	for rest := rel; rest != ""; {
		var c string
		c, rest, _ = strings.Cut(rest, string(filepath.Separator))
		cur = filepath.Join(cur, c)
		if err := unix.Lstat(cur, &st); err != nil {
			return "", &fs.PathError{Op: "lstat", Path: cur, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return evalSymlinks(full)
		}
	}
	return cur, nil
}

// evalLinks is filepath.EvalSymlinks, which a test replaces to play a
// path changed between its lstat and readlink.
var evalLinks = filepath.EvalSymlinks

// evalSymlinks is filepath.EvalSymlinks with a link loop reported as one.
// Its EINVAL is readlink's of a name lstat saw as a link just before: a
// directory swapped in between, a race, not a bad path. It is resolved
// again, and a name that keeps changing is errPathChanged.
func evalSymlinks(p string) (string, error) {
	for try := 1; ; try++ {
		real, err := evalLinks(p)
		var errno unix.Errno
		switch {
		case err != nil && !errors.As(err, &errno) && strings.Contains(err.Error(), "too many links"):
			return "", fmt.Errorf("%s: %w", p, errLinkLoop)
		case errors.Is(err, unix.EINVAL) && try < 3:
			continue
		case errors.Is(err, unix.EINVAL):
			return "", fmt.Errorf("%s: %w", p, errPathChanged)
		}
		return real, err
	}
}

// errPathChanged is a path whose links changed at every resolve.
var errPathChanged = errors.New("the path kept changing while its links were resolved")

// limitHint is the hint of an error that is the limit on open files
// (EMFILE, ENFILE), which no permission would cure, "" for any other: a
// file of the state directory (a lock, a journal, a temp record) that
// cannot be opened for it needs this hint, not one about the directory.
func limitHint(err error) string {
	switch {
	case errors.Is(err, unix.EMFILE):
		return "raise the limit on open files (ulimit -n) and retry"
	case errors.Is(err, unix.ENFILE):
		return "retry once other programs have closed files, or raise the system's limit (fs.file-max)"
	}
	return ""
}

// errPinned is the EPERM of a change to an entry immutable or append-only
// (chattr +i, +a), which no mode bit explains.
var errPinned = fmt.Errorf("immutable or append-only: %w", unix.EPERM)

// pinnedErr is errPinned when err is the EPERM of a change to an entry,
// or a directory, that is immutable or append-only (chattr +i, +a): one
// of the entries names of dfd ("." for dfd itself). Else it is err.
func pinnedErr(err error, dfd int, names ...string) error {
	if errors.Is(err, unix.EPERM) && slices.ContainsFunc(names, func(name string) bool { return pinned(dfd, name) }) {
		return errPinned
	}
	return err
}

// accessAt is faccessat(2) of name in dfd for mode, by the effective ids,
// and for W_OK refuses an entry immutable or append-only (pinned) with
// errPinned. x/sys's Faccessat takes faccessat2's EPERM for a seccomp
// filter's refusal and answers from the mode bits, which pass for root,
// and +a passes faccessat itself: a dry run passed where its run failed.
func accessAt(dfd int, name string, mode uint32) error {
	if mode&unix.W_OK != 0 && pinned(dfd, name) {
		return errPinned
	}
	return unix.Faccessat(dfd, name, mode, unix.AT_EACCESS)
}

func mapErr(err error, p string) *fault.Error {
	var ce *fault.Error
	if errors.As(err, &ce) {
		return ce
	}
	var e *fault.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e = fault.Errorf(fault.CodeNotFound, "no such file or directory.").WithHint("check the path with ls or find")
	case errors.Is(err, unix.ENOTDIR):
		e = fault.Errorf(fault.CodeNotADirectory, "a component of the path is not a directory.").
			WithHint("check the path with ls")
	case errors.Is(err, unix.EISDIR):
		e = fault.Errorf(fault.CodeNotAFile, "the path is a directory.").WithHint("use ls to list a directory")
	case errors.Is(err, errPinned):
		e = fault.Errorf(fault.CodePermissionDenied, "the file or its directory is immutable or append-only (chattr +i or +a), which no one may change.").
			WithHint("lsattr shows it, and chattr -i (or -a) lifts it; nothing was changed")
	case errors.Is(err, errOwnerLost):
		// A move's copy to another file system (a replace says more, see
		// ownerLost).
		e = fault.Errorf(fault.CodePermissionDenied, "permission denied: the file system refused or ignored giving the copy the original's owner and group (chown), and the move would have made it this user's.").
			WithHint("move it within its own file system, where a rename keeps its owner, or ask its owner to move it; nothing was moved")
	case errors.Is(err, fs.ErrPermission):
		e = fault.Errorf(fault.CodePermissionDenied, "permission denied.").
			WithHint("the permissions of the file, or of a directory on its path, do not allow this; choose another path")
	case errors.Is(err, unix.ENAMETOOLONG):
		e = fault.InvalidArgument("the path or a name in it is too long.").WithHint("shorten the path")
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, errNotRegular):
		// open(2) of a socket, or of a device with no driver.
		e = fault.Errorf(fault.CodeNotRegular, "the path is not a regular file (a socket, FIFO or device).").
			WithHint("agentfs reads and writes regular files only")
	case errors.Is(err, unix.ESRCH):
		// open(2) of a /proc file, bind-mounted, whose process ended.
		e = fault.Errorf(fault.CodeNotFound, "the file belongs to a process that has ended.").WithHint("check the path with ls or find")
	case errors.Is(err, unix.ELOOP), errors.Is(err, errLinkLoop):
		e = fault.Errorf(fault.CodeSymlink, "the path has too many levels of links.").WithHint("resolve the link loop")
	case errors.Is(err, unix.EMFILE):
		e = fault.Errorf(fault.CodeIOError, "too many open files: the process reached its limit.").WithHint("%s", limitHint(err))
	case errors.Is(err, unix.ENFILE):
		e = fault.Errorf(fault.CodeIOError, "too many open files in the system.").WithHint("%s", limitHint(err))
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		e = fault.Errorf(fault.CodeNoSpace, "no space left on the device.").WithHint("free some space and retry")
	case errors.Is(err, unix.EFBIG):
		// Past RLIMIT_FSIZE (Go ignores SIGXFSZ) or the file system's
		// largest file: no retry passes it.
		e = fault.Errorf(fault.CodeTooLarge, "the file would be larger than the limit on a file's size (ulimit -f) or the file system's largest file.").
			WithHint("raise the limit (ulimit -f), or write the file on a file system that holds files this large")
	case errors.Is(err, unix.EROFS):
		e = fault.Errorf(fault.CodeReadOnly, "the file system is read-only.").WithHint("work on a writable file system")
	case errors.Is(err, unix.ENOTEMPTY):
		// Before ErrExist, which ENOTEMPTY also is to errors.Is.
		e = fault.Errorf(fault.CodeNotEmpty, "the directory is not empty.").WithHint("pass --recursive to remove it with its contents")
	case errors.Is(err, fs.ErrExist):
		e = fault.Errorf(fault.CodeExists, "the path already exists.").WithHint("choose another path, or drop --create")
	case errors.Is(err, errPathChanged):
		e = fault.Errorf(fault.CodeStale, "the path changed while it was resolved: a directory on it was swapped with a link.").
			WithHint("retry once the other program is done changing it")
	case errors.Is(err, unix.EINVAL):
		e = fault.InvalidArgument("the path is not valid here.").WithHint("check the path")
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EXDEV):
		// unlink(2), rmdir(2) or rename(2) of a mount point; rename(2)
		// over a file bind-mounted on its name (EXDEV: a move across file
		// systems is handled before this, by Rename).
		e = fault.Errorf(fault.CodeDenied, "the path is a mount point, or in use by the system.").
			WithHint("unmount it first; agentfs does not change mount points")
	case isEscape(err):
		e = fault.Errorf(fault.CodeOutsideRoot, "the path goes through a link that leads outside the allowed roots.").
			WithHint("use a path whose links stay inside the roots")
	default:
		e = fault.Errorf(fault.CodeIOError, "the operation failed: %s.", ErrText(err)).
			WithHint("retry; if it persists, check the file system")
	}
	return e.WithPath(p).WithCause(err)
}

// ErrText is err's own words, without the path a *fs.PathError repeats
// (a message names the path its own way).
func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Fingerprint names what decides which files a walk visits and may read:
// the roots, the deny list, the link policy and the caller's credentials.
// A content index built under one fingerprint proves nothing of a walk
// under another: built by a caller with more rights, it ruled out (or
// recorded as binary) files this one cannot open, which a search then
// counted searched where a scan says unreadable.
func (f *FS) Fingerprint() string {
	f.refreshDenies()
	// Sets, whatever the order the flags gave them in: a walk is the same.
	var parts []string
	for _, r := range f.roots {
		parts = append(parts, fmt.Sprintf("root=%q", r.path))
	}
	for _, d := range f.denies() {
		if d.state && !d.exists {
			// A state directory to be made: whether one is made since
			// changes nothing a walk visits, but where it would be does.
			// One that exists is a deny by identity like any, since a
			// walk meets it by identity through a mount (on it or on an
			// ancestor, made or taken off since the build); the index
			// command makes its own before the backend opens.
			parts = append(parts, fmt.Sprintf("state=%q", d.path))
			continue
		}
		parts = append(parts, fmt.Sprintf("deny=%q:%d:%d:%v", d.path, d.dev, d.ino, d.exists))
	}
	slices.Sort(parts)
	parts = slices.Compact(parts) // a root or deny given twice, or a default given again
	return fmt.Sprintf("%s policy=%q ignore=%d %s", Credentials(), f.policy, ignore.Semantics, strings.Join(parts, " "))
}

// Credentials names what decides which files this process may read: its
// effective user and group, its groups, and whether it reads past modes.
// A Fingerprint begins with it.
func Credentials() string {
	groups, _ := unix.Getgroups()
	slices.Sort(groups)
	return strings.TrimSpace(fmt.Sprintf("uid=%d gid=%d groups=%v %s", unix.Geteuid(), unix.Getegid(), groups, readsPastModes()))
}

// LstatAbs describes the absolute path abs itself (a final link is not
// followed), with no confinement: for the content index, which checks the
// identities of paths a confined walk found.
func LstatAbs(abs string) (backend.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Lstat(abs, &st); err != nil {
		return backend.FileInfo{}, err
	}
	return infoFromStat(filepath.Base(abs), &st), nil
}

// IgnoreFiles are the files, relative to a directory, whose rules a walk
// reads there.
var IgnoreFiles = []string{gitignoreFile, ignoreFile, agentfsIgnoreFile, gitDir + "/info/exclude"}

// InfoOfStat is what the backend reports of the file st describes, named
// name: for the content index, whose stat pass must yield the identities
// a walk does.
func InfoOfStat(name string, st *unix.Stat_t) backend.FileInfo { return infoFromStat(name, st) }

// IsVersion reports whether v is the Version of st, without allocating:
// for comparing many identities at once.
func IsVersion(st *unix.Stat_t, v string) bool {
	var b [16]byte
	return string(appendVersion(b[:0], st)) == v
}

// DeniesFiles reports whether a deny root is a file: a walk then checks
// the identity of every file it opens (a hard link is the same file), and
// so must anything that opens files a walk found.
func (f *FS) DeniesFiles() bool { return f.denyFiles.Load() }
