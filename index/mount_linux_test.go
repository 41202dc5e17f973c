package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// A kernel file system mounted on a directory of the tree during the build
// is left out of the index, and its directory's listing does not change
// when it is taken off: the search proved its list by the parent and
// missed the files under the mount point until the next build. The build
// records the directory it left out by identity, and a search walks once
// it is another.
func TestKernelMountTakenOffSinceTheBuild(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount; CI runs it as root (sudo go test ./index -run KernelMountTakenOff)")
	}
	f := newFixture(t)
	f.put("r.txt", "needle root\n")
	f.put("a/x.txt", "needle under the mount point\n")
	point := filepath.Join(f.dir, "a")
	f.ageDirs()
	if err := unix.Mount("proc", point, "proc", 0, ""); err != nil {
		t.Skipf("mount is not permitted here (%v)", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(point, unix.MNT_DETACH)
		}
	})
	f.update(f.fsys)
	req := core.GrepRequest{Query: "needle", Path: ".", Mode: core.ModeFiles}
	f.same(req)
	if err := unix.Unmount(point, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	f.same(req)
	if got := f.grepFiles("needle"); len(got) != 2 {
		t.Fatalf("after the mount was taken off: %q, want a/x.txt and r.txt", got)
	}
}

// The index of a tree on a file system taken off (a disk unmounted) is
// kept by a sweep: its root is gone, but the directory where it was is on
// another file system than the build's, and the index is of use once the
// disk is mounted again. Gone from a mounted file system, it goes.
func TestSweepKeepsATreeOnAFileSystemTakenOff(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for mount; CI runs it as root (sudo go test ./index -run SweepKeepsATreeOnAFileSystemTakenOff)")
	}
	s := newSweepTrees(t)
	disk := filepath.Join(filepath.Dir(s.kept), "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount is not permitted here (%v)", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(disk, unix.MNT_DETACH)
		}
	})
	tree := filepath.Join(disk, "proj")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "a.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := localfs.New(localfs.Config{Roots: []string{tree}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), fsys, tree, tree, BuildOptions{LockTimeout: time.Second})
	fsys.Close() // its descriptors hold the disk
	if err != nil {
		t.Fatal(err)
	}
	loc, err := locate(s.state, tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Unmount(disk, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	if n := Sweep(); n != 0 {
		t.Fatalf("Sweep removed %d index files with the disk taken off, want 0", n)
	}
	if _, err := os.Stat(loc.file); err != nil {
		t.Fatalf("the index of the tree on the disk taken off: %v", err)
	}
	s.removeGone()
	if n := Sweep(); n != 1 {
		t.Fatalf("Sweep removed %d index files, want 1 (the tree removed from a mounted file system)", n)
	}
}
