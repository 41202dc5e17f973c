package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A file, or the directory of one, immutable or append-only (chattr +i,
// +a) is refused by the check a dry run makes as by the write and the
// commit themselves, and saying why: faccessat
// through x/sys passed it for root (its EPERM taken for a seccomp
// filter's), so dry runs promised a change the run was refused.
func TestImmutableRefusedByCheckAndWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting the immutable flag needs root: run go test as root")
	}
	for _, tc := range []struct{ pin, flag string }{{"f.txt", "+i"}, {"d", "+i"}, {"f.txt", "+a"}, {"d", "+a"}} {
		pin := tc.pin
		t.Run(pin+tc.flag, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv(StateDirEnv, state)
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"))
			mustWrite(t, filepath.Join(dir, "d", "g.txt"))
			chattr(t, tc.flag, filepath.Join(dir, pin))
			defer chattr(t, "-"+tc.flag[1:], filepath.Join(dir, pin))
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			if err != nil {
				t.Fatal(err)
			}
			target := "f.txt"
			if pin == "d" {
				target = "d/g.txt"
			}
			check := fsys.CheckCommit(context.Background(), []backend.Op{{Path: target, Data: []byte("new\n")}})
			_, write := fsys.WriteFile(context.Background(), target, []byte("new\n"), backend.WriteOptions{})
			// The commit of replace and apply-patch, whose dry run is the
			// check: it said only "permission denied", with a hint about
			// modes, false for root.
			_, commit := fsys.Commit(context.Background(), []backend.Op{{Path: "other.txt", Data: []byte("o\n")}, {Path: target, Data: []byte("new\n")}})
			if _, err := os.Lstat(filepath.Join(dir, "other.txt")); err == nil {
				t.Errorf("the commit refused left other.txt")
			}
			// Refused before anything is staged: in an append-only
			// directory the commit linked the file at its backup name and
			// staged its copy, then could unlink neither, and its journal
			// failed every later call on the tree.
			left, _ := filepath.Glob(filepath.Join(dir, filepath.Dir(target), ".agentfs-tmp-*"))
			pending, _ := filepath.Glob(filepath.Join(state, "journal", "*.pending"))
			if len(left) > 0 || len(pending) > 0 {
				t.Errorf("the commit refused left %v and journals %v", left, pending)
			}
			for what, err := range map[string]error{"check": check, "write": write, "commit": commit} {
				if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Message, "immutable") {
					t.Errorf("%s of %s with %s %s: %v, want PERMISSION_DENIED saying immutable", what, target, pin, tc.flag, err)
				}
			}
		})
	}
}

// rm and mv of a file immutable or append-only, or in such a directory,
// say so, as write does: rm said only "permission denied", and mv that it
// needs write permission on both directories, false for root.
func TestImmutableNamedByRemoveAndRename(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting the immutable flag needs root: run go test as root")
	}
	for _, tc := range []struct{ pin, flag, op, from, to string }{
		{"f.txt", "+i", "rm", "f.txt", ""},
		{"f.txt", "+a", "rm", "f.txt", ""},
		{"d", "+i", "rm", "d/g.txt", ""},
		{"d", "+a", "rm", "d/g.txt", ""},
		{"f.txt", "+i", "mv", "f.txt", "moved.txt"},
		{"f.txt", "+a", "mv", "f.txt", "moved.txt"},
		{"d", "+i", "mv", "d/g.txt", "moved.txt"},
		{"d", "+i", "mv", "f.txt", "d/f.txt"},
		{"d", "+i", "mv", "f.txt", "d/g.txt"},
	} {
		t.Run(tc.op+" "+tc.from+" "+tc.to+" "+tc.pin+tc.flag, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"))
			mustWrite(t, filepath.Join(dir, "d", "g.txt"))
			chattr(t, tc.flag, filepath.Join(dir, tc.pin))
			defer chattr(t, "-"+tc.flag[1:], filepath.Join(dir, tc.pin))
			fsys := newFS(t, Config{Roots: []string{dir}, Cwd: dir})
			var err error
			if tc.op == "rm" {
				_, err = fsys.Remove(context.Background(), tc.from, backend.RemoveOptions{})
			} else {
				_, err = fsys.Rename(context.Background(), tc.from, tc.to, backend.WriteOptions{})
			}
			if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Message, "immutable") {
				t.Fatalf("%s %s: %v, want PERMISSION_DENIED saying immutable", tc.op, tc.from, err)
			}
			// The path is the side that is pinned.
			want := tc.from
			if strings.HasPrefix(tc.to, tc.pin+"/") {
				want = tc.to
			}
			if e := fault.AsError(err); e.Path != want {
				t.Fatalf("%s %s: the error's path is %q, want %q", tc.op, tc.from, e.Path, want)
			}
			if _, err := os.Lstat(filepath.Join(dir, tc.from)); err != nil {
				t.Fatalf("%s is gone: %v", tc.from, err)
			}
		})
	}
}
