package editmatch

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// When the unicode rung located oldText, the caller's text and the file
// spell some characters differently (curly quotes for straight ones, an
// en dash for a hyphen, NBSP for a space). newText is then written in the
// file's own style: what newText keeps of oldText takes the file's characters
// from the matched region, and a typographic character newText adds is
// written in ASCII where the file spells it so (see restyler.fold).

// typographic are the characters newText may add that fold to ASCII, by
// kind (quotes, dashes, spaces): a kind the file does not use at all is
// written in ASCII.
var typographic = []string{
	"\u2018\u2019\u201A\u201B\u201C\u201D\u201E\u201F",
	"\u2010\u2011\u2012\u2013\u2014\u2015\u2212",
	"\u00A0\u2007\u202F",
}

// restyler rewrites the newText of one edit for each region the unicode
// rung matched.
type restyler struct {
	t     *Text
	old   string // oldText with LF endings
	diffs []diffmatchpatch.Diff
	// used[k] says whether the file holds any character of typographic[k].
	used []bool
}

func newRestyler(t *Text, oldText, newText string) *restyler {
	rs := &restyler{t: t, old: strings.ReplaceAll(oldText, "\r\n", "\n")}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = time.Second
	rs.diffs = dmp.DiffCleanupSemanticLossless(dmp.DiffMainRunes([]rune(rs.old), []rune(newText), false))
	if t.typography == nil {
		for _, kind := range typographic {
			t.typography = append(t.typography, strings.ContainsAny(t.src, kind))
		}
	}
	rs.used = t.typography
	return rs
}

// restyle returns newText (LF endings) for the region of match m, and
// whether it differs from newText as given.
func (rs *restyler) restyle(m Match, newText string) (string, bool) {
	region := strings.ReplaceAll(rs.t.src[m.Start:m.End], "\r\n", "\n")
	from, ascii := alignStyle(rs.old, region)
	var b strings.Builder
	b.Grow(len(newText))
	oi, nb := 0, 0 // the next rune of oldText, the next byte of newText
	// next takes the next rune of newText.
	next := func() (rune, string) {
		r, size := utf8.DecodeRuneInString(newText[nb:])
		nb += size
		return r, newText[nb-size : nb]
	}
	for _, d := range rs.diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			oi += n
		case diffmatchpatch.DiffInsert:
			for range n {
				r, s := next()
				if f, ok := rs.fold(r, ascii); ok {
					s = f
				}
				b.WriteString(s)
			}
		default:
			for k := 0; k < n; {
				if g, ok := from[oi]; ok && k+g.runes <= n {
					// newText keeps this group of oldText whole: the
					// file's spelling of it.
					for range g.runes {
						next()
					}
					b.WriteString(g.text)
					oi, k = oi+g.runes, k+g.runes
					continue
				}
				_, s := next()
				b.WriteString(s)
				oi, k = oi+1, k+1
			}
		}
	}
	out := b.String()
	return out, out != newText
}

// fold gives the ASCII form of a typographic rune newText adds, when the
// file spells it in ASCII: the matched region shows it so (ascii), or the
// file holds no character of its kind at all.
func (rs *restyler) fold(r rune, ascii map[rune]bool) (string, bool) {
	for k, kind := range typographic {
		if strings.ContainsRune(kind, r) && (ascii[r] || !rs.used[k]) {
			return foldUnicode(string(r)), true
		}
	}
	return "", false
}

// spelling is how the file spells a group of runes of oldText: the shortest
// runs of both that fold to the same text (one rune each for a curly quote
// against a straight one; an ellipsis against three dots).
type spelling struct {
	runes int // the group's length in runes of oldText
	text  string
}

// alignStyle pairs oldText with the region the unicode rung matched, line by
// line and within the lines' trimmed text (the ladder lets indentation and
// line ends differ): from maps the rune index in old of each group the file
// spells otherwise to the file's spelling, and ascii holds the runes of old
// that the file spells in ASCII. A line whose runes do not fold alike group
// by group (an NFKC composition) gives nothing.
func alignStyle(old, region string) (from map[int]spelling, ascii map[rune]bool) {
	from, ascii = map[int]spelling{}, map[rune]bool{}
	ol, rl := strings.Split(old, "\n"), strings.Split(region, "\n")
	if len(ol) != len(rl) {
		return from, ascii
	}
	base := 0 // rune index in old of the line's start
	for i := range ol {
		lead := utf8.RuneCountInString(ol[i]) - utf8.RuneCountInString(strings.TrimLeftFunc(ol[i], unicode.IsSpace))
		alignLine(strings.TrimSpace(ol[i]), strings.TrimSpace(rl[i]), base+lead, from, ascii)
		base += utf8.RuneCountInString(ol[i]) + 1
	}
	return from, ascii
}

// alignLine walks o and r a group at a time (see spelling), o's first rune
// being rune at of oldText, and records the groups the file spells
// otherwise; nothing when o and r do not fold alike group by group.
func alignLine(o, r string, at int, from map[int]spelling, ascii map[rune]bool) {
	type group struct {
		at int
		o  string // the group as oldText spells it
		sp spelling
	}
	var groups []group
	for o != "" && r != "" {
		g, o0, r0 := group{at: at}, o, r
		var fo, fr string
		takeO := func() {
			n := segment(o)
			fo, g.sp.runes = fo+foldRune(o[:n]), g.sp.runes+utf8.RuneCountInString(o[:n])
			o = o[n:]
		}
		takeR := func() {
			n := segment(r)
			fr, r = fr+foldRune(r[:n]), r[n:]
		}
		takeO()
		takeR()
		for fo != fr {
			switch {
			case len(fo) < len(fr) && strings.HasPrefix(fr, fo) && o != "":
				takeO()
			case len(fr) < len(fo) && strings.HasPrefix(fo, fr) && r != "":
				takeR()
			default:
				return
			}
		}
		g.o, g.sp.text = o0[:len(o0)-len(o)], r0[:len(r0)-len(r)]
		groups = append(groups, g)
		at += g.sp.runes
	}
	if o != "" || r != "" {
		return
	}
	for _, g := range groups {
		if g.o == g.sp.text {
			continue
		}
		from[g.at] = g.sp
		if c, n := utf8.DecodeRuneInString(g.o); n == len(g.o) && isASCII(g.sp.text) {
			ascii[c] = true
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldRune folds one character (a segment) as the unicode rung does.
func foldRune(s string) string {
	if len(s) == 1 {
		return s
	}
	return foldUnicode(s)
}
