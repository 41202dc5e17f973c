package subcommands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --patch-file (or write's --content-file) outside the roots is
// OUTSIDE_ROOT, whose hint said only to move the file or add a root:
// agents write a patch to /tmp, and standard input (--patch-file -)
// takes it from anywhere without widening the roots.
func TestInputFileOutsideRootHintsStdin(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	p := filepath.Join(elsewhere, "p.txt")
	patch := "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n"
	os.WriteFile(p, []byte(patch), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply-patch", "--patch-file", p}, "--patch-file - < " + p},
		{[]string{"write", "c.txt", "--content-file", p}, "--content-file - < " + p},
	} {
		code, _, errs := run(t, "", append([]string{"--root", root}, c.args...)...)
		if code == 0 || !strings.Contains(errs, `"OUTSIDE_ROOT"`) || !strings.Contains(errs, c.want) {
			t.Errorf("%q: %d %s, want OUTSIDE_ROOT whose hint has %q", c.args, code, errs, c.want)
		}
	}
	// What the hint says works.
	if code, out, errs := run(t, patch, "--root", root, "apply-patch", "--patch-file", "-"); code != 0 {
		t.Fatalf("apply-patch --patch-file - < p: %d %s %s", code, out, errs)
	}
}
