package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

func TestLockChain(t *testing.T) {
	for abs, want := range map[string][]string{
		"/":      {"/"},
		"/a":     {"/", "/a"},
		"/a/b/c": {"/", "/a", "/a/b", "/a/b/c"},
	} {
		if got := lockChain(abs); !reflect.DeepEqual(got, want) {
			t.Errorf("lockChain(%q) = %q, want %q", abs, got, want)
		}
	}
}

// Processes started with different roots lock the same file, and a
// recursive remove under one root meets a write below it under another.
func TestLockAcrossRoots(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	repo := t.TempDir()
	sub := filepath.Join(repo, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	outer, err := New(Config{Roots: []string{repo}, Cwd: repo})
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close()
	inner, err := New(Config{Roots: []string{filepath.Join(sub, "deep")}, Cwd: filepath.Join(sub, "deep")})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	ctx := context.Background()
	for _, tc := range []struct{ held, tried string }{
		{"sub/deep/f.txt", "f.txt"},
		{"sub", "f.txt"},
	} {
		unlock, err := outer.Lock(ctx, tc.held, 0)
		if err != nil {
			t.Fatal(err)
		}
		if u, err := inner.Lock(ctx, tc.tried, 0); err == nil {
			u()
			t.Errorf("holding %s under root %s did not exclude %s under root %s", tc.held, repo, tc.tried, filepath.Join(sub, "deep"))
		} else if e, ok := err.(*fault.Error); !ok || e.Code != fault.CodeLockTimeout {
			t.Errorf("want LOCK_TIMEOUT, got %v", err)
		}
		unlock()
	}
}

// LOCK_TIMEOUT names the timeout the caller gave, not what was left of it
// a few microseconds later; under lockGrace, the wait it had (--lock-timeout
// 0 said "for longer than 0s", and waited 10 ms), in its message and its
// details.timeout alike (which said 0s beside a message of 10ms).
func TestLockTimeoutSaysTheTimeoutGiven(t *testing.T) {
	fsys, dir := newTestFS(t)
	must(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	unlock, err := fsys.Lock(context.Background(), "f", 0)
	must(t, err)
	defer unlock()
	for _, c := range []struct {
		timeout      time.Duration
		said, detail string
	}{
		{30*time.Millisecond - 300*time.Nanosecond, "30ms", "30ms"},
		{0, "10ms", "10ms"},
		{2 * time.Millisecond, "10ms", "10ms"},
	} {
		_, err = fsys.Lock(context.Background(), "f", c.timeout)
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeLockTimeout || !strings.HasSuffix(e.Message, " longer than "+c.said+".") || e.Details["timeout"] != c.detail {
			t.Errorf("timeout %v: got %v (details %v), want LOCK_TIMEOUT for longer than %s", c.timeout, err, e.Details, c.said)
		}
	}
}

// flock locks belong to open file descriptions, so two Lock calls of one
// process contend as two processes would.
func TestLockConflicts(t *testing.T) {
	fsys, dir := newTestFS(t)
	if err := os.MkdirAll(filepath.Join(dir, "d/e"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	try := func(p string) error {
		unlock, err := fsys.Lock(ctx, p, 0)
		if err == nil {
			unlock()
		}
		return err
	}
	unlock, err := fsys.Lock(ctx, "d/e/f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Siblings and other trees are free; the path, its ancestors (taken
	// exclusively by rm -r) and its descendants are not.
	for p, want := range map[string]fault.Code{
		"d/e/g":   "",
		"other":   "",
		"d/e/f":   fault.CodeLockTimeout,
		"d/e":     fault.CodeLockTimeout,
		"d":       fault.CodeLockTimeout,
		"d/e/f/x": fault.CodeLockTimeout,
	} {
		if got := code(try(p)); got != want {
			t.Errorf("lock %s while d/e/f is held: %q, want %q", p, got, want)
		}
	}
	unlock()
	unlock() // a second call is harmless
	// rm -r d holds d exclusively: no mutation below it can start.
	unlock, err = fsys.Lock(ctx, "d", time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	defer unlock()
	for _, p := range []string{"d/e/f", "d/e", "d/x"} {
		if got := code(try(p)); got != fault.CodeLockTimeout {
			t.Errorf("lock %s while d is held: %q, want LOCK_TIMEOUT", p, got)
		}
	}
	if err := try("other"); err != nil {
		t.Errorf("lock other while d is held: %v", err)
	}
}

// Two spellings of one file, through a link inside the root, share a lock.
func TestLockFollowsLinks(t *testing.T) {
	fsys, dir := newTestFS(t)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsys.Lock(context.Background(), "real/f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := fsys.Lock(context.Background(), "alias/f", 0); code(err) != fault.CodeLockTimeout {
		t.Fatalf("lock through the link: %v, want LOCK_TIMEOUT", err)
	}
}

// A final link is followed too: the link and its target share a lock. A
// link to the root is locked by its own name (rm removes the link), and
// never as the root, which is refused.
func TestLockFollowsFinalLink(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "target"), nil, 0o644))
	must(t, os.Symlink("target", filepath.Join(dir, "link")))
	must(t, os.Symlink(".", filepath.Join(dir, "here")))
	for _, tc := range []struct{ held, other string }{
		{"target", "link"},
		{"link", "target"},
	} {
		unlock, err := fsys.Lock(ctx, tc.held, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		other, err := fsys.Lock(ctx, tc.other, 0)
		if err == nil {
			other()
		}
		if code(err) != fault.CodeLockTimeout {
			t.Errorf("lock %s while %s is held: %v, want LOCK_TIMEOUT", tc.other, tc.held, err)
		}
		unlock()
	}
	unlock, err := fsys.Lock(ctx, "here", time.Second)
	if err != nil {
		t.Fatalf("lock a link to the root: %v", err)
	}
	defer unlock()
	other, err := fsys.Lock(ctx, "target", 0)
	if err != nil {
		t.Fatalf("lock a file while a link to the root is held: %v", err)
	}
	other()
}

// A final link is locked by its own name too: mv --overwrite replaces the
// link itself, and a write to the file then at that name waits for it.
func TestLockHoldsFinalLinkName(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "target"), nil, 0o644))
	must(t, os.Symlink("target", filepath.Join(dir, "link")))
	unlock, err := fsys.Lock(ctx, "link", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	must(t, os.Remove(filepath.Join(dir, "link")))
	must(t, os.WriteFile(filepath.Join(dir, "link"), nil, 0o644))
	other, err := fsys.Lock(ctx, "link", 0)
	if err == nil {
		other()
	}
	if code(err) != fault.CodeLockTimeout {
		t.Errorf("lock the file that replaced a held link: %v, want LOCK_TIMEOUT", err)
	}
}

// A file's own lock that cannot be taken for want of descriptors fails
// the lock, naming the limit; it is not skipped as a file with none.
func TestLockDataOutOfDescriptors(t *testing.T) {
	fsys, _ := newTestFS(t)
	p := filepath.Join(fsys.roots[0].path, "f")
	must(t, os.WriteFile(p, nil, 0o644))
	var st unix.Stat_t
	must(t, unix.Stat(p, &st))
	var orig unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &orig))
	low := orig
	low.Cur = 256
	must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &orig)
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, fd)
	}
	df := dataFile{path: p, id: [2]uint64{uint64(st.Dev), st.Ino}}
	fd, err := fsys.lockData(context.Background(), df, time.Now(), map[[2]uint64]bool{})
	if fd >= 0 {
		unix.Close(fd)
	}
	if e, ok := err.(*fault.Error); !ok || e.Code != fault.CodeIOError || !strings.Contains(e.Hint, "ulimit -n") {
		t.Errorf("lockData out of descriptors: fd %d, %v; want IO_ERROR naming ulimit -n", fd, err)
	} else if strings.Contains(e.Message, "state directory") {
		// The process's limit is at fault, not the directory.
		t.Errorf("lockData out of descriptors blames the state directory: %s", e.Message)
	}
}

