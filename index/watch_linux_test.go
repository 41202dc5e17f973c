package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// watch starts a watcher of f's tree in a process of its own, building
// again when changes are quiet for quiet, and returns it once it answers.
// It is stopped, and must exit 0, when the test ends.
func (f *fixture) watch(quiet time.Duration) *exec.Cmd {
	f.t.Helper()
	cmd := startChild(f.t, "ready\n", watcherDir+"="+f.dir, watcherQuiet+"="+quiet.String())
	f.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				f.t.Errorf("the watcher: %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			f.t.Error("the watcher did not stop on SIGTERM")
		}
	})
	return cmd
}

// answer is the watcher's answer about the index now in place.
func (f *fixture) answer() (watchReply, bool) {
	f.t.Helper()
	ix := f.openIndex()
	defer ix.Close()
	return askWatcher(context.Background(), ix)
}

// awaitAnswer waits, at most 30 s, for the watcher to answer about the
// index in place: after it has built again.
func (f *fixture) awaitAnswer() {
	f.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if _, ok := f.answer(); ok {
			return
		}
	}
	f.t.Fatal("the watcher did not answer again within 30 s")
}

// The differential test with a watcher: searches answer as scans while
// the tree changes, the watcher building again now and then (quiet: only
// when told, busy: after every change, while the searches run).
func TestWatchedGrepEqualsScan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet time.Duration
	}{{"quiet", time.Hour}, {"busy", time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSeededFixture(t, 7)
			f.seed()
			f.ageDirs()
			f.watch(tc.quiet)
			answered := 0
			const searches = 300
			for i := range searches {
				if i%3 == 0 {
					f.mutate()
				}
				req := f.randomGrep()
				if f.rng.IntN(4) == 0 {
					req.Context = 1
				}
				f.same(req)
				if _, ok := f.answer(); ok {
					answered++
				}
			}
			if tc.name == "quiet" && answered != searches {
				t.Fatalf("the watcher answered for %d of %d searches", answered, searches)
			}
			if f.skipped == 0 || answered == 0 {
				t.Fatalf("%d files skipped, %d searches answered by the watcher: the test proves too little", f.skipped, answered)
			}
			t.Logf("%d searches answered by the watcher, %d files skipped", answered, f.skipped)
		})
	}
}

