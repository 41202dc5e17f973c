package core

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/search"
	"github.com/agentfs/agentfs/textfile"
)

// ReplaceRequest replaces every match of a query in every selected file,
// as one transaction: sed -i over a tree, all or nothing.
type ReplaceRequest struct {
	Query         string  `json:"query" arg:"0" required:"true" help:"text to replace (a fixed string unless regex)"`
	Replacement   *string `json:"replacement" arg:"1" required:"true" help:"what each match becomes (\"\" deletes it); with regex, $1 and ${name} are the groups, $$ a dollar"`
	Path          string  `json:"path,omitempty" arg:"2" alias:"file_path,dir_path" default:"." help:"file or directory to change"`
	Regex         bool    `json:"regex,omitempty" help:"the query is a regular expression (Go RE2 syntax)"`
	Word          bool    `json:"word,omitempty" flagAlias:"w" help:"match whole words only: foo does not match in http2foo or foobar"`
	IgnoreCase    bool    `json:"ignoreCase,omitempty" help:"ignore case (Unicode simple folding)"`
	Include       Globs   `json:"include,omitempty" alias:"glob" help:"change only files matching one of these globs; without a slash a glob matches the name at any depth"`
	Exclude       Globs   `json:"exclude,omitempty" help:"globs of paths to leave out; without a slash a glob matches a name at any depth"`
	NoIgnore      bool    `json:"noIgnore,omitempty" help:"do not honour .gitignore, .ignore, .git/info/exclude and .agentfsignore"`
	ExpectedCount *int    `json:"expectedCount,omitempty" min:"0" help:"the number of matches expected in all; another number changes nothing (STALE)"`
	ExpectedPlan  string  `json:"expectedPlan,omitempty" notEmpty:"true" pattern:"^plan-[0-9a-f]{32}$" patternIs:"a plan token from a dry run: plan- and 32 hexadecimal digits" help:"the plan of a dry run of the same replace: STALE, nothing changed, unless the same files at the same versions would change in the same way"`
	DryRun        bool    `json:"dryRun,omitempty" help:"report the counts and diffs without writing"`
	NoIndex       bool    `json:"noIndex,omitempty" help:"read every file, even when an index (agentfs index) covers the path; the results are the same"`
	Context       *int    `json:"context,omitempty" flagAlias:"C" min:"0" max:"10" default:"3" help:"unchanged lines around each change in the diffs, as diff -u's 3; 0 gives the changed lines alone"`
}

// ReplaceResult says what a replace changed (or, with dryRun, would).
type ReplaceResult struct {
	// Replacements counts every match, as grep does: one replaced by
	// itself too, though a file with no other change is neither written
	// nor listed.
	Replacements  int `json:"replacements"`
	FilesChanged  int `json:"filesChanged"`
	FilesSearched int `json:"filesSearched"`
	BinarySkipped int `json:"binaryFilesSkipped,omitempty"`
	// BinaryWithMatches counts the files skipped as binary that grep
	// searches as text and shows a match in (not UTF-8, a NUL past its
	// first 64 KiB, a byte-order mark before bytes not in its encoding):
	// matches left as they were. BinaryMatches names the first
	// maxBinaryMatchesListed of them.
	BinaryWithMatches int        `json:"binaryFilesWithMatches,omitempty"`
	BinaryMatches     []LeftFile `json:"binaryMatches,omitempty"`
	// Unreadable counts the files and directories skipped for want of
	// permission, as grep's does: a match there was neither seen nor
	// replaced.
	Unreadable int  `json:"unreadable,omitempty"`
	DryRun     bool `json:"dryRun,omitempty"`
	Truncated  bool `json:"truncated,omitempty"`
	// FilesOmitted counts the changed files left out of files for the
	// bound (the totals count them all).
	FilesOmitted int `json:"filesOmitted,omitempty"`
	// Hint is set when nothing matched a fixed string that reads as a
	// regular expression.
	Hint string `json:"hint,omitempty"`
	// Plan, of a dry run, names what it would change: the files, their
	// versions and the request. Passed back as expectedPlan, the replace
	// changes exactly that or nothing (STALE).
	Plan string `json:"plan,omitempty"`
	// DiffsInDryRun, of a replace applied with expectedPlan, says that
	// its files are answered without their diffs: the dry run that gave
	// the plan showed them, and the plan proves the change the same.
	DiffsInDryRun bool           `json:"diffsInDryRun,omitempty" help:"the diffs are left out: the dry run whose plan was passed as expectedPlan showed them, and the change applied is the one it showed"`
	Files         []ReplacedFile `json:"files"`
}

// ReplacedFile is one changed file: its matches and a diff, cut at a line
// when the bound leaves no more room.
type ReplacedFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Count      int    `json:"count"`
	Diff       string `json:"diff,omitempty"`
}

// LeftFile is a file a replace left as it was.
type LeftFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
}

// maxBinaryMatchesListed bounds ReplaceResult.BinaryMatches.
const maxBinaryMatchesListed = 20

// replacer is a compiled replace: the expression and how a match becomes
// its replacement.
type replacer struct {
	re *regexp.Regexp
	// words, for --word, finds re's whole-word matches (findAll), as
	// grep's --word does.
	words *search.Words
	// with is the replacement as given; withLF and withCRLF are it,
	// each of its newlines (LF or CRLF) written as LF, and as CRLF.
	with, withLF, withCRLF replacement
	literal                bool
	// lfView: a query that does not speak of CR sees a CRLF file's lines
	// as LF lines, so that its \n matches a CRLF and a replacement's \n
	// is written as CRLF (a fixed string saw the bytes as they are: its \n
	// matched nothing there, and a replacement's left a bare LF).
	lfView bool
	// byLine: a query that does not ask for a newline matches within each
	// line, its ending left out, as grep's and sed's do: \s+$ over the
	// whole text took blank lines and the final newline with the trailing
	// blanks. A CR before a line's LF is part of its ending (\s+$ took it
	// too, in a mixed file) unless the query names CR (withCR), which
	// then sees it as sed and rg do, at the end of the line.
	byLine, withCR bool
	// lines finds, by line, where a match may be (grep's candidate
	// finder: a literal or a run of classes every match holds), so that
	// the expression sees only those lines; nil where grep's matcher
	// takes no such query.
	lines *search.Matcher
	// fixed, for a fixed string matched as it is written (without
	// --ignore-case or --word), is that string, whose matches findAll
	// finds as bytes where re finds the same: the string is UTF-8, so
	// that where its bytes are, its characters are, in any text (its
	// first byte starts a character, which no byte before it can take),
	// and a match of re is its bytes. Not for a string holding U+FFFD,
	// which re also finds at a byte that is not UTF-8.
	fixed []byte
}

// spansLines reports a regex that asks to match across lines: a newline
// it must match (\n, [\n]), a dot that matches one ((?s)), or the start
// or end of the whole text (\A, \z: within lines, \A matched at every
// line). A class that merely holds a newline (\s, [^x]) matches within
// lines, as in grep. re is parsed with ^ and $ at each line.
func spansLines(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpBeginText, syntax.OpEndText:
		return true
	}
	return search.NeedsNewline(re) || slices.ContainsFunc(re.Sub, spansLines)
}

// speaksOfCR reports a regex that names a CR: a literal one (\r, \x0d) or
// a class that holds one and no space ([\r\n], [\x00-\x1f]); \s and [^x]
// hold one only among all whitespace, or all else.
func speaksOfCR(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\r') {
			return true
		}
	case syntax.OpCharClass:
		if inClass(re.Rune, '\r') && !inClass(re.Rune, ' ') {
			return true
		}
	}
	return slices.ContainsFunc(re.Sub, speaksOfCR)
}

// namesCR reports whether a query asks for a CR: a fixed string that
// holds one, or a regex that names one (speaksOfCR). A CRLF line's CR is
// then its last character to the query, as sed and rg see it; else it is
// part of its ending, and no query sees it.
func namesCR(query string, regex bool) bool {
	if !regex {
		return strings.Contains(query, "\r")
	}
	tree, err := syntax.Parse(query, syntax.Perl&^syntax.OneLine)
	return err == nil && speaksOfCR(tree)
}

