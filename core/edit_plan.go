package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/textfile"
)

// EditOutcome says how one edit of a batch was applied.
type EditOutcome struct {
	// Rung is the ladder rung that located oldText (see editmatch.Rung*).
	Rung string `json:"rung,omitempty"`
	// Replacements is how many regions were replaced (more than one only
	// with replaceAll).
	Replacements int `json:"replacements"`
	// Lines are the first lines of the replaced regions in the original
	// file, each once (a line of several regions is one line changed), at
	// most maxOutcomeLines of them; for an edit already applied, the first
	// line of its newText.
	Lines []int `json:"lines,omitempty"`
	// Reindented is set when newText was re-indented to the file's.
	Reindented bool `json:"reindented,omitempty"`
	// Restyled is set when the unicode rung matched and newText was written
	// with the file's own quotes, dashes and spaces instead of its own.
	Restyled bool `json:"restyled,omitempty"`
	// GutterStripped is set when a pasted line-number gutter was removed.
	GutterStripped bool `json:"gutterStripped,omitempty"`
	// AlreadyApplied is set when oldText is absent and newText already
	// stands whole, once (see alreadyApplied), or newText adds lines
	// around oldText and stands around its one match (see appliedAround):
	// the edit changes nothing.
	AlreadyApplied bool `json:"alreadyApplied,omitempty"`
}

// maxOutcomeLines bounds the line lists of outcomes and errors.
const maxOutcomeLines = 50

// region is one replacement of the plan.
type region struct {
	start, end int
	edit       int
	line       int
	repl       string
}

// planEdits matches every edit against the original src (content after the
// BOM) and returns the edited content and the outcome of each edit. It is
// all or nothing: any edit that does not match exactly one place (or any
// place, with replaceAll), or that overlaps another, fails the batch.
func planEdits(src string, edits []EditOp) (string, []EditOutcome, error) {
	return plan(editmatch.New(src), edits)
}

