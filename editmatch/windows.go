package editmatch

import (
	"math"
	"strings"
)

// seek calls yield with the start of every occurrence of pat in text, in
// order, overlapping ones included (Knuth-Morris-Pratt): each element of
// text is compared a bounded number of times, where checking every window
// compared each with every element of pat, a file of like lines with an
// oldText of like lines taking minutes. An empty pat occurs at every
// position. steps counts the comparisons.
func seek[T comparable](text, pat []T, steps *int, yield func(int) bool) {
	m := len(pat)
	if m == 0 {
		for s := 0; s <= len(text); s++ {
			if !yield(s) {
				return
			}
		}
		return
	}
	n := 0
	defer func() { *steps += n }()
	// border[i] is the length of the longest proper prefix of pat[:i+1]
	// that is also its suffix; step extends a match of k elements of pat
	// by e, or falls back to a shorter one.
	border := make([]int, m)
	step := func(k int, e T) int {
		for {
			n++
			if e == pat[k] {
				return k + 1
			}
			if k == 0 {
				return 0
			}
			k = border[k-1]
		}
	}
	for i, k := 1, 0; i < m; i++ {
		k = step(k, pat[i])
		border[i] = k
	}
	for j, k := 0, 0; j < len(text); j++ {
		if k = step(k, text[j]); k == m {
			if !yield(j - m + 1) {
				return
			}
			k = border[m-1]
		}
	}
}

// Index is the first start of pat in text, -1 when it has none, found by
// seek: apply-patch's ladder checked every window line by line, a chunk
// of many like lines taking minutes in a file of them. steps counts the
// comparisons.
func Index[T comparable](text, pat []T, steps *int) int {
	at := -1
	seek(text, pat, steps, func(s int) bool {
		at = s
		return false
	})
	return at
}

// Starts is every start of pat in text, in order, overlapping ones
// included, found by seek in one scan: apply-patch's ladder, asked again
// and again where a chunk's lines occur in one file, scanned all of it for
// each. steps counts the comparisons.
func Starts[T comparable](text, pat []T, steps *int) []int {
	var at []int
	seek(text, pat, steps, func(s int) bool {
		at = append(at, s)
		return true
	})
	return at
}

// seekAll is where pat occurs in text: at[s] for each start s, len(text)+1
// of them.
func seekAll[T comparable](text, pat []T, steps *int) []bool {
	at := make([]bool, len(text)+1)
	seek(text, pat, steps, func(s int) bool {
		at[s] = true
		return true
	})
	return at
}

// windowIndents returns indentTransform(oldLines, the window's lines) for
// each window of starts, where have (the text's lines) matches want
// (oldLines) under a rung's key. A few windows, whose lines add up to no
// more than the text's, are each compared line by line. Many that overlap
// are not (every line of 200,000 like ones, for an oldText of 2,000, took
// minutes): indentTransform is a question about the leading white space
// of oldText's non-blank lines and of the window's lines beside them,
// which is answered per window from sums over the text's lines (prefix
// counts, the gcd of blocks) and from scans for where the text's leading
// white space follows oldText's (seek), each made once.
func (t *Text) windowIndents(oldLines, have, want []string, starts []int) func(s int) (*shift, bool) {
	m := len(oldLines)
	if len(starts)*m <= len(t.lines)+m && !t.allIndents {
		got := make([]string, m)
		return func(s int) (*shift, bool) {
			for i := range got {
				got[i] = t.content(s + i)
			}
			t.steps += m
			return indentTransform(oldLines, got)
		}
	}
	return newIndents(t, oldLines, have, want).at
}

