package localfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

func newTestFS(t testing.TB) (*FS, string) {
	t.Helper()
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys, dir
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recordSyscalls wraps the durability seam for the rest of the test: each
// call is recorded by name ("write", "fsync(file)", "rename",
// "fsync(dir)"), and one named in fail fails with its error instead of
// running.
func recordSyscalls(t *testing.T, fail map[string]error) *[]string {
	saved := syscalls
	t.Cleanup(func() { syscalls = saved })
	var calls []string
	call := func(name string, do func() error) error {
		calls = append(calls, name)
		if err := fail[name]; err != nil {
			return err
		}
		return do()
	}
	syscalls.write = func(f *os.File, b []byte) (n int, err error) {
		err = call("write", func() error { n, err = saved.write(f, b); return err })
		return n, err
	}
	syscalls.writeAt = func(f *os.File, b []byte, off int64) (n int, err error) {
		err = call("write", func() error { n, err = saved.writeAt(f, b, off); return err })
		return n, err
	}
	syscalls.fsync = func(fd int) error {
		var st unix.Stat_t
		name := "fsync(file)"
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			name = "fsync(dir)"
		}
		return call(name, func() error { return saved.fsync(fd) })
	}
	syscalls.renameat = func(od int, op string, nd int, np string) error {
		return call("rename", func() error { return saved.renameat(od, op, nd, np) })
	}
	syscalls.renameExclusive = func(od int, from string, nd int, to string) error {
		return call("rename", func() error { return saved.renameExclusive(od, from, nd, to) })
	}
	return &calls
}

// Every change is made durable in order: the bytes written, the file
// synced, then renamed over the path, then its directory synced; an
// in-place rewrite is written and synced; a removal syncs its directory.
// A step dropped or made a no-op is missing from the record (issue 16.1).
func TestDurabilityOrder(t *testing.T) {
	fsys, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("a\n"), 0o644))
	must(t, os.Link(filepath.Join(dir, "shared.txt"), filepath.Join(dir, "other.txt")))
	ctx := context.Background()
	tools := &core.Tools{FS: fsys}
	replace := []string{"write", "fsync(file)", "rename", "fsync(dir)"}
	for _, tc := range []struct {
		name string
		do   func() error
		want []string
	}{
		{"write a new file", func() error {
			_, err := fsys.WriteFile(ctx, "new.txt", []byte("x"), backend.WriteOptions{})
			return err
		}, replace},
		{"create (no replace)", func() error {
			_, err := fsys.WriteFile(ctx, "created.txt", []byte("x"), backend.WriteOptions{IfAbsent: true})
			return err
		}, replace},
		{"replace a file", func() error {
			_, err := fsys.WriteFile(ctx, "f.txt", []byte("new\n"), backend.WriteOptions{})
			return err
		}, replace},
		{"edit", func() error {
			_, err := tools.Edit(ctx, core.EditRequest{Path: "f.txt", OldText: new("new"), NewText: new("newer")})
			return err
		}, replace},
		{"in place", func() error {
			_, err := fsys.WriteFile(ctx, "shared.txt", []byte("b\n"), backend.WriteOptions{InPlace: true})
			return err
		}, []string{"write", "fsync(file)"}},
		{"remove", func() error {
			_, err := fsys.Remove(ctx, "new.txt", backend.RemoveOptions{})
			return err
		}, []string{"fsync(dir)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := recordSyscalls(t, nil)
			if err := tc.do(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(*calls, tc.want) {
				t.Errorf("calls %q, want %q", *calls, tc.want)
			}
		})
	}
}

