package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/mixfs"
)

// TestWithinAnswersLocalPathsOnly: in a workspace whose relative paths are
// keys of a store, a relative path that the local index would place in its
// tree is never answered from it; the local tree's own paths still are.
func TestWithinAnswersLocalPathsOnly(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.build()
	store := memfs.New(map[string]string{"d0/x.txt": "needle"})
	mixed, err := mixfs.New(mixfs.Config{Members: []mixfs.Member{{FS: f.fsys}, {Root: "s3://b/p", FS: store}}, Home: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := core.IndexQuery{Path: "d0", Query: "needle"}
	if n, err := Local(f.fsys).Narrow(ctx, q); n == nil || err != nil {
		t.Fatalf("the local index does not cover d0 (%v): the test proves nothing", err)
	}
	within := Within(mixed, f.fsys)
	for _, p := range []string{"d0", "s3://b/p/d0", "s3://b/p"} {
		if n, err := within.Narrow(ctx, core.IndexQuery{Path: p, Query: "needle"}); n != nil || err != nil {
			t.Errorf("%s, a path of the store, was answered from the local index (%v)", p, err)
		}
	}
	if n, err := within.Narrow(ctx, core.IndexQuery{Path: filepath.Join(f.dir, "d0"), Query: "needle"}); n == nil || err != nil {
		t.Errorf("a local path of the mixed workspace is not narrowed (%v)", err)
	}
}
