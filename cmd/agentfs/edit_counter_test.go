package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEditCounterAcrossProcesses runs 16 processes at a time, each worker
// incrementing its own counter line of one shared file 200 times with the
// real agentfs edit. Every edit rewrites the whole file, so an edit whose
// read and replace were not covered by one lock would write back another
// worker's old line: that worker's next edit finds no match and the total
// falls short of 3200. Half of the workers keep their state (lock files)
// in another directory, as agents with another HOME, user or container
// sharing the tree do: they must exclude each other all the same.
func TestEditCounterAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3200 processes")
	}
	const workers, rounds = 16, 200
	bin, err := exec.LookPath("agentfs")
	if err != nil {
		t.Fatal(err)
	}
	dir, states := t.TempDir(), [2]string{t.TempDir(), t.TempDir()}
	var initial strings.Builder
	for w := range workers {
		fmt.Fprintf(&initial, "worker-%02d: %04d\n", w, 0)
	}
	file := filepath.Join(dir, "counter.txt")
	if err := os.WriteFile(file, []byte(initial.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eachWorker(t, workers, rounds, func(w, n int) error {
		cmd := agentfsIn(bin, dir, states[w%2], "edit", "counter.txt",
			"--old", fmt.Sprintf("worker-%02d: %04d", w, n),
			"--new", fmt.Sprintf("worker-%02d: %04d", w, n+1))
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			return fmt.Errorf("worker %d, edit %d: %v: %s", w, n+1, err, stderr)
		}
		var res struct{ EditsApplied int }
		if err := json.Unmarshal(out, &res); err != nil || res.EditsApplied != 1 {
			return fmt.Errorf("worker %d, edit %d: %s", w, n+1, out)
		}
		return nil
	})
	t.Logf("%d edits by %d concurrent processes in %v", workers*rounds, workers, time.Since(start).Round(time.Millisecond))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	total := 0
	for _, l := range lines {
		var w, n int
		if _, err := fmt.Sscanf(l, "worker-%02d: %04d", &w, &n); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		total += n
	}
	if len(lines) != workers || total != workers*rounds {
		t.Fatalf("%d lines summing to %d, want %d lines summing to %d:\n%s", len(lines), total, workers, workers*rounds, data)
	}
}

// TestPatchPairAcrossProcesses: 10 processes at a time, in two state
// directories, each patching its own line of both A and B 30 times. Each
// write gives a file a new inode, and a process that waited on the old one
// then took the new one out of (device, inode) order while holding the
// other: two processes waited for each other until LOCK_TIMEOUT, with no
// long holder. Every patch must land, well within the timeout.
func TestPatchPairAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 300 processes")
	}
	const workers, rounds = 10, 30
	bin, err := exec.LookPath("agentfs")
	if err != nil {
		t.Fatal(err)
	}
	dir, states := t.TempDir(), [2]string{t.TempDir(), t.TempDir()}
	var a, b strings.Builder
	for w := range workers {
		fmt.Fprintf(&a, "a-%02d: %04d\n", w, 0)
		fmt.Fprintf(&b, "b-%02d: %04d\n", w, 0)
	}
	for name, content := range map[string]string{"A": a.String(), "B": b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eachWorker(t, workers, rounds, func(w, n int) error {
		patch := fmt.Sprintf("*** Begin Patch\n*** Update File: A\n@@\n-a-%02d: %04d\n+a-%02d: %04d\n*** Update File: B\n@@\n-b-%02d: %04d\n+b-%02d: %04d\n*** End Patch\n",
			w, n, w, n+1, w, n, w, n+1)
		if out, err := agentfsIn(bin, dir, states[w%2], "--lock-timeout", "5s", "apply-patch", "--patch", patch).CombinedOutput(); err != nil {
			return fmt.Errorf("worker %d, patch %d: %v: %s", w, n+1, err, out)
		}
		return nil
	})
	for _, f := range []string{"A", "B"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		for w := range workers {
			if want := fmt.Sprintf("%c-%02d: %04d\n", f[0]+'a'-'A', w, rounds); !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q:\n%s", f, want, data)
			}
		}
	}
}

// eachWorker runs run(w, n) for rounds n = 0, 1... in each of workers at
// once, a worker stopping at its first error; every error fails t.
func eachWorker(t *testing.T, workers, rounds int, run func(w, n int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for n := range rounds {
				if err := run(w, n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// agentfsIn is the agentfs command bin with args, run in dir with its
// state (lock files, journals) in state.
func agentfsIn(bin, dir, state string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTFS_STATE_DIR="+state)
	return cmd
}
