package core

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// A change whose result would be over MaxEditBytes is TOO_LARGE, dry run
// too, and writes nothing: edit, replace and apply-patch read no larger
// file, so they could not undo it (one replaceAll made a 1.8 MB file 4.2 MB,
// which no tool that made it could change again).
func TestChangeKeepsTheFileEditable(t *testing.T) {
	ctx := context.Background()
	near := strings.Repeat("ab\n", 1000) + strings.Repeat("x", 1800000) + "\n" // 1.8 MB
	const grown = 1803001 + 1000*300
	utf16 := "\xff\xfe" + "Z\x00" + strings.Repeat("a\x00", MaxEditBytes/2-2)
	grow := str("ab" + strings.Repeat("c", 300))
	for _, tc := range []struct {
		name string
		file string
		run  func(*Tools) error
		size int
	}{
		{"edit replaceAll", near, func(tl *Tools) error {
			_, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{{OldText: "ab", NewText: grow, ReplaceAll: true}}})
			return err
		}, grown},
		{"edit dry run", near, func(tl *Tools) error {
			_, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{{OldText: "ab", NewText: grow, ReplaceAll: true}}, DryRun: true})
			return err
		}, grown},
		// Sized as written: UTF-16, two bytes a character.
		{"edit of UTF-16", utf16, func(tl *Tools) error {
			_, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{{OldText: "Z", NewText: str("ZZ")}}})
			return err
		}, MaxEditBytes + 2},
		{"replace", near, func(tl *Tools) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: "ab", Replacement: grow})
			return err
		}, grown},
		{"replace dry run", near, func(tl *Tools) error {
			_, err := tl.Replace(ctx, ReplaceRequest{Query: "ab", Replacement: grow, DryRun: true})
			return err
		}, grown},
		{"apply-patch update", near, func(tl *Tools) error {
			_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: f\n@@\n-ab\n+" + strings.Repeat("c", 300000) + "\n*** End Patch\n"})
			return err
		}, 1803001 + 300000 - 2},
		{"apply-patch add", "", func(tl *Tools) error {
			_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Add File: g\n+" + strings.Repeat("x", MaxEditBytes) + "\n*** End Patch\n"})
			return err
		}, MaxEditBytes + 1},
	} {
		m := memfs.New(map[string]string{"f": tc.file})
		err := tc.run(&Tools{FS: m})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeTooLarge {
			t.Errorf("%s: %v, want TOO_LARGE", tc.name, err)
			continue
		}
		if e.Details["size"] != tc.size || e.Details["limit"] != MaxEditBytes || !strings.Contains(e.Hint, "nothing was changed") {
			t.Errorf("%s: %+v; want size %d, limit %d, and a hint that nothing was changed", tc.name, e, tc.size, MaxEditBytes)
		}
		if m.Stats().Writes != 0 || fileText(m, "f") != tc.file {
			t.Errorf("%s: a refused change wrote", tc.name)
		}
	}
}

// A change that leaves the file at the limit exactly is made.
func TestChangeUpToTheLimit(t *testing.T) {
	m := memfs.New(map[string]string{"f": "Z" + strings.Repeat("a", MaxEditBytes-2)})
	_, err := (&Tools{FS: m}).Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "Z", NewText: str("ZZ")}}})
	if err != nil || len(fileText(m, "f")) != MaxEditBytes {
		t.Fatalf("%v: %d bytes", err, len(fileText(m, "f")))
	}
}
