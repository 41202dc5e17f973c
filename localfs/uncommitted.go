package localfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// uncommittedFile is a file named by a transaction whose writer died (or
// gave it up, its own undo failed) and whose undo failed (left: what
// stands in the way, a directory append-only, read-only or not this
// user's since), or could not run (cause: its recovery file or lock files
// could not be made, in a full state directory; errRecoveryPending: not
// in time, its locks held or another process recovering it), or every
// file ("/") when journal is a journal directory that cannot be listed or
// a journal that cannot be read: it holds what the dead commit left
// there, a content that may never have been committed, until a later call
// undoes it. A file the undo put back as it was (only a hidden backup
// link or staged file left beside it) is none.
type uncommittedFile struct {
	real    string // the real path the journal names
	journal string
	cause   error     // nil when the undo failed
	left    *undoLeft // what the failed undo left there, nil when not known
	more    int       // how many other files of the journal it left so
}

// recovered is what one pass of recoverJournals did.
type recovered struct {
	// stuck are the journals left, with the cause of those whose recovery
	// could not run; moved the real paths of their files in directories
	// moved since and found; left what an undo that ran could not do.
	stuck      map[string]error
	moved      map[string][]string
	left       map[string][]undoLeft
	rolledBack int
	finished   int
}

func (r *recovered) count(committed bool) {
	if committed {
		r.finished++
	} else {
		r.rolledBack++
	}
}

// recoveries is what the recoveries of an FS did, for --recover.
type recoveries struct {
	mu         sync.Mutex
	rolledBack int
	finished   int
	stuck      []StuckJournal
}

// settle recovers the journals of dead writers in the state directories
// states (recoverJournals), keeping
// the files of those it could not undo, which reads then refuse
// (checkCommitted), and returns the journals left stuck, with the cause of
// those whose recovery could not run.
func (f *FS) settle(ctx context.Context, states []string, deadline time.Time) map[string]error {
	r := recoverJournals(ctx, f, states, deadline)
	stuck, moved := r.stuck, r.moved
	f.noteRecovery(&r)
	prev := f.uncommitted.Load()
	if len(stuck) == 0 && (prev == nil || len(*prev) == 0) {
		return stuck // the hot path: no journal left
	}
	// A journal found stuck before and still there was not undone: this
	// pass may not have looked at it (another process held it past the
	// deadline), and its files still hold the dead commit's content.
	still := map[string]error{}
	if prev != nil {
		checked := map[string]bool{} // one Lstat a journal, not one a file of it
		for _, u := range *prev {
			if checked[u.journal] || !isJournal(u.journal) {
				continue // a journal directory: this pass listed it again
			}
			checked[u.journal] = true
			if _, err := os.Lstat(u.journal); err == nil {
				still[u.journal] = u.cause
			}
		}
	}
	for j, cause := range stuck {
		if _, known := still[j]; known && errors.Is(cause, errRecoveryPending) {
			continue // its undo failed before: that says more than a wait
		}
		still[j] = cause
	}
	var files []uncommittedFile
	for j, cause := range still {
		if !isJournal(j) {
			// A journal directory that cannot be listed: any file may
			// hold a dead commit's change.
			files = append(files, uncommittedFile{real: string(filepath.Separator), journal: j, cause: cause})
			continue
		}
		if committedJournal(j) {
			continue
		}
		if _, looked := stuck[j]; looked && cause == nil && len(r.left[j]) > 0 {
			// Undone but for what left says: only the files it did not
			// put back are refused; one put back with a hidden link or
			// staged file beside it that could not go reads as it was.
			var blocked []*undoLeft
			for i := range r.left[j] {
				if l := &r.left[j][i]; l.blocks() {
					blocked = append(blocked, l)
				}
			}
			for _, l := range blocked {
				files = append(files, uncommittedFile{real: l.real, journal: j, left: l, more: len(blocked) - 1})
			}
			continue
		}
		entries, err := readJournal(j)
		if err != nil && !errors.Is(err, errNoJournal) {
			// A journal that cannot be read names files no one can
			// tell: any file may hold the dead commit's change.
			files = append(files, uncommittedFile{real: string(filepath.Separator), journal: j, cause: cmp.Or(cause, err)})
			continue
		}
		if cause == nil && prev != nil && slices.ContainsFunc(*prev, func(u uncommittedFile) bool { return u.journal == j && u.left != nil }) {
			// Not looked at by this pass (another process held it): what
			// the pass that found it stuck refused.
			for _, u := range *prev {
				if u.journal == j {
					files = append(files, u)
				}
			}
			continue
		}
		for _, e := range entries {
			files = append(files, uncommittedFile{real: filepath.Join(e.Dir, e.Name), journal: j, cause: cause})
		}
		// Its files where their directories, moved since, were found: by
		// this pass, or by the one that found it stuck before.
		if _, looked := stuck[j]; looked {
			for _, r := range moved[j] {
				files = append(files, uncommittedFile{real: r, journal: j, cause: cause})
			}
		} else if prev != nil {
			for _, u := range *prev {
				if u.journal == j {
					files = append(files, u)
				}
			}
		}
	}
	f.uncommitted.Store(&files)
	return stuck
}