// plan is planEdits on a text.
func plan(t *editmatch.Text, edits []EditOp) (string, []EditOutcome, error) {
	src := t.Content()
	outcomes := make([]EditOutcome, len(edits))
	var regions []region
	var applied []claim // edits whose newText stands as their retry finds it
	size := len(src)    // of the edited text, as the regions so far make it
	for i, e := range edits {
		oldText, newText := e.OldText, *e.NewText
		if strings.HasSuffix(oldText, "\r") && strings.HasSuffix(newText, "\r") && len(t.Exact(oldText)) == 0 {
			// Lines copied with their CRLF but for the last LF: that CR
			// is the line's ending, in oldText and in newText. Matched
			// loosely, the line's own CRLF after the region, newText's
			// CR went before it ("line 2\r\r\n"), with success.
			oldText, newText = oldText+"\n", newText+"\n"
		}
		ms := t.Locate(oldText)
		if len(ms) == 0 {
			if stripped, first, ok := editmatch.StripGutter(oldText); ok && strings.TrimSpace(stripped) != "" {
				if m, ok := gutterMatch(t, t.LocateAtLines(stripped), first); ok {
					last := first + strings.Count(strings.TrimSuffix(stripped, "\n"), "\n")
					ms, oldText = []editmatch.Match{m}, stripped
					newText = editmatch.StripGutterLines(newText, first, last)
					outcomes[i].GutterStripped = true
				}
			}
		}
		if len(ms) == 0 {
			line, r := alreadyApplied(t, oldText, newText)
			if r == retried {
				outcomes[i].AlreadyApplied, outcomes[i].Lines = true, []int{line}
				applied = append(applied, claim{i, line, retryLines(oldText, newText)})
				continue
			}
			if line, ok := appliedBehindGutter(t, oldText, newText); ok {
				// A retried edit copied with its gutter: its newText, the
				// gutter stripped, stands at the line the gutter names.
				outcomes[i].AlreadyApplied, outcomes[i].GutterStripped, outcomes[i].Lines = true, true, []int{line}
				applied = append(applied, claim{i, line, lineCount(newText)})
				continue
			}
			e := noMatch(t, i, len(edits), oldText)
			if r == maybeRetried {
				// Neither a success nor a pointer to the other lines alone:
				// copying oldText from them made a retry's change twice.
				e.WithDetail("newTextLine", line).
					WithHint("newText already stands at line %d, and other lines are as like oldText: if this edit was made before, nothing is left to do; if not, read the file and copy oldText from the lines meant", line)
			}
			return "", nil, e
		}
		if k := slices.IndexFunc(ms, func(m editmatch.Match) bool { return m.Uneven }); k >= 0 {
			return "", nil, unevenAmong(t, i, len(edits), ms, ms[k])
		}
		if len(ms) > 1 && !e.ReplaceAll {
			return "", nil, ambiguous(i, len(edits), ms)
		}
		if !e.ReplaceAll && (ms[0].Rung != editmatch.RungExact || insideIndentation(t, oldText, ms[0])) && !outcomes[i].GutterStripped {
			// (A gutter names the line meant: a retry's oldText would be
			// gone from it, and no match found there.) An exact match
			// inside a deeper indentation is one Locate passes over for
			// a loose match elsewhere, which a first call changed:
			// retried, it changed a second place, with success.
			line, r := alreadyApplied(t, oldText, newText)
			if r == notRetried {
				line, r = appliedLoosely(t, oldText, newText, ms[0].Rung)
			}
			if r == notRetried {
				line, r = standsIndented(t, oldText, newText)
			}
			at := ms[0].Line
			if _, _, ok := fromLineEnd(oldText, newText); ok && leadingEOL(t.Content()[ms[0].Start:ms[0].End]) > 0 {
				at++ // oldText's text starts on the next line
			}
			if r != notRetried && line != at {
				return "", nil, looseBesideApplied(i, len(edits), ms[0], line)
			}
		}
		if !e.ReplaceAll {
			if line, ok := appliedAround(t, oldText, newText, ms[0]); ok {
				outcomes[i].AlreadyApplied, outcomes[i].Lines = true, []int{line}
				applied = append(applied, claim{i, line, retryLines(oldText, newText)})
				continue
			}
		}
		outcomes[i].Rung = ms[0].Rung
		rw := t.Rewriter(oldText, newText, ms[0].Rung)
		for _, m := range ms {
			if len(regions) > 0 && regions[len(regions)-1].edit == i && m.Start < regions[len(regions)-1].end {
				continue // a fuzzy replaceAll window overlapping the previous one
			}
			repl, restyled, reindented, err := rw.Rewrite(m)
			if err != nil {
				return "", nil, leftOfMargin(t, i, len(edits), m, err)
			}
			outcomes[i].Restyled = outcomes[i].Restyled || restyled
			outcomes[i].Reindented = outcomes[i].Reindented || reindented
			if size += len(repl) - (m.End - m.Start); size > maxPlannedText {
				return "", nil, textOverLimit("edit", "", size)
			}
			regions = append(regions, region{m.Start, m.End, i, m.Line, repl})
			outcomes[i].Replacements++
			if l := outcomes[i].Lines; len(l) < maxOutcomeLines && (len(l) == 0 || l[len(l)-1] != m.Line) {
				outcomes[i].Lines = append(l, m.Line)
			}
		}
	}
	if len(applied) > 0 && len(applied) < len(edits) {
		// A retried batch is applied whole; a batch of which only some edits
		// look applied meets a file in another state than it expects (a
		// stale oldText whose newText is a common line), and never lands.
		i, line := applied[0].edit, applied[0].line
		return "", nil, fault.Errorf(fault.CodeNoMatch, "edit %d looks already applied, its newText at line %d, while other edits of the batch are not applied.", i, line).
			WithDetail("edit", i).WithDetail("newTextLine", line).
			WithHint("the file is not in the state this batch expects: read it again and redo the edits")
	}
	if err := sharedClaim(applied); err != nil {
		return "", nil, err
	}
	sort.SliceStable(regions, func(a, b int) bool { return regions[a].start < regions[b].start })
	for k := 1; k < len(regions); k++ {
		if a, b := regions[k-1], regions[k]; b.start < a.end {
			return "", nil, fault.Errorf(fault.CodeOverlap, "edits %d and %d overlap (lines %d and %d).", min(a.edit, b.edit), max(a.edit, b.edit), a.line, b.line).
				WithHint("every edit applies to the original content: merge overlapping edits into one").
				WithDetail("edits", []int{min(a.edit, b.edit), max(a.edit, b.edit)}).
				WithDetail("lines", []int{a.line, b.line})
		}
	}
	var out strings.Builder
	out.Grow(len(src))
	at := 0
	for _, r := range regions {
		out.WriteString(src[at:r.start])
		out.WriteString(r.repl)
		at = r.end
	}
	out.WriteString(src[at:])
	return textfile.WithoutNewMarks(src, out.String(), marksPut(src, regions)), outcomes, nil
}