// A wait ends at the timeout with LOCK_TIMEOUT, or at once when the context
// is cancelled, with INTERRUPTED.
func TestLockTimeoutAndCancel(t *testing.T) {
	fsys, _ := newTestFS(t)
	unlock, err := fsys.Lock(context.Background(), "f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	_, err = fsys.Lock(context.Background(), "f", 50*time.Millisecond)
	if code(err) != fault.CodeLockTimeout {
		t.Fatalf("got %v, want LOCK_TIMEOUT", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before its 50ms timeout", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := fsys.Lock(ctx, "f", time.Minute)
		done <- err
	}()
	cancel()
	if err := Within(t, done, "end of a cancelled wait"); code(err) != fault.CodeInterrupted {
		t.Fatalf("got %v, want INTERRUPTED", err)
	}
}

func TestLockRefusesRoot(t *testing.T) {
	fsys, _ := newTestFS(t)
	if _, err := fsys.Lock(context.Background(), ".", time.Second); code(err) != fault.CodeInvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
}

// A holder removes its path's lock file as it lets go. A process that was
// waiting on that file must not keep a lock on the removed file: it takes
// the lock on the file now at the path, so a third process still waits.
func TestLockSurvivesLockFileRemoval(t *testing.T) {
	fsys, _ := newTestFS(t)
	ctx := context.Background()
	first, err := fsys.Lock(ctx, "f", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	lockWaitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	defer func() { lockWaitHook = nil }()
	got := make(chan func(), 1)
	go func() {
		unlock, err := fsys.Lock(ctx, "f", 5*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- unlock
	}()
	Within(t, waiting, "wait for the held lock")
	first() // removes the lock file the waiter has open
	second := Within(t, got, "lock after the holder let go")
	if second == nil {
		t.FailNow()
	}
	if _, err := fsys.Lock(ctx, "f", 0); code(err) != fault.CodeLockTimeout {
		t.Fatalf("a third lock while the second is held: %v, want LOCK_TIMEOUT", err)
	}
	second()
}

// The state directory is the first usable of $AGENTFS_STATE_DIR,
// $XDG_STATE_HOME/agentfs (when absolute), ~/.local/state/agentfs (below an
// existing home only) and a per-user directory in the temporary directory;
// a candidate that is not a directory, or is another user's, is passed
// over, one of this user's that is not private is the error (its journals
// would be passed over with it), and when none is usable the first one's
// error is the error.
func TestStateDirCandidates(t *testing.T) {
	tmpName := fmt.Sprintf("agentfs-%d", os.Getuid())
	for _, tc := range []struct {
		name             string
		state, xdg, home string
		setup            func(base string)
		want             string // relative to base; "" for an error naming xdg
	}{
		{name: "state dir env", state: "s", xdg: "x", home: "h", want: "s"},
		{name: "xdg", xdg: "x", home: "h", want: "x/agentfs"},
		{name: "relative xdg", xdg: "rel", home: "h", want: "h/.local/state/agentfs"},
		{name: "missing home", home: "nohome", want: "tmp/" + tmpName},
		{name: "no home", want: "tmp/" + tmpName},
		{name: "home is a file", home: "file", want: "tmp/" + tmpName},
		{name: "a shared directory of this user's is the error", xdg: "x", home: "h",
			setup: func(base string) {
				must(t, os.MkdirAll(filepath.Join(base, "x/agentfs"), 0o700))
				must(t, os.Chmod(filepath.Join(base, "x/agentfs"), 0o777))
			}},
		{name: "a file is passed over", xdg: "x", home: "h", want: "h/.local/state/agentfs",
			setup: func(base string) {
				must(t, os.MkdirAll(filepath.Join(base, "x"), 0o700))
				must(t, os.WriteFile(filepath.Join(base, "x/agentfs"), nil, 0o600))
			}},
		{name: "none usable", xdg: "x", home: "nohome",
			setup: func(base string) {
				must(t, os.MkdirAll(filepath.Join(base, "x/agentfs"), 0o700))
				must(t, os.Chmod(filepath.Join(base, "x/agentfs"), 0o777))
				must(t, os.WriteFile(filepath.Join(base, "tmp", tmpName), nil, 0o600))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			must(t, os.Mkdir(filepath.Join(base, "h"), 0o700))
			must(t, os.Mkdir(filepath.Join(base, "tmp"), 0o700))
			must(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o600))
			abs := func(p string) string {
				if p == "" || p == "rel" {
					return p
				}
				return filepath.Join(base, p)
			}
			t.Setenv(StateDirEnv, abs(tc.state))
			t.Setenv("XDG_STATE_HOME", abs(tc.xdg))
			t.Setenv("HOME", abs(tc.home))
			t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
			if tc.setup != nil {
				tc.setup(base)
			}
			got, err := stateDir()
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), filepath.Join(base, "x/agentfs")) {
					t.Fatalf("got %q, %v; want the error of %s", got, err, filepath.Join(base, "x/agentfs"))
				}
				return
			}
			if want := filepath.Join(base, tc.want); err != nil || got != want {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
			if fi, err := os.Stat(got); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("state directory %v, %v; want a directory of mode 0700", fi, err)
			}
			if _, err := os.Stat(filepath.Join(base, "nohome")); !os.IsNotExist(err) {
				t.Fatalf("a missing home was created: %v", err)
			}
		})
	}
}

