package localfs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A move to another file system is a copy, which is the writer's, and
// the removal of the original: an unprivileged writer moving another
// user's file (or one of a group it is not in), or a tree holding one,
// is refused as a replace of it is, PERMISSION_DENIED with the owner and
// group before anything is copied, where the file silently became the
// writer's (GNU mv does so too), its owner left with no file of its own.
// On one file system the move is a rename, which keeps the owner. The
// writer is this test binary run as nobody with a second group, and the
// other file system a tmpfs, so the test needs root.
func TestMoveAcrossThatWouldChangeOwnerIsRefused(t *testing.T) {
	const nobody, group, other = 65534, 4321, 4000
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	mnt := filepath.Join(root, "other")
	writableDirs(t, root, mnt)
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0777"); err != nil {
		t.Skipf("mount is not permitted here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	run := unprivileged(t, base, root, group)
	put := func(t *testing.T, at string, uid, gid int) { putOwned(t, at, "old\n", uid, gid) }
	owner := func(at string) (uint32, uint32) {
		var st syscall.Stat_t
		if err := syscall.Lstat(at, &st); err != nil {
			return 0, 0
		}
		return st.Uid, st.Gid
	}
	for _, tc := range []struct {
		name     string
		uid, gid int
		tree     bool
	}{
		{"another user's file", other, group, false},
		{"a file of a group not the writer's", nobody, 0, false},
		{"a tree holding another user's file", other, group, true},
		{"a tree holding a file of a group not the writer's", nobody, 5555, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []string{filepath.Join(root, "f.txt"), filepath.Join(root, "d")} {
				os.RemoveAll(at)
			}
			entries, _ := os.ReadDir(mnt)
			for _, e := range entries {
				os.RemoveAll(filepath.Join(mnt, e.Name()))
			}
			name, f := "f.txt", filepath.Join(root, "f.txt")
			if tc.tree {
				name, f = "d", filepath.Join(root, "d", "f.txt")
				if err := os.Mkdir(filepath.Join(root, "d"), 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(filepath.Join(root, "d"), nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			put(t, f, tc.uid, tc.gid)
			out, err := run("mv", name, "other/"+name).CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), fmt.Sprintf(`"group":%d,"owner":%d`, tc.gid, tc.uid)) {
				t.Errorf("exit %d, %s; want 1 and PERMISSION_DENIED naming the owner %d and group %d", code, out, tc.uid, tc.gid)
			}
			if uid, gid := owner(f); uid != uint32(tc.uid) || gid != uint32(tc.gid) {
				t.Errorf("the file is %d:%d (or gone); want it in place, %d:%d", uid, gid, tc.uid, tc.gid)
			}
			if entries, _ := os.ReadDir(mnt); len(entries) != 0 {
				t.Errorf("the other file system holds %v; want nothing", entries)
			}
		})
	}
	t.Run("the writer's own", func(t *testing.T) {
		f := filepath.Join(root, "own.txt")
		put(t, f, nobody, group)
		if out, err := run("mv", "own.txt", "other/own.txt").CombinedOutput(); err != nil {
			t.Fatalf("mv: %v\n%s", err, out)
		}
		if uid, gid := owner(filepath.Join(mnt, "own.txt")); uid != nobody || gid != group {
			t.Errorf("the moved file is %d:%d; want %d:%d", uid, gid, nobody, group)
		}
	})
	// A tree's files were checked without their group (read as 0): a tree
	// of the writer's own files, of its groups, was refused "of group 0".
	t.Run("the writer's own tree", func(t *testing.T) {
		d := filepath.Join(root, "own")
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(d, "f.txt"), nobody, group)
		if out, err := run("mv", "own", "other/own").CombinedOutput(); err != nil {
			t.Fatalf("mv: %v\n%s", err, out)
		}
		if uid, gid := owner(filepath.Join(mnt, "own", "f.txt")); uid != nobody || gid != group {
			t.Errorf("the moved file is %d:%d; want %d:%d", uid, gid, nobody, group)
		}
	})
}