// The watcher names only the directories where something happened, and
// sees a write through a name outside the tree (a hard link made after
// the watch began), which no directory's watch reports.
func TestWatcherNamesWhatChanged(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	f.watch(time.Hour)
	expect := func(step string, dirs, trees []string) {
		t.Helper()
		r, ok := f.answer()
		if !ok {
			t.Fatalf("%s: the watcher does not answer", step)
		}
		slices.Sort(r.Dirs)
		slices.Sort(r.Trees)
		if !slices.Equal(r.Dirs, dirs) || !slices.Equal(r.Trees, trees) {
			t.Fatalf("%s: the watcher names dirs %q trees %q, want %q %q", step, r.Dirs, r.Trees, dirs, trees)
		}
	}
	expect("nothing changed", nil, nil)

	// In place, the same size, the mtime set back.
	p := filepath.Join(f.dir, "d2/sub2/f2.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd.WriteAt([]byte("x"), 0)
	fd.Close()
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	expect("an edit in place", []string{"d2/sub2"}, nil)

	if err := os.Mkdir(filepath.Join(f.dir, "d3/made"), 0o755); err != nil {
		t.Fatal(err)
	}
	expect("a directory made", []string{"d2/sub2", "d3"}, []string{"d3/made"})

	// A hard link made outside the tree, then a write through it alone.
	target := filepath.Join(f.dir, "d0/sub0/f0.txt")
	outside := filepath.Join(t.TempDir(), "alias")
	if err := os.Link(target, outside); err != nil {
		t.Fatal(err)
	}
	expect("a hard link made outside", []string{"d0/sub0", "d2/sub2", "d3"}, []string{"d3/made"})
	fi, err = os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	fd, err = os.OpenFile(outside, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd.WriteAt([]byte("needle\n"), 0)
	fd.Close()
	os.Chtimes(outside, fi.ModTime(), fi.ModTime())
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	if !slices.Contains(f.grepFiles("needle"), "d0/sub0/f0.txt") {
		t.Fatal("a write through a name outside the tree is not found")
	}
}

// A second watcher of a tree is refused.
func TestOneWatcherPerTree(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.watch(time.Hour)
	err := Watch(context.Background(), f.fsys, f.dir, f.dir, WatchOptions{})
	if fault.AsError(err).Code != fault.CodeExists {
		t.Fatalf("a second watcher: %v", err)
	}
}

// A watcher started as another ends (it holds the tree's watch lock for
// up to 200 ms after SIGTERM) waits for the lock and starts: tried once,
// it was EXISTS, "already running", with none running. A lock held past
// --lock-timeout by a watcher that does not answer (building) is
// LOCK_TIMEOUT, not EXISTS.
func TestWatcherWaitsForAnEndingOnesLock(t *testing.T) {
	f := newFixture(t)
	f.seed()
	loc := f.location()
	unlock, err := lock(context.Background(), loc.watchLock, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = Watch(context.Background(), f.fsys, f.dir, f.dir, WatchOptions{BuildOptions: BuildOptions{LockTimeout: 10 * time.Millisecond}})
	if fault.AsError(err).Code != fault.CodeLockTimeout {
		t.Errorf("a watcher whose lock another that does not answer holds: %v, want LOCK_TIMEOUT", err)
	}
	waiting := make(chan struct{})
	var once sync.Once
	watchLockWaitHook = func() { once.Do(func() { close(waiting) }) }
	defer func() { watchLockWaitHook = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- Watch(ctx, f.fsys, f.dir, f.dir, WatchOptions{BuildOptions: BuildOptions{LockTimeout: time.Minute}, Ready: func(Status) { close(ready) }})
	}()
	select {
	case <-waiting:
		unlock() // the other watcher ends
	case err := <-ended:
		t.Fatalf("a watcher started as another ended: %v, want it to wait for the lock", err)
	}
	select {
	case <-ready:
	case err := <-ended:
		t.Fatalf("a watcher started as another ended: %v", err)
	}
	cancel()
	if err := <-ended; err != nil {
		t.Errorf("the watcher: %v", err)
	}
}

// A watcher whose state directory was replaced, an index built again in
// the new one before the watcher looked, ends: it took the new index file
// for its own and went on unseen, its socket gone, while a second watcher
// could start.
func TestWatcherEndsWhenItsStateDirectoryIsReplaced(t *testing.T) {
	f := newFixture(t)
	f.seed()
	state := os.Getenv(localfs.StateDirEnv)
	ready, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		// A build again locates the index by the environment, which names
		// the new state directory while the test builds in it: the watcher
		// waits for that build's lock, as agentfs's --lock-timeout has it.
		opts := WatchOptions{Quiet: 40 * time.Millisecond, Ready: func(Status) { close(ready) }}
		opts.LockTimeout = time.Minute
		ended <- Watch(context.Background(), f.fsys, f.dir, f.dir, opts)
	}()
	select {
	case <-ready:
	case err := <-ended:
		t.Fatal(err)
	}
	// The new state directory, its index built, takes the old one's place
	// in one exchange: with two renames, a tick of the watcher between
	// them (under load) found no state directory at all, and the watcher
	// ended for that.
	fresh := state + ".new"
	if err := os.Mkdir(fresh, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(localfs.StateDirEnv, fresh)
	f.build()
	if err := unix.Renameat2(unix.AT_FDCWD, fresh, unix.AT_FDCWD, state, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("no RENAME_EXCHANGE here: %v", err)
	}
	t.Setenv(localfs.StateDirEnv, state)
	select {
	case err := <-ended:
		if !errors.Is(err, errStateReplaced) {
			t.Errorf("the watcher ended with %v, want errStateReplaced", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher of a replaced state directory went on")
	}
}

// A file system mounted on a directory of the tree, or taken off it,
// raises no inotify event: a search still answers as a scan, the
// watcher's answer not trusted while its mounts differ from the search's.
func TestWatcherSeesMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount; CI runs it as root (sudo go test ./index -run WatcherSeesMounts)")
	}
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	f.watch(time.Hour)
	if _, ok := f.answer(); !ok {
		t.Fatal("the watcher does not answer before the mount")
	}
	point := filepath.Join(f.dir, "d2/sub2")
	covered := f.grepFiles("needle")
	if err := unix.Mount("tmpfs", point, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount is not permitted here (%v)", err)
	}
	mounted := true
	unmount := func() {
		if mounted {
			mounted = false
			if err := unix.Unmount(point, unix.MNT_DETACH); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(unmount)
	f.put("d2/sub2/mounted.txt", "needle under a mount\n")
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	f.same(core.GrepRequest{Query: "needle under", Path: f.dir})
	if !slices.Contains(f.grepFiles("needle under"), "d2/sub2/mounted.txt") {
		t.Fatal("a file on a file system mounted in the tree is not found")
	}
	for _, q := range []string{"the", "a", "needle"} {
		f.same(core.GrepRequest{Query: q, Path: f.dir})
	}
	// The watcher builds again and watches the mounted files too.
	f.awaitAnswer()
	f.put("d2/sub2/later.txt", "needle after the watch\n")
	f.same(core.GrepRequest{Query: "needle after", Path: f.dir})
	if r, ok := f.answer(); !ok || !slices.Contains(r.Dirs, "d2/sub2") {
		t.Fatalf("a file made on the mount: the watcher answers %v %+v, want d2/sub2 named", ok, r)
	}
	unmount()
	f.same(core.GrepRequest{Query: "needle under", Path: f.dir})
	if got := f.grepFiles("needle"); !slices.Equal(got, covered) {
		t.Fatalf("after the unmount grep finds %q, before the mount %q", got, covered)
	}
}

// Events kick a build when the changes are too many to name, but not when
// the directories always checked (a network file system's, ones no watch
// could be added to) are: no build makes those fewer, and each event
// would start one.
func TestAlwaysCheckedDirsKickNoBuild(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	wd, err := unix.InotifyAddWatch(fd, dir, dirEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		always, dirs int
		wantRebuild  bool
	}{
		{"always checked", maxWatchReply + 1, 0, false},
		{"changed", 0, maxWatchReply + 1, true},
	} {
		x := &watcher{fd: fd, watches: map[int32]watchTarget{int32(wd): {rels: []string{""}, dir: true}},
			changes: newChangeSet(), events: make([]byte, 64<<10), kick: make(chan struct{}, 1)}
		for i := range tc.always {
			x.changes.always[fmt.Sprint("nfs/", i)] = true
		}
		for i := range tc.dirs {
			x.changes.dirs[fmt.Sprint("d/", i)] = true
		}
		if err := os.WriteFile(filepath.Join(dir, tc.name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		x.drain()
		if !x.changes.dirs[""] {
			t.Fatalf("%s: the event was not read", tc.name)
		}
		if got := len(x.kick) == 1; got != tc.wantRebuild {
			t.Errorf("%s: a build asked for: %v, want %v", tc.name, got, tc.wantRebuild)
		}
	}
}

// A search that asks while the watcher installs a new build (watching
// every file, under its lock, a second or more on a large tree) is
// answered at once, not OK, and takes the stat pass: it does not wait.
func TestAnswerDuringInstallIsImmediate(t *testing.T) {
	x := &watcher{changes: newChangeSet(), kick: make(chan struct{}, 1)}
	defer x.lockInstall()()
	search, watcher := net.Pipe()
	defer search.Close()
	go x.answer(watcher)
	search.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(search).Encode(watchRequest{Gen: "g"}); err != nil {
		t.Fatalf("the question was not taken: %v", err)
	}
	var r watchReply
	if err := json.NewDecoder(search).Decode(&r); err != nil {
		t.Fatalf("no answer while installing: %v", err)
	}
	if r.OK || r.Gen != "g" || len(x.kick) != 0 {
		t.Fatalf("answer while installing: %+v, build asked for: %v", r, len(x.kick) != 0)
	}
}

// A build asked for while another was made (a search saw mounts, or a
// generation, that the build in progress replaces) is not made once that
// one is installed: made at once, its install kept searches unanswered
// (TestWatcherSeesMounts failed 3 times in 130 so). A search that still
// differs asks again.
func TestInstallForgetsBuildsAskedOfTheOld(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	x := f.install()
	x.rebuildSoon()
	x.install(f.openIndex(), "")
	if len(x.kick) != 0 {
		t.Fatal("installed, the build is made again for a question about the one it replaced")
	}
}

// A build that could not prove an ignore file's rules (rewritten as it
// was walked) is due to be built again once installed: until then every
// search walks. A build that proved them is not.
func TestUnprovenRulesBuildAgain(t *testing.T) {
	for _, tc := range rulesChangeCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.rulesChangedDuringBuild(tc.rules, tc.changeAt)
			if x := f.install(); !x.changes.rules {
				t.Fatal("installed, the build that could not prove its rules is not due to be built again")
			}
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(f.dir, tc.rules), old, old); err != nil {
				t.Fatal(err)
			}
			f.update(f.fsys)
			if x := f.install(); x.changes.rules {
				t.Fatal("installed, a build that proved its rules is due to be built again")
			}
		})
	}
}

// install installs the index of f's tree in a watcher of this process,
// closed when the test ends.
func (f *fixture) install() *watcher {
	f.t.Helper()
	ix := f.openIndex()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		f.t.Fatal(err)
	}
	x := &watcher{fd: fd, watches: map[int32]watchTarget{}, changes: newChangeSet(), events: make([]byte, 64<<10), kick: make(chan struct{}, 1)}
	x.install(ix, "")
	f.t.Cleanup(func() {
		x.ix.Close()
		unix.Close(fd)
	})
	return x
}

// The rules files outside the index's files (here .git/info/exclude) have
// no watch: the watcher looks at them as a search does and builds again
// when one changed, after which searches take the index's list again
// instead of walking until some other change.
func TestWatcherBuildsAgainWhenOutsideRulesChange(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put(".git/info/exclude", "f1*.txt\n")
	f.ageDirs()
	f.watch(50 * time.Millisecond)
	before := f.gen()
	f.put(".git/info/exclude", "f2*.txt\nf3*.txt\n")
	req := core.GrepRequest{Query: "needle", Mode: "files", Path: f.dir}
	if f.tookList(req) {
		t.Fatal("with the exclude file changed, the search took the index's list")
	}
	for deadline := time.Now().Add(30 * time.Second); f.gen() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not build again within 30 s of the exclude file's change")
		}
	}
	f.awaitAnswer()
	if !f.tookList(req) {
		t.Fatal("after the watcher built again, the search did not take the index's list")
	}
}

