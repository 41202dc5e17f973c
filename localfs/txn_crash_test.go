package localfs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// killAtEnv makes TestTxnCommitter kill its process just before its N-th
// durable call (a rename or an fsync): every point of a commit, the
// commit point's two sides included.
const killAtEnv = "AGENTFS_TEST_TXN_KILL_AT"

// killDirsEnv set makes killAtEnv count the steps of making a directory
// instead: just after each mkdir, and just before each rename of a made
// directory to its name. Their number varies (two workers may both make
// a missing directory), which the durable calls' does not.
const killDirsEnv = "AGENTFS_TEST_TXN_KILL_DIRS"

// txnOpsEnv set to "dirs" makes TestTxnCommitter commit txnDirOps, to
// "manyDirs" txnManyDirOps, to "newDirs" txnNewDirOps.
const txnOpsEnv = "AGENTFS_TEST_TXN_OPS"

// pauseEnv set makes killAtEnv's point a pause instead: TestTxnCommitter
// says "paused" on its stdout there and waits, alive, for its parent to
// kill it (startPausedAt).
const pauseEnv = "AGENTFS_TEST_TXN_PAUSE"

// TestTxnCommitter is the child of TestTxnSurvivesKills: it commits one
// transaction in the directory given by its working directory.
func TestTxnCommitter(t *testing.T) {
	at, err := strconv.Atoi(os.Getenv(killAtEnv))
	if err != nil {
		t.Skip("only a re-executed helper process runs this")
	}
	var calls, dirSteps atomic.Int64 // the stagers sync at once
	killAt := func(n *atomic.Int64) {
		if n.Add(1) != int64(at) {
			return
		}
		if os.Getenv(pauseEnv) != "" {
			fmt.Println("paused")
			io.Copy(io.Discard, os.Stdin) // until the parent kills it, or is gone
		}
		unix.Kill(os.Getpid(), unix.SIGKILL)
	}
	kill, killDir := func() { killAt(&calls) }, func() {}
	if os.Getenv(killDirsEnv) != "" {
		kill, killDir = func() {}, func() { killAt(&dirSteps) }
	}
	fsync, renameat, renameExclusive, mkdirat := syscalls.fsync, syscalls.renameat, syscalls.renameExclusive, syscalls.mkdirat
	syscalls.fsync = func(fd int) error { kill(); return fsync(fd) }
	syscalls.renameat = func(od int, o string, nd int, n string) error { kill(); return renameat(od, o, nd, n) }
	syscalls.renameExclusive = func(od int, o string, nd int, n string) error { killDir(); return renameExclusive(od, o, nd, n) }
	syscalls.mkdirat = func(d int, n string, m uint32) error { err := mkdirat(d, n, m); killDir(); return err }
	dir, _ := os.Getwd()
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ops := txnOps()
	switch os.Getenv(txnOpsEnv) {
	case "dirs":
		ops = txnDirOps()
	case "manyDirs":
		ops = txnManyDirOps()
	case "newDirs":
		ops = txnNewDirOps()
	}
	paths := make([]string, len(ops))
	for i, op := range ops {
		paths[i] = op.Path
	}
	unlock, err := fsys.LockAll(ctx, paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := fsys.Commit(ctx, ops); err != nil {
		t.Fatal(err)
	}
}

// txnBefore and txnAfter are the tree txnOps commits over, and the tree
// once it is committed.
var (
	txnBefore = map[string]string{"a.txt": "old a\n", "b.txt": "old b\n", "sub/d.txt": "old d\n"}
	txnAfter  = map[string]string{"a.txt": "new a\n", "sub/c.txt": "new c\n", "sub/d.txt": "new d\n"}
)

func txnOps() []backend.Op {
	return []backend.Op{
		{Path: "a.txt", Data: []byte("new a\n")},
		{Path: "b.txt", Remove: true},
		{Path: "sub/c.txt", Data: []byte("new c\n")},
		{Path: "sub/d.txt", Data: []byte("new d\n")},
	}
}

// A transaction killed at any point of its commit is, once the next
// agentfs starts, either wholly undone or wholly done, with nothing of it
// left behind: no staged file, backup or journal. So too in a directory
// whose name is not UTF-8: its journal named it with U+FFFD, and a
// recovery took it for removed and dropped the journal, nothing undone.
func TestTxnSurvivesKills(t *testing.T) {
	for _, name := range []string{"", "r\xff"} {
		t.Run(strconv.Quote(name), func(t *testing.T) { txnSurvivesKills(t, name) })
	}
}

func txnSurvivesKills(t *testing.T, name string) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	before, after := txnBefore, txnAfter
	outcomes := map[string]int{}
	for at := 1; ; at++ {
		dir := filepath.Join(t.TempDir(), name)
		for p, data := range before {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			must(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
		}
		killed := runKilledAt(t, "TestTxnCommitter", dir, at)
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir}) // recovers
		if err != nil {
			t.Fatal(err)
		}
		fsys.Close()
		got := contents(t, dir)
		switch {
		case equalTree(got, before):
			outcomes["undone"]++
		case equalTree(got, after):
			outcomes["done"]++
		default:
			t.Fatalf("kill at %d (killed %v): the tree is %q, neither before nor after", at, killed, got)
		}
		if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
			t.Fatalf("kill at %d: journals left: %v", at, j)
		}
		if !killed {
			if !equalTree(got, after) {
				t.Fatalf("a commit that was not killed left %q", got)
			}
			break
		}
		outcomes["killed"]++
	}
	t.Logf("outcomes over every kill point: %v", outcomes)
	if outcomes["undone"] == 0 || outcomes["done"] < 2 {
		t.Errorf("the kills did not land on both sides of the commit point: %v", outcomes)
	}
}

