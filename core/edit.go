package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// MaxEditBytes is the largest file edit reads.
const MaxEditBytes = 2 << 20

// MaxEdits is the most edits in one batch: a batch is planned in a pass
// over the file and a lookup per edit, and its lock held meanwhile.
const MaxEdits = 1000

// EditOp is one replacement of a batch.
type EditOp struct {
	OldText    string  `json:"oldText" alias:"old_string,oldString" required:"true" help:"text to replace, as the file spells it; it must match one place of the original content unless replaceAll"`
	NewText    *string `json:"newText" alias:"new_string,newString" required:"true" help:"replacement text; \"\" deletes oldText"`
	ReplaceAll bool    `json:"replaceAll,omitempty" alias:"replace_all" help:"replace every match instead of requiring exactly one"`
}

// EditRequest replaces text in one file. A single edit can be given as the
// top-level oldText/newText (the flags --old-text and --new-text, and the shape of
// other agents' edit tools); several go in edits. Every edit is matched
// against the original content and the batch applies all or nothing.
type EditRequest struct {
	Path       string   `json:"path" arg:"0" alias:"file_path" required:"true" help:"file to edit"`
	Edits      []EditOp `json:"edits,omitempty" help:"a batch of replacements, each matched against the original content, applied all or nothing; in place of oldText and newText"`
	OldText    *string  `json:"oldText,omitempty" flagAlias:"old" alias:"old_string,oldString" refusesEmpty:"true" help:"a single edit's text to replace, as the file spells it; given with newText, in place of edits"`
	NewText    *string  `json:"newText,omitempty" flagAlias:"new" alias:"new_string,newString" help:"a single edit's replacement text; \"\" deletes oldText"`
	ReplaceAll bool     `json:"replaceAll,omitempty" alias:"replace_all" help:"a single edit replaces every match instead of requiring exactly one"`
	DryRun     bool     `json:"dryRun,omitempty" help:"report the diff without writing"`
	Precondition
}

// EditResult is what an edit did (or, with dryRun, would do). It fits the
// byte bound: when the outcomes and the diff do not both fit whole, they
// share the room (see fitEdit) and Truncated is set; the file is edited in
// full all the same.
type EditResult struct {
	Path         string `json:"path"`
	PathBase64   string `json:"pathBase64,omitempty"`
	EditsApplied int    `json:"editsApplied"`
	// Edits is the outcome of each edit, in the order of the batch; when
	// the bound cuts it, of the first len(Edits) edits, EditsOmitted
	// counting the others and Rungs counting every edit of the batch by
	// the rung that located it.
	Edits        []EditOutcome  `json:"edits"`
	EditsOmitted int            `json:"editsOmitted,omitempty"`
	Rungs        map[string]int `json:"rungs,omitempty"`
	// Diff is unified, with 3 lines of context; when the bound cuts it, it
	// ends at a whole line with a marker saying how many lines are left.
	Diff             string `json:"diff"`
	Truncated        bool   `json:"truncated,omitempty"`
	FirstChangedLine int    `json:"firstChangedLine,omitempty"`
	// NoChange is set when every edit was already applied: nothing written.
	NoChange bool `json:"noChange,omitempty"`
	// Version and Sha256 describe the file as it now is on disk (with
	// dryRun, as it was read), ready for the next call's preconditions.
	Version string `json:"version"`
	Sha256  string `json:"sha256"`
	DryRun  bool   `json:"dryRun,omitempty"`
}

// isEmpty reports a string field left out or given as "".
func isEmpty(s *string) bool { return s == nil || *s == "" }

