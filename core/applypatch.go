package core

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/patch"
	"github.com/agentfs/agentfs/textfile"
)

// ApplyPatchRequest applies a patch in the format of OpenAI Codex's
// apply_patch to several files, all or nothing.
type ApplyPatchRequest struct {
	Patch     string `json:"patch,omitempty" arg:"0" alias:"input" refusesEmpty:"true" help:"the patch: *** Begin Patch, then *** Add File, *** Delete File or *** Update File sections (with *** Move to and @@ chunks), then *** End Patch"`
	PatchFile string `json:"patchFile,omitempty" help:"read the patch from this file, which must lie inside the roots (flags form: - reads stdin)"`
	DryRun    bool   `json:"dryRun,omitempty" help:"verify the patch and report its diffs without writing"`
}

// ApplyPatchResult says what a patch did (or, with dryRun, would do), one
// entry per file in the order the patch first names them.
type ApplyPatchResult struct {
	Files     []PatchedFile `json:"files"`
	DryRun    bool          `json:"dryRun,omitempty"`
	Truncated bool          `json:"truncated,omitempty"`
}

// PatchedFile is one file a patch changed: added, updated, deleted, or
// moved (from another path, with its changes). Diff is cut at a line when
// the result's bound leaves it no more room (Truncated).
type PatchedFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Action     string `json:"action"`
	From       string `json:"from,omitempty"`
	Diff       string `json:"diff,omitempty"`
	Version    string `json:"version,omitempty"`
	// Overwritten is set for a move onto a file that existed, whose
	// content diff shows replaced.
	Overwritten bool `json:"overwritten,omitempty"`
	// NoChange is set for an update whose chunks leave the file as it
	// is: it is not written, and keeps its version.
	NoChange bool `json:"noChange,omitempty"`
}

// The actions of a PatchedFile.
const (
	ActionAdd    = "add"
	ActionUpdate = "update"
	ActionDelete = "delete"
	ActionMove   = "move"
)

// MaxPatchBytes bounds a patch, as MaxWriteBytes bounds a write.
const MaxPatchBytes = 8 << 20

// ApplyPatch verifies every section of a patch against the files as they
// are (each chunk located by patch.Ladder: Codex's rungs, named as edit's),
// then commits every change in one transaction under the locks of every
// path: all of it happens, or none, and a process killed during the commit
// is undone by the next agentfs to start.
func (t *Tools) ApplyPatch(ctx context.Context, req ApplyPatchRequest) (*ApplyPatchResult, error) {
	m, err := t.mutableFS("apply-patch")
	if err != nil {
		return nil, err
	}
	text, err := t.patchText(ctx, req)
	if err != nil {
		return nil, err
	}
	p, err := patch.Parse(text)
	if err != nil {
		return nil, err
	}
	for i := range p.Ops {
		// One spelling per file, so that sections of one file spelled
		// two ways, relative and absolute, are planned as one file's.
		op := &p.Ops[i]
		if err := t.dotDotPlaced(ctx, op.Path, op.MoveTo); err != nil {
			return nil, err
		}
		op.Path = t.spelling(op.Path)
		if op.MoveTo != "" {
			op.MoveTo = t.spelling(op.MoveTo)
		}
	}
	tx, ok := m.(backend.Transactor)
	if !ok && !req.DryRun {
		return nil, fault.Errorf(fault.CodeNotSupported, "apply-patch is not available: this backend has no transactions.").
			WithHint("apply the changes file by file with write and edit")
	}
	return mutate(ctx, t, m, patchPaths(p), func() (*ApplyPatchResult, error) {
		return t.applyOnce(ctx, tx, p, req.DryRun)
	})
}

