package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/internal/editcases"
)

// FuzzEditMatch checks the plan's promise: applying an edit never changes
// a byte outside the range the ladder matched, writes newText in the file's
// line endings, and a plan through the index is the plan of the scans.
// (editmatch's FuzzLocate checks the matches themselves.)
func FuzzEditMatch(f *testing.F) {
	for _, s := range editcases.FuzzSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, src, old, new string) {
		if old == "" || old == new || !utf8.ValidString(old) || !utf8.ValidString(new) {
			return // refused before a plan (edit holds bytes that are not UTF-8)
		}
		tx := editmatch.New(src)
		ms := tx.Locate(old)
		out, outcomes, err := planBoth(t, src, []EditOp{{OldText: old, NewText: &new}})
		if err != nil {
			return
		}
		if outcomes[0].AlreadyApplied {
			// newText whole, as written or as a loose rung writes it
			// (editmatch.Kept), or around oldText's one match
			// (appliedAround).
			stands := func(old, new string, ms []editmatch.Match) bool {
				n := tx.Exact(new)
				if len(n) == 0 {
					n = tx.Kept(old, new)
				}
				if len(n) == 0 && len(ms) == 1 {
					// As the indentation or unicode rung writes it there.
					if written, _, _, err := tx.Rewriter(old, new, ms[0].Rung).Rewrite(ms[0]); err == nil {
						n = tx.Exact(written)
					}
				}
				around := len(ms) == 1 && len(n) == 1 && n[0].Start <= ms[0].Start && ms[0].End <= n[0].End
				return len(n) == 1 && (wholeLines(tx, n[0]) || around) && outcomes[0].Lines[0] == n[0].Line
			}
			ok := stands(old, new, ms)
			if o, n, joined := fromLineEnd(old, new); joined && !ok {
				// From the end of the line before: judged from the next
				// line, oldText's match too.
				var js []editmatch.Match
				for _, m := range ms {
					if eol := leadingEOL(src[m.Start:m.End]); eol > 0 {
						m.Start, m.Line = m.Start+eol, m.Line+1
					}
					js = append(js, m)
				}
				ok = stands(o, n, js)
			}
			if out != src || !ok {
				t.Fatalf("an already applied edit changed the content, or its newText does not stand whole once")
			}
			return
		}
		if outcomes[0].GutterStripped {
			stripped, first, _ := editmatch.StripGutter(old)
			if strings.TrimSpace(stripped) == "" {
				t.Fatalf("a gutter-only oldText was applied")
			}
			// The match at the line the gutter names, copies elsewhere
			// aside.
			ms = nil
			for _, m := range tx.LocateAtLines(stripped) {
				if start, _, _ := tx.Line(m.Line); m.Line == first && m.Start == start && !m.Uneven {
					ms = []editmatch.Match{m}
					break
				}
			}
		}
		if len(ms) != 1 {
			t.Fatalf("applied with %d matches", len(ms))
		}
		m := ms[0]
		tail := len(src) - m.End
		if len(out) < m.Start+tail || out[:m.Start] != src[:m.Start] || out[len(out)-tail:] != src[m.End:] {
			t.Fatalf("bytes outside [%d,%d) changed:\nsrc %q\nout %q", m.Start, m.End, src, out)
		}
		// The replaced region: newText in the file's line endings (a file
		// of CRLF gets no bare LF, a file without CR gets none), and on
		// the exact rung newText itself, line endings aside.
		region := out[m.Start : len(out)-tail]
		if strings.HasPrefix(src, "\xEF\xBB\xBF") && !strings.HasPrefix(out, "\xEF\xBB\xBF") {
			t.Fatalf("the byte-order mark was lost")
		}
		if crlfOnly(src) && strings.Contains(src, "\n") && !crlfOnly(region) {
			t.Fatalf("a bare LF written into a CRLF file: %q", region)
		}
		if !strings.ContainsRune(src, '\r') && !strings.ContainsRune(new, '\r') && strings.ContainsRune(region, '\r') {
			t.Fatalf("a CR written into a file without one: %q", region)
		}
		o := outcomes[0]
		if m.Rung == editmatch.RungExact && !o.Reindented && !o.Restyled && !o.GutterStripped &&
			strings.ReplaceAll(region, "\r\n", "\n") != strings.ReplaceAll(new, "\r\n", "\n") {
			t.Fatalf("the exact rung wrote %q for newText %q", region, new)
		}
	})
}

// crlfOnly reports text whose every LF ends a CRLF.
func crlfOnly(s string) bool {
	return strings.Count(s, "\n") == strings.Count(s, "\r\n")
}