// marksPut counts the U+FEFF that newTexts wrote at the start of the
// text: those of the replacements that follow one another from the
// start (after the text's own marks), up to the first that holds
// anything else. A mark of the file's own text brought to the start is
// not one of them.
func marksPut(src string, regions []region) int {
	put, at := 0, len("\uFEFF")*textfile.LeadingMarks(src)
	for _, r := range regions {
		if r.start > at {
			break // the file's own text comes first
		}
		m := textfile.LeadingMarks(r.repl)
		put += m
		if m*len("\uFEFF") != len(r.repl) {
			break
		}
		at = r.end
	}
	return put
}

// claim is the lines where an edit taken for already applied finds its
// newText.
type claim struct{ edit, line, lines int }

// lineCount is the count of lines text spans, a final line ending aside.
func lineCount(text string) int {
	return strings.Count(strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), "\n") + 1
}

// retryLines is the count of lines a retry finds newText on, from its
// line: without the line ending it shares with oldText at its start,
// which is the line's before (see fromLineEnd).
func retryLines(oldText, newText string) int {
	_, n, _ := fromLineEnd(oldText, newText)
	return lineCount(n)
}

// sharedClaim refuses a retried batch two of whose edits find their
// newText on the same lines: one line cannot prove two edits made ("value
// = 1" and "valve = 1" both to "value = 2", or the same edit twice, which
// was OVERLAP before it could land), and exit 0 would report changes the
// file does not hold.
func sharedClaim(applied []claim) error {
	byLine := slices.SortedFunc(slices.Values(applied), func(a, b claim) int { return cmp.Compare(a.line, b.line) })
	for k := 1; k < len(byLine); k++ {
		if a, b := byLine[k-1], byLine[k]; b.line < a.line+a.lines {
			first, second := min(a.edit, b.edit), max(a.edit, b.edit)
			return fault.Errorf(fault.CodeNoMatch, "edits %d and %d look already applied, their newText on the same lines (%d and %d): one place cannot prove both edits made.", first, second, a.line, b.line).
				WithDetail("edit", second).WithDetail("edits", []int{first, second}).WithDetail("newTextLine", b.line).
				WithHint("the file is not in the state this batch expects: read it again and redo the edits")
		}
	}
	return nil
}

// appliedBehindGutter is alreadyApplied for an edit whose oldText carries
// a line-number gutter: newText stripped of it stands whole, once, at the
// line the gutter names.
func appliedBehindGutter(t *editmatch.Text, oldText, newText string) (int, bool) {
	stripped, first, ok := editmatch.StripGutter(oldText)
	if !ok || strings.TrimSpace(stripped) == "" || len(t.Locate(stripped)) > 0 {
		// Still there (at another line than the gutter names): not applied.
		return 0, false
	}
	last := first + strings.Count(strings.TrimSuffix(stripped, "\n"), "\n")
	line, r := alreadyApplied(t, stripped, editmatch.StripGutterLines(newText, first, last))
	// The gutter names the place: lines elsewhere as like oldText leave
	// no doubt of which was meant.
	return line, r != notRetried && line == first
}

