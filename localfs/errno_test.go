package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"golang.org/x/sys/unix"
)

// Each errno a file operation can meet has its code.
func TestMapErrCodes(t *testing.T) {
	for errno, want := range map[unix.Errno]core.Code{
		unix.ENOENT:       core.CodeNotFound,
		unix.ENOTDIR:      core.CodeNotADirectory,
		unix.EISDIR:       core.CodeNotAFile,
		unix.EACCES:       core.CodePermissionDenied,
		unix.EPERM:        core.CodePermissionDenied,
		unix.ENAMETOOLONG: core.CodeInvalidArgument,
		unix.ELOOP:        core.CodeSymlink,
		unix.ENOSPC:       core.CodeNoSpace,
		unix.EDQUOT:       core.CodeNoSpace,
		unix.EROFS:        core.CodeReadOnly,
		unix.EEXIST:       core.CodeExists,
		unix.ENOTEMPTY:    core.CodeNotEmpty,
		unix.ENXIO:        core.CodeNotRegular,
		unix.EIO:          core.CodeIOError,
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
	_, err := fsys.Remove(ctx, "full", false)
	wantCode(t, "rm of a directory that is not empty (ENOTEMPTY)", err, core.CodeNotEmpty)
	_, err = fsys.WriteFile(ctx, "full", []byte("x"), core.WriteOptions{})
	wantCode(t, "write over a directory (EISDIR)", err, core.CodeNotAFile)
	_, err = fsys.Open(ctx, "loop1", 0)
	wantCode(t, "read of a link loop (ELOOP)", err, core.CodeSymlink)
	_, err = fsys.Open(ctx, strings.Repeat("n", 300), 0)
	wantCode(t, "a name over 255 bytes (ENAMETOOLONG)", err, core.CodeInvalidArgument)
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
	_, err := fsys.Open(ctx, "locked.txt", 0)
	wantCode(t, "read of a file with mode 000", err, core.CodePermissionDenied)
	_, err = fsys.WriteFile(ctx, "ro/new.txt", []byte("x"), core.WriteOptions{})
	wantCode(t, "write into a directory with mode 555", err, core.CodePermissionDenied)
	must(t, os.WriteFile(filepath.Join(dir, "readonly.txt"), []byte("x"), 0o444))
	_, err = fsys.WriteFile(ctx, "readonly.txt", []byte("y"), core.WriteOptions{})
	wantCode(t, "write over a file with mode 444", err, core.CodePermissionDenied)
	if e := core.AsError(err); !strings.Contains(e.Hint, "change its mode") {
		t.Errorf("a file its mode forbids writing: hint %q should say to change its mode", e.Hint)
	}
}

func wantCode(t *testing.T, what string, err error, want core.Code) {
	t.Helper()
	if code(err) != want {
		t.Errorf("%s: want %s, got %v", what, want, err)
	}
}
