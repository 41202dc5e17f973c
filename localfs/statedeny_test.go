package localfs

import (
	"os"
	"path/filepath"
	"testing"
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