// retry is what a file says of an edit whose oldText is not in it.
type retry int

const (
	// notRetried: newText does not stand as a landed edit's would.
	notRetried retry = iota
	// retried: the edit landed before, at newText's line.
	retried
	// maybeRetried: newText stands as a landed edit's would, but lines
	// elsewhere are as like oldText, which may be the edit's target (a
	// sibling in another section, a stale oldText): which was meant
	// cannot be told.
	maybeRetried
)

// alreadyApplied tells whether a retried edit landed before, with
// newText's line: its oldText is gone and its newText stands whole (from
// the start of a line to the end of a line) byte for byte, once in the
// file, but for white space at the ends of the lines it keeps of oldText,
// which a loose rung wrote as the file spells them (editmatch.Kept).
// newText that does not prove a retry (editmatch.RetryProof), part of
// oldText (an edit that deletes), in several places or inside a longer
// line ("y" in "key") says nothing of the kind, nor does a fuzzy likeness, nor
// oldText still there but for its spacing. oldText elsewhere but for its
// spacing ("timeout=60" for "timeout = 60", which no rung matches), or
// other lines as like it, leave it unproven: they may be the target.
func alreadyApplied(t *editmatch.Text, oldText, newText string) (int, retry) {
	o, n, joined := fromLineEnd(strings.ReplaceAll(oldText, "\r\n", "\n"), strings.ReplaceAll(newText, "\r\n", "\n"))
	if !editmatch.RetryProof(o, n) || strings.Contains(o, n) {
		return 0, notRetried
	}
	ms := t.Exact(n)
	if len(ms) == 0 {
		// As a loose rung wrote it: the lines newText keeps of oldText in
		// the file's spelling; its final line ending standing for the end
		// of a file that has none (see editmatch.Rewriter).
		ms = t.Kept(o, n)
	}
	if len(ms) != 1 || !wholeLines(t, ms[0]) || joined && ms[0].Line == 1 {
		return 0, notRetried
	}
	line := ms[0].Line
	span := t.LineAt(ms[0].End-1) - line + 1
	respacing := editmatch.Spaceless(o) == editmatch.Spaceless(n)
	for _, at := range t.Respaced(o) {
		switch {
		case respacing && at == line:
			// An edit of white space alone: newText is oldText respaced.
		case at+strings.Count(strings.TrimSuffix(o, "\n"), "\n") >= line && at < line+span:
			// oldText, respaced, is still where newText stands: the edit
			// was never made ("name=x\nage=30" for "age = 30").
			return 0, notRetried
		default:
			// oldText stands elsewhere but for its spacing: the target
			// the edit was meant for, or a sibling (gofmt's aligned
			// fields): which cannot be told.
			return line, maybeRetried
		}
	}
	if t.Rivalled(o, line, span) {
		return line, maybeRetried
	}
	return line, retried
}