// runKilledAt runs the helper test child in dir, told to kill itself at
// its at-th durable call, and says whether it was killed; any other
// failure of the child fails the test.
func runKilledAt(t *testing.T, child, dir string, at int, env ...string) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), killAtEnv+"="+strconv.Itoa(at)), env...)
	out, err := cmd.CombinedOutput()
	killed := false
	if ee, ok := err.(*exec.ExitError); ok {
		ws, _ := ee.Sys().(syscall.WaitStatus)
		killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	if err != nil && !killed {
		t.Fatalf("kill at %d: %s failed: %v\n%s", at, child, err, out)
	}
	return killed
}

// startPausedAt starts the helper test child in dir, told to pause at its
// at-th durable call, and returns it once it is there; the test kills it.
func startPausedAt(t *testing.T, child, dir string, at int, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), killAtEnv+"="+strconv.Itoa(at), pauseEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "paused" {
			return cmd
		}
	}
	t.Fatalf("%s ended before its pause at %d", child, at)
	return nil
}

// contents maps every path below dir to its content.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTree(a, b map[string]string) bool {
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for k := range a {
		ka = append(ka, k)
	}
	for k := range b {
		kb = append(kb, k)
	}
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTxnRecoveryKeepsLaterWrites: a writer that changed a file of a
// transaction killed mid-commit, before anything recovered it (another
// state directory, or a process that had recovered at its start), keeps
// its change: the rollback renamed the old file back over it, a write
// reported done and then lost. Changes by a new file (rename) and in place
// (same inode, new size and mtime) both.
func TestTxnRecoveryKeepsLaterWrites(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	before := txnBefore
	for _, inPlace := range []bool{false, true} {
		for at := 1; ; at++ {
			dir := t.TempDir()
			for p, data := range before {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
				must(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
			}
			if !runKilledAt(t, "TestTxnCommitter", dir, at) {
				break
			}
			later := contents(t, dir)
			for p := range later {
				if strings.HasPrefix(filepath.Base(p), tempPrefix) {
					delete(later, p) // the dead commit's staged files and backups
					continue
				}
				later[p] = "later " + p + "\n"
				full := filepath.Join(dir, p)
				if inPlace {
					must(t, os.WriteFile(full, []byte(later[p]), 0o644))
				} else {
					must(t, os.WriteFile(full+".new", []byte(later[p]), 0o644))
					must(t, os.Rename(full+".new", full))
				}
			}
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir}) // recovers
			if err != nil {
				t.Fatal(err)
			}
			fsys.Close()
			got := contents(t, dir)
			for p, want := range later {
				if got[p] != want {
					t.Fatalf("kill at %d (in place %v): after recovery the tree is %q, without the later write of %s", at, inPlace, got, p)
				}
			}
		}
	}
}

