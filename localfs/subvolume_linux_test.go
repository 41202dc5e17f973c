package localfs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A btrfs subvolume inside a tree has a device of its own in the tree's
// mount: rm -r refuses it, nothing removed, as it does a mount point, but
// says what it is. It said "the tree holds a mount point" with the hint to
// unmount it, which no umount can.
func TestRemoveTreeHoldingASubvolume(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a btrfs image; run it as root with btrfs-progs installed (sudo go test ./localfs -run TreeHoldingASubvolume)")
	}
	for _, tool := range []string{"mkfs.btrfs", "btrfs", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install btrfs-progs): %v", tool, err)
		}
	}
	base := t.TempDir()
	img, dir := filepath.Join(base, "btrfs.img"), filepath.Join(base, "mnt")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(img, nil, 0o600))
	must(t, os.Truncate(img, 300<<20))
	if out, err := exec.Command("mkfs.btrfs", "-q", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.btrfs failed: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("mounting a btrfs image is not permitted here (%v: %s); run as root outside a restricted container", err, out)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	must(t, os.MkdirAll(filepath.Join(dir, "tree", "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tree", "d", "f.txt"), []byte("x\n"), 0o644))
	if out, err := exec.Command("btrfs", "subvolume", "create", filepath.Join(dir, "tree", "sv")).CombinedOutput(); err != nil {
		t.Fatalf("btrfs subvolume create: %v: %s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(dir, "tree", "sv", "g.txt"), []byte("y\n"), 0o644))
	t.Setenv(StateDirEnv, filepath.Join(base, "state"))
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	must(t, err)
	defer fsys.Close()
	_, err = fsys.Remove(context.Background(), "tree", backend.RemoveOptions{Recursive: true})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeDenied || fe.Path != "tree/sv" ||
		!strings.Contains(fe.Message, "subvolume") || strings.Contains(fe.Hint, "unmount") {
		t.Fatalf("rm -r of a tree holding a subvolume: %v; want DENIED naming tree/sv as a subvolume, no hint to unmount it", err)
	}
	for _, p := range []string{"tree/d/f.txt", "tree/sv/g.txt"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s after the refused rm -r: %v", p, err)
		}
	}
}
