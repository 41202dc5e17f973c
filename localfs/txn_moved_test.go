package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A transaction killed mid-commit is undone, or its committed backups
// removed, when a plain tool (mv, git, a file manager) renamed or moved
// one of its directories before the next agentfs call: the recovery found
// no directory at the recorded path, took it for removed and dropped the
// journal, and the tree stayed half changed for good, its backups and
// staged files left in it. The journal recorded each directory's identity,
// by which it is found where it is now.
func TestTxnRecoveryOfAMovedDirectory(t *testing.T) {
	moves := []struct {
		name string
		// move moves what it likes in the tree dir, and returns where the
		// tree is now.
		move func(t *testing.T, dir string) string
	}{
		{"root renamed", func(t *testing.T, dir string) string {
			must(t, os.Rename(dir, dir+"-renamed"))
			return dir + "-renamed"
		}},
		{"directory of the files renamed", func(t *testing.T, dir string) string {
			must(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2")))
			return dir
		}},
		{"root and directory of the files renamed", func(t *testing.T, dir string) string {
			must(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2")))
			must(t, os.Rename(dir, dir+"-renamed"))
			return dir + "-renamed"
		}},
		{"directory moved, a link left at its name", func(t *testing.T, dir string) string {
			must(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub_real")))
			must(t, os.Symlink("sub_real", filepath.Join(dir, "sub")))
			return dir
		}},
		{"root moved, a link left at its name", func(t *testing.T, dir string) string {
			must(t, os.Rename(dir, dir+"-real"))
			must(t, os.Symlink(dir+"-real", dir))
			return dir + "-real"
		}},
		{"directory moved, another made at its name", func(t *testing.T, dir string) string {
			must(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub_old")))
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			return dir
		}},
		{"root moved, another made at its name", func(t *testing.T, dir string) string {
			must(t, os.Rename(dir, dir+"-old"))
			must(t, os.Mkdir(dir, 0o755))
			return dir + "-old"
		}},
	}
	renamed := map[string]string{"sub_real": "sub", "sub_old": "sub", "sub2": "sub"}
	for _, committed := range []bool{false, true} {
		for _, m := range moves {
			name := m.name
			if committed {
				name += ", committed"
			}
			t.Run(name, func(t *testing.T) {
				state := t.TempDir()
				t.Setenv(StateDirEnv, state)
				dir := killedWhere(t, txnBefore, func(dir, journal string) bool {
					if committed {
						return strings.HasSuffix(journal, journalCommitted)
					}
					shown := visible(contents(t, dir))
					return !equalTree(shown, txnBefore) && !equalTree(shown, txnAfter)
				})
				now := m.move(t, dir)
				recoverElsewhere(t)
				if fi, err := os.Lstat(filepath.Join(now, "sub")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					must(t, os.Remove(filepath.Join(now, "sub"))) // not read twice
				}
				got := map[string]string{}
				for p, data := range contents(t, now) {
					top, rest, _ := strings.Cut(p, "/")
					if r, ok := renamed[top]; ok && rest != "" {
						p = r + "/" + rest
					}
					got[p] = data
				}
				want := txnBefore
				if committed {
					want = txnAfter
				}
				if !equalTree(got, want) {
					t.Errorf("the tree (temporary files included) is %q, want %q", got, want)
				}
				if n := journalsLeft(t, state); n != 0 {
					t.Errorf("journals left: %d", n)
				}
			})
		}
	}
}

// A directory deleted (rm -r) after a transaction in it was killed, in a
// parent holding more directories than the search's bound, is taken for
// removed, as it was before the search: the journal is dropped at once,
// and the rest of the transaction undone. Kept waiting, it was sought
// again by every later call, on any root, for good. Within the bound,
// a renamed directory is found and undone there.
func TestTxnRecoverySearchBound(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	killed := func() string {
		return killedWhere(t, txnBefore, func(dir, journal string) bool {
			shown := visible(contents(t, dir))
			return !equalTree(shown, txnBefore) && !equalTree(shown, txnAfter)
		})
	}
	defer func(n int) { seekEntries = n }(seekEntries)
	seekEntries = 64
	dir := killed()
	must(t, os.RemoveAll(filepath.Join(dir, "sub")))
	// Directories beside where sub was, as many as the bound: listing
	// them exhausts it.
	for i := range seekEntries {
		must(t, os.Mkdir(filepath.Join(dir, "filler"+strconv.Itoa(i)), 0o755))
	}
	recoverElsewhere(t)
	if n := journalsLeft(t, state); n != 0 {
		t.Fatalf("the journal of a directory deleted in a large parent waits: %d", n)
	}
	for name, want := range map[string]string{"a.txt": txnBefore["a.txt"], "b.txt": txnBefore["b.txt"]} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s after the recovery: %q, %v, want %q", name, got, err, want)
		}
	}
	dir = killed()
	must(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2")))
	recoverElsewhere(t)
	must(t, os.Rename(filepath.Join(dir, "sub2"), filepath.Join(dir, "sub")))
	if got := contents(t, dir); !equalTree(got, txnBefore) {
		t.Errorf("the tree is %q, want %q", got, txnBefore)
	}
	if n := journalsLeft(t, state); n != 0 {
		t.Errorf("journals left: %d", n)
	}
}

// A recovery locks a moved directory's files where it found them, as a
// live writer of theirs locks them by that path: while one holds such a
// lock, the recovery waits for it, and leaves the journal for a later
// call, its undo never interleaved with the writer's change.
func TestTxnRecoveryOfAMovedDirectoryLocksItsFiles(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	elsewhere := t.TempDir()
	holder, err := New(Config{Roots: []string{elsewhere}, Cwd: elsewhere, LockTimeout: 100 * time.Millisecond})
	must(t, err)
	defer holder.Close()
	dir := killedMidCommit(t, txnBefore, txnAfter)
	now := dir + "-renamed"
	must(t, os.Rename(dir, now))
	real, err := filepath.EvalSymlinks(now)
	must(t, err)
	half := contents(t, now)
	unlock, _, err := holder.lockReal(context.Background(), []string{filepath.Join(real, "a.txt")}, time.Second)
	must(t, err)
	recoverElsewhere(t)
	if n := journalsLeft(t, state); n != 1 {
		t.Fatalf("the recovery ran while a writer held a moved file's lock: journals %d", n)
	}
	if got := contents(t, now); !equalTree(got, half) {
		t.Errorf("the recovery changed the tree while a writer held a moved file's lock: %q, was %q", got, half)
	}
	unlock()
	recoverElsewhere(t)
	if got := contents(t, now); !equalTree(got, txnBefore) {
		t.Errorf("the tree is %q, want %q", got, txnBefore)
	}
}

// The searches of one recovery list a directory once: the directories of
// a journal are mostly sought in the same ones, and each search listed
// them again, the journal's directories in a deleted project whose parent
// is too big for the bounds costing the listing of that parent once a
// directory.
func TestTxnRecoverySearchesListOnce(t *testing.T) {
	defer func(n int) { seekEntries = n }(seekEntries)
	seekEntries = 64
	parent := t.TempDir()
	for i := range seekEntries + 8 {
		must(t, os.Mkdir(filepath.Join(parent, "d"+strconv.Itoa(i)), 0o755))
	}
	var st unix.Stat_t
	must(t, unix.Stat(parent, &st))
	seen := &dirsFound{}
	var reads []int
	for i := range 5 {
		e := journalEntry{Dir: filepath.Join(parent, "gone", "s"+strconv.Itoa(i)), DirIdentity: strconv.FormatUint(uint64(st.Dev), 10) + ":1"}
		if l := seen.locate(&e, unix.ENOENT); l.verdict != dirRemoved {
			t.Errorf("%s: a search cut short by its bound gave %v, want dirRemoved", e.Dir, l.verdict)
		}
		reads = append(reads, seen.reads)
	}
	if reads[len(reads)-1] != reads[0] {
		t.Errorf("directories listed after each search: %v, want each listed once", reads)
	}
}

// A listing cut short because an earlier search of the recovery had few
// entries left is read again by one with more: shared as it was, it cut
// every later search that needed it, and a directory removed since the
// crash, which a search of its own would have proved removed, kept its
// journal waiting for ever, each call cutting it the same way; and one
// renamed there is found only in the listing read again.
func TestTxnRecoverySearchRereadsAListingCutShort(t *testing.T) {
	parent := t.TempDir()
	for i := range 8 {
		must(t, os.Mkdir(filepath.Join(parent, "d"+strconv.Itoa(i)), 0o755))
	}
	var st unix.Stat_t
	must(t, unix.Stat(parent, &st))
	dev := strconv.FormatUint(uint64(st.Dev), 10)
	seen := &dirsFound{at: map[string]located{}, listed: map[string]subdirList{
		identity(&st): {whole: false, read: 1}, // cut by an earlier search's last entry
	}}
	e := journalEntry{Dir: filepath.Join(parent, "gone"), DirIdentity: dev + ":1"}
	if l := seen.locate(&e, unix.ENOENT); l.verdict != dirRemoved {
		t.Errorf("a removed directory whose parent fits the bounds: %v, want dirRemoved", l.verdict)
	}
	// Since a search cut by its bound takes a missing directory for
	// removed too, what the listing read again gives is finding one
	// renamed there, which the listing cut short does not name.
	var moved unix.Stat_t
	must(t, unix.Stat(filepath.Join(parent, "d5"), &moved))
	seen = &dirsFound{at: map[string]located{}, listed: map[string]subdirList{
		identity(&st): {whole: false, read: 1},
	}}
	e = journalEntry{Dir: filepath.Join(parent, "was"), DirIdentity: identity(&moved)}
	if l := seen.locate(&e, unix.ENOENT); l.verdict != dirFound || l.path != filepath.Join(parent, "d5") {
		t.Errorf("a directory renamed in a parent whose listing an earlier search cut: %+v, want found at d5", l)
	}
}