// A file written without a pause as long as the watcher's quiet spell (a
// log, here one the rules ignore) does not keep the watcher from building
// again: it waited for a quiet spell that never came, and once more
// directories had changed than a search lists again, every search walked
// the whole tree for as long as the log was written.
func TestWatcherBuildsAgainUnderSteadyWrites(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	const quiet = 500 * time.Millisecond
	f.watch(quiet)
	before := f.gen()
	fd, err := os.OpenFile(filepath.Join(f.dir, "ignored.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	f.put("d1/sub1/new.txt", "needle made after the build\n")
	for start := time.Now(); f.gen() == before; {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("written every 10 ms for 30 s, the watcher (quiet %v) did not build again", quiet)
		}
		fmt.Fprintln(fd, "a log line")
		time.Sleep(10 * time.Millisecond) // the writer's pace, shorter than quiet
	}
}

// A watcher that, past max_user_watches, leaves more directories without
// a watch than its answer names ends with ErrWatchLimit and is never said
// to watch: it ran on holding every watch it got, answering no search;
// --detach said watched, --status did not, and a second --detach waited
// the whole --lock-timeout, told that it was building or ending. One that
// leaves fewer runs, and answers.
func TestWatcherPastTheWatchLimitEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed int // watches added before ENOSPC
		wantErr bool
	}{{"few watched", 10, true}, {"most watched", 100000, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			for i := range maxWatchReply + 100 {
				f.put(fmt.Sprintf("many/%d/f.txt", i), "a line\n")
			}
			f.ageDirs()
			added := 0
			inotifyAddWatch = func(fd int, name string, mask uint32) (int, error) {
				if added >= tc.allowed {
					return -1, unix.ENOSPC
				}
				added++
				return unix.InotifyAddWatch(fd, name, mask)
			}
			defer func() { inotifyAddWatch = unix.InotifyAddWatch }()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := false
			err := Watch(ctx, f.fsys, f.dir, f.dir, WatchOptions{
				BuildOptions: BuildOptions{LockTimeout: time.Minute, Config: f.fsys.Fingerprint(), Roots: f.fsys.Roots()},
				Ready:        func(Status) { ready = true; cancel() },
			})
			if tc.wantErr && (!errors.Is(err, ErrWatchLimit) || ready) {
				t.Fatalf("a watcher with %d watches for %d directories: %v, said ready %v; want ErrWatchLimit, never ready", tc.allowed, maxWatchReply+100, err, ready)
			}
			if !tc.wantErr && (err != nil || !ready) {
				t.Fatalf("a watcher with every watch: %v, said ready %v", err, ready)
			}
		})
	}
}

