package core

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// A change of several files, one of which it would make over
// MaxEditBytes, is refused whole: the files before it in the change are
// left as they were too. And a file that ends at the limit exactly is
// changed, by replace and apply-patch as by edit.
func TestChangeOfSeveralFilesOverTheLimit(t *testing.T) {
	ctx := context.Background()
	near := strings.Repeat("ab\n", 1000) + strings.Repeat("x", 1800000) + "\n"
	files := map[string]string{"a": "ab\n", "b": near, "c": "ab\n"}
	for _, tc := range []struct {
		name string
		run  func(*Tools) error
	}{
		{"replace", func(tl *Tools) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: "ab", Replacement: str(strings.Repeat("c", 400))})
			return err
		}},
		{"apply-patch", func(tl *Tools) error {
			_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: a\n@@\n-ab\n+new\n" +
				"*** Update File: b\n*** Move to: m\n@@\n-ab\n+" + strings.Repeat("c", 300000) + "\n" +
				"*** Update File: c\n@@\n-ab\n+new\n*** End Patch\n"})
			return err
		}},
		{"edit of several edits", func(tl *Tools) error {
			_, err := tl.Edit(ctx, EditRequest{Path: "b", Edits: []EditOp{{OldText: "ab\nxxx", NewText: str(strings.Repeat("c", 150000) + "xxx")},
				{OldText: "x\n", NewText: str(strings.Repeat("y", 150000) + "\n")}}})
			return err
		}},
	} {
		m := memfs.New(files)
		err := tc.run(&Tools{FS: m})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeTooLarge {
			t.Errorf("%s: %v, want TOO_LARGE", tc.name, err)
		}
		for p, want := range files {
			if fileText(m, p) != want {
				t.Errorf("%s: %s was changed", tc.name, p)
			}
		}
		if m.Stats().Writes != 0 {
			t.Errorf("%s: a refused change wrote", tc.name)
		}
	}
	exact := "ab\n" + strings.Repeat("x", MaxEditBytes-5) + "\n"
	for _, tc := range []struct {
		name string
		run  func(*Tools) error
	}{
		{"replace", func(tl *Tools) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: "ab", Replacement: str("abc")})
			return err
		}},
		{"apply-patch", func(tl *Tools) error {
			_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-ab\n+abc\n*** End Patch\n"})
			return err
		}},
	} {
		m := memfs.New(map[string]string{"f": exact})
		if err := tc.run(&Tools{FS: m}); err != nil || len(fileText(m, "f")) != MaxEditBytes {
			t.Errorf("%s to the limit exactly: %v, %d bytes", tc.name, err, len(fileText(m, "f")))
		}
	}
}
