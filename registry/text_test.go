package registry

import (
	"context"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/memfs"
)

// listings are ls, find, grep and grep --mode files of a workspace of one
// file, name, holding word.
func listings(t *testing.T, name, word string) (*core.LsResult, *core.FindResult, *core.GrepResult, *core.GrepResult) {
	t.Helper()
	tl := &core.Tools{FS: memfs.New(map[string]string{name: word + "\n"})}
	ctx := context.Background()
	ls, err := tl.Ls(ctx, core.LsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	find, err := tl.Find(ctx, core.FindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	grep, err := tl.Grep(ctx, core.GrepRequest{Query: word})
	if err != nil {
		t.Fatal(err)
	}
	files, err := tl.Grep(ctx, core.GrepRequest{Query: word, Mode: core.ModeFiles})
	if err != nil {
		t.Fatal(err)
	}
	return ls, find, grep, files
}

// A name that is not UTF-8 is printed as its bytes, as fd, rg and ls print
// it: with U+FFFD in their place, a name named a file that does not exist,
// and n\xfe and n\xff printed alike.
func TestTextNamesAreTheirBytes(t *testing.T) {
	name := "n\xff.txt"
	ls, find, grep, files := listings(t, name, "foo")
	grepLines, _ := grepText(grep, Palette{})
	grepFiles, _ := grepText(files, Palette{})
	for _, tc := range []struct{ what, got, want string }{
		{"ls", lsText(ls, Palette{}), name + "\n"},
		{"find", findText(find, Palette{}), name + "\n"},
		{"grep", grepLines, name + ":1:foo\n"},
		{"grep --mode files", grepFiles, name + "\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}

// On a terminal, a control character of a walked name or link target is
// shown escaped, as ls quotes it: a file named with an escape sequence set
// the window's title and cleared the screen. A pipe gets the bytes.
func TestTextNamesOnATerminal(t *testing.T) {
	name := "x\x1b]0;PWNED\a\x1b[2J\u0085\x9b.txt"
	ls, find, grep, _ := listings(t, name, "hit")
	shown := `x\x1b]0;PWNED\x07\x1b[2J\u0085\x9b.txt`
	term := Palette{Terminal: true}
	grepTerm, _ := grepText(grep, term)
	grepPipe, _ := grepText(grep, Palette{})
	for _, tc := range []struct{ what, got, want string }{
		{"ls", lsText(ls, term), shown + "\n"},
		{"find", findText(find, term), shown + "\n"},
		{"grep", grepTerm, shown + ":1:hit\n"},
		{"grep to a pipe", grepPipe, name + ":1:hit\n"},
		{"find to a pipe", findText(find, Palette{}), name + "\n"},
		// The paths a change names, which a caller took from a listing.
		{"write", writeText(&core.WriteResult{Path: name, Created: true, BytesWritten: 4}, term), shown + ": created, 4 bytes\n"},
		{"rm", rmText(&core.RmResult{Path: name, Deleted: true}, term), shown + ": removed\n"},
		{"mv", mvText(&core.MvResult{From: name, Path: "a.txt"}, term), shown + " -> a.txt\n"},
		{"edit", editText(&core.EditResult{Path: name, NoChange: true}, term), shown + ": unchanged (every edit was already applied)\n"},
		{"apply-patch", applyPatchText(&core.ApplyPatchResult{Files: []core.PatchedFile{{Path: name, Action: core.ActionAdd}}}, term), shown + ": add\n"},
		{"rm to a pipe", rmText(&core.RmResult{Path: name, Deleted: true}, Palette{}), name + ": removed\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}

// replace's text says what its JSON says beside the diffs: each changed
// file whose diff the bound left out, by path and count; the files left
// out of the list; the files skipped, whose matches stay. It printed the
// diffs and the totals alone, and a replace that left matches passed for
// a whole one.
func TestReplaceTextNotes(t *testing.T) {
	diff := "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-foo\n+bar\n"
	for _, tc := range []struct {
		name               string
		res                core.ReplaceResult
		wantData, wantNote string
	}{
		{"whole", core.ReplaceResult{Replacements: 1, FilesChanged: 1, Files: []core.ReplacedFile{{Path: "a.txt", Count: 1, Diff: diff}}},
			diff + "1 replacement(s) in 1 file(s)\n", ""},
		{"a diff left out", core.ReplaceResult{Replacements: 3, FilesChanged: 2, Truncated: true,
			Files: []core.ReplacedFile{{Path: "a.txt", Count: 1, Diff: diff}, {Path: "b\xff.txt", PathBase64: "Yv8udHh0", Count: 2}}},
			diff + "b\xff.txt: 2 replacement(s)\n3 replacement(s) in 2 file(s)\n", ""},
		{"a diff cut before its header", core.ReplaceResult{Replacements: 3, FilesChanged: 2, Truncated: true,
			Files: []core.ReplacedFile{{Path: "a.txt", Count: 1, Diff: diff}, {Path: "b.txt", Count: 2, Diff: "... diff truncated: 9 more lines\n"}}},
			diff + "b.txt: 2 replacement(s)\n3 replacement(s) in 2 file(s)\n", ""},
		{"files omitted", core.ReplaceResult{Replacements: 3, FilesChanged: 3, Truncated: true, FilesOmitted: 2, DryRun: true,
			Files: []core.ReplacedFile{{Path: "a.txt", Count: 1}}},
			"a.txt: 1 replacement(s)\n3 replacement(s) in 3 file(s): dry run, nothing written\n",
			"... 2 changed file(s) not listed: a larger --max-bytes lists them\n"},
		{"skipped", core.ReplaceResult{Replacements: 1, FilesChanged: 1, BinarySkipped: 2, Unreadable: 1,
			Files: []core.ReplacedFile{{Path: "a.txt", Count: 1, Diff: diff}}},
			diff + "1 replacement(s) in 1 file(s)\n",
			"... 2 binary file(s) skipped\n... 1 unreadable file or directory skipped\n"},
		{"nothing found, much skipped", core.ReplaceResult{Unreadable: 3},
			"0 replacement(s) in 0 file(s)\n", "... 3 unreadable files or directories skipped\n"},
	} {
		data, note := replaceText(&tc.res, Palette{})
		if data != tc.wantData || note != tc.wantNote {
			t.Errorf("%s:\n%q, %q\nwant\n%q, %q", tc.name, data, note, tc.wantData, tc.wantNote)
		}
	}
}

// find's note of what it could not read names entries, as ls's does: on
// a store the entry skipped is a file's key, which it called a directory.
func TestFindUnreadableNote(t *testing.T) {
	for n, want := range map[int]string{0: "", 1: "... 1 unreadable entry skipped\n", 2: "... 2 unreadable entries skipped\n"} {
		if _, got := findNotes(&core.FindResult{Unreadable: n}, Palette{}); got != want {
			t.Errorf("%d unreadable: %q, want %q", n, got, want)
		}
	}
}

// write --append says it appended, and how much: "replaced, 6 bytes" read
// as a file that now holds those 6 bytes alone.
func TestWriteTextAppend(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  core.WriteResult
		want string
	}{
		{"appended", core.WriteResult{Path: "log", BytesWritten: 6, Appended: true}, "log: appended, 6 bytes\n"},
		{"nothing to append", core.WriteResult{Path: "log", NoChange: true, Appended: true}, "log: unchanged (nothing to append)\n"},
		{"created by an append", core.WriteResult{Path: "log", BytesWritten: 2, Created: true, Appended: true}, "log: created, 2 bytes\n"},
		{"replaced", core.WriteResult{Path: "log", BytesWritten: 6}, "log: replaced, 6 bytes\n"},
		{"unchanged", core.WriteResult{Path: "log", NoChange: true}, "log: unchanged (already this content)\n"},
	} {
		if got := writeText(&tc.res, Palette{}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
