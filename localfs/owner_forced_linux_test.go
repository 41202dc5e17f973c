package localfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// Where the file system shows every file with one owner, group and mode
// whoever makes it (bindfs --force-user --perms, vfat mounted with uid=
// and fmask=), a replace keeps them though the writer could not give them
// by its ids alone: write, edit, replace and apply-patch (a move with a
// change too) and their dry runs, by nobody, succeed and leave the file
// as the mount showed it, where they were PERMISSION_DENIED ("the file is
// user 4000's") for a change that changed nothing. Where it shows one
// owner but each file's own mode (bindfs --force-user alone), which only
// that owner may change, the replace would change the mode: refused, dry
// runs too, as is a move to or from another file system, a copy. The
// writer is this test binary run as nobody, the file systems bindfs
// mounts, so the test needs root and bindfs.
func TestReplaceWhereTheFileSystemGivesTheOwner(t *testing.T) {
	const forced = 4000
	base := nobodyBase(t)
	if _, err := exec.LookPath("bindfs"); err != nil {
		t.Skip("needs bindfs (apt-get install bindfs) and root to mount it")
	}
	root := filepath.Join(base, "root")
	src := filepath.Join(base, "src")
	mnt := filepath.Join(root, "mnt")
	modes := filepath.Join(root, "modes") // each file's own mode
	writableDirs(t, root, src, mnt, modes)
	for at, perms := range map[string][]string{mnt: {"--perms=a+rw"}, modes: nil} {
		args := append([]string{"--force-user=4000", "--force-group=4000", "-o", "allow_other", src, at}, perms...)
		if out, err := exec.Command("bindfs", args...).CombinedOutput(); err != nil {
			t.Skipf("needs bindfs (apt-get install bindfs) and root to mount it: %v: %s", err, out)
		}
		t.Cleanup(func() {
			if err := unix.Unmount(at, 0); err != nil {
				unix.Unmount(at, unix.MNT_DETACH)
			}
		})
	}
	run := unprivileged(t, base, root)
	f := filepath.Join(mnt, "f.txt")
	put := func(t *testing.T, at string) {
		t.Helper()
		os.RemoveAll(filepath.Join(base, "state", "journal"))
		putOwned(t, at, "old\n", -1, -1)
	}
	check := func(t *testing.T, at, want string, uid, gid uint32) {
		t.Helper()
		checkOwned(t, at, want, uid, gid)
		for _, d := range []string{src, root} {
			names, _ := os.ReadDir(d)
			for _, n := range names {
				if strings.HasPrefix(n.Name(), ".agentfs-") {
					t.Errorf("left in %s: %s", d, n.Name())
				}
			}
		}
	}
	for name, patch := range map[string]string{
		"p.patch":  "*** Begin Patch\n*** Update File: mnt/f.txt\n@@\n-old\n+new\n*** End Patch\n",
		"mv.patch": "*** Begin Patch\n*** Update File: mnt/f.txt\n*** Move to: mnt/g.txt\n@@\n-old\n+new\n*** End Patch\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(patch), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		at   string // where the change leaves the file
		dry  bool
	}{
		{"write", []string{"write", "mnt/f.txt", "--content", "new\n"}, "f.txt", false},
		{"append", []string{"write", "mnt/f.txt", "--content", "new\n", "--append"}, "f.txt", false},
		{"edit", []string{"edit", "mnt/f.txt", "--old", "old", "--new", "new"}, "f.txt", false},
		{"edit dry run", []string{"edit", "mnt/f.txt", "--old", "old", "--new", "new", "--dry-run"}, "f.txt", true},
		{"replace", []string{"replace", "old", "new", "mnt/f.txt"}, "f.txt", false},
		{"replace dry run", []string{"replace", "old", "new", "mnt/f.txt", "--dry-run"}, "f.txt", true},
		{"apply-patch", []string{"apply-patch", "--patch-file", "p.patch"}, "f.txt", false},
		{"apply-patch dry run", []string{"apply-patch", "--patch-file", "p.patch", "--dry-run"}, "f.txt", true},
		{"apply-patch move with a change", []string{"apply-patch", "--patch-file", "mv.patch"}, "g.txt", false},
		{"apply-patch move with a change dry run", []string{"apply-patch", "--patch-file", "mv.patch", "--dry-run"}, "f.txt", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(mnt, "g.txt"))
			put(t, f)
			if out, err := run(tc.args...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s; want it done, the file system keeping the owner", err, out)
			}
			want := "new\n"
			switch {
			case tc.dry:
				want = "old\n"
			case tc.name == "append":
				want = "old\nnew\n"
			}
			check(t, filepath.Join(mnt, tc.at), want, forced, forced)
		})
	}
	refused := func(t *testing.T, args ...string) {
		t.Helper()
		out, err := run(args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), `"owner"`) {
			t.Errorf("%v, %s; want exit 1 and PERMISSION_DENIED naming the owner", err, out)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"write", []string{"write", "modes/f.txt", "--content", "new\n"}},
		{"edit dry run", []string{"edit", "modes/f.txt", "--old", "old", "--new", "new", "--dry-run"}},
		{"mv from it to another file system", []string{"mv", "modes/f.txt", "f.txt"}},
	} {
		t.Run("each file's own mode/"+tc.name, func(t *testing.T) {
			put(t, f)
			refused(t, tc.args...)
			check(t, filepath.Join(modes, "f.txt"), "old\n", forced, forced)
			if _, err := os.Lstat(filepath.Join(root, "f.txt")); err == nil {
				t.Errorf("f.txt was copied out of the mount")
			}
		})
	}
	t.Run("mv onto it from another file system", func(t *testing.T) {
		h := filepath.Join(root, "h.txt")
		put(t, h)
		if err := os.Chown(h, forced, forced); err != nil {
			t.Fatal(err)
		}
		refused(t, "mv", "h.txt", "mnt/h.txt")
		check(t, h, "old\n", forced, forced)
		if _, err := os.Lstat(filepath.Join(mnt, "h.txt")); err == nil {
			t.Errorf("h.txt was copied onto the mount")
		}
	})
}