// inClass reports whether the ranges of a class hold r.
func inClass(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}

func newReplacer(req ReplaceRequest) (*replacer, error) {
	if err := checkQuery("replace", req.Query); err != nil {
		return nil, err
	}
	// A regular expression matches text (a byte that is not UTF-8 would
	// be U+FFFD to it, any such byte), and a replacement that is not
	// would make the file NOT_TEXT, as an edit's would.
	for _, f := range []struct{ name, text string }{{"query", req.Query}, {"replacement", *req.Replacement}} {
		if !utf8.ValidString(f.text) {
			return nil, fault.InvalidArgument("the %s is not valid UTF-8 (byte %d).", f.name, invalidUTF8At([]byte(f.text))).
				WithHint("replace changes text: give the %s as UTF-8", f.name)
		}
	}
	if at := strings.IndexByte(*req.Replacement, 0); at >= 0 {
		return nil, madeBinary("the replacement", at)
	}
	expr := req.Query
	spans, cr := strings.Contains(expr, "\n"), namesCR(expr, req.Regex)
	if !req.Regex {
		expr = regexp.QuoteMeta(expr)
	} else if _, err := syntax.Parse(expr, syntax.Perl); err != nil {
		// Parsed as given, so that the error can point into the query
		// (what RE2 lacks, and where), as grep's does.
		return nil, search.RegexError(req.Query, err)
	} else {
		// As it is compiled: ^ and $ at each line.
		tree, _ := syntax.Parse(expr, syntax.Perl&^syntax.OneLine)
		spans = spansLines(tree) || search.NamesNewline(expr)
	}
	flags := "(?m)"
	if req.IgnoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + expr)
	if err != nil {
		return nil, search.RegexError(req.Query, err)
	}
	var words *search.Words
	if req.Word {
		if words, err = search.NewWords(flags, expr); err != nil {
			return nil, search.RegexError(req.Query, err)
		}
	}
	if re.MatchString("") {
		return nil, fault.InvalidArgument("the query matches the empty string, so it would insert the replacement where nothing matched (between characters, or at an anchor such as ^ or \\A).").
			WithHint("make the query match at least one character")
	}
	if req.Regex {
		if err := checkGroups(re, *req.Replacement); err != nil {
			return nil, err
		}
		if err := checkBackslashGroups(re, *req.Replacement); err != nil {
			return nil, err
		}
	}
	withLF := strings.ReplaceAll(*req.Replacement, "\r\n", "\n")
	form := func(text string) replacement {
		return replacement{text: []byte(text), size: expansionOf(re, []byte(text), !req.Regex)}
	}
	rp := &replacer{re: re, words: words, with: form(*req.Replacement), withLF: form(withLF), withCRLF: form(strings.ReplaceAll(withLF, "\n", "\r\n")),
		literal: !req.Regex, lfView: !cr, byLine: !spans, withCR: cr}
	if !req.Regex && !req.IgnoreCase && !req.Word && !strings.ContainsRune(req.Query, utf8.RuneError) {
		rp.fixed = []byte(req.Query)
	}
	if rp.byLine {
		// Without --word's \b: its lines are fewer than the query's.
		rp.lines, _ = search.NewMatcher(req.Query, req.Regex, req.IgnoreCase)
	}
	return rp, nil
}

// findAll returns the index pairs of every match in b and its groups, as
// FindAllSubmatchIndex does; with --word, of every match with no word
// character right before or after it (search.Words).
func (r *replacer) findAll(b []byte) [][]int {
	if r.fixed != nil {
		ms, _ := r.fixedAll(nil, nil, b)
		return ms
	}
	if r.words == nil {
		return r.re.FindAllSubmatchIndex(b, -1)
	}
	return r.words.FindAll(b)
}

// fixedAll appends to ms the matches of r.fixed in b, as findAll finds
// them, left to right and apart, each a pair of flat: where
// FindAllSubmatchIndex allocated 240 bytes a line that holds one, a
// line by line pass that gives back ms[:0] and flat[:0] allocates none.
func (r *replacer) fixedAll(ms [][]int, flat []int, b []byte) ([][]int, []int) {
	for at := 0; ; {
		i := bytes.Index(b[at:], r.fixed)
		if i < 0 {
			return ms, flat
		}
		at += i
		flat = append(flat, at, at+len(r.fixed))
		ms = append(ms, flat[len(flat)-2:len(flat):len(flat)])
		at += len(r.fixed)
	}
}

// has reports whether b holds a match (findAll's).
func (r *replacer) has(b []byte) bool {
	if r.words == nil {
		return r.re.Match(b)
	}
	return r.words.Match(b)
}

// streamed is the expression that tells whether a text too large to hold
// may hold a match: with --word, the one that matches where findAll
// finds a whole-word match (search.Words.Regexp).
func (r *replacer) streamed() *regexp.Regexp {
	if r.words != nil {
		return r.words.Regexp()
	}
	return r.re
}

// groupRef is a replacement's reference to a group as regexp.Expand
// reads it: $name or ${name}, a name the longest run of letters, digits
// and _.
type groupRef struct {
	name  string
	brace bool
}

// templateRefs reads a replacement as regexp.Expand does, calling ref
// with each reference until it returns false: $$ is a dollar, $name or
// ${name} a group by number or name, and a $ before anything else
// itself. literal is its bytes outside the references read.
func templateRefs(with string, ref func(groupRef) bool) (literal int) {
	for rest := with; ; {
		before, after, found := strings.Cut(rest, "$")
		literal += len(before)
		if !found {
			return literal
		}
		rest = after
		if strings.HasPrefix(rest, "$") {
			literal++
			rest = rest[1:]
			continue
		}
		brace := strings.HasPrefix(rest, "{")
		name := strings.TrimPrefix(rest, "{")
		end := strings.IndexFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
		if end < 0 {
			end = len(name)
		}
		name = name[:end]
		if name == "" || brace && !strings.HasPrefix(rest[1+end:], "}") {
			literal++ // no reference: the $ is itself
			continue
		}
		if !ref(groupRef{name: name, brace: brace}) {
			return literal
		}
		if rest = rest[len(name):]; brace {
			rest = rest[2:] // { and }
		}
	}
}

// groups are the groups of re that g may stand for, by number: the one
// it numbers (Expand reads up to 9 digits, without a leading 0, as a
// number), or each of that name, of which Expand takes the first that
// took part in the match.
func (g groupRef) groups(re *regexp.Regexp) []int {
	if n, err := strconv.Atoi(g.name); err == nil && len(g.name) <= 9 && (g.name == "0" || g.name[0] != '0') {
		if n <= re.NumSubexp() {
			return []int{n}
		}
		return nil
	}
	var in []int
	for i, name := range re.SubexpNames() {
		if name == g.name {
			in = append(in, i)
		}
	}
	return in
}

// checkGroups refuses a replacement that refers to a group re does not
// have: regexp.Expand makes it "", deleting what the match held, and
// reads $2_ as the group named "2_".
func checkGroups(re *regexp.Regexp, with string) (err error) {
	templateRefs(with, func(g groupRef) bool {
		if len(g.groups(re)) > 0 {
			return true
		}
		hint := fmt.Sprintf("the regex has %d group(s); write $$ for a dollar", re.NumSubexp())
		if k := groupPrefix(re, g.name); k > 0 && !g.brace {
			hint = fmt.Sprintf("write ${%s}%s for group %s followed by %q: $%s is read as one name", g.name[:k], g.name[k:], g.name[:k], g.name[k:], g.name)
		}
		err = fault.Errorf(fault.CodeInvalidArgument, "the replacement refers to group %q, which the regex does not have: it would put nothing there.", g.name).WithHint("%s", hint)
		return false
	})
	return err
}

