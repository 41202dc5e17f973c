package search

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
)

// Matcher decides which lines match a query. Lines are found through a
// candidate finder that scans whole buffers (SIMD bytes.Index for a
// literal), so that per-line work is done only on lines that may match.
type Matcher struct {
	// lit is a case-sensitive fixed string: a candidate is a match.
	lit *litFinder
	// re verifies a candidate line (the line without its terminator).
	re *regexp.Regexp
	// req is a literal every match contains; fold is its case-folded twin.
	req  *litFinder
	fold *foldFinder
	// whole is set when the literal is the whole query (no regex given).
	whole bool
	// seq, when no literal is required, is a run of byte classes every
	// match holds adjacent bytes of ([a-z][0-9][0-9] in [a-z]+[0-9]{2,}):
	// lines without such a run are never given to re.
	seq       byteSeq
	seqAnchor int // where the run's least likely class is
	// seqRanges is seq for runScanAVX2, nil when none of its classes is
	// one range of bytes.
	seqRanges *[8]byte
	// run, when the regex is a sequence of ASCII classes, decides a
	// line in place of re.
	run *classRun
	// bound is the most bytes a match spans, -1 when unbounded or when
	// the regex holds an assertion (see FirstMatchOf).
	bound int
	// words, for --word, decides a candidate line in place of the
	// others: a line matches when it holds a whole-word match.
	words *Words
}

// Parse reads a query as the matcher does: a fixed string quoted, case
// folded for ignoreCase, in RE2's Perl syntax. It gives the pattern and its
// syntax tree, which the content index plans its trigrams from.
func Parse(query string, isRegex, ignoreCase bool) (string, *syntax.Regexp, error) {
	pattern := query
	if !isRegex {
		pattern = regexp.QuoteMeta(query)
	}
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	return pattern, tree, err
}

// SoughtAsBytes reports whether the matcher seeks the query as its own
// bytes: a fixed string, case kept, without U+FFFD (which matches a byte
// that is not UTF-8 too). Bytes of the query that are not UTF-8 (given
// as queryBase64) are sought as they are. The content index plans such a
// query from its bytes; it must agree, or it rules out files a scan
// matches.
func SoughtAsBytes(query string, isRegex, ignoreCase bool) bool {
	return !isRegex && !ignoreCase && !strings.Contains(query, string(utf8.RuneError))
}

// NewMatcher compiles a query. An invalid regex is INVALID_REGEX with the
// position of the offending part.
func NewMatcher(query string, isRegex, ignoreCase bool) (*Matcher, error) {
	if query == "" {
		return nil, fault.InvalidArgument("query is empty.").WithHint("pass the text to search for")
	}
	if strings.ContainsAny(query, "\n") && !isRegex {
		return nil, fault.InvalidArgument("query spans lines; grep matches one line at a time.").
			WithHint("search for one line of the text")
	}
	if SoughtAsBytes(query, isRegex, ignoreCase) {
		return &Matcher{lit: newLitFinder([]byte(query))}, nil
	}
	if !isRegex && !utf8.ValidString(query) {
		if ignoreCase {
			return nil, fault.InvalidArgument("the query has bytes that are not UTF-8, which ignoreCase cannot fold.").
				WithHint("drop ignoreCase to seek the query's bytes as they are")
		}
		return nil, fault.InvalidArgument("the query has both U+FFFD, which stands for any byte that is not UTF-8, and such bytes.").
			WithHint("give the query as text, with U+FFFD for each byte that is not UTF-8, or as its bytes without U+FFFD")
	}
	pattern, tree, err := Parse(query, isRegex, ignoreCase)
	if err != nil {
		return nil, RegexError(query, err)
	}
	if NeedsNewline(tree) || isRegex && NamesNewline(query) {
		return nil, fault.InvalidArgument("the regex has a literal newline; grep matches one line at a time.").
			WithHint("search for one line of the text (a regex never sees the end of a line as \\n)")
	}
	prefix := ""
	if ignoreCase {
		prefix = "(?i)"
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, RegexError(query, err)
	}
	if namesRuneError(tree) {
		// regexp matches U+FFFD at every byte that is not UTF-8 too, as
		// grep shows such a byte, whatever the query's kind: a line found
		// with -i or a regex is found without. A finder of U+FFFD's own
		// bytes would pass those lines over.
		return &Matcher{re: re, bound: maxMatchBytes(tree)}, nil
	}
	m := &Matcher{re: re, run: newClassRun(tree.Simplify()), bound: maxMatchBytes(tree)}
	lit, fold := requiredLiteral(tree.Simplify())
	m.whole = !isRegex && len(lit) == utf8.RuneCountInString(query)
	switch {
	case len(lit) > 0 && !fold:
		m.req = newLitFinder([]byte(string(lit)))
	case len(lit) > 0:
		m.fold = newFoldFinder(lit)
	}
	if m.req == nil && m.fold == nil {
		m.seq = requiredSeq(tree.Simplify())
		m.seqAnchor = m.seq.anchor()
		m.seqRanges = m.seq.ranges()
	}
	return m, nil
}

