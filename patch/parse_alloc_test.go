package patch_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/patch"
)

// TestParseAddSizedOnce: an added file's content is gathered in one
// allocation of its size: grown by doubling, 4 MB of content allocated
// about 16 MB.
func TestParseAddSizedOnce(t *testing.T) {
	line := strings.Repeat("x", 99)
	text := "*** Begin Patch\n*** Add File: a.txt\n" + strings.Repeat("+"+line+"\n", 40000) + "*** End Patch\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := patch.Parse(text)
	runtime.ReadMemStats(&after)
	if err != nil || len(p.Ops) != 1 || len(p.Ops[0].Content) != 40000*100 {
		t.Fatalf("parsed %v", err)
	}
	// The content, and the lines' headers (16 bytes a line).
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(p.Ops[0].Content))*3/2 {
		t.Fatalf("parsing %d bytes allocated %d", len(text), n)
	}
}
