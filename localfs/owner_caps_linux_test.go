package localfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Whether a replace may give the new file another user's owner (and then
// its mode) is CAP_CHOWN's and CAP_FOWNER's to say, not the user id's:
// root without them (a container's --cap-drop CHOWN) silently made
// another user's file its own, exit 0; a user other than root that holds
// them was refused, though its replace keeps the owner. One with
// CAP_CHOWN alone may not chmod the file once it is another's: refused,
// named, as before the replace.
func TestReplaceOwnerRuleFollowsCapChown(t *testing.T) {
	base := nobodyBase(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux) to run agentfs as root without CAP_CHOWN")
	}
	root := writableRoot(t, base)
	f := filepath.Join(root, "other.txt")
	put := func() { putOwned(t, f, "old\n", 4000, 4000) }
	owner := func() (string, uint32, uint32) {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f)
		return string(data), st.Uid, st.Gid
	}
	write := []string{"write", "other.txt", "--content", "new\n"}

	put()
	cmd := command(t, root, "agentfs", write...)
	cmd.Env = append(cmd.Env, "AGENTFS_STATE_DIR="+t.TempDir())
	cmd.Args = append([]string{"setpriv", "--bounding-set", "-chown", "--inh-caps", "-chown", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = setpriv
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"PERMISSION_DENIED"`) {
		t.Errorf("root without CAP_CHOWN: %v, %s; want PERMISSION_DENIED", err, out)
	}
	if data, uid, gid := owner(); data != "old\n" || uid != 4000 || gid != 4000 {
		t.Errorf("root without CAP_CHOWN left %q, %d:%d; want \"old\\n\", 4000:4000", data, uid, gid)
	}

	run := unprivileged(t, base, root)
	for _, tc := range []struct {
		name string
		caps []uintptr
		done bool
	}{
		{"nobody with CAP_CHOWN alone (no chmod of another's file)", []uintptr{unix.CAP_CHOWN}, false},
		{"nobody with CAP_CHOWN and CAP_FOWNER", []uintptr{unix.CAP_CHOWN, unix.CAP_FOWNER}, true},
	} {
		put()
		cmd = run(write...)
		cmd.SysProcAttr.AmbientCaps = tc.caps
		out, err := cmd.CombinedOutput()
		want := "old\n"
		if tc.done {
			want = "new\n"
			if err != nil {
				t.Errorf("%s: %v, %s; want it done", tc.name, err, out)
			}
		} else if err == nil || !strings.Contains(string(out), `"owner":4000`) {
			t.Errorf("%s: %v, %s; want PERMISSION_DENIED naming the owner", tc.name, err, out)
		}
		if data, uid, gid := owner(); data != want || uid != 4000 || gid != 4000 {
			t.Errorf("%s left %q, %d:%d; want %q, 4000:4000", tc.name, data, uid, gid, want)
		}
	}
}
