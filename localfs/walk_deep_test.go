package localfs_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"golang.org/x/sys/unix"
)

// lowerOpenFiles sets the soft limit on open files to n for the rest of the
// test. The Go runtime raises the soft limit to the hard one at start, so
// the limit is set explicitly, and restored at the end.
// setCur sets a limit whose type is the system's (uint64 on Linux, int64
// on FreeBSD).
func setCur[T int64 | uint64](cur *T, n uint64) { *cur = T(n) }

func lowerOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	saved := lim
	setCur(&lim.Cur, n)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &saved); err != nil {
			t.Fatal(err)
		}
	})
}

// deepTree makes under dir a chain of depth directories named d, each
// with a file z.txt holding content (so that a walk comes back to every
// directory after the one below it), and deepest.txt at the bottom;
// relative to open directories, as its paths outgrow PATH_MAX.
func deepTree(t *testing.T, dir string, depth int, content string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) {
		f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Write(f, []byte(content)); err != nil {
			t.Fatal(err)
		}
		unix.Close(f)
	}
	for range depth {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		file("z.txt")
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	file("deepest.txt")
	unix.Close(fd)
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	return len(ents)
}

// TestWalkDeeperThanOpenFileLimit walks, greps and removes a tree 1,000
// levels deep under a limit of 64 open files: the walk finds the deepest
// file and every level's file (coming back to directories it had to close)
// holding a bounded number of descriptors, and rm -r removes the whole
// tree. The walk used to skip what it could not open (EMFILE) and answer
// with an empty success.
func TestWalkDeeperThanOpenFileLimit(t *testing.T) {
	const depth = 1000
	dir := t.TempDir()
	deepTree(t, dir, depth, "")
	tl := newTools(t, dir)
	fsys := tl.FS.(*localfs.FS)
	before := openFDs(t)
	lowerOpenFiles(t, 64)
	levels, deepest, most := 0, "", 0
	err := fsys.Walk(context.Background(), ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		switch e.Name {
		case "z.txt":
			levels++
			r, err := e.Open()
			if err != nil {
				return err
			}
			r.Close()
		case "deepest.txt":
			deepest = e.Path
			most = openFDs(t)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if levels != depth || deepest != strings.Repeat("d/", depth)+"deepest.txt" {
		t.Fatalf("walk found z.txt at %d levels of %d, and deepest.txt at %.40q...", levels, depth, deepest)
	}
	// 16 directories (a quarter of the limit), the listing of the deepest
	// one, and the descriptor that counts them.
	if most > before+18 {
		t.Errorf("%d descriptors open at the bottom, %d before the walk", most, before)
	}
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after the walk, %d before", n, before)
	}
	res, err := tl.Find(context.Background(), core.FindRequest{Pattern: "deepest.txt"})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("find deepest.txt = %+v, %v", res, err)
	}
	if _, err := fsys.Remove(context.Background(), "d", backend.RemoveOptions{Recursive: true}); err != nil {
		t.Fatalf("rm -r: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after rm -r: %v", err)
	}
}

// TestWalkTooManyOpenFilesIsAnError leaves a walk three free descriptors:
// running out of them (EMFILE) is IO_ERROR saying to raise ulimit -n, not a
// success that leaves out what could not be opened.
func TestWalkTooManyOpenFilesIsAnError(t *testing.T) {
	dir := t.TempDir()
	deepTree(t, dir, 8, "")
	fsys := newTools(t, dir).FS.(*localfs.FS)
	lowerOpenFiles(t, uint64(openFDs(t)+64))
	var filler []int
	defer func() {
		for _, fd := range filler {
			unix.Close(fd)
		}
	}()
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			if !errors.Is(err, unix.EMFILE) {
				t.Fatal(err)
			}
			break
		}
		filler = append(filler, fd)
	}
	for range 3 {
		unix.Close(filler[len(filler)-1])
		filler = filler[:len(filler)-1]
	}
	var seen []string
	err := fsys.Walk(context.Background(), ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		seen = append(seen, e.Rel)
		return nil
	})
	var ce *fault.Error
	if !errors.As(err, &ce) || ce.Code != fault.CodeIOError || !errors.Is(err, unix.EMFILE) || !strings.Contains(ce.Hint, "ulimit -n") {
		t.Fatalf("walk with 3 free descriptors = %v (after %q), want IO_ERROR for EMFILE with a hint to raise ulimit -n", err, seen)
	}
}

