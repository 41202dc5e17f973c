package patch_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/patch"
)

// scenarioCodes is the error each failing Codex scenario is expected to
// end with; the others must succeed.
var scenarioCodes = map[string]fault.Code{
	"005_rejects_empty_patch":                          fault.CodePatchParse,
	"006_rejects_missing_context":                      fault.CodePatchVerify,
	"007_rejects_missing_file_delete":                  fault.CodeNotFound,
	"008_rejects_empty_update_hunk":                    fault.CodePatchParse,
	"009_requires_existing_file_for_update":            fault.CodeNotFound,
	"012_delete_directory_fails":                       fault.CodeNotAFile,
	"013_rejects_invalid_hunk_header":                  fault.CodePatchParse,
	"015_failure_after_partial_success_leaves_changes": fault.CodeNotFound,
}

// allOrNothing are the scenarios where Codex keeps the sections applied
// before a failure and agentfs, applying a patch whole or not at all, must
// leave the input as it was.
var allOrNothing = map[string]bool{
	"015_failure_after_partial_success_leaves_changes": true,
}

// TestCodexScenarios runs Codex's own apply_patch scenarios as its driver
// does (codex-rs/apply-patch/tests/suite/scenarios.rs), in memory: the
// input tree, the patch applied, the whole tree compared, directories
// included, with expected/.
func TestCodexScenarios(t *testing.T) {
	dir := scenariosDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ran++
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
			got, err := applyInMemory(input, string(text))
			if code, ok := scenarioCodes[name]; ok {
				if fe := fault.AsError(err); err == nil || fe.Code != code {
					t.Errorf("error %v, want %s", err, code)
				}
			} else if err != nil {
				t.Errorf("error %v", err)
			}
			if g, w := listTree(got), listTree(want); g != w {
				t.Errorf("tree:\n%s\nwant:\n%s", g, w)
			}
		})
	}
	if ran == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
}

// scenariosDir finds Codex's scenarios in a directory "shared" beside the
// module root or one of its parents, and skips the test without them.
func scenariosDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for !exists(filepath.Join(root, "go.mod")) {
		if filepath.Dir(root) == root {
			t.Fatal("no go.mod above the package directory")
		}
		root = filepath.Dir(root)
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if s := filepath.Join(d, "shared", "conformance", "codex-apply-patch", "scenarios"); exists(s) {
			return s
		}
		if filepath.Dir(d) == d {
			t.Skipf("Codex's scenarios are not here: no shared/conformance/codex-apply-patch/scenarios beside %s or above it", root)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// node is a file (its bytes) or a directory of a tree held in memory.
type node struct {
	dir  bool
	data string
}

// loadTree reads the tree under root into a map of slash paths; a missing
// root is an empty tree, and symbolic links are left out, as Codex's
// driver does.
func loadTree(t *testing.T, root string) map[string]node {
	t.Helper()
	tree := map[string]node{}
	if !exists(root) {
		return tree
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			tree[filepath.ToSlash(rel)] = node{dir: true}
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree[filepath.ToSlash(rel)] = node{data: string(b)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// applyInMemory parses, plans and applies text to a copy of tree, whole or
// not at all: on error the tree is returned as it was.
func applyInMemory(tree map[string]node, text string) (map[string]node, error) {
	p, err := patch.Parse(text)
	if err != nil {
		return tree, err
	}
	changes, err := p.Plan(func(name string) (string, bool, error) {
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return "", false, fault.Errorf(fault.CodeOutsideRoot, "%s is outside the tree.", name)
		}
		n, ok := tree[name]
		if ok && n.dir {
			return "", false, fault.Errorf(fault.CodeNotAFile, "%s is a directory.", name).WithPath(name)
		}
		return n.data, ok, nil
	}, nil)
	if err != nil {
		return tree, err
	}
	out := make(map[string]node, len(tree))
	for k, v := range tree {
		out[k] = v
	}
	// Deletions first, so that a path can change from file to directory.
	for _, c := range changes {
		if c.Kind == patch.Delete {
			delete(out, c.Path)
		}
	}
	for _, c := range changes {
		if c.Kind == patch.Delete {
			continue
		}
		// Missing parent directories are made, as Codex makes them; a
		// directory that a move or a deletion leaves empty stays.
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			if n, ok := out[d]; ok && !n.dir {
				return tree, fmt.Errorf("%s: parent %s is a file", c.Path, d)
			}
			out[d] = node{dir: true}
		}
		if out[c.Path].dir {
			return tree, errors.New(c.Path + " is a directory")
		}
		out[c.Path] = node{data: c.Content}
	}
	return out, nil
}

// listTree renders a tree one path a line, in order, for comparison.
func listTree(tree map[string]node) string {
	names := make([]string, 0, len(tree))
	for k := range tree {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		if tree[k].dir {
			fmt.Fprintf(&b, "%s/\n", k)
		} else {
			fmt.Fprintf(&b, "%s %q\n", k, tree[k].data)
		}
	}
	return b.String()
}