// A lock file that its holder unlinked while this process waited is no
// lock any more, whether the path is then missing or already holds the next
// lock file: the lock is taken on the file now at the path.
func TestLockFileReplacedWhileWaiting(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		t.Run(fmt.Sprint("recreated ", recreate), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.lock")
			holder, err := LockFile(context.Background(), path, unix.LOCK_EX, time.Now())
			must(t, err)
			hooked := false
			lockWaitHook = func() {
				if hooked {
					return
				}
				hooked = true
				must(t, os.Remove(path))
				if recreate {
					must(t, os.WriteFile(path, nil, 0o600))
				}
				unix.Close(holder)
			}
			defer func() { lockWaitHook = nil }()
			fd, err := LockFile(context.Background(), path, unix.LOCK_EX, time.Now().Add(30*time.Second))
			if err != nil || fd < 0 {
				t.Fatalf("lockFile: %d, %v", fd, err)
			}
			defer unix.Close(fd)
			var held, now unix.Stat_t
			must(t, unix.Fstat(fd, &held))
			must(t, unix.Stat(path, &now))
			if !hooked || held.Dev != now.Dev || held.Ino != now.Ino {
				t.Fatalf("waited %v; the lock is on inode %d, the path's file is inode %d", hooked, held.Ino, now.Ino)
			}
			other, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
			must(t, err)
			defer unix.Close(other)
			if err := unix.Flock(other, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
				t.Fatalf("the file at the path is not locked: flock gave %v", err)
			}
		})
	}
}

