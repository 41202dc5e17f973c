package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
)

// dataOnly is a text rendering with no notes.
func dataOnly[Res any](f func(Res, Palette) string) func(Res, Palette) (string, string) {
	return func(r Res, p Palette) (string, string) { return f(r, p), "" }
}

// readText renders a read as text: the lines as the file holds them (a
// window's CRLF terminators, which content gives as LF when they are all
// CRLF, and a UTF-8 byte-order mark), so that read --all is cat, with a
// note of the lines cut. Media and binaries, whose bytes are no use on a
// terminal, hold no text window: readUntextable refuses them first.
func readText(r *core.ReadResult, _ Palette) (string, string) {
	var notes string
	if r.LinesCut > 0 {
		notes = fmt.Sprintf("... %d line(s) cut: --line-truncation chars:0 gives whole lines\n", r.LinesCut)
	}
	text := r.Content
	if r.LineEnding == "crlf" {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return r.Lead + text, notes
}

// readUntextable refuses a read of a file that is not text, which
// readText cannot render (it holds no text window). Its hint says what
// --format json gives: an image's or a PDF's bytes as data, but of any
// other binary file none (the hint promised them, and a caller that
// followed it got no data).
func readUntextable(r *core.ReadResult) error {
	if r.TextWindow != nil {
		return nil
	}
	hint := "read it with --format json, whose data holds its bytes in base64 when they fit, or copy it with cp"
	if r.Kind == "binary" {
		hint = "--format json gives its kind, mimeType and size, not its bytes; copy it with cp"
	}
	return fault.Errorf(fault.CodeNotText, "%s is not text (%s %s, %d bytes): --format text prints text only.", r.Path, r.Kind, r.MimeType, r.Size).
		WithPath(r.Path).WithHint("%s", hint)
}

// lsText renders a listing as text, as ls -F does: one entry a
// line (its path with a depth), / after a directory and @ after a link,
// whose target follows ->. Names are printed as their bytes, as in every
// text rendering: text is for pipes, and with U+FFFD in place of bytes a
// name named a file that does not exist (on a terminal, control
// characters escaped: Palette.shown). With long, mode, size and mtime come first, as
// in ls -l.
func lsText(r *core.LsResult, p Palette) string {
	var b strings.Builder
	width := 0
	for _, e := range r.Entries {
		width = max(width, len(strconv.FormatInt(e.Size, 10)))
	}
	for _, e := range r.Entries {
		if e.Mode != "" {
			fmt.Fprintf(&b, "%s %*d %s ", e.Mode, width, e.Size, e.Mtime)
		}
		name := fault.PathBytes(e.Name, e.NameBase64)
		if e.Path != "" {
			name = fault.PathBytes(e.Path, e.PathBase64)
		}
		b.WriteString(p.entryName(name, e.Type))
		b.WriteString(typeSuffix(e.Type))
		if e.Type == "symlink" {
			b.WriteString(" -> " + p.Shown(fault.PathBytes(e.Target, e.TargetBase64)))
		}
		if e.Ignored {
			b.WriteString("  (ignored)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// lsNotes renders a listing as lsText does, with a note of the entries
// it could not read.
func lsNotes(r *core.LsResult, p Palette) (string, string) {
	return lsText(r, p), unreadableNote(r.Unreadable, "entry", "entries")
}

// findNotes renders a page as findText does, with a note of the entries
// it could not read (directories, or on a store keys of files too) and
// its hint.
func findNotes(r *core.FindResult, p Palette) (string, string) {
	notes := unreadableNote(r.Unreadable, "entry", "entries")
	if r.Hint != "" {
		notes += "... " + r.Hint + "\n"
	}
	return findText(r, p), notes
}

// unreadableNote says that the answer skipped n unreadable entries (one,
// many), as JSON's unreadable does: without it, a text answer passed for a
// whole one.
func unreadableNote(n int, one, many string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "... 1 unreadable " + one + " skipped\n"
	}
	return fmt.Sprintf("... %d unreadable %s skipped\n", n, many)
}

// typeSuffix is ls -F's mark of an entry type: / for a directory, @ for a
// link, nothing for a regular file or another kind.
func typeSuffix(typ string) string {
	switch typ {
	case "dir":
		return "/"
	case "symlink":
		return "@"
	}
	return ""
}

// findText renders one path a line, / after a directory, as fd prints
// them: a path to pass back as it is (ls -F's @ after a link named another
// file, "x@", or none).
func findText(r *core.FindResult, p Palette) string {
	var b strings.Builder
	for _, e := range r.Results {
		suffix := ""
		if e.Type == "dir" {
			suffix = "/"
		}
		fmt.Fprintf(&b, "%s%s\n", p.entryName(fault.PathBytes(e.Path, e.PathBase64), e.Type), suffix)
	}
	return b.String()
}

// grepText renders a page as rg -n does: path:line:text for a matching
// line, path-line-text for a context line and -- between blocks when there
// is context; as rg -l in files mode (paths) and rg -c in count mode
// (path:count, then the totals).
func grepText(r *core.GrepResult, p Palette) (string, string) {
	var b, notes strings.Builder
	// rg -C separates every two blocks, whether or not they hold a
	// context line (a match on a file's one line, matches on the lines
	// a page before gave as context): a page of such blocks ran them
	// together, and --all printed -- or not by the size of its pages.
	withContext := r.Context > 0
	for _, f := range r.Files {
		for _, bl := range f.Blocks {
			withContext = withContext || bl.Matches != nil
		}
	}
	blocks := 0
	for _, f := range r.Files {
		name := p.Shown(fault.PathBytes(f.Path, f.PathBase64))
		switch r.Mode {
		case core.ModeFiles:
			fmt.Fprintf(&b, "%s\n", paint(p.Path, name))
		case core.ModeCount:
			fmt.Fprintf(&b, "%s:%d\n", paint(p.Path, name), f.Count)
		}
		for _, bl := range f.Blocks {
			if blocks++; withContext && blocks > 1 {
				b.WriteString("--\n")
			}
			m := bl.Matches
			for i, text := range bl.Lines {
				n, sep := bl.Start+i, ":"
				if bl.Matches != nil {
					if len(m) > 0 && m[0] == n {
						m = m[1:]
					} else {
						sep = "-"
					}
				}
				fmt.Fprintf(&b, "%s%s\n", p.grepPrefix(name, sep, n), text)
			}
		}
	}
	unreadable := unreadableNote(r.Unreadable, "file or directory", "files or directories")
	if r.FilesWithMatches != nil {
		// Count mode's unreadable, as its totals, covers the whole search:
		// on the totals' line, --all prints it once, not once a page.
		fmt.Fprintf(&notes, "... %d matching lines in %d file(s)", r.Count, *r.FilesWithMatches)
		if unreadable != "" {
			notes.WriteString("; " + strings.TrimPrefix(unreadable, "... "))
		} else {
			notes.WriteString("\n")
		}
		unreadable = ""
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&notes, "... timed out: %s\n", r.Hint)
	case r.Hint != "":
		// A fixed string that reads as a regex: without the note a
		// text caller saw nothing at all, exit 0.
		fmt.Fprintf(&notes, "... %s\n", r.Hint)
	}
	if r.BinarySkipped > 0 {
		fmt.Fprintf(&notes, "... %d binary file(s) skipped\n", r.BinarySkipped)
	}
	notes.WriteString(unreadable)
	return b.String(), notes.String()
}

// grepPrefix is what grepText puts before line n of the file name (as
// shown): sep is : for a match, - for a context line.
func (p Palette) grepPrefix(name, sep string, n int) string {
	return paint(p.Path, name) + sep + paint(p.Line, strconv.Itoa(n)) + sep
}

// GrepLinePrefix is the bytes grepText puts before line n of path
// (core.Tools.TextLinePrefix).
func (p Palette) GrepLinePrefix(path string, n int) int {
	return len(p.grepPrefix(p.Shown(path), ":", n))
}

func writeText(r *core.WriteResult, p Palette) string {
	path := p.Shown(fault.PathBytes(r.Path, r.PathBase64))
	switch {
	case r.NoChange && r.Appended:
		return fmt.Sprintf("%s: unchanged (nothing to append)\n", path)
	case r.NoChange:
		return fmt.Sprintf("%s: unchanged (already this content)\n", path)
	case r.Created:
		return fmt.Sprintf("%s: created, %d bytes\n", path, r.BytesWritten)
	case r.Appended:
		return fmt.Sprintf("%s: appended, %d bytes\n", path, r.BytesWritten)
	}
	return fmt.Sprintf("%s: replaced, %d bytes\n", path, r.BytesWritten)
}

// editText renders an edit as text: the diff, as git prints it.
func editText(r *core.EditResult, p Palette) string {
	switch {
	case r.NoChange:
		return fmt.Sprintf("%s: unchanged (every edit was already applied)\n", p.Shown(fault.PathBytes(r.Path, r.PathBase64)))
	case r.DryRun:
		return p.diff(r.Diff) + fmt.Sprintf("%s: dry run, nothing written\n", p.Shown(fault.PathBytes(r.Path, r.PathBase64)))
	}
	return p.diff(r.Diff)
}

func rmText(r *core.RmResult, p Palette) string {
	path := p.Shown(fault.PathBytes(r.Path, r.PathBase64))
	if r.Deleted {
		return fmt.Sprintf("%s: removed\n", path)
	}
	return fmt.Sprintf("%s: not there, nothing removed\n", path)
}

// applyPatchText renders a patch as git apply --verbose would list it: the
// diffs, then one line per file.
func applyPatchText(r *core.ApplyPatchResult, p Palette) string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(p.diff(f.Diff))
	}
	for _, f := range r.Files {
		path := p.Shown(fault.PathBytes(f.Path, f.PathBase64))
		switch f.Action {
		case core.ActionMove:
			fmt.Fprintf(&b, "%s: moved from %s\n", path, p.Shown(f.From))
		case core.ActionUpdate:
			if f.NoChange {
				fmt.Fprintf(&b, "%s: unchanged (the patch leaves it as it is)\n", path)
				continue
			}
			fallthrough
		default:
			fmt.Fprintf(&b, "%s: %s\n", path, f.Action)
		}
	}
	if r.DryRun {
		b.WriteString("dry run, nothing written\n")
	}
	return b.String()
}

func mvText(r *core.MvResult, p Palette) string {
	from, to := p.Shown(fault.PathBytes(r.From, r.FromBase64)), p.Shown(fault.PathBytes(r.Path, r.PathBase64))
	if r.Overwritten {
		return fmt.Sprintf("%s -> %s (replaced)\n", from, to)
	}
	return fmt.Sprintf("%s -> %s\n", from, to)
}

// replaceText renders a replace as the diffs (a file whose diff the bound
// left out, or cut before its --- header, as its path and count: the cut
// marker alone named no file, and read as more of the diff before it),
// then the totals, with notes of the changed files not listed, of the
// files skipped, whose matches stay, and of diffs left out for a plan.
func replaceText(r *core.ReplaceResult, p Palette) (string, string) {
	var b, notes strings.Builder
	for _, f := range r.Files {
		if !strings.HasPrefix(f.Diff, "--- ") {
			fmt.Fprintf(&b, "%s: %d replacement(s)\n", paint(p.Path, p.Shown(fault.PathBytes(f.Path, f.PathBase64))), f.Count)
			continue
		}
		b.WriteString(p.diff(f.Diff))
	}
	fmt.Fprintf(&b, "%d replacement(s) in %d file(s)", r.Replacements, r.FilesChanged)
	if r.DryRun {
		b.WriteString(": dry run, nothing written")
	}
	b.WriteString("\n")
	if r.FilesOmitted > 0 {
		fmt.Fprintf(&notes, "... %d changed file(s) not listed: a larger --max-bytes lists them\n", r.FilesOmitted)
	}
	if r.Hint != "" {
		fmt.Fprintf(&notes, "... %s\n", r.Hint)
	}
	if r.BinarySkipped > 0 {
		fmt.Fprintf(&notes, "... %d binary file(s) skipped", r.BinarySkipped)
		if r.BinaryWithMatches > 0 {
			names := make([]string, len(r.BinaryMatches))
			for i, f := range r.BinaryMatches {
				names[i] = p.Shown(fault.PathBytes(f.Path, f.PathBase64))
			}
			fmt.Fprintf(&notes, ", %d with a match grep shows, left as they are: %s", r.BinaryWithMatches, strings.Join(names, ", "))
			if more := r.BinaryWithMatches - len(names); more > 0 {
				fmt.Fprintf(&notes, " and %d more", more)
			}
		}
		notes.WriteString("\n")
	}
	if r.Plan != "" {
		fmt.Fprintf(&notes, "... --expected-plan %s applies exactly this change, or nothing\n", r.Plan)
	}
	if r.DiffsInDryRun {
		notes.WriteString("... diffs not shown: the dry run that gave --expected-plan showed them\n")
	}
	notes.WriteString(unreadableNote(r.Unreadable, "file or directory", "files or directories"))
	return b.String(), notes.String()
}

// publishText renders a publish as the link alone, for a pipe, and what
// it serves and until when as a note.
func publishText(r *core.PublishResult, _ Palette) (string, string) {
	return r.URL + "\n", fmt.Sprintf("%s, %d bytes, sha256 %s, until %s\n", r.MIMEType, r.Size, r.SHA256, r.ExpiresAt.Format(time.RFC3339))
}
