package localfs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// The shell command a refusal gives to undo a file by hand (detail undo,
// and the hint) reaches the agent through JSON, which writes a name's
// bytes that are not UTF-8 as U+FFFD: pasted, "mv -f -- BACKUP 'a\ufffd.txt'"
// put the old content under another name, and the next call, its backup
// gone, took the target (the dead commit's new content) for undone,
// removed the journal and served it as committed (exit 0). Seen with
// agentfs read $'sub/a\xff.txt' on a tree left half changed, then the
// command of its detail undo run, then agentfs read again: "new a".
func TestUndoCommandSurvivesJSON(t *testing.T) {
	dir := "/srv/t/sub"
	for _, l := range []undoLeft{
		{kind: leftReplaced, dir: dir, real: dir + "/a\xff.txt", file: ".agentfs-tmp-0123456789abcdef"},
		{kind: leftRemoved, dir: dir, real: dir + "/a\xff.txt", file: ".agentfs-tmp-0123456789abcdef"},
		{kind: leftCreated, dir: dir, real: dir + "/a\xff.txt"},
		{kind: leftReplaced, dir: dir + "/\xfe", real: dir + "/\xfe/a.txt", file: ".agentfs-tmp-0123456789abcdef"},
	} {
		_, _, by := l.describe()
		data, err := json.Marshal(by)
		must(t, err)
		var back string
		must(t, json.Unmarshal(data, &back))
		if back != by {
			t.Errorf("%v of %q: its command %q reads %q once in JSON: pasted, it names another file", l.kind, l.real, by, back)
		}
	}
}

// A file a roll-back left half changed (its old content in a backup it
// could not rename back, here immutable) is refused to reads; moved away
// by mv, it was not: the move succeeded and its new name read the dead
// commit's content, never committed, as a file like any other, and the
// next recovery, the target gone, dropped the backup with the old content.
func TestTxnStuckHalfChangedNotMovedAway(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	must(t, os.MkdirAll(filepath.Join(state, "journal"), 0o700))
	root := t.TempDir()
	dir := filepath.Join(root, "sub")
	a, backup, staged := filepath.Join(dir, "a.txt"), filepath.Join(dir, ".agentfs-tmp-0123456789abcdef"), filepath.Join(dir, ".agentfs-tmp-fedcba9876543210")
	writeTree(t, root, map[string]string{"sub/a.txt": "old a\n", "sub/.agentfs-tmp-fedcba9876543210": "new a\n"})
	must(t, os.Link(a, backup))
	must(t, os.Rename(staged, a))
	var st, dst syscall.Stat_t
	must(t, syscall.Lstat(a, &st))
	must(t, syscall.Lstat(dir, &dst))
	entry := fmt.Sprintf(`[{"dir":%q,"dirIdentity":"%d:%d","name":"a.txt","staged":".agentfs-tmp-fedcba9876543210","stagedId":"%d:%d","backup":".agentfs-tmp-0123456789abcdef"}]`,
		dir, dst.Dev, dst.Ino, st.Dev, st.Ino)
	must(t, os.WriteFile(filepath.Join(state, "journal", "0123456789abcdef.pending"), []byte(entry), 0o600))
	if out, err := exec.Command("chattr", "+i", backup).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	defer exec.Command("chattr", "-i", backup).Run()
	fsys, err := New(Config{Roots: []string{root}, Cwd: root})
	must(t, err)
	defer fsys.Close()
	if err := openErr(fsys, "sub/a.txt"); err == nil {
		t.Fatalf("read sub/a.txt, left half changed: no error")
	}
	_, err = fsys.Rename(context.Background(), "sub/a.txt", "moved.txt", backend.WriteOptions{})
	if err == nil {
		data, _ := os.ReadFile(filepath.Join(root, "moved.txt"))
		t.Errorf("mv sub/a.txt moved.txt, left half changed: moved, moved.txt holds %q", data)
	} else if !strings.Contains(err.Error(), "half changed") {
		t.Logf("mv refused: %v", err)
	}
}

