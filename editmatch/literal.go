package editmatch

import (
	"slices"
	"sort"
	"strings"
)

// A re-indenting rung (the indentation rung, or a line found after a
// line's indentation: see Rewriter) shifts every line of newText but
// those inside a multi-line literal that newText opens and closes, whose
// columns are part of the literal's value: a here-document's body and
// its terminator, which indented no longer ends it ("    EOF"; only <<-
// strips leading tabs, never spaces); the lines after the one that opens
// a triple-quoted string ("""  or ''') up to and including the one that
// closes it; a raw string in backticks (Go, a JavaScript template), in
// C++ (R"delim(...)delim") or in Rust (r#"..."#) alike; a PHP heredoc or
// nowdoc's body and terminator, as a here-document's. They are found by
// a scan of newText's lines, no language told:
//
//   - <<WORD, <<'WORD', <<"WORD", <<\WORD, << WORD, and <<-WORD (its
//     terminator may follow tabs) open a here-document only when a later
//     line of newText is its terminator, so a shift (1 << n, cout << x)
//     opens none; several on a line are read in order. <<~ (Ruby, which
//     strips the indentation itself) opens none. Quotes after an opener
//     on its line are not looked at.
//   - <<<WORD, <<<"WORD" and <<<'WORD' that end their line open a PHP
//     heredoc (nowdoc) when a later line is its terminator: the word after
//     any indentation, then nothing or ; , ) ] or . (PHP 7.3 lets code
//     follow). <<< before more of its line is a here-string (cat <<<
//     "$x", tr a b <<< foo) and opens none. Its body and terminator are
//     left as given together, whatever the terminator's indentation: PHP
//     strips that indentation from every body line, so that the body
//     shifted alone changed the value (or, shifted left of it, failed to
//     parse); the terminator shifted from column 0 ended nothing before
//     PHP 7.3; and the two shifted together are the value only under a
//     shift that adds or drops one prefix, where re-indentation can go
//     level by level (two spaces for four doubles the body's own
//     indentation) or turn spaces to tabs (PHP refuses a body and a
//     terminator indented with both).
//   - """ or ''' opens a string that a later line closes with the same
//     three (escapes are not read); one closed on its own line is none.
//     A docstring (one that starts its line) is read, and shifted with
//     its code (see docstring).
//   - none of them opens anything inside a string in ' or " that its
//     line closes (startswith('"""'), echo 'cat <<EOF'), nor after a #
//     or // that starts the line or follows a blank (a comment: "#
//     strip the """ quotes"): read as openers, they left every line up
//     to the next docstring unshifted, out of its block. A quote its line
//     leaves open is a character (an apostrophe).
//   - R"delim( (also u8R, uR, UR, LR, a whole word; delim 16 bytes at
//     most, no blank, parenthesis, backslash or quote) opens a C++ raw
//     string that a later line closes with )delim"; r", r#", r##" (also
//     br, cr) a Rust one that a later line closes with " and as many #.
//     One closed on its line is none, and nothing inside it is read.
//     R"( that read as an ordinary string closes on its line opens none
//     (Python's R"(" + x: read as one, a later line's ")" closed it, and
//     the code between was left unshifted); nor does r""" (Python's
//     triple quote), and Python's r"..." closes on its line.
//   - a lone backtick (never a run, as a Markdown fence is) opens a raw
//     string when it follows = ( , : [ { + ? or return, or an identifier
//     without a space (a tagged template), and a later line holds a
//     backtick; at a line's start (a Lisp quasiquote) it opens none.
//
// A literal that keeps a line of oldText (not blank) was matched shifted
// with the rest, in the caller's frame (a docstring copied with its
// method, four columns left): it is shifted whole, as before. (A blank
// line kept inside a literal left as given is written as the region
// spells it, as every line kept: the file's, unchanged.) An oldText that
// opens a triple-quoted or backtick string it does not close (Dangles)
// was most likely found inside a literal opened above it, and its
// closing quotes, which newText copies, read as an opener: newText is
// shifted whole. (Read so, the closer paired with the next docstring's
// quotes and left the code between unshifted, out of its block.) Only
// those quotes, the same at both ends, can be a closer read as an
// opener; the file above the match is not scanned.

// literalSpans are the literals that lines (newText's) open and close:
// each the first and last index of the lines left as given, the first
// the line after the opener's.
func literalSpans(lines []string) [][2]int {
	spans, _ := scanLiterals(lines)
	return spans
}