// groupPrefix is the length of the longest run of digits that starts
// name, leaves some of it after, and is a group re has (0 when none), for
// the hint of a reference read as one name: $10 with one group is group
// 1 and a 0 as sed reads \10, and the hint said ${12}x for $12x, or
// ${2}x for $2x, with one group: a reference refused again.
func groupPrefix(re *regexp.Regexp, name string) int {
	digits := strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(name)
	}
	if name == "" || name[0] == '0' {
		// $0x is group 0 and an x; $01 is no number with a group in it.
		if digits == 1 && len(name) > 1 {
			return 1
		}
		return 0
	}
	for k := min(digits, len(name)-1); k > 0; k-- {
		if n, err := strconv.Atoi(name[:k]); err == nil && n <= re.NumSubexp() {
			return k
		}
	}
	return 0
}

// checkBackslashGroups refuses a replacement holding \N, sed's and
// Python's reference to group N, where the regex has that group: here it
// is written as it stands (Expand's references are $N), so that
// fmt.Errorf("\1") landed in the code, with success.
func checkBackslashGroups(re *regexp.Regexp, with string) error {
	for i := 0; i+1 < len(with); i++ {
		if d := with[i+1]; with[i] == '\\' && d >= '1' && d <= '9' && int(d-'0') <= re.NumSubexp() {
			return fault.InvalidArgument("the replacement holds \\%c, which would be written as it stands: a group is $%c here, as in Go, Rust and JavaScript.", d, d).
				WithHint("write $%c (or ${%c} before a letter, digit or _); a backslash and a digit are written with edit", d, d)
		}
	}
	return nil
}

// nextLine is where the first line of b at or after from that may hold
// a match starts, len(b) when none may; fs is the finder's state over b.
func (r *replacer) nextLine(b []byte, from int, fs *search.FoldState) int {
	if r.lines == nil || from >= len(b) {
		return from
	}
	c := r.lines.Candidate(b, from, fs)
	if c < 0 {
		return len(b)
	}
	return bytes.LastIndexByte(b[:c], '\n') + 1
}

// anyLine reports whether a line of b, whole lines, holds a match.
func (r *replacer) anyLine(b []byte) bool {
	var fs search.FoldState
	fs.Reset()
	for at := r.nextLine(b, 0, &fs); at < len(b); at = r.nextLine(b, at, &fs) {
		line, ending := cutLine(b[at:], !r.withCR)
		if r.has(line) {
			return true
		}
		at += len(line) + len(ending)
	}
	return false
}

// apply replaces every match in data and counts them, the expression
// seeing data as lfView gives it, or line by line; the file keeps its
// mark and endings. Line by line, diff is the line diff of the change,
// which the replace made: no diff needs computing (a file of 19,000
// changed lines cost 2 s of the diff's search, under the file's lock).
//
// A text that would pass maxPlannedText bytes is not built: err is then
// textOverLimit's TOO_LARGE. Built, a 100 KB replacement of each byte of
// a 1 MB file (100 GB) ended in Go's out of memory.
func (r *replacer) apply(data []byte) (out []byte, n int, diff []diffLine, err error) {
	if r.byLine {
		return r.applyByLine(data)
	}
	out, n, err = r.applyWhole(data)
	return out, n, nil, err
}

