package localfs

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"

	"github.com/agentfs/agentfs/backend"
	"golang.org/x/sys/unix"
)

// readNames lists a directory by getdents, with the type the kernel gives
// (lstat relative to the directory when it gives none), in name order.
func (w *walker) readNames(fd int) ([]dirEntry, error) {
	var out []dirEntry
	for {
		n, err := unix.ReadDirent(fd, w.dirent)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		for b := w.dirent[:n]; len(b) > 0; {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen == 0 || reclen > len(b) {
				break
			}
			typ := b[18]
			nameb := b[19:reclen]
			if i := bytes.IndexByte(nameb, 0); i >= 0 {
				nameb = nameb[:i]
			}
			b = b[reclen:]
			if string(nameb) == "." || string(nameb) == ".." {
				continue
			}
			e := dirEntry{name: string(nameb)}
			switch typ {
			case unix.DT_REG:
				e.typ = backend.TypeFile
			case unix.DT_DIR:
				e.typ = backend.TypeDir
			case unix.DT_LNK:
				e.typ = backend.TypeSymlink
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					if goneErr(err) {
						continue // gone since the listing, or unreadable
					}
					return nil, err
				}
				e.typ = infoFromStat(e.name, &st).Type
			default:
				e.typ = backend.TypeOther
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// linkAt describes the entry name of the directory fd without following
// it and, for a link, reads its text. The link itself is opened (O_PATH),
// so that its text and its stat are of one file even when the name is
// replaced meanwhile.
func linkAt(fd int, name string) (unix.Stat_t, string, error) {
	var st unix.Stat_t
	lfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return st, "", err
	}
	defer unix.Close(lfd)
	if err := unix.Fstat(lfd, &st); err != nil {
		return st, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return st, "", nil
	}
	target, err := readLink(func(buf []byte) (int, error) { return unix.Readlinkat(lfd, "", buf) }, st.Size)
	return st, target, err
}