// Recovery is what the recoveries of the journals of dead writers did
// since the FS opened, for --recover: transactions undone (RolledBack)
// and finished (Finished), and those the last pass left (Stuck).
type Recovery struct {
	RolledBack int            `json:"rolledBack"`
	Finished   int            `json:"finished"`
	Stuck      []StuckJournal `json:"stuck"`
}

// StuckJournal is a journal a recovery could not finish.
type StuckJournal struct {
	Journal   string `json:"journal"`
	Committed bool   `json:"committed"`
	// Why says why it is left: how the transaction came to be left, and
	// for one whose recovery could not run, why.
	Why string `json:"why"`
	// Left is each file not undone (Refused: its reads are refused until
	// it is) or with a hidden file left beside it, when the recovery ran.
	Left []StuckFile `json:"left,omitempty"`
}

// StuckFile is one thing a recovery could not do.
type StuckFile struct {
	Path    string `json:"path"`
	Refused bool   `json:"refused"`
	// State is what is there now, Failed the step that failed and why,
	// Undo the shell command that does that step by hand.
	State  string `json:"state"`
	Failed string `json:"failed"`
	// Fix is what lifts what stands in the way, for the next call to
	// finish the recovery.
	Fix  string `json:"fix,omitempty"`
	Undo string `json:"undo,omitempty"`
}

// Recovery reports what the recoveries of this FS did.
func (f *FS) Recovery() Recovery {
	f.recoveries.mu.Lock()
	defer f.recoveries.mu.Unlock()
	return Recovery{RolledBack: f.recoveries.rolledBack, Finished: f.recoveries.finished, Stuck: append([]StuckJournal{}, f.recoveries.stuck...)}
}

// noteRecovery adds what the pass r did to f's recoveries.
func (f *FS) noteRecovery(r *recovered) {
	var stuck []StuckJournal
	for j, cause := range r.stuck {
		s := StuckJournal{Journal: j, Committed: committedJournal(j)}
		switch {
		case !isJournal(j):
			s.Why = "the journal directory cannot be listed (" + causeText(cause) + "): no journal in it is recovered"
		case cause == nil && s.Committed:
			s.Why = "the transaction was committed; what its recovery could not remove stays beside its files"
		case cause == nil:
			s.Why = "the transaction could not be undone: " + origin(j)
		case errors.Is(cause, errRecoveryPending):
			s.Why = "its recovery has not run yet: another process holds some of its files, or is recovering it"
		default:
			s.Why = "its recovery cannot run: " + causeText(cause)
		}
		for i := len(r.left[j]) - 1; i >= 0; i-- { // in the journal's order
			l := &r.left[j][i]
			state, _, by := l.describe()
			s.Left = append(s.Left, StuckFile{Path: l.real, Refused: l.blocks() && !s.Committed, State: state, Failed: l.failure(), Fix: l.mend, Undo: by})
		}
		stuck = append(stuck, s)
	}
	slices.SortFunc(stuck, func(a, b StuckJournal) int { return strings.Compare(a.Journal, b.Journal) })
	f.recoveries.mu.Lock()
	defer f.recoveries.mu.Unlock()
	f.recoveries.rolledBack += r.rolledBack
	f.recoveries.finished += r.finished
	f.recoveries.stuck = stuck
}

// isJournal reports whether p, a path settle keeps, is a journal, not a
// journal directory that could not be listed.
func isJournal(p string) bool {
	return strings.HasSuffix(p, journalPending) || strings.HasSuffix(p, journalCommitted)
}

