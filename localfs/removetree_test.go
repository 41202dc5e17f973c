package localfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// join builds rm -r's display paths: either side may be empty.
func TestJoin(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""},
		{"", "b", "b"},
		{"a", "", "a"},
		{"a", "b/c", "a/b/c"},
	} {
		if got := join(tc.a, tc.b); got != tc.want {
			t.Errorf("join(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// A file written into a directory a recursive removal has emptied (by a
// writer that takes no lock of the tree) stops it NOT_EMPTY, saying so:
// the hint said to pass --recursive, which was passed.
func TestRemoveTreeWrittenIntoMeanwhile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "t", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t", "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	emptiedHook = func(display string) {
		if display == "t/d" {
			os.WriteFile(filepath.Join(dir, "t", "d", "new"), nil, 0o644)
		}
	}
	defer func() { emptiedHook = nil }()
	_, err = fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeNotEmpty || strings.Contains(e.Hint, "recursive") || !strings.Contains(e.Message, "appeared") {
		t.Fatalf("a tree written into as it was removed: %v, want NOT_EMPTY saying entries appeared", err)
	}
}

// A tree holding a directory whose entries this process may not unlink
// is refused by the check, before anything is removed: the removal
// would have stopped there with part of the tree gone.
func TestRemoveTreeRefusesUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may unlink in a read-only directory; CI runs this test as an unprivileged user")
	}
	dir := t.TempDir()
	for _, p := range []string{"t/a/f1", "t/a/f2", "t/locked/f"} {
		mustWrite(t, filepath.Join(dir, p))
	}
	locked := filepath.Join(dir, "t", "locked")
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	removeRefused(t, dir, "t/locked")
	for _, p := range []string{"t/a/f1", "t/a/f2", "t/locked/f"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
}

// removeRefused runs rm -r of dir's t and wants PERMISSION_DENIED at the
// directory at, saying that nothing was removed.
func removeRefused(t *testing.T, dir, at string) {
	t.Helper()
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || e.Path != at || !strings.Contains(e.Hint, "nothing was removed") {
		t.Fatalf("rm -r of t: %v, want PERMISSION_DENIED at %s, saying nothing was removed", err, at)
	}
}

// A tree holding a directory this process may not open (mode 000) is
// refused by the check, saying that nothing was removed: its hint told
// the caller to choose another path.
func TestRemoveTreeRefusesUnopenableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may open any directory; CI runs this test as an unprivileged user")
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "t", "a", "f1"))
	closed := filepath.Join(dir, "t", "closed")
	if err := os.Mkdir(closed, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(closed, 0o755)
	removeRefused(t, dir, "t/closed")
	if _, err := os.Lstat(filepath.Join(dir, "t", "a", "f1")); err != nil {
		t.Errorf("t/a/f1: %v, want it kept", err)
	}
}

// A removal that fails after its first unlink (a directory made
// read-only behind the check) says how much it removed, and does not
// tell the caller to choose another path.
func TestRemoveTreeOwnsUpToPartialRemoval(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may unlink in a read-only directory; CI runs this test as an unprivileged user")
	}
	dir := t.TempDir()
	defer os.Chmod(filepath.Join(dir, "t", "a"), 0o755)
	defer os.Chmod(filepath.Join(dir, "t", "b"), 0o755)
	removePartly(t, dir, func(other string) { os.Chmod(other, 0o555) })
}

// removePartly removes the tree t of dir, holding t/a and t/b of two
// files each: whichever of a and b is emptied first, block(the other) is
// then called, so that the other's two files stay while three entries
// (the first's files and itself) are removed, and checks that the error
// says so.
func removePartly(t *testing.T, dir string, block func(other string)) {
	t.Helper()
	for _, p := range []string{"t/a/f1", "t/a/f2", "t/b/f1", "t/b/f2"} {
		mustWrite(t, filepath.Join(dir, p))
	}
	other := map[string]string{"t/a": "b", "t/b": "a"}
	blocked := false
	emptiedHook = func(display string) {
		if o, ok := other[display]; ok && !blocked {
			blocked = true
			block(filepath.Join(dir, "t", o))
		}
	}
	defer func() { emptiedHook = nil }()
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
	checkPartial(t, err, fault.CodePermissionDenied, 3)
}

// checkPartial asserts err is a removal's failure with code after removed
// entries were unlinked, saying so.
func checkPartial(t *testing.T, err error, code fault.Code, removed int) {
	t.Helper()
	e := fault.AsError(err)
	if e == nil || e.Code != code || e.Details["removed"] != removed ||
		!strings.Contains(e.Message, "stopped there") || !strings.Contains(e.Hint, "stays removed") {
		t.Fatalf("a removal failing part-way: %#v, want %s with details.removed %d and a hint saying what was removed stays removed", e, code, removed)
	}
}

