// Package editmatch locates the oldText of an edit in a file's content by a
// ladder of ever looser comparisons (exact, then whitespace, indentation and
// typographic folding), and writes newText in the style of the region it
// matched. It only locates regions: what to do with several matches, none,
// or overlapping edits is the caller's to decide (core's edit plan; the
// ladder is meant for apply-patch's chunks too). When nothing matches,
// Closest names the most similar region.
package editmatch

import (
	"index/suffixarray"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rungs of the matching ladder, from the strictest. A rung only locates
// a region of the original content: the bytes outside it are never touched,
// and the region itself is replaced by newText.
const (
	// RungExact is the oldText byte for byte (a CRLF file matches an LF oldText).
	RungExact = "exact"
	// RungTrailingWhitespace ignores whitespace at the end of each line.
	RungTrailingWhitespace = "trailing-whitespace"
	// RungWhitespace ignores whitespace at both ends of each line.
	RungWhitespace = "whitespace"
	// RungIndentation is RungWhitespace where the lines differ by a uniform
	// indentation change (tabs for spaces, a shift): newText is re-indented
	// the same way.
	RungIndentation = "indentation"
	// RungUnicode also folds curly quotes, dashes, odd spaces and NFKC forms.
	RungUnicode = "unicode"
)

// Text is a file's content as the matcher sees it: the bytes after any BOM,
// cut into lines, and an LF-only view for matching CRLF content. It caches
// what its searches build, so one Text serves all the edits of a batch; it
// is not safe for concurrent use.
type Text struct {
	src   string
	lines []textLine
	lf    string // src with every CRLF as LF
	crs   []int  // positions in lf of each LF that was a CRLF
	keys  map[int][]string
	// fold is src folded rune by rune, built when the ladder gets there;
	// foldPos maps each of its bytes to the offset of its rune in src.
	fold    string
	foldPos []int32
	// indexed turns each search of the ladder into a lookup in an index
	// built once, on first use: suffix arrays of lf and fold, and the lines
	// of each fuzzy rung by key. It finds the same matches, in the same
	// order, as the scans do. It is set once scans have cost about what
	// the index costs (scans counts them): a batch of many edits then
	// costs a few passes over the file and a lookup per edit instead of a
	// pass per edit, while a small batch never pays for an index.
	indexed            bool
	scans              int
	lfIndex, foldIndex *suffixarray.Index
	keyLines           map[int]map[string][]int
	// spaceless and lowerBigrams are the lines' keys of Respaced and
	// of Rivalled, once asked: a retried batch asks for each edit, and
	// keying every line again for each made a retried batch of 138
	// edits in 2 MB of Go take 22 s (8 s keyed once).
	spaceless    []string
	lowerBigrams [][]uint32
	// typography[k] says whether src holds any character of
	// typographic[k], once the unicode rung asked.
	typography []bool
	// tabs says whether the file indents with tabs, once a re-indented
	// region without indentation of its own asked (known).
	tabs, tabsKnown bool
	// steps counts the work of the fuzzy rungs beyond keying the lines:
	// lines compared or examined, and matches compared with one another,
	// for tests that bound it.
	steps int
	// allIndents has every window's indentation found as for many
	// (indents), for tests.
	allIndents bool
	// denseKept has Kept filter its windows by their sums as for many
	// (keptSums), for tests.
	denseKept bool
}

// textLine is one line: content [start,end), terminator [end,next).
type textLine struct{ start, end, next int }

// New prepares src (the content after any byte-order mark) for matching.
func New(src string) *Text {
	t := &Text{src: src, lf: src, keys: map[int][]string{}}
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			t.lines = append(t.lines, textLine{i, len(src), len(src)})
			break
		}
		end, next := i+j, i+j+1
		if end > i && src[end-1] == '\r' {
			end--
			t.crs = append(t.crs, end-len(t.crs))
		}
		t.lines = append(t.lines, textLine{i, end, next})
		i = next
	}
	if len(t.crs) > 0 {
		t.lf = strings.ReplaceAll(src, "\r\n", "\n")
	}
	return t
}

