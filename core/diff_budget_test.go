package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/memfs"
)

// The diffs of one replace, or one apply-patch, share one search budget:
// each file whose diff cannot be found within it (here every pair of
// lines swapped, which costs go-diff's search the square of the lines)
// took the whole budget again, 2 s a file under the files' locks. The
// files take at least files × budget only if each has its own; shared, a
// request takes one budget and its other work, which a loaded machine
// stretched past 1.8 s with a budget of 300 ms (the margin is now 5 s).
func TestDiffsOfARequestShareOneSearch(t *testing.T) {
	const files, budget = 6, time.Second
	defer func(d time.Duration) { diffSearch = d }(diffSearch)
	diffSearch = budget
	content := map[string]string{}
	var body, swapped strings.Builder
	for i := 0; i < 20000; i += 2 {
		fmt.Fprintf(&body, "line %d\nline %d\n", i, i+1)
		fmt.Fprintf(&swapped, "line %d\nline %d\n", i+1, i)
	}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for k := range files {
		name := fmt.Sprintf("f%d.txt", k)
		content[name] = body.String()
		fmt.Fprintf(&patch, "*** Update File: %s\n@@\n%s%s", name, prefixed("-", body.String()), prefixed("+", swapped.String()))
	}
	patch.WriteString("*** End Patch\n")
	tl := &Tools{FS: memfs.New(content), LockTimeout: time.Second}
	start := time.Now()
	res, err := tl.Replace(context.Background(), ReplaceRequest{Query: `(?m)^(.*)\n(.*)$`, Replacement: str("$2\n$1"), Regex: true, DryRun: true})
	if err != nil || res.FilesChanged != files {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if took := time.Since(start); took >= files*budget {
		t.Errorf("replace took %v: each file's diff searched for its own %v", took, budget)
	}
	start = time.Now()
	pres, err := tl.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: patch.String(), DryRun: true})
	if err != nil || len(pres.Files) != files {
		t.Fatalf("apply-patch: %+v, %v", pres, err)
	}
	if took := time.Since(start); took >= files*budget {
		t.Errorf("apply-patch took %v: each file's diff searched for its own %v", took, budget)
	}
}

// prefixed is s with mark before each of its lines.
func prefixed(mark, s string) string {
	return mark + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+mark) + "\n"
}