// NewWordMatcher compiles a query whose matches are whole words (--word):
// with no letter, mark, digit or connector right before or after them
// (Words, replace's --word). The query's finders still find the lines
// that may match: a word match is a match of the query.
func NewWordMatcher(query string, isRegex, ignoreCase bool) (*Matcher, error) {
	m, err := NewMatcher(query, isRegex, ignoreCase)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(query) {
		return nil, fault.InvalidArgument("the query has bytes that are not UTF-8, which word cannot tell words in.").
			WithHint("drop word to seek the query's bytes as they are")
	}
	pattern, tree, _ := Parse(query, isRegex, ignoreCase)
	flags := ""
	if ignoreCase {
		flags = "(?i)"
	}
	if !isRegex && !namesRuneError(tree) {
		// A fixed string: its words are sought as bytes, but for a
		// U+FFFD, which stands for any byte that is not UTF-8 too.
		m.words, err = NewLiteralWords(query, ignoreCase)
	} else {
		m.words, err = NewWords(flags, pattern)
	}
	if err != nil {
		return nil, RegexError(query, err)
	}
	// The class run decides a match of the query alone, and a window cut
	// from a long line cannot tell what is around a match.
	m.run, m.bound = nil, -1
	return m, nil
}

// namesRuneError reports a regex with a literal U+FFFD.
func namesRuneError(re *syntax.Regexp) bool {
	return re.Op == syntax.OpLiteral && slices.Contains(re.Rune, utf8.RuneError) || slices.ContainsFunc(re.Sub, namesRuneError)
}

// requiredLiteral returns the longest literal that every match of re
// contains, and whether it is matched with case folding.
func requiredLiteral(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		bestFold := false
		for _, s := range re.Sub {
			lit, fold := requiredLiteral(s)
			if literalScore(lit, fold) > literalScore(best, bestFold) {
				best, bestFold = lit, fold
			}
		}
		return best, bestFold
	}
	return nil, false
}

// literalScore prefers long literals, and exact ones over folded ones,
// whose search costs two scans.
func literalScore(lit []rune, fold bool) int {
	n := len(string(lit)) * 2
	if fold && n > 0 {
		n--
	}
	return n
}

// byteSet is a set of ASCII bytes.
type byteSet [256]bool

// byteSeq is a run of byte classes matched by adjacent bytes.
type byteSeq []*byteSet

// maxSeq bounds a run: longer ones filter little more and scan slower.
const maxSeq = 4

