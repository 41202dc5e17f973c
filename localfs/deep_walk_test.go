package localfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs/agentfs/backend"
)

// The walk to a deep file's directory does a bounded amount of work per
// level: each level checked by its full path, ancestor by ancestor, made
// a write's cost grow with the cube of its depth (10 s at depth 1000).
// Allocations count the path lookups without a clock: each stat of a path
// allocates its name, so twice the depth must cost about twice as many,
// not four times.
func TestDeepWriteIsLinearInDepth(t *testing.T) {
	fsys, dir := newTestFS(t)
	allocs := func(depth int) float64 {
		rel := filepath.Join(fmt.Sprint("w", depth), deepRel(depth, "f.txt"))
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(5, func() {
			if _, err := fsys.WriteFile(context.Background(), rel, []byte("x"), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	short, long := allocs(60), allocs(120)
	if long > 2.5*short {
		t.Fatalf("a write %d levels deep made %.0f allocations, %.0f at %d: more than linear", 120, long, short, 60)
	}
}
