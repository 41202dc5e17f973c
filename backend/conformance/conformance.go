// Package conformance is the test suite every backend passes: what the
// tools rely on, asked of the backend alone, so that a new backend (an
// object store) is known to fit before a tool runs on it. A backend's test
// calls Run with a function that makes an empty backend; the suite fills it
// through WriteFile only.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
)

// Backend is what the tools need of a read-write backend.
type Backend interface {
	backend.MutableFS
	backend.Walker
}

// Run runs the suite; empty returns a new, empty backend for each test.
func Run(t *testing.T, empty func(t *testing.T) Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b Backend)
	}{
		{"WriteThenRead", writeThenRead},
		{"ReaderKeepsItsVersion", readerKeepsItsVersion},
		{"VersionsChange", versionsChange},
		{"Errors", errorsOfPaths},
		{"ReadDirPages", readDirPages},
		{"WalkOrder", walkOrder},
		{"WalkSteering", walkSteering},
		{"WalkFrom", walkFrom},
		{"WriteSwap", writeSwap},
		{"Remove", remove},
		{"RemoveSwap", removeSwap},
		{"Transaction", transaction},
		{"Rename", rename},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, empty(t)) })
	}
}

func put(t *testing.T, b Backend, files ...string) {
	t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		if _, err := b.WriteFile(context.Background(), files[i], []byte(files[i+1]), backend.WriteOptions{}); err != nil {
			t.Fatalf("write %s: %v", files[i], err)
		}
	}
}

