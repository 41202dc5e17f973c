package editmatch

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/internal/linediff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Rewriter writes one edit's newText for each region the ladder located
// for its oldText, as the rung that matched requires: in the file's
// typography for the unicode rung (see restyler), re-indented for the
// indentation rung, and in the line endings of the region it replaces. On
// every rung but the exact one, a line newText keeps of oldText is written
// as the region spells it (see kept).
type Rewriter struct {
	t       *Text
	newText string // with LF endings
	rs      *restyler
	// kept maps each line of newText that keeps a line of oldText, an
	// equal run of their line diff, to that line's index in oldText: the
	// region's spelling of it carries what the rung ignored (a Markdown
	// hard break, a form feed line, a trailing NBSP), which newText as
	// written dropped and apply-patch's context lines keep. A line moved
	// is no line kept. Nil on the exact rung.
	kept map[int]int
	// oldNL: oldText ends with a line ending.
	oldNL bool
	// own is newText's line ending (CRLF when all of them are), which it
	// keeps in a file with none.
	own string
	// nestable: oldText is one indented line, whose exact match inside a
	// deeper indentation shifts newText's later lines with it; or one
	// line without indentation that newText keeps on a later line at
	// column 0, written as if oldText's column were column 0 (see
	// keptFlush).
	nestable bool
	// asGiven marks the lines of newText that re-indentation leaves as
	// given, inside a literal (see literalSpans); nil when none.
	asGiven []bool
}

// Rewriter prepares newText to replace the matches of oldText, found at
// rung.
func (t *Text) Rewriter(oldText, newText, rung string) *Rewriter {
	w := &Rewriter{t: t, newText: strings.ReplaceAll(newText, "\r\n", "\n"), oldNL: strings.HasSuffix(oldText, "\n"), own: "\n"}
	if n := strings.Count(newText, "\r\n"); n > 0 && n == strings.Count(newText, "\n") {
		w.own = "\r\n"
	}
	if rung == RungUnicode {
		w.rs = newRestyler(t, oldText, w.newText)
	}
	if rung != RungExact {
		w.kept = keptLines(oldText, w.newText)
	}
	w.asGiven = asGivenLines(oldText, w.newText, w.kept)
	o := strings.TrimSuffix(strings.ReplaceAll(oldText, "\r\n", "\n"), "\n")
	w.nestable = o != "" && !strings.Contains(o, "\n") && (o[0] == ' ' || o[0] == '\t' || keptFlush(o, w.newText))
	return w
}

// keptFlush reports whether a later line of newText is o itself, at
// column 0. Found after a line's indentation ("print(x)" in "    print(x)"),
// such an oldText had newText written in its own frame ("# note\nprint(x)"):
// as given, the line kept went to column 0, out of its block, where a
// caller writing for the file's columns gives it the indentation
// ("# note\n    print(x)"), and is written as given.
func keptFlush(o, newText string) bool {
	_, later, ok := strings.Cut(newText, "\n")
	return ok && slices.Contains(strings.Split(strings.TrimSuffix(later, "\n"), "\n"), o)
}

// keptLines maps each line of newText that keeps a line of oldText as
// written, in an equal run of their line diff, to that line's index in
// oldText (a final line ending starts an empty line).
func keptLines(oldText, newText string) map[int]int {
	kept := map[int]int{}
	i, j := 0, 0
	for _, d := range lineDiff(strings.Split(strings.ReplaceAll(oldText, "\r\n", "\n"), "\n"), strings.Split(strings.ReplaceAll(newText, "\r\n", "\n"), "\n")) {
		switch d.op {
		case diffmatchpatch.DiffEqual:
			for range d.n {
				kept[j] = i
				i, j = i+1, j+1
			}
		case diffmatchpatch.DiffDelete:
			i += d.n
		case diffmatchpatch.DiffInsert:
			j += d.n
		}
	}
	return kept
}

