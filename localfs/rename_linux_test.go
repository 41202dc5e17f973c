package localfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// otherDevice is a fresh tmpfs, another file system than dir, or skips.
func otherDevice(t *testing.T, dir string) string {
	t.Helper()
	return otherDeviceOf(t, dir, "4m")
}

// otherDeviceOf is otherDevice with a tmpfs of size.
func otherDeviceOf(t *testing.T, dir, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs; CI runs it as root (sudo go test ./localfs -run AcrossFileSystems)")
	}
	other := t.TempDir()
	if err := unix.Mount("tmpfs", other, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mounting a tmpfs is not permitted here (%v); run as root outside a restricted container", err)
	}
	t.Cleanup(func() { unix.Unmount(other, unix.MNT_DETACH) })
	var a, b unix.Stat_t
	if unix.Stat(dir, &a) != nil || unix.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Fatal("the tmpfs has the device of the temporary directory")
	}
	return other
}

// A file moved to another file system (EXDEV) is copied and removed in one
// transaction, mode kept; a directory is refused with nothing moved.
func TestRenameAcrossFileSystems(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDevice(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, "f.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "d", "x"), []byte("x"), 0o644))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	if _, err := fsys.Rename(ctx, "f.sh", filepath.Join(other, "sub", "f.sh"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(other, "sub", "f.sh"))
	fi, _ := os.Stat(filepath.Join(other, "sub", "f.sh"))
	if err != nil || string(got) != "#!/bin/sh\n" || fi.Mode().Perm() != 0o755 {
		t.Errorf("moved across: %q %v, mode %v", got, err, fi.Mode())
	}
	if _, err := os.Lstat(filepath.Join(dir, "f.sh")); !os.IsNotExist(err) {
		t.Errorf("the source is still there: %v", err)
	}
	must(t, os.Symlink("f.sh", filepath.Join(dir, "link")))
	_, err = fsys.Rename(ctx, "link", filepath.Join(other, "link"), backend.WriteOptions{IfAbsent: true})
	if code(err) != fault.CodeInvalidArgument {
		t.Errorf("a link across file systems: %v, want INVALID_ARGUMENT", err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "f.sh" {
		t.Errorf("a refused move changed the link: %q %v", target, err)
	}
}

// A file moved to another file system is streamed, not read whole into
// memory, and keeps its times.
func TestRenameFileAcrossFileSystemsStreams(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDeviceOf(t, dir, "40m")
	const size = 32 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	must(t, os.WriteFile(filepath.Join(dir, "big"), data, 0o600))
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(dir, "big"), mtime, mtime))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := fsys.Rename(context.Background(), "big", filepath.Join(other, "big"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > size/4 {
		t.Errorf("moving a %d-byte file allocated %d bytes", size, n)
	}
	got, err := os.ReadFile(filepath.Join(other, "big"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("moved across: %d bytes, %v", len(got), err)
	}
	fi, err := os.Stat(filepath.Join(other, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(mtime) || fi.Mode().Perm() != 0o600 {
		t.Errorf("moved across: mtime %v, mode %v; want %v, 0600", fi.ModTime(), fi.Mode(), mtime)
	}
}

// treeFixture makes, below dir/d, a tree with every kind of entry a move
// across file systems copies, and gives its description (treeOf).
func treeFixture(t *testing.T, dir string) map[string]string {
	t.Helper()
	d := filepath.Join(dir, "d")
	must(t, os.MkdirAll(filepath.Join(d, "sub", "deeper"), 0o750))
	must(t, os.MkdirAll(filepath.Join(d, "empty"), 0o700))
	must(t, os.WriteFile(filepath.Join(d, "a.txt"), []byte("a\r\n"), 0o640))
	must(t, os.WriteFile(filepath.Join(d, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(d, "sub", "deeper", "b"), bytes.Repeat([]byte("b"), 300<<10), 0o600))
	must(t, os.Symlink("../a.txt", filepath.Join(d, "sub", "link")))
	old := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	must(t, os.Chtimes(filepath.Join(d, "a.txt"), old, old))
	must(t, os.Chtimes(filepath.Join(d, "sub"), old, old))
	return treeOf(t, d)
}

// treeOf describes every entry below top: its type, mode, mtime and content
// or link target.
func treeOf(t *testing.T, top string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == top {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noLeftovers fails when a temporary name or a journal is left.
func noLeftovers(t *testing.T, state string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		names, _ := os.ReadDir(d)
		for _, n := range names {
			if strings.HasPrefix(n.Name(), tempPrefix) {
				t.Errorf("%s is left in %s", n.Name(), d)
			}
		}
	}
	if j, _ := os.ReadDir(filepath.Join(state, "journal")); len(j) != 0 {
		t.Errorf("journals left: %v", j)
	}
}

// across is a tree d in a root dir, to be moved to a root on another file
// system, with its state directory and backend.
type across struct {
	state, dir, other string
	fsys              *FS
	want              map[string]string // d's tree as treeFixture made it
}

func newAcross(t *testing.T) across {
	t.Helper()
	a := across{state: t.TempDir(), dir: t.TempDir()}
	t.Setenv(StateDirEnv, a.state)
	a.other = otherDevice(t, a.dir)
	a.want = treeFixture(t, a.dir)
	fsys, err := New(Config{Roots: []string{a.dir, a.other}, Cwd: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	a.fsys = fsys
	return a
}

// refused fails unless a refused move left d as want (unless nil), nothing
// at the destination to, and nothing of its own behind.
func (a across) refused(t *testing.T, want map[string]string, to string) {
	t.Helper()
	if got := treeOf(t, filepath.Join(a.dir, "d")); want != nil && !maps.Equal(got, want) {
		t.Errorf("a refused move changed the source: %v", got)
	}
	if _, err := os.Lstat(filepath.Join(a.other, to)); !os.IsNotExist(err) {
		t.Errorf("the destination exists after a refused move: %v", err)
	}
	noLeftovers(t, a.state, a.dir, a.other)
}

// A directory moved to another file system arrives whole (files with their
// bytes, modes and times, links, empty directories), and the source goes.
func TestRenameDirectoryAcrossFileSystems(t *testing.T) {
	a := newAcross(t)
	info, err := a.fsys.Rename(context.Background(), "d", filepath.Join(a.other, "new", "d"), backend.WriteOptions{IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != backend.TypeDir {
		t.Errorf("the result is a %s", info.Type)
	}
	if got := treeOf(t, filepath.Join(a.other, "new", "d")); !maps.Equal(got, a.want) {
		t.Errorf("the moved tree is\n%v\nwant\n%v", got, a.want)
	}
	if _, err := os.Lstat(filepath.Join(a.dir, "d")); !os.IsNotExist(err) {
		t.Errorf("the source is still there: %v", err)
	}
	noLeftovers(t, a.state, a.dir, filepath.Join(a.other, "new"))
}

// Files hard-linked within a tree moved to another file system stay one
// file there, as GNU mv keeps them; a link to a file outside the tree
// cannot follow it, and its copy is a file of its own.
func TestRenameDirectoryAcrossFileSystemsKeepsHardLinks(t *testing.T) {
	a := newAcross(t)
	d := filepath.Join(a.dir, "d")
	must(t, os.MkdirAll(filepath.Join(d, "h1", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(d, "h1", "x"), []byte("shared"), 0o640))
	must(t, os.Link(filepath.Join(d, "h1", "x"), filepath.Join(d, "h1", "deep", "y")))
	must(t, os.Link(filepath.Join(d, "h1", "x"), filepath.Join(d, "z")))
	must(t, os.WriteFile(filepath.Join(a.dir, "outside"), []byte("out"), 0o644))
	must(t, os.Link(filepath.Join(a.dir, "outside"), filepath.Join(d, "o")))
	if _, err := a.fsys.Rename(context.Background(), "d", filepath.Join(a.other, "d"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	stat := func(rel string) unix.Stat_t {
		var st unix.Stat_t
		must(t, unix.Lstat(filepath.Join(a.other, "d", rel), &st))
		return st
	}
	x, y, z, o := stat("h1/x"), stat("h1/deep/y"), stat("z"), stat("o")
	if x.Ino != y.Ino || x.Ino != z.Ino || x.Nlink != 3 {
		t.Errorf("x, y, z: inodes %d %d %d, %d links; want one inode, 3 links", x.Ino, y.Ino, z.Ino, x.Nlink)
	}
	if x.Mode&0o777 != 0o640 {
		t.Errorf("the linked file's mode is %o, want 640", x.Mode&0o777)
	}
	if o.Nlink != 1 {
		t.Errorf("the copy of a file linked outside the tree has %d links, want 1", o.Nlink)
	}
	if b, err := os.ReadFile(filepath.Join(a.other, "d", "h1", "deep", "y")); err != nil || string(b) != "shared" {
		t.Errorf("y holds %q, %v", b, err)
	}
	noLeftovers(t, a.state, a.dir, a.other)
}

// A directory move across file systems replaces only an empty directory,
// and only when overwriting, as rename(2) does; a refused one changes
// nothing on either side.
func TestRenameDirectoryAcrossFileSystemsOverwrite(t *testing.T) {
	a := newAcross(t)
	must(t, os.MkdirAll(filepath.Join(a.other, "full", "x"), 0o755))
	must(t, os.MkdirAll(filepath.Join(a.other, "empty"), 0o755))
	must(t, os.WriteFile(filepath.Join(a.other, "file"), []byte("f"), 0o644))
	ctx := context.Background()
	for _, tc := range []struct {
		to   string
		opts backend.WriteOptions
		want fault.Code
	}{
		{"full", backend.WriteOptions{}, fault.CodeExists},
		{"empty", backend.WriteOptions{IfAbsent: true}, fault.CodeExists},
		{"file", backend.WriteOptions{}, fault.CodeNotADirectory},
	} {
		_, err := a.fsys.Rename(ctx, "d", filepath.Join(a.other, tc.to), tc.opts)
		if code(err) != tc.want {
			t.Errorf("onto %s (%+v): %v, want %s", tc.to, tc.opts, err, tc.want)
		}
	}
	a.refused(t, a.want, "d")
	if _, err := os.Stat(filepath.Join(a.other, "full", "x")); err != nil {
		t.Errorf("a refused move changed the destination: %v", err)
	}
	if _, err := a.fsys.Rename(ctx, "d", filepath.Join(a.other, "empty"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, filepath.Join(a.other, "empty")); !maps.Equal(got, a.want) {
		t.Errorf("the tree moved over an empty directory is %v", got)
	}
	noLeftovers(t, a.state, a.dir, a.other)
}

// Where no rename refuses to replace (FreeBSD; a file system without
// RENAME_NOREPLACE), a directory still moves across file systems, and one
// changed during its copy is still put back whole: its backup renamed
// back once its name is seen free (no hard link of a directory).
func TestRenameDirectoryAcrossFileSystemsWithoutExclusiveRename(t *testing.T) {
	a := newAcross(t)
	renameExclusive, renameat := syscalls.renameExclusive, syscalls.renameat
	t.Cleanup(func() { syscalls.renameExclusive, syscalls.renameat = renameExclusive, renameat })
	syscalls.renameExclusive = func(int, string, int, string) error { return unix.ENOSYS }
	ctx := context.Background()
	late := false
	syscalls.renameat = func(od int, o string, nd int, n string) error {
		if o == "d" && late { // the source to its backup name: the copy is done
			must(t, os.WriteFile(filepath.Join(a.dir, "d", "late.txt"), []byte("late"), 0o644))
		}
		return renameat(od, o, nd, n)
	}
	late = true
	if _, err := a.fsys.Rename(ctx, "d", filepath.Join(a.other, "d"), backend.WriteOptions{IfAbsent: true}); code(err) != fault.CodeStale {
		t.Fatalf("a tree changed during its copy: %v, want STALE", err)
	}
	must(t, os.Remove(filepath.Join(a.dir, "d", "late.txt")))
	a.refused(t, a.want, "d")
	late = false
	if _, err := a.fsys.Rename(ctx, "d", filepath.Join(a.other, "d"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, filepath.Join(a.other, "d")); !maps.Equal(got, a.want) {
		t.Errorf("the moved tree is\n%v\nwant\n%v", got, a.want)
	}
	noLeftovers(t, a.state, a.dir, a.other)
}

// A tree changed during its copy (an entry added after it was read) is not
// moved: the move stops with STALE, and both sides are as they were, the
// new entry included.
func TestRenameDirectoryAcrossFileSystemsChangedDuringCopy(t *testing.T) {
	a := newAcross(t)
	renameat := syscalls.renameat
	t.Cleanup(func() { syscalls.renameat = renameat })
	wrote := 0
	syscalls.renameat = func(od int, o string, nd int, n string) error {
		if o == "d" { // the source to its backup name: the copy is done
			wrote++
			must(t, os.WriteFile(filepath.Join(a.dir, "d", "sub", "late.txt"), []byte("late"), 0o644))
		}
		return renameat(od, o, nd, n)
	}
	_, err := a.fsys.Rename(context.Background(), "d", filepath.Join(a.other, "d"), backend.WriteOptions{IfAbsent: true})
	if code(err) != fault.CodeStale || wrote != 1 {
		t.Fatalf("a tree changed during its copy: %v (changed %d times), want STALE", err, wrote)
	}
	if data, err := os.ReadFile(filepath.Join(a.dir, "d", "sub", "late.txt")); err != nil || string(data) != "late" {
		t.Errorf("the entry added during the copy: %q %v", data, err)
	}
	a.refused(t, nil, "d") // d changed: late.txt, checked above
}

// A tree holding a FIFO is refused when the copy reaches it, and what was
// copied is removed; the FIFO is never opened (the move would hang on it).
func TestRenameDirectoryAcrossFileSystemsSpecialFile(t *testing.T) {
	a := newAcross(t)
	must(t, unix.Mkfifo(filepath.Join(a.dir, "d", "sub", "fifo"), 0o644))
	want := treeOf(t, filepath.Join(a.dir, "d"))
	_, err := a.fsys.Rename(context.Background(), "d", filepath.Join(a.other, "d"), backend.WriteOptions{IfAbsent: true})
	if code(err) != fault.CodeNotAFile {
		t.Fatalf("a tree with a FIFO: %v, want NOT_A_FILE", err)
	}
	a.refused(t, want, "d")
}

// otherDirEnv names, for TestTreeMoveCommitter, the directory on another
// file system to move its tree into.
const otherDirEnv = "AGENTFS_TEST_OTHER_DIR"

// TestTreeMoveCommitter is the child of TestTreeMoveSurvivesKills: it moves
// the directory d of its working directory to the other file system,
// killing itself just before its N-th durable call.
func TestTreeMoveCommitter(t *testing.T) {
	at, err := strconv.Atoi(os.Getenv(killAtEnv))
	other := os.Getenv(otherDirEnv)
	if err != nil || other == "" {
		t.Skip("only a re-executed helper process runs this")
	}
	calls := 0
	kill := func() {
		if calls++; calls == at {
			unix.Kill(os.Getpid(), unix.SIGKILL)
		}
	}
	fsync, renameat, exclusive, mkdirat := syscalls.fsync, syscalls.renameat, syscalls.renameExclusive, syscalls.mkdirat
	syscalls.fsync = func(fd int) error { kill(); return fsync(fd) }
	syscalls.renameat = func(od int, o string, nd int, n string) error { kill(); return renameat(od, o, nd, n) }
	syscalls.renameExclusive = func(od int, o string, nd int, n string) error { kill(); return exclusive(od, o, nd, n) }
	// Killed just after the staging directory is made, before the
	// journal names it: it was left at the destination for ever.
	syscalls.mkdirat = func(d int, n string, m uint32) error { err := mkdirat(d, n, m); kill(); return err }
	dir, _ := os.Getwd()
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Rename(context.Background(), "d", filepath.Join(other, "d"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
}

// A directory move across file systems killed at any durable step is, once
// the next agentfs starts, either wholly undone (the tree at its source,
// nothing at the destination) or wholly done, with no copy, backup or
// journal left.
func TestTreeMoveSurvivesKills(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	base := t.TempDir()
	otherFS := otherDevice(t, base)
	outcomes := map[string]int{}
	for at := 1; ; at++ {
		dir := filepath.Join(base, strconv.Itoa(at))
		other := filepath.Join(otherFS, strconv.Itoa(at))
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.MkdirAll(other, 0o755))
		want := treeFixture(t, dir)
		killed := runKilledAt(t, "TestTreeMoveCommitter", dir, at, otherDirEnv+"="+other)
		fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir}) // recovers
		if err != nil {
			t.Fatal(err)
		}
		fsys.Close()
		_, srcErr := os.Lstat(filepath.Join(dir, "d"))
		_, dstErr := os.Lstat(filepath.Join(other, "d"))
		switch {
		case srcErr == nil && os.IsNotExist(dstErr) && maps.Equal(treeOf(t, filepath.Join(dir, "d")), want):
			outcomes["undone"]++
		case dstErr == nil && os.IsNotExist(srcErr) && maps.Equal(treeOf(t, filepath.Join(other, "d")), want):
			outcomes["done"]++
		default:
			t.Fatalf("kill at %d (killed %v): source %v, destination %v; neither before nor after", at, killed, srcErr, dstErr)
		}
		noLeftovers(t, state, dir, other)
		if !killed {
			if outcomes["done"] == 0 || srcErr == nil {
				t.Fatalf("a move that was not killed left the source")
			}
			break
		}
		outcomes["killed"]++
	}
	t.Logf("outcomes over every kill point: %v", outcomes)
	if outcomes["undone"] < 5 || outcomes["done"] < 2 {
		t.Errorf("the kills did not land on both sides of the commit point, and during the copy: %v", outcomes)
	}
}

// TestRenameAcrossFileSystemsInterrupted: a move to another file system
// whose caller gave up (SIGINT, an MCP cancellation) while the copy was
// made stops there, INTERRUPTED, and nothing is moved or left behind. The
// copy went on to the end under the context past the point of no return,
// which is never cancelled, and the move of 1 GB was made and reported
// done seconds after the signal.
func TestRenameAcrossFileSystemsInterrupted(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDevice(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("file"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "d", "e", "x"), []byte("x"), 0o644))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	prep, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := backend.WithPreparation(context.WithoutCancel(prep), prep)
	for _, name := range []string{"f", "d"} {
		_, err := fsys.Rename(ctx, name, filepath.Join(other, name), backend.WriteOptions{IfAbsent: true})
		if code(err) != fault.CodeInterrupted {
			t.Errorf("the move of %s, its caller gone: %v, want INTERRUPTED", name, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != "file" {
		t.Errorf("the file: %q, %v", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "d", "e", "x")); err != nil || string(got) != "x" {
		t.Errorf("the directory's file: %q, %v", got, err)
	}
	if names, err := os.ReadDir(other); err != nil || len(names) != 0 {
		t.Errorf("left on the other file system: %v, %v", names, err)
	}
	if names, err := os.ReadDir(dir); err != nil || len(names) != 2 {
		t.Errorf("left beside the sources: %v, %v", names, err)
	}
}

// canceledAfter is a context that is done once its Err was asked checks
// times: a caller giving up at a known point of a copy.
type canceledAfter struct {
	context.Context
	checks int
}

func (c *canceledAfter) Err() error {
	if c.checks <= 0 {
		return context.Canceled
	}
	c.checks--
	return nil
}

// TestTreeCopyStopsInsideAFile: a directory's copy to another file system
// stops with its caller inside a file, a piece (copyPiece) at most past
// the moment it gave up: a directory holding one file of 768 MiB was
// copied and synced to the end, 3.4 s, before the move said INTERRUPTED.
func TestTreeCopyStopsInsideAFile(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "dst"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "src", "big"), bytes.Repeat([]byte("x"), 2*copyPiece+1), 0o644))
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	sfd, err := unix.Open(filepath.Join(dir, "src"), dirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sfd)
	dfd, err := unix.Open(filepath.Join(dir, "dst"), dirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	must(t, unix.Fstatat(sfd, "big", &st, unix.AT_SYMLINK_NOFOLLOW))
	c := &treeCopier{f: fsys, ctx: &canceledAfter{Context: context.Background(), checks: 1}, versions: map[string]string{}, linked: map[string]string{}}
	err = c.file(sfd, dfd, "big", &st, "big")
	fi, _ := os.Stat(filepath.Join(dir, "dst", "big"))
	if code(err) != fault.CodeInterrupted || fi == nil || fi.Size() != copyPiece {
		t.Errorf("a file's copy whose caller gave up after its first piece: %v, %v; want INTERRUPTED after %d bytes", err, fi, copyPiece)
	}
}

// A full state directory is NO_SPACE, as a full workspace is, with the
// file unchanged: it was IO_ERROR telling to check the directory was
// writable, which it was.
func TestFullStateDirIsNoSpace(t *testing.T) {
	dir := t.TempDir()
	state := otherDeviceOf(t, dir, "64k")
	must(t, os.Chmod(state, 0o700))
	t.Setenv(StateDirEnv, state)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644))
	filler, err := os.Create(filepath.Join(state, "filler"))
	must(t, err)
	for {
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	filler.Close()
	_, err = fsys.WriteFile(ctx, "f.txt", []byte("bye\n"), backend.WriteOptions{})
	if code(err) != fault.CodeNoSpace {
		t.Fatalf("a write with the state directory full: %v, want NO_SPACE", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "hello\n" {
		t.Fatalf("the file is %q after the refused write", b)
	}
}

// An entry of a tree removed by another program after the copy listed it
// (an editor's temporary file renamed over its file, a file deleted) is a
// change of the tree, STALE with nothing moved, as the comparison finds
// one: it was NOT_FOUND naming the vanished entry, such as another
// writer's temporary file, which the caller never named (hunt39: 4 of 30
// moves across a bind mount beside an edit under another state
// directory).
func TestRenameDirectoryAcrossFileSystemsEntryGoneDuringCopy(t *testing.T) {
	a := newAcross(t)
	e := filepath.Join(a.dir, "e")
	must(t, os.MkdirAll(filepath.Join(e, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(e, "f"), []byte("f"), 0o644))
	must(t, os.WriteFile(filepath.Join(e, "sub", "g"), []byte("g"), 0o644))
	fsync := syscalls.fsync
	t.Cleanup(func() { syscalls.fsync = fsync })
	removed := ""
	syscalls.fsync = func(fd int) error {
		var st unix.Stat_t
		p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if removed == "" && unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && strings.HasPrefix(p, a.other+"/") {
			// The first file copied: the entry listed after it goes.
			removed = "sub"
			if filepath.Base(p) == "g" {
				removed = "f"
			}
			must(t, os.RemoveAll(filepath.Join(e, removed)))
		}
		return fsync(fd)
	}
	_, err := a.fsys.Rename(context.Background(), "e", filepath.Join(a.other, "e"), backend.WriteOptions{IfAbsent: true})
	if removed == "" {
		t.Fatal("no file of the tree was copied")
	}
	if code(err) != fault.CodeStale {
		t.Fatalf("a tree whose %s went during its copy: %v, want STALE", removed, err)
	}
	if _, err := os.Lstat(filepath.Join(a.other, "e")); !os.IsNotExist(err) {
		t.Errorf("the destination exists after a refused move: %v", err)
	}
	if _, err := os.Lstat(e); err != nil {
		t.Errorf("the source is gone after a refused move: %v", err)
	}
	noLeftovers(t, a.state, a.dir, a.other)
}

// A file saved by a program that takes no agentfs lock (an editor writing
// a new file over it, echo >>) after its copy to another file system was
// checked, while the move's journal is written, is STALE with nothing
// moved and the saved content where it was saved: the commit removed the
// saved file and put the copy of the old content at the destination, exit
// 0, as the edit of a write's commit is guarded (swapHolds).
func TestRenameFileAcrossFileSystemsSavedBeforeCommit(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := t.TempDir()
	other := otherDevice(t, dir)
	for _, how := range []string{"replaced", "appended"} {
		t.Run(how, func(t *testing.T) {
			src := filepath.Join(dir, how)
			must(t, os.WriteFile(src, []byte("old\n"), 0o644))
			fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			fsync := syscalls.fsync
			defer func() { syscalls.fsync = fsync }()
			saved := false
			syscalls.fsync = func(fd int) error {
				p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
				if !saved && strings.HasPrefix(p, state+"/") { // the journal: the copy is checked
					saved = true
					if how == "replaced" {
						must(t, os.WriteFile(src+".swp", []byte("saved\n"), 0o644))
						must(t, os.Rename(src+".swp", src))
					} else {
						f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
						must(t, err)
						_, err = f.WriteString("saved\n")
						must(t, err)
						must(t, f.Close())
					}
				}
				return fsync(fd)
			}
			_, err = fsys.Rename(context.Background(), how, filepath.Join(other, how), backend.WriteOptions{IfAbsent: true})
			if !saved {
				t.Fatal("no journal was synced")
			}
			if code(err) != fault.CodeStale {
				t.Errorf("a file saved before the move's commit: %v, want STALE", err)
			}
			if b, err := os.ReadFile(src); err != nil || !strings.Contains(string(b), "saved") {
				t.Errorf("the saved file holds %q, %v", b, err)
			}
			if _, err := os.Lstat(filepath.Join(other, how)); !os.IsNotExist(err) {
				t.Errorf("the destination exists after a refused move: %v", err)
			}
			noLeftovers(t, state, dir, other)
		})
	}
}

// A sparse file moved to another file system keeps its holes, as GNU mv
// keeps them: written whole, a 64 MiB file of 3 bytes (a disk image with
// little in it) was NO_SPACE on a 4 MiB tmpfs where mv put it, and a
// large image filled the disk. A directory's files alike.
func TestRenameAcrossFileSystemsKeepsHoles(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	dir := t.TempDir()
	other := otherDevice(t, dir)
	const size = 64 << 20
	sparse := func(p string) {
		t.Helper()
		f, err := os.Create(p)
		must(t, err)
		for _, at := range []int64{0, size / 2, size - 1} { // data at both ends and between
			_, err := f.WriteAt([]byte("x"), at)
			must(t, err)
		}
		must(t, f.Close())
	}
	sparse(filepath.Join(dir, "img"))
	must(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	sparse(filepath.Join(dir, "d", "img"))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	for _, name := range []string{"img", "d"} {
		if _, err := fsys.Rename(context.Background(), name, filepath.Join(other, name), backend.WriteOptions{IfAbsent: true}); err != nil {
			t.Fatalf("the move of %s: %v", name, err)
		}
	}
	for _, p := range []string{"img", "d/img"} {
		got, err := os.ReadFile(filepath.Join(other, p))
		must(t, err)
		if len(got) != size || got[0] != 'x' || got[size/2] != 'x' || got[size-1] != 'x' || bytes.Count(got, []byte{0}) != size-3 {
			t.Errorf("%s moved: %d bytes, not the file's 64 MiB of zeros and three x", p, len(got))
		}
	}
	noLeftovers(t, state, dir, other)
}

// A file system that cannot tell its holes (lseek's SEEK_DATA fails with
// EINVAL, ENOTSUP or ENOTTY, as some network and FUSE ones do on the
// BSDs) has its file copied whole, from where the copy is to the size
// stat'ed: the move goes on, where it failed with that error.
func TestNextDataWithoutHoles(t *testing.T) {
	for _, errno := range []error{unix.EINVAL, unix.ENOTSUP, unix.ENOTTY} {
		seek := func(int64, int) (int64, error) { return 0, errno }
		data, hole, ok, err := nextData(seek, 0, 100)
		if err != nil || !ok || data != 0 || hole != 100 {
			t.Errorf("%v at 0: %d %d %v %v, want the whole file as data", errno, data, hole, ok, err)
		}
		if _, _, ok, err := nextData(seek, 100, 100); ok || err != nil {
			t.Errorf("%v at the end: %v %v, want no more data", errno, ok, err)
		}
	}
	if _, _, ok, err := nextData(func(int64, int) (int64, error) { return 0, unix.ENXIO }, 0, 100); ok || err != nil {
		t.Errorf("ENXIO: %v %v, want no more data", ok, err)
	}
	if _, _, _, err := nextData(func(int64, int) (int64, error) { return 0, unix.EIO }, 0, 100); !errors.Is(err, unix.EIO) {
		t.Errorf("EIO: %v, want it returned", err)
	}
	at := map[int]int64{unix.SEEK_DATA: 4096, unix.SEEK_HOLE: 8192}
	if data, hole, ok, err := nextData(func(_ int64, whence int) (int64, error) { return at[whence], nil }, 0, 1<<20); data != 4096 || hole != 8192 || !ok || err != nil {
		t.Errorf("an extent: %d %d %v %v, want 4096 8192", data, hole, ok, err)
	}
}

// A file truncated between nextData's two seeks (SEEK_DATA found data,
// then SEEK_HOLE at it is ENXIO: past the end now) has no more data: the
// copy ends, and the caller's version check answers STALE. The ENXIO was
// returned, and the move failed NOT_REGULAR naming its destination.
func TestNextDataFileShrunkBetweenSeeks(t *testing.T) {
	seek := func(_ int64, whence int) (int64, error) {
		if whence == unix.SEEK_DATA {
			return 4096, nil
		}
		return 0, unix.ENXIO
	}
	if _, _, ok, err := nextData(seek, 0, 1<<20); ok || err != nil {
		t.Errorf("SEEK_HOLE ENXIO: %v %v, want no more data", ok, err)
	}
}
