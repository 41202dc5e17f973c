package core

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher decides which lines match a query. Lines are found through a
// candidate finder that scans whole buffers (SIMD bytes.Index for a
// literal), so that per-line work is done only on lines that may match.
type matcher struct {
	// lit is a case-sensitive fixed string: a candidate is a match.
	lit *litFinder
	// re verifies a candidate line (the line without its terminator).
	re *regexp.Regexp
	// req is a literal every match contains; fold is its case-folded twin.
	req  *litFinder
	fold *foldFinder
	// whole is set when the literal is the whole query (no regex given).
	whole bool
	// set holds the bytes of a class every match contains, when no literal
	// is required: lines without one of them are never given to re. When
	// next is set too, the byte must be followed by one of next's.
	set, next *byteSet
}

// newMatcher compiles a query. An invalid regex is INVALID_REGEX with the
// position of the offending part.
func newMatcher(query string, isRegex, ignoreCase bool) (*matcher, error) {
	if query == "" {
		return nil, InvalidArgument("query is empty.").WithHint("pass the text to search for")
	}
	if strings.ContainsAny(query, "\n") && !isRegex {
		return nil, InvalidArgument("query spans lines; grep matches one line at a time.").
			WithHint("search for one line of the text")
	}
	if !isRegex && !ignoreCase {
		return &matcher{lit: newLitFinder([]byte(query))}, nil
	}
	pattern := query
	if !isRegex {
		pattern = regexp.QuoteMeta(query)
	}
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, regexError(query, err)
	}
	prefix := ""
	if ignoreCase {
		prefix = "(?i)"
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, regexError(query, err)
	}
	m := &matcher{re: re}
	lit, fold := requiredLiteral(tree.Simplify())
	m.whole = !isRegex && len(lit) == utf8.RuneCountInString(query)
	switch {
	case len(lit) > 0 && !fold:
		m.req = newLitFinder([]byte(string(lit)))
	case len(lit) > 0:
		m.fold = newFoldFinder(lit)
	}
	if m.req == nil && m.fold == nil {
		m.set, m.next = requiredSet(tree.Simplify())
	}
	return m, nil
}

// regexError reports where the regex went wrong: regexp/syntax names the
// offending fragment, which is found in the query for its position.
func regexError(query string, err error) *Error {
	e := Errorf(CodeInvalidRegex, "the regex is not valid: %s.", strings.TrimSuffix(err.Error(), ".")).
		WithHint("fix the regex, or drop regex to search for the text as it is")
	if se, ok := err.(*syntax.Error); ok {
		e.Message = "the regex is not valid: " + se.Code.String()
		if i := strings.Index(query, se.Expr); i >= 0 && se.Expr != "" {
			col := utf8.RuneCountInString(query[:i]) + 1
			e.Message += " at position " + itoa(col)
			e.WithDetail("position", col).WithDetail("fragment", se.Expr)
		}
		e.Message += "."
	}
	return e
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

// requiredSet returns the rarest ASCII class that every match of re holds
// a byte of, or, better, two classes that every match holds adjacent bytes
// of ([a-z] then [0-9] in [a-z]+[0-9]), or nil. Go's regexp runs at tens
// of MB/s, so skipping the lines that cannot match is most of the speed of
// a regex with no literal.
func requiredSet(re *syntax.Regexp) (*byteSet, *byteSet) {
	var best, bestNext *byteSet
	bestCost := 0
	consider := func(a, b *byteSet, cost int) {
		if a != nil && (best == nil || cost < bestCost) {
			best, bestNext, bestCost = a, b, cost
		}
	}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpCharClass, syntax.OpLiteral:
			set, cost := classSet(re)
			consider(set, nil, cost)
		case syntax.OpCapture, syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 2 {
				if set, cost := classSet(re.Sub[0]); set != nil {
					consider(set, set, cost*cost/pairScale)
				}
			}
			if re.Min >= 1 {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			for i, s := range re.Sub {
				walk(s)
				if i+1 < len(re.Sub) {
					a, ca := edgeSet(s, true)
					b, cb := edgeSet(re.Sub[i+1], false)
					if a != nil && b != nil {
						consider(a, b, ca*cb/pairScale)
					}
				}
			}
		}
	}
	walk(re)
	return best, bestNext
}

// pairScale keeps the cost of a pair comparable with that of one class.
const pairScale = 1 << 16

