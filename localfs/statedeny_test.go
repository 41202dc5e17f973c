package localfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// The state directories are denied, but their identity is no part of the
// configuration an index is built under: the first index makes the state
// directory, and every search after it saw another fingerprint than the
// build's, so the index's list was never used.
func TestStateDirLeavesTheFingerprint(t *testing.T) {
	ws := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv(StateDirEnv, state)
	before := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint()
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if after := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint(); after != before {
		t.Fatalf("the fingerprint changed when the state directory was made:\n%s\n%s", before, after)
	}
	// The first build makes ~/.local/state/agentfs while another
	// candidate ($TMPDIR/agentfs-UID) exists already: neither changes the
	// fingerprint (with existing candidates by identity, every search
	// after the first build walked).
	home, tmp := t.TempDir(), t.TempDir()
	t.Setenv(StateDirEnv, "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	if err := os.Mkdir(filepath.Join(tmp, fmt.Sprintf("agentfs-%d", os.Getuid())), 0o700); err != nil {
		t.Fatal(err)
	}
	first := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint()
	if _, err := StateDir(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "agentfs")); err != nil {
		t.Fatalf("the state directory was not made in HOME: %v", err)
	}
	if after := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint(); after != first {
		t.Fatalf("the fingerprint changed when the first build made the state directory:\n%s\n%s", first, after)
	}
	// Another TMPDIR denies another place, which a walk may meet (inside
	// a root, or through a mount): the fingerprints differ, so that a
	// search does not take a list made under other denies. A relative
	// TMPDIR is placed: left relative, it was left out, and a search
	// gave a denied state directory's files, exit 0.
	t.Setenv(StateDirEnv, "")
	t.Chdir(ws)
	t.Setenv("TMPDIR", "tmp")
	one := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint()
	if !strings.Contains(one, filepath.Join(ws, "tmp", "agentfs-")) {
		t.Fatalf("a relative TMPDIR's state directory is not in the fingerprint: %s", one)
	}
	t.Setenv("TMPDIR", t.TempDir())
	if other := newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint(); other == one {
		t.Fatal("the fingerprint is the same under another TMPDIR")
	}
	// A deny root given by the caller keeps its identity in it.
	deny := filepath.Join(ws, "secret")
	fp := newFS(t, Config{Roots: []string{ws}, Cwd: ws, Deny: []string{deny}}).Fingerprint()
	if err := os.Mkdir(deny, 0o700); err != nil {
		t.Fatal(err)
	}
	if newFS(t, Config{Roots: []string{ws}, Cwd: ws, Deny: []string{deny}}).Fingerprint() == fp {
		t.Fatal("a deny root made since left the fingerprint unchanged")
	}
}

// A root in a state directory is refused: denied, the root would be
// refused; not denied, the key would be open to it and to any other root
// that holds the state directory.
func TestRootInAStateDirIsRefused(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	ws := filepath.Join(state, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{{ws}, {state}, {ws, filepath.Dir(state)}} {
		if _, err := New(Config{Roots: roots, Cwd: ws}); code(err) != fault.CodeDenied {
			t.Errorf("roots %v: %v, want DENIED", roots, err)
		}
	}
}