// requiredSeq returns the rarest run of ASCII classes that every match of re
// holds adjacent bytes of, or nil. Go's regexp runs at tens of MB/s, so
// skipping the lines that cannot match is most of the speed of a regex with
// no literal.
func requiredSeq(re *syntax.Regexp) byteSeq {
	var best byteSeq
	bestProb := 2.0
	consider := func(seq byteSeq) {
		for i := 0; i < len(seq); i++ {
			w := seq[i:min(len(seq), i+maxSeq)]
			if p := w.prob(); p < bestProb {
				best, bestProb = append(byteSeq(nil), w...), p
			}
		}
	}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpPlus, syntax.OpRepeat:
			if re.Op == syntax.OpPlus || re.Min >= 1 {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			// A run grows through single-byte classes and the fixed start of
			// a repeat of one; a repeat of variable length ends it, and the
			// repeat's last byte starts the next.
			var cur byteSeq
			for _, sub := range flatten(re) {
				for sub.Op == syntax.OpCapture {
					sub = sub.Sub[0]
				}
				set, _ := classSet(sub)
				if set != nil {
					cur = append(cur, set)
					continue
				}
				if sub.Op == syntax.OpLiteral {
					if lit := literalSeq(sub); lit != nil {
						cur = append(cur, lit...)
						continue
					}
				}
				min, fixed := 0, false
				var inner *byteSet
				switch sub.Op {
				case syntax.OpPlus:
					inner, _ = classSet(sub.Sub[0])
					min = 1
				case syntax.OpRepeat:
					inner, _ = classSet(sub.Sub[0])
					min, fixed = sub.Min, sub.Min == sub.Max
				}
				if inner == nil || min == 0 {
					consider(cur)
					cur = nil
					walk(sub)
					continue
				}
				for i := 0; i < min && i < maxSeq; i++ {
					cur = append(cur, inner)
				}
				if !fixed {
					consider(cur)
					cur = byteSeq{inner}
				}
			}
			consider(cur)
		default:
			if set, _ := classSet(re); set != nil {
				consider(byteSeq{set})
			}
		}
	}
	walk(re)
	return best
}

// flatten lists the parts of a concatenation, nested ones (which Simplify
// makes of x{2,}) included.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return []*syntax.Regexp{re}
	}
	var out []*syntax.Regexp
	for _, s := range re.Sub {
		out = append(out, flatten(s)...)
	}
	return out
}

// literalSeq is a literal of several runes as a run of one class each, or
// nil when one of them is not ASCII.
func literalSeq(re *syntax.Regexp) byteSeq {
	var out byteSeq
	for _, r := range re.Rune {
		set, _ := classSet(&syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}, Flags: re.Flags})
		if set == nil {
			return nil
		}
		out = append(out, set)
	}
	return out
}

// prob estimates how likely a run is at a given position of text.
func (q byteSeq) prob() float64 {
	p := 1.0
	for _, set := range q {
		f := 0
		for c := range set {
			if set[c] {
				f += byteFrequency(byte(c))
			}
		}
		p *= float64(f) / float64(totalFrequency)
	}
	return p
}

// classSet is the byte set of a class or a one-rune (folded) literal, and
// how often its bytes occur in text, or nil for anything else or a class
// holding non-ASCII runes.
func classSet(re *syntax.Regexp) (*byteSet, int) {
	var ranges []rune
	switch {
	case re.Op == syntax.OpCharClass:
		ranges = re.Rune
	case re.Op == syntax.OpLiteral && len(re.Rune) == 1:
		r := re.Rune[0]
		ranges = []rune{r, r}
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				ranges = append(ranges, f, f)
			}
		}
	default:
		return nil, 0
	}
	var set byteSet
	cost := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i+1] >= utf8.RuneSelf {
			return nil, 0
		}
		for c := ranges[i]; c <= ranges[i+1]; c++ {
			set[c] = true
			cost += byteFrequency(byte(c))
		}
	}
	return &set, cost
}

// index is where the run first occurs in buf, or -1. It scans for the
// class at a (the least likely) and checks the others around each hit.
func (q byteSeq) index(buf []byte, a int) int {
	anchor := q[a]
next:
	for i := a; i+len(q)-a <= len(buf); i++ {
		if !anchor[buf[i]] {
			continue
		}
		start := i - a
		for k, set := range q {
			if !set[buf[start+k]] {
				continue next
			}
		}
		return start
	}
	return -1
}

// at reports whether the run occurs at start in buf.
func (q byteSeq) at(buf []byte, start int) bool {
	if start+len(q) > len(buf) {
		return false
	}
	for k, set := range q {
		if !set[buf[start+k]] {
			return false
		}
	}
	return true
}

