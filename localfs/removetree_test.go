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

// join builds rm -r's display paths: either side may be empty.
func TestJoin(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""},
		{"", "b", "b"},
		{"a", "", "a"},
		{"a", "b/c", "a/b/c"},
	} {
		if got := join(tc.a, tc.b); got != tc.want {
			t.Errorf("join(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// A file written into a directory a recursive removal has emptied (by a
// writer that takes no lock of the tree) stops it NOT_EMPTY, saying so:
// the hint said to pass --recursive, which was passed.
func TestRemoveTreeWrittenIntoMeanwhile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "t", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t", "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := New(Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	emptiedHook = func(display string) {
		if display == "t/d" {
			os.WriteFile(filepath.Join(dir, "t", "d", "new"), nil, 0o644)
		}
	}
	defer func() { emptiedHook = nil }()
	_, err = fsys.Remove(context.Background(), "t", backend.RemoveOptions{Recursive: true})
	e := fault.AsError(err)
	if e == nil || e.Code != fault.CodeNotEmpty || strings.Contains(e.Hint, "recursive") || !strings.Contains(e.Message, "appeared") {
		t.Fatalf("a tree written into as it was removed: %v, want NOT_EMPTY saying entries appeared", err)
	}
}
