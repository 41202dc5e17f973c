package localfs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// setImmutable sets or clears the immutable flag of the file p with
// chattr(1), skipping the test where it cannot.
func setImmutable(t *testing.T, p string, on bool) {
	t.Helper()
	flag := "-i"
	if on {
		flag = "+i"
	}
	chattr(t, flag, p)
}

// chattr sets or clears an attribute of p (+i, -a...), or skips saying how
// to run the test.
func chattr(t *testing.T, flag, p string) {
	t.Helper()
	if out, err := exec.Command("chattr", flag, p).CombinedOutput(); err != nil {
		t.Skipf("chattr %s failed (%v: %s): run as root with e2fsprogs, on ext4, xfs or btrfs", flag, err, out)
	}
}

// An immutable file in a tree, which not even root may unlink, is found
// by the check: nothing is removed.
func TestRemoveTreeRefusesImmutableFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting the immutable flag needs root: run go test as root")
	}
	dir := t.TempDir()
	kept := []string{"t/a/f", "t/b/f", "t/c/f"}
	for _, p := range append(kept, "t/b/pinned") {
		mustWrite(t, filepath.Join(dir, p))
	}
	pinned := filepath.Join(dir, "t", "b", "pinned")
	setImmutable(t, pinned, true)
	defer setImmutable(t, pinned, false)
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || e.Path != "t/b/pinned" || !strings.Contains(e.Hint, "nothing was removed") {
		t.Fatalf("rm -r of a tree with an immutable file: %v, want PERMISSION_DENIED at t/b/pinned, nothing removed", err)
	}
	for _, p := range kept {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
}

// A file made immutable behind the check stops the removal part-way, and
// the error says what was removed.
func TestRemoveTreeOwnsUpToPartialRemovalAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting the immutable flag needs root: run go test as root")
	}
	dir := t.TempDir()
	// Probe that flags can be set here before the removal relies on it.
	mustWrite(t, filepath.Join(dir, "probe"))
	setImmutable(t, filepath.Join(dir, "probe"), true)
	setImmutable(t, filepath.Join(dir, "probe"), false)
	var pinned string
	defer func() {
		if pinned != "" {
			setImmutable(t, pinned, false)
		}
	}()
	removePartly(t, dir, func(other string) {
		pinned = filepath.Join(other, "f1")
		setImmutable(t, pinned, true)
	})
}