// patchText is the patch from exactly one of patch and patchFile.
func (t *Tools) patchText(ctx context.Context, req ApplyPatchRequest) (string, error) {
	switch {
	case req.Patch != "" && req.PatchFile != "":
		// Spelled as flags, which a request given as JSON has as fields.
		return "", fault.InvalidArgument("give only one of --patch and --patch-file.").
			WithHint("use --patch for the patch's text, --patch-file for a file that holds it")
	case req.PatchFile == "-":
		// As write's contentFile: a file named "-" would be a surprise.
		return "", fault.InvalidArgument("--patch-file - (standard input) is only for a request given as flags.").
			WithHint("give the patch itself as patch, or name a file with patchFile")
	case req.PatchFile != "":
		data, err := t.readWhole(ctx, req.PatchFile, MaxPatchBytes)
		if err != nil {
			// Named as write names its --content-file: "no such file"
			// alone read as a file the patch changes.
			e := fault.AsError(t.WithSuggestions(ctx, req.PatchFile, err))
			e.Message = "--patch-file: " + e.Message
			return "", stdinElsewhere(e, "--patch-file", req.PatchFile)
		}
		if len(data) == 0 {
			return "", fault.InvalidArgument("--patch-file %s is empty: no patch is given.", t.FS.Display(req.PatchFile)).
				WithHint("write the patch into the file, or pass it with --patch; nothing was changed")
		}
		req.Patch = string(data)
	}
	if req.Patch == "" {
		// Only a request given as JSON comes here (the flags form is
		// refused before, naming standard input), where patchFile "-" is
		// refused: no hint of standard input.
		return "", fault.InvalidArgument("no patch is given.").
			WithHint("pass the patch as --patch, or the path of a file that holds it as --patch-file")
	}
	if len(req.Patch) > MaxPatchBytes {
		// No size: standard input is read up to one byte past the limit.
		return "", fault.Errorf(fault.CodeTooLarge, "the patch is over %d bytes, the limit.", MaxPatchBytes).
			WithHint("split the patch into several")
	}
	// A patch saved with a byte-order mark (a Windows editor) was
	// PATCH_PARSE: "must start with '*** Begin Patch', not \ufeff...".
	req.Patch = strings.TrimPrefix(req.Patch, "\uFEFF")
	if !utf8.ValidString(req.Patch) {
		// Its bytes would be written as they are and shown as U+FFFD.
		return "", fault.InvalidArgument("the patch is not valid UTF-8 (byte %d).", invalidUTF8At([]byte(req.Patch))).
			WithHint("a patch is text; change a file that is not UTF-8 with write (contentBase64)")
	}
	if at := strings.IndexByte(req.Patch, 0); at >= 0 {
		// A file the patch changes holds none, so that only a + line
		// could hold it, and would write it.
		return "", madeBinary("the patch", at)
	}
	return req.Patch, nil
}

// spelling is Display's spelling of path, which names it again, unless
// path has a "..": cleaned away lexically, one after a link or a file
// would name another file than the kernel's, which the backend refuses.
func (t *Tools) spelling(path string) string {
	if slices.Contains(strings.Split(path, "/"), "..") {
		return path
	}
	return t.FS.Display(path)
}

// dotDotPlaced refuses a path with a ".." the backend would refuse (one
// after a file or a missing name): the plan names each file by its
// cleaned name, and a backend without locks, which check it on a local
// root, would never see the ".." at all.
func (t *Tools) dotDotPlaced(ctx context.Context, paths ...string) error {
	for _, p := range paths {
		if !slices.Contains(strings.Split(p, "/"), "..") {
			continue
		}
		if _, err := t.FS.Stat(ctx, p); fault.AsError(err) != nil && fault.AsError(err).Code == fault.CodeInvalidArgument {
			return err
		}
	}
	return nil
}

// patchPaths lists every path a patch touches, to lock them all.
func patchPaths(p *patch.Patch) []string {
	var paths []string
	for _, op := range p.Ops {
		paths = append(paths, op.Path)
		if op.MoveTo != "" {
			paths = append(paths, op.MoveTo)
		}
	}
	return paths
}