// LockAll takes every path's lock at once: each excludes another
// mutation of that path until released, and paths that nest (a directory
// and a file in it) are locked together without waiting on themselves.
func TestLockAllHoldsEveryPath(t *testing.T) {
	fsys, _ := newTestFS(t)
	ctx := context.Background()
	unlock, err := fsys.LockAll(ctx, []string{"a.txt", "d", "d/f.txt"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a.txt", "d", "d/f.txt", "d/g.txt"} {
		if _, err := fsys.Lock(ctx, p, 0); code(err) != fault.CodeLockTimeout {
			t.Errorf("%s while LockAll holds it: %v, want LOCK_TIMEOUT", p, err)
		}
	}
	unlock()
	for _, p := range []string{"a.txt", "d/g.txt"} {
		u, err := fsys.Lock(ctx, p, 0)
		if err != nil {
			t.Fatalf("%s after the release: %v", p, err)
		}
		u()
	}
}

// lockTarget's real paths, case by case: a final link followed is locked
// at its target and by its own name; one that may not be followed (out of
// the roots, links refused, a link to the root) by its own name alone.
func TestLockTargetReals(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	dir := filepath.Join(base, "root")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "f"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(base, "outside"), nil, 0o644))
	must(t, os.Symlink("sub/f", filepath.Join(dir, "link")))
	must(t, os.Symlink("sub/new", filepath.Join(dir, "dangling")))
	must(t, os.Symlink("../outside", filepath.Join(dir, "escape")))
	must(t, os.Symlink(".", filepath.Join(dir, "here")))
	must(t, os.Symlink("sub", filepath.Join(dir, "alias")))
	in := func(rel ...string) []string {
		var reals []string
		for _, r := range rel {
			reals = append(reals, filepath.Join(dir, r))
		}
		return reals
	}
	for _, tc := range []struct {
		policy SymlinkPolicy
		path   string
		want   []string
		code   fault.Code
	}{
		{SymlinksWithin, "sub/f", in("sub/f"), ""},
		{SymlinksWithin, "sub/none", in("sub/none"), ""},
		{SymlinksWithin, "alias/f", in("sub/f"), ""},
		{SymlinksWithin, "link", in("sub/f", "link"), ""},
		{SymlinksWithin, "dangling", in("sub/new", "dangling"), ""},
		{SymlinksWithin, "escape", in("escape"), ""},
		{SymlinksWithin, "here", in("here"), ""},
		{SymlinksWithin, ".", nil, fault.CodeInvalidArgument},
		{SymlinksRefuse, "link", in("link"), ""},
		{SymlinksRefuse, "alias/f", nil, fault.CodeSymlink},
	} {
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, Symlinks: tc.policy})
		must(t, err)
		_, reals, err := fsys.lockTarget(tc.path)
		fsys.Close()
		if code(err) != tc.code || !reflect.DeepEqual(reals, tc.want) {
			t.Errorf("policy %v, %s: reals %q, error %v; want %q, code %q", tc.policy, tc.path, reals, err, tc.want, tc.code)
		}
	}
}