// Looking at the outside rules files flags nothing while they are as
// built: a watcher would otherwise build again and again.
func TestPollRulesFlagsOnlyAChange(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put(".git/info/exclude", "f1*.txt\n")
	f.build()
	x := f.install()
	x.pollRules()
	if x.changes.rules {
		t.Fatal("nothing changed, yet the watcher is due to build again")
	}
	f.put(".git/info/exclude", "f2*.txt\nf3*.txt\n")
	x.pollRules()
	if !x.changes.rules || time.Since(x.last) > time.Minute {
		t.Fatalf("the exclude file changed, yet the watcher is not due to build again (last event %v)", x.last)
	}
}

// gen tells the build of the index now in place.
func (f *fixture) gen() string {
	f.t.Helper()
	ix := f.openIndex()
	defer ix.Close()
	return ix.gen
}

// startWatch runs a watcher of f's tree in this process with opts, and
// returns once it answers; Watch's error comes on the channel when it
// ends.
func (f *fixture) startWatch(opts WatchOptions) <-chan error {
	f.t.Helper()
	ready := make(chan Status, 1)
	ended := make(chan error, 1)
	opts.BuildOptions = BuildOptions{LockTimeout: time.Minute, Config: f.fsys.Fingerprint(), Roots: f.fsys.Roots()}
	opts.Ready = func(st Status) { ready <- st }
	go func() { ended <- Watch(context.Background(), f.fsys, f.dir, f.dir, opts) }()
	select {
	case st := <-ready:
		if !st.Watched || st.WatcherPid != os.Getpid() {
			f.t.Fatalf("Ready said watched %v, pid %d; want true, %d", st.Watched, st.WatcherPid, os.Getpid())
		}
	case err := <-ended:
		f.t.Fatalf("the watcher ended before it answered: %v", err)
	}
	return ended
}

// awaitEnd waits, at most 30 s, for the watcher to end, and returns its
// error.
func awaitEnd(t *testing.T, ended <-chan error) error {
	t.Helper()
	select {
	case err := <-ended:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not end within 30 s")
		return nil
	}
}

// A watcher with Idle ends, exit 0, once no search has asked for that
// long: index --detach's watcher does not outlive the work.
func TestWatcherEndsWhenIdle(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ended := f.startWatch(WatchOptions{Idle: 200 * time.Millisecond})
	if r, ok := f.answer(); !ok || r.Pid != os.Getpid() {
		t.Fatalf("the watcher answered %+v, %v", r, ok)
	}
	if err := awaitEnd(t, ended); err != nil {
		t.Fatalf("an idle watcher ended with %v, want nil", err)
	}
	if _, ok := f.answer(); ok {
		t.Fatal("a watcher that ended still answers")
	}
	if st, err := StatusOf(f.dir, nil); err != nil || st.Watched || st.WatcherPid != 0 {
		t.Fatalf("status after the watcher ended: %+v, %v", st, err)
	}
}

// A watcher whose tree is removed ends, and leaves nothing of the tree in
// the state directory: no later build need sweep its index.
func TestWatcherOfARemovedTreeLeavesNothing(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ended := f.startWatch(WatchOptions{Quiet: 10 * time.Millisecond})
	loc := f.location()
	if err := os.RemoveAll(f.dir); err != nil {
		t.Fatal(err)
	}
	if err := awaitEnd(t, ended); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the watcher of a removed tree ended with %v, want ENOENT", err)
	}
	entries, err := os.ReadDir(filepath.Dir(loc.file))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left in the state directory: %s", e.Name())
	}
}

// Drop ends the index's watcher and says so; the word to stop is checked:
// while the index is in place, the watcher goes on.
func TestDropEndsTheWatcher(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ended := f.startWatch(WatchOptions{Quiet: time.Hour})
	if r, err := exchange(context.Background(), socketName(f.location().file), watchRequest{Stop: true}); err != nil || r.OK {
		t.Fatalf("the reply to a stop request: %+v, %v", r, err)
	}
	if _, ok := f.answer(); !ok {
		t.Fatal("the watcher stopped answering after a stop request for an index in place")
	}
	if st, err := StatusOf(f.dir, nil); err != nil || !st.Watched || st.WatcherPid != os.Getpid() {
		t.Fatalf("status: %+v, %v; want watched by %d", st, err, os.Getpid())
	}
	stopped, err := Drop(context.Background(), f.dir, nil, time.Second)
	if err != nil || !stopped {
		t.Fatalf("Drop: stopped %v, %v; want true, nil", stopped, err)
	}
	if err := awaitEnd(t, ended); fault.AsError(err).Code != fault.CodeNotFound {
		t.Fatalf("the dropped index's watcher ended with %v, want NOT_FOUND", err)
	}
	if stopped, err := Drop(context.Background(), f.dir, nil, time.Second); !IsNoIndex(err) || stopped {
		t.Fatalf("a second Drop: %v, %v", stopped, err)
	}
}

// A watcher's build again that waited for the builders' lock while Drop
// removed the index writes nothing: Drop said the index was gone.
func TestBuildAgainAfterDropWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	x := f.install()
	x.w, x.path, x.abs, x.loc = f.fsys, f.dir, f.dir, f.location()
	x.opts.BuildOptions = BuildOptions{LockTimeout: time.Minute}
	unlock, err := lock(context.Background(), x.loc.lock, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := x.refresh(context.Background())
		done <- err
	}()
	if err := os.Remove(x.loc.file); err != nil { // Drop's removal, under the lock
		t.Fatal(err)
	}
	unlock()
	if err := awaitEnd(t, done); err != errDropped {
		t.Fatalf("the build again: %v, want errDropped", err)
	}
	if _, err := os.Lstat(x.loc.file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dropped index is back: %v", err)
	}
}