// appliedAround tells whether an edit that adds lines around oldText
// (newText holds it once) landed before, with newText's line: oldText
// still matched, and was added around again on a retry. It did when
// oldText's one match m is exact, at a rung that ignores white space at
// the ends of lines, or at the indentation or unicode rung, and stands
// inside newText where newText puts it (as that rung wrote it: oldText's
// lines as the file spells them, see editmatch.Kept, or newText
// re-indented with m's lines or in the file's typography), and what newText adds is whole lines that tell one
// edit from another (telling). A blank line, a lone brace or text added
// within a line may be meant twice: such an edit applies again.
func appliedAround(t *editmatch.Text, oldText, newText string, m editmatch.Match) (int, bool) {
	if o, n, joined := fromLineEnd(oldText, newText); joined {
		// From the end of the line before: oldText's own lines start at
		// the next line, and so do the lines newText adds before them.
		if eol := leadingEOL(t.Content()[m.Start:m.End]); eol > 0 {
			oldText, newText = o, n
			m.Start, m.Line = m.Start+eol, m.Line+1
		}
	}
	o, n := strings.ReplaceAll(oldText, "\r\n", "\n"), strings.ReplaceAll(newText, "\r\n", "\n")
	k := strings.Index(n, o)
	spaced := m.Rung == editmatch.RungTrailingWhitespace || m.Rung == editmatch.RungWhitespace
	rewritten := m.Rung == editmatch.RungExact || m.Rung == editmatch.RungIndentation || m.Rung == editmatch.RungUnicode
	if !spaced && !rewritten || k < 0 || strings.Contains(n[k+1:], o) {
		return 0, false
	}
	before, after := n[:k], n[k+len(o):]
	if !editmatch.Telling(before + after) {
		return 0, false
	}
	// newText once at most: each copy holds a copy of oldText. The one
	// that holds m holds it at k, newText holding oldText once.
	var ns []editmatch.Match
	if spaced {
		ns = t.Kept(o, n)
	} else {
		// As the rung writes it at m: re-indented with the lines there,
		// or in the file's typography; from inside a deeper indentation,
		// its later lines in that indentation too.
		written, _, _, err := t.Rewriter(oldText, newText, m.Rung).Rewrite(m)
		if err != nil {
			return 0, false
		}
		ns = t.Exact(written)
		if src := t.Content(); len(ns) == 0 && !strings.HasSuffix(src, "\n") {
			// oldText's final line ending matched the end of a file
			// that has none, and newText's stood for it: the file ends
			// with newText's lines after oldText, without that ending
			// (see editmatch.Rewriter). Now oldText ends a line.
			if w, ok := trimEOL(written); ok {
				if at := t.Exact(w); len(at) == 1 && at[0].End == len(src) {
					ns = at
				}
			}
		}
	}
	if len(ns) != 1 || ns[0].Start > m.Start || ns[0].End < m.End {
		return 0, false
	}
	nm := ns[0]
	start, _, _ := t.Line(nm.Line)
	_, end, next := t.Line(t.LineAt(nm.End - 1))
	// The lines added start a line, or, for m found inside a deeper
	// indentation, at m's column in the same indentation: the rung wrote
	// newText's later lines after that indentation, and a first line at
	// a line's start above them is no edit's writing (the file held it
	// there by chance).
	indent, nested := t.IndentBefore(nm)
	mIndent, mNested := t.IndentBefore(m)
	lead := before
	if mNested {
		// newText that gave oldText's line the indentation m has
		// ("# note\n    print(x)" for "print(x)"): its lines before
		// oldText end there too.
		lead = strings.TrimSuffix(before, mIndent)
	}
	linesBefore := strings.HasSuffix(lead, "\n") && (!mNested && nm.Start == start || mNested && nested && indent == mIndent)
	// The last line may go on in white space only: oldText that ended
	// before a line's trailing spaces, matched exactly there, left them
	// after the lines added.
	endsLine := nm.End == next || nm.End <= end && strings.TrimRight(t.Content()[nm.End:end], " \t\r") == ""
	linesAfter := (strings.HasPrefix(after, "\n") || strings.HasSuffix(o, "\n")) && endsLine
	if before != "" && !linesBefore || after != "" && !linesAfter {
		return 0, false
	}
	return nm.Line, true
}

