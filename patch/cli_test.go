package patch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/subcommands"
)

// TestCodexScenariosThroughAgentfs runs Codex's scenarios as its driver
// does, through agentfs apply-patch on disk: the input copied to a fresh
// directory, the patch on standard input, the whole tree compared with
// expected/ (with the input, for the scenarios agentfs applies all or
// nothing), and the exit status and error code checked.
func TestCodexScenariosThroughAgentfs(t *testing.T) {
	dir := scenariosDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			sc := filepath.Join(dir, name)
			text, err := os.ReadFile(filepath.Join(sc, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			input := loadTree(t, filepath.Join(sc, "input"))
			want := loadTree(t, filepath.Join(sc, "expected"))
			if allOrNothing[name] {
				want = input
			}
			work := t.TempDir()
			writeTree(t, work, input)
			var out, errOut bytes.Buffer
			code := subcommands.Main(context.Background(), []string{"--root", work, "apply-patch", "--patch-file", "-"},
				subcommands.Streams{Stdin: bytes.NewReader(text), Stdout: &out, Stderr: &errOut})
			if want, failing := scenarioCodes[name]; failing {
				var e struct{ Error struct{ Code string } }
				if code == 0 || json.Unmarshal(errOut.Bytes(), &e) != nil || e.Error.Code != string(want) {
					t.Errorf("exit %d, stderr %s; want the error %s", code, errOut.String(), want)
				}
			} else if code != 0 {
				t.Errorf("exit %d: %s", code, errOut.String())
			}
			if g, w := listTree(loadTree(t, work)), listTree(want); g != w {
				t.Errorf("tree:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// writeTree makes tree on disk below root.
func writeTree(t *testing.T, root string, tree map[string]node) {
	t.Helper()
	for p, n := range tree {
		full := filepath.Join(root, filepath.FromSlash(p))
		if n.dir {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(n.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