// A file changed within 2 s of the build (racy: every search reads it)
// in a directory that did not change (chmod, touch, a write in place just
// before the watcher started) raises no event once quiet: the build is
// due again, which trusts it. One dated ahead of the clock is racy at
// every build, and builds nothing again.
func TestRacyFileBuildsAgain(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	f.update(f.fsys)
	if x := f.install(); x.changes.size() > 0 {
		t.Fatalf("installed, a quiet build is due again: %+v", x.changes)
	}
	f.fresh("d0/sub0/f0.txt")
	f.update(f.fsys)
	x := f.install()
	if !x.changes.racy || x.changes.size() == 0 {
		t.Fatalf("installed, the build of a racy file is not due again: %+v", x.changes)
	}
	// The build asked for finds it racy again (written through mmap,
	// which raises no event, it is at every build): not due again, or the
	// watcher would build every tick.
	f.update(f.fsys)
	ix := f.openIndex()
	if i := slices.IndexFunc(ix.files, func(e fileEntry) bool { return e.rel == "d0/sub0/f0.txt" }); i < 0 || ix.files[i].flags&flagRacy == 0 {
		t.Fatal("the build asked for is not of a racy file: the check below proves nothing")
	}
	x.install(ix, "")
	if x.changes.size() > 0 {
		t.Fatalf("installed, a build for a racy file alone is due again: %+v", x.changes)
	}
	ahead := now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, "d0/sub0/f0.txt"), ahead, ahead); err != nil {
		t.Fatal(err)
	}
	f.update(f.fsys)
	if x := f.install(); x.changes.racy {
		t.Fatal("installed, the build of a file dated ahead is due again, as every build after it would be")
	}
}

// A watched directory dated ahead of the clock is recorded with no
// version at every build (changed too recently to trust), which every
// search lists again: installed, it is no change, or the watcher built
// again at every tick for as long as it ran. One changed just before the
// build is a change: the build asked for, once it is older, records its
// version.
func TestDirDatedAheadBuildsNothingAgain(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	f.fresh("d1")
	f.update(f.fsys)
	if x := f.install(); !x.changes.dirs["d1"] {
		t.Fatalf("installed, the build of a directory changed just before it is not due again: %+v", x.changes)
	}
	ahead := now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, "d1"), ahead, ahead); err != nil {
		t.Fatal(err)
	}
	f.update(f.fsys)
	if x := f.install(); x.changes.size() > 0 {
		t.Fatalf("installed, the build of a directory dated ahead is due again, as every build after it would be: %+v", x.changes)
	}
}

// The directories checked by every search (a watch refused past
// max_user_watches, a network file system) are no event: a build asked
// for racy files alone, in a tree that has any, asks for no other either,
// or the watcher builds every tick as long as one file is written
// through mmap.
func TestRacyFileAloneWithAlwaysChecked(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.ageDirs()
	f.fresh("d0/sub0/f0.txt")
	f.update(f.fsys)
	x := f.install()
	if !x.changes.racy {
		t.Fatalf("installed, the build of a racy file is not due again: %+v", x.changes)
	}
	x.changes.always["d1"] = true // as install records a watch refused
	f.update(f.fsys)
	x.install(f.openIndex(), "")
	if x.changes.racy {
		t.Fatalf("installed, a build for a racy file alone is due again where a directory is always checked: %+v", x.changes)
	}
}

// A change below a directory whose name is not UTF-8 is seen while the
// watcher answers: its reply names directories byte for byte (JSON
// strings would turn \xff into U+FFFD and match no indexed directory).
func TestWatcherNamesNonUTF8Dirs(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("bad\xff/f.txt", "hello\n")
	f.put("bad\xff/deep\xfe/g.txt", "hello\n")
	f.ageDirs()
	f.watch(time.Hour)
	for i, rel := range []string{"bad\xff/f.txt", "bad\xff/deep\xfe/g.txt", "bad\xff/new.txt"} {
		p := filepath.Join(f.dir, rel)
		fd, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(fd, "mark%d\n", i)
		fd.Close()
		r, ok := f.answer()
		if !ok {
			t.Fatalf("%q: the watcher does not answer", rel)
		}
		if !slices.Contains(r.Dirs, parent(rel)) {
			t.Fatalf("%q: the watcher names dirs %q", rel, r.Dirs)
		}
		f.same(core.GrepRequest{Query: fmt.Sprintf("mark%d", i), Path: f.dir})
	}
}

// An answer naming a directory the index does not hold is not trusted:
// its files would count as unchanged, unchecked.
func TestToCheckRefusesUnknownDirs(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	ix := f.openIndex()
	defer ix.Close()
	for _, tc := range []struct {
		name        string
		r           watchReply
		want        bool
		wantChecked int
	}{
		{"indexed", watchReply{Dirs: rawPaths{"d0", "d1/sub1"}}, true, 2},
		{"the root", watchReply{Dirs: rawPaths{""}}, true, 1},
		{"a tree made since", watchReply{Dirs: rawPaths{"d0"}, Trees: rawPaths{"d0/new"}}, true, 1},
		{"unknown", watchReply{Dirs: rawPaths{"d0", "bad\ufffd"}}, false, 1},
	} {
		check, ok := tc.r.toCheck(ix)
		checked := 0
		for _, c := range check {
			if c {
				checked++
			}
		}
		if ok != tc.want || checked != tc.wantChecked {
			t.Errorf("%s: trusted %v, %d checked; want %v, %d", tc.name, ok, checked, tc.want, tc.wantChecked)
		}
	}
}