// applyOnce reads, plans and (unless dry) commits a patch: one attempt of
// ApplyPatch.
func (t *Tools) applyOnce(ctx context.Context, tx backend.Transactor, p *patch.Patch, dry bool) (*ApplyPatchResult, error) {
	before := map[string]backend.FileInfo{}
	old := map[string]string{}
	// dangling are the links whose target is missing: there to delete,
	// while an add or a move onto one writes through it, to the target,
	// as write does (checked against the link's own version, every
	// attempt lost its race: LOCK_TIMEOUT after 30 seconds).
	dangling := map[string]bool{}
	absent := map[string]bool{}
	// A directory where a file is named gets a hint for its section, not
	// read's (use ls to list it): a move names the file's new path, as mv
	// does, and a directory is removed by rm -r.
	movedFrom, deletes := map[string]string{}, map[string]bool{}
	for _, op := range p.Ops {
		if op.MoveTo != "" {
			movedFrom[op.MoveTo] = op.Path
		}
		deletes[op.Path] = deletes[op.Path] || op.Kind == patch.Delete
	}
	read := func(path string) (string, bool, error) {
		data, info, err := t.openText(ctx, path, "apply-patch")
		switch e := fault.AsError(err); {
		case e == nil:
		case e.Code == fault.CodeNotAFile && movedFrom[path] != "":
			d := t.FS.Display(path)
			name := t.FS.Display(movedFrom[path])
			name = name[strings.LastIndex(name, "/")+1:]
			return "", false, e.WithHint("*** Move to: names the file's new path, and a move never goes into a directory: such as %s/%s; nothing was changed", d, name)
		case e.Code == fault.CodeNotAFile && deletes[path]:
			return "", false, e.WithHint("*** Delete File: deletes a file; rm -r removes a directory; nothing was changed")
		case e.Code == fault.CodeNotAFile:
			return "", false, e.WithHint("a section's path names a file, not a directory; nothing was changed")
		case fault.MissingPath(err):
			// A link whose target is missing is there, to delete as rm
			// deletes it (it was "does not exist"); an update of it
			// keeps the error.
			if li, lerr := t.FS.Lstat(ctx, path); lerr == nil && li.Type == backend.TypeSymlink {
				dangling[path] = true
				return "", true, fault.Errorf(fault.CodeSymlink, "the path is a link whose target is missing.").
					WithPath(t.FS.Display(path)).WithHint("delete the link, or patch its target's path")
			}
			absent[path] = true
			return "", false, nil
		case e.Code == fault.CodeNotText || e.Code == fault.CodeTooLarge:
			// A file that is not text, or over the limit, may still be
			// deleted, or added over: the plan keeps the error for an
			// update of it (apply-patch wrote a 3 MB file it then could
			// not delete).
			if fi, serr := t.FS.Stat(ctx, path); serr == nil && fi.Type == backend.TypeFile {
				before[path] = fi
				return "", true, err
			}
			return "", false, err
		default:
			return "", false, err
		}
		before[path], old[path] = info, string(data)
		return string(data), true, nil
	}
	changes, err := p.Plan(read, nil)
	if err != nil {
		// PATCH_VERIFY rests on what was read, as noChange does.
		for path, info := range before {
			if serr := t.settledRead(ctx, path, info.Version); serr != nil {
				return nil, serr
			}
		}
		// NOT_FOUND of a file read missing rests on its absence.
		if e := fault.AsError(err); e != nil && absent[e.Path] {
			return nil, t.settledMissing(ctx, e.Path, err)
		}
		return nil, err
	}
	moved := map[string]bool{}
	for _, c := range changes {
		if c.From != "" && c.From != c.Path {
			moved[c.From] = true
		}
	}
	res := &ApplyPatchResult{Files: []PatchedFile{}, DryRun: dry}
	var ops []backend.Op
	// The diffs of every file search within one budget.
	until := time.Now().Add(diffSearch)
	for _, c := range changes {
		op := backend.Op{Path: c.Path, Data: []byte(c.Content)}
		if info, ok := before[c.Path]; ok {
			op.Write.IfVersion = info.Version
		} else {
			op.Write.IfAbsent = true
		}
		f := PatchedFile{Action: ActionUpdate}
		f.Path, f.PathBase64 = fault.PathText(t.FS.Display(c.Path))
		// A + line copied from a read that cut it, as write and edit refuse.
		if err := checkNoLineCut("the patch's content for "+f.Path, c.Content, old[cmp.Or(c.From, c.Path)]); err != nil {
			return nil, err
		}
		if c.Kind != patch.Delete {
			if err := overEditLimit("apply-patch", f.Path, len(c.Content)); err != nil {
				// It rests on what was read, as PATCH_VERIFY does.
				if info, ok := before[cmp.Or(c.From, c.Path)]; ok {
					return nil, t.settledRefusal(ctx, cmp.Or(c.From, c.Path), info.Version, err)
				}
				return nil, err
			}
		}
		switch {
		case c.Kind == patch.Delete:
			op.Remove, op.Data, op.Moved = true, nil, moved[c.Path]
			// A link goes, as rm removes it, and the commit checks the
			// link's own version, as rm's does: the version read is its
			// file's.
			if li, err := t.FS.Lstat(ctx, c.Path); err == nil && li.Type == backend.TypeSymlink {
				op.Write.IfVersion, op.Write.IfAbsent = li.Version, false
			} else if dangling[c.Path] {
				return nil, errConflict // no longer a link: read again
			}
			// No diff: the whole file as - lines (250 KB for a large
			// one) told the caller nothing it did not name, and took the
			// room of the other files' diffs; rm answers as briefly.
			f.Action = ActionDelete
		case c.From != "" && c.From != c.Path:
			f.Action, f.From = ActionMove, t.FS.Display(c.From)
			mode := before[c.From].Mode
			op.Write.Executable, op.Write.Mode = mode&0o111 != 0, uint32(mode)&0o7777
			op.Write.OwnerOf = c.From
			from := old[c.From]
			if _, existed := before[c.Path]; existed && !moved[c.Path] {
				// What the destination held is lost (unless a section
				// moved it away first): the diff shows it replaced, as
				// Codex's move overwrites it.
				f.Overwritten, from = true, old[c.Path]
			}
			f.Diff, _ = contextDiffUntil(until, f.Path, from, c.Content, diffContext)
			if !f.Overwritten {
				f.Diff = movedDiff(f.Diff, f.From)
			}
		case c.Kind == patch.Add:
			f.Action = ActionAdd
			f.Diff, _ = contextDiffUntil(until, f.Path, "", c.Content, diffContext)
		case c.Content == old[c.Path]:
			// -a +a, or context lines alone: written, the file took a
			// new inode, mtime and version, and a caller's version
			// from a read went STALE for nothing.
			if err := t.settledRead(ctx, c.Path, before[c.Path].Version); err != nil {
				return nil, err
			}
			f.NoChange, f.Version = true, before[c.Path].Version
			res.Files = append(res.Files, f)
			continue
		default:
			f.Diff, _ = contextDiffUntil(until, f.Path, old[c.Path], c.Content, diffContext)
		}
		ops = append(ops, op)
		if c.Kind == patch.Delete && moved[c.Path] {
			continue // reported as the move's source
		}
		res.Files = append(res.Files, f)
	}
	if err := t.fitPatch(res, !dry); err != nil {
		return nil, err
	}
	if dry {
		if err := t.checkDry(ctx, ops); errors.Is(err, backend.ErrChangedTwice) {
			return nil, changedTwice(err)
		} else if err != nil {
			return nil, t.patchHardlink(raced(err, fault.CodeStale, fault.CodeExists), moved)
		}
		return res, nil
	}
	if len(ops) == 0 {
		return res, nil // every file left as it is
	}
	ctx, done, err := t.beginCommit(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	infos, err := tx.Commit(ctx, ops)
	if errors.Is(err, backend.ErrChangedTwice) {
		return nil, changedTwice(err)
	}
	if err != nil {
		return nil, t.patchHardlink(raced(err, fault.CodeStale, fault.CodeExists), moved)
	}
	byPath := map[string]string{}
	for i, op := range ops {
		if !op.Remove {
			byPath[t.FS.Display(op.Path)] = infos[i].Version
		}
	}
	for i := range res.Files {
		if !res.Files[i].NoChange {
			res.Files[i].Version = versionAt(byPath, res.Files[i])
		}
	}
	return res, nil
}

// patchHardlink is withoutInPlace for apply-patch, whose HARDLINK of a
// file it moves keeps the backend's hint, which names mv: moved holds
// the paths of the files it moves.
func (t *Tools) patchHardlink(err error, moved map[string]bool) error {
	if e := fault.AsError(err); e != nil && e.Code == fault.CodeHardlink {
		for p := range moved {
			if t.FS.Display(p) == e.Path {
				return err
			}
		}
	}
	return withoutInPlace(err, "apply-patch")
}

// changedTwice is PATCH_VERIFY for a commit refused because two of its
// ops name one file (backend.ErrChangedTwice).
func changedTwice(err error) error {
	at := fault.AsError(err).Path
	if other, ok := fault.AsError(err).Details["sameAs"].(string); ok && other != at && strings.EqualFold(other, at) {
		// Foo.go and foo.go where the file system ignores case
		// (macOS): every attempt's second change found the first's
		// file, for 30 s, then LOCK_TIMEOUT blamed other writers.
		return fault.Errorf(fault.CodePatchVerify, "the patch names one file by two spellings, %s and %s, which this file system takes for one name (it ignores case): one change would be lost.", other, at).
			WithPath(at).WithHint("name the file by one spelling in the patch; to change only the case of its name, mv it first; nothing was changed")
	}
	// Two spellings the plan could not tell for one file (a link to
	// a directory on the way): each section's change would replace
	// the other's.
	return fault.Errorf(fault.CodePatchVerify, "two sections of the patch change one file by two paths (a link on the way): one change would be lost.").
		WithPath(at).WithHint("name each file by one path in the patch, and merge its sections")
}

// versionAt is the new version of a file a patch wrote, "" for a deletion.
func versionAt(byPath map[string]string, f PatchedFile) string {
	if f.Action == ActionDelete {
		return ""
	}
	return byPath[f.Path]
}

// fitPatch cuts the diffs of res so that it fits the bound, with room
// for every new version when written is set.
func (t *Tools) fitPatch(res *ApplyPatchResult, written bool) error {
	diffs := make([]*string, len(res.Files))
	unknown := t.unknownVersion()
	for i := range res.Files {
		diffs[i] = &res.Files[i].Diff
		if written && res.Files[i].Action != ActionDelete && !res.Files[i].NoChange {
			res.Files[i].Version = unknown
		}
	}
	defer func() {
		for i := range res.Files {
			if !res.Files[i].NoChange {
				res.Files[i].Version = "" // set once written
			}
		}
	}()
	return t.fitDiffs(res, &res.Truncated, diffs)
}

// fitDiffs cuts the diffs of res at a line so that res fits the bound,
// and sets *truncated when it cut one; when res does not fit even without
// its diffs it is TOO_LARGE, and nothing is written. The shortest diffs
// are kept first: one large diff is cut rather than leave every file
// after it without one.
func (t *Tools) fitDiffs(res any, truncated *bool, diffs []*string) error {
	whole, sizes := make([]string, len(diffs)), make([]int, len(diffs))
	for i, d := range diffs {
		whole[i], sizes[i] = *d, jsonLen(*d)
	}
	return t.fitSizedDiffs(res, truncated, diffs, sizes, func(i int) string { return whole[i] })
}

// fitSizedDiffs is fitDiffs of diffs whose lengths of JSON (jsonLen) are
// sizes, each whole as whole(i) gives it, asked for only when some of it
// is kept.
func (t *Tools) fitSizedDiffs(res any, truncated *bool, diffs []*string, sizes []int, whole func(i int) string) error {
	for _, d := range diffs {
		*d = ""
	}
	*truncated = true
	skeleton := jsonSize(res)
	*truncated = false
	if skeleton > t.maxBytes() {
		return t.tooLarge(skeleton, "the result does not fit, even without its diffs").
			WithHint("raise --max-bytes to %d or more, or change fewer files at once; nothing was changed", t.raiseTo(skeleton))
	}
	// A diff adds ,"diff":"…" to its file, whose key an empty diff leaves
	// out (omitempty).
	const key = len(`,"diff":""`)
	room := t.maxBytes() - skeleton
	order, size := make([]int, len(diffs)), sizes
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size[a], size[b]) })
	for _, i := range order {
		if n := key + size[i]; n <= room {
			*diffs[i], room = whole(i), room-n
			continue
		}
		*truncated = true
		if room >= key+len(diffCut(0))+16 {
			*diffs[i] = cutDiff(whole(i), room-key)
			room -= key + jsonLen(*diffs[i])
		}
	}
	return nil
}