// ops checks the request and returns its edits in one list.
func (r *EditRequest) ops() ([]EditOp, error) {
	if err := Validate(r); err != nil {
		return nil, err
	}
	edits := r.Edits
	if len(edits) > 0 && isEmpty(r.OldText) && isEmpty(r.NewText) {
		// "" beside edits is left out, as a client filling every field of
		// the schema sends it.
		r.OldText, r.NewText = nil, nil
	}
	// single is an edit given as the top-level oldText and newText, the
	// flags --old-text and --new-text, which its errors name so
	// (fieldSpelling respells them for a caller who sent JSON); one in
	// edits is named by its place there.
	single := r.OldText != nil || r.NewText != nil
	switch {
	case single:
		if len(edits) > 0 {
			return nil, fault.InvalidArgument("give either --edits or a single --old-text/--new-text, not both.").
				WithHint("put every replacement in --edits")
		}
		if r.OldText == nil || r.NewText == nil {
			return nil, fault.InvalidArgument("a single edit needs both --old-text and --new-text.").
				WithHint("pass --old-text and --new-text (--new-text may be empty to delete)")
		}
		edits = []EditOp{{OldText: *r.OldText, NewText: r.NewText, ReplaceAll: r.ReplaceAll}}
	case len(edits) == 0:
		return nil, fault.InvalidArgument("no edits given.").
			WithHint(`pass --old-text and --new-text, or {"edits":[{"oldText":"...","newText":"..."}]}`)
	case len(edits) > MaxEdits:
		return nil, fault.InvalidArgument("the batch holds %d edits; one edit call takes at most %d.", len(edits), MaxEdits).
			WithDetail("count", len(edits)).WithDetail("max", MaxEdits).
			WithHint("split the batch into edit calls of at most %d edits (each call applies all or nothing on its own), or write the whole new content with write", MaxEdits)
	case r.ReplaceAll:
		return nil, fault.InvalidArgument("--replace-all applies to a single --old-text/--new-text.").
			WithHint("set replaceAll inside each edit")
	}
	for i, e := range edits {
		which, oldName, newName, texts := fmt.Sprintf("edits[%d]", i), fmt.Sprintf("edits[%d].oldText", i), fmt.Sprintf("edits[%d].newText", i), "oldText and newText"
		if single {
			which, oldName, newName, texts = "the edit", "--old-text", "--new-text", "--old-text and --new-text"
		}
		switch {
		case e.OldText == "":
			// Validate checked edits; a single edit's oldText is checked here.
			return nil, fault.InvalidArgument("%s is empty.", oldName).
				WithHint("copy the text to replace from the file; to create or overwrite a whole file use write")
		case *e.NewText == e.OldText:
			return nil, fault.InvalidArgument("%s has the same %s.", which, texts).
				WithHint("an edit must change something")
		case !utf8.ValidString(e.OldText) || !utf8.ValidString(*e.NewText):
			// A raw byte in newText would make the file NOT_TEXT.
			return nil, fault.InvalidArgument("%s holds bytes that are not UTF-8.", which).
				WithHint("edit changes text; give %s as UTF-8", texts)
		case strings.IndexByte(*e.NewText, 0) >= 0:
			// So would a NUL (the file holds none: edit reads no other).
			return nil, madeBinary(newName, strings.IndexByte(*e.NewText, 0))
		}
	}
	return edits, nil
}

// Edit applies a batch of replacements to one file under its exclusive
// lock, held from the read to the atomic replace, so that no other mutation
// lands in between. Only the located regions change: BOM, line endings,
// final newline and mode are kept.
func (t *Tools) Edit(ctx context.Context, req EditRequest) (*EditResult, error) {
	mfs, err := t.mutableFS("edit")
	if err != nil {
		return nil, err
	}
	edits, err := req.ops()
	if err != nil {
		return nil, err
	}
	return mutate(ctx, t, mfs, []string{req.Path}, func() (*EditResult, error) { return t.editOnce(ctx, mfs, req, edits) })
}

