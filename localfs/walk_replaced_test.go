package localfs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// renameOverBeforeOpen makes the walk's open of the file name find what
// put renames over it first: another writer's rename lands between the
// stat that tells the file's type and the open, deterministically.
func renameOverBeforeOpen(t *testing.T, dir, name string, put func(tmp string)) {
	t.Helper()
	saved := syscalls.openRead
	t.Cleanup(func() { syscalls.openRead = saved })
	done := false
	syscalls.openRead = func(dirfd int, path string, flags int, mode uint32) (int, error) {
		if path == name && !done {
			done = true
			tmp := filepath.Join(dir, "tmp.new")
			put(tmp)
			must(t, os.Rename(tmp, filepath.Join(dir, name)))
		}
		return saved(dirfd, path, flags, mode)
	}
}

// A walked file that another writer replaces by a rename (write a temp
// file, rename it over: editors, agentfs's own write) while it is opened
// is still a regular file at its name: it is read as the file now there,
// never skipped as not regular (grep and replace dropped it, exit 0). Only
// what is not a regular file is refused, and the deny check applies to
// the file opened.
func TestWalkOpenOfFileRenamedOver(t *testing.T) {
	tests := []struct {
		name string
		put  func(t *testing.T, dir, tmp string)
		want string     // the content read
		code fault.Code // or the error's code
	}{
		{name: "another regular file", want: "new\n", put: func(t *testing.T, _, tmp string) {
			must(t, os.WriteFile(tmp, []byte("new\n"), 0o644))
		}},
		{name: "a FIFO", code: fault.CodeNotRegular, put: func(t *testing.T, _, tmp string) {
			must(t, unix.Mkfifo(tmp, 0o644))
		}},
		{name: "a link", code: fault.CodeNotRegular, put: func(t *testing.T, dir, tmp string) {
			must(t, os.Symlink(filepath.Join(dir, "other.txt"), tmp))
		}},
		{name: "a hard link of the denied file", code: fault.CodeDenied, put: func(t *testing.T, dir, tmp string) {
			must(t, os.Link(filepath.Join(dir, "secret"), tmp))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(StateDirEnv, t.TempDir())
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("old\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("other\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("SECRET\n"), 0o644))
			fsys := newFS(t, Config{Roots: []string{dir}, Cwd: dir, Deny: []string{filepath.Join(dir, "secret")}})
			renameOverBeforeOpen(t, dir, "f.txt", func(tmp string) { tt.put(t, dir, tmp) })
			var got []byte
			var openErr error
			err := fsys.Walk(context.Background(), ".", backend.WalkOptions{NoIgnore: true}, func(e backend.WalkEntry) error {
				if e.Name != "f.txt" {
					return nil
				}
				r, err := e.Open()
				if openErr = err; err == nil {
					got, openErr = io.ReadAll(r)
					r.Close()
				}
				return nil
			})
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if tt.code != "" {
				if code(openErr) != tt.code {
					t.Errorf("open: want %s, got %v (read %q)", tt.code, openErr, got)
				}
				return
			}
			if openErr != nil || string(got) != tt.want {
				t.Errorf("open: want %q, got %q, %v", tt.want, got, openErr)
			}
		})
	}
}

// An ignore file replaced by a rename while it is opened holds the rules
// of the file now at its name: it was read as one with no rules, so a
// walk (and replace's) went into what it ignores.
func TestWalkIgnoreFileRenamedOver(t *testing.T) {
	tests := []struct {
		name, start, rules string
		ignored            string // a file the rules ignore
	}{
		{name: "in the start directory", start: ".", rules: "vendor/\n", ignored: "vendor/lib.txt"},
		{name: "above the start directory", start: "src", rules: "src/vendor/\n", ignored: "src/vendor/lib.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, dir := newTestFS(t)
			must(t, os.WriteFile(filepath.Join(dir, gitignoreFile), []byte(tt.rules), 0o644))
			for _, f := range []string{"src/a.txt", "src/vendor/lib.txt", "vendor/lib.txt"} {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, f), []byte("needle\n"), 0o644))
			}
			renameOverBeforeOpen(t, dir, gitignoreFile, func(tmp string) {
				must(t, os.WriteFile(tmp, []byte(tt.rules), 0o644))
			})
			var seen []string
			err := fsys.Walk(context.Background(), tt.start, backend.WalkOptions{}, func(e backend.WalkEntry) error {
				seen = append(seen, e.Path)
				return nil
			})
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if slices.Contains(seen, tt.ignored) {
				t.Errorf("the walk visited %s, which the replaced %s ignores: %v", tt.ignored, gitignoreFile, seen)
			}
			if !slices.Contains(seen, "src/a.txt") {
				t.Errorf("the walk missed src/a.txt: %v", seen)
			}
		})
	}
}
