package index

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// watcherDir, in the environment, makes the test binary a watcher of that
// directory (see TestMain): the searches of a test and the watcher are
// two processes, as they are in use.
const (
	watcherDir   = "AGENTFS_TEST_WATCHER_DIR"
	watcherQuiet = "AGENTFS_TEST_WATCHER_QUIET"
	// builderDir makes it a build of that directory that says "walking"
	// at its first progress and then waits there to be killed.
	builderDir = "AGENTFS_TEST_BUILDER_DIR"
	// spillFailDir makes it a build of that directory whose every spill
	// fails (a file size limit of 100 bytes), saying how many files it
	// read before it failed.
	spillFailDir = "AGENTFS_TEST_SPILL_FAIL_DIR"
)

// ahead is how far the tests set the racy rule's clock ahead (now): a
// tree the fixture dated back is as old as its ctime, which no test can
// set, by that clock, and a change the build must not trust is dated to
// it (fixture.fresh).
const ahead = time.Hour

func TestMain(m *testing.M) {
	now = func() time.Time { return time.Now().Add(ahead) }
	if dir := os.Getenv(watcherDir); dir != "" {
		os.Exit(runWatcher(dir))
	}
	if dir := os.Getenv(builderDir); dir != "" {
		os.Exit(runBuilder(dir))
	}
	if dir := os.Getenv(spillFailDir); dir != "" {
		os.Exit(runSpillFailure(dir))
	}
	os.Exit(m.Run())
}

// runBuilder builds the index of dir, stopping for good at its first
// progress: its parent kills it there.
func runBuilder(dir string) int {
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = Build(context.Background(), fsys, dir, dir, BuildOptions{LockTimeout: time.Minute, Progress: func(int, int64) {
		fmt.Println("walking")
		select {}
	}})
	fmt.Fprintln(os.Stderr, "the build ended:", err)
	return 1
}

// runSpillFailure builds the index of dir in runs of 64 pairs and no
// file of more than 100 bytes writable, and says "EFBIG after N files"
// when the build failed so.
func runSpillFailure(dir string) int {
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	runPairs = 64
	signal.Ignore(syscall.SIGXFSZ)
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &limit); err != nil {
		fmt.Println(err)
		return 1
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 100, Max: limit.Max}); err != nil {
		fmt.Println(err)
		return 1
	}
	read := 0
	_, err = Build(context.Background(), fsys, dir, dir, BuildOptions{LockTimeout: time.Minute, Progress: func(n int, _ int64) { read = n }})
	if !errors.Is(err, syscall.EFBIG) {
		fmt.Println("the build ended:", err)
		return 1
	}
	fmt.Printf("EFBIG after %d files\n", read)
	return 0
}

// runWatcher watches dir until SIGTERM, saying "ready" on stdout once it
// answers searches.
func runWatcher(dir string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	quiet, _ := time.ParseDuration(os.Getenv(watcherQuiet))
	err = Watch(ctx, fsys, dir, dir, WatchOptions{
		BuildOptions: BuildOptions{LockTimeout: time.Minute, Config: fsys.Fingerprint(), Roots: fsys.Roots()},
		Quiet:        quiet,
		Ready:        func(Status) { fmt.Println("ready") },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild starts the test binary as TestMain's child of env, and
// returns it with the first line it writes; a child that says something
// other than want is killed, and the test fails.
func startChild(t *testing.T, want string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != want {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q (%v), want %q", line, err, want)
	}
	return cmd
}
