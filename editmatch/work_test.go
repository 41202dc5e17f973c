package editmatch

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLooseWork: the fuzzy rungs' work grows with the lines of the text
// and of oldText, not with their product. A text of 20,000 like lines and
// an oldText of 200 that matches nearly everywhere compared every line of
// oldText with every window, twice (key, then indentation): 8 million
// steps; 200,000 lines and 2,000 took a minute and a half. Within a line
// (the unicode rung's fragments, an exact match inside deeper
// indentation), each match was checked against every window.
func TestLooseWork(t *testing.T) {
	const n, m = 20000, 200
	for _, tc := range []struct {
		name, line, old string
		count           int
		rung            string
	}{
		{"re-indented everywhere", "  x\n", strings.Repeat("\tx\n", m), n - m + 1, RungIndentation},
		{"all lines but the last everywhere", "  x\n", strings.Repeat("x \n", m) + "y", 0, ""},
		{"blank lines between, everywhere", "  x\n\n", strings.Repeat("\tx\n\n", m/2), n - m/2 + 1, RungIndentation},
		{"typography everywhere", "  it\u2019s\n", "it's", n, RungUnicode},
		{"found inside deeper indentation everywhere", "        x\n", "    x", n, RungIndentation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := New(strings.Repeat(tc.line, n))
			ms := tx.Locate(tc.old)
			if len(ms) != tc.count || tc.count > 0 && ms[0].Rung != tc.rung {
				t.Fatalf("%d matches (%+v...), want %d at %s", len(ms), ms[:min(len(ms), 1)], tc.count, tc.rung)
			}
			lines := len(tx.lines) + strings.Count(tc.old, "\n") + 1
			if limit := 64 * lines; tx.steps > limit {
				t.Errorf("%d steps for %d lines of text and oldText, want at most %d", tx.steps, lines, limit)
			}
		})
	}
}

// TestLooseWorkSameMatches: the bounded search finds what checking every
// window line by line found (refLocate, the ladder as it was), for texts
// of like lines in mixed indentation that put many windows through the
// sums and scans of indents, and for a few windows that are compared line
// by line.
func TestLooseWorkSameMatches(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	indents := []string{"", "", " ", "  ", "    ", "\t", "\t ", "\t\t", " \t", "        ", "\t  "}
	bodies := []string{"x", "x", "x", "x ", "y", "", "", " ", "\u200b", "\u2019", "'"}
	line := func() string { return indents[rnd.IntN(len(indents))] + bodies[rnd.IntN(len(bodies))] }
	for round := range 5000 {
		n, m := 1+rnd.IntN(60), 1+rnd.IntN(6)
		lines := make([]string, n)
		// Few kinds of lines, so that windows match often.
		kinds := []string{line(), line(), line()}
		for j := range lines {
			if lines[j] = kinds[rnd.IntN(len(kinds))]; rnd.IntN(8) == 0 {
				lines[j] = line()
			}
		}
		src := strings.Join(lines, "\n")
		if rnd.IntN(2) == 0 {
			src += "\n"
		}
		var old string
		if s := rnd.IntN(n); rnd.IntN(3) > 0 && s+m <= n {
			// A window of the text, each line re-indented by one change
			// or another.
			shift := indents[rnd.IntN(len(indents))]
			o := make([]string, m)
			for i := range o {
				l := lines[s+i]
				body := strings.TrimLeft(l, " \t")
				switch rnd.IntN(4) {
				case 0:
					o[i] = l
				case 1:
					o[i] = shift + l
				case 2:
					o[i] = strings.ReplaceAll(l[:len(l)-len(body)], "\t", "  ") + body
				default:
					o[i] = line()
				}
			}
			old = strings.Join(o, "\n")
		} else {
			o := make([]string, m)
			for i := range o {
				o[i] = line()
			}
			old = strings.Join(o, "\n")
		}
		if rnd.IntN(2) == 0 {
			old += "\n"
		}
		if strings.TrimSpace(old) == "" {
			continue
		}
		for _, force := range []bool{false, true} {
			tx := New(src)
			tx.allIndents = force
			got, want := tx.Locate(old), refLocate(New(src), old)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d (indents forced: %v): Locate(%q) in %q =\n%+v\nwant\n%+v", round, force, old, src, got, want)
			}
		}
	}
}

