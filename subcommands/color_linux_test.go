package subcommands

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: the terminal end for a call's stdout,
// and the other end, where what it printed arrives.
func openPty(t *testing.T) (term, master *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, m
}

// --format text is coloured on a terminal, unless NO_COLOR is set or
// --color never; never in a pipe, unless --color always; JSON never.
func TestColorOnATerminal(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	const blueDir = "\x1b[1;34msub\x1b[0m/"
	for _, tc := range []struct {
		name     string
		terminal bool
		noColor  string
		args     []string
		colored  bool
	}{
		{"terminal", true, "", []string{"--format", "text"}, true},
		{"terminal, NO_COLOR", true, "1", []string{"--format", "text"}, false},
		{"terminal, --color never", true, "", []string{"--format", "text", "--color", "never"}, false},
		{"terminal, json", true, "", nil, false},
		{"pipe", false, "", []string{"--format", "text"}, false},
		{"pipe, --color always", false, "", []string{"--format", "text", "--color", "always"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("TERM", "xterm")
			var stdout io.Writer = &bytes.Buffer{}
			var master *os.File
			if tc.terminal {
				stdout, master = openPty(t)
			}
			var stderr bytes.Buffer
			args := append(append([]string{"--root", dir}, tc.args...), "ls", dir)
			if code := Main(context.Background(), args, Streams{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: &stderr}); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got := ""
			if master != nil {
				stdout.(*os.File).Close()
				b, _ := io.ReadAll(master) // EIO once the terminal end is closed and drained
				got = string(b)
			} else {
				got = stdout.(*bytes.Buffer).String()
			}
			if !strings.Contains(got, "sub") {
				t.Fatalf("the listing is %q", got)
			}
			if strings.Contains(got, blueDir) != tc.colored || strings.Contains(got, "\x1b[") && !tc.colored {
				t.Errorf("colored %v, want %v: %q", strings.Contains(got, "\x1b["), tc.colored, got)
			}
		})
	}
}