// committedJournal reports whether p is a committed journal: its files
// hold what the caller was told, and its recovery only removes backups, so
// none of them is refused while that recovery cannot run.
func committedJournal(p string) bool { return strings.HasSuffix(p, journalCommitted) }

// checkCommitted refuses the file or directory open as file (t's) when it
// is, holds or lies in a file of an undo that failed: a read would answer
// content never committed as if it were the file's, and an edit would
// build on it. Its real path is the open descriptor's.
func (f *FS) checkCommitted(file *os.File, t target) error {
	files := f.uncommitted.Load()
	if files == nil || len(*files) == 0 {
		return nil
	}
	return f.refuseUncommitted(realPath(file, filepath.Join(t.root.path, t.rel)), t.display(f))
}

// refuseUncommitted refuses real (display to the caller), a real path,
// when it is, holds or lies in a file of an undo that failed, as
// checkCommitted refuses its read. A mutation of it is refused too (the
// file written, removed, moved, or moved or written onto, or a directory
// holding it moved or removed): it acts on a state never committed (a file
// the transaction removed reads as missing: rm said "not there", and the
// recovery later put it back), and the recovery that comes after, finding
// the name moved away or taken, leaves it so and drops the backup, the only
// copy of the old content; a file written into a moved directory's copy
// goes with the copy when the undo removes it.
func (f *FS) refuseUncommitted(real, display string) error {
	files := f.uncommitted.Load()
	if files == nil || len(*files) == 0 {
		return nil
	}
	for _, u := range *files {
		_, below := within(real, u.real)
		if _, above := within(u.real, real); below || above {
			if u.left != nil {
				return leftErr(display, real, u.journal, u.left, u.more)
			}
			return uncommittedErr(display, u.journal, u.cause)
		}
	}
	return nil
}

// uncommittedErr is the refusal of display, which holds a change of the
// dead transaction of journal: its undo failed, or could not run for
// cause (coded as a failure in the state directory: a full one is
// NO_SPACE); or which may hold one, journal being a journal directory that
// cannot be listed. The hint says to mend the state directory that holds
// the journal, never to move it (AGENTFS_STATE_DIR): then only the new one
// is looked into, and the journal never again.
func uncommittedErr(display, journal string, cause error) *fault.Error {
	if errors.Is(cause, errRecoveryPending) {
		return fault.Errorf(fault.CodeLockTimeout, "%s holds a change of a transaction whose process died, and its recovery has not run yet: another process holds some of its files, or is recovering it.", display).
			WithPath(display).WithDetail("journal", journal).
			WithHint("retry in a moment (the next call undoes the transaction before it reads), or with a longer --lock-timeout")
	}
	if errors.Is(cause, errNewerJournal) {
		return fault.Errorf(fault.CodeNotSupported, "%s may hold a change of a transaction whose process died, never committed, which this agentfs leaves as it is: %s.", display, ErrText(cause)).
			WithPath(display).WithDetail("journal", journal).
			WithHint("run agentfs --recover with the version of agentfs that wrote the journal (or a later one): it undoes the transaction; without one, inspect the journal (details.journal), put back by hand what it changed, then remove it").WithCause(cause)
	}
	if cause == nil {
		return fault.Errorf(fault.CodeIOError, "%s holds a change of a transaction whose process died, and the change could not be undone: its content may never have been committed.", display).
			WithPath(display).WithDetail("journal", journal).
			WithHint("make its file system writable again (or run agentfs as a user who may change it): the next call undoes the transaction")
	}
	state := filepath.Dir(journal)
	var e *fault.Error
	if isJournal(journal) {
		state = filepath.Dir(state)
		e = fault.Errorf(fault.CodeIOError, "%s holds a change of a transaction whose process died, and it cannot be recovered now (%s): its content may never have been committed.", display, causeText(cause))
	} else if np := (*notPrivate)(nil); errors.As(cause, &np) {
		e = fault.Errorf(fault.CodeIOError, "the state directory %s holds journals of transactions, but it is not a private directory of this user (%s), and none is recovered from it: %s may hold a change of one whose process died, never committed.", state, np.why, display)
	} else {
		e = fault.Errorf(fault.CodeIOError, "the journals of the transactions in %s cannot be listed (%s): %s may hold a change of one whose process died, never committed.", journal, causeText(cause), display)
	}
	code, hint := mendStateDir(state, cause)
	e.Code = code
	e = e.WithPath(display).WithDetail("journal", journal)
	if np := (*notPrivate)(nil); errors.As(cause, &np) && np.foreign {
		return e.WithHint("%s", hint).WithCause(cause) // nothing there is recovered
	}
	return e.WithHint("%s; leave %s as it is: the journal is looked for in %s only, and the next call that can use it recovers the transaction", hint, StateDirEnv, state).WithCause(cause)
}