// openText reads a whole UTF-8 text file that tool is to change (see
// readText).
func (t *Tools) openText(ctx context.Context, path, tool string) ([]byte, backend.FileInfo, error) {
	data, whole, info, err := t.openWhole(ctx, path, tool)
	if err == nil && whole.UTF16() {
		return nil, info, fault.Errorf(fault.CodeNotText, "the file is UTF-16 text, which %s does not change.", tool).WithPath(t.FS.Display(path)).
			WithHint("change it with edit or replace, which keep its encoding, or write its whole new text with write")
	}
	return data, info, err
}

// openWhole reads a whole text file that tool is to change, UTF-8 or
// UTF-16 (see readText).
func (t *Tools) openWhole(ctx context.Context, path, tool string) ([]byte, textfile.Whole, backend.FileInfo, error) {
	r, err := t.FS.Open(ctx, path)
	if err != nil {
		return nil, textfile.Whole{}, backend.FileInfo{}, err
	}
	defer r.Close()
	return readText(r, tool, t.FS.Display(path))
}

// stdinElsewhere adds to e, when it is OUTSIDE_ROOT for the input file
// p of flag (--patch-file, --content-file), that standard input reads a
// file from anywhere: the hint said only to move the file into a root or
// add one, when agents write a patch to /tmp.
func stdinElsewhere(e *fault.Error, flag, p string) *fault.Error {
	if e.Code != fault.CodeOutsideRoot {
		return e
	}
	file := "FILE"
	if utf8.ValidString(p) && !strings.ContainsAny(p, "\n\r") {
		file = fault.ShellWord(p)
	}
	e.Hint = strings.TrimSuffix(e.Hint, ".") + "; or, on the command line, pass " + flag +
		" - to read standard input, which can be a file anywhere: " + flag + " - < " + file
	return e
}

// readWhole reads a whole file of at most limit bytes through the backend,
// inside the roots like any path.
func (t *Tools) readWhole(ctx context.Context, path string, limit int) ([]byte, error) {
	r, err := t.FS.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fault.AsError(err).WithPath(t.FS.Display(path))
	}
	if len(data) > limit {
		return nil, fault.Errorf(fault.CodeTooLarge, "the file is over %d bytes.", limit).WithPath(t.FS.Display(path)).
			WithHint("pass a smaller file")
	}
	return data, nil
}