// editOnce is one attempt of an edit: read, plan, write if anything changed.
func (t *Tools) editOnce(ctx context.Context, mfs backend.MutableFS, req EditRequest, edits []EditOp) (*EditResult, error) {
	display := t.FS.Display(req.Path)
	data, whole, info, err := t.readForEdit(ctx, req)
	if err != nil {
		return nil, err
	}
	oldSum := sync.OnceValue(func() string { return sha256Hex(data) })
	if err := req.Precondition.Check(display, info, true, func() (string, error) {
		return oldSum(), nil
	}); err != nil {
		return nil, err
	}
	src := whole.Text
	edited, outcomes, err := planEdits(src, edits)
	if err != nil {
		// NO_MATCH and its closest region rest on what was read, as
		// noChange does.
		return nil, t.settledRefusal(ctx, req.Path, info.Version, withPath(err, display))
	}
	for i, e := range edits {
		// An edit may keep or move a marker the file holds, never add one.
		if lineCuts(*e.NewText) > 0 {
			if err := checkNoLineCut(fmt.Sprintf("edits[%d].newText", i), edited, src); err != nil {
				return nil, withPath(err, display)
			}
			break
		}
	}
	res := &EditResult{DryRun: req.DryRun, Version: info.Version}
	res.Path, res.PathBase64 = fault.PathText(display)
	for _, o := range outcomes {
		if !o.AlreadyApplied {
			res.EditsApplied++
		}
	}
	res.NoChange = edited == src
	write := !res.NoChange && !req.DryRun
	var newData []byte
	if !res.NoChange {
		// Sized as it would be written, dry run too: a file over the
		// limit could not be edited back. Before the diff, which a
		// refused edit does not need.
		if newData, err = whole.Encode(edited); err != nil {
			return nil, withPath(err, display)
		}
		if err := overEditLimit("edit", display, len(newData)); err != nil {
			return nil, t.settledRefusal(ctx, req.Path, info.Version, err)
		}
	}
	var diff string
	// The diff is of the bytes on disk, BOM included, so that it applies
	// with patch or git apply to the file as it was; of a UTF-16 file's
	// text, decoded.
	diff, res.FirstChangedLine = unifiedDiff(display, whole.Mark()+src, whole.Mark()+edited)
	if write {
		// The result is sized before the write, with the new version at
		// its largest: a result that cannot fit refuses the edit unmade.
		res.Version, res.Sha256 = t.unknownVersion(), sha256Hex(newData)
	} else {
		if res.NoChange && !req.DryRun {
			if err := t.settledRead(ctx, req.Path, info.Version); err != nil {
				return nil, err
			}
		}
		res.Sha256 = oldSum()
	}
	if err := t.fitEdit(res, outcomes, diff); err != nil {
		return nil, err.WithPath(display)
	}
	if req.DryRun && !res.NoChange {
		if err := t.checkDry(ctx, []backend.Op{{Path: req.Path, Write: backend.WriteOptions{IfVersion: info.Version}}}); err != nil {
			return nil, withoutInPlace(raced(err, fault.CodeStale), "edit")
		}
	}
	if write {
		fi, err := t.commitWrite(ctx, mfs, req.Path, newData, current{info: info, exists: true}, backend.WriteOptions{})
		if err != nil {
			return nil, withoutInPlace(err, "edit")
		}
		res.Version = fi.Version
	}
	return res, nil
}

// withoutInPlace names, in the HARDLINK error of tool, which has no
// in-place mode, what has one: the backend's hint names a flag of write.
func withoutInPlace(err error, tool string) error {
	if e := fault.AsError(err); e != nil && e.Code == fault.CodeHardlink {
		e.WithHint("%s replaces the file, which would split its hard links; write the whole file with write --in-place (not atomic), or %s a copy", tool, tool)
	}
	return err
}

// readForEdit reads the whole file, refusing what edit cannot change
// losslessly: a file over MaxEditBytes, or one that is not text.
func (t *Tools) readForEdit(ctx context.Context, req EditRequest) ([]byte, textfile.Whole, backend.FileInfo, error) {
	display := t.FS.Display(req.Path)
	r, err := t.FS.Open(ctx, req.Path)
	if err != nil {
		err = t.settledMissing(ctx, req.Path, err)
		if fault.MissingPath(err) && req.Precondition.Set() {
			return nil, textfile.Whole{}, backend.FileInfo{}, req.Precondition.Check(display, backend.FileInfo{}, false, nil)
		}
		return nil, textfile.Whole{}, backend.FileInfo{}, t.WithSuggestions(ctx, req.Path, err)
	}
	defer r.Close()
	if err := checkFinalSlash(req.Path, display, r.Info().Type); err != nil {
		return nil, textfile.Whole{}, backend.FileInfo{}, err
	}
	return readText(r, "edit", display)
}