// ranges gives the run to runScanAVX2: each class as its first byte and
// width when it is one range of bytes ([a-z], [0-9], a single byte), or
// else as every byte (the run is checked whole at each hit). It is nil when
// no class is a range.
func (q byteSeq) ranges() *[8]byte {
	if len(q) > 4 {
		return nil
	}
	r := [8]byte{4: 255, 5: 255, 6: 255, 7: 255}
	found := false
	for k, set := range q {
		lo, hi := -1, -1
		for c := range set {
			if set[c] {
				if lo < 0 {
					lo = c
				}
				hi = c
			}
		}
		whole := lo >= 0
		for c := lo; whole && c <= hi; c++ {
			whole = set[c]
		}
		if whole {
			r[k], r[4+k] = byte(lo), byte(hi-lo)
			found = true
		}
	}
	if !found {
		return nil
	}
	return &r
}

// anchor is the position of the run's least likely class.
func (q byteSeq) anchor() int {
	a, best := 0, 2.0
	for i := range q {
		if p := q[i : i+1].prob(); p < best {
			a, best = i, p
		}
	}
	return a
}

// foldFinder finds candidate lines for a case-folded literal: it looks for
// the rarest byte of the literal whose case variants are exactly its ASCII
// upper and lower case (not k or s, which fold to the Kelvin sign and long
// s), with two SIMD byte scans. For an ASCII literal it also decides a line
// without the regex engine: an ASCII case-insensitive compare at each
// occurrence of that byte, and the regex only on a line holding a Kelvin
// sign or long s when the literal has a k or an s.
type foldFinder struct {
	lo, hi byte
	off    int    // where the byte is in needle
	needle []byte // the literal in lower case; nil when it is not ASCII
	// special are the non-ASCII forms the literal's letters fold to.
	special [][]byte
	// pair, for an ASCII literal of two bytes or more, finds it without a
	// call per hit of one byte.
	pair *pairFinder
}

// newFoldFinder returns nil when no byte of lit can be searched that way.
func newFoldFinder(lit []rune) *foldFinder {
	best, bestRank, off := rune(-1), -1, 0
	ascii := true
	for i, r := range lit {
		if r >= utf8.RuneSelf {
			ascii = false
		}
		if r >= utf8.RuneSelf || !asciiFoldOnly(r) {
			continue
		}
		if rank := byteRarity(byte(unicode.ToLower(r))) + byteRarity(byte(unicode.ToUpper(r))); rank > bestRank {
			best, bestRank, off = r, rank, i
		}
	}
	if best < 0 {
		return nil
	}
	f := &foldFinder{lo: byte(unicode.ToLower(best)), hi: byte(unicode.ToUpper(best)), off: off}
	if ascii {
		f.needle = []byte(strings.ToLower(string(lit)))
		if bytes.ContainsAny(f.needle, "k") {
			f.special = append(f.special, []byte("\u212A"))
		}
		if bytes.ContainsAny(f.needle, "s") {
			f.special = append(f.special, []byte("\u017F"))
		}
		f.pair = newPairFinder(f.needle, true)
	}
	return f
}

// pairFinder finds a literal by testing eight positions at a time (SWAR),
// or 32 with AVX2, for its two least frequent bytes; only positions where
// both agree are compared. Regardless of case (an ASCII literal), a letter is compared with
// its 0x20 bit set (c|0x20 == 'f' only for f and F): one pass for both cases.
type pairFinder struct {
	needle           []byte // lower case when fold
	fold             bool
	k1, k2           int    // k1 < k2
	mask1, mask2     uint64 // 0x20 in every byte for a letter, else 0
	target1, target2 uint64
}

func newPairFinder(needle []byte, fold bool) *pairFinder {
	if len(needle) < 2 {
		return nil
	}
	freq := func(i int) int {
		c := needle[i]
		if fold && 'a' <= c && c <= 'z' {
			return byteFrequency(c) + byteFrequency(c-0x20)
		}
		return byteFrequency(c)
	}
	a, b := 0, 1
	if freq(b) < freq(a) {
		a, b = b, a
	}
	for i := 2; i < len(needle); i++ {
		switch {
		case freq(i) < freq(a):
			a, b = i, a
		case freq(i) < freq(b):
			b = i
		}
	}
	if a > b {
		a, b = b, a
	}
	const lo = 0x0101010101010101
	f := &pairFinder{needle: needle, fold: fold, k1: a, k2: b,
		target1: lo * uint64(needle[a]), target2: lo * uint64(needle[b])}
	if c := needle[a]; fold && 'a' <= c && c <= 'z' {
		f.mask1 = lo * 0x20
	}
	if c := needle[b]; fold && 'a' <= c && c <= 'z' {
		f.mask2 = lo * 0x20
	}
	return f
}

