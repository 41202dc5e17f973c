package editmatch

import "strings"

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
	if eol := w.t.eolAt(m.Start, m.End); eol != "\n" {
		repl = strings.ReplaceAll(repl, "\n", eol)
	}
	return repl, restyled, reindented
}

// Line is the extent of the 1-based line n: its content [start,end), its
// terminator [end,next).
func (t *Text) Line(n int) (start, end, next int) {
	l := t.lines[n-1]
	return l.start, l.end, l.next
}

// Content is the content the Text was made of.
func (t *Text) Content() string { return t.src }
