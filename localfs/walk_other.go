//go:build !linux

package localfs

import (
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// readNames lists a directory with the type the system gives, in name
// order; the dirent layout is Linux's business, so here the os package
// reads it.
func (w *walker) readNames(fd int) ([]dirEntry, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(dup), "")
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		de := dirEntry{name: e.Name(), typ: backend.TypeOther}
		switch t := e.Type(); {
		case t.IsRegular():
			de.typ = backend.TypeFile
		case t&fs.ModeDir != 0:
			de.typ = backend.TypeDir
		case t&fs.ModeSymlink != 0:
			de.typ = backend.TypeSymlink
		}
		out = append(out, de)
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// linkAt describes the entry name of the directory fd without following
// it and, for a link, reads its text (by name: without O_PATH the stat and
// the text may be of two files if the name is replaced between them).
func linkAt(fd int, name string) (unix.Stat_t, string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return st, "", nil
	}
	target, err := readLink(func(buf []byte) (int, error) { return unix.Readlinkat(fd, name, buf) }, st.Size)
	return st, target, err
}