// Dangles reports whether lines (oldText's, or the old lines of a patch's
// chunk) open a triple-quoted or backtick string that they do not close,
// as the scan reads them. Such lines were most likely matched inside a
// literal that starts above them, and the quotes that close it read as
// an opener: newText's spans are then no literals of its own (its copy
// of that closer, paired with the next docstring's quotes, left the code
// between unshifted, out of its block), and none is left as given.
func Dangles(lines []string) bool {
	if !slices.ContainsFunc(lines, mayHoldLiteral) {
		return false
	}
	_, dangling := scanLiterals(lines)
	return dangling
}

// scanLiterals is literalSpans, and whether a string opened dangles (see
// Dangles).
func scanLiterals(lines []string) ([][2]int, bool) {
	sc := &literalScan{lines: lines}
	var spans [][2]int
	for i, from := 0, 0; i < len(lines); {
		hs, q, qAt := sc.open(lines[i][from:], i)
		doc := from == 0 && docstring(lines[i][:qAt], q)
		from = 0
		if len(hs) > 0 {
			at := i
			for _, h := range hs {
				if j, ok := sc.terminator(h, at); ok {
					at = j
				}
			}
			if at > i {
				spans = append(spans, [2]int{i + 1, at})
				i = at + 1
				continue
			}
		}
		if q != "" {
			j := i + 1 // open saw a later line that holds q
			for !strings.Contains(lines[j], q) {
				j++
			}
			if !doc {
				spans = append(spans, [2]int{i + 1, j})
			}
			i, from = j, strings.Index(lines[j], q)+len(q)
			continue
		}
		i++
	}
	return spans, sc.dangling
}

// mayHoldLiteral is false for a text none of whose lines can open a
// literal: most, and they are not scanned.
func mayHoldLiteral(s string) bool {
	return strings.Contains(s, "<<") || strings.Contains(s, `"""`) || strings.Contains(s, "'''") || strings.Contains(s, "`") ||
		strings.Contains(s, `R"`) || strings.Contains(s, `r"`) || strings.Contains(s, `#"`)
}

// heredoc is a here-document opened: its terminator, and whether tabs
// may come before it (<<-), or it is PHP's (<<<), whose terminator may
// follow any indentation and come before code (see phpEnd).
type heredoc struct {
	word      string
	dash, php bool
}

type literalScan struct {
	lines []string
	// last is the last line that holds each quote, made on first use.
	last map[string]int
	// ends lists the lines by their text, and tabbed by their text
	// after leading tabs, for the terminators, made on first use.
	ends, tabbed map[string][]int
	// php lists the lines that end a PHP heredoc by its word, made on
	// first use.
	php map[string][]int
	// raw is the last line that holds each closer )delim", and hashed[n]
	// the last that holds a quote and n hashes or more, made on first
	// use (see rawLast).
	raw    map[string]int
	hashed []int
	// dangling: a line opens a triple-quoted or backtick string that no
	// later line closes (see Dangles).
	dangling bool
}

// docstring reports whether a string opened by quote after before, the
// start of its line, is a docstring: a statement of a triple-quoted
// string alone (a prefix such as r aside), whose indentation is none of
// its value (help() and, from Python 3.13, the compiler strip it). It is
// shifted with the code it documents: left as given, a method's
// docstring written in a frame 4 columns left ended 4 columns left of it.
func docstring(before, quote string) bool {
	if quote != `"""` && quote != "'''" {
		return false
	}
	b := strings.TrimLeft(before, " \t")
	return len(b) <= 2 && strings.Trim(b, "rRuUbBfF") == ""
}