// edgeSet is the class of the last (or first) byte of every match of re,
// when re is a class or a repeat of one.
func edgeSet(re *syntax.Regexp, last bool) (*byteSet, int) {
	switch re.Op {
	case syntax.OpCharClass:
		return classSet(re)
	case syntax.OpLiteral:
		if len(re.Rune) == 1 {
			return classSet(re)
		}
	case syntax.OpCapture, syntax.OpPlus:
		return edgeSet(re.Sub[0], last)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return edgeSet(re.Sub[0], last)
		}
	}
	return nil, 0
}

// classSet is the byte set of a class or a one-rune (folded) literal, and
// how often its bytes occur in text, or nil when it holds non-ASCII runes.
func classSet(re *syntax.Regexp) (*byteSet, int) {
	var set byteSet
	ranges := re.Rune
	if re.Op == syntax.OpLiteral {
		if len(re.Rune) == 0 {
			return nil, 0
		}
		r := re.Rune[0]
		ranges = []rune{r, r}
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				ranges = append(ranges, f, f)
			}
		}
	}
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

// index is the first byte of buf in s (followed by one in next, if given).
func (s *byteSet) index(buf []byte, next *byteSet) int {
	if next == nil {
		for i, c := range buf {
			if s[c] {
				return i
			}
		}
		return -1
	}
	for i := 0; i+1 < len(buf); i++ {
		if s[buf[i]] && next[buf[i+1]] {
			return i
		}
	}
	return -1
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
	}
	return f
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

func byteRarity(b byte) int {
	if i := strings.IndexByte(commonBytes, b); i >= 0 {
		return len(commonBytes) - i
	}
	return len(commonBytes) + 1
}

// foldState remembers, within one buffer, where each case variant (and a
// special form) occurs next, so that a frequent variant does not make the
// rare one rescan.
type foldState struct{ lo, hi, sp int }

func (s *foldState) reset() { s.lo, s.hi, s.sp = -2, -2, -2 }

// next returns the next position at or after from that may belong to a
// match: for an ASCII literal, the start of a case-insensitive match or a
// special form; otherwise an occurrence of the rare byte.
func (f *foldFinder) next(buf []byte, from int, s *foldState) int {
	if s.sp != -1 && s.sp < from {
		s.sp = -1
		for _, sp := range f.special {
			if i := bytes.Index(buf[from:], sp); i >= 0 && (s.sp < 0 || from+i < s.sp) {
				s.sp = from + i
			}
		}
	}
	at := from
	if f.needle != nil {
		at += f.off
	}
	for {
		c := f.nextByte(buf, at, s)
		if c < 0 || f.needle == nil {
			return minPos(c, s.sp)
		}
		start := c - f.off
		if s.sp >= 0 && s.sp < start {
			return s.sp
		}
		if start >= 0 && start+len(f.needle) <= len(buf) && asciiEqualFold(buf[start:start+len(f.needle)], f.needle) {
			return start
		}
		at = c + 1
	}
}

// nextByte is the next occurrence of either case of the rare byte.
func (f *foldFinder) nextByte(buf []byte, from int, s *foldState) int {
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
func (m *matcher) candidate(buf []byte, from int, fs *foldState) int {
	var i int
	switch {
	case m.lit != nil:
		i = m.lit.index(buf[from:])
	case m.req != nil:
		i = m.req.index(buf[from:])
	case m.fold != nil:
		return m.fold.next(buf, from, fs)
	case m.set != nil:
		i = m.set.index(buf[from:], m.next)
	default:
		return from // every line is a candidate
	}
	if i < 0 {
		return -1
	}
	return from + i
}

// verify reports whether a candidate line (without its terminator) matches.
func (m *matcher) verify(line []byte) bool {
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
	return m.re.Match(line)
}

// firstMatch is where the match on a line starts, to keep it visible when
// a long line is cut.
func (m *matcher) firstMatch(line []byte) int {
	if m.lit != nil {
		return bytes.Index(line, m.lit.needle)
	}
	if loc := m.re.FindIndex(line); loc != nil {
		return loc[0]
	}
	return 0
}

// litFinder finds a fixed string with bytes.Index: after a few false hits
// on the needle's first byte it switches to the runtime's SIMD substring
// search, which on the Go tree beats scanning for the needle's rarest byte
// (7.4 GB/s against 3.5 for "Error(", 1.9 for both on "func main").
type litFinder struct {
	needle []byte
	cr     bool
}

func newLitFinder(needle []byte) *litFinder {
	return &litFinder{needle: needle, cr: bytes.IndexByte(needle, '\r') >= 0}
}

func (f *litFinder) index(buf []byte) int { return bytes.Index(buf, f.needle) }