// TestWalkReopenRefusesSwappedDirectory swaps a directory that the walk has
// closed (to stay within its descriptors), while the walk is below it, for
// a link to a tree of the same shape outside the root, or for another such
// directory: going back up, the walk opens it again by name without
// following links and checks that it is the same directory, so it never
// reads outside nor another directory under the old name; what it cannot
// reach again is skipped, as a directory gone.
func TestWalkReopenRefusesSwappedDirectory(t *testing.T) {
	for _, swap := range []string{"link", "directory"} {
		t.Run(swap, func(t *testing.T) {
			const depth = 200
			base := t.TempDir()
			root, other := filepath.Join(base, "root"), filepath.Join(base, "other")
			for _, d := range []string{root, other} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			deepTree(t, root, depth, "inside")
			deepTree(t, other, depth, "other")
			fsys, err := localfs.New(localfs.Config{Roots: []string{root}, Cwd: root})
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			lowerOpenFiles(t, 64)
			swapped := filepath.Join(root, "d/d/d/d/d")
			var got []string
			err = fsys.Walk(context.Background(), ".", backend.WalkOptions{}, func(e backend.WalkEntry) error {
				got = append(got, e.Rel)
				if e.Type == backend.TypeFile {
					r, err := e.Open()
					if err != nil {
						return err
					}
					defer r.Close()
					if b, _ := io.ReadAll(r); string(b) != "inside" {
						t.Fatalf("the walk read %q at %.30q...", b, e.Rel)
					}
				}
				if e.Name != "deepest.txt" {
					return nil
				}
				if err := os.Rename(swapped, filepath.Join(base, "moved")); err != nil {
					return err
				}
				if swap == "link" {
					return os.Symlink(other, swapped)
				}
				return os.Rename(filepath.Join(other, "d"), swapped)
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got, strings.Repeat("d/", depth)+"deepest.txt") {
				t.Fatalf("the walk did not reach the bottom: %d entries", len(got))
			}
			for k := range 5 {
				if p := strings.Repeat("d/", k) + "z.txt"; got[len(got)-1-k] != p {
					t.Errorf("walk ends with %q, want %q at %d from the end", got[len(got)-5:], p, k)
				}
			}
		})
	}
}

// A path whose absolute form passes PATH_MAX is refused naming both its
// lengths: relative, it may be under the limit (4,085 bytes here), and the
// error said only "the path is 4,304 bytes long", a number the caller
// never passed.
func TestPathPastPathMaxNamesBothLengths(t *testing.T) {
	dir := t.TempDir()
	deepTree(t, dir, 2100, "")
	tl := newTools(t, dir)
	rel := strings.Repeat("d/", 2040) + "z.txt"
	_, err := tl.FS.Stat(context.Background(), rel)
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, "bytes long from /, over the kernel's limit of 4095 (4085 bytes as given)") {
		t.Fatalf("%v; want INVALID_ARGUMENT naming both lengths", err)
	}
}

// A relative path over PATH_MAX, as grep and find list below a deep
// directory and replace reads, names a file too deep to be named, not a
// path to shorten: "use a shorter path" told the caller of a replace over
// "." to do what it had not done, and nothing it could.
func TestRelativePathPastPathMaxIsTooDeep(t *testing.T) {
	dir := t.TempDir()
	deepTree(t, dir, 2100, "")
	tl := newTools(t, dir)
	rel := strings.Repeat("d/", 2100) + "z.txt"
	_, err := tl.FS.Stat(context.Background(), rel)
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Hint, "a file this deep can be listed and searched, but not named") {
		t.Fatalf("got hint %q of %v; want INVALID_ARGUMENT saying the file is too deep to be named", e.Hint, e.Code)
	}
}