// open scans seg, line i from a point outside any literal, for the
// here-documents it opens, or the quote of a string it leaves open and
// where in seg that quote is.
func (sc *literalScan) open(seg string, i int) (hs []heredoc, quote string, at int) {
	for p := 0; p < len(seg); {
		if seg[p] == '"' && p > 0 {
			if closer, body, ok := rawString(seg, p); ok {
				if k := strings.Index(seg[body:], closer); k >= 0 {
					p = body + k + len(closer)
					continue
				}
				// Left open: but R"( that an ordinary string's reading
				// closes on its line is read so (Python's R"(" + x).
				if closer[0] != ')' || quotedLen(seg[p:]) == 1 {
					if len(hs) == 0 && sc.later(closer, i) {
						return nil, closer, p
					}
					p = body
					continue
				}
			}
		}
		switch {
		case strings.HasPrefix(seg[p:], `"""`) || strings.HasPrefix(seg[p:], "'''"):
			q := seg[p : p+3]
			if len(hs) == 0 {
				if k := strings.Index(seg[p+3:], q); k >= 0 {
					p += 3 + k + 3
					continue
				}
				if sc.later(q, i) {
					return nil, q, p
				}
				sc.dangling = true
			}
			p += 3
		case seg[p] == '`':
			n := len(seg[p:]) - len(strings.TrimLeft(seg[p:], "`"))
			if n == 1 && len(hs) == 0 {
				// Closed on its line (a code span too), else maybe open.
				if k := strings.IndexByte(seg[p+1:], '`'); k >= 0 {
					p += 1 + k + 1
					continue
				}
				if rawOpener(seg[:p]) {
					if sc.later("`", i) {
						return nil, "`", p
					}
					sc.dangling = true
				}
			}
			p += n
		case strings.HasPrefix(seg[p:], "<<<") && (p == 0 || seg[p-1] != '<'):
			if h, ok := phpHeredocAt(seg[p+3:]); ok {
				return append(hs, h), "", 0 // its word ends the line
			}
			p += len(seg[p:]) - len(strings.TrimLeft(seg[p:], "<"))
		case strings.HasPrefix(seg[p:], "<<"):
			if h, end, ok := heredocAt(seg, p); ok {
				hs = append(hs, h)
				p = end
				continue
			}
			p += len(seg[p:]) - len(strings.TrimLeft(seg[p:], "<"))
		case seg[p] == '"' || seg[p] == '\'':
			p += quotedLen(seg[p:])
		case (seg[p] == '#' || strings.HasPrefix(seg[p:], "//")) && (p == 0 || seg[p-1] == ' ' || seg[p-1] == '\t'):
			return hs, "", 0 // a comment
		default:
			p++
		}
	}
	return hs, "", 0
}

// later reports whether a line after line i holds q.
func (sc *literalScan) later(q string, i int) bool {
	if q[0] == ')' || len(q) > 1 && q[1] == '#' {
		return sc.rawLast(q) > i
	}
	if sc.last == nil {
		sc.last = map[string]int{}
	}
	l, ok := sc.last[q]
	if !ok {
		l = -1
		for j := len(sc.lines) - 1; j >= 0; j-- {
			if strings.Contains(sc.lines[j], q) {
				l = j
				break
			}
		}
		sc.last[q] = l
	}
	return l > i
}

// rawLast is the last line that holds q, a raw string's closer: )delim"
// or " and hashes. The lines are read once for all of them, where each
// closer's own scan of them took 24 s for 20000 openers each with a
// delimiter of its own (BenchmarkRawOpeners).
func (sc *literalScan) rawLast(q string) int {
	if sc.raw == nil {
		sc.raw = map[string]int{}
		for j, l := range sc.lines {
			for p := strings.IndexByte(l, '"'); p >= 0; p = next(l, p) {
				// The closer )delim" that ends at this quote, if any: the
				// delimiter holds no ')'.
				from := max(0, p-17)
				if k := strings.LastIndexByte(l[from:p], ')'); k >= 0 {
					sc.raw[l[from+k:p+1]] = j
				}
				n := len(l[p+1:]) - len(strings.TrimLeft(l[p+1:], "#"))
				for len(sc.hashed) <= n {
					sc.hashed = append(sc.hashed, -1)
				}
				sc.hashed[n] = j
			}
		}
		// A quote and n hashes hold the closer of fewer too.
		for n := len(sc.hashed) - 2; n >= 0; n-- {
			sc.hashed[n] = max(sc.hashed[n], sc.hashed[n+1])
		}
	}
	if q[0] == ')' {
		if j, ok := sc.raw[q]; ok {
			return j
		}
		return -1
	}
	if n := len(q) - 1; n < len(sc.hashed) {
		return sc.hashed[n]
	}
	return -1
}

// next is the index of the quote in l after the one at p, or -1.
func next(l string, p int) int {
	if k := strings.IndexByte(l[p+1:], '"'); k >= 0 {
		return p + 1 + k
	}
	return -1
}

// terminator is the first line after line at that ends h.
func (sc *literalScan) terminator(h heredoc, at int) (int, bool) {
	if sc.ends == nil {
		sc.ends, sc.tabbed = map[string][]int{}, map[string][]int{}
		for j, l := range sc.lines {
			sc.ends[l] = append(sc.ends[l], j)
			k := strings.TrimLeft(l, "\t")
			sc.tabbed[k] = append(sc.tabbed[k], j)
		}
	}
	if h.php && sc.php == nil {
		sc.php = map[string][]int{}
		for j, l := range sc.lines {
			if w, ok := phpEnd(l); ok {
				sc.php[w] = append(sc.php[w], j)
			}
		}
	}
	js := sc.ends[h.word]
	switch {
	case h.php:
		js = sc.php[h.word]
	case h.dash:
		js = sc.tabbed[h.word]
	}
	if k := sort.SearchInts(js, at+1); k < len(js) {
		return js[k], true
	}
	return 0, false
}

