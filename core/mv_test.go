package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// withoutRename hides the Renamer capability, of a backend with
// transactions only: mv then copies and removes a file in one transaction.
type withoutRename struct {
	backend.MutableFS
	backend.Transactor
}

// mv moves by rename where the backend renames, and by a transaction of a
// copy and a removal where it does not; a directory then cannot move.
func TestMvWithAndWithoutRename(t *testing.T) {
	ctx := context.Background()
	for _, renames := range []bool{true, false} {
		m := memfs.New(map[string]string{"a": "alpha", "b": "bravo", "d/x": "x"})
		var fs backend.FS = m
		if !renames {
			fs = withoutRename{m, m}
		}
		tl := &Tools{FS: fs}
		if _, err := tl.Mv(ctx, MvRequest{From: "a", To: "b"}); fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeExists {
			t.Errorf("renames %v: a move over a file without overwrite: %v", renames, err)
		}
		res, err := tl.Mv(ctx, MvRequest{From: "a", To: "b", Overwrite: true})
		if err != nil || !res.Overwritten || fileText(m, "b") != "alpha" || fileText(m, "a") != "<missing>" {
			t.Errorf("renames %v: %+v, %v; b is %q", renames, res, err, fileText(m, "b"))
		}
		_, err = tl.Mv(ctx, MvRequest{From: "d", To: "e"})
		if renames && (err != nil || fileText(m, "e/x") != "x") {
			t.Errorf("a directory's rename: %v", err)
		}
		if !renames && (fault.AsError(err) == nil || fault.AsError(err).Code != fault.CodeNotSupported || fileText(m, "d/x") != "x") {
			t.Errorf("a directory without rename: %v", err)
		}
	}
}

