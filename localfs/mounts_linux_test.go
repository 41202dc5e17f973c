package localfs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

func TestLockKey(t *testing.T) {
	mounts := []mountEntry{
		{dev: "8:1", root: "/", point: "/"},
		{dev: "8:2", root: "/", point: "/home"},
		{dev: "8:2", root: "/u/ws", point: "/mnt/ws"},
		{dev: "0:5", root: "/", point: "/mnt/ws/tmp"},
		{dev: "0:6", root: "/", point: "/mnt/ws/tmp"},
	}
	for p, want := range map[string]string{
		"/":                "8:1:/",
		"/etc/passwd":      "8:1:/etc/passwd",
		"/home/u/ws/f.txt": "8:2:/u/ws/f.txt",
		"/mnt/ws/f.txt":    "8:2:/u/ws/f.txt",
		"/mnt/ws":          "8:2:/u/ws",
		"/mnt/wsx/f":       "8:1:/mnt/wsx/f",
		"/mnt/ws/tmp/a":    "0:6:/a",
	} {
		if got := lockKey(mounts, p); got != want {
			t.Errorf("lockKey(%q) = %q, want %q", p, got, want)
		}
	}
	if got := lockKey(nil, "/a/b"); got != "/a/b" {
		t.Errorf("without a mount table the key is the path, got %q", got)
	}
	// The longest mount point wins wherever it stands in the table.
	longFirst := []mountEntry{{dev: "0:7", root: "/", point: "/mnt"}, {dev: "8:1", root: "/", point: "/"}}
	if got := lockKey(longFirst, "/mnt/f"); got != "0:7:/f" {
		t.Errorf("lockKey with the longer mount point first = %q, want 0:7:/f", got)
	}
}

