package localfs_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/subcommands"
)

// Multi-process tests. The test binary re-executes itself, running only
// TestHelperProcess, in a role given by roleEnv: "agentfs" is the real
// command line (subcommands.Run, as main) with the arguments after "--";
// "holder" takes the locks of one path, says "locked" on stdout and holds
// them until stdin closes or it is killed.
const roleEnv = "AGENTFS_TEST_ROLE"

func TestHelperProcess(t *testing.T) {
	role := os.Getenv(roleEnv)
	if role == "" {
		t.Skip("only a re-executed helper process runs this")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	switch role {
	case "agentfs":
		os.Args = append([]string{"agentfs"}, args...)
		os.Exit(subcommands.Run())
	case "holder":
		os.Exit(holdLock(args[0]))
	}
	t.Fatalf("unknown role %q", role)
}

func holdLock(path string) int {
	fsys, err := localfs.New(localfs.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := fsys.Lock(context.Background(), path, 10*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// command is this test binary in a role, working in dir.
func command(t *testing.T, dir, role string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	return cmd
}

// workspace is a fresh root with a private lock directory, shared by the
// test and every process it starts.
func workspace(t *testing.T) string {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	return t.TempDir()
}

// startHolder starts a holder of path's locks and returns once it holds them.
func startHolder(t *testing.T, dir, path string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := command(t, dir, "holder", path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}
	return cmd, stdin
}

func newFS(t *testing.T, dir string) *localfs.FS {
	t.Helper()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// How many rounds the rm race runs; fewer with the race detector, whose
// processes start and die tens of times slower.
var rmRaceRounds = 15

// A holder killed with SIGKILL frees its lock: a process that was waiting
// for it gets it after the kill. How soon is a figure, logged, not a bound
// on a loaded machine.
func TestLockFreedBySIGKILL(t *testing.T) {
	dir := workspace(t)
	fsys := newFS(t, dir)
	waiting := make(chan struct{}, 1)
	localfs.SetLockWaitHook(func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	defer localfs.SetLockWaitHook(nil)
	var took []time.Duration
	for range 5 {
		holder, _ := startHolder(t, dir, "d/f")
		got := make(chan time.Time, 1)
		go func() {
			unlock, err := fsys.Lock(context.Background(), "d/f", 5*time.Second)
			if err != nil {
				t.Error(err)
				got <- time.Time{}
				return
			}
			got <- time.Now()
			unlock()
		}()
		localfs.Within(t, waiting, "poll of the held lock") // the holder has it
		killed := time.Now()
		if err := holder.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		at := localfs.Within(t, got, "lock after SIGKILL of its holder")
		if at.IsZero() {
			t.FailNow()
		}
		took = append(took, at.Sub(killed))
		_ = holder.Wait()
	}
	slices.Sort(took)
	t.Logf("lock taken after SIGKILL of its holder: median %v, worst %v (of 5)", took[2], took[4])
}

// While another process holds a lock the real command waits for
// --lock-timeout, then fails with LOCK_TIMEOUT (exit 3), changing nothing;
// once the holder lets go it goes through.
func TestLockTimeoutAcrossProcesses(t *testing.T) {
	dir := workspace(t)
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	holder, release := startHolder(t, dir, "d")
	start := time.Now()
	cmd := command(t, dir, "agentfs", "--lock-timeout", "200ms", "write", "d/f", "--content", "x")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != subcommands.ExitConflict || !strings.Contains(stderr.String(), `"LOCK_TIMEOUT"`) {
		t.Fatalf("got %v, %s; want exit 3 LOCK_TIMEOUT", err, stderr.String())
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("gave up after %v, before the 200ms timeout", d)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d/f")); !os.IsNotExist(err) {
		t.Fatalf("d/f written under a held lock: %v", err)
	}
	release.Close()
	if err := holder.Wait(); err != nil {
		t.Fatal(err)
	}
	if out, err := command(t, dir, "agentfs", "--lock-timeout", "2s", "write", "d/f", "--content", "x").CombinedOutput(); err != nil {
		t.Fatalf("after release: %v %s", err, out)
	}
}

// Writers of d/e/f race rm -r d. Every process succeeds, and after each
// round the tree is one of the two complete outcomes: no d at all, or
// d/e/f holding one writer's whole content and nothing else.
func TestWritersRaceRecursiveRemove(t *testing.T) {
	dir := workspace(t)
	const writers, removers = 4, 2
	rounds := rmRaceRounds
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan string, writers+removers)
		run := func(args ...string) {
			defer wg.Done()
			out, err := command(t, dir, "agentfs", append([]string{"--lock-timeout", "10s"}, args...)...).CombinedOutput()
			if err != nil {
				errs <- fmt.Sprintf("%s: %v %s", strings.Join(args, " "), err, out)
			}
		}
		for i := range writers + removers {
			wg.Add(1)
			if i < writers {
				go run("write", "d/e/f", "--content", fmt.Sprintf("writer %d of round %d\n", i, round))
			} else {
				go run("rm", "-r", "d")
			}
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		var tree []string
		err := filepath.WalkDir(filepath.Join(dir, "d"), func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			tree = append(tree, rel)
			return nil
		})
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			t.Fatal(err)
		case strings.Join(tree, " ") != "d d/e d/e/f":
			t.Fatalf("round %d: partial tree %v", round, tree)
		default:
			data, _ := os.ReadFile(filepath.Join(dir, "d/e/f"))
			var i, r int
			if n, _ := fmt.Sscanf(string(data), "writer %d of round %d\n", &i, &r); n != 2 || r != round ||
				string(data) != fmt.Sprintf("writer %d of round %d\n", i, round) {
				t.Fatalf("round %d: d/e/f holds %q", round, data)
			}
		}
	}
}