// Kept finds newText on whole lines as an edit of oldText located at the
// trailing-whitespace or whitespace rung wrote it: each line newText keeps
// of oldText as the file spells it, white space at its ends aside (see
// Rewriter) but its indentation at newText's columns, and every other line
// byte for byte; in order, each at the whitespace rung. A retry of such an
// edit finds its newText there, and nowhere byte for byte. A kept line at
// another column is no rung's writing (a rung that moves a line's column
// re-indents every line, a literal's aside, and a literal that keeps a
// line of oldText whole): "cache:" at the top of a YAML file is not the
// "  cache:" newText keeps, nor the block under it newText's.
//
// It returns the first two places at most: its callers ask whether
// newText stands once. The windows whose lines are newText's, white space
// at their ends aside, are found by a scan (seek); a few are then checked
// line by line, many that overlap are first filtered by sums (keptSums):
// every window checked line by line took minutes for a file of like lines
// and a newText of many.
func (t *Text) Kept(oldText, newText string) []Match {
	kept := keptLines(oldText, newText)
	want, withEOL := splitLines(strings.ReplaceAll(newText, "\r\n", "\n"))
	n, m := len(t.lines), len(want)
	if m > n {
		return nil
	}
	isKept := make([]bool, m)
	trimmed := make([]string, m)
	for i, w := range want {
		_, isKept[i] = kept[i]
		trimmed[i] = strings.TrimSpace(w)
	}
	// The whitespace rung's keys, which Locate may have made.
	starts := Starts(t.keyed(keyOf(RungWhitespace)), trimmed, &t.steps)
	if len(starts) > 2 && (t.denseKept || len(starts)*m > 8*(n+m)) {
		starts = t.keptSums(want, isKept, starts)
	}
	var ms []Match
	var keptWant, keptHave []string
windows:
	for _, s := range starts {
		if len(ms) == 2 {
			break
		}
		keptWant, keptHave = keptWant[:0], keptHave[:0]
		for i, w := range want {
			t.steps++
			if !isKept[i] && t.content(s+i) != w {
				continue windows
			}
			if isKept[i] {
				keptWant, keptHave = append(keptWant, w), append(keptHave, t.content(s+i))
			}
		}
		if !SameColumns(keptWant, keptHave) {
			continue
		}
		last := t.lines[s+m-1]
		m := Match{Start: t.lines[s].start, End: last.end, Line: s + 1, Rung: RungWhitespace}
		if withEOL {
			m.End = last.next
		}
		ms = append(ms, m)
	}
	return ms
}

// MarginError is the error of an edit whose newText cannot be re-indented
// for a region: the region's lines stand Columns columns left of oldText's,
// and newText's line Line (1-based) is indented less than that.
type MarginError struct{ Line, Columns int }

func (e *MarginError) Error() string {
	return fmt.Sprintf("newText's line %d would go left of the margin, shifted %d columns left", e.Line, e.Columns)
}

// Rewrite returns newText as it replaces m, and whether it was written in
// the file's typography (restyled) or re-indented to the file's
// indentation. It fails with a *MarginError when a line of newText would
// go left of column 0 as re-indented.
func (w *Rewriter) Rewrite(m Match) (repl string, restyled, reindented bool, err error) {
	repl = w.newText
	if w.rs != nil {
		repl, restyled = w.rs.restyle(m, repl)
	}
	if sh := m.reindent; sh != nil {
		tabs := sh.tabs
		if !sh.indented {
			// The region has no indentation of its own to tell tabs
			// from spaces: the file's.
			tabs = w.t.tabIndented()
		}
		var bad int
		if repl, bad = reindentText(repl, sh, tabs, w.asGiven); bad > 0 {
			return "", false, false, &MarginError{Line: bad, Columns: -sh.d}
		}
		reindented = true
	}
	atEnd := w.oldNL && m.End == len(w.t.src) && !strings.HasSuffix(w.t.src, "\n")
	if w.kept != nil {
		repl = w.keep(repl, m, atEnd)
	}
	if (m.Rung == RungExact || m.Rung == RungUnicode) && w.nestable {
		// Found inside a deeper indentation (exact with replaceAll
		// beside a match at a line's start, else Locate tried the fuzzy
		// rungs first; or a unicode rung's fragment of a line), or, kept
		// flush on a later line, after the line's indentation: newText's
		// first line follows the line's indentation, and its later lines
		// take the same, or they left their block. (After keep, which
		// spells a kept line as the fragment does, from mid-indentation.)
		if deeper, ok := w.t.IndentBefore(m); ok {
			if shifted := indentLater(repl, deeper, w.asGiven); shifted != repl {
				repl, reindented = shifted, true
			}
		}
	}
	if atEnd {
		// oldText's final line ending matched the end of a file that has
		// none: newText's stands for it, and the file keeps having none.
		repl = strings.TrimSuffix(repl, "\n")
	}
	return w.t.withEndings(repl, m.Start, m.End, w.own, lineKey(m.Rung)), restyled, reindented, nil
}

