package index

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/search"
)

// queryOp is what a Query node asks of a file's trigrams.
type queryOp uint8

const (
	// opAll holds for every file: the query gives the index nothing.
	opAll queryOp = iota
	// opAnd holds when the file has every trigram and satisfies every Sub.
	opAnd
	// opOr holds when the file has one of the trigrams or satisfies one Sub.
	opOr
)

// Query is a condition on the set of trigrams of a file that every file
// with a match satisfies: an AND/OR tree of trigrams, as codesearch builds.
type Query struct {
	op       queryOp
	trigrams []uint32
	sub      []*Query
}

var allQuery = &Query{op: opAll}

// All reports whether the query holds for every file: the index cannot
// narrow the search.
func (q *Query) All() bool { return q.op == opAll }

func and(a, b *Query) *Query {
	switch {
	case a.op == opAll:
		return b
	case b.op == opAll:
		return a
	case a.op == opAnd && b.op == opAnd:
		return &Query{op: opAnd, trigrams: append(append([]uint32(nil), a.trigrams...), b.trigrams...), sub: append(append([]*Query(nil), a.sub...), b.sub...)}
	case a.op == opAnd:
		return &Query{op: opAnd, trigrams: a.trigrams, sub: append(append([]*Query(nil), a.sub...), b)}
	}
	return &Query{op: opAnd, sub: []*Query{a, b}}
}

func or(qs []*Query) *Query {
	out := &Query{op: opOr}
	for _, q := range qs {
		switch {
		case q.op == opAll:
			return allQuery
		case q.op == opAnd && len(q.sub) == 0 && len(q.trigrams) == 1:
			out.trigrams = append(out.trigrams, q.trigrams[0])
		default:
			out.sub = append(out.sub, q)
		}
	}
	switch {
	case len(out.trigrams)+len(out.sub) == 0:
		return allQuery
	case len(out.sub) == 0 && len(out.trigrams) == 1:
		return &Query{op: opAnd, trigrams: out.trigrams}
	case len(out.trigrams) == 0 && len(out.sub) == 1:
		return out.sub[0]
	}
	return out
}

// maxExact bounds the set of strings a part of a regex is known to match
// exactly; past it, the part only contributes what it requires.
const maxExact = 64

// maxClass bounds the runes of a character class taken as exact strings.
const maxClass = 16

// info is what the analysis knows of a regex: when known, the exact set of
// strings it matches; otherwise q, a condition every match satisfies.
type info struct {
	known bool
	exact []string
	q     *Query
}

var unknown = info{q: allQuery}

// Plan turns a grep query into the trigram query every matching file
// satisfies, compiled as search.NewMatcher compiles it. An invalid regex
// plans as All: the matcher reports the error.
func Plan(query string, isRegex, ignoreCase bool) *Query {
	if search.SoughtAsBytes(query, isRegex, ignoreCase) {
		return exactQuery([]string{query})
	}
	_, tree, err := search.Parse(query, isRegex, ignoreCase)
	if err != nil {
		return allQuery
	}
	in := analyze(tree.Simplify())
	if in.known {
		return exactQuery(in.exact)
	}
	return in.q
}

// exactQuery holds for a file that contains one of the strings.
func exactQuery(set []string) *Query {
	var alts []*Query
	for _, s := range set {
		if len(s) < 3 {
			return allQuery
		}
		q := &Query{op: opAnd}
		for i := 0; i+3 <= len(s); i++ {
			q.trigrams = append(q.trigrams, trigramOf(s[i:i+3]))
		}
		alts = append(alts, q)
	}
	return or(alts)
}

func trigramOf(s string) uint32 {
	return uint32(s[0])<<16 | uint32(s[1])<<8 | uint32(s[2])
}

// analyze computes the info of re. Only what a match must contain is ever
// claimed, so the candidates are a superset of the files with a match.
func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return info{known: true, exact: []string{""}}
	case syntax.OpLiteral:
		return literal(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		return class(re.Rune)
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpPlus:
		return required(analyze(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(analyze(re.Sub[0]))
		}
	case syntax.OpQuest:
		sub := analyze(re.Sub[0])
		if sub.known && len(sub.exact) < maxExact {
			return info{known: true, exact: union([]string{""}, sub.exact)}
		}
	case syntax.OpConcat:
		return concat(re.Sub)
	case syntax.OpAlternate:
		return alternate(re.Sub)
	}
	return unknown
}