func mustWrite(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unlink(2) refuses an entry of a sticky directory to a user who owns
// neither, and an immutable or append-only entry to anyone; the check
// refuses what it would.
func TestUnlinkable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		euid     uint32
		level    treeLevel
		uid      uint32
		pinned   bool
		refusing bool
	}{
		{"plain directory", 1000, treeLevel{uid: 0}, 0, false, false},
		{"sticky, another's entry in another's directory", 1000, treeLevel{sticky: true, uid: 0}, 2000, false, true},
		{"sticky, own entry", 1000, treeLevel{sticky: true, uid: 0}, 1000, false, false},
		{"sticky, own directory", 1000, treeLevel{sticky: true, uid: 1000}, 2000, false, false},
		{"sticky, root", 0, treeLevel{sticky: true, uid: 1000}, 2000, false, false},
		{"immutable or append-only", 0, treeLevel{}, 0, true, true},
	} {
		r := &treeRemover{euid: tc.euid}
		e := &treeEntry{pinned: tc.pinned}
		e.st.Uid = tc.uid
		err := r.unlinkable(&tc.level, e, func() string { return "t/x" })
		if (err != nil) != tc.refusing {
			t.Errorf("%s: %v, want refused %v", tc.name, err, tc.refusing)
		}
		if err != nil && fault.AsError(err).Code != fault.CodePermissionDenied {
			t.Errorf("%s: %v, want PERMISSION_DENIED", tc.name, err)
		}
	}
}

// A tree a move across file systems copies, then would remove, is
// refused in the move's words.
func TestUnremovableWordedForTheCaller(t *testing.T) {
	for _, tc := range []struct {
		copying bool
		errno   unix.Errno
		hint    string
	}{
		{false, unix.EACCES, "nothing was removed"}, {true, unix.EACCES, "nothing was moved"},
		// A read-only file system, a bind mounted ro or an image's: no
		// permission to change helps.
		{false, unix.EROFS, "nothing was removed; the file system is read-only"},
		{true, unix.EROFS, "nothing was moved; the file system is read-only"},
	} {
		r := &treeRemover{copying: tc.copying}
		e := fault.AsError(r.unremovable(tc.errno, "t/d", "a directory whose entries could not be removed"))
		if !strings.Contains(e.Hint, tc.hint) || strings.Contains(e.Message, "rm -r") {
			t.Errorf("copying %v, %v: %s (%s), want a hint saying %s", tc.copying, tc.errno, e.Message, e.Hint, tc.hint)
		}
		if tc.errno == unix.EROFS && (e.Code != fault.CodeReadOnly || strings.Contains(e.Hint, "permissions")) {
			t.Errorf("copying %v: %s (%s), want READ_ONLY with no word of permissions", tc.copying, e.Code, e.Hint)
		}
	}
}

// A directory of the tree removed by another process (an rm -rf of the
// same tree) after the look at it, before or after its opening, is gone,
// as a file gone meanwhile is: the removal goes on and succeeds, where it
// stopped NOT_FOUND ("deal with the cause, then run rm -r again", part of
// the tree removed) with nothing left to deal with (hunt39: 8 of 30 rm -r
// beside an rm -rf of the same tree).
func TestRemoveTreeDirectoryGoneMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		pass   string
		opened bool
	}{{"check", false}, {"check", true}, {"removal", false}, {"removal", true}} {
		t.Run(fmt.Sprintf("%s/opened=%v", tc.pass, tc.opened), func(t *testing.T) {
			pass := tc.pass
			dir := t.TempDir()
			for _, p := range []string{"t/a/f", "t/b/f", "t/b/c/g"} {
				mustWrite(t, filepath.Join(dir, p))
			}
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			calls := 0
			enteringHook = func(display string, opened bool) {
				if display != "t/b" || opened != tc.opened {
					return
				}
				calls++
				if pass == "check" && calls == 1 || pass == "removal" && calls == 2 {
					must(t, os.RemoveAll(filepath.Join(dir, "t", "b")))
				}
			}
			defer func() { enteringHook = nil }()
			deleted, err := fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
			if err != nil || !deleted {
				t.Fatalf("a tree whose directory another process removed during the %s: %v, %v; want deleted", pass, deleted, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "t")); !os.IsNotExist(err) {
				t.Errorf("the tree is still there: %v", err)
			}
		})
	}
}

// A caller that gives up while rm -r checks the tree (its preparation's
// context done) is answered INTERRUPTED with the tree whole: the check
// removes nothing, and the removal went on to its end (a SIGINT 80 ms into
// rm -r of 100,000 files answered deleted, exit 0, a second later).
func TestRemoveTreeCheckStopsWhenGivenUp(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		if err := os.MkdirAll(filepath.Join(dir, "t", d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t", d, "f"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	prep, cancel := context.WithCancel(context.Background())
	defer cancel()
	entered := 0
	enteringHook = func(display string, opened bool) {
		if entered++; display == "t/b" && opened {
			cancel()
		}
	}
	defer func() { enteringHook = nil }()
	_, err = fsys.Remove(backend.WithPreparation(context.Background(), prep), "t", backend.RemoveOptions{Recursive: true})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInterrupted {
		t.Fatalf("rm -r given up during its check: %v, want INTERRUPTED", err)
	}
	for _, d := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(dir, "t", d, "f")); err != nil {
			t.Errorf("t/%s/f after an interrupted check: %v", d, err)
		}
	}
	if entered > 4 {
		t.Errorf("the check entered %d directories after it was given up", entered-4)
	}
}
