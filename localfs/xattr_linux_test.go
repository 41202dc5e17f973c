package localfs

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// posixACL is the xattr form of a POSIX ACL (acl(5)): user::rw-,
// user:1234:rw-, group::r--, mask::rw-, other::---.
func posixACL() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, ^uint32(0)}, {0x02, 6, 1234}, {0x04, 4, ^uint32(0)}, {0x10, 6, ^uint32(0)}, {0x20, 0, ^uint32(0)}} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// xattrsOf are the extended attributes of p, not followed, name=value.
func xattrsOf(t *testing.T, p string) []string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		t.Fatalf("listxattr %s: %v", p, err)
	}
	var out []string
	for name := range strings.SplitSeq(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		v := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(p, name, v)
		if err != nil {
			t.Fatalf("getxattr %s %s: %v", p, name, err)
		}
		out = append(out, name+"="+string(v[:m]))
	}
	slices.Sort(out)
	return out
}

func setXattr(t *testing.T, p, name string, value []byte) {
	t.Helper()
	if err := unix.Lsetxattr(p, name, value, 0); err != nil {
		t.Skipf("setxattr %s on %s: %v (a file system with user xattrs and ACLs is needed)", name, p, err)
	}
}

// A move to another file system keeps the extended attributes of a file
// and of a tree's files and directories, POSIX ACLs included, as GNU mv
// and a rename do: the copy dropped them, so access rules changed
// without a word. An ACL the copy would inherit from its new directory,
// which the original lacks, is not added.
func TestMoveAcrossFileSystemsKeepsXattrs(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDevice(t, dir)
	f, d := filepath.Join(dir, "f"), filepath.Join(dir, "d")
	must(t, os.WriteFile(f, []byte("f\n"), 0o660))
	must(t, os.MkdirAll(filepath.Join(d, "sub"), 0o770))
	must(t, os.WriteFile(filepath.Join(d, "sub", "g"), []byte("g\n"), 0o640))
	must(t, os.WriteFile(filepath.Join(d, "plain"), []byte("p\n"), 0o640))
	setXattr(t, f, "user.k", []byte("v"))
	setXattr(t, f, "trusted.t", []byte("tv"))
	setXattr(t, f, "system.posix_acl_access", posixACL())
	setXattr(t, d, "user.dk", []byte("dv"))
	setXattr(t, filepath.Join(d, "sub"), "system.posix_acl_default", posixACL())
	setXattr(t, filepath.Join(d, "sub", "g"), "user.gk", []byte("gv"))
	// The destination directory hands its default ACL to what is made in it.
	into := filepath.Join(other, "into")
	must(t, os.Mkdir(into, 0o755))
	setXattr(t, into, "system.posix_acl_default", posixACL())
	want, modes := map[string][]string{}, map[string]os.FileMode{}
	for _, p := range []string{"f", "d", "d/sub", "d/sub/g", "d/plain"} {
		want[p] = xattrsOf(t, filepath.Join(dir, p))
		fi, err := os.Lstat(filepath.Join(dir, p))
		must(t, err)
		modes[p] = fi.Mode()
	}
	fsys := newFS(t, Config{Roots: []string{dir, other}, Cwd: dir})
	for _, p := range []string{"f", "d"} {
		if _, err := fsys.Rename(context.Background(), p, filepath.Join(into, p), backend.WriteOptions{IfAbsent: true}); err != nil {
			t.Fatalf("mv %s across: %v", p, err)
		}
	}
	for p, w := range want {
		if got := xattrsOf(t, filepath.Join(into, p)); !slices.Equal(got, w) {
			t.Errorf("%s moved: xattrs %q, want %q", p, got, w)
		}
		if fi, err := os.Lstat(filepath.Join(into, p)); err != nil || fi.Mode() != modes[p] {
			t.Errorf("%s moved: mode %v (%v), want %v", p, fi.Mode(), err, modes[p])
		}
	}
}

// An attribute the destination's file system cannot keep (a ramfs keeps
// no user xattrs) refuses the move, nothing moved, rather than losing it;
// an SELinux label, which the kernel gives the copy by policy, does not.
func TestMoveAcrossFileSystemsRefusesXattrLoss(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	dir := t.TempDir()
	other := otherDevice(t, dir)
	ram := filepath.Join(other, "ram")
	must(t, os.Mkdir(ram, 0o755))
	if err := unix.Mount("ramfs", ram, "ramfs", 0, ""); err != nil {
		t.Skipf("mounting a ramfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ram, unix.MNT_DETACH) })
	if err := unix.Setxattr(ram, "user.probe", []byte("x"), 0); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("this ramfs keeps user xattrs (%v)", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "labelled"), []byte("l\n"), 0o644))
	setXattr(t, filepath.Join(dir, "labelled"), "security.selinux", []byte("system_u:object_r:tmp_t:s0\x00"))
	must(t, os.MkdirAll(filepath.Join(dir, "d", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "d", "sub", "g"), []byte("g\n"), 0o644))
	setXattr(t, filepath.Join(dir, "d", "sub", "g"), "user.gk", []byte("gv"))
	must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("f\n"), 0o644))
	setXattr(t, filepath.Join(dir, "f"), "user.k", []byte("v"))
	fsys := newFS(t, Config{Roots: []string{dir, other}, Cwd: dir})
	ctx := context.Background()
	for from, at := range map[string]string{"f": "f", "d": "d/sub/g"} {
		_, err := fsys.Rename(ctx, from, filepath.Join(ram, from), backend.WriteOptions{IfAbsent: true})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeNotSupported || e.Path != at || !strings.Contains(e.Message, "user.") || !strings.Contains(e.Hint, "nothing was moved") {
			t.Fatalf("mv %s onto a ramfs: %v, want NOT_SUPPORTED at %s naming the attribute", from, err, at)
		}
		if _, err := os.Lstat(filepath.Join(dir, at)); err != nil {
			t.Fatalf("the refused move took %s: %v", at, err)
		}
		if _, err := os.Lstat(filepath.Join(ram, from)); err == nil {
			t.Fatalf("the refused move left %s on the ramfs", from)
		}
	}
	if names, _ := os.ReadDir(ram); len(names) != 0 {
		t.Fatalf("the refused moves left %v on the ramfs", names)
	}
	if _, err := fsys.Rename(ctx, "labelled", filepath.Join(ram, "labelled"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatalf("mv of a file with only an SELinux label onto a ramfs: %v", err)
	}
}