func codeOf(err error) fault.Code {
	var e *fault.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func wantCode(t *testing.T, what string, err error, code fault.Code) {
	t.Helper()
	if got := codeOf(err); got != code {
		t.Errorf("%s: got %v (%s), want %s", what, err, got, code)
	}
}

// wantError checks err's code, path and hint against want's: an error
// every backend gives alike.
func wantError(t *testing.T, what string, err error, want *fault.Error) {
	t.Helper()
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != want.Code || e.Path != want.Path || e.Hint != want.Hint {
		t.Errorf("%s: got %#v, want %s at %q with hint %q", what, err, want.Code, want.Path, want.Hint)
	}
}

func readAll(t *testing.T, b Backend, p string) (string, backend.FileInfo) {
	t.Helper()
	r, err := b.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(data), r.Info()
}

func stat(t *testing.T, b Backend, p string) backend.FileInfo {
	t.Helper()
	fi, err := b.Stat(context.Background(), p)
	if err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return fi
}

// validVersion reports whether v is a version b may give: printable
// ASCII within the bound b states (backend.VersionBytes).
func validVersion(b Backend, v string) bool {
	if v == "" || len(v) > backend.VersionBytes(b) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// writeThenRead: a write creates its parents and returns the info a read
// then gives, content included, by stream and by ReadAt.
func writeThenRead(t *testing.T, b Backend) {
	ctx := context.Background()
	fi, err := b.WriteFile(ctx, "a/b/c.txt", []byte("hello\nworld\n"), backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size != 12 || fi.Type != backend.TypeFile || !validVersion(b, fi.Version) {
		t.Errorf("write returned %+v", fi)
	}
	got, info := readAll(t, b, "a/b/c.txt")
	if got != "hello\nworld\n" || info.Version != fi.Version || info.Size != 12 || info.Name != "c.txt" {
		t.Errorf("read %q, info %+v, after a write returning %+v", got, info, fi)
	}
	if s := stat(t, b, "a/b/c.txt"); s.Version != fi.Version || s.Size != 12 {
		t.Errorf("stat %+v, want the written version %s", s, fi.Version)
	}
	if d := stat(t, b, "a/b"); d.Type != backend.TypeDir {
		t.Errorf("the parent made by a write is %+v, want a directory", d)
	}
	r, err := b.Open(ctx, "a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 5)
	if n, err := r.ReadAt(buf, 6); n != 5 || err != nil && err != io.EOF || string(buf) != "world" {
		t.Errorf("ReadAt(6): %d %v %q", n, err, buf)
	}
	if n, err := r.ReadAt(buf, 10); n != 2 || err != io.EOF {
		t.Errorf("ReadAt past the end: %d bytes, %v, want 2 and io.EOF", n, err)
	}
	if got := b.Display("a/./b//c.txt"); got != "a/b/c.txt" {
		t.Errorf("display of a/./b//c.txt is %q", got)
	}
	if _, err := b.WriteFile(ctx, "empty", nil, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, info := readAll(t, b, "empty"); got != "" || info.Size != 0 {
		t.Errorf("an empty file reads %q, %+v", got, info)
	}
}

// readerKeepsItsVersion: everything read through one open reader is of the
// version it opened, whatever is written to the path meanwhile.
func readerKeepsItsVersion(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "f", "old content\n")
	r, err := b.Open(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := r.Info()
	put(t, b, "f", "NEW CONTENT, LONGER\n")
	buf := make([]byte, 3)
	if _, err := r.ReadAt(buf, 4); string(buf) != "con" {
		t.Errorf("ReadAt after a replace gave %q (%v), want the opened version's bytes", buf, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "old content\n" {
		t.Errorf("the stream after a replace gave %q (%v)", rest, err)
	}
	if r.Info() != old {
		t.Errorf("Info changed under an open reader: %+v, was %+v", r.Info(), old)
	}
	if now := stat(t, b, "f"); now.Version == old.Version {
		t.Errorf("the replaced file kept version %s", old.Version)
	}
}

// ContentVersioned is a Backend whose versions are a hash of the content,
// as an object store's ETags are: writing the same bytes again gives the
// same version. A compare-and-swap then cannot tell that rewrite from no
// change, which loses nothing, since the content is the one read.
type ContentVersioned interface {
	VersionIsContentHash()
}

// versionsChange: every write gives a new version, even one of the same
// size and content (on a ContentVersioned backend, every write of new
// content).
func versionsChange(t *testing.T, b Backend) {
	_, hashed := backend.At(b, "f").(ContentVersioned)
	seen := map[string]string{}
	for _, content := range []string{"one\n", "two\n", "two\n", "", "one\n"} {
		fi, err := b.WriteFile(context.Background(), "f", []byte(content), backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if was, ok := seen[fi.Version]; ok && !(hashed && was == content) {
			t.Errorf("writing %q gave the version %s again", content, fi.Version)
		}
		seen[fi.Version] = content
	}
}

// errorsOfPaths: the codes the tools switch on.
func errorsOfPaths(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "dir/f.txt", "x")
	_, err := b.Stat(ctx, "missing")
	wantCode(t, "stat of a missing path", err, fault.CodeNotFound)
	_, err = b.Open(ctx, "missing")
	wantCode(t, "open of a missing path", err, fault.CodeNotFound)
	_, err = b.Open(ctx, "dir")
	wantCode(t, "open of a directory", err, fault.CodeNotAFile)
	_, err = b.WriteFile(ctx, "dir", []byte("x"), backend.WriteOptions{})
	wantCode(t, "write over a directory", err, fault.CodeNotAFile)
	_, err = b.ReadDir(ctx, "dir/f.txt", 0, 10)
	wantError(t, "listing of a file", err, fault.NotADirectory(b.Display("dir/f.txt")))
	_, err = b.ReadDir(ctx, "missing", 0, 10)
	wantCode(t, "listing of a missing directory", err, fault.CodeNotFound)
	_, err = b.WriteFile(ctx, "dir/f.txt/under", []byte("x"), backend.WriteOptions{})
	wantCode(t, "write below a file", err, fault.CodeNotADirectory)
	for _, p := range []string{"../outside", "dir/../../outside"} {
		_, err = b.Stat(ctx, p)
		wantCode(t, "stat of "+p, err, fault.CodeOutsideRoot)
		_, err = b.WriteFile(ctx, p, []byte("x"), backend.WriteOptions{})
		wantCode(t, "write to "+p, err, fault.CodeOutsideRoot)
	}
}

// readDirPages: entries in byte order of names, paged by offset and limit.
func readDirPages(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "d/b.txt", "bb", "d/a.txt", "a", "d/B", "", "d/sub/x", "x", "d/a-z", "")
	want := []string{"B", "a-z", "a.txt", "b.txt", "sub"}
	var got []string
	for off := 0; ; off += 2 {
		page, err := b.ReadDir(ctx, "d", off, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) > 2 {
			t.Fatalf("a page of limit 2 has %d entries", len(page.Entries))
		}
		for _, e := range page.Entries {
			got = append(got, e.Name)
			switch {
			case e.Name == "sub" && e.Type != backend.TypeDir:
				t.Errorf("sub is %v", e.Type)
			case e.Name == "b.txt" && (e.Type != backend.TypeFile || e.Size != 2):
				t.Errorf("b.txt is %+v", e)
			}
		}
		if len(page.Entries) == 0 {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("listing %q, want %q", got, want)
	}
}

// walkOrder: depth-first, names in byte order, the start not visited, each
// entry with its paths, type and content.
func walkOrder(t *testing.T, b Backend) {
	put(t, b, "w/b/2", "two", "w/b/1", "one", "w/a", "A", "w/c/d/e", "E", "w/B", "")
	var got []string
	err := b.Walk(context.Background(), "w", backend.WalkOptions{}, func(e backend.WalkEntry) error {
		got = append(got, e.Rel+":"+e.Type.String())
		if e.Path != b.Display("w/"+e.Rel) || e.Name != e.Rel[strings.LastIndex(e.Rel, "/")+1:] {
			t.Errorf("entry %q has path %q, name %q", e.Rel, e.Path, e.Name)
		}
		if e.Type != backend.TypeFile {
			return nil
		}
		r, err := e.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if want, _ := readAll(t, b, "w/"+e.Rel); string(data) != want || info.Size != int64(len(want)) {
			t.Errorf("%s: walk reads %q (size %d), want %q", e.Rel, data, info.Size, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"B:file", "a:file", "b:dir", "b/1:file", "b/2:file", "c:dir", "c/d:dir", "c/d/e:file"}
	if !slices.Equal(got, want) {
		t.Errorf("walk %q, want %q", got, want)
	}
}

// walkSteering: ErrSkipDir, ErrStopWalk, .git and Exclude.
func walkSteering(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "s/a/x", "", "s/b/y.log", "", "s/b/z", "", "s/.git/config", "", "s/c.log", "", "s/d/e/f", "")
	walk := func(opts backend.WalkOptions, visit func(backend.WalkEntry) error) []string {
		var got []string
		err := b.Walk(ctx, "s", opts, func(e backend.WalkEntry) error {
			got = append(got, e.Rel)
			return visit(e)
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := walk(backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Rel == "a" {
			return backend.ErrSkipDir
		}
		return nil
	})
	if want := []string{"a", "b", "b/y.log", "b/z", "c.log", "d", "d/e", "d/e/f"}; !slices.Equal(got, want) {
		t.Errorf("skipping a: %q, want %q", got, want)
	}
	got = walk(backend.WalkOptions{}, func(e backend.WalkEntry) error {
		if e.Rel == "b/y.log" {
			return backend.ErrStopWalk
		}
		return nil
	})
	if want := []string{"a", "a/x", "b", "b/y.log"}; !slices.Equal(got, want) {
		t.Errorf("stopping at b/y.log: %q, want %q", got, want)
	}
	got = walk(backend.WalkOptions{Exclude: []string{"*.log", "d/e"}}, func(backend.WalkEntry) error { return nil })
	if want := []string{"a", "a/x", "b", "b/z", "d"}; !slices.Equal(got, want) {
		t.Errorf("excluding *.log and d/e: %q, want %q", got, want)
	}
	// A glob that starts with **/ is matched from the root: the start as
	// the answers spell it (ExcludeBase), then the path below it, so that
	// **/s/*.log leaves out c.log at the start's top, as rg -g would.
	base := b.Display("s")
	got = walk(backend.WalkOptions{Exclude: []string{"**/s/*.log", "**/{s,x}/d/**"}, ExcludeBase: base}, func(backend.WalkEntry) error { return nil })
	if want := []string{"a", "a/x", "b", "b/y.log", "b/z", "d"}; !slices.Equal(got, want) {
		t.Errorf("excluding **/s/*.log and **/{s,x}/d/** from %s: %q, want %q", base, got, want)
	}
	got = walk(backend.WalkOptions{Exclude: []string{"**/s/*.log", "**/b/z"}}, func(backend.WalkEntry) error { return nil })
	if want := []string{"a", "a/x", "b", "b/y.log", "c.log", "d", "d/e", "d/e/f"}; !slices.Equal(got, want) {
		t.Errorf("excluding **/s/*.log and **/b/z with no ExcludeBase: %q, want %q", got, want)
	}
	sentinel := errors.New("stop here")
	err := b.Walk(ctx, "s", backend.WalkOptions{}, func(backend.WalkEntry) error { return sentinel })
	if !errors.Is(err, sentinel) {
		t.Errorf("a visit's error came back as %v", err)
	}
	err = b.Walk(ctx, "s/a/x", backend.WalkOptions{}, func(backend.WalkEntry) error { return nil })
	wantError(t, "walk of a file", err, fault.NotADirectory(b.Display("s/a/x")))
}

// walkFrom: a walk resumed From an entry visits the rest of the full
// walk's order from that entry on, and from where a gone one would be.
func walkFrom(t *testing.T, b Backend) {
	put(t, b, "w/b/2", "", "w/b/1", "", "w/a", "", "w/c/d/e", "", "w/c/d/f", "", "w/c/g", "", "w/B", "")
	walk := func(from string) []string {
		var got []string
		err := b.Walk(context.Background(), "w", backend.WalkOptions{From: from}, func(e backend.WalkEntry) error {
			got = append(got, e.Rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := walk("")
	for i, from := range all {
		if got := walk(from); !slices.Equal(got, all[i:]) {
			t.Errorf("from %s: %q, want %q", from, got, all[i:])
		}
	}
	for from, want := range map[string][]string{
		"b/0":   all[slices.Index(all, "b/1"):],
		"b/3":   all[slices.Index(all, "c"):],
		"bb/x":  all[slices.Index(all, "c"):],
		"c/d/z": all[slices.Index(all, "c/g"):],
		"z":     nil,
	} {
		if got := walk(from); !slices.Equal(got, want) {
			t.Errorf("from %s, which is gone: %q, want %q", from, got, want)
		}
	}
}

// writeSwap: IfVersion and IfAbsent are checked at the change, and a
// refused write changes nothing.
func writeSwap(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "f", "first\n")
	v1 := stat(t, b, "f").Version
	v2, err := b.WriteFile(ctx, "f", []byte("second\n"), backend.WriteOptions{IfVersion: v1})
	if err != nil {
		t.Fatalf("a write against the current version: %v", err)
	}
	_, err = b.WriteFile(ctx, "f", []byte("lost\n"), backend.WriteOptions{IfVersion: v1})
	wantCode(t, "a write against an old version", err, fault.CodeStale)
	if e := (*fault.Error)(nil); errors.As(err, &e) && e.Details["currentVersion"] != v2.Version {
		t.Errorf("STALE names the version %v, want %s", e.Details["currentVersion"], v2.Version)
	}
	_, err = b.WriteFile(ctx, "f", []byte("lost\n"), backend.WriteOptions{IfAbsent: true})
	wantCode(t, "an exclusive write over a file", err, fault.CodeExists)
	if got, _ := readAll(t, b, "f"); got != "second\n" {
		t.Errorf("refused writes left %q", got)
	}
	_, err = b.WriteFile(ctx, "new", []byte("x"), backend.WriteOptions{IfVersion: v1})
	wantCode(t, "a write against the version of a missing file", err, fault.CodeStale)
	if _, err := b.Stat(ctx, "new"); codeOf(err) != fault.CodeNotFound {
		t.Errorf("a refused write made the file: %v", err)
	}
	if _, err := b.WriteFile(ctx, "new", []byte("x"), backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Errorf("an exclusive write of a new file: %v", err)
	}
}

// remove: files, empty and full directories, missing paths.
func remove(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "r/f", "x", "r/full/a", "a", "r/full/sub/b", "b", "r/empty/x", "")
	if ok, err := b.Remove(ctx, "r/empty/x", backend.RemoveOptions{}); !ok || err != nil {
		t.Fatalf("remove of a file: %v %v", ok, err)
	}
	for _, p := range []string{"r/f", "r/empty"} {
		if ok, err := b.Remove(ctx, p, backend.RemoveOptions{}); !ok || err != nil {
			t.Errorf("remove of %s: %v %v", p, ok, err)
		}
		if _, err := b.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s after its removal: %v", p, err)
		}
	}
	if ok, err := b.Remove(ctx, "r/missing", backend.RemoveOptions{}); ok || err != nil {
		t.Errorf("remove of a missing path: %v %v, want false and no error", ok, err)
	}
	_, err := b.Remove(ctx, "r/full", backend.RemoveOptions{})
	wantCode(t, "remove of a full directory", err, fault.CodeNotEmpty)
	if got, _ := readAll(t, b, "r/full/sub/b"); got != "b" {
		t.Errorf("a refused removal lost r/full/sub/b: %q", got)
	}
	if ok, err := b.Remove(ctx, "r/full", backend.RemoveOptions{Recursive: true}); !ok || err != nil {
		t.Fatalf("recursive remove: %v %v", ok, err)
	}
	for _, p := range []string{"r/full", "r/full/sub/b"} {
		if _, err := b.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s after a recursive removal: %v", p, err)
		}
	}
	page, err := b.ReadDir(ctx, "r", 0, 10)
	if err != nil || len(page.Entries) != 0 {
		t.Errorf("r after the removals: %+v %v", page.Entries, err)
	}
}

// removeSwap: a removal against an old version, or of a missing path under
// IfVersion, is STALE and removes nothing.
func removeSwap(t *testing.T, b Backend) {
	ctx := context.Background()
	put(t, b, "f", "one")
	v1 := stat(t, b, "f").Version
	put(t, b, "f", "two")
	_, err := b.Remove(ctx, "f", backend.RemoveOptions{IfVersion: v1})
	wantCode(t, "remove against an old version", err, fault.CodeStale)
	if got, _ := readAll(t, b, "f"); !bytes.Equal([]byte(got), []byte("two")) {
		t.Errorf("a refused removal left %q", got)
	}
	if ok, err := b.Remove(ctx, "f", backend.RemoveOptions{IfVersion: stat(t, b, "f").Version}); !ok || err != nil {
		t.Errorf("remove against the current version: %v %v", ok, err)
	}
	_, err = b.Remove(ctx, "f", backend.RemoveOptions{IfVersion: v1})
	wantCode(t, "remove of a missing path under IfVersion", err, fault.CodeStale)
	_, err = b.Remove(ctx, "no/such/dir/f", backend.RemoveOptions{IfVersion: v1})
	wantCode(t, "remove below a missing directory under IfVersion", err, fault.CodeStale)
}

// transaction: on a Transactor, a commit applies every change, or none when
// one of them is refused.
func transaction(t *testing.T, b Backend) {
	tx, ok := b.(backend.Transactor)
	if _, has := backend.At(b, "t/a").(backend.Transactor); !ok || !has {
		t.Skip("the backend has no transactions")
	}
	ctx := context.Background()
	put(t, b, "t/a", "old a", "t/b", "old b", "t/gone", "x", "t/dir/keep", "k")
	va, vb := stat(t, b, "t/a").Version, stat(t, b, "t/b").Version
	unchanged := func(what string) {
		t.Helper()
		for p, want := range map[string]string{"t/a": "old a", "t/b": "old b", "t/gone": "x"} {
			if got, _ := readAll(t, b, p); got != want {
				t.Errorf("%s: %s is %q, want %q", what, p, got, want)
			}
		}
		if _, err := b.Stat(ctx, "t/new/c"); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s: t/new/c exists (%v)", what, err)
		}
	}
	for _, tc := range []struct {
		name string
		ops  []backend.Op
		code fault.Code
	}{
		{"a stale version", []backend.Op{
			{Path: "t/a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va}},
			{Path: "t/new/c", Data: []byte("c")},
			{Path: "t/b", Data: []byte("new b"), Write: backend.WriteOptions{IfVersion: va}},
		}, fault.CodeStale},
		{"a file twice", []backend.Op{
			{Path: "t/new/c", Data: []byte("c")},
			{Path: "t/a", Data: []byte("new a")},
			{Path: "t/./a", Data: []byte("again")},
		}, fault.CodeInvalidArgument},
		{"a directory removed", []backend.Op{
			{Path: "t/a", Data: []byte("new a")},
			{Path: "t/dir", Remove: true},
		}, fault.CodeNotAFile},
		{"an exclusive write over a file", []backend.Op{
			{Path: "t/new/c", Data: []byte("c")},
			{Path: "t/b", Data: []byte("new b"), Write: backend.WriteOptions{IfAbsent: true}},
		}, fault.CodeExists},
	} {
		_, err := tx.Commit(ctx, tc.ops)
		wantCode(t, tc.name, err, tc.code)
		unchanged(tc.name)
	}
	infos, err := tx.Commit(ctx, []backend.Op{
		{Path: "t/a", Data: []byte("new a"), Write: backend.WriteOptions{IfVersion: va}},
		{Path: "t/gone", Remove: true},
		{Path: "t/new/c", Data: []byte("c"), Write: backend.WriteOptions{IfAbsent: true}},
		{Path: "t/b", Data: []byte("new b"), Write: backend.WriteOptions{IfVersion: vb}},
		{Path: "t/never", Remove: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"t/a", "", "t/new/c", "t/b", ""} {
		if p == "" {
			continue
		}
		if s := stat(t, b, p); infos[i].Version != s.Version || infos[i].Size != s.Size {
			t.Errorf("commit returned %+v for %s, which is %+v", infos[i], p, s)
		}
	}
	for p, want := range map[string]string{"t/a": "new a", "t/b": "new b", "t/new/c": "c", "t/dir/keep": "k"} {
		if got, _ := readAll(t, b, p); got != want {
			t.Errorf("after the commit %s is %q, want %q", p, got, want)
		}
	}
	if _, err := b.Stat(ctx, "t/gone"); codeOf(err) != fault.CodeNotFound {
		t.Errorf("a removed file is still there: %v", err)
	}
	var names []string
	err = b.Walk(ctx, "t", backend.WalkOptions{ShowIgnored: true}, func(e backend.WalkEntry) error {
		names = append(names, e.Rel)
		return nil
	})
	if want := []string{"a", "b", "dir", "dir/keep", "new", "new/c"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("after the commits the tree is %q (%v), want %q: nothing staged may be left", names, err, want)
	}
}

// rename: on a Renamer, a file or a whole directory moves, and what the
// destination holds decides what is refused.
func rename(t *testing.T, b Backend) {
	rn, ok := b.(backend.Renamer)
	if _, has := backend.At(b, "m/f").(backend.Renamer); !ok || !has {
		t.Skip("the backend has no rename")
	}
	ctx := context.Background()
	put(t, b, "m/f", "file", "m/d/x", "x", "m/d/sub/y", "y", "m/other", "other", "m/full/z", "z")
	v := stat(t, b, "m/f").Version
	for _, tc := range []struct {
		name, from, to string
		opts           backend.WriteOptions
		code           fault.Code
	}{
		{"an exclusive move over a file", "m/f", "m/other", backend.WriteOptions{IfAbsent: true}, fault.CodeExists},
		{"a directory into itself", "m/d", "m/d/sub/in", backend.WriteOptions{}, fault.CodeInvalidArgument},
		{"a missing source", "m/none", "m/new", backend.WriteOptions{}, fault.CodeNotFound},
		{"a stale source", "m/f", "m/new", backend.WriteOptions{IfVersion: v + "x"}, fault.CodeStale},
		{"a file over a directory", "m/f", "m/full", backend.WriteOptions{}, fault.CodeNotAFile},
	} {
		_, err := rn.Rename(ctx, tc.from, tc.to, tc.opts)
		wantCode(t, tc.name, err, tc.code)
	}
	// EXISTS, whose hint does not ask for the overwrite just given.
	_, err := rn.Rename(ctx, "m/d", "m/full", backend.WriteOptions{})
	wantError(t, "a directory over a full one", err, fault.FullDestination(b.Display("m/full")))
	if _, err := rn.Rename(ctx, "m/f", "m/new/deep/f2", backend.WriteOptions{IfAbsent: true, IfVersion: v}); err != nil {
		t.Fatalf("a move to new parents: %v", err)
	}
	if _, err := rn.Rename(ctx, "m/new/deep/f2", "m/other", backend.WriteOptions{}); err != nil {
		t.Fatalf("a move over a file: %v", err)
	}
	if _, err := rn.Rename(ctx, "m/d", "m/e", backend.WriteOptions{IfAbsent: true}); err != nil {
		t.Fatalf("a directory's move: %v", err)
	}
	for p, want := range map[string]string{"m/other": "file", "m/e/x": "x", "m/e/sub/y": "y"} {
		if got, _ := readAll(t, b, p); got != want {
			t.Errorf("after the moves %s is %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"m/f", "m/d", "m/d/x", "m/new/deep/f2"} {
		if _, err := b.Stat(ctx, p); codeOf(err) != fault.CodeNotFound {
			t.Errorf("%s is still there after its move: %v", p, err)
		}
	}
}