// A watcher of another version of the exchange is not trusted either
// way: one of version 1 sent paths as JSON strings, mangling names that
// are not UTF-8.
func TestWatchProtoMismatchIsNotTrusted(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	ix := f.openIndex()
	defer ix.Close()
	fakeWatcher(t, ix.name, func(conn net.Conn) {
		json.NewDecoder(conn).Decode(&watchRequest{})
		fmt.Fprintf(conn, "{\"ok\":true,\"gen\":%q}\n", ix.gen)
	})
	if r, ok := askWatcher(context.Background(), ix); ok {
		t.Fatalf("an answer of version 1 is trusted: %+v", r)
	}

	x := f.install()
	if r := x.reply(watchRequest{Gen: x.ix.gen}); r.OK {
		t.Fatalf("a question of version 1 is answered OK: %+v", r)
	}
	if r := x.reply(watchRequest{Proto: watchProto, Gen: x.ix.gen}); !r.OK {
		t.Fatalf("a question of this version is not answered OK: %+v", r)
	}
}

// fakeWatcher listens on the socket of the index file name until the test
// ends, answering each connection by answer, which it then closes.
func fakeWatcher(t *testing.T, name string, answer func(net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", socketName(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			answer(conn)
			conn.Close()
		}
	}()
}

// A watcher that cannot answer for a moment (a build installed by
// another, which it builds again; its own build being installed, its
// lock held while it watches every file) still runs: --status says so,
// with its pid. It said no watcher then, and a caller started another,
// or found no process to stop.
func TestStatusNamesTheWatcherWhileItInstalls(t *testing.T) {
	f := newFixture(t)
	f.seed()
	var hold atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	inotifyAddWatch = func(fd int, name string, mask uint32) (int, error) {
		if hold.Load() {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
		return unix.InotifyAddWatch(fd, name, mask)
	}
	defer func() { inotifyAddWatch = unix.InotifyAddWatch }()
	ended := f.startWatch(WatchOptions{Quiet: time.Hour})
	hold.Store(true)
	f.put("new.txt", "a new line\n")
	f.update(f.fsys) // another build: the watcher answers for it once it has built again
	check := func(when string) {
		t.Helper()
		if st, err := StatusOf(f.dir, nil); err != nil || !st.Watched || st.WatcherPid != os.Getpid() {
			t.Fatalf("status %s: watched %v, pid %d, %v; want watched by %d", when, st.Watched, st.WatcherPid, err, os.Getpid())
		}
	}
	check("with another's build in place")
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not build again within 30 s")
	}
	check("while the watcher installs its build")
	hold.Store(false)
	close(release)
	f.awaitAnswer()
	if _, err := Drop(context.Background(), f.dir, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, ended)
}