// A sweep of the lock directory removes the lock files no process holds,
// and keeps those held, shared or exclusive, and whatever is not a lock
// file agentfs makes; it runs once a day.
func TestSweepLocksRemovesOnlyUnheld(t *testing.T) {
	state := t.TempDir()
	d := filepath.Join(state, "locks")
	must(t, os.Mkdir(d, 0o700))
	name := func(key string) string { return filepath.Join(d, lockName(key)) }
	exclusive, err := LockFile(context.Background(), name("exclusive"), unix.LOCK_EX, time.Now())
	must(t, err)
	defer unix.Close(exclusive)
	shared, err := LockFile(context.Background(), name("shared"), unix.LOCK_SH, time.Now())
	must(t, err)
	defer unix.Close(shared)
	for _, key := range []string{"left1", "left2"} {
		must(t, os.WriteFile(name(key), nil, 0o600))
	}
	must(t, os.WriteFile(filepath.Join(d, "other.lock"), nil, 0o600)) // not a name lockName makes
	must(t, unix.Mkfifo(name("fifo"), 0o600))                         // nor a lock file
	now := time.Now()
	if n := sweepLocks(state, now); n != 2 {
		t.Errorf("the sweep removed %d lock files, want 2", n)
	}
	want := []string{lockName("exclusive"), lockName("fifo"), lockName("shared"), "other.lock", lockSweepStamp}
	slices.Sort(want)
	if got := entryNames(t, d); !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	must(t, os.WriteFile(name("left1"), nil, 0o600))
	if n := sweepLocks(state, now.Add(lockSweepEvery-time.Minute)); n != 0 {
		t.Errorf("a sweep within a day of the last removed %d, want none", n)
	}
	if n := sweepLocks(state, now.Add(-time.Hour)); n != 1 {
		t.Errorf("a sweep with the last stamped in the future (a clock set back) removed %d, want 1", n)
	}
	must(t, os.WriteFile(name("left1"), nil, 0o600))
	if n := sweepLocks(state, now.Add(lockSweepEvery+time.Minute)); n != 1 {
		t.Errorf("a sweep a day after the last removed %d, want 1", n)
	}
}

// A sweep cut short by its budget stamps nothing: the next start goes on
// with it, and the one that reaches the end stamps it.
func TestSweepLocksCutShortGoesOnNextStart(t *testing.T) {
	state := t.TempDir()
	d := filepath.Join(state, "locks")
	must(t, os.Mkdir(d, 0o700))
	must(t, os.WriteFile(filepath.Join(d, lockName("left")), nil, 0o600))
	budget := lockSweepBudget
	lockSweepBudget = 0
	n := sweepLocks(state, time.Now())
	lockSweepBudget = budget
	if n != 0 {
		t.Fatalf("a sweep with no time removed %d lock files", n)
	}
	if _, err := os.Lstat(filepath.Join(d, lockSweepStamp)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a sweep cut short left a stamp (%v): the next starts would wait a day", err)
	}
	if n := sweepLocks(state, time.Now()); n != 1 {
		t.Fatalf("the next start removed %d lock files, want 1", n)
	}
	if _, err := os.Lstat(filepath.Join(d, lockSweepStamp)); err != nil {
		t.Fatalf("a sweep that reached the end left no stamp: %v", err)
	}
}

// A FIFO or a link planted at the stamp's name is never opened through:
// a start does not hang on it, nor truncate what a link names.
func TestSweepLocksStampIsOnlyAFile(t *testing.T) {
	for _, plant := range []func(t *testing.T, stamp, target string){
		func(t *testing.T, stamp, _ string) { must(t, unix.Mkfifo(stamp, 0o600)) },
		func(t *testing.T, stamp, target string) { must(t, os.Symlink(target, stamp)) },
	} {
		state := t.TempDir()
		d := filepath.Join(state, "locks")
		must(t, os.Mkdir(d, 0o700))
		target := filepath.Join(state, "target")
		must(t, os.WriteFile(target, []byte("data"), 0o600))
		plant(t, filepath.Join(d, lockSweepStamp), target)
		must(t, os.WriteFile(filepath.Join(d, lockName("left")), nil, 0o600))
		if n := sweepLocks(state, time.Now()); n != 0 {
			t.Errorf("a sweep with something else at its stamp removed %d, want none", n)
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "data" {
			t.Errorf("the link's target: %q, %v", b, err)
		}
	}
}

// Locks exclude each other as before while their unheld lock files are
// swept between and during takes: a write below d (shared on d's lock
// file) and a removal of d (exclusive on it) never hold at once, nor two
// writes of d/f.
func TestLocksHoldWhileTheirFilesAreSwept(t *testing.T) {
	fsys, dir := newTestFS(t)
	must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	locks, err := lockDir()
	must(t, err)
	ctx := context.Background()
	var mu sync.Mutex
	writers, removing := 0, false
	hold := func(path string, enter, leave func() bool) {
		for range 150 {
			unlock, err := fsys.Lock(ctx, path, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ok := enter()
			mu.Unlock()
			if !ok {
				t.Errorf("the lock of %s was taken while another excluding it was held", path)
			}
			time.Sleep(200 * time.Microsecond) // held a while, as a write holds it
			mu.Lock()
			leave()
			mu.Unlock()
			unlock()
		}
	}
	stop := make(chan struct{})
	swept := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swept <- n
				return
			default:
			}
			entries, _ := os.ReadDir(locks)
			for _, e := range entries {
				if sweepLock(filepath.Join(locks, e.Name())) {
					n++
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			hold("d/f", func() bool { writers++; return writers == 1 && !removing }, func() bool { writers--; return true })
		})
	}
	wg.Go(func() {
		hold("d", func() bool { ok := writers == 0 && !removing; removing = true; return ok }, func() bool { removing = false; return true })
	})
	wg.Wait()
	close(stop)
	if n := <-swept; n == 0 {
		t.Fatal("no lock file was swept during the takes")
	}
}

