package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// canMount says whether this process may mount a tmpfs: root, outside a
// container that forbids it.
func canMount() bool {
	if os.Geteuid() != 0 {
		return false
	}
	dir, err := os.MkdirTemp("", "agentfs-mount")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m") != nil {
		return false
	}
	return unix.Unmount(dir, unix.MNT_DETACH) == nil
}

// cmdMountTmpfs mounts a fresh tmpfs (another file system) on DIR, made if
// missing, and unmounts it when the script ends. Scripts guard it with
// [mount].
func cmdMountTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mounttmpfs DIR")
	}
	dir := ts.MkAbs(args[0])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("mounttmpfs: %v", err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		ts.Fatalf("mounttmpfs %s: %v", dir, err)
	}
	ts.Defer(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// cmdMountBind bind-mounts SRC (a file or a directory) on DST, which must
// exist, and unmounts it when the script ends. Scripts guard it with
// [mount].
func cmdMountBind(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mountbind SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		ts.Fatalf("mountbind %s %s: %v", src, dst, err)
	}
	ts.Defer(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}
