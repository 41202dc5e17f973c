package localfs_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How many kills the kill test makes; fewer with the race detector.
var killRounds = 40

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