// fromLF maps a position in the LF view back to src.
func (t *Text) fromLF(n int) int { return n + sort.SearchInts(t.crs, n) }

// LineAt is the 1-based number of the line holding byte pos of the content.
func (t *Text) LineAt(pos int) int {
	return sort.Search(len(t.lines), func(i int) bool { return t.lines[i].next > pos }) + 1
}

func (t *Text) content(i int) string { return t.src[t.lines[i].start:t.lines[i].end] }

// eolAt is the line ending newText should use in the region [start,end):
// the usual terminator of the lines it touches, else the file's usual one, so
// that mixed endings elsewhere in the file stay as they are; in a file with
// none, own, newText's, as write takes a new file's content.
func (t *Text) eolAt(start, end int, own string) string {
	crlf, lf := 0, 0
	for i := t.LineAt(start) - 1; i < len(t.lines) && t.lines[i].start < end; i++ {
		switch t.lines[i].next - t.lines[i].end {
		case 2:
			crlf++
		case 1:
			lf++
		}
	}
	if crlf+lf == 0 {
		crlf, lf = len(t.crs), len(t.lines)-len(t.crs)
		if n := len(t.lines); n > 0 && t.lines[n-1].next == t.lines[n-1].end {
			lf--
		}
		if crlf+lf == 0 {
			return own
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// Match is one located region of the content.
type Match struct {
	Start, End int
	Line       int // 1-based line of Start
	// Rung is the rung of the ladder that located it.
	Rung string
	// Uneven marks a window whose lines match but for indentation that
	// differs from line to line: newText's own indentation would replace
	// the file's and move code, so it is never rewritten. It is given
	// only beside matches of its rung, which it makes ambiguous: dropped,
	// the one other window was taken as the only match.
	Uneven bool
	// reindent re-indents newText for this region; nil leaves it as given.
	reindent *shift
}

// rungOrder is the ladder's rungs, from the strictest.
var rungOrder = []string{RungExact, RungTrailingWhitespace, RungWhitespace, RungIndentation, RungUnicode}

// Stricter reports whether rung a comes before rung b on the ladder.
func Stricter(a, b string) bool {
	return slices.Index(rungOrder, a) < slices.Index(rungOrder, b)
}

// rungKey is how a fuzzy rung compares lines.
type rungKey struct {
	rung string
	key  func(string) string
}

// lineKeys are how the fuzzy rungs compare lines, in ladder order.
var lineKeys = []rungKey{
	{RungTrailingWhitespace, func(s string) string { return strings.TrimRight(s, " \t\r\f\v") }},
	{RungWhitespace, strings.TrimSpace},
	{RungUnicode, func(s string) string { return strings.TrimSpace(foldUnicode(strings.TrimSpace(s))) }},
}

// lineKey is how rung compares lines (the indentation rung as the
// whitespace rung it refines); the exact rung compares them as they are.
func lineKey(rung string) func(string) string {
	if rung == RungIndentation {
		rung = RungWhitespace
	}
	for _, lk := range lineKeys {
		if lk.rung == rung {
			return lk.key
		}
	}
	return func(s string) string { return s }
}

// Locate runs the ladder for old and returns every match at the first rung
// that has one, in order; nil when none matches. Exact matches, and the
// windows of whole lines the fuzzy rungs compare, may overlap: which to
// keep is the caller's choice. The unicode rung also finds old within
// lines, beside its whole lines: a match within a line counted only when
// no whole line matched, so that of two places one was taken.
//
// Indented old found byte for byte only inside deeper indentation (the
// last four of a line's eight spaces) is no exact match: the indentation
// given is not the line's, so the stricter fuzzy rungs come first (the
// line meant, but for a trailing space) and the indentation rung
// re-indents newText (written as found, its lines after the first were
// left four columns short, out of their block). A fuzzy match elsewhere
// in another indentation (re-indented, or uneven) is no likelier the
// place meant than the byte-for-byte one, and is passed over: taken, it
// changed another line than the one oldText was found in, with success
// ("    return x" found in "        return x + 1", and "  return x"
// changed), or made the edit ambiguous. Found by no fuzzy rung, it stands.
func (t *Text) Locate(old string) []Match {
	exact := t.Exact(old)
	if len(exact) == 0 {
		return t.locateLoosely(old)
	}
	if !t.withinIndentation(old, exact) {
		return exact
	}
	ms := slices.DeleteFunc(t.locateLoosely(old), func(m Match) bool {
		return (m.reindent != nil || m.Uneven) && !t.holdsOne(exact, m)
	})
	if !slices.ContainsFunc(ms, func(m Match) bool { return !m.Uneven }) || sameSpans(ms, exact) {
		// (The unicode rung's fragments are the exact matches again.)
		return exact
	}
	return ms
}

// holdsOne reports whether m holds one of exact (Exact's matches) whole.
// Exact's matches start in order and end in order, so the first that
// starts in m ends first: it is the one to look at, found by a binary
// search (each match of the fuzzy rungs checked against every exact one
// was quadratic: 200,000 lines of "        x" and oldText "    x").
func (t *Text) holdsOne(exact []Match, m Match) bool {
	t.steps++
	k := sort.Search(len(exact), func(k int) bool { return exact[k].Start >= m.Start })
	return k < len(exact) && exact[k].End <= m.End
}

// sameSpans reports whether a and b are matches of the same spans.
func sameSpans(a, b []Match) bool {
	return slices.EqualFunc(a, b, func(x, y Match) bool { return x.Start == y.Start && x.End == y.End })
}

// LocateAtLines is Locate with the fuzzy rungs' matches Locate passes over
// beside an exact match inside a deeper indentation: for a caller that
// knows the line meant (a pasted gutter names it).
func (t *Text) LocateAtLines(old string) []Match {
	ms := t.Locate(old)
	if exact := t.Exact(old); len(exact) > 0 && t.withinIndentation(old, exact) {
		ms = append(ms, t.locateLoosely(old)...)
	}
	return ms
}

// withinIndentation reports whether old starts with indentation and
// every match of ms starts inside a line's longer indentation.
func (t *Text) withinIndentation(old string, ms []Match) bool {
	if old[0] != ' ' && old[0] != '\t' {
		return false
	}
	return !slices.ContainsFunc(ms, func(m Match) bool {
		_, ok := t.IndentBefore(m)
		return !ok
	})
}

// IndentBefore is the white space before m on its line, when only white
// space, and some, stands there: m starts after or inside the line's
// indentation.
func (t *Text) IndentBefore(m Match) (string, bool) {
	start, _, _ := t.Line(m.Line)
	ws := t.src[start:m.Start]
	return ws, ws != "" && strings.TrimLeft(ws, " \t") == ""
}

// locateLoosely is Locate's fuzzy rungs.
func (t *Text) locateLoosely(old string) []Match {
	oldLines, withEOL := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	blank := true
	for _, l := range oldLines {
		blank = blank && strings.TrimSpace(l) == ""
	}
	if blank || len(oldLines) > len(t.lines) {
		return nil
	}
	for k, lk := range lineKeys {
		want := make([]string, len(oldLines))
		for i, l := range oldLines {
			want[i] = lk.key(l)
		}
		if !slices.ContainsFunc(want, func(w string) bool { return w != "" }) {
			// The rung's key leaves nothing of oldText (a zero-width
			// space, to the unicode rung): it matched blank lines, an
			// empty range.
			continue
		}
		have := t.keyed(k)
		starts := t.windows(k, have, want)
		var indent func(s int) (*shift, bool)
		if lk.rung != RungTrailingWhitespace {
			indent = t.windowIndents(oldLines, have, want, starts)
		}
		var ms []Match
		for _, s := range starts {
			last := t.lines[s+len(want)-1]
			m := Match{Start: t.lines[s].start, End: last.end, Line: s + 1, Rung: lk.rung}
			if withEOL {
				m.End = last.next
			}
			if indent != nil {
				f, fits := indent(s)
				if !fits {
					// The lines' indentation differs unevenly: alone,
					// not a match (NO_MATCH shows the region).
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
			ms = withinLines(ms, t.folded(old), &t.steps)
		}
		ms = withoutCovered(ms, &t.steps)
		if slices.ContainsFunc(ms, func(m Match) bool { return !m.Uneven }) {
			return ms
		}
	}
	return nil
}

// withinLines is the windows of whole lines ms with the matches within
// lines in that no even window overlaps, in order. A fragment within an
// uneven window is a place as it stands (oldText copied from mid-line,
// its first line's indentation left out), where the window is not.
func withinLines(ms, in []Match, steps *int) []Match {
	even := spansOf(ms, steps)
	for _, m := range in {
		if !even.overlap(m, steps) {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b Match) int { return a.Start - b.Start })
	return ms
}

// withoutCovered is ms without the uneven windows that a match overlaps:
// that place has its match, and the window is no other place.
func withoutCovered(ms []Match, steps *int) []Match {
	even := spansOf(ms, steps)
	return slices.DeleteFunc(slices.Clone(ms), func(u Match) bool {
		return u.Uneven && even.overlap(u, steps)
	})
}

// spans are the ranges of the even matches of a list, by start, with the
// furthest end of those up to each: whether a range overlaps one of them
// is a binary search, where a scan of the list for each of another
// (withinLines' fragments, withoutCovered's uneven windows) was
// quadratic: 200,000 lines of "  it’s" and oldText "it's" took
// minutes.
type spans struct{ starts, ends []int }

func spansOf(ms []Match, steps *int) spans {
	even := slices.DeleteFunc(slices.Clone(ms), func(m Match) bool { return m.Uneven })
	// By start: withinLines appends its fragments after the windows.
	slices.SortFunc(even, func(a, b Match) int { return a.Start - b.Start })
	var sp spans
	for k, m := range even {
		sp.starts, sp.ends = append(sp.starts, m.Start), append(sp.ends, m.End)
		if k > 0 {
			sp.ends[k] = max(m.End, sp.ends[k-1])
		}
	}
	*steps += len(ms)
	return sp
}

// overlap reports whether m overlaps one of the spans.
func (sp spans) overlap(m Match, steps *int) bool {
	*steps++
	k := sort.SearchInts(sp.starts, m.End) // the spans that start before m ends
	return k > 0 && sp.ends[k-1] > m.Start
}

// folded is the unicode rung within lines: old, folded a character at a time,
// anywhere in the folded content (a fragment of a line with curly quotes),
// overlapping occurrences included, as Exact finds them: they make the
// edit ambiguous (of ＡＡＡ, AA took the first two alone).
func (t *Text) folded(old string) []Match {
	o := foldRunes(strings.ReplaceAll(old, "\r\n", "\n"), nil)
	if strings.TrimSpace(o) == "" {
		return nil
	}
	if t.fold == "" {
		t.fold = foldRunes(t.src, &t.foldPos)
	}
	var ms []Match
	for _, fs := range t.occurrences(&t.foldIndex, t.fold, o) {
		fe := fs + len(o)
		p := t.foldPos
		if (fs > 0 && p[fs-1] == p[fs]) || (fe < len(t.fold) && p[fe-1] == p[fe]) {
			continue // the match cuts through the folding of one rune
		}
		s, last := int(p[fs]), int(p[fe-1])
		end := last + segment(t.src[last:])
		if splitsMarks(t.src[s:end], t.src[end:]) {
			continue
		}
		if strings.HasPrefix(t.src[s:], "\n") && s > 0 && t.src[s-1] == '\r' {
			// From a line's end: its CR too, which the folding dropped,
			// or it stayed before newText's CRLF.
			s--
		}
		ms = append(ms, Match{Start: s, End: end, Line: t.LineAt(s), Rung: RungUnicode})
	}
	return ms
}

// occurrences returns, in order, where o occurs in s, overlapping
// occurrences included: by a scan, or from *index (built on first use)
// when the text is indexed.
func (t *Text) occurrences(index **suffixarray.Index, s, o string) []int {
	if t.useIndex() {
		if *index == nil {
			*index = suffixarray.New([]byte(s))
		}
		at := (*index).Lookup([]byte(o), -1)
		slices.Sort(at)
		return at
	}
	var at []int
	for from := 0; from <= len(s)-len(o); {
		i := strings.Index(s[from:], o)
		if i < 0 {
			break
		}
		at = append(at, from+i)
		from += i + 1
	}
	return at
}

// indexAfterScans is how many scans of the file a text allows before it
// is indexed: building the index costs about as much as 30 to 70 scans of
// a 2 MiB file (a suffix array is some 20 ns a byte, a scan for a missing
// oldText 0.3 to 1), so that a batch never pays much more than twice the
// cheaper of the two ways (see BenchmarkEditBatch).
const indexAfterScans = 32

// useIndex reports whether a search is to be looked up in the index;
// otherwise it counts the scan the caller makes, and indexes the text once
// scans pass indexAfterScans.
func (t *Text) useIndex() bool {
	if !t.indexed {
		t.scans++
		t.indexed = t.scans > indexAfterScans
	}
	return t.indexed
}

// keyOf is the index in lineKeys of rung's key.
func keyOf(rung string) int {
	return slices.IndexFunc(lineKeys, func(lk rungKey) bool { return lk.rung == rung })
}

// keyed is the text's lines under the key of lineKeys[k], made once.
func (t *Text) keyed(k int) []string {
	if t.keys[k] == nil {
		have := make([]string, len(t.lines))
		for i := range t.lines {
			have[i] = lineKeys[k].key(t.content(i))
		}
		t.keys[k] = have
	}
	return t.keys[k]
}

// windows returns, in order, the first lines s of the windows of have
// that hold want under the key of rung k: found by a scan that compares
// each line a bounded number of times (seek), or when the text is indexed
// among the windows whose line of want that is rarest in the file has its
// key, when checking those costs no more than the scan.
func (t *Text) windows(k int, have, want []string) []int {
	if !t.useIndex() {
		return Starts(have, want, &t.steps)
	}
	if t.keyLines == nil {
		t.keyLines = map[int]map[string][]int{}
	}
	byKey := t.keyLines[k]
	if byKey == nil {
		byKey = map[string][]int{}
		for i, h := range have {
			byKey[h] = append(byKey[h], i)
		}
		t.keyLines[k] = byKey
	}
	rare := 0
	for i, w := range want {
		if len(byKey[w]) < len(byKey[want[rare]]) {
			rare = i
		}
	}
	at := byKey[want[rare]]
	if len(at)*len(want) > len(have) {
		// Checking each window where want's rarest line stands costs more
		// than a scan (a file of like lines).
		return Starts(have, want, &t.steps)
	}
	var starts []int
windows:
	for _, l := range at {
		s := l - rare
		if s < 0 || s+len(want) > len(have) {
			continue
		}
		for i, w := range want {
			t.steps++
			if have[s+i] != w {
				continue windows
			}
		}
		starts = append(starts, s)
	}
	return starts
}

// foldRunes folds s one character at a time as foldUnicode does (NFKC
// decompositions, look-alike punctuation) and drops the CR of each CRLF. A
// character is a rune with the marks that combine with it (segment): one
// rune at a time, e and U+0301 never made é, and the file's NFD text
// matched an NFC oldText only as whole lines. When pos is given it gets,
// for each byte of the result, the offset in s of the character it came
// from, and len(s) at the end.
func foldRunes(s string, pos *[]int32) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		n := segment(s[i:])
		var f string
		switch {
		case s[i] == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case n == 1:
			f = s[i : i+1] // ASCII, or a byte that is not UTF-8
		default:
			f = foldUnicode(s[i : i+n])
		}
		b.WriteString(f)
		if pos != nil {
			for range len(f) {
				*pos = append(*pos, int32(i))
			}
		}
		i += n
	}
	if pos != nil {
		*pos = append(*pos, int32(len(s)))
	}
	return b.String()
}

// segment is the length in bytes of the first character of s, a rune and
// the marks that combine with it, which NFKC composes (e and U+0301 into
// é): folded alone, they fold differently. At least one byte.
func segment(s string) int {
	if len(s) == 1 || s[0] < utf8.RuneSelf && s[1] < utf8.RuneSelf {
		return 1
	}
	if n := norm.NFKC.NextBoundaryInString(s, true); n > 0 {
		return n
	}
	return 1
}

// splitsMarks reports whether match, followed by rest, ends inside a
// character, before a combining mark or variation selector of its last
// letter: "cafe" in NFD "cafe\u0301" would write the accent onto newText's
// last letter, "\u2764" in "\u2764\ufe0f" leave the selector to newText.
// A match that ends with white space or a line ending ends a character.
func splitsMarks(match, rest string) bool {
	last, _ := utf8.DecodeLastRuneInString(match)
	next, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsSpace(last) && unicode.Is(unicode.M, next)
}

// Exact finds every occurrence of old byte for byte (a CRLF file matches
// an LF old), overlapping ones included, in order.
func (t *Text) Exact(old string) []Match {
	o := strings.ReplaceAll(old, "\r\n", "\n")
	if o == "" {
		return nil
	}
	var ms []Match
	// Overlapping occurrences count ("}\n}\n" twice in "}\n}\n}\n"): they
	// make the edit ambiguous; replaceAll skips overlapping regions when it
	// rewrites.
	for _, i := range t.occurrences(&t.lfIndex, t.lf, o) {
		if splitsMarks(o, t.lf[i+len(o):]) {
			continue
		}
		s := t.fromLF(i)
		ms = append(ms, Match{Start: s, End: t.fromLF(i + len(o)), Line: t.LineAt(s), Rung: RungExact})
	}
	return ms
}

// splitLines cuts s at LF; a final LF ends the last line instead of
// starting an empty one, and is reported.
func splitLines(s string) ([]string, bool) {
	withEOL := strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), withEOL
}

// unicodeFolds are the look-alikes models type for ASCII, after NFKC (which
// already turns NBSP, the other fixed-width spaces and the ellipsis into
// ASCII).
var unicodeFolds = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'", "\u2032", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`, "\u2033", `"`,
	"\u00AB", `"`, "\u00BB", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u200B", "", "\uFEFF", "",
)

func foldUnicode(s string) string { return unicodeFolds.Replace(norm.NFKC.String(s)) }

// FoldUnicode is the unicode rung's fold of a text, for apply-patch's
// ladder, which promises edit's: NFKC (NFD text matches NFC, a ligature
// its letters, an ellipsis three dots), then the look-alikes to ASCII.
func FoldUnicode(s string) string { return foldUnicode(s) }

// Reindent writes one line in another indentation; ok is false when the
// line cannot be written there, as it would go left of column 0.
type Reindent func(line string) (out string, ok bool)

// IndentTransform is indentTransform, for apply-patch's chunks: the change
// that turns each line of old into the line of got, to apply to the lines
// written beside them. When got has no indentation to tell tabs from
// spaces, the lines written take file's (the file's lines).
func IndentTransform(old, got, file []string) (Reindent, bool) {
	s, fits := indentTransform(old, got)
	if s == nil {
		return nil, fits
	}
	tabs := s.tabs
	if !s.indented {
		tabs = tabIndented(slices.Values(file))
	}
	return func(line string) (string, bool) { return s.line(line, tabs) }, true
}

// tabIndented reports whether every indented line of lines starts with a
// tab, one at least. Not most: a tab is wrong where a space is not (YAML in
// a Go raw string took tabs from the Go around it, which YAML refuses),
// and a Go file holds no line that starts with a space (599 of 600 of
// Go's own).
func tabIndented(lines iter.Seq[string]) bool {
	tabs, spaces := 0, 0
	for l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
		case l[0] == '\t':
			tabs++
		case l[0] == ' ':
			spaces++
		}
	}
	return tabs > 0 && spaces == 0
}

