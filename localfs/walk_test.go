package localfs_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
)

func walkPaths(t *testing.T, fsys *localfs.FS, path string, opts core.WalkOptions, visit func(core.WalkEntry)) []string {
	t.Helper()
	var got []string
	err := fsys.Walk(context.Background(), path, opts, func(e core.WalkEntry) error {
		got = append(got, e.Rel)
		if visit != nil {
			visit(e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWalkSwappedDirectory swaps a directory for a link to outside the root
// between its visit and its descent: the walk opens it relative to its
// parent with O_NOFOLLOW, so it sees nothing of outside.
func TestWalkSwappedDirectory(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	writeFiles(t, base, map[string]string{"root/a/inner.txt": "", "root/b.txt": "", "outside/secret.txt": ""})
	fsys, err := localfs.New(localfs.Config{Roots: []string{root}, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got := walkPaths(t, fsys, ".", core.WalkOptions{}, func(e core.WalkEntry) {
		if e.Rel == "a" {
			if err := os.Rename(filepath.Join(root, "a"), filepath.Join(base, "a.moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
				t.Fatal(err)
			}
		}
	})
	if want := []string{"a", "b.txt"}; !slices.Equal(got, want) {
		t.Errorf("walk after the swap = %q, want %q", got, want)
	}
}

// TestWalkIgnorePrecedence checks the ranking of ignore files (ripgrep's:
// .agentfsignore over .ignore over .gitignore over .git/info/exclude; a
// deeper file over an outer one) and that a nested repository does not
// inherit the outer .gitignore.
func TestWalkIgnorePrecedence(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".git/info/exclude":  "*.ex\n!kept.ig\n",
		".gitignore":         "*.ig\n*.log\n",
		".ignore":            "!*.log\n",
		".agentfsignore":     "*.ex2\n",
		"a.ex":               "",
		"a.ig":               "",
		"kept.ig":            "",
		"a.log":              "",
		"x.ex2":              "",
		"sub/.gitignore":     "!b.ig\n",
		"sub/b.ig":           "",
		"sub/c.ig":           "",
		"nested/.git/HEAD":   "",
		"nested/n.ig":        "",
		"nested/.gitignore":  "n.txt\n",
		"nested/n.txt":       "",
		"nested/deep/m.ig":   "",
		".agentfsignore.bak": "",
	})
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got := walkPaths(t, fsys, ".", core.WalkOptions{}, nil)
	want := []string{".agentfsignore", ".agentfsignore.bak", ".gitignore", ".ignore", "a.log",
		"nested", "nested/.gitignore", "nested/deep", "nested/deep/m.ig", "nested/n.ig",
		"sub", "sub/.gitignore", "sub/b.ig"}
	if !slices.Equal(got, want) {
		t.Errorf("walk = %q\nwant   %q", got, want)
	}
	// Walking from a subdirectory keeps the rules from above it.
	got = walkPaths(t, fsys, "sub", core.WalkOptions{}, nil)
	if want := []string{".gitignore", "b.ig"}; !slices.Equal(got, want) {
		t.Errorf("walk sub = %q, want %q", got, want)
	}
	got = walkPaths(t, fsys, ".", core.WalkOptions{NoIgnore: true, Exclude: []string{"nested", "*.ig"}}, nil)
	if slices.Contains(got, "nested/n.txt") || slices.Contains(got, "a.ig") || !slices.Contains(got, "a.ex") {
		t.Errorf("walk with noIgnore and exclude = %q", got)
	}
}