// applyWhole is apply of a query that spans lines, over the whole text.
func (r *replacer) applyWhole(data []byte) ([]byte, int, error) {
	prefix, body, crlf := r.view(data)
	ms := r.findAll(body)
	n := len(ms)
	if n == 0 {
		return nil, 0, nil
	}
	// At least this long: a replacement's newlines written CRLF, as in
	// a CRLF file, make it longer.
	if size := len(prefix) + r.withLF.size.replaced(body, ms); size > maxPlannedText {
		return nil, 0, textOverLimit("replace", "", size)
	}
	var out []byte
	switch {
	case crlf:
		// In LF, as the view is; every LF is then written CRLF, and a CR
		// of the file's or of the replacement's stays as it is.
		out = r.replaceIn(body, []byte("\n"))
	case r.lfView:
		out = r.replaceAcross(body)
	default:
		out = r.replaceIn(body, nil)
	}
	out = r.withoutNewMarks(body, out)
	if crlf {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	return append(append([]byte{}, prefix...), out...), n, nil
}

// expansion is a replacement as regexp's Expand makes it in a match,
// for the length of what it makes without making it: its literal bytes,
// and its references, each name once with the times it is given.
type expansion struct {
	literal int
	refs    []timesRef
}

// timesRef is a reference given times times: the groups it may stand
// for (groupRef.groups).
type timesRef struct {
	groups []int
	times  int
}

// expansionOf reads template as Expand does, or, for a fixed string, as
// bytes.
func expansionOf(re *regexp.Regexp, template []byte, literal bool) expansion {
	if literal {
		return expansion{literal: len(template)}
	}
	var x expansion
	at := map[string]int{}
	x.literal = templateRefs(string(template), func(g groupRef) bool {
		i, ok := at[g.name]
		if !ok {
			i = len(x.refs)
			at[g.name] = i
			x.refs = append(x.refs, timesRef{groups: g.groups(re)})
		}
		x.refs[i].times++
		return true
	})
	return x
}

// replaced is the length of b with each match of ms replaced by x's
// expansion in it, as Expand makes it.
func (x expansion) replaced(b []byte, ms [][]int) int {
	size := len(b)
	for _, m := range ms {
		size += x.literal - (m[1] - m[0])
		for _, r := range x.refs {
			// The first of its groups that took part.
			for _, i := range r.groups {
				if 2*i+1 < len(m) && m[2*i] >= 0 {
					size += r.times * (m[2*i+1] - m[2*i])
					break
				}
			}
		}
	}
	return size
}

// replacement is a form of the replacement: its text, and the size of
// what it makes in a match (so that a result too large for any file
// replace writes is refused before it is built).
type replacement struct {
	text []byte
	size expansion
}

// withFor is the replacement with each of its newlines written as eol,
// LF or CRLF; as given when eol is neither.
func (r *replacer) withFor(eol []byte) replacement {
	switch string(eol) {
	case "\n":
		return r.withLF
	case "\r\n":
		return r.withCRLF
	}
	return r.with
}

// replaceIn replaces every match in b, each newline of the replacement
// (LF or CRLF) written as eol, LF or CRLF; as given when eol is nil.
func (r *replacer) replaceIn(b, eol []byte) []byte {
	with := r.withFor(eol).text
	switch {
	case r.words != nil:
		return r.replaceEach(b, func([]int) []byte { return with })
	case r.literal:
		return r.re.ReplaceAllLiteral(b, with)
	}
	return r.re.ReplaceAll(b, with)
}

// appendReplaced appends b to dst with every match of ms, findAll's of
// b, replaced as replaceIn replaces it, without a search for them again
// (the line-by-line pass ran the expression twice a line, 70% of a
// replace of every line of 10 files of 1 MB). An empty match (\b) is
// left to replaceIn: where FindAll and ReplaceAll may part, which
// empty match each takes, its matches are its own. Without one, the two
// search from the same place at every step and find the same matches.
func (r *replacer) appendReplaced(dst, b, eol []byte, ms [][]int) []byte {
	if r.words == nil && slices.ContainsFunc(ms, func(m []int) bool { return m[0] == m[1] }) {
		return append(dst, r.replaceIn(b, eol)...)
	}
	with := r.withFor(eol).text
	last := 0
	for _, m := range ms {
		dst = append(dst, b[last:m[0]]...)
		if r.literal {
			dst = append(dst, with...)
		} else {
			dst = r.re.Expand(dst, with, b, m)
		}
		last = m[1]
	}
	return append(dst, b[last:]...)
}

// replaceAcross replaces every match in b, a text of LF or mixed
// endings, each newline of a replacement written as the ending of the
// line its match starts on (the file's usual one on a last line without).
func (r *replacer) replaceAcross(b []byte) []byte {
	usual := usualEnding(b)
	return r.replaceEach(b, func(m []int) []byte {
		if eol := endingAt(b, m[0], usual); len(eol) == 2 {
			return r.withCRLF.text
		}
		return r.withLF.text
	})
}

// replaceEach replaces every match m in b with withAt(m), its groups
// expanded unless the query is a fixed string.
func (r *replacer) replaceEach(b []byte, withAt func(m []int) []byte) []byte {
	var out []byte
	last := 0
	for _, m := range r.findAll(b) {
		out = append(out, b[last:m[0]]...)
		if r.literal {
			out = append(out, withAt(m)...)
		} else {
			out = r.re.Expand(out, withAt(m), b, m)
		}
		last = m[1]
	}
	return append(out, b[last:]...)
}

// withoutNewMarks is replaced, the text b after its replacements, less
// the U+FEFF that the replacement of a match at b's start (after b's own
// marks) put there: on disk such a U+FEFF is a byte-order mark, as edit
// and write know (textfile.WithoutNewMarks).
func (r *replacer) withoutNewMarks(b, replaced []byte) []byte {
	had := 0
	for bytes.HasPrefix(b[had*len("\uFEFF"):], []byte("\uFEFF")) {
		had++
	}
	if !bytes.HasPrefix(replaced, bytes.Repeat([]byte("\uFEFF"), had+1)) {
		return replaced
	}
	ms := r.findAll(b)
	if len(ms) == 0 || ms[0][0] > had*len("\uFEFF") {
		return replaced
	}
	first := r.with.text
	if !r.literal {
		first = r.re.Expand(nil, r.with.text, b, ms[0])
	}
	return []byte(textfile.WithoutNewMarks(string(b), string(replaced), textfile.LeadingMarks(string(first))))
}

// endingAt is the ending of the line of b holding byte i: LF, CRLF, or
// usual for a last line without one.
func endingAt(b []byte, i int, usual []byte) []byte {
	j := bytes.IndexByte(b[i:], '\n')
	switch {
	case j < 0:
		return usual
	case i+j > 0 && b[i+j-1] == '\r':
		return []byte("\r\n")
	}
	return []byte("\n")
}

// usualEnding is the line ending most of b's lines have, LF on a tie.
func usualEnding(b []byte) []byte {
	if crlf := bytes.Count(b, []byte("\r\n")); crlf > bytes.Count(b, []byte("\n"))-crlf {
		return []byte("\r\n")
	}
	return []byte("\n")
}

// applyByLine is apply within each line of data (after a byte-order
// mark), its ending (LF or CRLF) kept out of the match and left as it is.
// The diff's unchanged lines are substrings of one copy of data: a line
// without a match allocates nothing.
func (r *replacer) applyByLine(data []byte) ([]byte, int, []diffLine, error) {
	prefix, body := textfile.CutUTF8BOM(data)
	text := string(data)
	out := append(make([]byte, 0, len(data)), prefix...)
	// A last line without an ending writes a replacement's newline as
	// the file's usual ending.
	usual := usualEnding(body)
	// A run of changed lines reads as diff -u writes it, its old lines,
	// then its new: text[runFrom:from] and out[runOutFrom:outFrom] since
	// the last kept line, each split in lines once the run ends. Every
	// new line but the file's last ends as its old line did, so that the
	// run's new text splits into the lines each of its lines gave. One
	// entry a line, and one a new line: sized for a change of every
	// line, the diff grows no more (a slice grown line by line, and one
	// of the new lines of a run, allocated 150 MB for a file of 500,000
	// changed lines).
	lines := bytes.Count(body, []byte("\n")) + 1
	diff := make([]diffLine, 0, 2*lines)
	n := 0
	// A line is text[from:to] and out[outFrom:]; the first holds the
	// mark, as the file's first line does.
	from, outFrom := 0, 0
	runFrom, runOutFrom := 0, 0
	// matched and flat hold the matches of a line of a fixed string, the
	// next line's in the same arrays.
	var matched [][]int
	var flat []int
	endRun := func() {
		diff = appendDiffLines(diff, '-', text[runFrom:from])
		if outFrom > runOutFrom {
			diff = appendDiffLines(diff, '+', string(out[runOutFrom:outFrom]))
		}
	}
	// The lines before next hold no match; at is where a line starts in
	// body.
	var fs search.FoldState
	fs.Reset()
	at, next := 0, r.nextLine(body, 0, &fs)
	for line, ending := range linesOf(body, !r.withCR) {
		to := from + len(line) + len(ending)
		if from == 0 {
			to += len(prefix)
		}
		old := text[from:to]
		ms := matched[:0]
		switch {
		case at < next:
		case r.fixed != nil:
			matched, flat = r.fixedAll(matched[:0], flat[:0], line)
			ms = matched
		default:
			ms = r.findAll(line)
		}
		k := len(ms)
		at += len(line) + len(ending)
		if at > next {
			next = r.nextLine(body, at, &fs)
		}
		if k > 0 {
			n += k
			// A replacement's newline, LF or CRLF, is the line's ending
			// (a CRLF in an LF line was written CRLF). A query that names
			// CR sees it as a character, as sed does: the replacement is
			// written as given, its CRs its own.
			eol := ending
			switch {
			case r.withCR:
				eol = nil
			case len(eol) == 0:
				eol = usual
			}
			if size := len(out) + r.withFor(eol).size.replaced(line, ms) + len(ending); size > maxPlannedText {
				return nil, 0, nil, textOverLimit("replace", "", size)
			}
			if from == 0 {
				out = append(out, r.withoutNewMarks(line, r.appendReplaced(nil, line, eol, ms))...)
			} else {
				out = r.appendReplaced(out, line, eol, ms)
			}
			out = append(out, ending...)
		} else {
			out = append(append(out, line...), ending...)
		}
		if string(out[outFrom:]) == old {
			endRun()
			diff = append(diff, diffLine{' ', old})
			runFrom, runOutFrom = to, len(out)
		}
		from, outFrom = to, len(out)
	}
	if n == 0 {
		return nil, 0, nil, nil
	}
	endRun()
	return out, n, diff, nil
}

// linesOf yields each line of b and its ending: LF, or none for the last;
// with cutCR, CRLF for a line that ends so.
func linesOf(b []byte, cutCR bool) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for len(b) > 0 {
			line, ending := cutLine(b, cutCR)
			b = b[len(line)+len(ending):]
			if !yield(line, ending) {
				return
			}
		}
	}
}

// cutLine is the first line of b and its ending, as linesOf gives them.
func cutLine(b []byte, cutCR bool) (line, ending []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, b[len(b):]
	}
	j := i
	if cutCR && i > 0 && b[i-1] == '\r' {
		j = i - 1
	}
	return b[:j], b[j : i+1]
}

// matches reports whether data holds a match, as apply sees it.
func (r *replacer) matches(data []byte) bool {
	if r.byLine {
		_, body := textfile.CutUTF8BOM(data)
		return r.anyLine(body)
	}
	_, body, _ := r.view(data)
	return r.has(body)
}

// view is data as the expression sees it: without a byte-order mark (so
// that ^ matches on line 1), and, for a query without CR (lfView) on a file whose
// every line ends in CRLF, with LF endings, so that $ matches at the end
// of each line and \s cannot take a CR from its LF (leaving mixed
// endings); crlf says so. A CR within a line (one\rtwo) stays a
// character: such a file was not viewed so, and a query spanning lines
// silently matched nothing in it. Turning LF back into CRLF then gives
// back every byte outside the matches.
func (r *replacer) view(data []byte) (prefix, body []byte, crlf bool) {
	prefix, body = textfile.CutUTF8BOM(data)
	if !r.lfView {
		return prefix, body, false
	}
	n := bytes.Count(body, []byte("\n"))
	if n > 0 && bytes.Count(body, []byte("\r\n")) == n {
		return prefix, bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), true
	}
	return prefix, body, false
}