// required is what a repeat of at least one x requires: what x requires.
func required(in info) info {
	if in.known {
		return info{q: exactQuery(in.exact)}
	}
	return in
}

// literal is a run of runes, folded when fold is set: its case variants
// when they are few, else, for each window of three runes, one of the
// window's variants.
func literal(runes []rune, fold bool) info {
	if !fold {
		if !slices.Contains(runes, utf8.RuneError) {
			return info{known: true, exact: []string{string(runes)}}
		}
		// U+FFFD matches a byte that is not UTF-8 too, whose bytes differ:
		// only the runs between them are known.
		q := allQuery
		for part := range strings.SplitSeq(string(runes), string(utf8.RuneError)) {
			q = and(q, exactQuery([]string{part}))
		}
		return info{q: q}
	}
	if set, ok := variants(runes); ok {
		return info{known: true, exact: set}
	}
	q := allQuery
	for i := 0; i+3 <= len(runes); i++ {
		set, ok := variants(runes[i : i+3])
		if !ok {
			continue
		}
		q = and(q, exactQuery(set))
	}
	return info{q: q}
}

// variants spells runes in every case, when that is at most maxExact strings.
func variants(runes []rune) ([]string, bool) {
	set := []string{""}
	for _, r := range runes {
		if r == utf8.RuneError {
			return nil, false
		}
		orbit := []string{string(r)}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, string(f))
		}
		if len(set)*len(orbit) > maxExact {
			return nil, false
		}
		set = cross(set, orbit)
	}
	return set, true
}

// class is a character class: its runes when they are few.
func class(ranges []rune) info {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > maxClass || (ranges[i] <= utf8.RuneError && utf8.RuneError <= ranges[i+1]) {
			return unknown
		}
	}
	var set []string
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			set = append(set, string(r))
		}
	}
	if len(set) == 0 {
		return unknown
	}
	return info{known: true, exact: set}
}

// concat joins the exact sets of adjacent parts while they stay small; a
// part of unknown strings splits the run, adding its own condition.
func concat(subs []*syntax.Regexp) info {
	cur, q, split := []string{""}, allQuery, false
	for _, s := range subs {
		in := analyze(s)
		if in.known && len(cur)*len(in.exact) <= maxExact {
			cur = cross(cur, in.exact)
			continue
		}
		split = true
		q = and(q, exactQuery(cur))
		cur = []string{""}
		if in.known {
			cur = in.exact
		} else {
			q = and(q, in.q)
		}
	}
	if !split {
		return info{known: true, exact: cur}
	}
	return info{q: and(q, exactQuery(cur))}
}

// alternate is one of its parts: the union of their exact sets while it
// stays small, else one of their conditions.
func alternate(subs []*syntax.Regexp) info {
	var ins []info
	known, n := true, 0
	for _, s := range subs {
		in := analyze(s)
		ins = append(ins, in)
		known = known && in.known
		n += len(in.exact)
	}
	if known && n <= maxExact {
		var set []string
		for _, in := range ins {
			set = union(set, in.exact)
		}
		return info{known: true, exact: set}
	}
	qs := make([]*Query, len(ins))
	for i, in := range ins {
		qs[i] = in.q
		if in.known {
			qs[i] = exactQuery(in.exact)
		}
	}
	return info{q: or(qs)}
}

func cross(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

// String is the query in codesearch's notation, for tests.
func (q *Query) String() string {
	switch q.op {
	case opAll:
		return "+"
	}
	var parts []string
	for _, t := range q.trigrams {
		parts = append(parts, strings.ToValidUTF8(string([]byte{byte(t >> 16), byte(t >> 8), byte(t)}), "?"))
	}
	for _, s := range q.sub {
		parts = append(parts, "("+s.String()+")")
	}
	sep := " "
	if q.op == opOr {
		sep = "|"
	}
	return strings.Join(parts, sep)
}
