package localfs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// Each errno a file operation can meet has its code.
func TestMapErrCodes(t *testing.T) {
	for errno, want := range map[unix.Errno]fault.Code{
		unix.ENOENT:       fault.CodeNotFound,
		unix.ENOTDIR:      fault.CodeNotADirectory,
		unix.EISDIR:       fault.CodeNotAFile,
		unix.EACCES:       fault.CodePermissionDenied,
		unix.EPERM:        fault.CodePermissionDenied,
		unix.ENAMETOOLONG: fault.CodeInvalidArgument,
		unix.ELOOP:        fault.CodeSymlink,
		unix.ENOSPC:       fault.CodeNoSpace,
		unix.EDQUOT:       fault.CodeNoSpace,
		unix.EROFS:        fault.CodeReadOnly,
		unix.EFBIG:        fault.CodeTooLarge,
		unix.EEXIST:       fault.CodeExists,
		unix.ENOTEMPTY:    fault.CodeNotEmpty,
		unix.ENXIO:        fault.CodeNotRegular,
		unix.EIO:          fault.CodeIOError,
	} {
		if got := mapErr(&os.PathError{Op: "open", Path: "x", Err: errno}, "x").Code; got != want {
			t.Errorf("%v: %s, want %s", errno, got, want)
		}
	}
}

// The errnos met for real, each through the operation that meets it.
func TestErrnosEndToEnd(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.MkdirAll(filepath.Join(dir, "full/sub"), 0o755))
	must(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	_, err := fsys.Remove(ctx, "full", backend.RemoveOptions{})
	wantCode(t, "rm of a directory that is not empty (ENOTEMPTY)", err, fault.CodeNotEmpty)
	_, err = fsys.WriteFile(ctx, "full", []byte("x"), backend.WriteOptions{})
	wantCode(t, "write over a directory (EISDIR)", err, fault.CodeNotAFile)
	_, err = fsys.Open(ctx, "loop1")
	wantCode(t, "read of a link loop (ELOOP)", err, fault.CodeSymlink)
	_, err = fsys.Open(ctx, strings.Repeat("n", 300))
	wantCode(t, "a name over 255 bytes (ENAMETOOLONG)", err, fault.CodeInvalidArgument)
}

// A file below a directory that may be gone through but not listed
// (0311 here, 0711 for others) reads as cat reads it, under either link
// policy, and so does a link there to it, followed by the policy; the
// directory itself still cannot be listed. os.Root opened the directory
// for reading on the way and refused the file.
func TestReadBelowSearchOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root is never refused by a file's mode; CI runs this as an unprivileged user (runuser -u nobody)")
	}
	ctx := context.Background()
	for _, policy := range []SymlinkPolicy{SymlinksWithin, SymlinksRefuse} {
		t.Setenv(StateDirEnv, t.TempDir())
		dir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, "d", "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "d", "sub", "f.txt"), []byte("hello\n"), 0o644))
		must(t, os.Symlink("sub/f.txt", filepath.Join(dir, "d", "link")))
		must(t, os.Chmod(filepath.Join(dir, "d"), 0o311))
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, "d"), 0o755) })
		fsys, err := New(Config{Roots: []string{dir}, Cwd: dir, Symlinks: policy})
		must(t, err)
		t.Cleanup(func() { fsys.Close() })
		r, err := fsys.Open(ctx, "d/sub/f.txt")
		if err != nil {
			t.Fatalf("%s: read below a directory of mode 311: %v", policy, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != "hello\n" {
			t.Fatalf("%s: read %q, %v", policy, b, err)
		}
		if _, err := fsys.Stat(ctx, "d/sub/f.txt"); err != nil {
			t.Errorf("%s: stat below a directory of mode 311: %v", policy, err)
		}
		_, err = fsys.ReadDir(ctx, "d", 0, 10)
		wantCode(t, string(policy)+": a listing of a directory of mode 311", err, fault.CodePermissionDenied)
		r, err = fsys.Open(ctx, "d/link")
		if policy == SymlinksRefuse {
			wantCode(t, "refuse: a link in a directory of mode 311", err, fault.CodeSymlink)
			continue
		}
		if err != nil {
			t.Fatalf("within: a link in a directory of mode 311 to a file beside it: %v", err)
		}
		b, err = io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != "hello\n" {
			t.Fatalf("within: read through the link %q, %v", b, err)
		}
	}
}

// EACCES as an unprivileged user meets it: root reads and writes anyway.
func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root is never refused by a file's mode; CI runs this as an unprivileged user (runuser -u nobody)")
	}
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	must(t, os.WriteFile(filepath.Join(dir, "locked.txt"), []byte("x"), 0o000))
	must(t, os.Mkdir(filepath.Join(dir, "ro"), 0o555))
	_, err := fsys.Open(ctx, "locked.txt")
	wantCode(t, "read of a file with mode 000", err, fault.CodePermissionDenied)
	_, err = fsys.WriteFile(ctx, "ro/new.txt", []byte("x"), backend.WriteOptions{})
	wantCode(t, "write into a directory with mode 555", err, fault.CodePermissionDenied)
	must(t, os.WriteFile(filepath.Join(dir, "readonly.txt"), []byte("x"), 0o444))
	_, err = fsys.WriteFile(ctx, "readonly.txt", []byte("y"), backend.WriteOptions{})
	wantCode(t, "write over a file with mode 444", err, fault.CodePermissionDenied)
	if e := fault.AsError(err); !strings.Contains(e.Hint, "change its mode") {
		t.Errorf("a file its mode forbids writing: hint %q should say to change its mode", e.Hint)
	}
	// A move out of a directory its mode forbids changing names the
	// source, and the destination in details: rename(2) does not say
	// which directory refused, and the destination alone was blamed.
	must(t, os.Mkdir(filepath.Join(dir, "rw"), 0o755))
	must(t, os.Chmod(filepath.Join(dir, "ro"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ro", "f.txt"), []byte("x"), 0o644))
	must(t, os.Chmod(filepath.Join(dir, "ro"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ro"), 0o755) }) // for TempDir's removal
	_, err = fsys.Rename(ctx, "ro/f.txt", "rw/f.txt", backend.WriteOptions{})
	wantCode(t, "a move out of a directory with mode 555", err, fault.CodePermissionDenied)
	if e := fault.AsError(err); e.Path != "ro/f.txt" || e.Details["destination"] != "rw/f.txt" {
		t.Errorf("a move out of a directory with mode 555: path %q, details %v; want the source, and the destination in details", e.Path, e.Details)
	}
}

func wantCode(t *testing.T, what string, err error, want fault.Code) {
	t.Helper()
	if code(err) != want {
		t.Errorf("%s: want %s, got %v", what, want, err)
	}
}

// A copy's failure names the side that failed: the destination for a
// write's, whatever call met it, the source for a read's, though
// copy_file_range names the destination for both.
func TestCopySide(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "write", Path: "to", Err: unix.EIO}, "to"},
		{&os.PathError{Op: "copy_file_range", Path: "to", Err: unix.ENOSPC}, "to"},
		{&os.PathError{Op: "copy_file_range", Path: "to", Err: unix.EDQUOT}, "to"},
		{&os.PathError{Op: "copy_file_range", Path: "to", Err: unix.EFBIG}, "to"},
		{&os.PathError{Op: "copy_file_range", Path: "to", Err: unix.EIO}, "at"},
		{&os.PathError{Op: "read", Path: "at", Err: unix.EIO}, "at"},
	} {
		if got := copySide(tc.err, "at", "to"); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.err, got, tc.want)
		}
	}
}