// readText reads a whole text file that tool is to change, refusing what
// it cannot change losslessly: a file over MaxEditBytes (TOO_LARGE), or
// one that is neither UTF-8 nor marked UTF-16 text without NUL (NOT_TEXT).
// It returns the bytes and the text they hold.
func readText(r backend.FileReader, tool, display string) ([]byte, textfile.Whole, backend.FileInfo, error) {
	info := r.Info()
	tooLarge := func(size int64) error {
		return fault.Errorf(fault.CodeTooLarge, "the file is %d bytes, over %s's limit of %d.", size, tool, MaxEditBytes).WithPath(display).
			WithDetail("size", size).WithDetail("limit", MaxEditBytes).
			WithHint("%s changes files up to 2 MiB; to change a larger one, %s", tool, writeWhole)
	}
	if info.Size > MaxEditBytes {
		return nil, textfile.Whole{}, info, tooLarge(info.Size)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxEditBytes+1))
	if err != nil {
		return nil, textfile.Whole{}, info, fault.AsError(err).WithPath(display)
	}
	if len(data) > MaxEditBytes {
		return nil, textfile.Whole{}, info, tooLarge(int64(len(data)))
	}
	w, ok := textfile.DecodeWhole(data)
	if !ok {
		return nil, textfile.Whole{}, info, binaryTo(tool, data, display)
	}
	return data, w, info, nil
}

// writeWhole is how to change a file over MaxEditBytes.
const writeWhole = "write its whole new content with write (then --append the rest)"

// overEditLimit is the TOO_LARGE of a change by tool that would make the
// file at display size bytes, over MaxEditBytes, nil for one within it:
// edit, replace and apply-patch read no larger file, so that a change
// they made could not be undone the way it was made.
func overEditLimit(tool, display string, size int) error {
	if size <= MaxEditBytes {
		return nil
	}
	return fault.Errorf(fault.CodeTooLarge, "%s would make the file %d bytes, over the limit of %d (2 MiB) of the files edit, replace and apply-patch change: none of them could change it again.", tool, size, MaxEditBytes).
		WithPath(display).WithDetail("size", size).WithDetail("limit", MaxEditBytes).
		WithHint("nothing was changed; make a change that leaves the file within 2 MiB, or %s", writeWhole)
}

// maxPlannedText bounds the text, as UTF-8, that edit and replace build
// before encoding it and sizing it against MaxEditBytes: past it, no file
// they write fits (UTF-8 is written as it is, UTF-16 in no fewer than 2/3
// of its UTF-8 bytes). Built unbounded, a replaceAll of a 20 MB newText
// over 29,527 matches (590 GB) took 24 GB before the kernel killed it.
const maxPlannedText = 2 * MaxEditBytes

// textOverLimit is the TOO_LARGE of a change by tool that would make the
// text of the file at display at least size bytes as UTF-8, over
// maxPlannedText, found before that text is built (the rest uncounted).
func textOverLimit(tool, display string, size int) error {
	return fault.Errorf(fault.CodeTooLarge, "%s would make the file's text at least %d bytes, over the limit of %d (2 MiB) of the files edit, replace and apply-patch change: none of them could change it again.", tool, size, MaxEditBytes).
		WithPath(display).WithDetail("size", size).WithDetail("limit", MaxEditBytes).
		WithHint("nothing was changed; make a change that leaves the file within 2 MiB, or %s", writeWhole)
}

// madeBinary is the INVALID_ARGUMENT of a request whose text field puts
// a NUL, at byte at of it, into a file: edit, replace and apply-patch
// change no file holding one (binaryTo), and grep skips it, so that the
// change could be neither found nor undone the way it was made.
func madeBinary(field string, at int) *fault.Error {
	return fault.InvalidArgument("%s holds a NUL (U+0000) at byte %d, which would make the file binary: edit, replace and apply-patch could not change it again, and grep would skip it.", field, at).
		WithDetail("offset", at).
		WithHint("leave the NUL out (a JSON \\u0000 is one); to write bytes, use write --content-base64; nothing was changed")
}