// indents answers indentTransform for the windows of a text where want
// matches under a key. The lines indentTransform pairs, oldText's
// non-blank ones (P), are in a matching window the lines whose key is not
// empty (N), the text's keyed lines, and those lines of oldText whose key
// the rung empties (Q: a zero-width space, to the unicode rung), which
// are looked at window by window. Sums over P are sums over the window's
// keyed lines, plus Q's.
type indents struct {
	t     *Text
	m     int
	old   []string // leading white space of oldText's lines
	keyed []bool   // each line of the text has a key that is not empty
	lead  []string // leading white space of the text's lines
	// first is the first line of P, n0 of N; q is Q.
	first, n0 int
	q         []int
	oldUnit   int // gcd of the lengths of P's space-only indentation
	wanted    []bool
	// tabbed and indented count the keyed lines that indent with a tab,
	// or at all; spaceSuffix and spacePrefix hold the gcds of the lengths
	// of their space-only indentation, by blocks of m lines.
	tabbed, indented []int32
	spaceSuffix      []int // gcd from a line to the end of its block
	spacePrefix      []int // gcd from the start of a line's block to it
	same             []bool
	// By tab width: the text's columns, oldText's, the windows whose keyed
	// lines shift oldText's by one amount; by tab width and tabs,
	// counts of the keyed lines not as render writes their column.
	cols, oldCols map[int][]int
	steady        map[int][]bool
	unrendered    map[[2]int][]int32
}

func newIndents(t *Text, oldLines, have, want []string) *indents {
	n, m := len(t.lines), len(oldLines)
	x := &indents{t: t, m: m, old: make([]string, m), keyed: make([]bool, n), lead: make([]string, n), first: -1, n0: -1,
		wanted: make([]bool, m), cols: map[int][]int{}, oldCols: map[int][]int{}, steady: map[int][]bool{}, unrendered: map[[2]int][]int32{}}
	for i, l := range oldLines {
		x.old[i] = leadingSpace(l)
		x.wanted[i] = want[i] != ""
		if strings.TrimSpace(l) == "" {
			continue
		}
		if x.first < 0 {
			x.first = i
		}
		if x.wanted[i] {
			if x.n0 < 0 {
				x.n0 = i
			}
		} else {
			x.q = append(x.q, i)
		}
		x.oldUnit = gcd(x.oldUnit, spaceOnly(x.old[i]))
	}
	for j := range n {
		x.keyed[j] = have[j] != ""
		x.lead[j] = leadingSpace(t.content(j))
	}
	x.tabbed = x.count(func(ws string) bool { return strings.Contains(ws, "\t") })
	x.indented = x.count(func(ws string) bool { return ws != "" })
	x.spaceSuffix, x.spacePrefix = make([]int, n), make([]int, n)
	for j := range n {
		v := 0
		if x.keyed[j] {
			v = spaceOnly(x.lead[j])
		}
		if j%m != 0 {
			v = gcd(x.spacePrefix[j-1], v)
		}
		x.spacePrefix[j] = v
	}
	for j := n - 1; j >= 0; j-- {
		v := 0
		if x.keyed[j] {
			v = spaceOnly(x.lead[j])
		}
		if j+1 < n && (j+1)%m != 0 {
			v = gcd(x.spaceSuffix[j+1], v)
		}
		x.spaceSuffix[j] = v
	}
	// The keyed lines' indentation is oldText's non-blank lines', and the
	// other lines stand beside oldText's lines the key empties.
	const none = "\n" // no leading white space holds a line ending
	text, pat := make([]string, n), make([]string, m)
	for j := range n {
		if text[j] = none; x.keyed[j] {
			text[j] = x.lead[j]
		}
	}
	for i := range m {
		if pat[i] = none; x.wanted[i] {
			pat[i] = x.old[i]
		}
	}
	x.same = seekAll(text, pat, &t.steps)
	t.steps += 3*n + m
	return x
}

// spaceOnly is the length of indentation ws made of spaces alone, 0 for
// none or one with a tab: what indentTransform takes the gcd of.
func spaceOnly(ws string) int {
	if ws != "" && strings.Trim(ws, " ") == "" {
		return len(ws)
	}
	return 0
}

// count is the prefix counts of the keyed lines whose indentation is f's.
func (x *indents) count(f func(ws string) bool) []int32 {
	c := make([]int32, len(x.lead)+1)
	for j, ws := range x.lead {
		c[j+1] = c[j]
		if x.keyed[j] && f(ws) {
			c[j+1]++
		}
	}
	x.t.steps += len(x.lead)
	return c
}

// any reports whether a line of P in the window at s has indentation of
// which c counts the keyed lines and f tells of Q's.
func (x *indents) any(c []int32, f func(ws string) bool, s int) bool {
	if c[s+x.m] > c[s] {
		return true
	}
	for _, i := range x.q {
		if f(x.lead[s+i]) {
			return true
		}
	}
	return false
}