// TestTxnRecoveredUnderLocks: a process that started before a commit was
// killed (a batch, an MCP server) recovers it once it holds the locks of
// its next mutation: it recovered only when it started, and changed the
// files of the half-done transaction.
func TestTxnRecoveredUnderLocks(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	before, after := txnBefore, txnAfter
	for at := 1; ; at++ {
		dir := t.TempDir()
		for p, data := range before {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			must(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
		}
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir}) // started before the kill
		if err != nil {
			t.Fatal(err)
		}
		killed := runKilledAt(t, "TestTxnCommitter", dir, at)
		unlock, err := fsys.LockAll(context.Background(), []string{"a.txt"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := contents(t, dir)
		unlock()
		fsys.Close()
		for p := range got {
			if strings.HasPrefix(filepath.Base(p), tempPrefix) {
				delete(got, p) // a staged file of no journal: swept when a process starts
			}
		}
		if !equalTree(got, before) && !equalTree(got, after) {
			t.Fatalf("kill at %d: under the lock of the next mutation the tree is %q, neither before nor after", at, got)
		}
		if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
			t.Fatalf("kill at %d: journals left: %v", at, j)
		}
		if !killed {
			break
		}
	}
}

// killedWhere runs TestTxnCommitter in a new tree of before, killed at
// each durable call in turn, and returns the first tree that leaves one
// journal, named journal, for a recovery and is as want asks; the
// journals of the trees passed over are removed.
func killedWhere(t *testing.T, before map[string]string, want func(dir, journal string) bool) string {
	t.Helper()
	journals := filepath.Join(os.Getenv(StateDirEnv), "journal")
	for at := 1; at < 60; at++ {
		dir := t.TempDir()
		writeTree(t, dir, before)
		if !runKilledAt(t, "TestTxnCommitter", dir, at) {
			break
		}
		if j, _ := os.ReadDir(journals); len(j) == 1 && want(dir, j[0].Name()) {
			return dir
		}
		os.RemoveAll(journals)
	}
	t.Fatal("no kill point left the tree as the test needs it")
	return ""
}

// killedMidCommit is killedWhere's first tree left half changed (neither
// before nor after, temporary files aside).
func killedMidCommit(t *testing.T, before, after map[string]string) string {
	t.Helper()
	return killedWhere(t, before, func(dir, _ string) bool {
		shown := visible(contents(t, dir))
		return !equalTree(shown, before) && !equalTree(shown, after)
	})
}

// A recovery that cannot undo a transaction now keeps its journal for a
// later one: while the tree's file system is not mounted (its mount point,
// another directory, at its path), a call of any root found no backup
// there, took the commit as never begun and removed the journal, and the
// tree stayed half changed for good once mounted again.
func TestTxnRecoveryWaitsForItsDirectory(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	before, after := txnBefore, txnAfter
	dir := killedMidCommit(t, before, after)
	// Out of reach as a file system not mounted is: at another depth,
	// where the search for a moved directory does not look.
	away := filepath.Join(dir+".away", "deeper")
	must(t, os.Mkdir(dir+".away", 0o755))
	must(t, os.Rename(dir, away))
	must(t, os.Mkdir(dir, 0o755)) // the mount point
	recoverElsewhere(t)
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 1 {
		t.Fatalf("the journal of a tree not there went: %v", j)
	}
	if got := contents(t, dir); len(got) != 0 {
		t.Errorf("the recovery wrote in the empty directory at the tree's path: %q", got)
	}
	must(t, os.Remove(dir))
	must(t, os.Rename(away, dir))
	recoveredTo(t, dir, state, before)
}