// causeText is the system's word for err (no space left on device), not
// the message of a fault built around it.
func causeText(err error) string {
	if errno := unix.Errno(0); errors.As(err, &errno) {
		return errno.Error()
	}
	return ErrText(err)
}

// leftKind is what an undo that could not finish left of one journal
// entry: the first ones leave its file other than it was before the
// transaction (blocks), the others only a hidden file beside it.
type leftKind int

const (
	leftReplaced leftKind = iota + 1 // the new content in place, the old in the backup
	leftRemoved                      // removed, the old content in the backup
	leftCreated                      // a new file of the transaction's
	leftTree                         // a moved directory, its old one in the backup
	leftNoDir                        // its directory not found: not known
	leftBackup                       // as it was; a hidden link of the old file stays
	leftStaged                       // as it was; a staged file stays
	leftMadeDir                      // an empty directory the transaction made stays
	leftUnsynced                     // undone, its directory not synced
)

// undoLeft is one thing an undo, a commit's own or a recovery's, could
// not do, and why.
type undoLeft struct {
	real string // the target's real path, where its directory is
	dir  string // the real path of its directory
	kind leftKind
	file string // the name in dir of what stays: the backup, the staged file, the target
	err  error  // the failed step's error
	why  string // what stands in the way, "" when not known
	mend string // what lifts it
}

// blocks reports whether the file is not as it was before the
// transaction: it may hold content never committed, and is refused.
func (l *undoLeft) blocks() bool { return l.kind <= leftNoDir }

// undoNotes collects what the undo of the entry e, in the directory dfd,
// could not do.
type undoNotes struct {
	dfd  int
	e    *journalEntry
	left []undoLeft
}

func (n *undoNotes) note(kind leftKind, file string, err error) {
	dir := n.e.Dir
	if p, ok := kernelPath(n.dfd); ok {
		dir = p // where it was found, moved since
	}
	why, mend := undoObstacle(n.dfd, dir, file, err)
	n.left = append(n.left, undoLeft{real: filepath.Join(dir, n.e.Name), dir: dir, kind: kind, file: file, err: err, why: why, mend: mend})
}

// undoObstacle says what made a step on name in the directory dfd (dir)
// fail with err, and what lifts it.
func undoObstacle(dfd int, dir, name string, err error) (why, mend string) {
	perm := errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
	euid := os.Geteuid()
	switch {
	case errors.Is(err, unix.EROFS):
		return "the file system of " + dir + " is read-only", "remount it read-write"
	case perm && pinned(dfd, "."):
		return dir + " is append-only or immutable (chattr +a or +i)", "lift that as root with chattr -a (or -i) " + fault.ShellWord(dir) + " (lsattr -d shows it)"
	case perm && name != "" && pinned(dfd, name):
		return filepath.Join(dir, name) + " is append-only or immutable (chattr +a or +i)", "lift that as root with chattr -a (or -i) " + fault.ShellWord(filepath.Join(dir, name))
	}
	var st, d unix.Stat_t
	if errors.Is(err, unix.EPERM) && name != "" && unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && unix.Fstat(dfd, &d) == nil &&
		stickyBars(&st, &d) {
		return fmt.Sprintf("%s is user %d's, in a sticky directory (mode +t) that is not this user's either", filepath.Join(dir, name), st.Uid),
			fmt.Sprintf("user %d, the directory's owner (user %d) or root may do it", st.Uid, d.Uid)
	}
	if perm {
		return fmt.Sprintf("this user (uid %d) may not write %s", euid, dir), "give it write permission (chmod u+w), or run agentfs as a user who may write it"
	}
	return "", "check the file system of " + dir + " and its disk"
}

