package localfs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A name on the path that changes from a link to a directory between the
// lstat and the readlink of a resolve (readlink's EINVAL: a directory and
// a link swapped) is a race, not a bad path: the resolve is tried again,
// and a path that keeps changing is STALE. (The path is resolved more
// than once: twice, the race hits the resolve whose error is told.) It was INVALID_ARGUMENT, "the
// path is not valid here", for a path a retry reaches.
func TestResolveRacingASwapIsNoBadPath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		races int
		want  fault.Code
	}{
		{"twice", 2, ""},
		{"at every try", 1 << 30, fault.CodeStale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, dir := newTestFS(t)
			real := f.roots[0].path
			must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "d", "f.txt"), []byte("x"), 0o644))
			// An absolute link, which os.Root refuses: resolved by name.
			must(t, os.Symlink(filepath.Join(real, "d"), filepath.Join(dir, "l")))
			orig := evalLinks
			t.Cleanup(func() { evalLinks = orig })
			full, races := filepath.Join(real, "l", "f.txt"), tc.races
			evalLinks = func(p string) (string, error) {
				if races > 0 && p == full {
					races--
					return "", &fs.PathError{Op: "readlink", Path: filepath.Join(real, "l"), Err: unix.EINVAL}
				}
				return orig(p)
			}
			_, err := f.Stat(context.Background(), "l/f.txt")
			if c := code(err); c != tc.want {
				t.Fatalf("stat of a path whose resolve raced a swap %s: %v, want code %q", tc.name, err, tc.want)
			}
		})
	}
}
