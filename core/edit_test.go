package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/allocs"
)

func editTools(files map[string]string) (*Tools, *lockedFS) {
	m := newLockedFS(files)
	return &Tools{FS: m, LockTimeout: time.Second}, m
}

func wantCode(t *testing.T, err error, code fault.Code) *fault.Error {
	t.Helper()
	var e *fault.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err %v, want %s", err, code)
	}
	return e
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestEditWritesAndReports(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\nb\nc\nd\ne\nf\ng\nh\n"})
	before := versionOf(m, "f")
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("g", "G")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fileText(m.FS, "f"); got != "a\nb\nc\nd\ne\nf\nG\nh\n" {
		t.Fatalf("content %q", got)
	}
	wantDiff := "--- f\n+++ f\n@@ -4,5 +4,5 @@\n d\n e\n f\n-g\n+G\n h\n"
	if res.Diff != wantDiff {
		t.Errorf("diff\n%s\nwant\n%s", res.Diff, wantDiff)
	}
	if res.EditsApplied != 1 || res.FirstChangedLine != 7 || res.Version != versionOf(m, "f") || res.Version == before || res.Sha256 != sum(fileText(m.FS, "f")) || res.DryRun || res.NoChange {
		t.Errorf("result %+v", res)
	}
}

func TestEditSingleTopLevel(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "x x x\n"})
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", OldText: str("x"), NewText: str("y"), ReplaceAll: true})
	if err != nil || fileText(m.FS, "f") != "y y y\n" {
		t.Fatalf("%v, %q", err, fileText(m.FS, "f"))
	}
}

// TestEditEmptyTopLevelBesideEdits: a client that fills every field of the
// schema sends oldText and newText "" beside its edits; "" counts as left
// out, as for any string field (it was "give either edits or a single
// oldText/newText").
func TestEditEmptyTopLevelBesideEdits(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\nb\n"})
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", OldText: str(""), NewText: str(""), Edits: []EditOp{op("b", "B")}})
	if err != nil || fileText(m.FS, "f") != "a\nB\n" {
		t.Fatalf("%v, %q", err, fileText(m.FS, "f"))
	}
	// Alone, they are still no edit; and newText "" of a real edit deletes.
	_, err = tl.Edit(context.Background(), EditRequest{Path: "f", OldText: str(""), NewText: str("")})
	wantCode(t, err, fault.CodeInvalidArgument)
	_, err = tl.Edit(context.Background(), EditRequest{Path: "f", OldText: str("B\n"), NewText: str("")})
	if err != nil || fileText(m.FS, "f") != "a\n" {
		t.Fatalf("a deletion: %v, %q", err, fileText(m.FS, "f"))
	}
}

func TestEditDryRunWritesNothing(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\n"})
	before := versionOf(m, "f")
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Stats().Writes != 0 || fileText(m.FS, "f") != "a\n" {
		t.Fatalf("dry run wrote: %q", fileText(m.FS, "f"))
	}
	if !res.DryRun || !strings.Contains(res.Diff, "-a\n+b\n") || res.Version != before || versionOf(m, "f") != before || res.Sha256 != sum("a\n") {
		t.Errorf("result %+v", res)
	}
}

func TestEditAlreadyAppliedWritesNothing(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "beta 2\n"})
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("beta 1", "beta 2")}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Stats().Writes != 0 || !res.NoChange || res.EditsApplied != 0 || !res.Edits[0].AlreadyApplied || res.Diff != "" {
		t.Fatalf("result %+v, writes %d", res, m.Stats().Writes)
	}
}

func TestEditAllOrNothing(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\nb\n"})
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a", "A"), op("zz", "Z")}})
	e := wantCode(t, err, fault.CodeNoMatch)
	if e.Path != "f" || e.Details["edit"] != 1 || !strings.Contains(e.Message, "edit 1") {
		t.Errorf("error %+v", e)
	}
	if m.Stats().Writes != 0 || fileText(m.FS, "f") != "a\nb\n" {
		t.Fatalf("a failed batch changed the file: %q", fileText(m.FS, "f"))
	}
}