// shellCmd is the shell command of words, each quoted (fault.ShellWord), or
// "" when one is not UTF-8: JSON writes its bytes as U+FFFD, and the
// command an agent pasted would name another file (an old content moved
// to another name, and the dead commit's then taken for undone).
func shellCmd(words ...string) string {
	for _, w := range words {
		if !utf8.ValidString(w) {
			return ""
		}
	}
	return strings.Join(words, " ")
}

// moveBack is the shell command that renames hidden back to real, over
// the file there when over, else only to a free name; "" as shellCmd. mv
// given a directory (or a link to one) as its last operand moves into it:
// the old tree went into the transaction's copy still at real, and the
// next recovery, its backup gone, took the transaction for undone. GNU's
// -T (no target directory) is not in macOS's or the BSDs' mv, nor POSIX's,
// so the name is tested first, with test, by the shell: nothing is moved
// when a directory stands there (over), or anything, a dangling link too,
// which BSD mv -n replaces (not over).
func moveBack(hidden, real string, over bool) string {
	h, r := fault.ShellWord(hidden), fault.ShellWord(real)
	if over {
		return shellCmd("test ! -d", r, "&& mv -f --", h, r)
	}
	return shellCmd("test ! -e", r, "&& test ! -L", r, "&& mv -n --", h, r)
}

// describe says, of l, what is there now and what step failed, and the
// shell command that does that step by hand ("" when there is none).
func (l *undoLeft) describe() (state, step, by string) {
	hidden := filepath.Join(l.dir, l.file)
	switch l.kind {
	case leftReplaced:
		return "it holds the transaction's new content, never committed, and its old content is in " + hidden,
			"renaming the old content back over it", moveBack(hidden, l.real, true)
	case leftRemoved:
		return "the transaction removed it, and its old content is in " + hidden,
			"renaming the old content back to its name", moveBack(hidden, l.real, false)
	case leftCreated:
		return "it is a new file of the transaction's, never committed", "removing it", shellCmd("rm --", fault.ShellWord(l.real))
	case leftTree:
		return "the transaction moved the directory there, and the old one is at " + hidden,
			"renaming the old directory back to its name", moveBack(hidden, l.real, false)
	case leftNoDir:
		return "what it holds is not known", "finding its directory " + l.dir + " (not where the journal recorded it: a file system not mounted, or the directory moved away)", ""
	case leftBackup:
		return "it is as it was, and a hidden link of its old file stays at " + hidden, "removing that link", shellCmd("rm --", fault.ShellWord(hidden))
	case leftStaged:
		return "it is as it was, and the transaction's staged file stays at " + hidden, "removing the staged file", shellCmd("rm --", fault.ShellWord(hidden))
	case leftMadeDir:
		return "it is an empty directory the transaction made", "removing it", shellCmd("rmdir --", fault.ShellWord(l.real))
	}
	return "it is undone", "syncing its directory " + l.dir, ""
}

// failure is the step that failed, its error and why: "renaming ... fails:
// operation not permitted, as ...".
func (l *undoLeft) failure() string {
	_, step, _ := l.describe()
	if l.err == nil {
		return step + " fails"
	}
	s := step + " fails: " + causeText(l.err)
	if l.why != "" {
		s += ", as " + l.why
	}
	return s
}

