package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/localfs"
)

func tools(t *testing.T) (*core.Tools, string) {
	t.Helper()
	t.Setenv(localfs.StateDirEnv, t.TempDir())
	dir := t.TempDir()
	fsys, err := localfs.New(localfs.Config{Roots: []string{dir}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return &core.Tools{FS: fsys, LockTimeout: time.Second}, dir
}

func code(err error) core.Code {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func ptr(s string) *string { return &s }

// The version a write returns is the one a later stat sees, so it works as
// the precondition of the next mutation; an older one is STALE.
func TestWriteVersionChain(t *testing.T) {
	tl, _ := tools(t)
	ctx := context.Background()
	first, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("one")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("two"),
		Precondition: core.Precondition{ExpectedVersion: first.Version, ExpectedSha256: first.Sha256}})
	if err != nil {
		t.Fatalf("write with the current version: %v", err)
	}
	_, err = tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("three"),
		Precondition: core.Precondition{ExpectedVersion: first.Version}})
	if code(err) != core.CodeStale {
		t.Fatalf("write with an old version: %v, want STALE", err)
	}
	var ce *core.Error
	errors.As(err, &ce)
	if ce.Details["currentVersion"] != second.Version {
		t.Fatalf("STALE names version %v, want %s", ce.Details["currentVersion"], second.Version)
	}
	if _, err := tl.Rm(ctx, core.RmRequest{Path: "f", Precondition: core.Precondition{ExpectedVersion: second.Version}}); err != nil {
		t.Fatalf("rm with the current version: %v", err)
	}
}

// Identical content is noChange: the file is not touched, so its mtime and
// version stay; under a matching sha256 precondition too.
func TestWriteNoChangeKeepsFile(t *testing.T) {
	tl, dir := tools(t)
	ctx := context.Background()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, past, past); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	for _, pre := range []core.Precondition{{}, {ExpectedSha256: "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5"}} {
		res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("same"), Precondition: pre})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(p)
		if !res.NoChange || res.BytesWritten != 0 || !after.ModTime().Equal(past) || !os.SameFile(before, after) {
			t.Fatalf("%+v: result %+v, mtime %v", pre, res, after.ModTime())
		}
	}
	res, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("diff")})
	if err != nil || res.NoChange {
		t.Fatalf("same size, other content: %+v %v", res, err)
	}
}

// A backend without the write side refuses mutations with NOT_CONFIGURED,
// and read-only mode with READ_ONLY before anything else.
func TestMutationGate(t *testing.T) {
	tl, _ := tools(t)
	ctx := context.Background()
	readOnly := &core.Tools{FS: readOnlyFS{tl.FS}}
	if _, err := readOnly.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("x")}); code(err) != core.CodeNotConfigured {
		t.Fatalf("write: %v", err)
	}
	if _, err := readOnly.Rm(ctx, core.RmRequest{Path: "f"}); code(err) != core.CodeNotConfigured {
		t.Fatalf("rm: %v", err)
	}
	tl.ReadOnly = true
	if _, err := tl.Write(ctx, core.WriteRequest{Path: "f", Content: ptr("x")}); code(err) != core.CodeReadOnly {
		t.Fatalf("write: %v", err)
	}
}

// readOnlyFS hides the write side of a backend.
type readOnlyFS struct{ core.FS }
