package localfs

import (
	"errors"
	"slices"
	"strings"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// keepsXattrs says whether a replace gives the new file the extended
// attributes of the one it replaces (keepXattrs), so that the replaced
// file is opened for them.
const keepsXattrs = true

// copyXattrs gives to, a move's copy, the extended attributes of from,
// POSIX ACLs included, as GNU mv and a rename keep them: without them the
// copy's access rules changed without a word. An attribute the
// destination's file system cannot keep refuses the move (NOT_SUPPORTED,
// at the path at) rather than losing it, but for an SELinux label, which
// the kernel gives the copy by policy. An ACL the copy inherited from its
// new directory's default ACL, which from lacks, is removed.
func copyXattrs(from, to int, at string) error {
	return carryXattrs(from, to, func(name string, err error) error {
		if name == "security.selinux" {
			return nil
		}
		return xattrSetErr(name, err, at)
	}, nil)
}

// keepXattrs gives to, the new content of a replaced file, the extended
// attributes of from, the file it replaces (or, for a file moved with new
// content, its source), POSIX ACLs included: without them the new file
// shut out a user its ACL let in, and its mode's group bits, which were
// the ACL's mask, gave the owning group what the ACL withheld. As a write
// through the file does, new content drops security.capability (the
// kernel's file_remove_privs). A security.* or trusted.* attribute this
// process may not set is left, as an owner it may not give is; anything
// else that cannot be set refuses the write.
func keepXattrs(from, to int) error {
	return carryXattrs(from, to, func(name string, err error) error {
		privileged := strings.HasPrefix(name, "security.") || strings.HasPrefix(name, "trusted.")
		if privileged && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)) {
			return nil
		}
		return err
	}, func(name string) bool { return name == "security.capability" })
}

// carryXattrs copies the extended attributes of from to to, but those
// skip names (skip may be nil); a failure to set one goes to failed,
// which answers the error to return, nil to go on. An ACL to holds that
// from lacks (inherited from its directory's default ACL) is removed.
func carryXattrs(from, to int, failed func(name string, err error) error, skip func(name string) bool) error {
	names, err := xattrNames(from)
	if err != nil {
		return err
	}
	for _, name := range names {
		if skip != nil && skip(name) {
			continue
		}
		value, err := xattrValue(from, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed since the listing
		}
		if err != nil {
			return err
		}
		if err := unix.Fsetxattr(to, name, value, 0); err != nil {
			if err := failed(name, err); err != nil {
				return err
			}
		}
	}
	for _, acl := range [...]string{"system.posix_acl_access", "system.posix_acl_default"} {
		if slices.Contains(names, acl) {
			continue
		}
		if err := unix.Fremovexattr(to, acl); err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.EOPNOTSUPP) && !aclAbsent(to, acl, err) {
			return err
		}
	}
	return nil
}

// aclAbsent reports whether the removal of acl from fd failed (err) only
// for want of a right to remove it, where fd has none: a file system that
// shows every file as one user's (bindfs --force-user) refuses the
// removal by any other user (EPERM), whether the ACL is there or not.
func aclAbsent(fd int, acl string, err error) bool {
	if !errors.Is(err, unix.EPERM) {
		return false
	}
	_, err = unix.Fgetxattr(fd, acl, nil)
	return errors.Is(err, unix.ENODATA) || errors.Is(err, unix.EOPNOTSUPP)
}

// xattrNames lists the extended attributes of fd: none on a file system
// without them.
func xattrNames(fd int) ([]string, error) {
	list, err := sized(func(buf []byte) (int, error) { return unix.Flistxattr(fd, buf) })
	if errors.Is(err, unix.EOPNOTSUPP) {
		return nil, nil
	}
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00"), nil
}

func xattrValue(fd int, name string) ([]byte, error) {
	return sized(func(buf []byte) (int, error) { return unix.Fgetxattr(fd, name, buf) })
}

// sized calls get, which answers its size for a nil buffer, with a buffer
// of that size, again while it grows meanwhile (ERANGE).
func sized(get func([]byte) (int, error)) ([]byte, error) {
	for {
		n, err := get(nil)
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = get(buf)
		if !errors.Is(err, unix.ERANGE) {
			return buf[:n], err
		}
	}
}

// xattrSetErr is the refusal of a move whose copy could not get the
// attribute name (err from fsetxattr): a privilege this process lacks
// (security.capability takes CAP_SETFCAP, trusted.* CAP_SYS_ADMIN), or a
// destination's file system that cannot keep it.
func xattrSetErr(name string, err error, at string) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fault.Errorf(fault.CodePermissionDenied, "the copy may not be given the extended attribute %s (%s): setting it takes a privilege this process lacks, and the move would lose it.", name, ErrText(err)).
			WithPath(at).WithDetail("xattr", name).WithCause(err).
			WithHint("move it within its file system (a rename keeps it), or run as a user who may set it; nothing was moved")
	}
	return fault.Errorf(fault.CodeNotSupported, "the destination's file system cannot keep the extended attribute %s (%s), which the move would lose.", name, ErrText(err)).
		WithPath(at).WithDetail("xattr", name).WithCause(err).
		WithHint("remove the attribute first (setfattr -x), or choose a destination on a file system that keeps it; nothing was moved")
}