// abandonedWhy is the failure the committer of journal wrote when it gave
// the journal up (journal.abandon), "" when it did not (its process died)
// or when what is there is not such a note (abandonedNote): empty, longer
// than abandonedMax, which is all that is read, not UTF-8, or holding a
// control character.
func abandonedWhy(journal string) string {
	fd, err := unix.Open(journal+journalAbandoned, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	file := os.NewFile(uintptr(fd), journal+journalAbandoned)
	defer file.Close()
	if st, err := file.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	data, err := io.ReadAll(io.LimitReader(file, abandonedMax+1))
	if err != nil || len(data) == 0 || len(data) > abandonedMax || !utf8.Valid(data) ||
		strings.IndexFunc(string(data), unicode.IsControl) >= 0 {
		return ""
	}
	return strings.TrimSuffix(string(data), ".")
}

// origin says how the transaction of journal came to be left.
func origin(journal string) string {
	if why := abandonedWhy(journal); why != "" {
		return "its commit failed, " + why + ", and so did its own undo"
	}
	return "its process died during its commit"
}

// leftErr is the refusal of display (real), which is, holds or lies in
// the file l that the undo of journal left not undone; more are the other
// files of the journal left so.
func leftErr(display, real, journal string, l *undoLeft, more int) *fault.Error {
	subject := display + " is"
	if rel, ok := within(real, l.real); ok && rel != "." {
		subject = fmt.Sprintf("%s holds %s, which is", display, filepath.Join(display, rel))
	} else if !ok && real != l.real {
		subject = fmt.Sprintf("%s is in %s, which is", display, l.real)
	}
	state, _, by := l.describe()
	e := fault.Errorf(fault.CodeIOError, "%s half changed by a transaction that could not be undone (%s): %s. As it stands, %s.", subject, origin(journal), l.failure(), state).
		WithPath(display).WithDetail("journal", journal).WithDetail("file", l.real)
	if l.kind == leftNoDir {
		return e.WithHint("mount the file system of %s again, or move the directory back: the next agentfs call then undoes the transaction (agentfs --recover reports what is left of it)", l.dir)
	}
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (the journal leaves %d more file(s) so: agentfs --recover lists each, and its command)", more)
	}
	if by == "" {
		return e.WithHint("%s: the next agentfs call then undoes the transaction%s", l.mend, also)
	}
	return e.WithDetail("undo", by).WithHint("%s: the next agentfs call then undoes the transaction; or undo this file by hand, %s, and the next call finishes the rest%s", l.mend, by, also)
}

// abandonedErr is the error of a commit that failed (err) and could not
// undo itself (left): err's code, saying what it left and that the next
// call undoes it, or how.
func abandonedErr(err error, journal string, left []undoLeft) error {
	fe := fault.AsError(err)
	var blocked []string
	var first *undoLeft
	for i := range left {
		if left[i].blocks() {
			blocked = append(blocked, left[i].real)
			if first == nil {
				first = &left[i]
			}
		}
	}
	if first == nil {
		// Every file as it was: only hidden files stay, which the
		// journal names for a later call to remove.
		if len(left) > 0 {
			state, _, _ := left[0].describe()
			note := fmt.Sprintf("as for %s, %s (%s): the journal stays for a later call to remove it", left[0].real, state, left[0].failure())
			if fe.Hint != "" {
				note = fe.Hint + "; " + note // an error without a hint read "; as for"
			}
			return fe.WithDetail("journal", journal).WithHint("%s", note)
		}
		return fe
	}
	state, _, by := first.describe()
	msg := fmt.Sprintf("%s; and its undo could not be finished: for %s, %s. As it stands, %s", strings.TrimSuffix(fe.Message, "."), first.real, first.failure(), state)
	if len(blocked) > 1 {
		msg += fmt.Sprintf("; %d more file(s) are left so: %s", len(blocked)-1, strings.Join(blocked[1:], ", "))
	}
	refused := "Reads of it are refused until it is undone."
	if len(blocked) > 1 {
		refused = "Reads of them are refused until they are undone."
	}
	out := fault.Errorf(fe.Code, "%s. %s", msg, refused).WithPath(fe.Path).WithDetail("journal", journal).WithCause(err)
	for k, v := range fe.Details {
		out = out.WithDetail(k, v)
	}
	if by != "" {
		out = out.WithDetail("undo", by)
		return out.WithHint("%s: the next agentfs call then undoes the transaction; or undo it by hand, %s, and the next call finishes the rest", first.mend, by)
	}
	return out.WithHint("the next agentfs call undoes the transaction once it can (agentfs --recover reports what is left of it)")
}

// missingUncommitted is err, or, when err says t is missing and a failed
// undo left it so (a file the transaction removed, its old content not put
// back, or one in its directory), the refusal that says so: a reader told
// NOT_FOUND took the half-done commit for the tree as it is.
func (f *FS) missingUncommitted(t target, err error) error {
	files := f.uncommitted.Load()
	if files == nil || len(*files) == 0 || !fault.MissingPath(err) {
		return err
	}
	real := f.resolveExisting(filepath.Join(t.root.path, t.rel))
	for _, u := range *files {
		if _, in := within(u.real, real); in {
			if u.left != nil {
				return leftErr(t.display(f), real, u.journal, u.left, u.more)
			}
			return uncommittedErr(t.display(f), u.journal, u.cause)
		}
	}
	return err
}