func TestEditPreconditions(t *testing.T) {
	ctx := context.Background()
	tl, m := editTools(map[string]string{"f": "a\n"})
	v1 := versionOf(m, "f")
	e := wantCode(t, func() error {
		_, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}, Precondition: Precondition{ExpectedVersion: "v0"}})
		return err
	}(), fault.CodeStale)
	if e.Details["currentVersion"] != v1 {
		t.Errorf("STALE without the current version: %+v", e)
	}
	_, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}, Precondition: Precondition{ExpectedSha256: sum("other")}})
	wantCode(t, err, fault.CodeStale)
	if m.Stats().Writes != 0 {
		t.Fatal("a stale edit wrote")
	}
	res, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}, Precondition: Precondition{ExpectedVersion: v1, ExpectedSha256: sum("a\n")}})
	if err != nil || fileText(m.FS, "f") != "b\n" {
		t.Fatalf("%v, %q", err, fileText(m.FS, "f"))
	}
	// The result's version and sha256 chain into the next edit.
	if _, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("b", "c")}, Precondition: Precondition{ExpectedVersion: res.Version, ExpectedSha256: res.Sha256}}); err != nil {
		t.Fatal(err)
	}
	_, err = tl.Edit(ctx, EditRequest{Path: "gone", Edits: []EditOp{op("a", "b")}, Precondition: Precondition{ExpectedVersion: v1}})
	wantCode(t, err, fault.CodeStale)
	// A sum in upper case is the file's: it was STALE, "the file changed
	// since it was read". One that is no sum is INVALID_ARGUMENT.
	if _, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("c", "d")}, Precondition: Precondition{ExpectedSha256: strings.ToUpper(sum("c\n"))}}); err != nil {
		t.Errorf("an upper-case sha256: %v", err)
	}
	for _, bad := range []string{"abc", sum("d\n")[:63] + "g"} {
		_, err = tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("d", "e")}, Precondition: Precondition{ExpectedSha256: bad}})
		wantCode(t, err, fault.CodeInvalidArgument)
	}
}

func TestEditRefusals(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("x", MaxEditBytes+1)
	tl, m := editTools(map[string]string{"bin": "a\x00b", "latin1": "caf\xe9", "big": big, "f": "a\n"})
	for _, tc := range []struct {
		req  EditRequest
		code fault.Code
	}{
		{EditRequest{Path: "bin", Edits: []EditOp{op("a", "b")}}, fault.CodeNotText},
		{EditRequest{Path: "latin1", Edits: []EditOp{op("caf", "b")}}, fault.CodeNotText},
		{EditRequest{Path: "big", Edits: []EditOp{op("x", "y")}}, fault.CodeTooLarge},
		{EditRequest{Path: "nope", Edits: []EditOp{op("a", "b")}}, fault.CodeNotFound},
		{EditRequest{Path: "", Edits: []EditOp{op("a", "b")}}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f"}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", Edits: []EditOp{op("", "b")}}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", Edits: []EditOp{{OldText: "a"}}}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", Edits: []EditOp{op("a", "a")}}, fault.CodeInvalidArgument},
		// A NUL made the file binary: edit refused it after, grep
		// skipped it.
		{EditRequest{Path: "f", Edits: []EditOp{op("a", "a\x00b")}}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", OldText: str("a")}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", OldText: str("a"), NewText: str("b"), Edits: []EditOp{op("a", "b")}}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}, ReplaceAll: true}, fault.CodeInvalidArgument},
		{EditRequest{Path: "f", Edits: make([]EditOp, MaxEdits+1)}, fault.CodeInvalidArgument},
	} {
		_, err := tl.Edit(ctx, tc.req)
		wantCode(t, err, tc.code)
	}
	ro := &Tools{FS: m, ReadOnly: true}
	_, err := ro.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}})
	wantCode(t, err, fault.CodeReadOnly)
	if m.Stats().Writes != 0 {
		t.Fatal("a refused edit wrote")
	}
}

func TestEditWriteErrorPropagates(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\n"})
	m.failWrite = fault.Errorf(fault.CodeNoSpace, "no space left.")
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}})
	wantCode(t, err, fault.CodeNoSpace)
}

