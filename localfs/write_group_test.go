package localfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A writer that may not give the new file the replaced file's owner keeps
// at least its group when the group is one of the writer's (chown(2) with
// owner -1), as cp -p does. The writer is this test binary run as an
// unprivileged user with a second group, so the test needs root.
func TestUnprivilegedReplaceKeepsGroup(t *testing.T) {
	const uid, group = 65534, 4321
	base := nobodyBase(t)
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(root, "f.txt")
	if err := os.WriteFile(f, []byte("old\n"), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, 0, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, 0o664); err != nil {
		t.Fatal(err)
	}
	if out, err := unprivileged(t, base, root, group)("write", "f.txt", "--content", "new\n").CombinedOutput(); err != nil {
		t.Fatalf("write as uid %d: %v\n%s", uid, err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f, &st); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f)
	if string(data) != "new\n" || st.Uid != uid || st.Gid != group || st.Mode&0o7777 != 0o664 {
		t.Fatalf("after the write: %q, owner %d:%d mode %o; want %q, %d:%d 664", data, st.Uid, st.Gid, st.Mode&0o7777, "new\n", uid, group)
	}
}