// heredocAt reads a here-document's opener at seg[p:], which starts with
// "<<": its terminator, and where the opener ends.
func heredocAt(seg string, p int) (h heredoc, end int, ok bool) {
	if p > 0 && seg[p-1] == '<' {
		return h, 0, false
	}
	p += 2
	if p < len(seg) && seg[p] == '-' {
		h.dash = true
		p++
	}
	for p < len(seg) && (seg[p] == ' ' || seg[p] == '\t') {
		p++
	}
	if p == len(seg) {
		return h, 0, false
	}
	if q := seg[p]; q == '\'' || q == '"' {
		k := strings.IndexByte(seg[p+1:], q)
		if k <= 0 {
			return h, 0, false
		}
		h.word = seg[p+1 : p+1+k]
		return h, p + 1 + k + 1, true
	}
	if seg[p] == '\\' {
		p++
	}
	start := p
	for p < len(seg) && (isWordByte(seg[p]) && (p > start || seg[p] < '0' || seg[p] > '9')) {
		p++
	}
	if p == start {
		return h, 0, false
	}
	h.word = seg[start:p]
	return h, p, true
}

// phpHeredocAt reads a PHP heredoc's opener after "<<<" (rest): a word,
// bare or in ' or " (a nowdoc), after blanks, that ends the line. One
// that does not end it is a here-string (bash's cat <<< "$x", <<< foo;
// a CUDA launch, k<<<g, b>>>).
func phpHeredocAt(rest string) (h heredoc, ok bool) {
	rest = strings.TrimLeft(rest, " \t")
	if n := len(rest); n > 2 && (rest[0] == '\'' || rest[0] == '"') && rest[n-1] == rest[0] {
		rest = rest[1 : n-1]
	}
	if w := phpWord(rest); w == "" || len(w) != len(rest) {
		return h, false
	}
	return heredoc{word: rest, php: true}, true
}

// phpEnd reads line as the end of a PHP heredoc: its word after any
// indentation (PHP 7.3 strips the terminator's from the body), then
// nothing or code that goes on with the expression (; , ) ] .). A line
// that goes on otherwise ("EOT is", "y=1" after bash's read x <<< y)
// ends none.
func phpEnd(line string) (word string, ok bool) {
	t := strings.TrimLeft(line, " \t")
	w := phpWord(t)
	if w == "" {
		return "", false
	}
	rest := strings.TrimLeft(t[len(w):], " \t")
	return w, rest == "" || strings.IndexByte(";,)].", rest[0]) >= 0
}

// phpWord is the label s starts with (a letter, _ or a byte of UTF-8,
// then digits too), or "".
func phpWord(s string) string {
	n := 0
	for n < len(s) && (isWordByte(s[n]) || s[n] >= 0x80) && (n > 0 || s[n] < '0' || s[n] > '9') {
		n++
	}
	return s[:n]
}

// rawString reads seg[p], a double quote, as one that opens a raw string
// by the prefix before it: its closer and where its value starts. C++'s
// R"delim( (also u8R, uR, UR, LR) is closed by )delim", the delimiter
// 16 bytes at most, without blanks, parentheses, backslashes or quotes;
// Rust's r", r#", r##" (also br, cr) by " and as many #. The prefix is a
// whole word (FOOR"( and bar" open none); Python's r""" is a triple
// quote, and its r"..." closes on its line.
func rawString(seg string, p int) (closer string, body int, ok bool) {
	h := p
	for h > 0 && seg[h-1] == '#' {
		h--
	}
	w := h
	for w > 0 && isWordByte(seg[w-1]) {
		w--
	}
	switch seg[w:h] {
	case "R", "u8R", "uR", "UR", "LR":
		if h != p {
			return "", 0, false
		}
		for d := p + 1; d < len(seg) && d <= p+17; d++ {
			switch seg[d] {
			case '(':
				return ")" + seg[p+1:d] + `"`, d + 1, true
			case ' ', '\t', ')', '\\', '"':
				return "", 0, false
			}
		}
	case "r", "br", "cr":
		if h == p && strings.HasPrefix(seg[p:], `"""`) {
			return "", 0, false
		}
		return `"` + seg[h:p], p + 1, true
	}
	return "", 0, false
}

// quotedLen is the length of the string that s opens with its quote
// when the line closes it (a backslash escaping the next byte), else 1:
// a quote left open on its line (an apostrophe) is a character.
func quotedLen(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case s[0]:
			return i + 1
		}
	}
	return 1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// rawOpener reports whether a backtick after before (the line up to it)
