package localfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	root := writableRoot(t, base)
	f := filepath.Join(root, "f.txt")
	run := unprivileged(t, base, root, group)
	put := func(uid, gid int) {
		t.Helper()
		os.Remove(f)
		os.RemoveAll(filepath.Join(base, "state", "journal"))
		putOwned(t, f, "old\n", uid, gid)
	}
	check := func(want string, uid, gid uint32) {
		t.Helper()
		checkOwned(t, f, want, uid, gid)
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
		says     string // the cause, named
	}{{"another user's", 0, group, "the file is user 0's, of group 4321"}, {"a group not the writer's", nobody, 0, "the file is this user's but of group 0, not one of this user's groups"}} {
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
				if code != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), "owner") || !strings.Contains(string(out), tc.hint) || !strings.Contains(string(out), owner.says) {
					t.Errorf("exit %d, %s; want 1 and PERMISSION_DENIED naming the owner, saying %q, hint %q", code, out, owner.says, tc.hint)
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

// A move with a change (apply-patch's Update File with Move to) makes a
// new file at the destination, which is the writer's, as a replace does:
// an unprivileged writer moving another user's file (or one of a group it
// is not in) with a change is refused as a replace of it is,
// PERMISSION_DENIED with the owner and group before anything is staged,
// dry runs too, where the moved file silently became the writer's, exit
// 0. A move without a change is a rename, which keeps the file's inode
// and so its owner: mv stays allowed. The writer is this test binary run
// as nobody with a second group, so the test needs root.
func TestMoveWithChangeThatWouldChangeOwnerIsRefused(t *testing.T) {
	const nobody, group, other = 65534, 4321, 4000
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	// A set-group-ID directory of a group the writer is in, whose new
	// files get that group.
	if err := os.Chown(root, 0, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, os.ModeSetgid|0o777); err != nil {
		t.Fatal(err)
	}
	src, dst := filepath.Join(root, "bm.txt"), filepath.Join(root, "bm2.txt")
	run := unprivileged(t, base, root, group)
	put := func(t *testing.T, uid, gid int) {
		t.Helper()
		os.Remove(src)
		os.Remove(dst)
		os.RemoveAll(filepath.Join(root, "nd"))
		os.RemoveAll(filepath.Join(base, "state", "journal"))
		putOwned(t, src, "a\nb\n", uid, gid)
	}
	check := checkOwned
	patch := filepath.Join(root, "p.patch")
	if err := os.WriteFile(patch, []byte("*** Begin Patch\n*** Update File: bm.txt\n*** Move to: bm2.txt\n@@\n a\n-b\n+c\n*** End Patch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Into a directory the commit makes, which the refusal leaves unmade.
	if err := os.WriteFile(filepath.Join(root, "q.patch"), []byte("*** Begin Patch\n*** Update File: bm.txt\n*** Move to: nd/bm2.txt\n@@\n a\n-b\n+c\n*** End Patch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []struct {
		name     string
		uid, gid int
	}{{"another user's", other, group}, {"a group not the writer's", nobody, 0}} {
		for _, tc := range []struct {
			name  string
			patch string
			dry   bool
		}{{"", "p.patch", false}, {" dry run", "p.patch", true}, {" into a new directory", "q.patch", false}, {" into a new directory, dry run", "q.patch", true}} {
			args := []string{"apply-patch", "--patch-file", tc.patch}
			if tc.dry {
				args = append(args, "--dry-run")
			}
			t.Run(owner.name+"/apply-patch"+tc.name, func(t *testing.T) {
				put(t, owner.uid, owner.gid)
				out, err := run(args...).CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), `"owner"`) || !strings.Contains(string(out), "write --in-place") {
					t.Errorf("exit %d, %s; want 1 and PERMISSION_DENIED naming the owner, hint write --in-place", code, out)
				}
				check(t, src, "a\nb\n", uint32(owner.uid), uint32(owner.gid))
				for _, at := range []string{dst, filepath.Join(root, "nd")} {
					if _, err := os.Lstat(at); !os.IsNotExist(err) {
						t.Errorf("%s is there: %v", filepath.Base(at), err)
					}
				}
			})
		}
		t.Run(owner.name+"/mv", func(t *testing.T) {
			put(t, owner.uid, owner.gid)
			if out, err := run("mv", "bm.txt", "bm2.txt").CombinedOutput(); err != nil {
				t.Fatalf("mv: %v\n%s", err, out)
			}
			check(t, dst, "a\nb\n", uint32(owner.uid), uint32(owner.gid))
		})
	}
	t.Run("the writer's own", func(t *testing.T) {
		put(t, nobody, group)
		if out, err := run("apply-patch", "--patch-file", "p.patch").CombinedOutput(); err != nil {
			t.Fatalf("apply-patch: %v\n%s", err, out)
		}
		check(t, dst, "a\nc\n", nobody, group)
	})
}