func TestEditLockTimeout(t *testing.T) {
	tl, m := editTools(map[string]string{"f": "a\n"})
	tl.LockTimeout = time.Millisecond
	m.lock <- struct{}{} // another holder
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{op("a", "b")}})
	wantCode(t, err, fault.CodeLockTimeout)
}

// TestEditRoundTrips edits files of every shape and back, byte for byte, and
// checks that only the region changed.
func TestEditRoundTrips(t *testing.T) {
	files := map[string]string{
		"crlf":       "one\r\ntwo\r\nthree\r\n",
		"mixed":      "one\r\ntwo\nthree\r\nfour\n",
		"bom":        "\xEF\xBB\xBFone\ntwo\nthree\n",
		"bom crlf":   "\xEF\xBB\xBFone\r\ntwo\r\nthree",
		"no newline": "one\ntwo\nthree",
		"tabs":       "one\n\ttwo\t\n\t\tthree\n",
		"cr only":    "one\rtwo\rthree\r",
		"unicode":    "one \u201ctwo\u201d\u00a0three\n",
	}
	ctx := context.Background()
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			tl, m := editTools(map[string]string{"f": content})
			res, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("two", "2\n2")}})
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(content, "two")
			after := fileText(m.FS, "f")
			eol := "\n"
			if strings.HasPrefix(content[i+3:], "\r\n") {
				eol = "\r\n"
			}
			if want := content[:i] + "2" + eol + "2" + content[i+3:]; after != want {
				t.Fatalf("after edit %q, want %q", after, want)
			}
			if res.Edits[0].Rung != editmatch.RungExact {
				t.Errorf("rung %s", res.Edits[0].Rung)
			}
			if _, err := tl.Edit(ctx, EditRequest{Path: "f", Edits: []EditOp{op("2\n2", "two")}}); err != nil {
				t.Fatal(err)
			}
			if got := fileText(m.FS, "f"); got != content {
				t.Fatalf("round trip %q, want %q", got, content)
			}
		})
	}
}

func TestEditDiffBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("line \"quoted\" " + itoa(i) + "\n")
	}
	tl, m := editTools(map[string]string{"f": b.String()})
	tl.MaxBytes = 4096
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "line", NewText: str("LINE"), ReplaceAll: true}}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	if !res.Truncated || len(out) > 4096 || !strings.Contains(res.Diff, "... diff truncated: ") {
		t.Fatalf("truncated=%v, %d bytes, diff tail %q", res.Truncated, len(out), res.Diff[max(0, len(res.Diff)-80):])
	}
	if strings.Count(fileText(m.FS, "f"), "LINE") != 5000 || res.Edits[0].Replacements != 5000 || len(res.Edits[0].Lines) != maxOutcomeLines {
		t.Fatalf("the truncated edit was not applied in full: %+v", res.Edits)
	}
}

func TestEditAliasesDecode(t *testing.T) {
	var req EditRequest
	err := DecodeJSON([]byte(`{"file_path":"f","old_string":"a","new_string":"","replace_all":true}`), &req)
	if err != nil || req.Path != "f" || *req.OldText != "a" || *req.NewText != "" || !req.ReplaceAll {
		t.Fatalf("%v %+v", err, req)
	}
	req = EditRequest{}
	err = DecodeJSON([]byte(`{"path":"f","oldString":"a","newString":"b"}`), &req)
	if err != nil || *req.OldText != "a" || *req.NewText != "b" {
		t.Fatalf("%v %+v", err, req)
	}
	req = EditRequest{}
	err = DecodeJSON([]byte(`{"path":"f","edits":[{"old_string":"a","new_string":"b","replace_all":true}],"expectedVersion":"v1"}`), &req)
	if err != nil || req.Edits[0].OldText != "a" || *req.Edits[0].NewText != "b" || !req.Edits[0].ReplaceAll || req.ExpectedVersion != "v1" {
		t.Fatalf("%v %+v", err, req)
	}
	err = DecodeJSON([]byte(`{"path":"f","edits":[{"oldTxt":"a"}]}`), &req)
	if e := wantCode(t, err, fault.CodeInvalidArgument); !strings.Contains(e.Message, "oldText") {
		t.Errorf("unknown field message %q names no closest field", e.Message)
	}
}

