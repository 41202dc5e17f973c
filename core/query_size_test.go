package core

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// TestQueryOverLimit: a query over MaxQueryBytes is TOO_LARGE, with its
// size and the limit, before it is compiled. A 5 MB fixed string took
// 100 MB to parse for the hint of an empty answer, a 1 MB regex 190 MB
// to compile (300 MB with word, 380 MB for replace), and 50 MB of either
// 1.8 GB or more, to search one small file. A query of the limit is
// searched.
func TestQueryOverLimit(t *testing.T) {
	ctx := context.Background()
	tl := &Tools{FS: memfs.New(map[string]string{"a.txt": "hello\n"})}
	over := strings.Repeat("x", MaxQueryBytes+1)
	yes := true
	empty := ""
	for _, c := range []struct {
		name string
		run  func(q string) error
	}{
		{"grep", func(q string) error { _, err := tl.Grep(ctx, GrepRequest{Query: q, Path: "a.txt"}); return err }},
		{"grep regex", func(q string) error {
			_, err := tl.Grep(ctx, GrepRequest{Query: q, Regex: &yes, Path: "a.txt"})
			return err
		}},
		{"grep pattern", func(q string) error { _, err := tl.Grep(ctx, GrepRequest{Pattern: q, Path: "a.txt"}); return err }},
		{"grep word", func(q string) error {
			_, err := tl.Grep(ctx, GrepRequest{Query: q, Word: true, IgnoreCase: true, Path: "a.txt"})
			return err
		}},
		{"replace", func(q string) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: q, Replacement: &empty, Path: "a.txt", DryRun: true})
			return err
		}},
		{"replace regex", func(q string) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: q, Regex: true, Replacement: &empty, Path: "a.txt", DryRun: true})
			return err
		}},
	} {
		err := c.run(over)
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeTooLarge {
			t.Errorf("%s: a query of %d bytes: got %v, want TOO_LARGE", c.name, len(over), err)
			continue
		}
		if e.Details["size"] != len(over) || e.Details["limit"] != MaxQueryBytes || e.Hint == "" {
			t.Errorf("%s: details %v, hint %q: want size, limit and a hint", c.name, e.Details, e.Hint)
		}
		if err := c.run(over[1:]); err != nil {
			t.Errorf("%s: a query of the limit: %v", c.name, err)
		}
	}
}
