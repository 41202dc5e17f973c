package subcommands

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A root whose name comes to lead elsewhere during a batch session (the
// directory renamed and another made at its name, a link re-pointed) is
// refused at the session's next request: the session held the old
// directory open and wrote there, where no root names it, answering
// success.
func TestBatchRefusesARootWhoseNameMoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		// move makes the root's name lead elsewhere; left is where the
		// session's directory now is.
		move func(t *testing.T, dir string) (left string)
		root string
	}{
		{"renamed and another made at its name", func(t *testing.T, dir string) string {
			mustRun(t, os.Rename(filepath.Join(dir, "proj"), filepath.Join(dir, "proj.bak")))
			mustRun(t, os.Mkdir(filepath.Join(dir, "proj"), 0o755))
			return filepath.Join(dir, "proj.bak")
		}, "proj"},
		{"a link re-pointed", func(t *testing.T, dir string) string {
			mustRun(t, os.Remove(filepath.Join(dir, "current")))
			mustRun(t, os.Symlink("other", filepath.Join(dir, "current")))
			return filepath.Join(dir, "proj")
		}, "current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
			dir := t.TempDir()
			mustRun(t, os.Mkdir(filepath.Join(dir, "proj"), 0o755))
			mustRun(t, os.Mkdir(filepath.Join(dir, "other"), 0o755))
			mustRun(t, os.Symlink("proj", filepath.Join(dir, "current")))
			pr, pw := io.Pipe()
			defer pw.Close()
			or, ow := io.Pipe()
			var errb bytes.Buffer
			go func() {
				Main(context.Background(), []string{"--root", filepath.Join(dir, tc.root), "batch"}, Streams{Stdin: pr, Stdout: ow, Stderr: &errb})
				ow.Close()
			}()
			answers := bufio.NewReader(or)
			ask := func(line string) string {
				go pw.Write([]byte(line + "\n"))
				answer, err := answers.ReadString('\n')
				if err != nil {
					t.Fatal(err, errb.String())
				}
				return answer
			}
			if a := ask(`{"tool":"write","args":{"path":"a.txt","content":"a"},"id":1}`); !strings.Contains(a, `"created":true`) {
				t.Fatalf("the first write: %s", a)
			}
			left := tc.move(t, dir)
			a := ask(`{"tool":"write","args":{"path":"b.txt","content":"b"},"id":2}`)
			if !strings.Contains(a, `"OUTSIDE_ROOT"`) || !strings.Contains(a, "renamed or replaced") {
				t.Fatalf("a write after the root's name moved: %s", a)
			}
			if _, err := os.Lstat(filepath.Join(left, "b.txt")); err == nil {
				t.Fatal("the write landed in the directory the root's name left")
			}
			if a := ask(`{"tool":"read","args":{"path":"a.txt"},"id":3}`); !strings.Contains(a, `"OUTSIDE_ROOT"`) {
				t.Fatalf("a read after the root's name moved: %s", a)
			}
		})
	}
}

func mustRun(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