// unescapeMount decodes complete three-digit octal escapes only.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b\134c\011`: "/a b\\c\t",
		`\0401`:            " 1",
		`a\040`:            "a ",
		`a\04`:             `a\04`,
		`a\0`:              `a\0`,
		`\070\100`:         "8@",
		`\080`:             `\080`,
		`\0/0`:             `\0/0`,
		`\`:                `\`,
		"plain":            "plain",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// One file reached through its directory and through a bind mount of it
// has one lock: two edits of it can never interleave (issue 8.1: 2 x 100
// edits kept 176 lines when the keys were the two path names).
func TestLockSharedThroughBindMount(t *testing.T) {
	ws, mnt := bindMounted(t, "")
	direct := newFSAt(t, ws)
	mounted := newFSAt(t, mnt)
	ctx := context.Background()
	for _, p := range []string{"f.txt", "new/g.txt"} {
		unlock, err := direct.Lock(ctx, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		u, err := mounted.Lock(ctx, p, 0)
		if err == nil {
			u()
			t.Errorf("%s locked through %s did not exclude it through the bind mount %s", p, ws, mnt)
		} else if e, ok := err.(*fault.Error); !ok || e.Code != fault.CodeLockTimeout {
			t.Errorf("want LOCK_TIMEOUT, got %v", err)
		}
		unlock()
		u, err = mounted.Lock(ctx, p, 0)
		if err != nil {
			t.Fatalf("after the unlock: %v", err)
		}
		u()
	}
}

// A write through a bind mount of a directory of the tree waits for a
// recursive remove of an ancestor of that directory, as a write through
// the tree does: it took the locks of the mount's own path only, so rm -r
// t interleaved with writes through a bind mount of t/d, removed files
// written since, and failed NOT_EMPTY half done.
func TestLockBelowBindMountMeetsItsSourcesAncestors(t *testing.T) {
	ws, mnt := bindMounted(t, "t/d")
	direct, mounted := newFSAt(t, ws), newFSAt(t, mnt)
	ctx := context.Background()
	unlock, err := direct.Lock(ctx, "t", 0) // as rm -r t holds it
	if err != nil {
		t.Fatal(err)
	}
	if u, err := mounted.Lock(ctx, "n.txt", 0); err == nil {
		u()
		t.Errorf("a write below the bind mount %s did not wait for the lock of t, an ancestor of its source", mnt)
	} else if e, ok := err.(*fault.Error); !ok || e.Code != fault.CodeLockTimeout {
		t.Errorf("want LOCK_TIMEOUT, got %v", err)
	}
	unlock()
	u, err := mounted.Lock(ctx, "n.txt", 0)
	if err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
	u()
}

// bindMounted makes a workspace ws, with the directory sub in it (ws
// itself when ""), and binds sub at mnt, with its own state directory;
// it skips the test where mount --bind is not permitted.
func bindMounted(t *testing.T, sub string) (ws, mnt string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount --bind; CI runs it as root (sudo go test ./localfs -run BindMount)")
	}
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	ws, mnt = filepath.Join(base, "ws"), filepath.Join(base, "mnt")
	must(t, os.MkdirAll(filepath.Join(ws, sub), 0o755))
	must(t, os.Mkdir(mnt, 0o755))
	if err := unix.Mount(filepath.Join(ws, sub), mnt, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind is not permitted here (%v); run as root outside a restricted container", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	return ws, mnt
}

func newFSAt(t *testing.T, dir string) *FS {
	f, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A procfs mounted inside a root is denied by its type, wherever it is:
// read, list, walk and write all refuse it (issue 8.3).
func TestKernelFSInsideRootIsDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a procfs; CI runs it as root (sudo go test ./localfs -run KernelFS)")
	}
	ws := t.TempDir()
	mnt := filepath.Join(ws, "proc2")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", mnt, "proc", 0, ""); err != nil {
		t.Skipf("mounting a procfs is not permitted here (%v)", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	fsys := newFSAt(t, ws)
	ctx := context.Background()
	if _, err := fsys.Open(ctx, "proc2/self/status"); code(err) != fault.CodeDenied {
		t.Errorf("read of a procfs file inside the root: want DENIED, got %v", err)
	}
	// A missing name there is DENIED too: which names exist is not told.
	for _, p := range []string{"proc2/zz-missing", "proc2/self/zz-missing", "proc2/zz/deeper"} {
		if _, err := fsys.Open(ctx, p); code(err) != fault.CodeDenied {
			t.Errorf("read of %s: want DENIED, got %v", p, err)
		}
		if _, err := fsys.Stat(ctx, p); code(err) != fault.CodeDenied {
			t.Errorf("stat of %s: want DENIED, got %v", p, err)
		}
	}
	if _, err := fsys.Open(ctx, "zz-missing"); code(err) != fault.CodeNotFound {
		t.Errorf("read of a missing file beside the procfs: want NOT_FOUND, got %v", err)
	}
	if _, err := fsys.ReadDir(ctx, "proc2", 0, 10); code(err) != fault.CodeDenied {
		t.Errorf("ls of a procfs inside the root: want DENIED, got %v", err)
	}
	if _, err := fsys.WriteFile(ctx, "proc2/x", []byte("x"), backend.WriteOptions{}); code(err) != fault.CodeDenied {
		t.Errorf("write into a procfs inside the root: want DENIED, got %v", err)
	}
	var seen []string
	err := fsys.Walk(ctx, ".", backend.WalkOptions{NoIgnore: true}, func(e backend.WalkEntry) error {
		seen = append(seen, e.Rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 {
		t.Errorf("a walk listed or went into the procfs: %d entries, first %q", len(seen), seen)
	}
}

// rm -r checks the whole tree before its first unlink: a denied directory
// reached through a bind mount inside the tree, or any other mount in it,
// refuses the removal and nothing is removed (issue 8.2: it removed the
// denied file, then failed with EBUSY).
func TestRemoveTreeNeverCrossesMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount; CI runs it as root (sudo go test ./localfs -run RemoveTree)")
	}
	t.Setenv(StateDirEnv, t.TempDir())
	for _, tc := range []struct {
		name  string
		mount func(ws, point string) error
		deny  bool
	}{
		{"a denied directory through a bind mount", func(ws, point string) error {
			return unix.Mount(filepath.Join(ws, "secret"), point, "", unix.MS_BIND, "")
		}, true},
		{"a bind mount of the same file system", func(ws, point string) error {
			return unix.Mount(filepath.Join(ws, "secret"), point, "", unix.MS_BIND, "")
		}, false},
		{"a tmpfs", func(_, point string) error { return unix.Mount("tmpfs", point, "tmpfs", 0, "") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for _, d := range []string{"secret", "tree/a/b", "tree/m"} {
				if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"secret/key", "tree/first.txt", "tree/a/b/c.txt"} {
				if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			point := filepath.Join(ws, "tree/m")
			if err := tc.mount(ws, point); err != nil {
				t.Skipf("mount is not permitted here (%v)", err)
			}
			t.Cleanup(func() { unix.Unmount(point, unix.MNT_DETACH) })
			cfg := Config{Roots: []string{ws}, Cwd: ws}
			if tc.deny {
				cfg.Deny = []string{filepath.Join(ws, "secret")}
			}
			fsys, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			_, err = fsys.Remove(context.Background(), "tree", backend.RemoveOptions{Recursive: true})
			if code(err) != fault.CodeDenied {
				t.Fatalf("rm -r of a tree holding a mount: want DENIED, got %v", err)
			}
			for _, f := range []string{"secret/key", "tree/first.txt", "tree/a/b/c.txt"} {
				if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
					t.Errorf("%s was removed by a refused rm -r: %v", f, err)
				}
			}
		})
	}
}

// EROFS: a read-only file system is READ_ONLY, for a new file and for one
// there (whose write check fails first), and its hint does not speak of
// the file's mode.
func TestReadOnlyFileSystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a read-only tmpfs; CI runs it as root")
	}
	fsys, dir := newTestFS(t)
	mnt := filepath.Join(dir, "ro")
	must(t, os.Mkdir(mnt, 0o755))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount is not permitted here (%v)", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	must(t, os.WriteFile(filepath.Join(mnt, "old.txt"), []byte("old"), 0o644))
	must(t, unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""))
	for _, name := range []string{"ro/new.txt", "ro/old.txt"} {
		_, err := fsys.WriteFile(context.Background(), name, []byte("x"), backend.WriteOptions{})
		wantCode(t, "write "+name+" on a read-only file system", err, fault.CodeReadOnly)
		if e := fault.AsError(err); strings.Contains(e.Hint, "mode") {
			t.Errorf("READ_ONLY hint of %s speaks of the mode: %q", name, e.Hint)
		}
	}
}

// BenchmarkMountsBelow is what a search that asks an index's watcher pays
// for its mount table.
func BenchmarkMountsBelow(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, ok := MountsBelow(dir); !ok {
			b.Skip("no /proc/self/mountinfo")
		}
	}
}

// A walk asks the file system of each mount point it meets, not a cache
// by device number: an anonymous device number is given again at once
// once its file system is unmounted, so a procfs mounted during a walk
// where a tmpfs met before was may get the tmpfs's number.
func TestKernelFSMountedWithAReusedDeviceNumber(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	ws := t.TempDir()
	a, z := filepath.Join(ws, "a"), filepath.Join(ws, "z")
	must(t, os.Mkdir(a, 0o755))
	must(t, os.Mkdir(z, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "m"), []byte("m"), 0o644))
	if err := unix.Mount("tmpfs", a, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	mountedA := true
	t.Cleanup(func() {
		if mountedA {
			unix.Unmount(a, unix.MNT_DETACH)
		}
	})
	must(t, os.WriteFile(filepath.Join(a, "f"), []byte("f"), 0o644))
	var st unix.Stat_t
	must(t, unix.Stat(a, &st))
	tmpDev := st.Dev
	fsys := newFSAt(t, ws)
	var seen []string
	err := fsys.Walk(context.Background(), ".", backend.WalkOptions{NoIgnore: true}, func(e backend.WalkEntry) error {
		seen = append(seen, e.Rel)
		if e.Rel != "m" {
			return nil
		}
		// The walk is done with a: swap the tmpfs for a procfs at z.
		must(t, unix.Unmount(a, 0))
		mountedA = false
		if err := unix.Mount("proc", z, "proc", 0, ""); err != nil {
			t.Skipf("mount proc: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(z, unix.MNT_DETACH) })
		var zs unix.Stat_t
		must(t, unix.Stat(z, &zs))
		if zs.Dev != tmpDev {
			t.Skipf("the procfs got device %d, not the tmpfs's %d", zs.Dev, tmpDev)
		}
		return nil
	})
	for _, s := range seen {
		if s == "z" || strings.HasPrefix(s, "z/") {
			t.Fatalf("the walk listed the procfs mounted at z (device number of a tmpfs met before): %d entries, e.g. %q", len(seen), seen[len(seen)-1])
		}
	}
	if err != nil {
		t.Fatalf("the walk went into the procfs mounted at z: %v", err)
	}
}

// rm -r of a directory holding the source of a bind mount that is a root
// is refused: the walk up from the root's name never meets it (a bind
// mount's .. is its mount point's parent), and the tree was removed,
// emptying the root.
func TestRemoveTreeRefusesABindMountedRootsSource(t *testing.T) {
	ws, mnt := bindMounted(t, "sub/r2")
	must(t, os.WriteFile(filepath.Join(ws, "sub", "r2", "k"), []byte("k"), 0o644))
	f, err := New(Config{Roots: []string{ws, mnt}, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Remove(context.Background(), "sub", backend.RemoveOptions{Recursive: true})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, "holds a workspace root") {
		t.Fatalf("rm -r of the directory holding a bind-mounted root's source: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "k")); err != nil {
		t.Errorf("the root's file: %v, want it kept", err)
	}
}

// A procfs file of a process that has ended, bind-mounted in the tree, is
// gone to a walk's open (NOT_FOUND, which grep and replace pass over): its
// open fails ESRCH before its file system's type is looked at, and grep
// and replace of the tree failed whole, IO_ERROR "no such process", their
// hint to retry.
func TestWalkPassesOverAProcfsFileOfAnEndedProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount --bind; CI runs it as root (sudo go test ./localfs -run ProcfsFile)")
	}
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("PATH\n"), 0o644))
	target := filepath.Join(ws, "kenv")
	must(t, os.WriteFile(target, nil, 0o644))
	cmd := exec.Command("sleep", "60")
	must(t, cmd.Start())
	if err := unix.Mount(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid), target, "", unix.MS_BIND, ""); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Skipf("mount --bind is not permitted here (%v)", err)
	}
	t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })
	must(t, cmd.Process.Kill())
	cmd.Wait()
	fsys := newFSAt(t, ws)
	var opened []string
	err := fsys.Walk(context.Background(), ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		r, err := e.Open()
		switch {
		case err == nil:
			r.Close()
			opened = append(opened, e.Rel)
		case code(err) != fault.CodeNotFound:
			t.Errorf("the open of %s: %v, want NOT_FOUND", e.Rel, err)
		}
		return nil
	})
	if err != nil || !slices.Equal(opened, []string{"a.txt"}) {
		t.Errorf("the walk opened %q, %v; want a.txt alone", opened, err)
	}
}