// A take with no wait (--lock-timeout 0) outwaits a lock held for a
// moment, as a sweep holds a lock file no one uses: it is not refused
// for a holder that lets go within lockGrace.
func TestNoWaitOutwaitsAMomentaryHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, err := LockFile(context.Background(), path, unix.LOCK_EX, time.Now())
	must(t, err)
	lockWaitHook = func() { unix.Close(holder) } // lets go as the wait begins
	defer func() { lockWaitHook = nil }()
	fd, err := LockFile(context.Background(), path, unix.LOCK_EX, time.Now())
	if err != nil {
		t.Fatalf("a take with no wait of a lock let go at once: %v", err)
	}
	unix.Close(fd)
}

// A candidate state directory is passed over only when it can never be
// used as the environment stands (not ours to write, a read-only file
// system, a file in the way); one that fails for a while (full, out of
// descriptors, an I/O error) is the error, coded, naming it: passed over,
// a commit journaled in the next candidate was orphaned once the first
// had room again, every later call using it, and read half applied.
func TestStateDirFallsBackOnlyForGood(t *testing.T) {
	base := t.TempDir()
	t.Setenv(StateDirEnv, "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "x"))
	first := filepath.Join(base, "x", "agentfs")
	for _, tc := range []struct {
		err  error
		code fault.Code // "" when the next candidate is picked
		hint string
	}{
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EACCES}},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EPERM}},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EROFS}},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.ENOTDIR}},
		{err: &notPrivate{fe: fault.Errorf(fault.CodeNotConfigured, "another user's")}},
		{err: &notPrivate{fe: fault.Errorf(fault.CodeNotConfigured, "%s is not private", first), mend: "chmod 700 " + first}, code: fault.CodeNotConfigured, hint: "chmod 700"},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.ENOSPC}, code: fault.CodeNoSpace, hint: "free some space"},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EDQUOT}, code: fault.CodeNoSpace, hint: "free some space"},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EMFILE}, code: fault.CodeIOError, hint: "ulimit -n"},
		{err: &os.PathError{Op: "mkdir", Path: first, Err: unix.EIO}, code: fault.CodeIOError, hint: "writable"},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			got, err := pickStateDir(func(d string) error {
				if d == first {
					return tc.err
				}
				return nil
			})
			if tc.code == "" {
				if err != nil || got == first || got == "" {
					t.Errorf("got %q, %v; want the next candidate", got, err)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != tc.code || !strings.Contains(fe.Message, first) || !strings.Contains(fe.Hint, tc.hint) {
				t.Errorf("got %q, %v; want %s naming %s, hint with %q", got, err, tc.code, first, tc.hint)
			}
		})
	}
}

// twoCandidates is an environment of two default candidate state
// directories, both made: the home's, which it picks, and the temporary
// directory's, later in the order, which it returns.
func twoCandidates(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	t.Setenv(StateDirEnv, "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", filepath.Join(base, "home"))
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	must(t, os.MkdirAll(filepath.Join(base, "home", ".local", "state", "agentfs"), 0o700))
	must(t, os.Mkdir(filepath.Join(base, "tmp"), 0o700))
	later := filepath.Join(base, "tmp", fmt.Sprintf("agentfs-%d", os.Getuid()))
	must(t, os.Mkdir(later, 0o700))
	return later
}

