package index

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/core"
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
