package localfs_test

import (
	"io"
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
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a writer as another user")
	}
	const uid, gid, group = 65534, 65534, 4321
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "agentfs.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	root, state := filepath.Join(base, "root"), filepath.Join(base, "state")
	for _, d := range []string{root, state} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
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
	cmd := command(t, root, "agentfs", "write", "f.txt", "--content", "new\n")
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.Env = append(cmd.Env, "AGENTFS_STATE_DIR="+filepath.Join(state, "agentfs"), "HOME=/nonexistent")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{gid, group}}}
	if out, err := cmd.CombinedOutput(); err != nil {
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