// halfChangedTree is a tree a dead commit left half changed, whose undo
// cannot finish (its backups immutable): sub/a.txt replaced ("new a", the
// old in a backup), sub/b.txt removed (the old in a backup), tree moved
// across file systems (its old one at a backup name, which cannot go back
// over the copy); x.txt and sub/z.txt no transaction names.
func halfChangedTree(t *testing.T) (*FS, string) {
	t.Helper()
	needRoot(t)
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	root := t.TempDir()
	dir := filepath.Join(root, "sub")
	writeTree(t, root, map[string]string{"sub/a.txt": "old a\n", "sub/b.txt": "old b\n", "sub/z.txt": "z\n", "x.txt": "x\n",
		"sub/.agentfs-tmp-fedcba9876543210": "new a\n", "tree/g.txt": "copy g\n", ".agentfs-tmp-2222222222222222/g.txt": "old g\n"})
	a, bkA, bkB := filepath.Join(dir, "a.txt"), filepath.Join(dir, ".agentfs-tmp-0123456789abcdef"), filepath.Join(dir, ".agentfs-tmp-1111111111111111")
	must(t, os.Link(a, bkA))
	must(t, os.Rename(filepath.Join(dir, ".agentfs-tmp-fedcba9876543210"), a))
	must(t, os.Link(filepath.Join(dir, "b.txt"), bkB))
	must(t, os.Remove(filepath.Join(dir, "b.txt")))
	var st, dst, rst unix.Stat_t
	must(t, unix.Lstat(a, &st))
	must(t, unix.Lstat(dir, &dst))
	must(t, unix.Lstat(root, &rst))
	deadJournal(t, state, "0123456789abcdef", []journalEntry{
		{Dir: dir, DirIdentity: identity(&dst), Name: "a.txt", Staged: ".agentfs-tmp-fedcba9876543210", StagedID: identity(&st), Backup: ".agentfs-tmp-0123456789abcdef"},
		{Dir: dir, DirIdentity: identity(&dst), Name: "b.txt", Backup: ".agentfs-tmp-1111111111111111"},
		{Dir: root, DirIdentity: identity(&rst), Name: "tree", Backup: ".agentfs-tmp-2222222222222222", Tree: true}})
	t.Cleanup(func() { exec.Command("chattr", "-R", "-i", root).Run() }) // wherever a mutation took them
	for _, p := range []string{bkA, bkB} {
		chattr(t, "+i", p)
	}
	fsys, err := New(Config{Roots: []string{root}, Cwd: root})
	must(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys, root
}

// A mutation of a file a failed undo left half changed (its source, its
// destination, or a directory holding it) is refused as its read is: rm
// of the file the transaction removed answered "not there" (deleted
// false), and the recovery later put it back; mv onto it, a write with
// create or a patch adding it took its name, and the recovery, the name
// taken, dropped the only copy of the old content; rm of the replaced one
// removed content never committed, and the recovery then the old one; a
// file written into the moved directory's copy went with the copy when
// the recovery removed it. The other files mutate as ever.
func TestTxnStuckHalfChangedNotMutated(t *testing.T) {
	fsys, root := halfChangedTree(t)
	ctx := context.Background()
	refusedAs := func(what string, err error, file string) {
		t.Helper()
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeIOError || !strings.Contains(e.Message, "half changed") || e.Details["journal"] == nil {
			t.Errorf("%s: %v, want IO_ERROR saying %s is half changed, naming the journal", what, err, file)
			return
		}
		// A directory holding several such files names one ("sub/").
		if got, _ := e.Details["file"].(string); got != filepath.Join(root, file) && !(strings.HasSuffix(file, "/") && strings.HasPrefix(got, filepath.Join(root, file))) {
			t.Errorf("%s: detail file %q, want %s's", what, got, file)
		}
	}
	for _, p := range []string{"sub/a.txt", "sub/b.txt", "tree/g.txt"} {
		err := openErr(fsys, p)
		refusedAs("read "+p, err, strings.Replace(p, "/g.txt", "", 1))
	}
	// rm looks with Lstat first: NOT_FOUND there answered deleted false.
	_, err := fsys.Lstat(ctx, "sub/b.txt")
	refusedAs("lstat sub/b.txt", err, "sub/b.txt")
	for _, c := range []struct {
		what, file string
		do         func() error
	}{
		{"mv sub/a.txt moved.txt", "sub/a.txt", func() error {
			_, err := fsys.Rename(ctx, "sub/a.txt", "moved.txt", backend.WriteOptions{})
			return err
		}},
		{"mv x.txt sub/b.txt", "sub/b.txt", func() error {
			_, err := fsys.Rename(ctx, "x.txt", "sub/b.txt", backend.WriteOptions{IfAbsent: true})
			return err
		}},
		{"mv --overwrite x.txt sub/a.txt", "sub/a.txt", func() error {
			_, err := fsys.Rename(ctx, "x.txt", "sub/a.txt", backend.WriteOptions{})
			return err
		}},
		{"mv sub sub2", "sub/", func() error {
			_, err := fsys.Rename(ctx, "sub", "sub2", backend.WriteOptions{})
			return err
		}},
		{"mv tree/g.txt g.txt", "tree", func() error {
			_, err := fsys.Rename(ctx, "tree/g.txt", "g.txt", backend.WriteOptions{})
			return err
		}},
		{"rm sub/a.txt", "sub/a.txt", func() error {
			_, err := fsys.Remove(ctx, "sub/a.txt", backend.RemoveOptions{})
			return err
		}},
		{"rm sub/b.txt", "sub/b.txt", func() error {
			_, err := fsys.Remove(ctx, "sub/b.txt", backend.RemoveOptions{})
			return err
		}},
		{"rm -r sub", "sub/", func() error {
			_, err := fsys.Remove(ctx, "sub", backend.RemoveOptions{Recursive: true})
			return err
		}},
		{"write --create sub/b.txt", "sub/b.txt", func() error {
			_, err := fsys.WriteFile(ctx, "sub/b.txt", []byte("mine\n"), backend.WriteOptions{IfAbsent: true})
			return err
		}},
		{"write sub/a.txt", "sub/a.txt", func() error {
			_, err := fsys.WriteFile(ctx, "sub/a.txt", []byte("mine\n"), backend.WriteOptions{})
			return err
		}},
		{"write tree/new.txt", "tree", func() error {
			_, err := fsys.WriteFile(ctx, "tree/new.txt", []byte("mine\n"), backend.WriteOptions{})
			return err
		}},
		{"commit adding sub/b.txt", "sub/b.txt", func() error {
			_, err := fsys.Commit(ctx, []backend.Op{{Path: "sub/b.txt", Data: []byte("mine\n"), Write: backend.WriteOptions{IfAbsent: true}}})
			return err
		}},
		{"dry run adding sub/b.txt", "sub/b.txt", func() error {
			return fsys.CheckCommit(ctx, []backend.Op{{Path: "sub/b.txt", Data: []byte("mine\n"), Write: backend.WriteOptions{IfAbsent: true}}})
		}},
	} {
		refusedAs(c.what, c.do(), c.file)
	}
	got := contents(t, root)
	for p, want := range map[string]string{"sub/a.txt": "new a\n", "sub/b.txt": "", "x.txt": "x\n", "tree/g.txt": "copy g\n", "moved.txt": "", "g.txt": "", "tree/new.txt": ""} {
		if got[p] != want {
			t.Errorf("%s holds %q after the refusals, want %q", p, got[p], want)
		}
	}
	// What no transaction left half changed mutates as ever.
	if _, err := fsys.WriteFile(ctx, "sub/new.txt", []byte("n\n"), backend.WriteOptions{}); err != nil {
		t.Errorf("write sub/new.txt beside the half-changed files: %v", err)
	}
	if _, err := fsys.Rename(ctx, "sub/z.txt", "z.txt", backend.WriteOptions{}); err != nil {
		t.Errorf("mv sub/z.txt z.txt: %v", err)
	}
	if _, err := fsys.Remove(ctx, "x.txt", backend.RemoveOptions{}); err != nil {
		t.Errorf("rm x.txt: %v", err)
	}
}

// The shell command that puts an old file or directory back by hand
// (detail undo) never moves it into what stands at its name: "mv -n --
// HIDDEN REAL" with the transaction's copy still at REAL (a directory)
// moved the old tree into the copy, as REAL/HIDDEN, and the next recovery,
// its backup gone, took the transaction for undone and removed the
// journal: the copy served as the directory, the old one hidden inside.
// The command is run as given, by sh, with the system's mv: -T (GNU's) is
// not on macOS or the BSDs, so the command must not rest on it.
func TestUndoCommandNeverMovesInto(t *testing.T) {
	for _, c := range []struct {
		kind leftKind
		link bool // a link to a directory at the name, not one
	}{{leftTree, false}, {leftRemoved, false}, {leftReplaced, false}, {leftTree, true}, {leftRemoved, true}, {leftReplaced, true}} {
		kind := c.kind
		dir := t.TempDir()
		real, hidden := filepath.Join(dir, "it's"), filepath.Join(dir, ".agentfs-tmp-0123456789abcdef")
		l := undoLeft{kind: kind, dir: dir, real: real, file: filepath.Base(hidden)}
		_, _, by := l.describe()
		// The name taken by a directory: the copy of a moved tree, or one
		// another program made where a file was.
		writeTree(t, dir, map[string]string{"it's/copy.txt": "copy\n", ".agentfs-tmp-0123456789abcdef/old.txt": "old\n"})
		if c.link {
			must(t, os.Rename(real, filepath.Join(dir, "elsewhere")))
			must(t, os.Symlink("elsewhere", real))
		}
		if kind != leftTree {
			must(t, os.RemoveAll(hidden))
			must(t, os.WriteFile(hidden, []byte("old\n"), 0o644))
		}
		exec.Command("sh", "-c", by).Run() // its status is the shell's to show
		if _, err := os.Lstat(hidden); err != nil {
			entries, _ := os.ReadDir(real)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%v (a link: %v): %q with a directory at the name moved the old one away (%v); the name holds %v", kind, c.link, by, err, names)
			continue
		}
		// The name free: the command puts the old one back.
		must(t, os.RemoveAll(real))
		if out, err := exec.Command("sh", "-c", by).CombinedOutput(); err != nil {
			t.Errorf("%v: %q with the name free: %v %s", kind, by, err, out)
		}
		if _, err := os.Lstat(hidden); err == nil {
			t.Errorf("%v: %q with the name free left the old one at %s", kind, by, hidden)
		}
		want := "old\n"
		p := real
		if kind == leftTree {
			p = filepath.Join(real, "old.txt")
		}
		if data, _ := os.ReadFile(p); string(data) != want {
			t.Errorf("%v: %q with the name free: %s holds %q, want %q", kind, by, p, data, want)
		}
	}
}

// The note of why a commit gave its journal up (.abandoned) is written
// whole and synced, under a fresh name renamed into place, and bounded
// (abandonedMax); read back, what is not such a note (cut, too long, not
// text) is ignored, and no more than the bound is read: it was written in
// place, unsynced (a crash left it empty or cut), and read back whole
// into every refusal of the journal's files.
func TestAbandonedNoteWholeSyncedBounded(t *testing.T) {
	state := t.TempDir()
	p := filepath.Join(state, "0123456789abcdef"+journalPending)
	must(t, os.WriteFile(p, []byte("[]"), 0o600))
	var events []string
	fsync, renameat := syscalls.fsync, syscalls.renameat
	defer func() { syscalls.fsync, syscalls.renameat = fsync, renameat }()
	syscalls.fsync = func(fd int) error {
		at, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		events = append(events, "fsync "+at)
		return fsync(fd)
	}
	syscalls.renameat = func(od int, o string, nd int, n string) error {
		events = append(events, "rename "+o+" "+n)
		return renameat(od, o, nd, n)
	}
	long := strings.Repeat("é", 3000) // 6000 bytes
	(&journal{fd: -1, path: p}).abandon(fault.Errorf(fault.CodeIOError, "%s\x00.", long).WithPath("a\nb.txt"))
	syscalls.fsync, syscalls.renameat = fsync, renameat
	data, err := os.ReadFile(p + journalAbandoned)
	must(t, err)
	if len(data) > abandonedMax || !utf8.Valid(data) || strings.ContainsAny(string(data), "\n\x00") || !strings.HasPrefix(string(data), "a b.txt: é") {
		t.Errorf("the note holds %d bytes (at most %d), valid UTF-8 %v, %q...: want it cut at a character, without control characters", len(data), abandonedMax, utf8.Valid(data), data[:min(len(data), 20)])
	}
	synced, renamed, dirSynced := false, false, false
	for _, e := range events {
		switch {
		case strings.HasPrefix(e, "fsync ") && strings.Contains(e, partialSuffix):
			synced = !renamed
		case strings.HasPrefix(e, "rename ") && strings.HasSuffix(e, " "+p+journalAbandoned):
			renamed = true
		case e == "fsync "+state:
			dirSynced = renamed
		}
	}
	if !synced || !renamed || !dirSynced {
		t.Errorf("writing the note: %q, want it synced under a fresh name, renamed into place, then its directory synced", events)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "*"+partialSuffix+"*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if got := origin(p); !strings.HasPrefix(got, "its commit failed, a b.txt: é") {
		t.Errorf("origin with the note: %q", got)
	}
	for _, junk := range []string{"", strings.Repeat("x", abandonedMax+1), strings.Repeat("x", 1<<20), "cut\x00\x00\x00", "not text \xff\xfe", "two\nlines"} {
		must(t, os.WriteFile(p+journalAbandoned, []byte(junk), 0o600))
		if got := origin(p); got != "its process died during its commit" {
			t.Errorf("origin with a note of %d bytes %q...: %.80q, want it ignored", len(junk), junk[:min(len(junk), 12)], got)
		}
	}
}

// The error of a commit that failed and whose undo put every file back
// but left a hidden file says so in its hint after the error's own: an
// error without a hint read "; as for ...".
func TestAbandonedErrHint(t *testing.T) {
	l := []undoLeft{{kind: leftBackup, dir: "/d", real: "/d/a.txt", file: ".agentfs-tmp-0123456789abcdef", err: unix.EPERM, why: "/d is append-only or immutable (chattr +a or +i)"}}
	for _, c := range []struct {
		err  *fault.Error
		want string
	}{
		{fault.Errorf(fault.CodeIOError, "the file could not be synced."), "as for /d/a.txt, it is as it was, and a hidden link"},
		{fault.Errorf(fault.CodeIOError, "the file could not be synced.").WithHint("check the disk"), "check the disk; as for /d/a.txt, it is as it was, and a hidden link"},
	} {
		e := fault.AsError(abandonedErr(c.err, "/s/journal/0123456789abcdef.pending", l))
		if !strings.HasPrefix(e.Hint, c.want) || !strings.HasSuffix(e.Hint, "(removing that link fails: operation not permitted, as /d is append-only or immutable (chattr +a or +i)): the journal stays for a later call to remove it") {
			t.Errorf("hint %q, want it to start %q and end with the failure and the journal kept", e.Hint, c.want)
		}
	}
}