// columns are the columns of the text's and oldText's indentation at tab
// width w, and the windows at whose keyed lines the text's columns are
// oldText's shifted by one amount: steady[s+n0+1] for the window at s,
// from where the columns of consecutive keyed lines differ as oldText's
// do.
func (x *indents) columns(w int) (cols, oldCols []int, steady []bool) {
	if cols, ok := x.cols[w]; ok {
		return cols, x.oldCols[w], x.steady[w]
	}
	cols, oldCols = make([]int, len(x.lead)), make([]int, x.m)
	for j, ws := range x.lead {
		cols[j] = column(ws, w)
	}
	for i, ws := range x.old {
		oldCols[i] = column(ws, w)
	}
	const none = math.MinInt // no difference of columns
	text := make([]int, len(x.lead))
	prev := -1
	for j := range text {
		text[j] = none
		if x.keyed[j] {
			text[j] = cols[j]
			if prev >= 0 {
				text[j] -= cols[prev]
			}
			prev = j
		}
	}
	pat := make([]int, 0, x.m)
	prev = x.n0
	for i := x.n0 + 1; i < x.m; i++ {
		d := none
		if x.wanted[i] {
			d, prev = oldCols[i]-oldCols[prev], i
		}
		pat = append(pat, d)
	}
	steady = seekAll(text, pat, &x.t.steps)
	x.t.steps += 2*len(x.lead) + x.m
	x.cols[w], x.oldCols[w], x.steady[w] = cols, oldCols, steady
	return cols, oldCols, steady
}

// rendered reports whether ws is as render writes its column at tab
// width w, with tabs or without.
func rendered(ws string, w int, tabs bool) bool {
	if !tabs {
		return !strings.Contains(ws, "\t")
	}
	spaces := strings.TrimLeft(ws, "\t")
	return len(spaces) < w && strings.Trim(spaces, " ") == ""
}

// unrenderedAt counts the keyed lines whose indentation is not as render
// writes it at tab width w, with tabs or without.
func (x *indents) unrenderedAt(w int, tabs bool) []int32 {
	key := [2]int{w, 0}
	if tabs {
		key[1] = 1
	}
	c, ok := x.unrendered[key]
	if !ok {
		c = x.count(func(ws string) bool { return !rendered(ws, w, tabs) })
		x.unrendered[key] = c
	}
	return c
}

// at is indentTransform(oldLines, the lines of the window at s).
func (x *indents) at(s int) (*shift, bool) {
	x.t.steps += 1 + len(x.q)
	hasTab := func(ws string) bool { return strings.Contains(ws, "\t") }
	useTabs := x.any(x.tabbed, hasTab, s)
	indented := x.any(x.indented, func(ws string) bool { return ws != "" }, s)
	same := x.same[s]
	for _, i := range x.q {
		same = same && x.old[i] == x.lead[s+i]
	}
	if x.first < 0 || same {
		return nil, true
	}
	// A tab is first taken as one level of the space-indented side.
	unit := gcd(x.oldUnit, x.spaceSuffix[s])
	if s%x.m != 0 {
		unit = gcd(unit, x.spacePrefix[s+x.m-1])
	}
	for _, i := range x.q {
		unit = gcd(unit, spaceOnly(x.lead[s+i]))
	}
	widths := []int{4, 8, 2}
	if unit >= 2 && unit <= 8 {
		widths = append([]int{unit}, widths...)
	}
	for _, w := range widths {
		cols, oldCols, steady := x.columns(w)
		d := cols[s+x.first] - oldCols[x.first]
		// Each line of P is as render writes its column, and its column
		// is oldText's shifted by d: the keyed lines' shifted by one
		// amount, the first of them by d, and Q's each by d.
		ok := steady[s+x.n0+1] && cols[s+x.n0]-oldCols[x.n0] == d && !x.any(x.unrenderedAt(w, useTabs), func(ws string) bool { return !rendered(ws, w, useTabs) }, s)
		for _, i := range x.q {
			ok = ok && cols[s+i]-oldCols[i] == d
		}
		if ok {
			return &shift{d: d, w: w, indented: indented, tabs: useTabs}, true
		}
	}
	return nil, false
}
