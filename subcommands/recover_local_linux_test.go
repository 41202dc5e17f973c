package subcommands

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --recover on a local root reports, on stderr, each journal its
// recovery left, and for each file what is there, why it could not be
// put back and the command that does it by hand; it said nothing ("adds
// nothing"), and the only trace of a stuck journal was every read of its
// tree failing IO_ERROR. The call runs: a file the journal does not name
// reads, one it left half changed is refused saying why.
func TestRecoverReportsStuckLocalJournal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for chattr +a (go test as root, as CI does)")
	}
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(filepath.Join(state, "journal"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFS_STATE_DIR", state)
	dir := t.TempDir()
	a, backup := filepath.Join(dir, "a.txt"), filepath.Join(dir, ".agentfs-tmp-0123456789abcdef")
	for p, data := range map[string]string{a: "old a\n", filepath.Join(dir, "z.txt"): "z\n", filepath.Join(dir, ".agentfs-tmp-fedcba9876543210"): "new a\n"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A commit killed past its first rename: a.txt replaced, its old file
	// linked at its backup name.
	if err := os.Link(a, backup); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".agentfs-tmp-fedcba9876543210"), a); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(a, &st); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(state, "journal", "0123456789abcdef.pending")
	entry := fmt.Sprintf(`[{"dir":%q,"name":"a.txt","staged":".agentfs-tmp-fedcba9876543210","stagedId":"%d:%d","backup":".agentfs-tmp-0123456789abcdef"}]`, dir, st.Dev, st.Ino)
	if err := os.WriteFile(journal, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+a", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +a: %v %s", err, out)
	}
	defer exec.Command("chattr", "-a", dir).Run()
	code, out, errs := run(t, "", "--root="+dir, "--recover", "read", filepath.Join(dir, "z.txt"))
	var line struct {
		Recovery struct {
			Stuck []struct {
				Journal string
				Left    []struct {
					Path, Failed, Undo string
					Refused            bool
				}
			}
		}
		Roots []string
	}
	if code != 0 || !strings.Contains(out, `"content":"z\n"`) || json.Unmarshal([]byte(errs), &line) != nil {
		t.Fatalf("--recover read z.txt: exit %d, %s, stderr %s", code, out, errs)
	}
	if s := line.Recovery.Stuck; len(s) != 1 || s[0].Journal != journal || len(s[0].Left) != 1 || s[0].Left[0].Path != a || !s[0].Left[0].Refused ||
		!strings.Contains(s[0].Left[0].Failed, "append-only") || s[0].Left[0].Undo != "test ! -d "+a+" && mv -f -- "+backup+" "+a {
		t.Errorf("--recover reported %s, want the journal, a.txt refused, append-only and its mv", errs)
	}
	code, _, errs = run(t, "", "--root="+dir, "read", a)
	if code == 0 || !strings.Contains(errs, `"IO_ERROR"`) || !strings.Contains(errs, "append-only") || !strings.Contains(errs, backup) {
		t.Errorf("read a.txt left half changed: exit %d, %s", code, errs)
	}
	exec.Command("chattr", "-a", dir).Run()
	if code, out, errs := run(t, "", "--root="+dir, "read", a); code != 0 || !strings.Contains(out, "old a") {
		t.Errorf("read a.txt once writable: exit %d, %s %s", code, out, errs)
	}
	if _, err := os.Lstat(journal); err == nil {
		t.Errorf("the journal stays once undone")
	}
}