func (f *pairFinder) equal(b []byte) bool {
	if f.fold {
		return asciiEqualFold(b, f.needle)
	}
	return bytes.Equal(b, f.needle)
}

// index is the start of the first match at or after from.
func (f *pairFinder) index(buf []byte, from int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	n, d := len(f.needle), f.k2-f.k1
	if pairSIMD {
		// 32 positions at a time while the pair's second byte of the
		// last one is inside buf; the SWAR loop below does the rest.
		t1, t2, m1, m2 := byte(f.target1), byte(f.target2), byte(f.mask1), byte(f.mask2)
		for {
			i := from + f.k1
			m := len(buf) - d - i
			if m < 32 {
				break
			}
			r := pairScanAVX2(&buf[i], m, d, t1, t2, m1, m2)
			if r == m&^31 {
				from += r
				break
			}
			start := from + r
			if start+n <= len(buf) && f.equal(buf[start:start+n]) {
				return start
			}
			from = start + 1
		}
	}
	i := from + f.k1
	for ; i+d+8 <= len(buf); i += 8 {
		x := (binary.LittleEndian.Uint64(buf[i:]) | f.mask1) ^ f.target1
		y := (binary.LittleEndian.Uint64(buf[i+d:]) | f.mask2) ^ f.target2
		z := x | y
		// A zero byte of z is a position where both bytes agree; the
		// test may also flag a few others, which the compare rejects.
		for t := (z - lo) &^ z & hi; t != 0; t &= t - 1 {
			start := i + bits.TrailingZeros64(t)/8 - f.k1
			if start+n <= len(buf) && f.equal(buf[start:start+n]) {
				return start
			}
		}
	}
	for start := i - f.k1; start+n <= len(buf); start++ {
		if f.equal(buf[start : start+n]) {
			return start
		}
	}
	return -1
}

// contains reports whether line holds the ASCII needle in any case, and
// whether that answer is final (false when a special form may match).
func (f *foldFinder) contains(line []byte) (found, final bool) {
	n := len(f.needle)
	for i := 0; i+n <= len(line); i++ {
		if c := line[i+f.off]; (c == f.lo || c == f.hi) && asciiEqualFold(line[i:i+n], f.needle) {
			return true, true
		}
	}
	for _, sp := range f.special {
		if bytes.Contains(line, sp) {
			return false, false
		}
	}
	return false, true
}

