package localfs

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// uncommittedFile is a file named by a transaction whose writer died and
// whose undo failed (a file system remounted read-only since the crash),
// or could not run (cause: its recovery file or lock files could not be
// made, in a full state directory; errRecoveryPending: not in time, its
// locks held or another process recovering it), or every file ("/") when journal is a
// journal directory that cannot be listed or a journal that cannot be
// read: it holds what the dead commit left
// there, a content that may never have been committed, until a later call
// undoes it.
type uncommittedFile struct {
	real    string // the real path the journal names
	journal string
	cause   error // nil when the undo failed
}

// settle recovers the journals of dead writers in the state directories
// states (recoverJournals), keeping
// the files of those it could not undo, which reads then refuse
// (checkCommitted), and returns the journals left stuck, with the cause of
// those whose recovery could not run.
func (f *FS) settle(ctx context.Context, states []string, deadline time.Time) map[string]error {
	stuck, moved := recoverJournals(ctx, f, states, deadline)
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
		entries, err := readJournal(j)
		if err != nil && !errors.Is(err, errNoJournal) {
			// A journal that cannot be read names files no one can
			// tell: any file may hold the dead commit's change.
			files = append(files, uncommittedFile{real: string(filepath.Separator), journal: j, cause: cmp.Or(cause, err)})
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
	real := realPath(file, filepath.Join(t.root.path, t.rel))
	for _, u := range *files {
		_, below := within(real, u.real)
		if _, above := within(u.real, real); below || above {
			return uncommittedErr(t.display(f), u.journal, u.cause)
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
			WithHint("retry in a moment, or with a longer --lock-timeout: the next call undoes the transaction before it reads")
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
