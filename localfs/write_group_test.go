package localfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A replace makes a new file, which is the writer's: an unprivileged
// writer that may not give it the replaced file's owner and group (the
// file is another user's, or of a group the writer is not in) is refused,
// PERMISSION_DENIED before anything is staged, dry runs too, where the
// file silently became the writer's and of the writer's group, taking its
// owner's access away (a file of user b, mode 600 with an ACL entry
// letting user a write it, was user a's after a's edit, and b could no
// longer read it). write --in-place rewrites such a file through its own
// inode, which keeps its owner, group and mode; a file that is the
// writer's, of one of its groups, is still replaced. The writer is this
// test binary run as nobody with a second group, so the test needs root.
func TestReplaceThatWouldChangeOwnerIsRefused(t *testing.T) {
	const nobody, group = 65534, 4321
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(root, "f.txt")
	run := unprivileged(t, base, root, group)
	put := func(uid, gid int) {
		t.Helper()
		os.Remove(f)
		os.RemoveAll(filepath.Join(base, "state", "journal"))
		if err := os.WriteFile(f, []byte("old\n"), 0o664); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(f, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string, uid, gid uint32) {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f)
		if string(data) != want || st.Uid != uid || st.Gid != gid || st.Mode&0o7777 != 0o666 {
			t.Errorf("the file: %q, owner %d:%d mode %o; want %q, %d:%d 666", data, st.Uid, st.Gid, st.Mode&0o7777, want, uid, gid)
		}
		names, _ := os.ReadDir(root)
		for _, n := range names {
			if strings.HasPrefix(n.Name(), ".agentfs-") {
				t.Errorf("left in the directory: %s", n.Name())
			}
		}
	}
	patch := filepath.Join(root, "p.patch")
	if err := os.WriteFile(patch, []byte("*** Begin Patch\n*** Update File: f.txt\n@@\n-old\n+new\n*** End Patch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []struct {
		name     string
		uid, gid int
	}{{"another user's", 0, group}, {"a group not the writer's", nobody, 0}} {
		for _, tc := range []struct {
			name, hint string
			args       []string
		}{
			{"write", "--in-place", []string{"write", "f.txt", "--content", "new\n"}},
			{"append", "write --in-place", []string{"write", "f.txt", "--content", "new\n", "--append"}},
			{"edit", "write --in-place", []string{"edit", "f.txt", "--old", "old", "--new", "new"}},
			{"edit dry run", "write --in-place", []string{"edit", "f.txt", "--old", "old", "--new", "new", "--dry-run"}},
			{"replace", "write --in-place", []string{"replace", "old", "new", "f.txt"}},
			{"replace dry run", "write --in-place", []string{"replace", "old", "new", "f.txt", "--dry-run"}},
			{"apply-patch", "write --in-place", []string{"apply-patch", "--patch-file", "p.patch"}},
		} {
			t.Run(owner.name+"/"+tc.name, func(t *testing.T) {
				put(owner.uid, owner.gid)
				out, err := run(tc.args...).CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "owner") || !strings.Contains(string(out), tc.hint) {
					t.Errorf("exit %d, %s; want 1 and PERMISSION_DENIED naming the owner, hint %q", code, out, tc.hint)
				}
				check("old\n", uint32(owner.uid), uint32(owner.gid))
			})
		}
		t.Run(owner.name+"/write --in-place", func(t *testing.T) {
			put(owner.uid, owner.gid)
			if out, err := run("write", "f.txt", "--content", "new\n", "--in-place").CombinedOutput(); err != nil {
				t.Fatalf("write --in-place: %v\n%s", err, out)
			}
			check("new\n", uint32(owner.uid), uint32(owner.gid))
		})
	}
	t.Run("the writer's own", func(t *testing.T) {
		put(nobody, group)
		if out, err := run("edit", "f.txt", "--old", "old", "--new", "new").CombinedOutput(); err != nil {
			t.Fatalf("edit: %v\n%s", err, out)
		}
		check("new\n", nobody, group)
	})
}
