package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminal runs the real binary on a pseudo-terminal (util-linux's
// script): the result is indented there and compact on a pipe, and write
// without content answers at once, never waiting for content typed on a
// terminal.
func TestTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) is not installed")
	}
	// This test binary is agentfs under that name (testscript.Main), so no
	// toolchain is needed where the test runs.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agentfs")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	onTTY := func(args string) string {
		cmd := exec.Command(script, "-qec", bin+" "+args, "/dev/null")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTFS_STATE_DIR="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		return strings.ReplaceAll(string(out), "\r\n", "\n")
	}
	if out := onTTY("ls"); !strings.HasPrefix(out, "{\n  \"path\": \".\",\n") {
		t.Errorf("ls on a terminal is not indented: %q", out)
	}
	pipe := exec.Command(bin, "ls")
	pipe.Dir = dir
	if out, err := pipe.Output(); err != nil || strings.Count(string(out), "\n") != 1 {
		t.Errorf("ls on a pipe is not one compact line: %q %v", out, err)
	}
	out := onTTY("write b.txt")
	if !strings.Contains(out, `"code": "INVALID_ARGUMENT"`) && !strings.Contains(out, `"code":"INVALID_ARGUMENT"`) || !strings.Contains(out, "--content-file") {
		t.Errorf("write with content on a terminal: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("write on a terminal created the file: %v", err)
	}
}