// A watcher records how it ended beside the index, which --status reads
// once no watcher runs: a --detach watcher's output goes nowhere once it
// answers, and one whose build again failed ended unseen (searches only
// grew slower). A watcher that runs, or starts, is never said to have
// ended; a new one, and a drop, take the record away.
func TestWatcherRecordsItsEnd(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ended := f.startWatch(WatchOptions{Quiet: time.Hour})
	loc := f.location()
	// Its build again fails: the builders' lock is no file.
	f.put("new.txt", "a new line\n")
	f.update(f.fsys)
	if err := os.Remove(loc.lock); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(loc.lock, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	f.answer() // about another build: the watcher builds again
	err := awaitEnd(t, ended)
	if fault.AsError(err).Code != fault.CodeIOError {
		t.Fatalf("the watcher ended with %v, want IO_ERROR", err)
	}
	st, serr := StatusOf(f.dir, nil)
	if e := st.WatcherEnded; serr != nil || st.Watched || e == nil || e.Code != "IO_ERROR" || e.Message != fault.AsError(err).Message ||
		e.Pid != os.Getpid() || e.At == nil || time.Since(*e.At) > time.Minute {
		t.Fatalf("status after the watcher failed: %+v (%+v), %v", st, st.WatcherEnded, serr)
	}
	if err := os.RemoveAll(loc.lock); err != nil {
		t.Fatal(err)
	}

	// A watcher that runs: none said to have ended.
	ended = f.startWatch(WatchOptions{Idle: 100 * time.Millisecond})
	if st, err := StatusOf(f.dir, nil); err != nil || st.WatcherEnded != nil {
		t.Fatalf("status while a new watcher runs: %+v (ended %+v), %v", st, st.WatcherEnded, err)
	}
	if err := awaitEnd(t, ended); err != nil {
		t.Fatalf("an idle watcher ended with %v", err)
	}
	if e := lastEnd(loc); e == nil || e.Code != "" || !strings.Contains(e.Message, "idle") || e.At == nil {
		t.Fatalf("the record of an idle end: %+v", e)
	}

	// One that holds the lock and does not answer yet (starting, or
	// ending): not said to have ended either.
	unlock, err := lock(context.Background(), loc.watchLock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if e := lastEnd(loc); e != nil {
		t.Fatalf("the watch lock held, the last watcher is said to have ended: %+v", e)
	}
	// One killed leaves the record it reserved as it started.
	reserveEnd(loc)
	unlock()
	if e := lastEnd(loc); e == nil || e.At != nil || e.Message != unrecordedEnd || e.Pid != os.Getpid() {
		t.Fatalf("the record of a watcher killed: %+v", e)
	}

	if _, err := Drop(context.Background(), f.dir, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(loc.ended); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the record outlives the index dropped: %v", err)
	}
}

// The record of a watcher's end is of its one size, its texts cut to fit.
func TestEndRecordIsBounded(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.ended")
	now := time.Now()
	long := strings.Repeat("/a\x01long\u00e9path", 2000)
	if err := writeEnd(name, WatcherEnd{Pid: 1, At: &now, Code: "IO_ERROR", Message: long, Hint: long}, true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	var e WatcherEnd
	if err != nil || len(b) != endRecordSize || json.Unmarshal(b, &e) != nil || e.Message == "" || !strings.HasPrefix(long, strings.TrimSuffix(e.Message, "…")) {
		t.Fatalf("the record: %d bytes, %v, message %q", len(b), err, e.Message)
	}
}

// A directory refused a watch is checked by every search, and so is every
// directory below it. Replaced (moved away, another made at its path)
// under a parent that has no watch either, it raises no event, nor do the
// directories it took along, whose watches stay on them: a subdirectory
// granted a watch (watches freed meanwhile, as ENOSPC's refusals need not
// last) was trusted, and the stale one's files taken for the new one's.
func TestDirsBelowAnUnwatchedOneAreAlwaysChecked(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("p/a/b/f.txt", "a haystack\n")
	f.ageDirs()
	f.refuseWatches("p", "p/a")
	ended := f.startWatch(WatchOptions{Quiet: time.Hour})
	if err := os.Rename(filepath.Join(f.dir, "p/a"), filepath.Join(f.dir, "p/old")); err != nil {
		t.Fatal(err)
	}
	f.put("p/a/b/f.txt", "a needle\n")
	if _, ok := f.answer(); !ok {
		t.Fatal("the watcher does not answer")
	}
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	if _, err := Drop(context.Background(), f.dir, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, ended)
}

// A watcher stopped (a terminal's ^Z) answers nothing: a search is told
// so at once, and stats the tree, where it waited watchTimeout for it
// every time; continued, it answers again.
func TestStoppedWatcherIsNotWaitedFor(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	cmd := f.watch(time.Hour)
	f.awaitAnswer()
	ix := f.openIndex()
	defer ix.Close()
	ask := func() error {
		_, err := exchange(context.Background(), socketName(ix.name), watchRequest{Proto: watchProto, Gen: ix.gen})
		return err
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Signal(syscall.SIGCONT) // for the cleanup's SIGTERM
	awaitState(t, cmd.Process.Pid, true)
	if err := ask(); !errors.Is(err, errWatcherStopped) {
		t.Fatalf("asking a stopped watcher: %v, want %v", err, errWatcherStopped)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	awaitState(t, cmd.Process.Pid, false)
	if err := ask(); err != nil {
		t.Fatalf("asking the watcher continued: %v", err)
	}
}

// awaitState waits, at most 30 s, until the process pid is stopped, or
// is not: a signal is delivered after kill(2) returns.
func awaitState(t *testing.T, pid int, stopped bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.LastIndexByte(stat, ')')
		if (stat[i+2] == 'T') == stopped {
			return
		}
	}
	t.Fatalf("process %d not stopped=%v within 30 s", pid, stopped)
}

// playOtherUser makes this process's peers count as another user's until
// the test ends.
func playOtherUser(t *testing.T) {
	other := os.Geteuid() + 1
	asUID.Store(&other)
	t.Cleanup(func() { asUID.Store(nil) })
}

// A search does not trust a socket answered by a process of another user
// (its answer could hide a change, and the search answer from a stale
// index): it stats the tree. The same answer from its own user is taken.
func TestWatcherOfAnotherUserIsNotTrusted(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	ix := f.openIndex()
	defer ix.Close()
	fakeWatcher(t, ix.name, func(conn net.Conn) {
		var req watchRequest
		json.NewDecoder(conn).Decode(&req)
		json.NewEncoder(conn).Encode(watchReply{Proto: watchProto, OK: true, Gen: req.Gen, Pid: os.Getpid()})
	})
	if r, ok := askWatcher(context.Background(), ix); !ok {
		t.Fatalf("the answer of this user's watcher is not taken: %+v", r)
	}
	playOtherUser(t)
	if r, ok := askWatcher(context.Background(), ix); ok {
		t.Fatalf("the answer of another user's watcher is trusted: %+v", r)
	}
	if _, err := exchange(context.Background(), socketName(ix.name), watchRequest{Proto: watchProto, Gen: ix.gen}); !errors.Is(err, errUntrustedPeer) {
		t.Fatalf("asking another user's watcher: %v, want %v", err, errUntrustedPeer)
	}
}

// A watcher answers nothing to a process of another user: neither the
// directories that changed nor a word to stop.
func TestWatcherAnswersNoOtherUser(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	x := f.install()
	x.dropped = make(chan struct{}, 1)
	x.loc = f.location()
	sock := filepath.Join(t.TempDir(), "w.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { x.serve(ln); close(served) }()
	defer func() { ln.Close(); <-served }()
	ask := func() string {
		t.Helper()
		conn, err := net.Dial("unix", sock) // no check of the watcher's user here
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		json.NewEncoder(conn).Encode(watchRequest{Proto: watchProto, Gen: x.ix.gen})
		// Closed unanswered, the question unread: EOF or ECONNRESET.
		b, err := io.ReadAll(conn)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatal(err)
		}
		return string(b)
	}
	if r := ask(); !strings.Contains(r, `"ok":true`) {
		t.Fatalf("this user's question: %q, want an answer OK", r)
	}
	playOtherUser(t)
	if r := ask(); r != "" {
		t.Fatalf("another user's question is answered: %q", r)
	}
}

// refuseWatches makes inotifyAddWatch refuse, as past max_user_watches,
// the watches of f's files and directories at rels, until the test ends.
func (f *fixture) refuseWatches(rels ...string) {
	refused := map[string]bool{}
	for _, rel := range rels {
		refused[filepath.Join(f.dir, rel)] = true
	}
	inotifyAddWatch = func(fd int, name string, mask uint32) (int, error) {
		if refused[name] {
			return -1, unix.ENOSPC
		}
		return unix.InotifyAddWatch(fd, name, mask)
	}
	f.t.Cleanup(func() { inotifyAddWatch = unix.InotifyAddWatch })
}

// A directory refused a watch raises no event: the watcher looks at it
// every tick, and a file changed there in place (the directory's own
// times unchanged) is a change, so that it builds again. It never did:
// every search read that file, and every one changed there later, for as
// long as the watcher ran. Unchanged, it is none, or the watcher would
// build every tick.
func TestPolledDirChangeIsAChange(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("p/f.txt", "a haystack\n")
	f.ageDirs()
	f.refuseWatches("p", "p/f.txt")
	f.update(f.fsys)
	x := f.install()
	if !x.changes.always["p"] || x.changes.pending() != 0 {
		t.Fatalf("installed with p refused a watch: %+v; want p always checked, no build due", x.changes)
	}
	pollNow(x)
	pollNow(x)
	if x.changes.pending() != 0 || !x.last.IsZero() {
		t.Fatalf("looked at twice, unchanged: %+v, last event %v; want no change", x.changes, x.last)
	}
	dirBefore, err := os.Stat(filepath.Join(f.dir, "p"))
	if err != nil {
		t.Fatal(err)
	}
	f.put("p/f.txt", "a needle!!\n")
	if dirAfter, err := os.Stat(filepath.Join(f.dir, "p")); err != nil || !dirAfter.ModTime().Equal(dirBefore.ModTime()) {
		t.Fatalf("p's time changed (%v): the check below would prove less", err)
	}
	pollNow(x)
	if !x.changes.dirs["p"] || x.last.IsZero() {
		t.Fatalf("looked at after p/f.txt changed: %+v, last event %v; want p changed, an event", x.changes, x.last)
	}
	// Paced: a look again at once waits for its turn.
	f.put("p/f.txt", "a needle??\n")
	x.last, x.changes.dirs = time.Time{}, map[string]bool{}
	x.nextPoll = time.Now().Add(time.Hour)
	if x.pollAlways(); len(x.changes.dirs) > 0 {
		t.Fatal("looked at before its turn")
	}
	pollNow(x)
	if r := x.reply(watchRequest{Proto: watchProto, Gen: x.ix.gen}); !r.OK || countOf(r.Dirs, "p") != 1 {
		t.Fatalf("the answer: OK %v, dirs %q; want p named once", r.OK, r.Dirs)
	}
}

// pollNow has x look at its polled directories now, whatever its pace.
func pollNow(x *watcher) {
	x.nextPoll = time.Time{}
	x.pollAlways()
	if x.nextPoll.IsZero() {
		panic("pollAlways did not set its next turn")
	}
}

// The watcher builds again after a change where no watch is, and its
// searches stay those of a scan.
func TestWatcherBuildsAgainAfterAnUnwatchedChange(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.put("p/f.txt", "a haystack\n")
	f.ageDirs()
	f.refuseWatches("p", "p/f.txt")
	ended := f.startWatch(WatchOptions{Quiet: 50 * time.Millisecond})
	before := f.gen()
	f.put("p/f.txt", "a needle!!\n")
	for deadline := time.Now().Add(30 * time.Second); f.gen() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not build again within 30 s of a change in a directory refused a watch")
		}
	}
	f.awaitAnswer()
	f.same(core.GrepRequest{Query: "needle", Path: f.dir})
	if _, err := Drop(context.Background(), f.dir, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, ended)
}

// countOf is how many of ss are s.
func countOf(ss []string, s string) int {
	n := 0
	for _, e := range ss {
		if e == s {
			n++
		}
	}
	return n
}

// A polled directory that differs from the build in a way the build
// again leaves as it was (a file it cannot read, recorded unindexed at
// every build; a directory dated ahead of the clock, recorded with no
// version at every build) is a change once: counted at every look, the
// watcher built again at every quiet spell for as long as the watcher
// ran. A change made there since is one again.
func TestPolledDirNotRecordedBuildsOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ahead bool // p dated an hour ahead
		w     func(f *fixture) backend.Walker
	}{
		{"a file it cannot read", false, func(f *fixture) backend.Walker { return failing(f.fsys, "p/f.txt", false) }},
		{"a directory dated ahead", true, func(f *fixture) backend.Walker { return f.fsys }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.put("p/f.txt", "a haystack\n")
			f.put("p/g.txt", "a haystack\n")
			f.ageDirs()
			if ahead := now().Add(time.Hour); tc.ahead {
				if err := os.Chtimes(filepath.Join(f.dir, "p"), ahead, ahead); err != nil {
					t.Fatal(err)
				}
			}
			f.refuseWatches("p", "p/f.txt", "p/g.txt")
			f.update(tc.w(f))
			x := f.install()
			pollNow(x)
			if !x.changes.dirs["p"] {
				t.Fatalf("looked at after a build that did not record p: %+v; want p changed (a build again may)", x.changes)
			}
			f.update(tc.w(f))
			x.install(f.openIndex(), "")
			pollNow(x)
			pollNow(x)
			if x.changes.pending() != 0 {
				t.Fatalf("looked at after the build again, unchanged: %+v; want no change, or it builds at every quiet spell", x.changes)
			}
			f.put("p/g.txt", "a needle!!\n")
			pollNow(x)
			if !x.changes.dirs["p"] {
				t.Fatalf("looked at after p/g.txt changed: %+v; want p changed", x.changes)
			}
		})
	}
}

// A directory always checked that changed too (an event, a look) is
// named once, and counted once against what an answer names: counted
// twice, 600 such made the watcher answer no search until it built again.
func TestChangedAlwaysCheckedDirsCountOnce(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	x := f.install()
	for i := range 600 {
		d := fmt.Sprint("nfs/", i)
		x.changes.always[d], x.changes.dirs[d] = true, true
	}
	r := x.reply(watchRequest{Proto: watchProto, Gen: x.ix.gen})
	if !r.OK || len(r.Dirs) != 600 {
		t.Fatalf("the answer: OK %v, %d directories; want OK, 600", r.OK, len(r.Dirs))
	}
}
