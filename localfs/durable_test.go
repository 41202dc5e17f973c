package localfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// A directory's sync that its file system does not support counts as
// done; a file's, or another error, fails.
func TestSyncWith(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		err  error
		want error
	}{
		{"directory, not supported", dir, unix.EOPNOTSUPP, nil},
		{"directory, EINVAL", dir, unix.EINVAL, nil},
		{"directory, ENOSYS", dir, unix.ENOSYS, nil},
		{"directory, EIO", dir, unix.EIO, unix.EIO},
		{"file, not supported", file, unix.EOPNOTSUPP, unix.EOPNOTSUPP},
		{"file, EINVAL", file, unix.EINVAL, unix.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := unix.Open(tc.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if got := syncWith(func(int) error { return tc.err })(fd); !errors.Is(got, tc.want) || (tc.want == nil) != (got == nil) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// On a file system that cannot sync a directory, a write, a move and a
// removal succeed: each failed IO_ERROR after it was made.
func TestChangesWhereDirectoriesCannotSync(t *testing.T) {
	fsync := syscalls.fsync
	t.Cleanup(func() { syscalls.fsync = fsync })
	syscalls.fsync = syncWith(func(fd int) error {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return unix.EOPNOTSUPP // go-fuse without fsyncdir
		}
		return unix.Fsync(fd)
	})
	dir := t.TempDir()
	f, err := New(Config{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.WriteFile(ctx, "a.txt", []byte("a\n"), backend.WriteOptions{}); err != nil {
		t.Fatalf("write: %v", err)
	}
	if _, err := f.Rename(ctx, "a.txt", "b.txt", backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatalf("mv: %v", err)
	}
	if _, err := f.Remove(ctx, "b.txt", backend.RemoveOptions{}); err != nil {
		t.Fatalf("rm: %v", err)
	}
}