// A directory a commit made, removed after the crash (by a user, or by a
// pass of the recovery that failed elsewhere), has nothing left to undo:
// its entries kept the journal for ever, each call trying again.
func TestTxnRecoveryOfARemovedDirectory(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	t.Setenv(txnOpsEnv, "dirs")
	d := killedWhere(t, dirsBefore, func(dir, _ string) bool {
		_, err := os.Stat(filepath.Join(dir, "new/deep/e.txt"))
		return err == nil
	})
	must(t, os.RemoveAll(filepath.Join(d, "new")))
	for range 2 {
		recoverElsewhere(t)
	}
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
		t.Errorf("new/ removed since the kill: the journal stays for ever: %v", j)
	}
}

// recoverElsewhere starts a backend on a directory of its own, whose start
// recovers every journal of the state directory.
func recoverElsewhere(t *testing.T) {
	t.Helper()
	other := t.TempDir()
	fsys, err := New(Config{Roots: []string{other}, Cwd: other})
	must(t, err)
	fsys.Close()
}

// recoveredTo runs a recovery (recoverElsewhere) and checks that it left
// the tree at dir as want and no journal in the state directory state.
func recoveredTo(t *testing.T, dir, state string, want map[string]string) {
	t.Helper()
	recoverElsewhere(t)
	if got := contents(t, dir); !equalTree(got, want) {
		t.Errorf("after the recovery the tree is %q, not %q", got, want)
	}
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
		t.Errorf("journals left: %v", j)
	}
}

// A directory the transaction made that cannot be removed now (EIO)
// keeps the journal: the removal's failure was ignored, the journal went,
// and the empty directory stayed for good.
func TestTxnRecoveryKeepsAMadeDirectoryItCannotRemove(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	t.Setenv(txnOpsEnv, "dirs")
	dir := killedWhere(t, dirsBefore, func(dir, journal string) bool {
		return strings.HasSuffix(journal, journalPending) && slices.Contains(dirsIn(t, dir), "new/deep")
	})
	real := syscalls.rmdirat
	defer func() { syscalls.rmdirat = real }()
	syscalls.rmdirat = func(dfd int, name string) error {
		if name == "deep" {
			return unix.EIO
		}
		return real(dfd, name)
	}
	recoverElsewhere(t)
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 1 || !slices.Contains(dirsIn(t, dir), "new/deep") {
		t.Fatalf("new/deep could not be removed; journals %v, dirs %q", j, dirsIn(t, dir))
	}
	syscalls.rmdirat = real
	recoverElsewhere(t)
	if got, dirs := contents(t, dir), dirsIn(t, dir); !equalTree(got, dirsBefore) || !slices.Equal(dirs, []string{"sub"}) {
		t.Errorf("not undone: files %q, dirs %q", got, dirs)
	}
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
		t.Errorf("journals left: %v", j)
	}
}

// A journal entry keeps every byte of a directory or name that is not
// UTF-8, and a journal written before names went in base64 reads as it
// did.
func TestJournalEntryNamesNotUTF8(t *testing.T) {
	for _, e := range []journalEntry{
		{Dir: "/tmp/r\xff", Name: "a\xfe.txt", Backup: "b"},
		{Dir: "/tmp/r", Name: "a.txt", Staged: "s"},
	} {
		data, err := json.Marshal([]journalEntry{e})
		must(t, err)
		var got []journalEntry
		must(t, json.Unmarshal(data, &got))
		if len(got) != 1 || got[0] != e {
			t.Errorf("%+v read back as %+v", e, got)
		}
	}
	var old []journalEntry
	must(t, json.Unmarshal([]byte(`[{"dir":"/tmp/r","name":"a.txt","backup":"b"}]`), &old))
	if want := (journalEntry{Dir: "/tmp/r", Name: "a.txt", Backup: "b"}); len(old) != 1 || old[0] != want {
		t.Errorf("an older journal read as %+v", old)
	}
}