// Replace finds the files with matches (ignore files honoured, binary files
// skipped), then, under the locks of those files, reads each again,
// replaces every match and commits all the files as one transaction whose
// writes are compare-and-swaps against what it read: all of them change or
// none. A file that cannot be replaced (a hard link, no permission, over
// 2 MiB, or made over 2 MiB by the replacement) refuses the whole replace.
func (t *Tools) Replace(ctx context.Context, req ReplaceRequest) (*ReplaceResult, error) {
	if err := Validate(&req); err != nil {
		return nil, err
	}
	m, err := t.mutableFS("replace")
	if err != nil {
		return nil, err
	}
	rp, err := newReplacer(req)
	if err != nil {
		return nil, err
	}
	tx, ok := m.(backend.Transactor)
	if !ok && !req.DryRun {
		return nil, fault.Errorf(fault.CodeNotSupported, "replace is not available: this backend has no transactions.").
			WithHint("change the files one by one with edit")
	}
	// The search reads again while a file it passed over holds a change
	// of a transaction not yet committed, which may yet be undone.
	var res *ReplaceResult
	lost := func(err error) string { return cmp.Or(fault.AsError(err).Path, t.FS.Display(cmp.Or(req.Path, "."))) }
	// One --lock-timeout for the search's reads again and the locks.
	deadline := time.Now().Add(t.LockTimeout)
	paths, err := untilWon(ctx, deadline, t.LockTimeout, lost, func() ([]string, error) {
		res = &ReplaceResult{Files: []ReplacedFile{}, DryRun: req.DryRun}
		return t.replaceCandidates(ctx, req, rp, res)
	})
	if err != nil {
		return nil, err
	}
	if res.BinaryWithMatches > 0 {
		res.Hint = fmt.Sprintf("%d file(s) that grep shows a match in were skipped as binary and left as they are (binaryMatches names them): "+
			"not UTF-8 or UTF-16 text, or a NUL past grep's first 64 KiB; text in another encoding is read with read --encoding NAME and written back with write --encoding NAME, a file with a NUL rewritten whole with write", res.BinaryWithMatches)
	}
	if len(paths) == 0 {
		if res.Replacements == 0 && res.Hint == "" && len(req.Include) > 0 {
			if info, err := t.FS.Stat(ctx, cmp.Or(req.Path, ".")); err == nil && info.Type == backend.TypeDir {
				res.Hint = t.includeDirHint(ctx, cmp.Or(req.Path, "."), req.Include)
			}
		}
		if res.Replacements == 0 && !req.Regex && res.Hint == "" {
			res.Hint = regexLookalikeHint(req.Query)
		}
		if _, err := t.checkCount(req, res); err != nil {
			return nil, err
		}
		if err := t.settlePlan(req, nil, res); err != nil {
			return nil, err
		}
		if err := t.fitReplace(res, nil); err != nil {
			return nil, err
		}
		return res, nil
	}
	return mutateBy(ctx, t, m, paths, deadline, func() (*ReplaceResult, error) {
		return t.replaceOnce(ctx, tx, req, rp, paths, *res)
	})
}

// replaceCandidates lists the files of req that hold a match, counting
// the files searched and the binary ones skipped in res.
func (t *Tools) replaceCandidates(ctx context.Context, req ReplaceRequest, rp *replacer, res *ReplaceResult) ([]string, error) {
	include, err := req.Include.globs()
	if err != nil {
		return nil, err
	}
	exclude, err := checkGlobs("exclude", req.Exclude)
	if err != nil {
		return nil, err
	}
	root := req.Path
	if root == "" {
		root = "."
	}
	info, err := t.FS.Stat(ctx, root)
	if err != nil {
		return nil, t.WithSuggestions(ctx, root, t.settledMissing(ctx, root, err))
	}
	if err := checkFinalSlash(root, t.FS.Display(root), info.Type); err != nil {
		return nil, err
	}
	if info.Type != backend.TypeDir {
		// A path named itself is searched as grep searches it: what it
		// cannot open (a FIFO, a device) fails the replace, where a file
		// of a walk that became one since the listing is skipped.
		r, err := t.FS.Open(ctx, root)
		if err != nil {
			return nil, err
		}
		paths, err := t.searchFiles(ctx, rp, res, filesOf([]fileToSearch{{path: root, open: func() (io.ReadCloser, error) { return r, nil }}}))
		if err == nil && res.BinarySkipped > 0 {
			// Named, a file replace does not change is refused, as edit
			// refuses it: counted as skipped, a Latin-1 file that grep
			// shows a match in answered 0 replacements, with success.
			return nil, t.refuseBinary(ctx, root)
		}
		return paths, err
	}
	if err := t.checkGlobsBelow(ctx, root, "include", req.Include); err != nil {
		return nil, err
	}
	if err := t.checkGlobsBelow(ctx, root, "exclude", req.Exclude); err != nil {
		return nil, err
	}
	base := t.FS.Display(root)
	includes := newGlobSet(fromRoot(include, base))
	// A file removed below the directory by a transaction not yet
	// committed is not searched, and, once that removal is undone, holds
	// the matches the replace said it replaced.
	if err := t.settledRead(ctx, root, ""); err != nil {
		return nil, err
	}
	w, err := t.walker()
	if err != nil {
		return nil, err
	}
	var narrow *Narrowing
	if t.Index != nil && !req.NoIndex && rp.byLine {
		// Not a query across lines: it sees a CRLF file with LF endings,
		// whose trigrams the index does not hold.
		q := IndexQuery{Path: root, Query: req.Query, IsRegex: req.Regex, IgnoreCase: req.IgnoreCase, NoIgnore: req.NoIgnore, Exclude: exclude}
		if narrow, err = t.Index.Narrow(ctx, q); err != nil {
			return nil, err
		}
	}
	if narrow != nil && narrow.Files != nil {
		res.Unreadable += len(narrow.Unreadable)
		return t.searchFiles(ctx, rp, res, filesOf(t.indexedFiles(ctx, narrow, root, includes, res)))
	}
	var unreadable atomic.Int64
	opts := backend.WalkOptions{NoIgnore: req.NoIgnore, Exclude: exclude, ExcludeBase: base, Unreadable: func(string, string) { unreadable.Add(1) }}
	defer func() { res.Unreadable += int(unreadable.Load()) }()
	return t.searchFiles(ctx, rp, res, func(send func(fileToSearch)) error {
		return w.Walk(ctx, root, opts, func(e backend.WalkEntry) error {
			if e.Type != backend.TypeFile || !includes.all() && !includes.match(e.Rel, e.Name) {
				return nil
			}
			if narrow != nil {
				// Judged on the file's identity now, as grep's walk judges it.
				if info, err := e.Info(); err == nil && info.Type == backend.TypeFile && countSkipped(narrow.Judge(e.Rel, info), res) {
					return nil
				}
			}
			var open func() (io.ReadCloser, error)
			if e.Later != nil {
				open = e.Later()
			} else {
				r, err := e.Open() // valid only during the visit: opened now
				open = func() (io.ReadCloser, error) { return r, err }
			}
			send(fileToSearch{path: e.Path, open: open})
			return nil
		})
	})
}

// indexedFiles lists the files of the index's list that replace reads, in
// place of a walk, counting those it need not read in res.
func (t *Tools) indexedFiles(ctx context.Context, narrow *Narrowing, root string, include globSet, res *ReplaceResult) []fileToSearch {
	display := cmp.Or(narrow.Display, t.FS.Display(root))
	var files []fileToSearch
	for _, f := range narrow.Files {
		if !include.all() && !include.match(f.Rel, path.Base(f.Rel)) || countSkipped(f.Verdict, res) {
			continue
		}
		shown := t.belowDisplay(display, f.Rel)
		files = append(files, fileToSearch{path: shown, open: indexedOpen(ctx, t.FS, shown, f.Open)})
	}
	return files
}

// countSkipped counts in res a file the index proves holds no match, as a
// scan would count it: searched, and binary when it is. It reports false,
// and the file is read, when only reading tells how the scan counts it
// (text to grep that may not be UTF-8, which replace takes for binary).
func countSkipped(v Verdict, res *ReplaceResult) bool {
	if !v.Skip || !v.Binary && !v.Text {
		return false
	}
	res.FilesSearched++
	if v.Binary {
		res.BinarySkipped++
	}
	return true
}

// fileToSearch is a file a replace looks at, with its opener (valid after
// the walk, called once).
type fileToSearch struct {
	path string
	open func() (io.ReadCloser, error)
}

// filesOf feeds searchFiles the files of a list.
func filesOf(files []fileToSearch) func(send func(fileToSearch)) error {
	return func(send func(fileToSearch)) error {
		for _, f := range files {
			send(f)
		}
		return nil
	}
}