// refLocate is Locate as it was, checking every window line by line.
func refLocate(t *Text, old string) []Match {
	exact := t.Exact(old)
	if len(exact) == 0 {
		return refLocateLoosely(t, old)
	}
	if !t.withinIndentation(old, exact) {
		return exact
	}
	ms := slices.DeleteFunc(refLocateLoosely(t, old), func(m Match) bool {
		return (m.reindent != nil || m.Uneven) && !slices.ContainsFunc(exact, func(e Match) bool {
			return m.Start <= e.Start && e.End <= m.End
		})
	})
	if !slices.ContainsFunc(ms, func(m Match) bool { return !m.Uneven }) || sameSpans(ms, exact) {
		return exact
	}
	return ms
}

func refLocateLoosely(t *Text, old string) []Match {
	oldLines, withEOL := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	blank := true
	for _, l := range oldLines {
		blank = blank && strings.TrimSpace(l) == ""
	}
	if blank || len(oldLines) > len(t.lines) {
		return nil
	}
	for _, lk := range lineKeys {
		want := make([]string, len(oldLines))
		for i, l := range oldLines {
			want[i] = lk.key(l)
		}
		if !slices.ContainsFunc(want, func(w string) bool { return w != "" }) {
			continue
		}
		have := make([]string, len(t.lines))
		for i := range t.lines {
			have[i] = lk.key(t.content(i))
		}
		var ms []Match
	windows:
		for s := 0; s+len(want) <= len(have); s++ {
			for i, w := range want {
				if have[s+i] != w {
					continue windows
				}
			}
			last := t.lines[s+len(want)-1]
			m := Match{Start: t.lines[s].start, End: last.end, Line: s + 1, Rung: lk.rung}
			if withEOL {
				m.End = last.next
			}
			if lk.rung != RungTrailingWhitespace {
				got := make([]string, len(want))
				for i := range got {
					got[i] = t.content(s + i)
				}
				f, fits := indentTransform(oldLines, got)
				if !fits {
					m.Uneven = true
					ms = append(ms, m)
					continue
				}
				if f != nil {
					m.reindent = f
					if m.Rung == RungWhitespace {
						m.Rung = RungIndentation
					}
				}
			}
			ms = append(ms, m)
		}
		if lk.rung == RungUnicode {
			windows := ms[:len(ms):len(ms)]
			for _, m := range t.folded(old) {
				if !slices.ContainsFunc(windows, func(w Match) bool { return !w.Uneven && overlaps(m, w) }) {
					ms = append(ms, m)
				}
			}
			slices.SortStableFunc(ms, func(a, b Match) int { return a.Start - b.Start })
		}
		ms = slices.DeleteFunc(slices.Clone(ms), func(u Match) bool {
			return u.Uneven && slices.ContainsFunc(ms, func(m Match) bool { return !m.Uneven && overlaps(m, u) })
		})
		if slices.ContainsFunc(ms, func(m Match) bool { return !m.Uneven }) {
			return ms
		}
	}
	return nil
}

// TestSeek: seek finds every occurrence, overlapping ones included, in
// order, as a check of every window does.
func TestSeek(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		text, pat := make([]int, rnd.IntN(30)), make([]int, rnd.IntN(5))
		for j := range text {
			text[j] = rnd.IntN(3)
		}
		for i := range pat {
			pat[i] = rnd.IntN(3)
		}
		var want, got []int
		for s := 0; s+len(pat) <= len(text); s++ {
			if slices.Equal(text[s:s+len(pat)], pat) {
				want = append(want, s)
			}
		}
		steps := 0
		seek(text, pat, &steps, func(s int) bool {
			got = append(got, s)
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("seek(%v, %v) = %v, want %v", text, pat, got, want)
		}
		if steps > 2*(len(text)+len(pat)) {
			t.Fatalf("seek(%v, %v) took %d steps", text, pat, steps)
		}
	}
}

// overlaps is the reference model's test of two spans, which spans.overlap
// answers by a binary search.
func overlaps(a, b Match) bool { return a.Start < b.End && b.Start < a.End }
