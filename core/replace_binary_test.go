package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
)

// The files replace skips as binary but grep searches as text (not
// UTF-8, a NUL past grep's first 64 KiB, a byte-order mark before bytes
// that are not UTF-8) and that hold a match are named, with their count:
// a replace answered binaryFilesSkipped alone, with success, and a caller
// renaming a symbol took itself for done while grep showed it in them. A
// binary file grep skips too, or one without a match, is not named.
func TestReplaceNamesSkippedFilesWithMatches(t *testing.T) {
	ctx := context.Background()
	late := strings.Repeat("line\n", 70<<10/5) + "x\x00y\n"
	files := map[string]string{
		"latin1.txt":     "caf\xe9 foo\n",
		"nul_late.txt":   "foo\n" + late,
		"bom_bad.txt":    "\ufefffoo \xff\xfe bad\n",
		"utf16_bad.txt":  "\xff\xfef\x00o\x00o\x00\x00\xd8\n\x00", // an unpaired surrogate
		"large.log":      "foo caf\xe9\n" + strings.Repeat("caf\xe9 line\n", (MaxEditBytes+100)/10),
		"real.bin":       "foo\x00bin\n",
		"nomatch.txt":    "caf\xe9 bar\n",
		"late_nomatch":   late,
		"ok.txt":         "foo\n",
		"sub/latin2.txt": "x foo \xe9\n",
	}
	res, err := (&Tools{FS: memfs.New(files)}).Replace(ctx, ReplaceRequest{Query: "foo", Replacement: str("bar"), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, f := range res.BinaryMatches {
		named = append(named, f.Path)
	}
	want := "bom_bad.txt large.log latin1.txt nul_late.txt sub/latin2.txt utf16_bad.txt"
	if got := strings.Join(slices.Sorted(slices.Values(named)), " "); got != want || res.BinaryWithMatches != 6 || res.BinarySkipped != 9 || res.Replacements != 1 {
		t.Errorf("skipped %d, with matches %d: %s; want 9, 6: %s (%d replacements)", res.BinarySkipped, res.BinaryWithMatches, got, want, res.Replacements)
	}
	if res.Hint == "" {
		t.Errorf("no hint of what to do with them")
	}
}

// The list of skipped files with a match is bounded; the count is not.
func TestReplaceBoundsSkippedFilesWithMatches(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[strings.Repeat("d/", i%3)+"f"+strings.Repeat("x", i)+".txt"] = "foo \xe9\n"
	}
	res, err := (&Tools{FS: memfs.New(files)}).Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: str("bar")})
	if err != nil || res.BinaryWithMatches != 50 || len(res.BinaryMatches) != maxBinaryMatchesListed {
		t.Fatalf("%+v, %v; want 50 counted, %d listed", res, err, maxBinaryMatchesListed)
	}
}

// Named within the bound: the list is cut, not the result refused; with
// a file to change and without.
func TestReplaceFitsSkippedFilesWithMatches(t *testing.T) {
	for _, withText := range []bool{true, false} {
		files := map[string]string{}
		if withText {
			files["ok.txt"] = "foo\n"
		}
		for i := range 20 {
			files[strings.Repeat("x", 200)+"/"+strings.Repeat("y", i+1)+".txt"] = "foo \xe9\n"
		}
		res, err := (&Tools{FS: memfs.New(files), MaxBytes: 2000}).Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: str("bar"), DryRun: true})
		if err != nil || res.BinaryWithMatches != 20 || len(res.BinaryMatches) == 0 || len(res.BinaryMatches) >= 20 || !res.Truncated || jsonSize(res) > 2000 {
			t.Fatalf("%+v, %v; want 20 counted, fewer listed, within 2000 bytes", res, err)
		}
	}
}

// TOO_LARGE names every file over the limit that holds a match, found in
// the one search, up to maxLargeListed of them, with their count: it
// named the first alone, and a caller excluding them one by one met the
// next on each retry. A large file without a match is none of them.
func TestReplaceTooLargeNamesThemAll(t *testing.T) {
	big := "foo\n" + strings.Repeat("x", MaxEditBytes) + "\n"
	for _, n := range []int{1, 3, maxLargeListed + 1} {
		files := map[string]string{"ok.txt": "foo\n", "large_nomatch.txt": strings.Repeat("y\n", MaxEditBytes)}
		for i := range n {
			files[fmt.Sprintf("d%02d/big.txt", i)] = big
		}
		m := memfs.New(files)
		_, err := (&Tools{FS: m}).Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: str("bar")})
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeTooLarge {
			t.Fatalf("%d large files: %v, want TOO_LARGE", n, err)
		}
		paths, _ := e.Details["paths"].([]string)
		if e.Details["count"] != n || len(paths) != min(n, maxLargeListed) || len(paths) > 0 && paths[0] != "d00/big.txt" || e.Path != "d00/big.txt" {
			t.Errorf("%d large files: count %v, paths %v (path %s)", n, e.Details["count"], paths, e.Path)
		}
		if n > 1 && (len(paths) < 2 || paths[1] != "d01/big.txt") {
			t.Errorf("%d large files: paths %v, not in order", n, paths)
		}
		if fileText(m, "ok.txt") != "foo\n" {
			t.Errorf("a refused replace changed ok.txt")
		}
	}
}