// matched is a file a search found, by its place in the order sent.
type matched struct {
	i    int
	path string
}

// searchAhead is how many files per worker a replace's walk may find
// ahead of its search: each waits with its opener, which holds the file's
// directory open.
const searchAhead = 16

// searchFiles reads the files that feed sends in a pool of workers, as
// grep does, and returns, in the order sent, those whose text holds a
// match; a file gone or unreadable since the listing is skipped, as grep
// skips it, any other error fails (the first sent of those). The files
// are searched as feed finds them, at most searchAhead per worker ahead:
// the walk once listed the whole tree first, holding an opener, and so a
// directory, for each file, and a tree of more directories than
// ulimit -n allows was IO_ERROR (514 MB over a million files).
// feed's error fails the search, each file sent opened and closed unread.
func (t *Tools) searchFiles(ctx context.Context, rp *replacer, res *ReplaceResult, feed func(send func(fileToSearch)) error) ([]string, error) {
	type outcome struct {
		match, binary, searched bool
		// grepMatch: binary to replace, and a match in grep's text.
		grepMatch bool
		// tooLarge: err is refuseLarge's TOO_LARGE.
		tooLarge bool
		err      error
	}
	type sent struct {
		i int
		f fileToSearch
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	next := make(chan sent, searchAhead*workers)
	var (
		mu      sync.Mutex
		found   []matched
		left    []matched // binary, with a match grep shows
		large   []matched // over MaxEditBytes, with a match
		failed  error     // the first sent of the files that fail the search
		failedI int
		failing atomic.Bool // feed failed: the files are only closed
		// Counted apart from res, which feed may count in meanwhile
		// (countSkipped).
		searched, binary, unreadable int
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []byte // each worker's, read into again for each file
			for s := range next {
				r, err := s.f.open()
				if failing.Load() {
					if err == nil {
						r.Close()
					}
					continue
				}
				var o outcome
				if err != nil {
					o.err = err
				} else {
					var data []byte
					data, err = readUpTo(r, buf, MaxEditBytes+1)
					buf = data[:0]
					if s, ok := r.(backend.SettledReader); ok && err == nil {
						// A file passed over holds no match only if what was
						// read stands: not a change that may yet be undone.
						err = s.Settled(ctx)
					}
					r.Close()
					switch {
					case err != nil:
						o.err = raced(fault.AsError(err).WithPath(s.f.path), fault.CodeStale)
					case len(data) > MaxEditBytes && largeBinary(data):
						// Skipped as a small one is, and as grep skips it: a
						// built tool in the tree refused the whole replace.
						o.searched, o.binary, o.grepMatch = true, true, rp.grepSees(data, true)
					case len(data) > MaxEditBytes:
						o.searched, o.err = true, t.refuseLarge(ctx, s.f.path, rp)
						o.tooLarge = o.err != nil && fault.AsError(o.err).Code == fault.CodeTooLarge
					default:
						text, ok := matchedText(data)
						o.searched, o.binary, o.match = true, !ok, ok && rp.matches(text)
						o.grepMatch = !ok && rp.grepSees(data, false)
					}
				}
				mu.Lock()
				switch {
				case o.err != nil && !SkippedFile(o.err):
					if failed == nil || s.i < failedI {
						failed, failedI = o.err, s.i
					}
				case o.err != nil && fault.Unreadable(o.err):
					unreadable++
				}
				if o.searched {
					searched++
				}
				if o.binary {
					binary++
				}
				if o.match {
					found = append(found, matched{s.i, s.f.path})
				}
				if o.grepMatch {
					left = append(left, matched{s.i, s.f.path})
				}
				if o.tooLarge {
					large = append(large, matched{s.i, s.f.path})
				}
				mu.Unlock()
			}
		})
	}
	n := 0
	err := feed(func(f fileToSearch) {
		next <- sent{n, f}
		n++
	})
	if err != nil {
		failing.Store(true)
	}
	close(next)
	wg.Wait()
	res.FilesSearched += searched
	res.BinarySkipped += binary
	res.Unreadable += unreadable
	switch {
	case err != nil:
		return nil, err
	case failed != nil && len(large) > 0 && fault.AsError(failed).Code == fault.CodeTooLarge:
		return nil, t.refuseAllLarge(large)
	case failed != nil:
		return nil, failed
	}
	byOrder := func(a, b matched) int { return cmp.Compare(a.i, b.i) }
	slices.SortFunc(left, byOrder)
	res.BinaryWithMatches += len(left)
	for _, m := range left[:min(len(left), max(0, maxBinaryMatchesListed-len(res.BinaryMatches)))] {
		var f LeftFile
		f.Path, f.PathBase64 = fault.PathText(t.FS.Display(m.path))
		res.BinaryMatches = append(res.BinaryMatches, f)
	}
	slices.SortFunc(found, byOrder)
	paths := make([]string, len(found))
	for i, m := range found {
		paths[i] = m.path
	}
	if err := ctx.Err(); err != nil {
		return nil, fault.Interrupted(ctx)
	}
	return paths, nil
}

