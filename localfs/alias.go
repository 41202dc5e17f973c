package localfs

import (
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// aliases reports whether a and b, two names in the directory dirfd, are
// one entry by two spellings, as a file system that ignores case (APFS
// and HFS+ by default, a casefold directory of ext4, vfat, SMB) takes
// README for readme (see oneEntry).
func aliases(dirfd int, a, b string) (bool, error) {
	lstat := func(name string) (unix.Stat_t, bool) {
		var st unix.Stat_t
		return st, unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	return oneEntry(a, b, lstat, func() ([]string, error) { return listNames(dirfd) })
}

// oneEntry reports whether the names a and b of one directory, whose
// entries lstat describes and list lists, are one entry: both lead to one
// file, and it is a directory (which has no hard links) or has one link,
// or else both names find one stored name in the listing. Two hard links
// of a file are two entries. Either name missing, they are not one.
func oneEntry(a, b string, lstat func(string) (unix.Stat_t, bool), list func() ([]string, error)) (bool, error) {
	if a == b {
		return true, nil
	}
	sa, aok := lstat(a)
	sb, bok := lstat(b)
	if !aok || !bok || !sameFile(&sa, &sb) {
		return false, nil
	}
	if sa.Mode&unix.S_IFMT == unix.S_IFDIR || sa.Nlink < 2 {
		return true, nil
	}
	names, err := list()
	if err != nil {
		return false, err
	}
	na, nb := storedAs(names, a, &sa, lstat), storedAs(names, b, &sb, lstat)
	return na != "" && na == nb, nil
}

// storedAs is the name of names (a directory's listing) that name,
// leading to the file st, finds: itself when listed, else the one listed
// name equal to it but for case that leads to st; "" when that is not one
// name.
func storedAs(names []string, name string, st *unix.Stat_t, lstat func(string) (unix.Stat_t, bool)) string {
	if slices.Contains(names, name) {
		return name
	}
	found := ""
	for _, n := range names {
		if !strings.EqualFold(n, name) {
			continue
		}
		if ns, ok := lstat(n); !ok || !sameFile(&ns, st) {
			continue
		}
		if found != "" {
			return ""
		}
		found = n
	}
	return found
}

// stored reports whether name is listed as spelled in the directory
// dirfd: a file system that ignores case finds README by the name
// readme, which the listing shows as stored.
func stored(dirfd int, name string) (bool, error) {
	names, err := listNames(dirfd)
	return slices.Contains(names, name), err
}

// listNames lists the directory dirfd (which may be an O_PATH
// descriptor), which it leaves open.
func listNames(dirfd int) ([]string, error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	return d.Readdirnames(-1)
}
