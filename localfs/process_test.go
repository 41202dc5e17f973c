package localfs_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/subcommands"
	"golang.org/x/sys/unix"
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

// How many rounds the rm race and the kill tests run; fewer with the race
// detector, whose processes start and die tens of times slower.
var rmRaceRounds, killRounds = 15, 40

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
	if !errors.As(err, &ee) || ee.ExitCode() != core.ExitConflict || !strings.Contains(stderr.String(), `"LOCK_TIMEOUT"`) {
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

// A writer killed with SIGKILL at a random point of a 2 MiB write leaves the
// old content or the new one, never a mix or a short file. The test fails
// unless some kills landed mid-write (a temporary file left), and the
// temporary files such kills leave are swept by a later write.
func TestKilledWriterNeverTearsFile(t *testing.T) {
	dir := workspace(t)
	const size = 2 << 20
	content := func(i int) []byte {
		return bytes.Repeat([]byte{byte('a' + i%26)}, size-i*4096)
	}
	path := filepath.Join(dir, "big")
	if err := os.WriteFile(path, content(0), 0o644); err != nil {
		t.Fatal(err)
	}
	// How long a whole write takes here: the kills land anywhere in it, or
	// just after it.
	start := time.Now()
	whole := command(t, dir, "agentfs", "write", "big", "--content-file", "-")
	whole.Stdin = bytes.NewReader(content(0))
	if out, err := whole.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	span := time.Since(start)
	prev, outcomes := content(0), map[string]int{}
	kills := killRounds
	// Every other kill lands as the writer creates its temporary file (told
	// by inotify), so that some always land mid-write, however slow the
	// machine; the others land at a random point of the write.
	created, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(created)
	if _, err := unix.InotifyAddWatch(created, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= kills; i++ {
		next := content(i)
		cmd := command(t, dir, "agentfs", "write", "big", "--content-file", "-")
		cmd.Stdin = bytes.NewReader(next)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			waitForTempFile(t, created)
		} else {
			// Not synchronisation: a random point of the write to kill it at.
			time.Sleep(rand.N(span * 3 / 2))
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if left, _ := filepath.Glob(filepath.Join(dir, ".agentfs-tmp-*")); len(left) > 0 {
			outcomes["mid-write"]++ // killed between its temporary file and the rename
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.Equal(got, next):
			prev = next
			outcomes["new"]++
		case bytes.Equal(got, prev):
			outcomes["old"]++
		default:
			t.Fatalf("after kill %d the file is torn: %d bytes, neither %d nor %d", i, len(got), len(prev), len(next))
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".agentfs-tmp-*"))
	t.Logf("a write takes %v; of %d kills, %d landed mid-write; the old content was left %d times, the new %d times; %d temporary files remain",
		span, kills, outcomes["mid-write"], outcomes["old"], outcomes["new"], len(left))
	if outcomes["mid-write"] == 0 {
		t.Fatal("no kill landed between a write's temporary file and its rename: the test did not race")
	}
	if out, err := command(t, dir, "agentfs", "write", "other", "--content", "x").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".agentfs-tmp-*")); len(left) > 0 {
		t.Fatalf("old temporary files not swept: %v", left)
	}
}

// waitForTempFile reads inotify events of the workspace until a write's
// temporary file is created there, for 30 s at most.
func waitForTempFile(t *testing.T, fd int) {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		ready, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || ready == 0 {
			t.Fatalf("no temporary file created within 30 s (%v)", err)
		}
		n, err := unix.Read(fd, buf)
		if err != nil {
			t.Fatalf("inotify: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			if strings.HasPrefix(name, ".agentfs-tmp-") {
				return
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
