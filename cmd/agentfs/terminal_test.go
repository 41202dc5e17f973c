package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminal runs the real binary on a pseudo-terminal (util-linux's
// script): the result is indented there and compact on a pipe, write
// without content answers at once, never waiting for content typed on a
// terminal, and index shows its progress, also from a detached watcher,
// and takes it off the line before its result.
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
	dir, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	onTTY := func(args string) string {
		cmd := exec.Command(script, "-qec", bin+" "+args, "/dev/null")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AGENTFS_STATE_DIR="+state)
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
	// A text error names a file as a listing does: on a terminal, a
	// suggested name's escape sequence is shown, never sent.
	os.WriteFile(filepath.Join(dir, "notes\x1b[2J.txt"), []byte("n\n"), 0o644)
	if out := onTTY("--format text read 'notes[2J.txt'"); strings.Contains(out, "\x1b") || !strings.Contains(out, `did you mean: notes\x1b[2J.txt`) {
		t.Errorf("a text error on a terminal: %q", out)
	}
	// More files than a batch of the build's (16): its first report is
	// made at once.
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i := range 40 {
		os.WriteFile(filepath.Join(tree, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("some text\n", i)), 0o644)
	}
	for _, args := range []string{"index tree", "index --detach --idle 1m tree"} {
		out := onTTY(args)
		progress, result, ok := strings.Cut(out, "{")
		if !ok || !strings.HasPrefix(progress, "\rindexing: ") || !strings.HasSuffix(progress, "\r\033[K") ||
			!strings.Contains(result, `"files": 40`) {
			t.Errorf("%s on a terminal: no progress taken off its line before the result: %q", args, out)
		}
	}
	drop := exec.Command(bin, "index", "--drop", "tree")
	drop.Dir, drop.Env = dir, append(os.Environ(), "AGENTFS_STATE_DIR="+state)
	if out, err := drop.Output(); err != nil || !strings.Contains(string(out), `"watcherStopped":true`) {
		t.Errorf("index --drop after --detach: %q %v", out, err)
	}
}
