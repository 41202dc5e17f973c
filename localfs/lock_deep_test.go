package localfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
)

// TestMutateDeeperThanOpenFileLimit writes, edits, moves (within the deep
// directory and out of it and back), patches, replaces in and removes a
// file 200 directories deep under a limit of 64 open files, as echo > does.
// A mutation held a lock file for every ancestor (204 descriptors here),
// and every one of them was IO_ERROR (too many open files), nothing
// changed.
func TestMutateDeeperThanOpenFileLimit(t *testing.T) {
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	deep := strings.Repeat("d/", 200)
	deepTree(t, dir, 200, "z\n")
	tl := newTools(t, dir)
	ctx := context.Background()
	lowerOpenFiles(t, 64)
	str := func(s string) *string { return &s }
	steps := []struct {
		name string
		run  func() error
	}{
		{"write", func() error {
			_, err := tl.Write(ctx, core.WriteRequest{Path: deep + "f.txt", Content: str("one\n")})
			return err
		}},
		{"edit", func() error {
			_, err := tl.Edit(ctx, core.EditRequest{Path: deep + "f.txt", OldText: str("one"), NewText: str("two")})
			return err
		}},
		{"mv within", func() error {
			_, err := tl.Mv(ctx, core.MvRequest{From: deep + "f.txt", To: deep + "g.txt"})
			return err
		}},
		{"mv out", func() error {
			_, err := tl.Mv(ctx, core.MvRequest{From: deep + "g.txt", To: "g.txt"})
			return err
		}},
		{"mv in", func() error {
			_, err := tl.Mv(ctx, core.MvRequest{From: "g.txt", To: deep + "f.txt"})
			return err
		}},
		{"apply-patch", func() error {
			_, err := tl.ApplyPatch(ctx, core.ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: " + deep + "f.txt\n@@\n-two\n+three\n*** End Patch\n"})
			return err
		}},
		{"replace", func() error {
			_, err := tl.Replace(ctx, core.ReplaceRequest{Query: "three", Replacement: str("four"), Path: deep})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s 200 deep: %v", s.name, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, deep, "f.txt"))
	if err != nil || string(got) != "four\n" {
		t.Fatalf("after the steps: %q, %v; want four", got, err)
	}
	if _, err := tl.Rm(ctx, core.RmRequest{Path: deep + "f.txt"}); err != nil {
		t.Fatalf("rm 200 deep: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, deep, "f.txt")); !os.IsNotExist(err) {
		t.Fatalf("rm left the file: %v", err)
	}
}

// TestLockOutOfDescriptorsBlamesTheLimit: a mutation whose lock files run
// out of descriptors is IO_ERROR saying so, with ulimit -n in its hint; its
// message said the lock file could not be written in the state directory,
// which was not at fault.
func TestLockOutOfDescriptorsBlamesTheLimit(t *testing.T) {
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	deep := strings.Repeat("d/", 30)
	deepTree(t, dir, 30, "z\n")
	tl := newTools(t, dir)
	lowerOpenFiles(t, uint64(openFDs(t)+12))
	str := "one\n"
	_, err := tl.Write(context.Background(), core.WriteRequest{Path: deep + "f.txt", Content: &str})
	fe := (*fault.Error)(nil)
	if !errors.As(err, &fe) || fe.Code != fault.CodeIOError || !strings.Contains(fe.Hint, "ulimit -n") {
		t.Fatalf("a write out of descriptors: %v, want IO_ERROR naming ulimit -n", err)
	}
	if strings.Contains(fe.Message, "state directory") || !strings.Contains(fe.Message, "too many open files") {
		t.Errorf("the message blames the state directory, or not the limit: %s", fe.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, deep, "f.txt")); !os.IsNotExist(err) {
		t.Errorf("the file was made (%v)", err)
	}
}
