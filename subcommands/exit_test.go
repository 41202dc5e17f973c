package subcommands

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/index"
)

func TestExitCodes(t *testing.T) {
	for c, want := range map[fault.Code]int{fault.CodeInvalidArgument: 2, fault.CodeInvalidRegex: 2, fault.CodeInvalidGlob: 2, fault.CodePatchParse: 2, fault.CodeNotFound: 1, fault.CodeStale: 3, fault.CodeExists: 3, fault.CodeLockTimeout: 3, fault.CodeInterrupted: 130, fault.CodeIOError: 1} {
		if got := exitCode(c); got != want {
			t.Errorf("%s exit %d, want %d", c, got, want)
		}
	}
}

// An index's failure says what happened: a tree gone under a watcher is
// NOT_FOUND (it was IO_ERROR with a hint about the state directory), and
// inotify's instance limit names its sysctl.
func TestIndexErrorNamesTheCause(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code fault.Code
		hint string
	}{
		{&fs.PathError{Op: "lstat", Path: "/w/t", Err: syscall.ENOENT}, fault.CodeNotFound, "is gone"},
		{fmt.Errorf("inotify: %w (%w)", index.ErrWatchInstances, syscall.EMFILE), fault.CodeIOError, "max_user_instances"},
		{fmt.Errorf("inotify: %w (max_user_watches)", index.ErrWatchLimit), fault.CodeIOError, "max_user_watches"},
		{errors.New("disk on fire"), fault.CodeIOError, "state directory"},
	} {
		e := fault.AsError(indexErr(tc.err, "t"))
		if e.Code != tc.code || !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("indexErr(%v) = %s, %q; want %s, a hint with %q", tc.err, e.Code, e.Hint, tc.code, tc.hint)
		}
	}
}

// A batch exits with its first failure's status, but for a search's
// "nothing matched", which a later failure replaces.
func TestBatchStatus(t *testing.T) {
	type line struct {
		n       int
		noMatch bool
	}
	for _, tc := range []struct {
		lines []line
		want  int
	}{
		{nil, 0},
		{[]line{{0, false}, {1, true}}, 1},
		{[]line{{1, true}, {2, false}}, 2},
		{[]line{{1, true}, {4, false}}, 4},
		{[]line{{1, true}, {1, true}, {0, false}}, 1},
		{[]line{{1, false}, {3, false}}, 1}, // a read's NOT_FOUND, then a STALE: the first failure
		{[]line{{2, false}, {1, true}}, 2},
	} {
		var st batchStatus
		for _, l := range tc.lines {
			st.add(l.n, l.noMatch)
		}
		if st.code != tc.want {
			t.Errorf("%v: %d, want %d", tc.lines, st.code, tc.want)
		}
	}
}
