package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

func TestLockAnchor(t *testing.T) {
	deep := strings.Repeat("/d", lockDepth)
	for p, want := range map[string]string{
		"/":                 "/",
		"/a":                "/a",
		deep:                deep,
		deep + "/e":         deep,
		deep + "/e/f/g.txt": deep,
	} {
		if got := lockAnchor(p); got != want {
			t.Errorf("lockAnchor(%.20q...) = %.20q..., want %.20q...", p, got, want)
		}
	}
}

// fdsOpen counts this process's open descriptors.
func fdsOpen(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	return len(ents)
}

// The lock of a path holds a bounded number of descriptors whatever its
// depth: it held one lock file per ancestor, 16 descriptors at 10 deep,
// 106 at 100 and 206 at 200 in a temporary directory (now 16, 34, 34),
// over ulimit -n 128 from about 120 deep.
func TestLockDescriptorsBoundedByDepth(t *testing.T) {
	fsys, dir := newTestFS(t)
	for _, depth := range []int{10, 100, 200} {
		deep := strings.Repeat("d/", depth)
		must(t, os.MkdirAll(filepath.Join(dir, deep), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, deep, "f.txt"), nil, 0o644))
		before := fdsOpen(t)
		unlock, err := fsys.Lock(context.Background(), deep+"f.txt", 0)
		if err != nil {
			t.Fatalf("lock %d deep: %v", depth, err)
		}
		held := fdsOpen(t) - before
		unlock()
		t.Logf("%d deep: %d descriptors held", depth, held)
		// The lock files of lockDepth+1 paths at most, and the file's own.
		if held > lockDepth+2 {
			t.Errorf("the lock of a file %d deep holds %d descriptors, want at most %d", depth, held, lockDepth+2)
		}
		if n := fdsOpen(t); n != before {
			t.Errorf("%d descriptors open after the unlock, %d before", n, before)
		}
	}
}

// Below lockDepth, locks still exclude as every ancestor's did: a deep
// directory held (rm -r, mv) and a file below it, a file and its deep
// directory, a shallow ancestor and a deep file, and a process that takes
// a lock file for every ancestor (an older agentfs) and this one.
func TestLockDeepExcludes(t *testing.T) {
	fsys, dir := newTestFS(t)
	deep := strings.Repeat("d/", 200)
	must(t, os.MkdirAll(filepath.Join(dir, deep, "e"), 0o755))
	ctx := context.Background()
	for _, tc := range []struct{ held, tried string }{
		{deep + "e", deep + "e/f.txt"},
		{deep + "e/f.txt", deep + "e"},
		{deep + "e/f.txt", deep + "e/f.txt"},
		{"d/d/d", deep + "e/f.txt"},
		{deep + "e/f.txt", "d/d/d"},
	} {
		unlock, err := fsys.Lock(ctx, tc.held, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if u, err := fsys.Lock(ctx, tc.tried, 0); err == nil {
			u()
			t.Errorf("%.12s... (%d deep) locked while %.12s... (%d deep) is held", tc.tried, strings.Count(tc.tried, "/"), tc.held, strings.Count(tc.held, "/"))
		} else if code(err) != fault.CodeLockTimeout {
			t.Errorf("lock %.12s...: %v, want LOCK_TIMEOUT", tc.tried, err)
		}
		unlock()
	}
	// A file beside the deep tree is not held up.
	unlock, err := fsys.Lock(ctx, deep+"e/f.txt", time.Second)
	must(t, err)
	u, err := fsys.Lock(ctx, "other.txt", 0)
	must(t, err)
	u()
	unlock()

	// An older agentfs writing below the anchor holds the anchor's lock
	// file shared, as every ancestor's.
	real, err := filepath.EvalSymlinks(filepath.Join(dir, deep))
	must(t, err)
	dev, fsPath := lockKeyParts(mountTable(), real)
	anchor := lockAnchor(fsPath)
	if anchor == fsPath {
		t.Fatalf("%d deep is within lockDepth", strings.Count(fsPath, "/"))
	}
	ld, err := lockDir()
	must(t, err)
	fd, err := LockFile(ctx, filepath.Join(ld, lockName(keyOf(dev, anchor))), unix.LOCK_SH, time.Now())
	must(t, err)
	defer unix.Close(fd)
	if u, err := fsys.Lock(ctx, deep+"e", 0); err == nil {
		u()
		t.Errorf("a deep directory locked while an ancestor's lock file is held shared")
	} else if code(err) != fault.CodeLockTimeout {
		t.Errorf("lock a deep directory: %v, want LOCK_TIMEOUT", err)
	}
}