// TestEditBatchLimit: a batch of MaxEdits edits applies; one more is
// refused before the file is read, naming the alternatives.
func TestEditBatchLimit(t *testing.T) {
	var b strings.Builder
	edits := make([]EditOp, MaxEdits+1)
	for i := range edits {
		fmt.Fprintf(&b, "line %d\n", i)
		edits[i] = op(fmt.Sprintf("line %d\n", i), fmt.Sprintf("LINE %d\n", i))
	}
	tl, m := editTools(map[string]string{"f": b.String()})
	_, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: edits})
	e := wantCode(t, err, fault.CodeInvalidArgument)
	if e.Details["count"] != MaxEdits+1 || e.Details["max"] != MaxEdits || !strings.Contains(e.Hint, "write") || m.Stats().Writes != 0 {
		t.Fatalf("error %+v, writes %d", e, m.Stats().Writes)
	}
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: edits[:MaxEdits]})
	if err != nil || res.EditsApplied != MaxEdits || strings.Count(fileText(m.FS, "f"), "LINE") != MaxEdits {
		t.Fatalf("%d edits: %v", MaxEdits, err)
	}
}

// TestEditResultFitsBound: at any bound, the result of a batch fits it,
// the outcomes and the diff cut as they must, while the file is edited in
// full; a path longer than the bound refuses the edit unmade.
func TestEditResultFitsBound(t *testing.T) {
	var b strings.Builder
	var edits []EditOp
	for i := range MaxEdits {
		fmt.Fprintf(&b, "line %d \"quoted\"\n", i)
		old := fmt.Sprintf("line %d \"quoted\"\n", i)
		if i%10 == 0 { // the unicode rung
			old = fmt.Sprintf("line %d \u201cquoted\u201d\n", i)
		}
		edits = append(edits, op(old, fmt.Sprintf("LINE %d\n", i)))
	}
	src := b.String()
	for mb := 520; mb <= 20000; mb = mb*5/4 + 7 {
		tl, m := editTools(map[string]string{"f": src})
		tl.MaxBytes = mb
		res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: edits})
		if err != nil {
			t.Fatalf("max %d: %v", mb, err)
		}
		if n := jsonSize(res); n > mb {
			t.Fatalf("max %d: %d bytes", mb, n)
		}
		if strings.Count(fileText(m.FS, "f"), "LINE") != MaxEdits || res.EditsApplied != MaxEdits {
			t.Fatalf("max %d: the edit was not made in full", mb)
		}
		if !res.Truncated || len(res.Edits)+res.EditsOmitted != MaxEdits || res.EditsOmitted == 0 ||
			res.Rungs[editmatch.RungExact] != 900 || res.Rungs[editmatch.RungUnicode] != 100 || !strings.Contains(res.Diff, "... diff truncated: ") {
			t.Fatalf("max %d: truncated %v, %d edits + %d omitted, rungs %v", mb, res.Truncated, len(res.Edits), res.EditsOmitted, res.Rungs)
		}
		for k, o := range res.Edits {
			if o.Lines[0] != k+1 {
				t.Fatalf("max %d: outcome %d is of line %d", mb, k, o.Lines[0])
			}
		}
	}
	// Outcomes that fit in their share go whole, without the summary; the
	// diff takes the rest of the room.
	tl, _ := editTools(map[string]string{"f": src})
	tl.MaxBytes = 4096
	few := []EditOp{{OldText: "line", NewText: str("LINE"), ReplaceAll: true}, {OldText: "quoted", NewText: str("q"), ReplaceAll: true}}
	res, err := tl.Edit(context.Background(), EditRequest{Path: "f", Edits: few, DryRun: true})
	if err != nil || jsonSize(res) > 4096 || len(res.Edits) != 2 || res.EditsOmitted != 0 || res.Rungs != nil || !res.Truncated || jsonSize(res) < 4000 {
		t.Fatalf("4096: %v, %d bytes, %d edits, omitted %d, rungs %v", err, jsonSize(res), len(res.Edits), res.EditsOmitted, res.Rungs)
	}

	long := strings.Repeat("d/", 300) + "f"
	tl, m := editTools(map[string]string{long: "a\n"})
	tl.MaxBytes = 600
	_, err = tl.Edit(context.Background(), EditRequest{Path: long, Edits: []EditOp{op("a", "b")}})
	e := wantCode(t, err, fault.CodeTooLarge)
	if needed, _ := e.Details["needed"].(int); needed <= 600 || e.Details["maxBytes"] != 600 || m.Stats().Writes != 0 || !strings.Contains(e.Hint, "--max-bytes to "+itoa(needed)) {
		t.Fatalf("a long path: %+v, writes %d", e, m.Stats().Writes)
	}
	tl.MaxBytes = e.Details["needed"].(int)
	res, err = tl.Edit(context.Background(), EditRequest{Path: long, Edits: []EditOp{op("a", "b")}})
	if err != nil || jsonSize(res) > tl.MaxBytes || fileText(m.FS, long) != "b\n" {
		t.Fatalf("at the bound named: %v", err)
	}
}

