package localfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// The state directories are denied; one that exists enters the
// fingerprint by its identity, as any deny root (a mount on it or on an
// ancestor, made or taken off since a build, changes what a walk
// refuses: the indexed search returned a refused file, exit 0), and one
// to be made by its path (the index command makes its own first).
func TestStateDirFingerprint(t *testing.T) {
	ws := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv(StateDirEnv, state)
	fingerprint := func() string { return newFS(t, Config{Roots: []string{ws}, Cwd: ws}).Fingerprint() }
	absent := fingerprint()
	// A session (batch, mcp) open before agentfs index made the state
	// directory: it denies that directory by identity once made, as a
	// build after it does, and has that build's fingerprint, so that its
	// searches use the index (they walked the whole tree before).
	early := newFS(t, Config{Roots: []string{ws}, Cwd: ws})
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	present := fingerprint()
	if present == absent || fingerprint() != present {
		t.Fatalf("a state directory made since: %q then %q", absent, present)
	}
	if got := early.Fingerprint(); got != present {
		t.Fatalf("a session open before the state directory was made: %q, a new one %q", got, present)
	}
	var st unix.Stat_t
	if err := unix.Stat(state, &st); err != nil || !early.deniedDirIdentity(&st) {
		t.Fatalf("a session open before the state directory was made does not deny it by identity (%v)", err)
	}
	if err := os.Rename(state, state+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if fingerprint() == present {
		t.Fatal("another directory at the state directory's path left the fingerprint unchanged")
	}
	// Another TMPDIR denies another place, which a walk may meet (inside
	// a root, or through a mount): the fingerprints differ. A relative
	// TMPDIR is passed over for /tmp (stateDirCandidates): /tmp's is
	// denied, and nothing below the working directory.
	t.Setenv(StateDirEnv, "")
	t.Chdir(ws)
	t.Setenv("TMPDIR", "tmp")
	one := fingerprint()
	if !strings.Contains(one, `"/tmp/agentfs-`) || strings.Contains(one, filepath.Join(ws, "tmp")) {
		t.Fatalf("a relative TMPDIR: want /tmp's state directory in the fingerprint: %s", one)
	}
	t.Setenv("TMPDIR", t.TempDir())
	if other := fingerprint(); other == one {
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
	// The same roots and denies in another order walk the same: one
	// fingerprint, so that an index built under one order serves the other.
	other := filepath.Join(ws, "other")
	a := newFS(t, Config{Roots: []string{ws, state}, Cwd: ws, Deny: []string{deny, other}}).Fingerprint()
	b := newFS(t, Config{Roots: []string{state, ws}, Cwd: ws, Deny: []string{other, deny}}).Fingerprint()
	if a != b {
		t.Fatalf("the order of the flags changed the fingerprint:\n%s\n%s", a, b)
	}
	// A root or a deny given twice, or a default deny given again, too.
	twice := newFS(t, Config{Roots: []string{ws, state, ws}, Cwd: ws, Deny: []string{deny, other, deny, "/proc"}}).Fingerprint()
	if twice != a {
		t.Fatalf("a flag given twice changed the fingerprint:\n%s\n%s", a, twice)
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
