package localfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A file, or the directory of one, immutable or append-only (chattr +i,
// +a) is refused by the
// check a dry run makes as by the write itself, and saying why: faccessat
// through x/sys passed it for root (its EPERM taken for a seccomp
// filter's), so dry runs promised a change the run was refused.
func TestImmutableRefusedByCheckAndWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting the immutable flag needs root: run go test as root")
	}
	for _, tc := range []struct{ pin, flag string }{{"f.txt", "+i"}, {"d", "+i"}, {"f.txt", "+a"}, {"d", "+a"}} {
		pin := tc.pin
		t.Run(pin+tc.flag, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "f.txt"))
			mustWrite(t, filepath.Join(dir, "d", "g.txt"))
			chattr(t, tc.flag, filepath.Join(dir, pin))
			defer chattr(t, "-"+tc.flag[1:], filepath.Join(dir, pin))
			fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
			if err != nil {
				t.Fatal(err)
			}
			target := "f.txt"
			if pin == "d" {
				target = "d/g.txt"
			}
			check := fsys.CheckCommit(context.Background(), []backend.Op{{Path: target, Data: []byte("new\n")}})
			_, write := fsys.WriteFile(context.Background(), target, []byte("new\n"), backend.WriteOptions{})
			for what, err := range map[string]error{"check": check, "write": write} {
				if e := fault.AsError(err); e == nil || e.Code != fault.CodePermissionDenied || !strings.Contains(e.Message, "immutable") {
					t.Errorf("%s of %s with %s %s: %v, want PERMISSION_DENIED saying immutable", what, target, pin, tc.flag, err)
				}
			}
		})
	}
}
