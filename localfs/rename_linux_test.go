package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// otherDevice is a fresh tmpfs, another file system than dir, or skips.
func otherDevice(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs; CI runs it as root (sudo go test ./localfs -run AcrossFileSystems)")
	}
	other := t.TempDir()
	if err := unix.Mount("tmpfs", other, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mounting a tmpfs is not permitted here (%v); run as root outside a restricted container", err)
	}
	t.Cleanup(func() { unix.Unmount(other, unix.MNT_DETACH) })
	var a, b unix.Stat_t
	if unix.Stat(dir, &a) != nil || unix.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Fatal("the tmpfs has the device of the temporary directory")
	}
	return other
}

// A file moved to another file system (EXDEV) is copied and removed in one
// transaction, mode kept; a directory is refused with nothing moved.
func TestRenameAcrossFileSystems(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDevice(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, "f.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "d", "x"), []byte("x"), 0o644))
	fsys, err := New(Config{Roots: []string{dir, other}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	if _, err := fsys.Rename(ctx, "f.sh", filepath.Join(other, "sub", "f.sh"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(other, "sub", "f.sh"))
	fi, _ := os.Stat(filepath.Join(other, "sub", "f.sh"))
	if err != nil || string(got) != "#!/bin/sh\n" || fi.Mode().Perm() != 0o755 {
		t.Errorf("moved across: %q %v, mode %v", got, err, fi.Mode())
	}
	if _, err := os.Lstat(filepath.Join(dir, "f.sh")); !os.IsNotExist(err) {
		t.Errorf("the source is still there: %v", err)
	}
	_, err = fsys.Rename(ctx, "d", filepath.Join(other, "d"), backend.WriteOptions{IfAbsent: true})
	if code(err) != fault.CodeInvalidArgument {
		t.Errorf("a directory across file systems: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d", "x")); err != nil {
		t.Errorf("a refused move lost d/x: %v", err)
	}
}