// standsIndented finds newText once in the file byte for byte, after a
// line's indentation (not at its start) to the end of a line: where an
// exact match after the indentation, or the indentation rung inside a
// deeper one, wrote it; or from a line's start to white space that ends
// the line, where an exact oldText that ended before the line's trailing
// spaces left them. It proves no retry (indented code may hold it
// already, and a line changed at a loose rung is written without the
// spaces), but beside a loose match elsewhere it may be one: retried,
// such an edit changed a sibling with success. maybeRetried, to refuse
// that, never to skip an edit: a first edit whose newText stands so by
// chance is refused too, its hint naming both lines, as the price of
// never changing the sibling.
func standsIndented(t *editmatch.Text, oldText, newText string) (int, retry) {
	o, n, joined := fromLineEnd(strings.ReplaceAll(oldText, "\r\n", "\n"), strings.ReplaceAll(newText, "\r\n", "\n"))
	if !editmatch.RetryProof(o, n) || strings.Contains(o, n) {
		return 0, notRetried
	}
	ms := t.Exact(n)
	if len(ms) != 1 || joined && ms[0].Line == 1 {
		return 0, notRetried
	}
	m := ms[0]
	start, _, _ := t.Line(m.Line)
	_, end, next := t.Line(t.LineAt(m.End - 1))
	spaced := m.End < end && strings.TrimRight(t.Content()[m.End:end], " \t") == ""
	switch _, indented := t.IndentBefore(m); {
	case m.Start == start && !spaced:
		return 0, notRetried // whole lines: alreadyApplied's to judge
	case m.Start != start && !indented:
		return 0, notRetried // after text
	case m.End != end && m.End != next && !spaced:
		return 0, notRetried
	}
	return m.Line, maybeRetried
}

// wholeLines reports whether m starts a line and ends one, before its
// terminator or after it (or at the end of the file).
func wholeLines(t *editmatch.Text, m editmatch.Match) bool {
	start, _, _ := t.Line(m.Line)
	if m.End <= m.Start || m.Start != start {
		return false
	}
	_, end, next := t.Line(t.LineAt(m.End - 1))
	return m.End == end || m.End == next
}

// gutterMatch is the match of a gutter-stripped oldText where the gutter
// said, starting a line on the line number the gutter gave; none there,
// no match. Otherwise "8080: web" in YAML or "3\tbanana" in a TSV would be
// taken for a gutter and edit another line. Other matches elsewhere do not
// matter: the gutter tells them apart, and a pasted block that repeats in
// the file was NO_MATCH, its closest region the copy the gutter did not
// name.
func gutterMatch(t *editmatch.Text, ms []editmatch.Match, first int) (editmatch.Match, bool) {
	for _, m := range ms {
		if start, _, _ := t.Line(m.Line); m.Line == first && m.Start == start && !m.Uneven {
			return m, true
		}
	}
	return editmatch.Match{}, false
}

// which names edit i in a message: "oldText" alone, or "edit 2's oldText".
func which(i, n int) string {
	if n == 1 {
		return "oldText"
	}
	return fmt.Sprintf("oldText of edit %d", i)
}

func noMatch(t *editmatch.Text, i, n int, old string) *fault.Error {
	if t.Content() == "" {
		// Nothing to copy oldText from: the hint to copy it sent an
		// agent to read the empty file again.
		return fault.Errorf(fault.CodeNoMatch, "%s was not found: the file is empty.", which(i, n)).WithDetail("edit", i).
			WithHint("the file is empty, nothing to copy oldText from: give it content with write (or write --append)")
	}
	e := fault.Errorf(fault.CodeNoMatch, "%s was not found in the file.", which(i, n)).WithDetail("edit", i)
	if c, ok := t.Closest(old); ok && c.Similarity >= 0.995 {
		// Equal but for whitespace, yet no rung took it: the indentation
		// differs unevenly, and a guess would move code.
		e.WithDetail("closest", c).
			WithHint("%s match but for indentation that differs from line to line: copy oldText from them with their indentation", editmatch.LineSpan(c.StartLine, c.EndLine))
	} else if ok && c.Similarity > 0 {
		e.WithDetail("closest", c).
			WithHint("the closest region is %s (similarity %.2f): read the region and copy oldText from it exactly", editmatch.LineSpan(c.StartLine, c.EndLine), c.Similarity)
	} else {
		e.WithHint("read the file and copy oldText from it exactly")
	}
	return e
}

