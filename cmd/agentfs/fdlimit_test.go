package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFDLimit runs the real binary under tiny limits of open files: every
// command answers IO_ERROR (exit 1) or succeeds, never the Go runtime's
// death (exit 2, a trace on stderr) when its poller, started by the first
// timer, found no descriptor left, which took every command under 7 or 8
// open files. The real binary, built here: this test binary's own start
// begins the poller before agentfs does.
func TestFDLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; run without -short")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "agentfs")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t", "a"), 0o755)
	for _, f := range []string{"f1.txt", "f2.txt"} {
		os.WriteFile(filepath.Join(dir, "t", "a", f), []byte("needle\n"), 0o644)
	}
	state := t.TempDir()
	cmds := []string{"grep needle t --no-index", "find t", "ls t", "read t/a/f1.txt",
		"write t/w.txt --content x", "edit t/a/f2.txt --old needle --new thread", "index t"}
	for n := 4; n <= 16; n++ {
		for _, c := range cmds {
			cmd := exec.Command(prlimit, append([]string{fmt.Sprintf("--nofile=%d", n), bin}, strings.Fields(c)...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AGENTFS_STATE_DIR="+state)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			switch {
			case err == nil:
			case code == 1 && strings.Contains(stderr.String(), `"code":"IO_ERROR"`):
			default:
				t.Errorf("under %d open files, %s: exit %d: %.300s", n, c, code, stderr.String())
			}
		}
	}
	out, err := exec.Command(prlimit, "--nofile=16", bin, "--root", dir, "grep", "needle", "t", "--no-index", "--mode", "count").Output()
	if err != nil || !strings.Contains(string(out), `"count":2`) {
		t.Errorf("under 16 open files, grep: %v %s", err, out)
	}
}
