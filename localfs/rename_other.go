//go:build !linux && !darwin

package localfs

import "golang.org/x/sys/unix"

// renameExclusive has no system call here (FreeBSD): ENOSYS sends
// renameNoReplace to its fallbacks, and a commit's new directory to mkdir
// at its name.
func renameExclusive(int, string, int, string) error { return unix.ENOSYS }

// exclusiveRenames is whether renameExclusive may work here: not at all.
const exclusiveRenames = false