// A directory moved over a file is refused alike on a disk and elsewhere:
// the disk's ENOTDIR said "a component of the path is not a directory",
// pointing at a path that is none of the caller's making.
func TestMvDirectoryOntoAFile(t *testing.T) {
	ctx := context.Background()
	lfs := localFS(t)
	for _, fs := range []backend.MutableFS{lfs, memfs.New(nil)} {
		for p, data := range map[string]string{"d/x": "x", "f.txt": "f"} {
			if _, err := fs.WriteFile(ctx, p, []byte(data), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Without overwrite too: EXISTS said to pass --overwrite, which
		// led to this refusal.
		for _, overwrite := range []bool{true, false} {
			_, err := (&Tools{FS: fs}).Mv(ctx, MvRequest{From: "d", To: "f.txt", Overwrite: overwrite})
			if e := fault.AsError(err); e == nil || e.Code != fault.CodeNotADirectory || e.Message != fault.DirOntoFile("f.txt").Message {
				t.Errorf("%T, overwrite %v: %v, want %v", fs, overwrite, err, fault.DirOntoFile("f.txt"))
			}
		}
	}
}

// A move fits the bound its result fits: the result says overwritten only
// when a file was there, and a bound that held it was TOO_LARGE, needing
// 19 bytes (`,"overwritten":true`) more, without overwrite or with it
// onto a free name. A file's version, unknown until it is moved, is
// counted at its largest.
func TestMvFitsItsResult(t *testing.T) {
	ctx := context.Background()
	long := func(c string) string { return strings.Repeat(c, 255) }
	for _, tc := range []struct {
		overwrite bool
		to        string
	}{{false, long("c")}, {true, long("c")}, {true, long("b")}} {
		m := memfs.New(map[string]string{long("a"): "alpha", long("b"): "bravo"})
		// Sized with the file's version at its largest, before the move.
		want := MvResult{Path: tc.to, From: long("a"), Overwritten: tc.to == long("b"), Version: strings.Repeat("v", backend.VersionBytes(m))}
		size := jsonSize(&want)
		req := MvRequest{From: long("a"), To: tc.to, Overwrite: tc.overwrite}
		_, err := (&Tools{FS: m, MaxBytes: size - 1}).Mv(ctx, req)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeTooLarge || fmt.Sprint(e.Details["needed"]) != fmt.Sprint(size) {
			t.Errorf("%+v: a bound a byte short of the result: %v, want TOO_LARGE needing %d", want, err, size)
		}
		res, err := (&Tools{FS: m, MaxBytes: size}).Mv(ctx, req)
		if info, serr := m.Stat(ctx, tc.to); serr == nil {
			want.Version = info.Version
		}
		if err != nil || *res != want {
			t.Errorf("a bound that holds the result: %+v, %v; want %+v", res, err, want)
		}
	}
}

// The source spelled through a link to its directory is the destination
// itself, with or without --overwrite: EXISTS came first, and its hint
// (--overwrite) led to INVALID_ARGUMENT. Another name of the file (a hard
// link) is still EXISTS.
func TestMvOntoItsOwnEntry(t *testing.T) {
	ctx := context.Background()
	lfs := localFS(t)
	root := lfs.Roots()[0]
	if _, err := lfs.WriteFile(ctx, "d/a", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(root, "dl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "d/a"), filepath.Join(root, "d/h")); err != nil {
		t.Fatal(err)
	}
	tl := &Tools{FS: lfs}
	for _, c := range []struct {
		req  MvRequest
		want fault.Code
	}{
		{MvRequest{From: "d/a", To: "dl/a"}, fault.CodeInvalidArgument},
		{MvRequest{From: "d/a", To: "dl/a", Overwrite: true}, fault.CodeInvalidArgument},
		{MvRequest{From: "dl/a", To: "d/a"}, fault.CodeInvalidArgument},
		{MvRequest{From: "d/a", To: "dl/h"}, fault.CodeExists},
	} {
		_, err := tl.Mv(ctx, c.req)
		if e := fault.AsError(err); e == nil || e.Code != c.want {
			t.Errorf("%+v: %v, want %s", c.req, err, c.want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "d/a")); err != nil || string(data) != "x" {
		t.Errorf("d/a after the refusals: %q, %v", data, err)
	}
}

// foldFS is the memory backend as a file system that ignores case (APFS,
// macOS's default) sees its top-level names: any spelling finds the entry
// stored, and a rename between two spellings of it changes the spelling.
type foldFS struct{ *memfs.FS }

func (f foldFS) stored(p string) string {
	page, err := f.FS.ReadDir(context.Background(), ".", 0, 1000)
	if err != nil {
		return p
	}
	for _, e := range page.Entries {
		if strings.EqualFold(e.Name, p) {
			return e.Name
		}
	}
	return p
}

func (f foldFS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	return f.FS.Stat(ctx, f.stored(p))
}

func (f foldFS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) {
	return f.FS.Lstat(ctx, f.stored(p))
}

func (f foldFS) SameEntry(_ context.Context, a, b string) bool { return f.stored(a) == f.stored(b) }

func (f foldFS) Rename(ctx context.Context, from, to string, opts backend.WriteOptions) (backend.FileInfo, error) {
	if f.stored(from) == f.stored(to) {
		opts.IfAbsent = false // one entry: nothing is replaced
	}
	return f.FS.Rename(ctx, f.stored(from), to, opts)
}

// A move between two spellings of one name where case is ignored
// (mv readme README on macOS) changes the spelling, with or without
// --overwrite, as macOS's mv does, and replaces nothing: it was EXISTS,
// whose --overwrite answered "the destination is the source itself", and
// a directory's hint named a path inside itself (mv Dir dir: dir/Dir).
func TestMvChangesTheCaseOfAName(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		from, to  string
		overwrite bool
	}{
		{"readme", "README", false},
		{"readme", "README", true},
		{"Dir", "dir", false},
		{"Dir", "dir", true},
	} {
		m := memfs.New(map[string]string{"readme": "r", "Dir/f": "f"})
		tl := &Tools{FS: foldFS{m}}
		res, err := tl.Mv(ctx, MvRequest{From: c.from, To: c.to, Overwrite: c.overwrite})
		if err != nil || res.Path != c.to || res.Overwritten {
			t.Errorf("mv %s %s (overwrite %v): %+v, %v", c.from, c.to, c.overwrite, res, err)
			continue
		}
		page, _ := m.ReadDir(ctx, ".", 0, 10)
		var names []string
		for _, e := range page.Entries {
			names = append(names, e.Name)
		}
		if !slices.Contains(names, c.to) || slices.Contains(names, c.from) {
			t.Errorf("mv %s %s: the root lists %v", c.from, c.to, names)
		}
	}
}