// A dead commit journaled in another candidate state directory than the
// one this environment picks now (the first had no room then, or its home
// was not there yet) is recovered all the same.
func TestJournalInAnotherCandidateIsRecovered(t *testing.T) {
	old := twoCandidates(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	p := deadCommit(t, dir, old)
	if got, _ := stateDir(); got == old {
		t.Fatalf("the environment picks %s, want the home's", got)
	}
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	if b, err := os.ReadFile(p); err != nil || string(b) != "old\n" {
		t.Errorf("a.txt: %q, %v; want the dead commit undone", b, err)
	}
	if n := journalsLeft(t, old); n != 0 {
		t.Errorf("%d journals left in %s", n, old)
	}
}

// Every failure of the state directory has one code, whatever the file:
// the directory named by AGENTFS_STATE_DIR that cannot be made is coded
// as a lock file, a journal or an index that cannot be written there.
func TestStateDirFaultCodes(t *testing.T) {
	d := filepath.Join(t.TempDir(), "s")
	t.Setenv(StateDirEnv, d)
	for _, tc := range []struct {
		err  error
		code fault.Code
		hint string
	}{
		{unix.ENOSPC, fault.CodeNoSpace, "free some space"},
		{unix.EDQUOT, fault.CodeNoSpace, "free some space"},
		{unix.EROFS, fault.CodeReadOnly, "read-only file system"},
		{unix.EACCES, fault.CodePermissionDenied, StateDirEnv},
		{unix.EPERM, fault.CodePermissionDenied, StateDirEnv},
		{unix.EMFILE, fault.CodeIOError, "ulimit -n"},
		{unix.EIO, fault.CodeIOError, "writable"},
		{unix.ENOTDIR, fault.CodeIOError, "a file is in the way"},
		{unix.EEXIST, fault.CodeIOError, "a file is in the way"},
		{unix.EFBIG, fault.CodeTooLarge, "ulimit -f"},
	} {
		_, err := pickStateDir(func(string) error { return &os.PathError{Op: "mkdir", Path: d, Err: tc.err} })
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != tc.code || !strings.Contains(fe.Message, d) || !strings.Contains(fe.Hint, tc.hint) {
			t.Errorf("%v: %v, want %s naming %s, hint with %q", tc.err, err, tc.code, d, tc.hint)
		}
		if code, hint := StateDirFault(tc.err); code != tc.code || !strings.Contains(hint, tc.hint) {
			t.Errorf("StateDirFault(%v) = %s, %q; want %s", tc.err, code, hint, tc.code)
		}
	}
}

// A relative $TMPDIR is passed over for /tmp, as a relative
// AGENTFS_STATE_DIR, XDG_STATE_HOME or HOME is: each working directory had
// its own state directory, and a journal left by a call from one was never
// recovered by calls from another, which read the half-applied change.
func TestStateDirCandidatesSkipRelativeTmpdir(t *testing.T) {
	t.Setenv(StateDirEnv, "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", "rel")
	want := filepath.Join("/tmp", fmt.Sprintf("agentfs-%d", os.Getuid()))
	if got := stateDirCandidates(); len(got) != 1 || got[0] != want {
		t.Errorf("candidates %q, want [%s]", got, want)
	}
}

// A default candidate state directory of this user's that is not private
// (a wrong mode, a link in its place) is the error, NOT_CONFIGURED naming
// it with the hint to mend it, not passed over: the next one was picked
// without a word, its journals never looked at, and reads answered a dead
// commit's content with exit 0. Its journals are still never recovered
// while it is not private (one planted there could rename files over the
// user's): while it holds one, reads and mutations under the roots are
// refused. One of another user's is passed over: this user can neither
// mend it nor recover from it.
func TestNonPrivateCandidateIsNotPassedOver(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, d string)
		inHint string
	}{
		{"shared", func(t *testing.T, d string) { must(t, os.Chmod(d, 0o777)) }, "chmod 700"},
		{"a link", func(t *testing.T, d string) {
			must(t, os.Rename(d, d+".real"))
			must(t, os.Symlink(d+".real", d))
		}, "replace the link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			t.Setenv(StateDirEnv, "")
			t.Setenv("XDG_STATE_HOME", "")
			t.Setenv("HOME", filepath.Join(base, "home"))
			t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
			must(t, os.Mkdir(filepath.Join(base, "tmp"), 0o700))
			state := filepath.Join(base, "home", ".local", "state", "agentfs")
			must(t, os.MkdirAll(state, 0o700))
			dir, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			p := deadCommit(t, dir, state)
			tc.spoil(t, state)
			notConfigured := func(what string, err error) {
				t.Helper()
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != fault.CodeNotConfigured || !strings.Contains(fe.Message, state) || !strings.Contains(fe.Hint, tc.inHint) || strings.Contains(fe.Hint, "set "+StateDirEnv) {
					t.Errorf("%s: %v; want NOT_CONFIGURED naming %s, hint with %q and not to set %s", what, err, state, tc.inHint, StateDirEnv)
				}
			}
			_, err = stateDir()
			notConfigured("the state directory", err)
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			ctx := context.Background()
			r, err := fsys.Open(ctx, "a.txt")
			if err == nil {
				r.Close()
			}
			notConfigured("open a.txt", err)
			unlock, err := fsys.Lock(ctx, "a.txt", time.Second)
			if err == nil {
				unlock()
			}
			notConfigured("lock a.txt", err)
			if b, _ := os.ReadFile(p); string(b) != "staged new\n" {
				t.Errorf("a.txt %q: recovered from a directory that is not private", b)
			}
		})
	}
}