// binaryTo is the NOT_TEXT of data, the bytes of a file that is not text
// to tool: where its first NUL is, when it holds one.
func binaryTo(tool string, data []byte, display string) *fault.Error {
	if at, line, utf16, nul := textfile.NULIn(data); nul {
		what := "a NUL byte"
		if utf16 {
			what = "U+0000"
		}
		return fault.Errorf(fault.CodeNotText, "the file holds %s at byte %d (line %d): %s changes text only, and a NUL anywhere makes a file binary to it (read and grep look for one in the first 64 KiB only, so they may show the file as text).", what, at, line, tool).
			WithPath(display).WithDetail("offset", at).WithDetail("line", line).
			WithHint("rewrite the whole file with write (--content-base64 for bytes), which takes a NUL; nothing was changed")
	}
	if name, at, bad := textfile.InvalidAfterMark(data); bad {
		// It has the mark: "not UTF-16 with its mark" and a hint to name
		// its encoding to read sent the caller looking for another.
		line := textfile.LineAt(data, at)
		return fault.Errorf(fault.CodeNotText, "the file begins with a byte-order mark for %s, but its byte %d (line %d) is not valid %s: %s changes text in one encoding only.", name, at, line, name, tool).
			WithPath(display).WithDetail("offset", at).WithDetail("line", line).
			WithHint("read shows the lines before it; rewrite the file whole with write (--content-base64 for bytes); nothing was changed")
	}
	return fault.Errorf(fault.CodeNotText, "the file is not text (UTF-8, or UTF-16 with its byte-order mark).").WithPath(display).
		WithHint("%s changes UTF-8 and UTF-16 text only: text in another encoding is read with read --encoding NAME and written back with write --encoding NAME, a binary file replaced with write; nothing was changed", tool)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func withPath(err error, p string) error {
	var e *fault.Error
	if errors.As(err, &e) && e.Path == "" {
		e.WithPath(p)
	}
	return err
}

// fitEdit sets the outcomes and the diff of res so that res fits the
// bound. Both go whole when they fit. Otherwise they share the room the
// other fields leave, each up to half of it or what the other leaves: the
// outcomes are cut to the first that fit (EditsOmitted, Rungs) and the
// diff at a line, with a marker. When the other fields alone do not fit (a
// path longer than the bound) it is TOO_LARGE, and the edit is not made.
func (t *Tools) fitEdit(res *EditResult, outcomes []EditOutcome, diff string) *fault.Error {
	res.Edits, res.Diff = outcomes, diff
	if jsonSize(res) <= t.maxBytes() {
		return nil
	}
	diffLines := strings.Count(diff, "\n")
	res.Truncated = true
	res.Edits, res.EditsOmitted, res.Rungs = outcomes[:0], len(outcomes), map[string]int{}
	for _, o := range outcomes {
		if o.Rung != "" {
			res.Rungs[o.Rung]++
		}
	}
	res.Diff = diffCut(diffLines)
	skeleton := jsonSize(res)
	if skeleton > t.maxBytes() {
		return t.tooLarge(skeleton, "the result of this edit does not fit, even without its outcomes and diff").
			WithHint("raise --max-bytes to %d or more; nothing was changed", t.raiseTo(skeleton))
	}
	room := t.maxBytes() - skeleton
	needDiff := max(jsonLen(diff)-jsonLen(res.Diff), 0)
	share := max(room/2, room-needDiff)
	k := 0
	for used := 0; k < len(outcomes); k++ {
		if used += itemSize(outcomes[k]); used > share {
			break
		}
	}
	res.Edits = outcomes[:k]
	if k == len(outcomes) {
		res.EditsOmitted, res.Rungs = 0, nil
	} else {
		res.EditsOmitted = len(outcomes) - k
	}
	res.Diff = ""
	res.Diff = cutDiff(diff, t.maxBytes()-jsonSize(res))
	return nil
}

// diffCut is the marker that ends a diff cut with n lines left out.
func diffCut(n int) string { return "... diff truncated: " + itoa(n) + " more lines\n" }

// cutDiff cuts diff at a line so that it takes at most budget bytes of
// JSON with the marker; budget holds at least the marker of a diff cut
// before its first line.
func cutDiff(diff string, budget int) string {
	if jsonLen(diff) <= budget {
		return diff
	}
	left := strings.Count(diff, "\n")
	var out strings.Builder
	used := 0
	for rest := diff; rest != ""; left-- {
		i := strings.IndexByte(rest, '\n') + 1
		if i == 0 {
			i = len(rest)
		}
		n := jsonLen(rest[:i])
		if used+n+jsonLen(diffCut(left-1)) > budget {
			break
		}
		used += n
		out.WriteString(rest[:i])
		rest = rest[i:]
	}
	out.WriteString(diffCut(left))
	return out.String()
}
