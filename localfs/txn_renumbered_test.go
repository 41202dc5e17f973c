package localfs

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// renumberJournal rewrites the one journal in state as if the file system
// of its directories had been mounted again under device number 1 (a
// btrfs subvolume or an overlay after a reboot), with fs, when not "", for
// the file system identity it recorded. It skips the test where that
// file system has no identity to know it by (tmpfs).
func renumberJournal(t *testing.T, state, fs string) {
	t.Helper()
	js, _ := os.ReadDir(filepath.Join(state, "journal"))
	if len(js) != 1 {
		t.Fatalf("journals %v, want one", js)
	}
	p := filepath.Join(state, "journal", js[0].Name())
	entries, err := readJournal(p)
	if err != nil {
		t.Fatal("the journal does not read")
	}
	for i := range entries {
		e := &entries[i]
		if e.DirFS == "" {
			t.Skip("the test directory's file system has no f_fsid (tmpfs?): set TMPDIR to a directory on ext4, xfs or btrfs")
		}
		for _, id := range []*string{&e.DirIdentity, &e.DirID, &e.StagedID} {
			if _, rest, ok := strings.Cut(*id, ":"); ok {
				*id = "1:" + rest
			}
		}
		if fs != "" {
			e.DirFS = fs
		}
	}
	data, err := json.Marshal(entries)
	must(t, err)
	must(t, os.WriteFile(p, data, 0o600))
}

// visible is tree without temporary files: a dead writer's staged file
// is swept by its own record, whatever its journal waits for.
func visible(tree map[string]string) map[string]string {
	out := maps.Clone(tree)
	maps.DeleteFunc(out, func(p string, _ string) bool { return strings.HasPrefix(filepath.Base(p), tempPrefix) })
	return out
}

// A transaction killed mid-commit is undone after its file system came
// back under another device number, as long as it is the same file system
// (fsID) and directory (inode): the journal waited for good, the tree half
// changed. On another file system it still waits.
func TestTxnRecoveryAfterTheDeviceIsRenumbered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dirs   bool
		fs     string // "": the one recorded
		undone bool
		// removed is a directory removed before the recovery: its
		// entries have nothing left to undo on their file system.
		removed string
	}{
		{"files", false, "", true, ""},
		{"directories it made", true, "", true, ""},
		{"directories it made, removed since", true, "", true, "new"},
		{"another file system", false, "1:2", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv(StateDirEnv, state)
			before := txnBefore
			var dir string
			if tc.dirs {
				t.Setenv(txnOpsEnv, "dirs")
				before = dirsBefore
				dir = killedWhere(t, before, func(dir, journal string) bool {
					return strings.HasSuffix(journal, journalPending) && slices.Contains(dirsIn(t, dir), "new/deep")
				})
			} else {
				dir = killedMidCommit(t, before, txnAfter)
			}
			if tc.removed != "" {
				must(t, os.RemoveAll(filepath.Join(dir, tc.removed)))
			}
			half, halfDirs := contents(t, dir), dirsIn(t, dir)
			renumberJournal(t, state, tc.fs)
			recoverElsewhere(t)
			js, _ := os.ReadDir(filepath.Join(state, "journal"))
			got, dirs := contents(t, dir), dirsIn(t, dir)
			switch {
			case tc.undone && (!equalTree(got, before) || len(js) != 0):
				t.Errorf("not undone: tree %q (was %q), journals %v", got, half, js)
			case tc.undone && tc.dirs && !slices.Equal(dirs, []string{"sub"}):
				t.Errorf("the directories it made stay: %q", dirs)
			case !tc.undone && (!equalTree(visible(got), visible(half)) || !slices.Equal(dirs, halfDirs) || len(js) != 1):
				t.Errorf("acted on another file system: tree %q (was %q), dirs %q (were %q), journals %v", got, half, dirs, halfDirs, js)
			}
		})
	}
}