// tabIndented reports whether the text's lines indent with tabs, counted
// once for all the edits of a batch.
func (t *Text) tabIndented() bool {
	if !t.tabsKnown {
		t.tabs = tabIndented(func(yield func(string) bool) {
			for i := range t.lines {
				if !yield(t.content(i)) {
					return
				}
			}
		})
		t.tabsKnown = true
	}
	return t.tabs
}

// SameColumns reports whether every non-blank line of old starts at the
// column of got's at one tab width: tabs for spaces or spaces for tabs in
// a file that mixes them, no change of indentation.
func SameColumns(old, got []string) bool {
	for _, w := range []int{4, 8, 2} {
		same := true
		for i := range old {
			if strings.TrimSpace(old[i]) != "" && column(leadingSpace(old[i]), w) != column(leadingSpace(got[i]), w) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// IndentLevels is the change of indentation level by level, where no one
// shift turns old into got: each leading whitespace of old's non-blank
// lines stands for got's at the same line ("  " for "    " and "    " for
// "        ", a chunk indented by two for a file indented by four). It is
// returned as a function of one line of added, which writes every such
// line, and fits false when a whitespace of old stands for two of got's or
// a line of added has one old does not.
func IndentLevels(old, got, added []string) (Reindent, bool) {
	levels := map[string]string{}
	for i := range old {
		if strings.TrimSpace(old[i]) == "" {
			continue
		}
		o, g := leadingSpace(old[i]), leadingSpace(got[i])
		if prev, seen := levels[o]; seen && prev != g {
			return nil, false
		}
		levels[o] = g
	}
	for _, l := range added {
		if _, ok := levels[leadingSpace(l)]; !ok && strings.TrimSpace(l) != "" {
			return nil, false
		}
	}
	return func(line string) (string, bool) {
		if strings.TrimSpace(line) == "" {
			return line, true
		}
		ws := leadingSpace(line)
		return levels[ws] + line[len(ws):], true
	}, true
}

// shift is a uniform change of indentation: d columns at tab width w.
type shift struct {
	d, w int
	// indented: a line of the region is indented, tabs: with a tab; when
	// none is, the file's indentation tells tabs from spaces.
	indented, tabs bool
}

// render is the leading whitespace of column c.
func (s *shift) render(c int, tabs bool) string {
	if tabs {
		return strings.Repeat("\t", c/s.w) + strings.Repeat(" ", c%s.w)
	}
	return strings.Repeat(" ", c)
}

// line shifts one line, indenting with tabs or spaces; ok is false when
// it would go left of column 0: whether such a line was meant where it
// stands or relative to oldText cannot be told, and flattening it to the
// margin lost its indentation relative to the others.
func (s *shift) line(l string, tabs bool) (string, bool) {
	if strings.TrimSpace(l) == "" {
		return l, true
	}
	ws := leadingSpace(l)
	c := column(ws, s.w) + s.d
	if c < 0 {
		return "", false
	}
	return s.render(c, tabs) + l[len(ws):], true
}

// indentTransform finds a uniform change of indentation that turns every
// non-blank line of old into the line of got: the same column shift for all
// lines, rendered with got's tabs or spaces. It returns the change (nil
// when the indentation is already the same), and fits false when no
// uniform change exists.
func indentTransform(old, got []string) (*shift, bool) {
	type pair struct{ o, g string }
	var pairs []pair
	useTabs, indented, same := false, false, true
	for i := range old {
		if strings.TrimSpace(old[i]) == "" {
			continue
		}
		p := pair{leadingSpace(old[i]), leadingSpace(got[i])}
		pairs = append(pairs, p)
		useTabs = useTabs || strings.Contains(p.g, "\t")
		indented = indented || p.g != ""
		same = same && p.o == p.g
	}
	if len(pairs) == 0 || same {
		return nil, true
	}
	// A tab is first taken as one level of the space-indented side.
	unit := 0
	for _, p := range pairs {
		for _, ws := range []string{p.o, p.g} {
			if ws != "" && strings.Trim(ws, " ") == "" {
				unit = gcd(unit, len(ws))
			}
		}
	}
	widths := []int{4, 8, 2}
	if unit >= 2 && unit <= 8 {
		widths = append([]int{unit}, widths...)
	}
	for _, w := range widths {
		s := &shift{d: column(pairs[0].g, w) - column(pairs[0].o, w), w: w, indented: indented, tabs: useTabs}
		ok := true
		for _, p := range pairs {
			c := column(p.o, w) + s.d
			ok = ok && c >= 0 && s.render(c, useTabs) == p.g
		}
		if ok {
			return s, true
		}
	}
	return nil, false
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func leadingSpace(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// column is the display width of leading whitespace with tab stops every w.
func column(ws string, w int) int {
	c := 0
	for _, r := range ws {
		if r == '\t' {
			c += w - c%w
		} else {
			c++
		}
	}
	return c
}

// reindentText shifts every line of s but those asGiven marks, or says
// which it cannot: line is its 1-based number, 0 when all were shifted.
func reindentText(s string, sh *shift, tabs bool, asGiven []bool) (out string, line int) {
	lines := strings.Split(s, "\n")
	given := marked(asGiven, len(lines))
	for i, l := range lines {
		if given(i) {
			continue
		}
		var ok bool
		if lines[i], ok = sh.line(l, tabs); !ok {
			return "", i + 1
		}
	}
	return strings.Join(lines, "\n"), 0
}

// gutterRe is a line-number gutter pasted from a read: "  12\t", "12: ",
// "12:" on a blank line, or "12→". It is compiled on first use: only edits
// need it, and start-up is paid on every call.
var gutterRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^ *([0-9]+)(\t|: |:$|→)`)
})

// StripGutter removes a line-number gutter from every line of s when every
// line has one and the numbers count up by one; first is the first number.
func StripGutter(s string) (out string, first int, ok bool) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines, withEOL := splitLines(s)
	prev := -1
	for i, l := range lines {
		m := gutterRe().FindStringSubmatchIndex(l)
		if m == nil {
			return s, 0, false
		}
		n, _ := strconv.Atoi(l[m[2]:m[3]])
		if prev >= 0 && n != prev+1 {
			return s, 0, false
		}
		if prev < 0 {
			first = n
		}
		prev = n
		lines[i] = l[m[1]:]
	}
	out = strings.Join(lines, "\n")
	if withEOL {
		out += "\n"
	}
	return out, first, true
}

// StripGutterLines removes the gutter of each line of newText numbered
// within oldText's gutter, first to last: those lines were pasted with it,
// while a line the model added ("  8080: web" in YAML) is kept as written.
func StripGutterLines(s string, first, last int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		m := gutterRe().FindStringSubmatchIndex(l)
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(l[m[2]:m[3]]); err == nil && n >= first && n <= last {
			lines[i] = l[m[1]:]
		}
	}
	return strings.Join(lines, "\n")
}
