package localfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// foldDir is a directory as a file system that ignores case lists and
// finds its entries: stored names and their files, any spelling finding
// a stored name.
type foldDir map[string]unix.Stat_t

func (d foldDir) lstat(name string) (unix.Stat_t, bool) {
	for n, st := range d {
		if strings.EqualFold(n, name) {
			return st, true
		}
	}
	return unix.Stat_t{}, false
}

func (d foldDir) list() ([]string, error) {
	var names []string
	for n := range d {
		names = append(names, n)
	}
	return names, nil
}

// Two spellings of one stored name are one entry where case is ignored
// (APFS): keyed by spelling, README and readme were two, so mv readme
// README was EXISTS (and with --overwrite "onto itself"), and a patch
// adding Foo.go and deleting foo.go lost its race at every attempt for 30
// s. Two hard links are still two entries, whatever their spelling.
func TestOneEntry(t *testing.T) {
	file := unix.Stat_t{Dev: 1, Ino: 10, Mode: unix.S_IFREG, Nlink: 1}
	dir := unix.Stat_t{Dev: 1, Ino: 11, Mode: unix.S_IFDIR, Nlink: 2}
	linked := unix.Stat_t{Dev: 1, Ino: 12, Mode: unix.S_IFREG, Nlink: 2}
	d := foldDir{"readme": file, "Dir": dir, "a": linked, "b": linked, "other": {Dev: 1, Ino: 13, Mode: unix.S_IFREG, Nlink: 1}}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"readme", "readme", true},
		{"readme", "README", true},
		{"README", "ReadMe", true},
		{"Dir", "dir", true},
		{"readme", "other", false},
		{"readme", "missing", false},
		{"a", "b", false}, // hard links
		{"a", "A", true},
		{"A", "B", false}, // aliases of two hard links
		{"b", "A", false},
	} {
		got, err := oneEntry(c.a, c.b, d.lstat, d.list)
		if err != nil || got != c.want {
			t.Errorf("oneEntry(%s, %s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	// A case-sensitive file system: another spelling is another file.
	cs := func(name string) (unix.Stat_t, bool) { st, ok := d[name]; return st, ok }
	if got, _ := oneEntry("readme", "README", cs, d.list); got {
		t.Error("readme and README are one entry where README is missing")
	}
}

// respell changes the spelling the directory lists (as APFS's rename(2)
// does), and where the file system keeps the old one while rename(2)
// succeeds (Linux: the kernel sees one file and does nothing, on a
// casefold or FUSE directory) it is refused: the move was reported done.
func TestRespell(t *testing.T) {
	ctx := context.Background()
	for _, kernelNoOp := range []bool{false, true} {
		fsys, dir := newTestFS(t)
		if err := os.WriteFile(filepath.Join(dir, "readme"), []byte("r"), 0o644); err != nil {
			t.Fatal(err)
		}
		if kernelNoOp {
			renameat := syscalls.renameat
			t.Cleanup(func() { syscalls.renameat = renameat })
			syscalls.renameat = func(int, string, int, string) error { return nil }
		}
		src, err := fsys.renameEnd(ctx, "readme", nil)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := fsys.renameEnd(ctx, "README", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = respell(src, dst)
		src.dir.Close()
		dst.dir.Close()
		names, _ := os.ReadDir(dir)
		listed := slices.ContainsFunc(names, func(e os.DirEntry) bool { return e.Name() == "README" })
		switch e := fault.AsError(err); {
		case !kernelNoOp && (err != nil || !listed):
			t.Errorf("respell: %v; README listed %v", err, listed)
		case kernelNoOp && (e == nil || e.Code != fault.CodeNotSupported || listed):
			t.Errorf("respell where rename(2) does nothing: %v, want NOT_SUPPORTED", err)
		}
	}
}