// A file whose byte-order mark names an encoding its bytes break (an
// unpaired surrogate after a UTF-16 mark, Latin-1 after a UTF-8 one) is
// NOT_TEXT naming the byte and its line, for edit, replace and
// apply-patch alike: the message said the file was not UTF-16 with its
// mark, which it is, and the hint sent the caller to read --encoding.
func TestEditNamesTheByteItsMarkDoesNotKeep(t *testing.T) {
	ctx := context.Background()
	u16 := "\xFF\xFE" + string(utf16Bytes("a\nb\n", false)) + "\x00\xD8" + string(utf16Bytes("c\n", false))
	tl, _ := editTools(map[string]string{"u16": u16, "bom8": "\xEF\xBB\xBFa\ncaf\xE9\n"})
	for _, tc := range []struct {
		path, name string
		at, line   int
	}{{"u16", "utf-16le", 10, 3}, {"bom8", "utf-8", 8, 2}} {
		for tool, run := range map[string]func() error{
			"edit": func() error {
				_, err := tl.Edit(ctx, EditRequest{Path: tc.path, Edits: []EditOp{op("a", "b")}})
				return err
			},
			"replace": func() error {
				_, err := tl.Replace(ctx, ReplaceRequest{Query: "a", Replacement: str("b"), Path: tc.path})
				return err
			},
			"apply-patch": func() error {
				_, err := tl.ApplyPatch(ctx, ApplyPatchRequest{Patch: "*** Begin Patch\n*** Update File: " + tc.path + "\n@@\n-a\n+b\n*** End Patch\n"})
				return err
			},
		} {
			err := run()
			e := fault.AsError(err)
			want := fmt.Sprintf("byte %d (line %d) is not valid %s", tc.at, tc.line, tc.name)
			if codeOf(err) != fault.CodeNotText || !strings.Contains(e.Message, want) || e.Details["offset"] != tc.at || e.Details["line"] != tc.line {
				t.Errorf("%s %s: %v %v, want NOT_TEXT with %q", tool, tc.path, err, e.Details, want)
			}
		}
	}
}

// A replaceAll whose result could never fit is refused before that
// result is built: a 20 MB newText over 29,527 matches (590 GB) took 24
// GB before the kernel killed agentfs, where TOO_LARGE belongs.
func TestEditRefusesAnOversizedResultUnbuilt(t *testing.T) {
	tl, m := editTools(map[string]string{"f": strings.Repeat("a\n", 8000)})
	newText := strings.Repeat("b", 32<<10) // 8000 × 32 KiB: 256 MiB
	var err error
	n := allocs.Bytes(func() {
		_, err = tl.Edit(context.Background(), EditRequest{Path: "f", Edits: []EditOp{{OldText: "a", NewText: &newText, ReplaceAll: true}}})
	})
	e := wantCode(t, err, fault.CodeTooLarge)
	if size, _ := e.Details["size"].(int); size <= MaxEditBytes || e.Details["limit"] != MaxEditBytes || e.Path != "f" {
		t.Fatalf("%+v", e)
	}
	if n > 64<<20 || m.Stats().Writes != 0 {
		t.Fatalf("allocated %d MiB to refuse it, writes %d", n>>20, m.Stats().Writes)
	}
}
