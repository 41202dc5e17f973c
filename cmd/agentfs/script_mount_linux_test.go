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
// missing, of 4 MiB or with the mount options OPTS (nr_inodes=8: one a
// script fills with a few files), and unmounts it when the script ends.
// Scripts guard it with [mount].
func cmdMountTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 && len(args) != 2 {
		ts.Fatalf("usage: mounttmpfs DIR [OPTS]")
	}
	dir, opts := ts.MkAbs(args[0]), "size=4m"
	if len(args) == 2 {
		opts = args[1]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("mounttmpfs: %v", err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
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

// cmdMountOverlay mounts an overlay of LOWER under UPPER (WORK its work
// directory) on MERGED, and unmounts it when the script ends.
func cmdMountOverlay(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: mountoverlay LOWER UPPER WORK MERGED")
	}
	var abs [4]string
	for i, a := range args {
		abs[i] = ts.MkAbs(a)
		if err := os.MkdirAll(abs[i], 0o755); err != nil {
			ts.Fatalf("mountoverlay: %v", err)
		}
	}
	opts := "lowerdir=" + abs[0] + ",upperdir=" + abs[1] + ",workdir=" + abs[2]
	if err := unix.Mount("overlay", abs[3], "overlay", 0, opts); err != nil {
		ts.Fatalf("mountoverlay: %v", err)
	}
	ts.Defer(func() { unix.Unmount(abs[3], unix.MNT_DETACH) })
}
