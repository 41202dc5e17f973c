package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// A path inside the base is shown relative whichever spelling, given or
// resolved through links, the root, the working directory and the path
// use: spelled through the root's link it came back absolute while the
// same directory's entries came back relative. (A link that neither the
// root nor the working directory is spelled through is left as given.)
func TestDisplayIsRelativeUnderEitherSpelling(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	must(t, os.MkdirAll(filepath.Join(real, "docs"), 0o755))
	must(t, os.WriteFile(filepath.Join(real, "docs", "readme.md"), nil, 0o644))
	must(t, os.Symlink("real", link))
	for _, tc := range []struct{ name, root, cwd string }{
		{"root through the link, cwd outside", link, base},
		{"root resolved, cwd through the link", real, link},
		{"root through the link, cwd through the link", link, link},
		{"root through the link, cwd resolved", link, real},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFS(t, Config{Roots: []string{tc.root}, Cwd: tc.cwd})
			for _, p := range []string{"docs", filepath.Join(link, "docs"), filepath.Join(real, "docs")} {
				if got := f.Display(p); got != "docs" {
					t.Errorf("Display(%q) = %q, want docs", p, got)
				}
				var walked []string
				err := f.Walk(context.Background(), p, backend.WalkOptions{}, func(e backend.WalkEntry) error {
					walked = append(walked, e.Path)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(walked) != 1 || walked[0] != filepath.Join("docs", "readme.md") {
					t.Errorf("walk of %q gave %q, want [docs/readme.md]", p, walked)
				}
			}
			if got := f.Display(filepath.Join(base, "elsewhere")); got != filepath.Join(base, "elsewhere") {
				t.Errorf("a path outside the base shows as %q", got)
			}
		})
	}
}

// With links refused, a path spelled through the working directory's
// link is refused, and shown as spelled: shown relative, the SYMLINK
// error named a path that, passed back, was not refused.
func TestDisplayKeepsALinkSpellingWhenLinksAreRefused(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	base := t.TempDir()
	real, link := filepath.Join(base, "ws", "sub"), filepath.Join(base, "ws", "L")
	must(t, os.MkdirAll(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "f"), nil, 0o644))
	must(t, os.Symlink(real, link))
	f := newFS(t, Config{Roots: []string{filepath.Join(base, "ws")}, Cwd: link, Symlinks: SymlinksRefuse})
	spelled := filepath.Join(link, "f")
	_, err := f.Stat(context.Background(), spelled)
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeSymlink || e.Path != spelled {
		t.Fatalf("a path through the working directory's link, links refused: %v, want SYMLINK naming %s", err, spelled)
	}
}
