package localfs

import "golang.org/x/sys/unix"

// renameExclusive is renameatx_np with RENAME_EXCL (macOS 10.12 and
// later); a file system without it answers ENOTSUP.
func renameExclusive(fromDir int, from string, toDir int, to string) error {
	return unix.RenameatxNp(fromDir, from, toDir, to, unix.RENAME_EXCL)
}

// exclusiveRenames is whether renameExclusive may work here.
const exclusiveRenames = true
