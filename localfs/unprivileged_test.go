package localfs_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nobodyBase is a directory for a test that runs agentfs as nobody,
// which may reach it (it and its parent are mode 755); the test is skipped
// unless it runs as root, which it needs to drop to nobody.
func nobodyBase(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run agentfs as nobody (go test as root, as CI does)")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// testBinaryIn copies this test binary into base, where any user may run
// it, and returns its path.
func testBinaryIn(t *testing.T, base string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "agentfs.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// unprivileged is a command line of agentfs (this test binary, copied
// where any user may run it) working in dir as the user nobody (65534),
// in its group and the groups given, with a state directory of its own.
// The test needs root to make it (nobodyBase).
func unprivileged(t *testing.T, base, dir string, groups ...uint32) func(args ...string) *exec.Cmd {
	t.Helper()
	const uid, gid = 65534, 65534
	bin := testBinaryIn(t, base)
	state := filepath.Join(base, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, uid, gid); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) *exec.Cmd {
		cmd := command(t, dir, "agentfs", args...)
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.Env = append(cmd.Env, "AGENTFS_STATE_DIR="+state, "HOME=/nonexistent")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: append([]uint32{gid}, groups...)}}
		return cmd
	}
}

// A file of another user in a sticky directory (mode 1777, as /tmp) that
// is neither the writer's may not be replaced or removed by it, even when
// its mode lets it write the file: every mutation is PERMISSION_DENIED
// saying so, before anything is staged, and a dry run fails as the run
// would. A transaction (replace, apply-patch) linked the file at its
// backup name, failed to rename over it, and could not unlink the backup
// either: its journal stayed, and every later call on the tree, read, ls,
// grep, failed with IO_ERROR until the other user removed the link.
func TestStickyDirectoryOfAnotherUser(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	sticky := filepath.Join(root, "tmp")
	for _, d := range []string{root, sticky} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(sticky, "f.txt")
	run := unprivileged(t, base, root)
	patch := func(body string) string {
		p := filepath.Join(root, "p.patch")
		if err := os.WriteFile(p, []byte("*** Begin Patch\n"+body+"*** End Patch\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return "p.patch"
	}
	for _, tc := range []struct {
		name string
		args func() []string
	}{
		{"write", func() []string { return []string{"write", "tmp/f.txt", "--content", "new\n"} }},
		{"edit", func() []string { return []string{"edit", "tmp/f.txt", "--old", "old", "--new", "new"} }},
		{"edit dry run", func() []string { return []string{"edit", "tmp/f.txt", "--old", "old", "--new", "new", "--dry-run"} }},
		{"replace", func() []string { return []string{"replace", "old", "new", "tmp"} }},
		{"replace dry run", func() []string { return []string{"replace", "old", "new", "tmp", "--dry-run"} }},
		{"apply-patch update", func() []string {
			return []string{"apply-patch", "--patch-file", patch("*** Update File: tmp/f.txt\n@@\n-old\n+new\n")}
		}},
		{"apply-patch delete", func() []string {
			return []string{"apply-patch", "--patch-file", patch("*** Delete File: tmp/f.txt\n")}
		}},
		{"rm", func() []string { return []string{"rm", "tmp/f.txt"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What an earlier case left (a backup link, its journal) goes.
			old, _ := os.ReadDir(sticky)
			for _, e := range old {
				os.Remove(filepath.Join(sticky, e.Name()))
			}
			os.RemoveAll(filepath.Join(base, "state", "journal"))
			if err := os.WriteFile(f, []byte("old\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, 0o666); err != nil {
				t.Fatal(err)
			}
			cmd := run(tc.args()...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "sticky") {
				t.Errorf("exit %d, %s; want 1 and PERMISSION_DENIED naming the sticky directory", code, out)
			}
			if data, err := os.ReadFile(f); err != nil || string(data) != "old\n" {
				t.Errorf("the file holds %q, %v; want it unchanged", data, err)
			}
			names, err := os.ReadDir(sticky)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != 1 {
				t.Errorf("the sticky directory holds %v; want f.txt alone", names)
			}
			if out, err := run("read", "tmp/f.txt").CombinedOutput(); err != nil {
				t.Errorf("read after it: %v\n%s", err, out)
			}
		})
	}
}

// A directory without write permission moved into another directory is
// refused by rename(2) for its own mode (its .. entry changes), which the
// error says: it blamed the two parents, both writable.
func TestMoveOfReadOnlyDirectoryNamesIt(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	for _, d := range []string{"", "a", "b"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "a", "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	out, err := unprivileged(t, base, root)("mv", "a/ro", "b/ro").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "needs write permission on itself") {
		t.Fatalf("mv of a read-only directory: %v, %s; want PERMISSION_DENIED naming the directory's own mode", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "ro")); err != nil {
		t.Errorf("the directory is gone from its place: %v", err)
	}
}

// A writable file in a directory that is not writable cannot be changed,
// as every change is a new file renamed over it: the error says so, where
// it said only "permission denied" with a hint about the file or a
// directory on its path.
func TestReadOnlyDirectorySaysWhy(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "f.txt"), 0o666); err != nil {
		t.Fatal(err)
	}
	run := unprivileged(t, base, root)
	for _, args := range [][]string{
		{"write", "f.txt", "--content", "new\n"},
		{"edit", "f.txt", "--old", "old", "--new", "new", "--dry-run"},
		{"replace", "old", "new", "."},
	} {
		out, err := run(args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "directory is not writable") {
			t.Errorf("%s: %v, %s; want PERMISSION_DENIED saying the directory is not writable", args[0], err, out)
		}
	}
}

// An empty directory the caller may not write is removed from its
// parent, as rm -r removes it: only a directory with entries to unlink
// needs write permission of its own. Root may write any directory, so
// the test runs agentfs as nobody (it skipped as root, which CI is).
func TestRemoveTreeTakesEmptyReadOnlyDirectory(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	for _, d := range []string{"", "t"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "t", "file"), []byte("x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "t", "empty"), 0o555); err != nil {
		t.Fatal(err)
	}
	out, err := unprivileged(t, base, root)("rm", "-r", "t").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"deleted":true`) {
		t.Fatalf("rm -r of a tree with an empty read-only directory: %v, %s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(root, "t")); !os.IsNotExist(err) {
		t.Fatalf("the tree is still there: %v", err)
	}
}

// A root this user may search but not list (mode 711) cannot be a root,
// as a root is opened for reading: the error says so and what to pass
// instead, where it said only "permission denied" with a hint about the
// file's permissions.
func TestRootSearchableNotReadableSaysWhy(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := unprivileged(t, base, base)("--root", root, "read", "f").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "may be searched but not listed") {
		t.Fatalf("a root of mode 711: %v, %s; want PERMISSION_DENIED saying it is searchable, not readable", err, out)
	}
}

// A move of another user's file out of, or within, a sticky directory
// (mode 1777, as /tmp) that is not this user's either, or onto such a
// file there, is refused by rename(2) for the sticky bit: the error says
// so and names the file, as rm's does, where it said that a move needs
// write permission on both directories, which it had. So is a move onto
// another name of the file, which unlinks the source alone (it said a
// bare "permission denied.").
func TestMoveInStickyDirectoryNamesTheStickyBit(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	sticky := filepath.Join(root, "tmp")
	for _, d := range []string{root, sticky} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(sticky, "f.txt")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(theirs, 0o666); err != nil {
		t.Fatal(err)
	}
	// A second name of it, onto which a move only unlinks the first.
	if err := os.Link(theirs, filepath.Join(sticky, "f2.txt")); err != nil {
		t.Fatal(err)
	}
	run := unprivileged(t, base, root)
	if out, err := run("write", "mine.txt", "--content", "mine\n").CombinedOutput(); err != nil {
		t.Fatalf("write: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		path string
	}{
		{[]string{"mv", "tmp/f.txt", "g.txt"}, "tmp/f.txt"},
		{[]string{"mv", "tmp/f.txt", "tmp/g.txt"}, "tmp/f.txt"},
		{[]string{"mv", "mine.txt", "tmp/f.txt", "--overwrite"}, "tmp/f.txt"},
		{[]string{"mv", "tmp/f.txt", "tmp/f2.txt", "--overwrite"}, "tmp/f.txt"},
	} {
		out, err := run(tc.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "in a sticky directory (mode +t") || !strings.Contains(string(out), `"path":"`+tc.path+`"`) {
			t.Errorf("%s: %v, %s; want PERMISSION_DENIED naming the sticky directory, path %s", strings.Join(tc.args, " "), err, out, tc.path)
		}
	}
	if data, err := os.ReadFile(theirs); err != nil || string(data) != "theirs\n" {
		t.Errorf("the file holds %q, %v; want it unchanged", data, err)
	}
	if st, err := os.Stat(theirs); err != nil || st.Sys().(*syscall.Stat_t).Nlink != 2 {
		t.Errorf("the file: %v; want both its names kept", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "mine.txt")); err != nil {
		t.Errorf("mine.txt: %v; want it in place", err)
	}
}

// Below a directory this user may write but not list (mode 333), which
// agentfs opens for reading to change a file in it, or list but not
// search (mode 444), where no name can be reached, a change fails
// PERMISSION_DENIED saying which permission of which directory is
// missing, where it said a bare "permission denied." with a hint about
// the file or a directory on its path.
func TestDirectoryNotSearchableOrNotListableSaysWhich(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d333", "d444", "d444/sub"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"f.txt", "g.txt"} {
			if err := os.WriteFile(filepath.Join(root, d, f), []byte("old\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(root, d, f), 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(filepath.Join(root, "d444", "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d333", "d444"} {
		mode, _ := strconv.ParseUint(d[1:], 8, 32)
		if err := os.Chmod(filepath.Join(root, d), os.FileMode(mode)); err != nil {
			t.Fatal(err)
		}
	}
	run := unprivileged(t, base, root)
	if out, err := run("write", "mine.txt", "--content", "mine\n").CombinedOutput(); err != nil {
		t.Fatalf("write: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		dir, want string
	}{
		{"d333", "the directory d333 may not be listed by this user (read, r"},
		{"d444", "the directory d444 may not be searched by this user (execute, x"},
		{"d444/sub", "the directory d444 may not be searched by this user (execute, x"},
	} {
		for _, args := range [][]string{
			{"write", tc.dir + "/f.txt", "--content", "new\n"},
			{"write", tc.dir + "/n.txt", "--content", "new\n"},
			{"edit", tc.dir + "/f.txt", "--old", "old", "--new", "new"},
			{"replace", "old", "new", tc.dir + "/f.txt"},
			{"rm", tc.dir + "/g.txt"},
			{"mv", tc.dir + "/g.txt", "h.txt"},
			{"mv", "mine.txt", tc.dir + "/m.txt"},
		} {
			out, err := run(args...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), tc.want) {
				t.Errorf("%s: %v, %s; want PERMISSION_DENIED saying %q", strings.Join(args, " "), err, out, tc.want)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "mine.txt")); err != nil {
		t.Errorf("mine.txt: %v; want it in place", err)
	}
}

// ls, find and grep of a directory this user may search but not list
// (mode 333) say so, where the walk's open for reading answered a bare
// "permission denied." with a hint about the file or a directory on its
// path; the directory asked for is not explained as one on a path.
func TestListingDirectoryNotListableSaysSo(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "d333"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d333", "f.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d, mode := range map[string]os.FileMode{"": 0o777, "d333": 0o333} {
		if err := os.Chmod(filepath.Join(root, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	run := unprivileged(t, base, root)
	const want = `"message":"permission denied: the directory d333 may not be listed by this user (read, r, permission).","path":"d333"`
	for _, args := range [][]string{{"ls", "d333"}, {"find", "--path", "d333"}, {"grep", "old", "d333"}} {
		out, err := run(args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v, %s; want PERMISSION_DENIED saying %s", strings.Join(args, " "), err, out, want)
		}
	}
	if out, err := run("read", "d333/f.txt").CombinedOutput(); err != nil {
		t.Errorf("read d333/f.txt: %v, %s; want it read (search permission is enough)", err, out)
	}
	// Mode 700 of another user: a listing stats the entries too, so read
	// permission alone would not do, and the hint said chmod +r.
	if err := os.Chmod(filepath.Join(root, "d333"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, _ := run("ls", "d333").CombinedOutput()
	for _, want := range []string{"may not be listed by this user (read, r, and execute, x, permissions).", "chmod +rx"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ls d333 of mode 700: %s; want it saying %q", out, want)
		}
	}
}

// Below a directory this user may search but not list (mode 711, as a
// home directory others may go through), a name that is not there is
// NOT_FOUND, as cat says of it, where it was PERMISSION_DENIED: os.Root
// opens each directory on the way for reading, and the walk that needs
// only search permission found the name missing, but the refusal of the
// first open was answered. A change there, whose walk opens each
// directory on the path for reading, says which one it may not list, a
// new file included (it was a bare "permission denied."), and that it is
// one on the path (it said "the directory of a file", which d711 is not).
func TestMissingBelowDirectorySearchableNotListable(t *testing.T) {
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "d711", "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"", "d711/sub"} {
		if err := os.Chmod(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "d711", "sub", "f.txt"), []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "d711", "sub", "f.txt"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "d711"), 0o711); err != nil {
		t.Fatal(err)
	}
	run := unprivileged(t, base, root)
	if out, err := run("read", "d711/sub/f.txt").CombinedOutput(); err != nil {
		t.Fatalf("read d711/sub/f.txt: %v, %s; want it read", err, out)
	}
	for _, args := range [][]string{
		{"read", "d711/sub/missing.txt"},
		{"ls", "d711/sub/missing"},
		{"read", "d711/missing/f.txt"},
	} {
		out, _ := run(args...).CombinedOutput()
		if !strings.Contains(string(out), `"NOT_FOUND"`) {
			t.Errorf("%s: %s; want NOT_FOUND", strings.Join(args, " "), out)
		}
	}
	const want = "the directory d711 may not be listed by this user (read, r, permission), which agentfs needs: it opens each directory on the path of a file it changes for reading"
	for _, args := range [][]string{
		{"write", "d711/sub/n.txt", "--content", "new\n"},
		{"write", "d711/sub/f.txt", "--content", "new\n"},
		{"edit", "d711/sub/f.txt", "--old", "old", "--new", "new"},
		{"rm", "d711/sub/f.txt"},
	} {
		out, err := run(args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v, %s; want PERMISSION_DENIED saying %q", strings.Join(args, " "), err, out, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "d711", "sub", "f.txt")); err != nil || string(b) != "old\n" {
		t.Errorf("d711/sub/f.txt: %q, %v; want it untouched", b, err)
	}
}

// writableRoot makes the directory root in base, which any user may write.
func writableRoot(t *testing.T, base string) string {
	t.Helper()
	root := filepath.Join(base, "root")
	writableDirs(t, root)
	return root
}

// writableDirs makes each of dirs, in order, a directory any user may
// write, whatever the umask.
func writableDirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
}

// putOwned writes content at at, of uid:gid (unless uid is -1) and mode
// 666 whatever the umask.
func putOwned(t *testing.T, at, content string, uid, gid int) {
	t.Helper()
	if err := os.WriteFile(at, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		if err := os.Chown(at, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(at, 0o666); err != nil {
		t.Fatal(err)
	}
}

// checkOwned fails t unless the file at at holds want, of uid:gid, mode 666.
func checkOwned(t *testing.T, at, want string, uid, gid uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(at, &st); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(at)
	if string(data) != want || st.Uid != uid || st.Gid != gid || st.Mode&0o7777 != 0o666 {
		t.Errorf("%s: %q, owner %d:%d mode %o; want %q, %d:%d 666", filepath.Base(at), data, st.Uid, st.Gid, st.Mode&0o7777, want, uid, gid)
	}
}