// indentLater puts prefix before each line of s but the first, blank
// lines and those asGiven marks aside.
func indentLater(s, prefix string, asGiven []bool) string {
	lines := strings.Split(s, "\n")
	given := marked(asGiven, len(lines))
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" && !given(i) {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// marked reads asGiven for a text of n lines: a mark for every line, or
// none (newText restyled into other lines is shifted whole).
func marked(asGiven []bool, n int) func(i int) bool {
	if len(asGiven) != n {
		return func(int) bool { return false }
	}
	return func(i int) bool { return asGiven[i] }
}

// keep writes the lines of repl that newText keeps of oldText as the
// region of m spells them: the restyler gave them the file's typography
// already, but not what the rung ignored. atEnd: oldText's final line
// ending matched the end of a file without one, which the region lacks.
// The region has oldText's lines one for one: the fuzzy rungs match whole
// lines, and the unicode rung's fragments fold line ending for line
// ending.
func (w *Rewriter) keep(repl string, m Match, atEnd bool) string {
	region := strings.Split(strings.ReplaceAll(w.t.src[m.Start:m.End], "\r\n", "\n"), "\n")
	if atEnd {
		region = append(region, "")
	}
	pieces := strings.Split(repl, "\n")
	for j, i := range w.kept {
		pieces[j] = region[i]
	}
	return strings.Join(pieces, "\n")
}

// withEndings gives repl, with LF endings, those of the region
// [start,end) it replaces: a line of newText that is a line of the region
// (as a line diff by key, the rung's line key, pairs them) keeps that
// line's ending, one that replaces
// a line takes the ending of the line it replaces, and a line added takes
// the region's usual ending (eolAt). In a file of mixed endings a line
// newText keeps keeps its own: with one ending for the whole region, a
// CRLF line before an LF line became LF, and with the endings handed out
// in order, a line added or removed shifted all those after it. Lines are
// compared by key: at a fuzzy rung the region's lines never equal
// newText's as written, and all of them paired as changed shifted the
// endings the same way.
func (t *Text) withEndings(repl string, start, end int, own string, key func(string) string) string {
	old := t.regionLines(start, end)
	usual := t.eolAt(start, end, own)
	mixed := false
	for _, l := range old {
		mixed = mixed || l.eol != "" && l.eol != usual
	}
	if !mixed {
		if usual == "\n" {
			return repl
		}
		return strings.ReplaceAll(repl, "\n", usual)
	}
	pieces := strings.Split(repl, "\n") // all but the last end with a line ending
	eols := make([]string, len(pieces))
	for i := range eols {
		eols[i] = usual
	}
	oldKeys, newKeys := make([]string, len(old)), make([]string, len(pieces))
	for i, l := range old {
		oldKeys[i] = key(l.text)
	}
	for i, p := range pieces {
		newKeys[i] = key(p)
	}
	// deleted and inserted are the lines of a change, between equal ones:
	// paired in order, but for the last of each, which pair with each
	// other (the text after the change goes on as it did); a line added
	// beyond them keeps the usual ending.
	var deleted, inserted []int
	take := func(d, i int) {
		if e := old[d].eol; e != "" {
			eols[i] = e
		}
	}
	pair := func() {
		n := min(len(deleted), len(inserted))
		for k := 0; k+1 < n; k++ {
			take(deleted[k], inserted[k])
		}
		if n > 0 {
			take(deleted[len(deleted)-1], inserted[len(inserted)-1])
		}
		deleted, inserted = deleted[:0], inserted[:0]
	}
	i, j := 0, 0
	for _, d := range lineDiff(oldKeys, newKeys) {
		switch d.op {
		case diffmatchpatch.DiffEqual:
			pair()
			for range d.n {
				take(i, j)
				i, j = i+1, j+1
			}
		case diffmatchpatch.DiffDelete:
			for range d.n {
				deleted, i = append(deleted, i), i+1
			}
		case diffmatchpatch.DiffInsert:
			for range d.n {
				inserted, j = append(inserted, j), j+1
			}
		}
	}
	pair()
	var b strings.Builder
	for k, p := range pieces {
		b.WriteString(p)
		if k < len(pieces)-1 {
			b.WriteString(eols[k])
		}
	}
	return b.String()
}

// regionLine is a line of a region: its text and its ending, "" when
// unknown (the region's last line, when the region ends inside a line).
type regionLine struct{ text, eol string }

// regionLines cuts [start,end) into lines. The last is what follows the
// region's last line ending; when the region ends where that line's
// content ends, its ending is the file's, after the region.
func (t *Text) regionLines(start, end int) []regionLine {
	var out []regionLine
	at := start
	for i := t.LineAt(start) - 1; i < len(t.lines) && t.lines[i].next <= end; i++ {
		if l := t.lines[i]; l.end >= start && l.next > l.end {
			out = append(out, regionLine{t.src[at:l.end], t.src[l.end:l.next]})
			at = l.next
		}
	}
	last := regionLine{text: t.src[at:end]}
	if n := t.LineAt(end); n <= len(t.lines) && t.lines[n-1].end == end && end > at {
		last.eol = t.src[t.lines[n-1].end:t.lines[n-1].next]
	}
	return append(out, last)
}

// lineOp is one run of a line diff: n lines, equal, deleted or inserted.
type lineOp struct {
	op diffmatchpatch.Operation
	n  int
}

// lineDiff diffs two lists of lines.
func lineDiff(a, b []string) []lineOp {
	dmp := diffmatchpatch.New()
	join := func(ls []string) string {
		var s strings.Builder
		for _, l := range ls {
			s.WriteString(l)
			s.WriteByte('\n')
		}
		return s.String()
	}
	ra, rb, _ := dmp.DiffLinesToRunes(join(a), join(b))
	var out []lineOp
	for _, d := range linediff.Runes(dmp, ra, rb) {
		out = append(out, lineOp{d.Type, utf8.RuneCountInString(d.Text)})
	}
	return out
}

// Line is the extent of the 1-based line n: its content [start,end), its
// terminator [end,next).
func (t *Text) Line(n int) (start, end, next int) {
	l := t.lines[n-1]
	return l.start, l.end, l.next
}

// Content is the content the Text was made of.
func (t *Text) Content() string { return t.src }
