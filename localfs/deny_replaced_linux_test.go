package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// In a long session (batch, mcp) a denied file replaced by a rename (as
// editors, git and agentfs's own writes do) and then hard-linked under
// another name must still be recognised: "A denied file is recognised
// under any name, hard links included".
func TestDeniedFileReplacedThenLinkedInSession(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	root := t.TempDir()
	secret := filepath.Join(root, "secret.txt")
	must(t, os.WriteFile(secret, []byte("OLD\n"), 0o644))
	f := newFS(t, Config{Roots: []string{root}, Cwd: root, Deny: []string{secret}})
	// The session goes on; meanwhile the file is replaced and linked.
	must(t, os.WriteFile(filepath.Join(root, ".new"), []byte("NEWSECRET\n"), 0o644))
	must(t, os.Rename(filepath.Join(root, ".new"), secret))
	must(t, os.Link(secret, filepath.Join(root, "h9")))
	r, err := f.Open(context.Background(), "h9")
	if err == nil {
		r.Close()
	}
	if code(err) != fault.CodeDenied {
		t.Errorf("read of a hard link to the (replaced) denied file: want DENIED, got %v", err)
	}
}
