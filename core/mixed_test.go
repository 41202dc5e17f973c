package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/mixfs"
)

// storeLike is a backend as an object store is: transactions, but no
// modes, locks nor renames.
type storeLike struct {
	backend.MutableFS
	backend.Walker
	backend.Transactor
}

// In a mixed workspace each tool asks the backend of its path: modes on
// the local root only, a store's move made by copy, and a move between the
// two refused with nothing changed.
func TestMixedWorkspaceAsksThePathsBackend(t *testing.T) {
	ctx := context.Background()
	lfs := localFS(t)
	mem := memfs.New(map[string]string{"a.txt": "store"})
	mixed, err := mixfs.New(mixfs.Config{Members: []mixfs.Member{{FS: lfs}, {Root: "s3://b/p", FS: storeLike{mem, mem, mem}}}})
	if err != nil {
		t.Fatal(err)
	}
	tl := &Tools{FS: mixed}
	if _, err := lfs.WriteFile(ctx, "l.txt", []byte("local"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, mode string }{{".", "0644"}, {"s3://b/p", ""}} {
		res, err := tl.Ls(ctx, LsRequest{Path: tc.dir, Long: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != 1 || res.Entries[0].Mode != tc.mode {
			t.Errorf("ls %s: %+v, want mode %q", tc.dir, res.Entries, tc.mode)
		}
	}
	res, err := tl.Mv(ctx, MvRequest{From: "s3://b/p/a.txt", To: "s3://b/p/moved.txt"})
	if err != nil {
		t.Fatalf("mv within the store: %v", err)
	}
	if res.Path != "s3://b/p/moved.txt" || fileText(mem, "moved.txt") != "store" {
		t.Errorf("mv within the store gave %+v, the store holds %q", res, fileText(mem, "moved.txt"))
	}
	for _, req := range []MvRequest{{From: "l.txt", To: "s3://b/p/l.txt"}, {From: "s3://b/p/moved.txt", To: "back.txt"}} {
		_, err := tl.Mv(ctx, req)
		if fault.AsError(err).Code != fault.CodeNotSupported {
			t.Errorf("mv %s %s: %v, want NOT_SUPPORTED", req.From, req.To, err)
		}
	}
	if fileText(mem, "moved.txt") != "store" || fileText(mem, "l.txt") != "<missing>" {
		t.Errorf("a refused mv changed the store")
	}
	if got := versionOf(mixed, "l.txt"); got == "<missing>" {
		t.Errorf("a refused mv removed the local file")
	}
	if _, err := lfs.Stat(ctx, "back.txt"); fault.AsError(err).Code != fault.CodeNotFound {
		t.Errorf("a refused mv wrote back.txt: %v", err)
	}
}

// storeRoots is storeLike that knows its root by name, as s3fs does.
type storeRoots struct {
	storeLike
	backend.RootNamer
}

// mv refuses a workspace's root on every backend alike: a store's by its
// name (it was EXISTS or NOT_A_DIRECTORY there, the tool's checks first),
// a local one by its lock. A path ending in . or .. is refused before
// either, as mv(1) refuses it. A local directory shown as "." only because
// it is the working directory is no root, and moves by its name.
func TestMvRefusesRootsAlike(t *testing.T) {
	ctx := context.Background()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	lfs, err := localfs.New(localfs.Config{Roots: []string{root}, Cwd: filepath.Join(root, "sub")})
	if err != nil {
		t.Fatal(err)
	}
	defer lfs.Close()
	mem := memfs.New(map[string]string{"a.txt": "store", "d/b.txt": "b"})
	mixed, err := mixfs.New(mixfs.Config{Members: []mixfs.Member{{FS: lfs}, {Root: "s3://b/p", FS: storeRoots{storeLike{mem, mem, mem}, mem}}}})
	if err != nil {
		t.Fatal(err)
	}
	tl := &Tools{FS: mixed}
	for _, req := range []MvRequest{
		{From: "s3://b/p/a.txt", To: "s3://b/p"},
		{From: "s3://b/p/d", To: "s3://b/p/", Overwrite: true},
	} {
		if _, err := tl.Mv(ctx, req); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument || !strings.Contains(err.Error(), "root") {
			t.Errorf("mv %s %s: %v, want the root refused", req.From, req.To, err)
		}
	}
	for _, req := range []MvRequest{
		{From: "s3://b/p/d/..", To: "s3://b/p/e"},
		{From: "..", To: "elsewhere"},
		{From: ".", To: "../moved"},
	} {
		if _, err := tl.Mv(ctx, req); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeInvalidArgument || !strings.Contains(err.Error(), "ends in") {
			t.Errorf("mv %s %s: %v, want a path ending in . or .. refused", req.From, req.To, err)
		}
	}
	if _, err := tl.Mv(ctx, MvRequest{From: "../sub", To: "../moved"}); err != nil {
		t.Fatalf("mv of the working directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "moved")); err != nil {
		t.Errorf("the working directory did not move: %v", err)
	}
}
