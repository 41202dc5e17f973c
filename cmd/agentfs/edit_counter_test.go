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
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range rounds {
				cmd := exec.Command(bin, "edit", "counter.txt",
					"--old", fmt.Sprintf("worker-%02d: %04d", w, n),
					"--new", fmt.Sprintf("worker-%02d: %04d", w, n+1))
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "AGENTFS_STATE_DIR="+states[w%2])
				out, err := cmd.Output()
				if err != nil {
					var stderr []byte
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = ee.Stderr
					}
					errs <- fmt.Errorf("worker %d, edit %d: %v: %s", w, n+1, err, stderr)
					return
				}
				var res struct{ EditsApplied int }
				if err := json.Unmarshal(out, &res); err != nil || res.EditsApplied != 1 {
					errs <- fmt.Errorf("worker %d, edit %d: %s", w, n+1, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
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
