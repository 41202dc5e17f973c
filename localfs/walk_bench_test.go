package localfs_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
)

// BenchmarkGrepGoroot searches the Go source tree, for profiling; the
// comparison with ripgrep is bench/search.sh.
func BenchmarkGrepGoroot(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command to find the Go source tree")
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	tl := newTools(b, dir)
	for _, q := range []core.GrepRequest{
		{Query: "func main", Mode: core.ModeCount},
		{Query: "EPROTONOSUPPORT", Mode: core.ModeCount},
		{Query: "err", Mode: core.ModeCount},
		{Query: `func \w+Error\(`, Regex: new(true), Mode: core.ModeCount},
		{Query: "readfile", IgnoreCase: true, Mode: core.ModeCount},
		{Query: `[A-Z][a-z]+[0-9]{2,}`, Regex: new(true), Mode: core.ModeCount},
		{Query: "err"},
	} {
		b.Run(q.Query+"/"+q.Mode, func(b *testing.B) {
			for b.Loop() {
				if _, err := tl.Grep(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFindGoroot walks the Go source tree as find does.
func BenchmarkFindGoroot(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command to find the Go source tree")
	}
	tl := newTools(b, filepath.Join(strings.TrimSpace(string(goroot)), "src"))
	for b.Loop() {
		if _, err := tl.Find(context.Background(), core.FindRequest{Pattern: "**/*_test.go", Offset: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}