// asciiEqualFold compares b with the lower-case ASCII lower, ignoring case.
func asciiEqualFold(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// asciiFoldOnly reports a rune whose simple folding orbit is itself and at
// most its other ASCII case.
func asciiFoldOnly(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// commonBytes lists bytes by frequency in source code and prose, the most
// frequent first (counted on the Go tree); a byte not listed is rare.
const commonBytes = " et\trn\niasocl,duf0p()/.mhg=Sx\"1Tb_Ey{}R2I:PCAOkwv46D3LNMF8B-5*97V[G]HU;\\+!WzYX&%'q<$|K>`jQ#JZ^?@~\r"

// byteFrequency is a rough weight of how often b occurs, for comparing sets.
func byteFrequency(b byte) int {
	r := len(commonBytes) + 2 - byteRarity(b)
	return r * r
}

// totalFrequency is the weight of all bytes.
var totalFrequency = func() int {
	n := 0
	for b := range 256 {
		n += byteFrequency(byte(b))
	}
	return n
}()

func byteRarity(b byte) int {
	if i := strings.IndexByte(commonBytes, b); i >= 0 {
		return len(commonBytes) - i
	}
	return len(commonBytes) + 1
}

// FoldState remembers, within one buffer, where each case variant (and a
// special form) occurs next, so that a frequent variant does not make the
// rare one rescan.
type FoldState struct {
	lo, hi int
	// pair is where the pair finder's next match is; spAt where each
	// special form is next (-1: none in the rest of the buffer).
	pair int
	spAt [2]int
}

func (s *FoldState) Reset() { s.lo, s.hi, s.pair, s.spAt = -2, -2, -2, [2]int{-2, -2} }

// next returns the next position at or after from that may belong to a
// match: for an ASCII literal, the start of a case-insensitive match or a
// special form; otherwise an occurrence of the rare byte.
func (f *foldFinder) next(buf []byte, from int, s *FoldState) int {
	sp := -1 // the nearest special form
	for k, form := range f.special {
		if s.spAt[k] != -1 && s.spAt[k] < from {
			s.spAt[k] = -1
			if i := bytes.Index(buf[from:], form); i >= 0 {
				s.spAt[k] = from + i
			}
		}
		sp = minPos(sp, s.spAt[k])
	}
	if f.pair != nil {
		if s.pair != -1 && s.pair < from {
			s.pair = f.pair.index(buf, from)
		}
		return minPos(s.pair, sp)
	}
	at := from
	if f.needle != nil {
		at += f.off
	}
	for {
		c := f.nextByte(buf, at, s)
		if c < 0 || f.needle == nil {
			return minPos(c, sp)
		}
		start := c - f.off
		if sp >= 0 && sp < start {
			return sp
		}
		if start >= 0 && start+len(f.needle) <= len(buf) && asciiEqualFold(buf[start:start+len(f.needle)], f.needle) {
			return start
		}
		at = c + 1
	}
}

// nextByte is the next occurrence of either case of the rare byte.
func (f *foldFinder) nextByte(buf []byte, from int, s *FoldState) int {
	if s.lo != -1 && s.lo < from {
		s.lo = indexFrom(buf, from, f.lo)
	}
	if f.lo == f.hi {
		return s.lo
	}
	if s.hi != -1 && s.hi < from {
		s.hi = indexFrom(buf, from, f.hi)
	}
	return minPos(s.lo, s.hi)
}

// minPos is the smaller of two positions, -1 meaning none.
func minPos(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func indexFrom(buf []byte, from int, b byte) int {
	if from >= len(buf) {
		return -1
	}
	if i := bytes.IndexByte(buf[from:], b); i >= 0 {
		return from + i
	}
	return -1
}

// candidate returns the index of the first byte at or after from that may
// start or belong to a matching line, or -1 when none can match.
func (m *Matcher) Candidate(buf []byte, from int, fs *FoldState) int {
	var i int
	switch {
	case m.lit != nil:
		i = m.lit.index(buf[from:])
	case m.req != nil:
		i = m.req.index(buf[from:])
	case m.fold != nil:
		return m.fold.next(buf, from, fs)
	case m.seq != nil:
		if m.seqRanges != nil && pairSIMD {
			// 32 positions at a time while four bytes from the last one
			// are inside buf; index does the rest.
			for {
				n := len(buf) - 3 - from
				if n < 32 {
					break
				}
				r := runScanAVX2(&buf[from], n, m.seqRanges)
				if r == n&^31 {
					from += r
					break
				}
				if m.seq.at(buf, from+r) {
					return from + r
				}
				from += r + 1
			}
		}
		i = m.seq.index(buf[from:], m.seqAnchor)
	default:
		return from // every line is a candidate
	}
	if i < 0 {
		return -1
	}
	return from + i
}

// verify reports whether a candidate line (without its terminator) matches.
func (m *Matcher) Verify(line []byte) bool {
	if m.words != nil {
		return m.words.Match(line)
	}
	if m.lit != nil {
		// A match found in the buffer may have used the CR that lines
		// are matched without.
		return !m.lit.cr || bytes.Contains(line, m.lit.needle)
	}
	if m.fold != nil && m.fold.needle != nil {
		found, final := m.fold.contains(line)
		if final && (!found || m.whole) {
			return found
		}
	}
	if m.run != nil {
		return m.run.match(line)
	}
	return m.re.Match(line)
}

// firstMatch is where the match on a line starts, to keep it visible when
// a long line is cut.
func (m *Matcher) FirstMatch(line []byte) int {
	if m.words != nil {
		return max(0, m.words.Index(line))
	}
	if m.lit != nil {
		return bytes.Index(line, m.lit.needle)
	}
	if loc := m.re.FindIndex(line); loc != nil {
		return loc[0]
	}
	return 0
}

// litFinder finds a fixed string. bytes.Index scans for the needle's first
// byte and hands over to the runtime's SIMD substring search only after
// many false hits, and starts over at every call: when that byte is one of
// the commonest (e, r, space...), a SWAR pair test is faster (on the Go
// tree: 1.2 against 0.7 GB/s for err, 1.6 against 0.9 for return nil);
// otherwise bytes.Index is (8.2 against 2.4 GB/s for EPROTONOSUPPORT).
// With AVX2 the pair test runs 32 positions at a time and beats
// bytes.Index for every needle of two bytes or more.
type litFinder struct {
	needle []byte
	cr     bool
	pair   *pairFinder
}

// commonFirst is how many of the commonest bytes send a needle starting
// with one of them to the pair test without AVX2.
const commonFirst = 8

func newLitFinder(needle []byte) *litFinder {
	f := &litFinder{needle: needle, cr: bytes.IndexByte(needle, '\r') >= 0}
	if i := strings.IndexByte(commonBytes, needle[0]); pairSIMD || i >= 0 && i < commonFirst {
		f.pair = newPairFinder(needle, false)
	}
	return f
}

func (f *litFinder) index(buf []byte) int {
	if f.pair != nil {
		return f.pair.index(buf, 0)
	}
	return bytes.Index(buf, f.needle)
}

// NeedsNewline reports a regex with a part that can only match "\n" (a
// literal newline, or a class of it alone): lines never hold one, so it
// would find nothing, silently. ripgrep refuses such a regex too.
func NeedsNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		return len(re.Rune) == 2 && re.Rune[0] == '\n' && re.Rune[1] == '\n'
	}
	return slices.ContainsFunc(re.Sub, NeedsNewline)
}

// NamesNewline reports a regex whose text names a newline outside a
// bracket expression (\n, \x0a, \x{a}, \012, or the character itself),
// as ripgrep refuses it; in one ([\r\n], [^\n]) it is a class member, as
// in ripgrep. Go's parser makes a|\n the class [\na], which NeedsNewline
// cannot tell from one written so: x(ab|\n) was refused and x(a|\n)
// searched.
func NamesNewline(expr string) bool {
	inClass, quoted := false, false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quoted:
			if strings.HasPrefix(expr[i:], `\E`) {
				quoted, i = false, i+1
			} else if c == '\n' {
				return true
			}
		case c == '\\' && i+1 < len(expr):
			i++
			n, end := escapedByte(expr, i)
			switch {
			case expr[i] == 'Q' && !inClass:
				quoted = true
			case n == '\n' && !inClass:
				return true
			}
			i = end - 1
		case inClass && strings.HasPrefix(expr[i:], "[:"):
			if j := strings.Index(expr[i+2:], ":]"); j >= 0 {
				i += j + 3
			}
		case inClass && c == ']':
			inClass = false
		case !inClass && c == '[':
			inClass = true
			// A ] first in the class is a member.
			if strings.HasPrefix(expr[i+1:], "^]") {
				i += 2
			} else if strings.HasPrefix(expr[i+1:], "]") {
				i++
			}
		case c == '\n' && !inClass:
			return true
		}
	}
	return false
}

// escapedByte is the character the escape at expr[i] (after its
// backslash) names when it is one of n, x, x{...} or an octal number, -1
// for another, and where the escape ends.
func escapedByte(expr string, i int) (rune, int) {
	switch c := expr[i]; {
	case c == 'n':
		return '\n', i + 1
	case c == 'x' && strings.HasPrefix(expr[i+1:], "{"):
		if j := strings.IndexByte(expr[i+2:], '}'); j >= 0 {
			if v, err := strconv.ParseUint(expr[i+2:i+2+j], 16, 32); err == nil {
				return rune(v), i + 3 + j
			}
		}
	case c == 'x' && i+2 < len(expr):
		if v, err := strconv.ParseUint(expr[i+1:i+3], 16, 8); err == nil {
			return rune(v), i + 3
		}
	case '0' <= c && c <= '7':
		j := i
		for j < len(expr) && j < i+3 && '0' <= expr[j] && expr[j] <= '7' {
			j++
		}
		if v, err := strconv.ParseUint(expr[i:j], 8, 32); err == nil {
			return rune(v), j
		}
	}
	return -1, i + 1
}