// appliedLoosely finds newText as an edit found loosely wrote it, in the
// file's indentation or typography, once, on whole lines, at a rung
// stricter than rung, where oldText matched: retried, that edit found a
// sibling at a looser rung still (spacing and quotes both unlike), whose
// newText stood nowhere byte for byte.
//
// At the unicode rung itself too: a first call found oldText on whole
// lines there, beside a fragment of lines that overlaps them, which the
// rung then counts as no place; retried, the whole lines changed, the
// fragment, a sibling alike but for its typography, was the one match.
func appliedLoosely(t *editmatch.Text, oldText, newText, rung string) (int, retry) {
	oldText, newText, joined := fromLineEnd(oldText, newText)
	if !editmatch.RetryProof(oldText, newText) || strings.Contains(oldText, newText) {
		return 0, notRetried
	}
	ns := t.Locate(newText)
	if len(ns) == 0 {
		// Re-indented but for the lines of a literal, left as given.
		ns = t.LocateRewritten(oldText, newText)
	}
	if len(ns) != 1 || ns[0].Uneven || !wholeLines(t, ns[0]) || joined && ns[0].Line == 1 {
		return 0, notRetried
	}
	if !editmatch.Stricter(ns[0].Rung, rung) && (rung != editmatch.RungUnicode || ns[0].Rung != rung) {
		return 0, notRetried
	}
	return ns[0].Line, retried
}

// fromLineEnd is oldText and newText without the line ending both start
// with, copied from the end of the line before theirs (joined): the edit
// wrote newText's lines from the start of a line, where a retry finds
// them whole, after the first line.
func fromLineEnd(oldText, newText string) (o, n string, joined bool) {
	a, b := leadingEOL(oldText), leadingEOL(newText)
	if a == 0 || b == 0 {
		return oldText, newText, false
	}
	return oldText[a:], newText[b:], true
}

// leadingEOL is the length of the line ending s starts with, 0 for none.
func leadingEOL(s string) int {
	switch {
	case strings.HasPrefix(s, "\r\n"):
		return 2
	case strings.HasPrefix(s, "\n"):
		return 1
	}
	return 0
}

// trimEOL is s without its final line ending, and whether it had one.
func trimEOL(s string) (string, bool) {
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t, true
	}
	return strings.CutSuffix(s, "\n")
}

// insideIndentation reports whether m, an exact match of oldText, starts
// inside a line's longer indentation (four spaces of eight): no exact
// match for Locate, which takes a loose match elsewhere over it.
func insideIndentation(t *editmatch.Text, oldText string, m editmatch.Match) bool {
	if oldText == "" || oldText[0] != ' ' && oldText[0] != '\t' {
		return false
	}
	_, ok := t.IndentBefore(m)
	return ok
}

// looseBesideApplied is the NO_MATCH of an edit whose oldText matches
// only loosely, at m, while its newText stands whole at line newAt: a
// retry of the edit made there, whose oldText is gone, found a sibling
// alike but for its indentation, white space or typography and changed
// it, with success. Which was meant cannot be told. So too for an exact
// m inside a deeper indentation (see insideIndentation), which Locate
// passed over for the loose match the edit changed before.
func looseBesideApplied(i, n int, m editmatch.Match, newAt int) *fault.Error {
	how, from := "at the "+m.Rung+" rung", "exactly"
	if m.Rung == editmatch.RungExact {
		how, from = "inside its deeper indentation", "with its whole indentation"
	}
	return fault.Errorf(fault.CodeNoMatch, "%s matches line %d only %s, and newText already stands at line %d: the edit may have been made there before.", which(i, n), m.Line, how, newAt).
		WithDetail("edit", i).WithDetail("newTextLine", newAt).WithDetail("lines", []int{m.Line}).WithDetail("rung", m.Rung).
		WithHint("if this edit was made before, nothing is left to do; if it is meant for line %d, copy oldText from there %s", m.Line, from)
}

