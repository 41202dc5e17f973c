// Package deeptree makes trees deeper than a path can name (PATH_MAX), for
// the tests of what must go by descriptors there: walks, searches, the
// index's stat pass. Such a tree cannot be made by path (os.MkdirAll fails
// with ENAMETOOLONG), so it is made one directory at a time, each relative
// to the last.
package deeptree

import (
	"testing"

	"golang.org/x/sys/unix"
)

// File makes levels nested directories called name below dir and, in the
// deepest, a file called file holding content.
func File(t testing.TB, dir, name string, levels int, file, content string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range levels {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, file, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(f)
	if _, err := unix.Write(f, []byte(content)); err != nil {
		t.Fatal(err)
	}
}
