package editmatch

import (
	"slices"
	"strings"
)

// Rewriter writes one edit's newText for each region the ladder located
// for its oldText, as the rung that matched requires: in the file's
// typography for the unicode rung (see restyler), re-indented for the
// indentation rung, and in the line endings of the region it replaces.
type Rewriter struct {
	t       *Text
	newText string // with LF endings
	rs      *restyler
	// oldNL: oldText ends with a line ending.
	oldNL bool
}

// Rewriter prepares newText to replace the matches of oldText, found at
// rung.
func (t *Text) Rewriter(oldText, newText, rung string) *Rewriter {
	w := &Rewriter{t: t, newText: strings.ReplaceAll(newText, "\r\n", "\n"), oldNL: strings.HasSuffix(oldText, "\n")}
	if rung == RungUnicode {
		w.rs = newRestyler(t, oldText, w.newText)
	}
	return w
}

// Rewrite returns newText as it replaces m, and whether it was written in
// the file's typography (restyled) or re-indented to the file's indentation.
func (w *Rewriter) Rewrite(m Match) (repl string, restyled, reindented bool) {
	repl = w.newText
	if w.rs != nil {
		repl, restyled = w.rs.restyle(m, repl)
	}
	if m.reindent != nil {
		repl, reindented = reindentText(repl, m.reindent), true
	}
	if w.oldNL && m.End == len(w.t.src) && !strings.HasSuffix(w.t.src, "\n") {
		// oldText's final line ending matched the end of a file that has
		// none: newText's stands for it, and the file keeps having none.
		repl = strings.TrimSuffix(repl, "\n")
	}
	return w.t.withEndings(repl, m.Start, m.End), restyled, reindented
}

// withEndings gives repl, with LF endings, those of the region
// [start,end) it replaces, in their places: its last line ending is the
// region's last, the ones before it the region's in order, and those past
// the region's (lines added) the region's usual ending (eolAt). In a file
// of mixed endings, a line newText keeps keeps its own: with one ending
// for the whole region, a CRLF line before an LF line became LF, at the
// exact rung too.
func (t *Text) withEndings(repl string, start, end int) string {
	eols := t.endingsIn(start, end)
	usual := t.eolAt(start, end)
	if usual == "\n" && !slices.Contains(eols, "\r\n") {
		return repl
	}
	n, k := strings.Count(repl, "\n"), len(eols)
	var b strings.Builder
	for i := 0; ; i++ {
		line, rest, found := strings.Cut(repl, "\n")
		b.WriteString(line)
		if !found {
			return b.String()
		}
		switch {
		case i == n-1 && k > 0:
			b.WriteString(eols[k-1])
		case i < k-1:
			b.WriteString(eols[i])
		default:
			b.WriteString(usual)
		}
		repl = rest
	}
}

// endingsIn lists the line endings that lie whole in [start,end), in order.
func (t *Text) endingsIn(start, end int) []string {
	var eols []string
	for i := t.LineAt(start) - 1; i < len(t.lines) && t.lines[i].next <= end; i++ {
		if l := t.lines[i]; l.end >= start && l.next > l.end {
			eols = append(eols, t.src[l.end:l.next])
		}
	}
	return eols
}

// Line is the extent of the 1-based line n: its content [start,end), its
// terminator [end,next).
func (t *Text) Line(n int) (start, end, next int) {
	l := t.lines[n-1]
	return l.start, l.end, l.next
}

// Content is the content the Text was made of.
func (t *Text) Content() string { return t.src }