// A listing of the attributes that fails is an error, not "none": the
// move went on without them (ACLs lost with no word), the failure lost
// because sized answers no buffer with its error.
func TestXattrNamesReportsAFailedListing(t *testing.T) {
	if _, err := xattrNames(-1); !errors.Is(err, unix.EBADF) {
		t.Errorf("xattrNames of a bad descriptor: %v, want EBADF", err)
	}
}

// An attribute the copy may not be given for want of a privilege (a
// security.capability moved by a user without CAP_SETFCAP) is
// PERMISSION_DENIED saying so: it blamed the destination's file system
// (NOT_SUPPORTED) and sent the user to setfattr -x, which needs the
// same privilege.
func TestXattrSetErrNamesAPrivilege(t *testing.T) {
	e := fault.AsError(xattrSetErr("security.capability", unix.EPERM, "a/t"))
	if e == nil || e.Code != fault.CodePermissionDenied || strings.Contains(e.Message, "file system") || e.Path != "a/t" {
		t.Errorf("EPERM: %v, want PERMISSION_DENIED naming a privilege", e)
	}
	if e := fault.AsError(xattrSetErr("user.k", unix.EOPNOTSUPP, "a/t")); e == nil || e.Code != fault.CodeNotSupported {
		t.Errorf("EOPNOTSUPP: %v, want NOT_SUPPORTED", e)
	}
}

// A replace keeps the extended attributes of the file it replaces, POSIX
// ACLs among them, as a write through the file would and as sed -i keeps
// the ACL: the new file had none, so a user the ACL let in was shut out,
// and its mask, become the group's bits, gave the owning group what the
// ACL withheld. A file without an ACL takes none from its directory's
// default ACL. A file moved by a commit (OwnerOf) keeps its source's.
func TestWriteKeepsXattrs(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	for _, name := range []string{"w", "c", "src"} {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte("a\n"), 0o640))
		setXattr(t, p, "user.k", []byte("v-"+name))
		setXattr(t, p, "system.posix_acl_access", posixACL())
	}
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "plain"), []byte("a\n"), 0o600))
	setXattr(t, sub, "system.posix_acl_default", posixACL())
	want := map[string][]string{}
	for _, name := range []string{"w", "c", "src", "sub/plain"} {
		want[name] = xattrsOf(t, filepath.Join(dir, name))
	}
	want["moved"] = want["src"]
	if _, err := fsys.WriteFile(ctx, "w", []byte("b\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteFile(ctx, "sub/plain", []byte("b\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Commit(ctx, []backend.Op{
		{Path: "c", Data: []byte("b\n")},
		{Path: "moved", Data: []byte("b\n"), Write: backend.WriteOptions{Mode: 0o660, OwnerOf: "src"}},
	}); err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if got := xattrsOf(t, filepath.Join(dir, name)); !slices.Equal(got, w) {
			t.Errorf("%s written: xattrs %q, want %q", name, got, w)
		}
	}
	for _, name := range []string{"w", "c", "moved"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o660 {
			t.Errorf("%s written: mode %v (%v), want -rw-rw---- (the ACL's mask)", name, fi.Mode(), err)
		}
	}
}

// A new file is made with mode 0666 (0777 executable), as a shell's > and
// cp make one, for the umask or the directory's default ACL to narrow: a
// default ACL letting user 1234 write every new file of the directory
// (mask rw) was cut to read by the 0644 a new file was made with, its
// mask r--, where echo > gave the user write. (The ACL gives no one
// execute: x, made executable, has none.)
func TestNewFileTakesDefaultACL(t *testing.T) {
	fsys, dir := newTestFS(t)
	ctx := context.Background()
	sub := filepath.Join(dir, "shared")
	must(t, os.Mkdir(sub, 0o755))
	setXattr(t, sub, "system.posix_acl_default", posixACL())
	if _, err := fsys.WriteFile(ctx, "shared/w", []byte("a\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteFile(ctx, "shared/x", []byte("a\n"), backend.WriteOptions{Executable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Commit(ctx, []backend.Op{{Path: "shared/c", Data: []byte("a\n")}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"w": 0o660, "x": 0o660, "c": 0o660} {
		if fi, err := os.Stat(filepath.Join(sub, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s made: mode %v (%v), want %v (the default ACL's mask rw)", name, fi.Mode(), err, want)
		}
	}
}