// A later candidate than the one picked, of this user's but not private,
// is looked into: while it holds a journal, reads of the roots are refused
// (NOT_CONFIGURED), nothing recovered from it; without one it is nothing
// to them. One of another user's is passed over (root only: chown).
func TestNonPrivateLaterCandidateWithJournals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		journal bool
		owner   int
		refused bool
	}{
		{"holding a journal", true, os.Getuid(), true},
		{"without a journal", false, os.Getuid(), false},
		{"another user's", true, 65534, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner != os.Getuid() && os.Getuid() != 0 {
				t.Skip("chown: run as root")
			}
			later := twoCandidates(t)
			dir, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			if tc.journal {
				deadCommit(t, dir, later)
			} else {
				must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
			}
			must(t, os.Chmod(later, 0o777))
			must(t, os.Chown(later, tc.owner, -1))
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			must(t, err)
			defer fsys.Close()
			r, err := fsys.Open(context.Background(), "a.txt")
			if err == nil {
				r.Close()
			}
			if got := code(err) == fault.CodeNotConfigured; got != tc.refused {
				t.Errorf("open a.txt: %v; want refused %v", err, tc.refused)
			}
			if tc.journal && journalsLeft(t, later) != 1 {
				t.Errorf("a journal recovered from a directory that is not private")
			}
		})
	}
}

// A LockAll that fails part way (a lock timeout on a later path, on its
// lock file or on the file itself; a full state directory) removes the
// lock files of the paths it had taken exclusively, as its release does:
// a replace over 600 files left 600, and in a full state directory every
// later mutation was NO_SPACE until the day's sweep.
func TestFailedLockAllLeavesNoLockFiles(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "z.txt"), nil, 0o644))
	locks, err := lockDir()
	must(t, err)
	// The lock files of the directories stay: made by a LockAll that
	// succeeds.
	unlock, err := fsys.LockAll(ctx, []string{"a.txt", "b.txt", "m.txt", "z.txt"}, time.Second)
	must(t, err)
	unlock()
	before := entryNames(t, locks)
	unlock, err = fsys.Lock(ctx, "m.txt", time.Second)
	must(t, err)
	_, err = fsys.LockAll(ctx, []string{"a.txt", "b.txt", "m.txt"}, 0)
	unlock()
	if code(err) != fault.CodeLockTimeout {
		t.Fatalf("LockAll while m.txt is held: %v, want LOCK_TIMEOUT", err)
	}
	if after := entryNames(t, locks); !slices.Equal(after, before) {
		t.Errorf("a LockAll that timed out on its lock files left %d lock files, had %d", len(after), len(before))
	}
	// The file's own flock, taken after every lock file.
	fd, err := unix.Open(filepath.Join(dir, "z.txt"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	must(t, unix.Flock(fd, unix.LOCK_EX))
	before = entryNames(t, locks)
	if _, err = fsys.LockAll(ctx, []string{"a.txt", "b.txt", "z.txt"}, 0); code(err) != fault.CodeLockTimeout {
		t.Fatalf("LockAll while z.txt is flocked: %v, want LOCK_TIMEOUT", err)
	}
	if after := entryNames(t, locks); !slices.Equal(after, before) {
		t.Errorf("a LockAll that timed out on a file's own lock left %d lock files, had %d", len(after), len(before))
	}
	// Asked to end (SIGINT) with every lock free: it took them all
	// before it looked, and the process, past its grace, left them.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err = fsys.LockAll(cancelled, []string{"a.txt", "b.txt", "m.txt"}, time.Second); code(err) != fault.CodeInterrupted {
		t.Fatalf("LockAll asked to end: %v, want INTERRUPTED", err)
	}
	if after := entryNames(t, locks); !slices.Equal(after, before) {
		t.Errorf("a LockAll asked to end left %d lock files, had %d", len(after), len(before))
	}
}

// entryNames are the names in dir, sorted.
func entryNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