// leftOfMargin is the NO_MATCH of an edit whose oldText matched m only
// indented less than given, and whose newText has a line indented less
// still, which re-indented would go left of column 0 (err, a
// *editmatch.MarginError). That line was meant either where it stands or
// relative to oldText, which cannot be told: written at the margin, it
// lost its indentation relative to the others (Python's IndentationError),
// with success.
func leftOfMargin(t *editmatch.Text, i, n int, m editmatch.Match, err error) error {
	var me *editmatch.MarginError
	if !errors.As(err, &me) {
		return err
	}
	last := t.LineAt(max(m.Start, m.End-1))
	lines := editmatch.LineSpan(m.Line, last)
	return fault.Errorf(fault.CodeNoMatch, "%s matched %s only with %d columns less indentation than given, and newText's line %d would go left of the margin.", which(i, n), lines, me.Columns, me.Line).
		WithDetail("edit", i).WithDetail("lines", []int{m.Line, last}).WithDetail("columns", me.Columns).
		WithDetail("newTextLine", me.Line).WithDetail("rung", m.Rung).
		WithHint("read %s and copy oldText and newText with the file's own indentation", lines)
}

// unevenAmong is the AMBIGUOUS_MATCH of an oldText that matches, at its
// rung, a window whose indentation differs from line to line (u) beside
// other places: that window cannot be rewritten without moving code, so
// neither one edit nor replaceAll may go on (the hint named replaceAll,
// which then failed as well).
func unevenAmong(t *editmatch.Text, i, n int, ms []editmatch.Match, u editmatch.Match) *fault.Error {
	last := t.LineAt(max(u.Start, u.End-1))
	e := ambiguous(i, n, ms)
	e.Message = strings.TrimSuffix(e.Message, ".") + "; " + editmatch.LineSpan(u.Line, last) + " only but for indentation that differs from line to line, which cannot be re-indented."
	even := ms[slices.IndexFunc(ms, func(m editmatch.Match) bool { return !m.Uneven })]
	return e.WithHint("add surrounding lines to --old-text so it matches one place, or edit %s apart, copying oldText from them with their indentation", editmatch.LineSpan(u.Line, last)).
		WithDetail("unevenLines", []int{u.Line, last}).WithDetail("rung", even.Rung)
}

func ambiguous(i, n int, ms []editmatch.Match) *fault.Error {
	var lines []int // each line with a match once, at most maxOutcomeLines
	var on []int    // the matches on each of lines
	listed := 0     // the matches on those lines
	for _, m := range ms {
		if len(lines) == 0 || lines[len(lines)-1] != m.Line {
			if len(lines) == maxOutcomeLines {
				break
			}
			lines, on = append(lines, m.Line), append(on, 0)
		}
		on[len(on)-1]++
		listed++
	}
	// A line of several places says how many: "2 places, at lines 1"
	// named one.
	list := make([]string, len(lines))
	for k, l := range lines {
		switch list[k] = itoa(l); {
		case on[k] == 2:
			list[k] += " (twice)"
		case on[k] > 2:
			list[k] += fmt.Sprintf(" (%d times)", on[k])
		}
	}
	more := ""
	if len(ms) > listed {
		more = fmt.Sprintf(" and %d more", len(ms)-listed)
	}
	at := "lines"
	if len(lines) == 1 && more == "" {
		at = "line"
	}
	// --replace-all, which the hint offers, takes places that overlap
	// first come first (as plan does), fewer than were counted.
	taken, end := 0, -1
	for _, m := range ms {
		if m.Start >= end {
			taken, end = taken+1, m.End
		}
	}
	if taken < len(ms) {
		more += fmt.Sprintf(", some overlapping: --replace-all replaces %d of them", taken)
	}
	return fault.Errorf(fault.CodeAmbiguousMatch, "%s matches %d places, at %s %s%s.", which(i, n), len(ms), at, strings.Join(list, ", "), more).
		WithHint("add surrounding lines to --old-text so it matches one place, or pass --replace-all").
		WithDetail("edit", i).WithDetail("lines", lines).WithDetail("count", len(ms)).WithDetail("rung", ms[0].Rung)
}