// A failure injected at any step before the rename leaves the target as it
// was and no temporary file; after the rename (the directory sync) the new
// content is in place and the error says so.
func TestWriteFailureLeavesTargetUnchanged(t *testing.T) {
	fsys, dir := newTestFS(t)
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(target)
	injected := errors.New("injected")
	for _, tc := range []struct {
		step  string
		errno error
		code  fault.Code
	}{
		{"write", unix.ENOSPC, fault.CodeNoSpace},
		{"fsync(file)", unix.EIO, fault.CodeIOError},
		{"rename", unix.EIO, fault.CodeIOError},
		{"rename", injected, fault.CodeIOError},
	} {
		t.Run(tc.step, func(t *testing.T) {
			recordSyscalls(t, map[string]error{tc.step: tc.errno})
			_, err := fsys.WriteFile(context.Background(), "f.txt", []byte("new content"), backend.WriteOptions{})
			if code(err) != tc.code {
				t.Fatalf("error %v, want code %s", err, tc.code)
			}
			got, _ := os.ReadFile(target)
			after, _ := os.Stat(target)
			if string(got) != "old" || !os.SameFile(before, after) || after.Mode() != before.Mode() {
				t.Fatalf("target changed: %q %v", got, after.Mode())
			}
			if left := temps(t, dir); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
	t.Run("new file", func(t *testing.T) {
		recordSyscalls(t, map[string]error{"fsync(file)": unix.EIO})
		if _, err := fsys.WriteFile(context.Background(), "sub/new.txt", []byte("x"), backend.WriteOptions{}); err == nil {
			t.Fatal("no error")
		}
		if _, err := os.Lstat(filepath.Join(dir, "sub/new.txt")); !os.IsNotExist(err) {
			t.Fatalf("new file exists after a failed write: %v", err)
		}
		if left := temps(t, filepath.Join(dir, "sub")); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})
	t.Run("fsync(dir)", func(t *testing.T) {
		recordSyscalls(t, map[string]error{"fsync(dir)": unix.EIO})
		_, err := fsys.WriteFile(context.Background(), "f.txt", []byte("new"), backend.WriteOptions{})
		if code(err) != fault.CodeIOError || !strings.Contains(err.Error(), "was replaced") {
			t.Fatalf("error %v, want IO_ERROR saying the file was replaced", err)
		}
		if got, _ := os.ReadFile(target); string(got) != "new" {
			t.Fatalf("content %q", got)
		}
		if left := temps(t, dir); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})
}

// A file system without RENAME_NOREPLACE (EINVAL, or ENOSYS from an old
// kernel) still creates without replacing: through a hard link, which
// fails on an existing name, and an unlink of the temporary file. Any
// other failure of the exclusive rename is the error.
func TestCreateWithoutRenameNoReplace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		errno   error
		created bool
	}{
		{unix.EINVAL, true},
		{unix.ENOSYS, true},
		{unix.EIO, false},
	} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			fsys, dir := newTestFS(t)
			must(t, os.WriteFile(filepath.Join(dir, "taken.txt"), []byte("old"), 0o644))
			recordSyscalls(t, map[string]error{"rename": tc.errno})
			_, err := fsys.WriteFile(ctx, "new.txt", []byte("x"), backend.WriteOptions{IfAbsent: true})
			got, readErr := os.ReadFile(filepath.Join(dir, "new.txt"))
			if tc.created && (err != nil || string(got) != "x") {
				t.Fatalf("create: %v, content %q", err, got)
			}
			if !tc.created && (code(err) != fault.CodeIOError || !os.IsNotExist(readErr)) {
				t.Fatalf("create: %v, file read: %v; want IO_ERROR and no file", err, readErr)
			}
			if _, err := fsys.WriteFile(ctx, "taken.txt", []byte("y"), backend.WriteOptions{IfAbsent: true}); tc.created && code(err) != fault.CodeExists {
				t.Fatalf("create over a file: %v, want EXISTS", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "taken.txt")); string(got) != "old" {
				t.Fatalf("the existing file became %q", got)
			}
			if left := temps(t, dir); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
}

// Where no rename refuses to replace and the file system has no hard
// links either (msdosfs and smbfs on FreeBSD: EOPNOTSUPP; vfat and exfat on
// Linux: EPERM; FUSE: ENOSYS), a file is still created, at its name once
// it is seen free, as a directory is: the link's refusal was reported as
// NOT_REGULAR or PERMISSION_DENIED, and no file could be created with
// --create nor moved without --overwrite there.
func TestCreateWithoutHardLinks(t *testing.T) {
	ctx := context.Background()
	for _, errno := range []error{unix.EOPNOTSUPP, unix.EPERM, unix.ENOSYS} {
		t.Run(errno.Error(), func(t *testing.T) {
			fsys, dir := newTestFS(t)
			must(t, os.WriteFile(filepath.Join(dir, "taken.txt"), []byte("old"), 0o644))
			saved := syscalls
			t.Cleanup(func() { syscalls = saved })
			syscalls.renameExclusive = func(int, string, int, string) error { return unix.ENOSYS }
			syscalls.linkat = func(int, string, int, string, int) error { return errno }
			if _, err := fsys.WriteFile(ctx, "new.txt", []byte("x"), backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Fatalf("create: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(got) != "x" {
				t.Fatalf("the created file holds %q", got)
			}
			if _, err := fsys.WriteFile(ctx, "taken.txt", []byte("y"), backend.WriteOptions{IfAbsent: true}); code(err) != fault.CodeExists {
				t.Fatalf("create over a file: %v, want EXISTS", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "taken.txt")); string(got) != "old" {
				t.Fatalf("the existing file became %q", got)
			}
			if _, err := fsys.Rename(ctx, "new.txt", "moved.txt", backend.WriteOptions{IfAbsent: true}); err != nil {
				t.Fatalf("move: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "moved.txt")); string(got) != "x" {
				t.Fatalf("the moved file holds %q", got)
			}
			if left := temps(t, dir); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
}

// A temporary file is swept only when agentfs can prove it is its own and
// its writer is gone: a dead writer's file (record unlocked) goes; a live
// writer's (record locked) stays; a user's file with a temp file's name has
// no record and stays, however old (issue 8.5).
func TestWriteSweepsOnlyDeadWritersTempFiles(t *testing.T) {
	fsys, dir := newTestFS(t)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	leftTemp := func(name string, bound bool) *tempRecord {
		rec, err := newTempRecord(filepath.Join(real, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if bound {
			if err := rec.bind(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
		}
		return rec
	}
	dead := tempPrefix + "0123456789abcdef"
	unix.Close(leftTemp(dead, true).fd) // a killed writer: the kernel frees its flock, the record stays
	deadEarly := tempPrefix + "0123456789abcdee"
	unix.Close(leftTemp(deadEarly, false).fd) // killed before it recorded the file's identity
	live := tempPrefix + "fedcba9876543210"
	defer leftTemp(live, true).done()
	users := tempPrefix + "00000000000000aa"
	if err := os.WriteFile(filepath.Join(dir, users), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, users), past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteFile(context.Background(), "f.txt", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, dead)); !os.IsNotExist(err) {
		t.Errorf("a dead writer's temporary file was kept: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, deadEarly)); !os.IsNotExist(err) {
		t.Errorf("the temporary file of a writer killed before it recorded it was kept: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, live)); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, users)); err != nil || string(b) != "mine" {
		t.Errorf("a user's file named like a temporary file was swept: %q, %v", b, err)
	}
	_, err = fsys.WriteFile(context.Background(), users, []byte("x"), backend.WriteOptions{})
	if code(err) != fault.CodeInvalidArgument {
		t.Errorf("a write to a reserved temporary name: want INVALID_ARGUMENT, got %v", err)
	}
}

// A replace keeps the owner and group (when the process may set them) and
// every mode bit, set-id included.
func TestWriteKeepsOwnerAndMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file another owner")
	}
	fsys, dir := newTestFS(t)
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	// Another owner, another group, or both: each is kept.
	for _, owner := range [][2]uint32{{1234, 5678}, {1234, gid}, {uid, 5678}} {
		p := filepath.Join(dir, "owned")
		if err := os.WriteFile(p, []byte("a"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, int(owner[0]), int(owner[1])); err != nil {
			t.Fatal(err)
		}
		if err := unix.Chmod(p, 0o2751); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.WriteFile(context.Background(), "owned", []byte("b"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != owner[0] || st.Gid != owner[1] || st.Mode&0o7777 != 0o2751 {
			t.Fatalf("owner %d:%d mode %o, want %d:%d 2751", st.Uid, st.Gid, st.Mode&0o7777, owner[0], owner[1])
		}
	}
}

// In a set-group-ID directory a new file takes the directory's group: a
// replace of a file whose owner and group are the writer's own kept the
// directory's group (the chown was skipped as needless), so that group
// could read what the file's group alone could (sed -i keeps the group).
func TestWriteKeepsGroupInSetGIDDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory another group")
	}
	fsys, dir := newTestFS(t)
	shared := filepath.Join(dir, "shared")
	must(t, os.Mkdir(shared, 0o755))
	must(t, os.Chown(shared, -1, 5678))
	must(t, unix.Chmod(shared, 0o2775))
	p := filepath.Join(shared, "key.txt")
	must(t, os.WriteFile(p, []byte("secret=foo\n"), 0o640))
	must(t, os.Chown(p, os.Geteuid(), os.Getegid()))
	if _, err := fsys.WriteFile(context.Background(), "shared/key.txt", []byte("secret=bar\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	must(t, unix.Stat(p, &st))
	if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() || st.Mode&0o7777 != 0o640 {
		t.Fatalf("owner %d:%d mode %o, want %d:%d 640", st.Uid, st.Gid, st.Mode&0o7777, os.Geteuid(), os.Getegid())
	}
}

// OwnerOf gives the file the owner and group of another (apply-patch's
// move keeps its source's), in a transaction and in a single write, over
// a new file and over an existing one of a third owner; the mode is the
// one asked for, set-id bits included, as chown comes first.
func TestWriteOwnerOf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file another owner: run the tests as root (CI does)")
	}
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "src"), []byte("a"), 0o600))
	must(t, os.Chown(filepath.Join(dir, "src"), 1234, 5678))
	must(t, os.WriteFile(filepath.Join(dir, "taken"), []byte("b"), 0o600))
	must(t, os.Chown(filepath.Join(dir, "taken"), 4321, 8765))
	check := func(name string) {
		t.Helper()
		var st unix.Stat_t
		must(t, unix.Stat(filepath.Join(dir, name), &st))
		if st.Uid != 1234 || st.Gid != 5678 || st.Mode&0o7777 != 0o2750 {
			t.Errorf("%s: owner %d:%d mode %o, want 1234:5678 2750", name, st.Uid, st.Gid, st.Mode&0o7777)
		}
	}
	opts := backend.WriteOptions{Mode: 0o2750, OwnerOf: "src"}
	if _, err := fsys.Commit(ctx, []backend.Op{{Path: "new", Data: []byte("c"), Write: opts}, {Path: "taken", Data: []byte("d"), Write: opts}}); err != nil {
		t.Fatal(err)
	}
	check("new")
	check("taken")
	if _, err := fsys.WriteFile(ctx, "single", []byte("e"), opts); err != nil {
		t.Fatal(err)
	}
	check("single")
	if _, err := fsys.WriteFile(ctx, "x", nil, backend.WriteOptions{OwnerOf: "missing"}); code(err) != fault.CodeNotFound {
		t.Errorf("OwnerOf a missing file: %v, want NOT_FOUND", err)
	}
}

// The temporary file of a replace is private (0600) while it is written,
// whatever the mode it then takes from the replaced file; a new file is
// written with the mode it keeps, as os.WriteFile would create it.
func TestWriteTempFileMode(t *testing.T) {
	fsys, dir := newTestFS(t)
	ref := func(mode os.FileMode) uint32 {
		p := filepath.Join(t.TempDir(), "ref")
		must(t, os.WriteFile(p, nil, mode))
		var st unix.Stat_t
		must(t, unix.Stat(p, &st))
		return uint32(st.Mode) & 0o7777
	}
	must(t, os.WriteFile(filepath.Join(dir, "old"), nil, 0o644))
	must(t, os.Chmod(filepath.Join(dir, "old"), 0o644))
	for _, tc := range []struct {
		name          string
		opts          backend.WriteOptions
		writing, kept uint32
	}{
		{"new", backend.WriteOptions{}, ref(0o644), ref(0o644)},
		{"new executable", backend.WriteOptions{Executable: true}, ref(0o755), ref(0o755)},
		{"old", backend.WriteOptions{}, 0o600, 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := syscalls
			t.Cleanup(func() { syscalls = saved })
			var modes []uint32
			syscalls.write = func(f *os.File, b []byte) (int, error) {
				var st unix.Stat_t
				must(t, unix.Fstat(int(f.Fd()), &st))
				modes = append(modes, uint32(st.Mode)&0o7777)
				return saved.write(f, b)
			}
			if _, err := fsys.WriteFile(context.Background(), tc.name, []byte("x"), tc.opts); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			must(t, unix.Stat(filepath.Join(dir, tc.name), &st))
			if !slices.Equal(modes, []uint32{tc.writing}) || uint32(st.Mode)&0o7777 != tc.kept {
				t.Fatalf("modes while written %o, then %o; want %o then %o", modes, uint32(st.Mode)&0o7777, tc.writing, tc.kept)
			}
		})
	}
}

// The returned info is the file as a later stat sees it, so its version
// can be passed back as a precondition.
func TestWriteReturnsCurrentVersion(t *testing.T) {
	fsys, _ := newTestFS(t)
	ctx := context.Background()
	for _, opts := range []backend.WriteOptions{{}, {InPlace: true}} {
		fi, err := fsys.WriteFile(ctx, "v.txt", bytes.Repeat([]byte("v"), 100), opts)
		if err != nil {
			t.Fatal(err)
		}
		st, err := fsys.Stat(ctx, "v.txt")
		if err != nil {
			t.Fatal(err)
		}
		if fi.Version != st.Version || fi.Size != 100 {
			t.Fatalf("%+v: version %s, stat says %s", opts, fi.Version, st.Version)
		}
	}
}

// A file its mode makes read-only is refused, not silently replaced.
func TestWriteRefusesReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any file")
	}
	fsys, dir := newTestFS(t)
	p := filepath.Join(dir, "ro.txt")
	if err := os.WriteFile(p, []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteFile(context.Background(), "ro.txt", []byte("new"), backend.WriteOptions{}); code(err) != fault.CodePermissionDenied {
		t.Fatalf("got %v, want PERMISSION_DENIED", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "keep" {
		t.Fatalf("content %q", got)
	}
}

func TestKeptModeDropsSetID(t *testing.T) {
	for _, c := range []struct {
		mode       uint32
		privileged bool
		want       uint32
	}{
		{0o4755, false, 0o755},
		{0o2755, false, 0o755},  // set-group-ID of a group-executable file
		{0o2644, false, 0o2644}, // mandatory-locking marker: kept, as the kernel does
		{0o6755, true, 0o6755},
		{0o1777, false, 0o1777},
	} {
		if got := keptMode(c.mode, c.privileged); got != c.want {
			t.Errorf("keptMode(%o, %v) = %o, want %o", c.mode, c.privileged, got, c.want)
		}
	}
}

// inPlace keeps the inode only where a replace would split a hard-linked
// file; an ordinary file is still replaced atomically.
func TestInPlaceOnlyForHardLinks(t *testing.T) {
	fsys, dir := newTestFS(t)
	p := filepath.Join(dir, "one")
	if err := os.WriteFile(p, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after unix.Stat_t
	unix.Stat(p, &before)
	if _, err := fsys.WriteFile(context.Background(), "one", []byte("bb"), backend.WriteOptions{InPlace: true}); err != nil {
		t.Fatal(err)
	}
	unix.Stat(p, &after)
	if before.Ino == after.Ino {
		t.Fatal("inPlace on a file with one link wrote in place instead of replacing it")
	}
}

// A file rewritten in place at the same size with its mtime restored (as
// cp -p, rsync -t or an editor can) has a new version: the change time
// is in the token, so a stale expectedVersion is refused and no update is
// lost (issue 16.1).
func TestVersionNoticesSameSizeRewriteWithMtimeRestored(t *testing.T) {
	fsys, dir := newTestFS(t)
	p := filepath.Join(dir, "f.txt")
	must(t, os.WriteFile(p, []byte("aaaa\n"), 0o644))
	ctx := context.Background()
	before, err := fsys.Stat(ctx, "f.txt")
	must(t, err)
	fi, err := os.Stat(p)
	must(t, err)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("bbbb\n"), 0)
	must(t, err)
	must(t, f.Close())
	must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	after, err := fsys.Stat(ctx, "f.txt")
	must(t, err)
	if !after.ModTime.Equal(before.ModTime) || after.Size != before.Size {
		t.Fatalf("the rewrite did not keep size and mtime: %v %v", before, after)
	}
	if after.Version == before.Version {
		t.Fatal("a same-size rewrite with its mtime restored kept the version: a stale expectedVersion would pass")
	}
	tools := &core.Tools{FS: fsys}
	_, err = tools.Write(ctx, core.WriteRequest{Path: "f.txt", Content: new("cccc\n"), Precondition: core.Precondition{ExpectedVersion: before.Version}})
	if code(err) != fault.CodeStale {
		t.Errorf("a write with the version from before the rewrite: want STALE, got %v", err)
	}
}

// create goes through RENAME_NOREPLACE: of writers racing to create one
// path, exactly one wins, every other is EXISTS, and the file holds the
// winner's bytes whole (issue 16.1).
func TestCreateRaceHasOneWinner(t *testing.T) {
	fsys, dir := newTestFS(t)
	const writers = 16
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = fsys.WriteFile(context.Background(), "c.txt", []byte(fmt.Sprintf("writer %d\n", i)), backend.WriteOptions{IfAbsent: true})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch code(err) {
		case "":
			if winner >= 0 {
				t.Fatalf("writers %d and %d both created c.txt", winner, i)
			}
			winner = i
		case fault.CodeExists:
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created c.txt")
	}
	got, err := os.ReadFile(filepath.Join(dir, "c.txt"))
	must(t, err)
	if string(got) != fmt.Sprintf("writer %d\n", winner) {
		t.Errorf("c.txt holds %q, not the winner's bytes", got)
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// An in-place rewrite checks that the file it opened is the one it
// examined: a file replaced in between is STALE and left untouched; a
// failed write or sync of the rewrite is reported (issue 16.1).
func TestWriteInPlaceRefusesAReplacedFile(t *testing.T) {
	_, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("current\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "g.txt"), []byte("other\n"), 0o644))
	var examined unix.Stat_t
	must(t, unix.Stat(filepath.Join(dir, "g.txt"), &examined))
	d, err := os.Open(dir)
	must(t, err)
	defer d.Close()
	_, err = writeInPlace(int(d.Fd()), "f.txt", &examined, []byte("lost\n"), "", "f.txt")
	if code(err) != fault.CodeStale {
		t.Errorf("in place over a replaced file: want STALE, got %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "current\n" {
		t.Errorf("the replaced file was written: %q", got)
	}
	var same unix.Stat_t
	must(t, unix.Stat(filepath.Join(dir, "f.txt"), &same))
	for _, step := range []string{"write", "fsync(file)"} {
		recordSyscalls(t, map[string]error{step: unix.EIO})
		if _, err := writeInPlace(int(d.Fd()), "f.txt", &same, []byte("new\n"), "", "f.txt"); code(err) != fault.CodeIOError {
			t.Errorf("in place with %s failing: want IO_ERROR, got %v", step, err)
		}
	}
}

// A state file half made by a writer killed in createLocked (a journal or
// a temp record before its rename) is swept once its flock is free and
// it is older than partialAge; one a live writer holds, or one just made
// (its writer may not have flocked it yet), stays. They were left forever.
func TestSweepRemovesDeadPartials(t *testing.T) {
	base := t.TempDir()
	past := time.Now().Add(-2 * partialAge)
	partial := func(dir, name string, old bool) string {
		p := filepath.Join(base, dir, name+partialSuffix+"0123456789abcdef")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("[{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if old {
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	deadJournal := partial("journal", "a.pending", true)
	deadRecord := partial("temps", "b", true)
	fresh := partial("journal", "c.pending", false)
	live := partial("journal", "d.pending", true)
	fd, err := unix.Open(live, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	sweepRecords(base)
	for p, want := range map[string]bool{deadJournal: false, deadRecord: false, fresh: true, live: true} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: there %v after the sweep, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// An in-place rewrite that runs out of space leaves the old content whole:
// with the blocks reserved first (fallocate), or where the file system
// cannot reserve them (ext2, vfat), with the part past the old end written
// first and cut off again. Without that, ext2 was left the new content's
// first 256 KiB, the old gone, and NO_SPACE said so.
func TestWriteInPlaceOutOfSpaceKeepsTheFile(t *testing.T) {
	_, dir := newTestFS(t)
	old := []byte(strings.Repeat("old line\n", 100))
	longer := []byte(strings.Repeat("new line!\n", 200))
	for _, tc := range []struct {
		name     string
		reserve  func(int, int64) (bool, error)
		tailFull bool // the write past the old end fails with ENOSPC
		syncFull bool // the first fsync does (NFS)
		want     []byte
		code     fault.Code
	}{
		{"reserved", func(int, int64) (bool, error) { return true, nil }, false, false, longer, ""},
		{"reservation out of space", func(int, int64) (bool, error) { return false, unix.ENOSPC }, false, false, old, fault.CodeNoSpace},
		{"unreserved", func(int, int64) (bool, error) { return false, nil }, false, false, longer, ""},
		{"unreserved, out of space past the end", func(int, int64) (bool, error) { return false, nil }, true, false, old, fault.CodeNoSpace},
		{"unreserved, out of space at the sync", func(int, int64) (bool, error) { return false, nil }, false, true, old, fault.CodeNoSpace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "f.txt")
			must(t, os.WriteFile(p, old, 0o644))
			var st unix.Stat_t
			must(t, unix.Stat(p, &st))
			saved := syscalls
			t.Cleanup(func() { syscalls = saved })
			syscalls.reserve = tc.reserve
			syscalls.writeAt = func(f *os.File, b []byte, off int64) (int, error) {
				if tc.tailFull && off > 0 {
					n, _ := saved.writeAt(f, b[:len(b)/2], off) // some blocks, then none
					return n, unix.ENOSPC
				}
				return saved.writeAt(f, b, off)
			}
			synced := false
			syscalls.fsync = func(fd int) error {
				if tc.syncFull && !synced {
					synced = true
					return unix.ENOSPC
				}
				return saved.fsync(fd)
			}
			d, err := os.Open(dir)
			must(t, err)
			defer d.Close()
			_, err = writeInPlace(int(d.Fd()), "f.txt", &st, longer, "", "f.txt")
			if code(err) != tc.code {
				t.Fatalf("error %v, want %q", err, tc.code)
			}
			if err != nil && !strings.Contains(fault.AsError(err).Hint, "the file is unchanged") {
				t.Errorf("hint %q, want it to say the file is unchanged", fault.AsError(err).Hint)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, tc.want) {
				t.Errorf("the file holds %d bytes %.30q..., want %d bytes %.30q...", len(got), got, len(tc.want), tc.want)
			}
		})
	}
}

// Every write leaves the file an mtime later than the content it
// replaced, even when the clock has not passed it: the replaced file's
// mtime is set in the future here, as a write within one tick of a coarse
// clock (whole seconds on ext4 with 128-byte inodes) finds it. Otherwise
// two same-size writes in one tick, the second given the first's freed
// inode number (as ext4 and xfs do), brought back the version read before
// them, and a write made with that version was not refused (hunt55).
func TestWriteLeavesALaterMtime(t *testing.T) {
	ahead := time.Now().Add(time.Hour).Truncate(time.Second).Add(123456789)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write func(fsys *FS, dir string) error
	}{
		{"replace", func(fsys *FS, dir string) error {
			_, err := fsys.WriteFile(ctx, "f.txt", []byte("bbbb\n"), backend.WriteOptions{})
			return err
		}},
		{"in place", func(fsys *FS, dir string) error {
			if err := os.Link(filepath.Join(dir, "f.txt"), filepath.Join(dir, "g.txt")); err != nil {
				return err
			}
			_, err := fsys.WriteFile(ctx, "f.txt", []byte("bbbb\n"), backend.WriteOptions{InPlace: true})
			return err
		}},
		{"transaction", func(fsys *FS, dir string) error {
			_, err := fsys.Commit(ctx, []backend.Op{{Path: "f.txt", Data: []byte("bbbb\n")}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := newTestFS(t)
			p := filepath.Join(dir, "f.txt")
			must(t, os.WriteFile(p, []byte("aaaa\n"), 0o644))
			must(t, os.Chtimes(p, ahead, ahead))
			must(t, tc.write(fsys, dir))
			fi, err := os.Stat(p)
			must(t, err)
			if !fi.ModTime().After(ahead) {
				t.Fatalf("mtime %v after the write, not later than the replaced content's %v", fi.ModTime(), ahead)
			}
			if fi.ModTime().Sub(ahead) > time.Millisecond {
				t.Fatalf("mtime %v after the write: further than a step past the replaced content's %v", fi.ModTime(), ahead)
			}
			if got, _ := os.ReadFile(p); string(got) != "bbbb\n" {
				t.Fatalf("content %q", got)
			}
		})
	}
}

// A directory moved takes along the temp files and made directories that
// writers killed in it left: their records name them by their old paths,
// so a sweep after the move found the directory gone and dropped the
// records, and the files stayed for good (a crash stress: an edit killed
// in mvt/x/sub, then mv mvt/x mvt/y). The move sweeps them first.
func TestMoveSweepsDeadWritersLeftoversInTheTree(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteFile(ctx, "tree/sub/f.txt", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dead := tempPrefix + "0123456789abcdef"
	rec, err := newTempRecord(filepath.Join(real, "tree/sub", dead))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "tree/sub", dead), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.bind(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	f.Close()
	unix.Close(rec.fd) // a killed writer: the kernel frees its flock, the record stays
	drec, err := newDirRecord(filepath.Join(real, "tree/new"))
	if err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(dir, "tree", stagingDirName(drec.path))
	if err := os.Mkdir(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	unix.Close(drec.fd) // killed between its mkdir and recording the directory's identity
	if _, err := fsys.Rename(ctx, "tree", "moved", backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	again, err := New(Config{Roots: []string{dir}, Cwd: dir}) // the next start sweeps
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if left := append(temps(t, filepath.Join(dir, "moved/sub")), temps(t, filepath.Join(dir, "moved"))...); len(left) > 0 {
		t.Fatalf("the dead writers' leftovers moved along and stayed: %v", left)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "moved/sub/f.txt")); err != nil || string(got) != "x" {
		t.Fatalf("moved/sub/f.txt: %q, %v", got, err)
	}
}