// Where the file system refuses or ignores a chown by root (NFS's
// root_squash; bindfs --chown-deny, --chown-ignore), root's replace of
// another user's file cannot give the new file its owner and group: it
// is PERMISSION_DENIED, nothing left behind and the file as it was, and
// a dry run says so too. Root's ids say it may give any owner, and the
// replace's fallback to what it could give made the file root's, exit 0.
// The test needs root and bindfs.
func TestReplaceWhereTheFileSystemRefusesRootTheOwner(t *testing.T) {
	const other = 4000
	base := nobodyBase(t)
	if _, err := exec.LookPath("bindfs"); err != nil {
		t.Skip("needs bindfs (apt-get install bindfs) and root to mount it")
	}
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	for _, policy := range []string{"deny", "ignore"} {
		t.Run(policy, func(t *testing.T) {
			src, root := filepath.Join(base, policy+"-src"), filepath.Join(base, policy)
			for _, d := range []string{src, root} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if out, err := exec.Command("bindfs", "--chown-"+policy, "--chgrp-"+policy, src, root).CombinedOutput(); err != nil {
				t.Skipf("needs bindfs (apt-get install bindfs) and root to mount it: %v: %s", err, out)
			}
			t.Cleanup(func() {
				if err := unix.Unmount(root, 0); err != nil {
					unix.Unmount(root, unix.MNT_DETACH)
				}
			})
			f := filepath.Join(src, "f.txt")
			if err := os.WriteFile(filepath.Join(root, "p.patch"), []byte("*** Begin Patch\n*** Update File: f.txt\n@@\n-old\n+new\n*** End Patch\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				args []string
			}{
				{"write", []string{"write", "f.txt", "--content", "new\n"}},
				{"edit", []string{"edit", "f.txt", "--old", "old", "--new", "new"}},
				{"edit dry run", []string{"edit", "f.txt", "--old", "old", "--new", "new", "--dry-run"}},
				{"apply-patch", []string{"apply-patch", "--patch-file", "p.patch"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if err := os.WriteFile(f, []byte("old\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chown(f, other, other); err != nil {
						t.Fatal(err)
					}
					out, err := command(t, root, "agentfs", tc.args...).CombinedOutput()
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) || !strings.Contains(string(out), `"owner":4000`) {
						t.Errorf("%v, %s; want exit 1 and PERMISSION_DENIED naming the owner", err, out)
					}
					var st syscall.Stat_t
					if err := syscall.Lstat(f, &st); err != nil {
						t.Fatal(err)
					}
					if data, _ := os.ReadFile(f); string(data) != "old\n" || st.Uid != other || st.Gid != other {
						t.Errorf("the file: %q, owner %d:%d; want %q, %d:%d", data, st.Uid, st.Gid, "old\n", other, other)
					}
					names, _ := os.ReadDir(src)
					for _, n := range names {
						if strings.HasPrefix(n.Name(), ".agentfs-") {
							t.Errorf("left behind: %s", n.Name())
						}
					}
				})
			}
			// A move onto it from another file system copies: root's copy
			// was root's, the original removed.
			t.Run("mv onto it", func(t *testing.T) {
				h := filepath.Join(base, policy+"-h.txt")
				if err := os.WriteFile(h, []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(h, other, other); err != nil {
					t.Fatal(err)
				}
				out, err := command(t, root, "agentfs", "--root", base, "mv", h, filepath.Join(root, "h.txt")).CombinedOutput()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `"PERMISSION_DENIED"`) {
					t.Errorf("%v, %s; want exit 1 and PERMISSION_DENIED", err, out)
				}
				if _, err := os.Lstat(h); err != nil {
					t.Errorf("the original: %v; want it in place", err)
				}
				if _, err := os.Lstat(filepath.Join(src, "h.txt")); err == nil {
					t.Errorf("h.txt was copied onto the mount")
				}
			})
		})
	}
}