// opens a raw string: after an operator that starts an expression, after
// return, or right after an identifier (a tagged template).
func rawOpener(before string) bool {
	t := strings.TrimRight(before, " \t")
	if t == "" {
		return false
	}
	c := t[len(t)-1]
	switch {
	case strings.IndexByte("=(,:[{+?", c) >= 0:
		return true
	case strings.HasSuffix(t, "return") && (len(t) == len("return") || !isWordByte(t[len(t)-len("return")-1])):
		return true
	}
	return len(t) == len(before) && (isWordByte(c) || c == '$')
}

// asGivenLines marks the lines of newText (LF endings) that a
// re-indenting rung leaves as given: those of its literals but the ones
// that keep a line of oldText (kept, see Rewriter). Nil when none, and
// when oldText dangles (see Dangles).
func asGivenLines(oldText, newText string, kept map[int]int) []bool {
	if !mayHoldLiteral(newText) {
		return nil
	}
	given := givenLines(strings.Split(newText, "\n"), kept)
	if given != nil && mayHoldLiteral(oldText) && Dangles(strings.Split(strings.ReplaceAll(oldText, "\r\n", "\n"), "\n")) {
		return nil
	}
	return given
}

// LiteralSpans are the multi-line literals that lines (a text's, in
// order) open and close, as a re-indenting rung reads newText's: each the
// first and last index of the lines inside, which it leaves as given, the
// first the line after the opener's, the last the closer's. Nil when
// none. apply-patch asks it of the lines a chunk leaves.
func LiteralSpans(lines []string) [][2]int {
	if !slices.ContainsFunc(lines, mayHoldLiteral) {
		return nil
	}
	return literalSpans(lines)
}

// givenLines is asGivenLines of newText's lines.
func givenLines(lines []string, kept map[int]int) []bool {
	var given []bool
spans:
	for _, sp := range literalSpans(lines) {
		for j := sp[0]; j <= sp[1]; j++ {
			if _, ok := kept[j]; ok && strings.TrimSpace(lines[j]) != "" {
				continue spans
			}
		}
		if given == nil {
			given = make([]bool, len(lines))
		}
		for j := sp[0]; j <= sp[1]; j++ {
			given[j] = true
		}
	}
	return given
}

// LocateRewritten finds newText as a re-indenting rung wrote it for an
// edit of oldText, where its literals leave Locate nothing but windows
// of uneven indentation: on whole lines, the lines of its literals at the
// columns newText gives them (see asGivenLines), the others shifted by
// one amount. A retry that finds a sibling at a looser rung asks it
// (before, newText stood at the indentation rung). Matches are the
// indentation rung's, or the unicode rung's where the edit wrote
// newText in the file's typography; two at most. Nil when newText holds
// no literal. The windows checked line by line are bounded by the
// text's length: past it (a file of like lines), those found.
func (t *Text) LocateRewritten(oldText, newText string) []Match {
	oldText, newText = strings.ReplaceAll(oldText, "\r\n", "\n"), strings.ReplaceAll(newText, "\r\n", "\n")
	given := asGivenLines(oldText, newText, keptLines(oldText, newText))
	if given == nil {
		return nil
	}
	want, withEOL := splitLines(newText)
	if len(want) > len(t.lines) {
		return nil
	}
	for k, lk := range lineKeys {
		if lk.rung == RungTrailingWhitespace {
			continue // no re-indenting rung
		}
		keys := make([]string, len(want))
		for i, l := range want {
			keys[i] = lk.key(l)
		}
		budget := len(t.lines) + len(want)
		var ms []Match
	windows:
		for _, s := range t.windows(k, t.keyed(k), keys) {
			if len(ms) == 2 || budget < 0 {
				break
			}
			budget -= len(want)
			t.steps += len(want)
			var old, got []string
			for i, l := range want {
				g := t.content(s + i)
				if !given[i] {
					old, got = append(old, l), append(got, g)
				} else if leadingSpace(g) != leadingSpace(l) {
					continue windows
				}
			}
			if _, fits := indentTransform(old, got); !fits {
				continue
			}
			last := t.lines[s+len(want)-1]
			m := Match{Start: t.lines[s].start, End: last.end, Line: s + 1, Rung: lk.rung}
			if m.Rung == RungWhitespace {
				m.Rung = RungIndentation
			}
			if withEOL {
				m.End = last.next
			}
			ms = append(ms, m)
		}
		if len(ms) > 0 {
			return ms
		}
	}
	return nil
}