// readUpTo reads r into buf, grown as needed, until its end or limit
// bytes: a file of up to 64 KiB in one read and the end's, where
// io.ReadAll started at 512 bytes for each file (three times grep's reads
// over Go's source).
func readUpTo(r io.Reader, buf []byte, limit int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 64<<10), limit-len(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// refuseLarge is TOO_LARGE for a file over what replace reads whole when
// it holds a match as apply would find one (a larger file without one is no
// concern of replace): line by line unless the query spans lines, and then
// in the LF view where it applies. The raw stream took a CR or a line's LF
// for \s, and refused a whole tree for a match grep did not see.
func (t *Tools) refuseLarge(ctx context.Context, path string, rp *replacer) error {
	found, err := rp.matchesStream(func() (io.ReadCloser, error) { return t.streamText(ctx, path) })
	if err != nil || !found {
		return err
	}
	return t.refuseAllLarge([]matched{{path: path}})
}

// maxLargeListed bounds the files a TOO_LARGE of many names.
const maxLargeListed = 20

// refuseAllLarge is the TOO_LARGE of the files over what replace reads
// whole that hold a match, all found by one search: it named the first
// alone, and a caller excluding them one by one met the
// next on each retry. details.paths names the first maxLargeListed, in
// the order sent, details.count counts them all.
func (t *Tools) refuseAllLarge(large []matched) error {
	slices.SortFunc(large, func(a, b matched) int { return cmp.Compare(a.i, b.i) })
	paths := make([]string, 0, min(len(large), maxLargeListed))
	for _, m := range large[:cap(paths)] {
		text, _ := fault.PathText(t.FS.Display(m.path))
		paths = append(paths, text)
	}
	e := fault.Errorf(fault.CodeTooLarge, "%d files hold a match but are over %d bytes, the limit of replace.", len(large), MaxEditBytes).
		WithHint("nothing was changed; exclude them (details.paths) with --exclude; to change one, %s", writeWhole)
	if len(large) == 1 {
		e = fault.Errorf(fault.CodeTooLarge, "the file holds a match but is over %d bytes, the limit of replace.", MaxEditBytes).
			WithHint("nothing was changed; exclude it with --exclude; to change it, %s", writeWhole)
	}
	return e.WithPath(t.FS.Display(large[0].path)).WithDetail("limit", MaxEditBytes).
		WithDetail("count", len(large)).WithDetail("paths", paths)
}

// refuseBinary is the NOT_TEXT of the file at path, which the search
// skipped as binary; errConflict when it is text now (a writer changed it
// since), for the search to look again.
func (t *Tools) refuseBinary(ctx context.Context, path string) error {
	r, err := t.FS.Open(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	// As searchFiles judges it: a large file by its head.
	data, err := readUpTo(r, nil, MaxEditBytes+1)
	if err != nil {
		return fault.AsError(err).WithPath(t.FS.Display(path))
	}
	if len(data) > MaxEditBytes && !largeBinary(data) {
		return errConflict
	}
	if _, ok := textfile.DecodeWhole(data); ok && len(data) <= MaxEditBytes {
		return errConflict
	}
	return binaryTo("replace", data, t.FS.Display(path))
}

// largeBinary reports whether a file too large to hold, of which head is
// the start, is no text as a small file is none: a NUL, or bytes that
// are not UTF-8, in its text after a UTF-8 byte-order mark (a character
// cut by head's end aside). A UTF-16 file is text. Only grep's first
// bytes were looked at: a file with a NUL further in, or in Latin-1,
// skipped when small, refused the whole replace when large.
func largeBinary(head []byte) bool {
	if c, ok := textfile.ByBOM(head); ok && c.Unit() == 2 {
		return false
	}
	_, text := textfile.CutUTF8BOM(head)
	return bytes.IndexByte(text, 0) >= 0 || !textfile.ValidPrefix(text, true)
}

// grepSees reports whether grep shows a match in data, a file replace
// skips as binary: one grep searches as text (no NUL in the first 64 KiB
// of its text, a UTF-16 file's decoded, as grep judges it), not being
// UTF-8 throughout, or a NUL further in. head: data is the start of a
// larger file (what searchFiles read of it, MaxEditBytes), matched to its
// last line end; a match past it is not sought. Only bytes already read
// are looked at.
func (r *replacer) grepSees(data []byte, head bool) bool {
	text := data
	if c, ok := textfile.ByBOM(data); ok && c.Unit() == 2 {
		if c.BinaryHead(data[:min(len(data), c.SampleLen())]) {
			return false
		}
		decoded, err := io.ReadAll(c.DecodingReader(bytes.NewReader(data[c.BOMLen():])))
		if err != nil {
			return false
		}
		text = decoded
	} else if _, body := textfile.CutUTF8BOM(data); textfile.BinaryStart(body) {
		return false
	}
	if head {
		text = text[:bytes.LastIndexByte(text, '\n')+1]
	}
	return r.matches(text)
}

// streamText opens a file as matchedText and matches see it, without
// holding it: the text after a byte-order mark, a UTF-16 file's decoded.
func (t *Tools) streamText(ctx context.Context, path string) (io.ReadCloser, error) {
	f, err := t.FS.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	head, _ := br.Peek(3)
	var text io.Reader = br
	if c, ok := textfile.ByBOM(head); ok && c.Unit() == 2 {
		br.Discard(c.BOMLen())
		text = c.DecodingReader(br)
	}
	tr := bufio.NewReaderSize(text, 64<<10)
	if head, _ := tr.Peek(3); string(head) == "\uFEFF" {
		tr.Discard(3)
	}
	return struct {
		io.Reader
		io.Closer
	}{tr, f}, nil
}

// matchesStream is matches over a text too large to hold, read from open
// (called once, or twice for the LF view: once to learn whether it
// applies).
func (r *replacer) matchesStream(open func() (io.ReadCloser, error)) (bool, error) {
	crlf := false
	if !r.byLine && r.lfView {
		text, err := open()
		if err != nil {
			return false, err
		}
		crlf, err = allCRLF(text)
		text.Close()
		if err != nil {
			return false, err
		}
	}
	text, err := open()
	if err != nil {
		return false, err
	}
	defer text.Close()
	if r.byLine {
		return r.matchesLines(bufio.NewReaderSize(text, 64<<10))
	}
	in := &errReader{r: text}
	var view io.Reader = in
	if crlf {
		view = crlfAsLF{bufio.NewReader(in)}
	}
	found := r.streamed().MatchReader(bufio.NewReader(view))
	return found, in.err
}

// allCRLF reports whether every line of text ends in CRLF: the file view
// turns into LF lines.
func allCRLF(text io.Reader) (bool, error) {
	buf := make([]byte, 64<<10)
	lf, crlf := 0, 0
	lastCR := false
	for {
		n, err := text.Read(buf)
		b := buf[:n]
		if n > 0 {
			lf += bytes.Count(b, []byte("\n"))
			crlf += bytes.Count(b, []byte("\r\n"))
			if lastCR && b[0] == '\n' {
				crlf++
			}
			lastCR = b[n-1] == '\r'
		}
		if err == io.EOF {
			return lf > 0 && crlf == lf, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// crlfAsLF is a text read with each CRLF as LF and any other CR kept: an
// all-CRLF text (allCRLF) as view sees it.
type crlfAsLF struct{ r *bufio.Reader }

func (d crlfAsLF) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := d.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b == '\r' {
			if next, _ := d.r.Peek(1); len(next) == 1 && next[0] == '\n' {
				continue
			}
		}
		p[n] = b
		n++
	}
	return n, nil
}

// errReader keeps the error of a read that failed, which MatchReader
// takes for the end of the text.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// matchesLines is matches of a query within lines over a text read from
// br. The lines in br's buffer are matched there as bytes, through the
// candidate finder; a longer one is read rune by rune (lineRunes), never
// held whole. MatchReader over every line took 6 s per 100 MB without a
// match, Match over every line 1.8 s for 90 MB of Go, the finder first
// 0.06 s.
func (r *replacer) matchesLines(br *bufio.Reader) (bool, error) {
	for {
		// The whole lines in the buffer at once, so that the candidate
		// finder scans them as grep's does.
		buf, _ := br.Peek(br.Buffered())
		if j := bytes.LastIndexByte(buf, '\n'); j >= 0 {
			if r.anyLine(buf[:j+1]) {
				return true, nil
			}
			br.Discard(j + 1)
			continue
		}
		// Fill the buffer: the line's end, the text's, or a line longer
		// than the buffer.
		buf, err := br.Peek(br.Size())
		switch {
		case err != nil && err != io.EOF && err != bufio.ErrBufferFull:
			return false, err
		case bytes.IndexByte(buf, '\n') >= 0:
			continue
		case err == io.EOF:
			return len(buf) > 0 && r.anyLine(buf), nil // the last line, without an ending
		}
		lines := &lineRunes{r: br, cutCR: !r.withCR}
		if r.streamed().MatchReader(lines) {
			return true, nil
		}
		if lines.skipRest(); lines.err != nil {
			return false, lines.err
		}
	}
}

// lineRunes gives the line at a reader's place to MatchReader, rune by
// rune: its runes, then the end of the text at its ending (LF, or with
// cutCR, CRLF). A line longer than the reader's buffer is so never held
// whole.
type lineRunes struct {
	r     *bufio.Reader
	cutCR bool
	// end: the line's ending (or the text's end) was read.
	end bool
	err error
}

func (l *lineRunes) ReadRune() (rune, int, error) {
	if l.end {
		return 0, 0, io.EOF
	}
	c, size, err := l.r.ReadRune()
	switch {
	case err != nil:
		l.end = true
		l.fail(err)
		return 0, 0, io.EOF
	case c == '\n':
		l.end = true
		return 0, 0, io.EOF
	case c == '\r' && l.cutCR:
		if b, _ := l.r.Peek(1); len(b) == 1 && b[0] == '\n' {
			l.r.Discard(1)
			l.end = true
			return 0, 0, io.EOF
		}
	}
	return c, size, nil
}

// skipRest reads past what MatchReader left of the line.
func (l *lineRunes) skipRest() {
	for !l.end {
		_, err := l.r.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			l.end = true
			l.fail(err)
		}
	}
}

// fail keeps a read's error other than the text's end.
func (l *lineRunes) fail(err error) {
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
}

// matchedText is what replace matches in a file: UTF-8 as it is, the text
// of a UTF-16 file (marked) decoded, as grep searches it; not ok for a
// file that is not text (a NUL byte, as grep decides, or invalid bytes).
func matchedText(data []byte) ([]byte, bool) {
	w, ok := textfile.DecodeWhole(data)
	if !ok || !w.UTF16() {
		return data, ok
	}
	return []byte(w.Text), true
}

// replaceOnce reads every path again under the locks, replaces and (unless
// dry) commits them: one attempt of Replace.
func (t *Tools) replaceOnce(ctx context.Context, tx backend.Transactor, req ReplaceRequest, rp *replacer, paths []string, res ReplaceResult) (*ReplaceResult, error) {
	var ops []backend.Op
	var planned []plannedFile
	// laters are the diffs of res.Files not yet rendered.
	var laters []laterDiff
	named := cmp.Or(req.Path, ".")
	context := diffContext
	if req.Context != nil {
		context = *req.Context
	}
	// The diffs of every file search within one budget.
	until := time.Now().Add(diffSearch)
	// A replace applied with the plan of its dry run makes no diffs: the
	// dry run showed them, and the plan proves the change the same (they
	// were answered twice, 11 kB for a rename of 27 matches).
	withPlan := req.ExpectedPlan != "" && !req.DryRun
	for _, p := range paths {
		own, err := t.FS.Lstat(ctx, p)
		if fault.MissingPath(err) && p != named {
			// Removed since the search: a search now would not find it,
			// unless the path named is gone too (NOT_FOUND, as it would be).
			if _, err := t.FS.Stat(ctx, named); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if own.Type == backend.TypeSymlink && p == named {
			// The path named itself is a link to the file: followed, as
			// grep followed it and as write and edit follow a final link.
			if own, err = t.FS.Stat(ctx, p); err != nil {
				return nil, err
			}
		}
		if own.Type != backend.TypeFile {
			// Swapped for a link (or another thing) since the search: the
			// walk would skip it now, and what a link leads to may lie
			// outside PATH.
			continue
		}
		data, whole, info, err := t.openWhole(ctx, p, "replace")
		if fault.MissingPath(err) {
			return nil, errConflict // removed between the two looks
		}
		if err != nil {
			return nil, err
		}
		if info.Version != own.Version {
			// Not the file found at the path itself: re-pointed between
			// the two looks.
			return nil, errConflict
		}
		if whole.UTF16() {
			data = []byte(whole.Text)
		}
		out, n, diff, err := rp.apply(data)
		if err != nil {
			return nil, t.settledRefusal(ctx, p, info.Version, withPath(err, t.FS.Display(p)))
		}
		unchanged := n == 0 || bytes.Equal(out, data)
		if unchanged {
			// Left as read, which must then stand.
			if err := t.settledRead(ctx, p, info.Version); err != nil {
				return nil, err
			}
		}
		if n == 0 {
			continue // changed since the search
		}
		// Every match counts, as grep counts it, one replaced by itself
		// too: the count (and expectedCount) must not depend on whether
		// its file has another change.
		res.Replacements += n
		if unchanged {
			// Nothing to write: no file said changed, no header-only diff.
			continue
		}
		f := ReplacedFile{Count: n}
		f.Path, f.PathBase64 = fault.PathText(t.FS.Display(p))
		later := laterDiff{}
		switch {
		case withPlan:
			// No diff: the dry run showed it.
		case diff != nil:
			// Rendered now only when it may be kept whole and is no larger
			// than the text it is made from: else the text is kept, and
			// the diff made again if the answer has room for some of it.
			if later.size = renderedJSONLen(f.Path, diff, 0, context); later.size <= min(t.maxBytes(), len(data)) {
				f.Diff, _ = renderDiff(f.Path, diff, 0, context)
			} else {
				name := f.Path
				later.render = func() string {
					_, _, diff, _ := rp.apply(data)
					d, _ := renderDiff(name, diff, 0, context)
					return d
				}
			}
		default:
			f.Diff, _ = contextDiffUntil(until, f.Path, string(data), string(out), context)
		}
		if whole.UTF16() {
			if out, err = whole.Encode(string(out)); err != nil {
				return nil, withPath(err, f.Path)
			}
		}
		if err := overEditLimit("replace", f.Path, len(out)); err != nil {
			return nil, t.settledRefusal(ctx, p, info.Version, err)
		}
		res.Files = append(res.Files, f)
		laters = append(laters, later)
		ops = append(ops, backend.Op{Path: p, Data: out, Write: backend.WriteOptions{IfVersion: info.Version}})
		pf := plannedFile{path: t.planPath(p), version: info.Version, count: n}
		if pf.version == "" {
			// No version to tell a change by: the text read does.
			pf.sum = sha256Hex(data)
		}
		planned = append(planned, pf)
	}
	res.FilesChanged = len(res.Files)
	if _, err := t.checkCount(req, &res); err != nil {
		return nil, err
	}
	// Under the locks of every file the search found: what the commit
	// changes is what the plan names.
	if err := t.settlePlan(req, planned, &res); err != nil {
		return nil, err
	}
	res.DiffsInDryRun = withPlan && len(res.Files) > 0
	if err := t.fitReplace(&res, laters); err != nil {
		return nil, err
	}
	if req.DryRun {
		if err := t.checkDry(ctx, ops); err != nil {
			return nil, withoutInPlace(raced(err, fault.CodeStale), "replace")
		}
		return &res, nil
	}
	if len(ops) == 0 {
		return &res, nil
	}
	ctx, done, err := t.beginCommit(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := tx.Commit(ctx, ops); err != nil {
		return nil, withoutInPlace(raced(err, fault.CodeStale), "replace")
	}
	return &res, nil
}

// laterDiff is a file's diff left unrendered: its size as jsonLen gives
// it, and how to render it. A diff rendered already has no render.
type laterDiff struct {
	size   int
	render func() string
}

// fitReplace fits res to the bound: the diffs are cut first, then, when
// the list of files alone is too long, its tail is left out (FilesOmitted)
// and the totals still count every file. laters, one for each file of
// res when given, are the diffs not yet rendered: each is rendered only
// when some of it is kept.
func (t *Tools) fitReplace(res *ReplaceResult, laters []laterDiff) error {
	// The skipped files with a match are named as the room allows before
	// any changed file (BinaryWithMatches still counts them all).
	for len(res.BinaryMatches) > 0 {
		bare := *res
		bare.Files, bare.Truncated = nil, true
		if jsonSize(&bare) <= t.maxBytes() {
			break
		}
		res.BinaryMatches, res.Truncated = res.BinaryMatches[:len(res.BinaryMatches)-1], true
	}
	cut := res.Truncated
	all := res.Files
	fit := func(k int) error {
		res.Files = slices.Clone(all[:k])
		res.FilesOmitted = len(all) - k
		// Only the files with a diff compete for the room: one without
		// (a replace applied with its plan) has nothing to cut, and
		// offered its key alone it made an answer that fitted truncated.
		var diffs []*string
		var sizes, files []int
		for i := range res.Files {
			size := jsonLen(res.Files[i].Diff)
			if laters != nil && laters[i].render != nil {
				size = laters[i].size
			} else if res.Files[i].Diff == "" {
				continue
			}
			diffs, sizes, files = append(diffs, &res.Files[i].Diff), append(sizes, size), append(files, i)
		}
		err := t.fitSizedDiffs(res, &res.Truncated, diffs, sizes, func(j int) string {
			if i := files[j]; laters != nil && laters[i].render != nil {
				return laters[i].render()
			}
			return all[files[j]].Diff
		})
		res.Truncated = res.Truncated || k < len(all) || cut
		return err
	}
	if fit(len(all)) == nil {
		return nil
	}
	// The largest prefix of the list that fits without its diffs.
	bare := slices.Clone(all)
	for i := range bare {
		bare[i].Diff = ""
	}
	k := sort.Search(len(all)+1, func(k int) bool {
		res.Files, res.FilesOmitted, res.Truncated = bare[:k], len(all)-k, true
		return jsonSize(res) > t.maxBytes()
	}) - 1
	if k < 0 {
		k = 0
	}
	return fit(k)
}

// checkCount refuses a replace whose number of matches is not the one the
// caller expected.
func (t *Tools) checkCount(req ReplaceRequest, res *ReplaceResult) (*ReplaceResult, error) {
	if req.ExpectedCount != nil && *req.ExpectedCount != res.Replacements {
		return nil, fault.Errorf(fault.CodeStale, "the files hold %d matches, not the %d expected.", res.Replacements, *req.ExpectedCount).
			WithDetail("count", res.Replacements).WithDetail("expectedCount", *req.ExpectedCount).
			WithHint("run replace --dry-run to see every match the query finds (grep counts matching lines, not matches); nothing was changed")
	}
	return res, nil
}
