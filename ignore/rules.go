package ignore

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Semantics names how rules are matched; an index records it (through the
// backend's fingerprint), so that one built when a rule meant otherwise is
// not trusted. 2: a rule with a slash no longer speaks of what is below the
// path it names; 3: ? and classes match bytes; 4: ** goes back; 5: a class
// may hold a slash, and an escaped backslash escapes no trailing space;
// 6: a .git link starts a repository, and no ignore file is read through
// a link or in a deny root.
const Semantics = 6

// Kind is the ignore file a rule set comes from. The kinds are in
// precedence order, as ripgrep ranks them: .agentfsignore (ripgrep's
// --ignore-file) over .ignore over .gitignore over .git/info/exclude.
type Kind int

const (
	Agentfs Kind = iota // .agentfsignore
	Ignore              // .ignore
	Git                 // .gitignore
	Exclude             // .git/info/exclude
	numKinds
)

// Sets are the rule sets in force in one directory of a walk, each kind's
// outer directories first. A later rule overrides an earlier one, and a
// kind overrides those after it. A Sets value is copied to save the rules
// of a directory while its subdirectories add theirs.
type Sets struct {
	kinds [numKinds][]*Rules
	// Done, when closed, cuts a long match short: the walk then stops.
	Done <-chan struct{}
}

// Add puts the rules of an ignore file of kind k, found below those
// already added, in force; nil (a file without rules) adds nothing.
func (s *Sets) Add(k Kind, r *Rules) {
	if r != nil {
		s.kinds[k] = append(s.kinds[k], r)
	}
}

// StartRepository drops the .gitignore and info/exclude rules of an outer
// repository: a repository starting in a directory has only its own.
func (s *Sets) StartRepository() {
	s.kinds[Git], s.kinds[Exclude] = nil, nil
}

// Empty reports whether no rule is in force.
func (s *Sets) Empty() bool {
	n := 0
	for _, k := range s.kinds {
		n += len(k)
	}
	return n == 0
}

// Match reports whether the root-relative path comps is ignored. An
// ignore file applies to the entries below its directory, which in a walk
// are all that comps can be.
func (s *Sets) Match(comps []string, isDir bool) bool {
	comps = byteRunes(comps)
	for _, set := range s.kinds {
		for i := len(set) - 1; i >= 0; i-- {
			f := set[i]
			if len(comps) <= f.depth {
				continue
			}
			if r := f.decide(comps[f.depth:], isDir, s.Done); r >= 0 {
				return !f.rules[r].negate
			}
		}
	}
	return false
}

// SetStart is called when an ancestor's rule ignores the start directory
// (comps from the root), once the ancestors' ignore files are added:
// naming the start is asking for it (as with rg and fd), so a rule with a
// slash that excludes the start is not applied below it, while a rule
// that only names a name still is.
func (s *Sets) SetStart(start []string) {
	start = byteRunes(start)
	for _, set := range s.kinds {
		for _, f := range set {
			if len(start) <= f.depth {
				continue
			}
			for i := range f.rules {
				if r := &f.rules[i]; !r.shape.Name && !r.negate && r.matches(start[f.depth:], true) {
					if f.skip == nil {
						f.skip = make([]bool, len(f.rules))
					}
					f.skip[i] = true
				}
			}
		}
	}
}

// rule is one line of an ignore file, as a walk applies it. go-git's
// Match answers for a path or any of its ancestors; a walk has judged every
// ancestor already, so here a rule speaks of the entry itself: one without
// a slash is tested on the entry's name, and one with a slash on the
// entry's path, never on what is below a path it names (unless it ends in
// /**). "d/**" then "!d/e/" keeps d/e/h ignored; "/d" then "!d" keeps d/x,
// and "/foo/*" then "!/foo/bar/" keeps foo/bar/x, as git does.
type rule struct {
	line string // as gitPattern rewrites it
	// pat is go-git's pattern of line with an empty domain, matched on the
	// path below the ignore file's directory, and whole its directory-only
	// form; both are parsed when first needed, as most rules of a large
	// file never are.
	pat, whole gitignore.Pattern
	// deep is the doublestar form of a rule with a slash and a **, which
	// go-git matches without going back ("**/b" took c/b of c/b/b and
	// missed the whole path): "" until first needed.
	deep   string
	shape  Shape
	negate bool
}

// matches tests the entry rel, its path below the ignore file's directory
// (at least one component).
func (r *rule) matches(rel []string, isDir bool) bool {
	subject, ok := Subject(r.shape, isDir, rel, rel[len(rel)-1:])
	if !ok {
		return false
	}
	if !r.shape.Name && strings.Contains(r.line, "**") {
		if r.deep == "" {
			r.deep = doublestarForm(r.line)
		}
		ok, err := doublestar.Match(r.deep, strings.Join(subject, "/"))
		return ok && err == nil
	}
	if r.pat == nil {
		r.pat = gitignore.ParsePattern(r.line, nil)
	}
	if r.pat.Match(subject, isDir) == gitignore.NoMatch {
		return false
	}
	if r.shape.Name {
		return true
	}
	// go-git's directory-only pattern refuses a file only where the
	// pattern took the whole path: matched as a file, the whole form
	// matches just what the rule names below an ancestor.
	if r.whole == nil {
		r.whole = r.pat
		if !r.shape.DirOnly {
			r.whole = gitignore.ParsePattern(r.line+"/", nil)
		}
	}
	return r.whole.Match(subject, false) == gitignore.NoMatch
}

// Rules are the compiled rules of one ignore file, of which the last that
// matches decides. As in ripgrep's globset, rules are indexed by
// what an entry must hold for them to match (the whole name, a literal
// start, end or inner run of the name, literal leading components of the
// path, a component anywhere), so that an entry is tested only against the
// rules that can match it; only the rules with nothing literal to index
// are tried one by one. The index proposes, the rule decides: every
// candidate is tested with its own matches, so the set decides exactly as
// the rules tried one by one from the last.
type Rules struct {
	// depth is the number of components of the file's directory below the
	// root: a rule is matched on the components after those.
	depth int
	rules []rule
	// skip marks the rules that a walk from an ignored start leaves out
	// (Sets.SetStart); nil when there are none.
	skip []bool

	// The index: lists of candidates, each a rule number (index+1) whose
	// next, earlier, candidate of the same list is after[number-1]; 0 ends
	// a list. A list is thus walked from its last rule, as rules are tried.
	after                     []int32
	names                     map[string]int32 // the whole name
	prefixes, suffixes, inner map[string]int32 // a literal start, end or run of the name
	prefixLens, suffixLens    []int            // the lengths of their keys, ascending
	innerLens                 []int
	// paths is the trie of leading literal components: the node below
	// node n (0 is the top) by the component c is paths[pathKey{n, c}],
	// and a node's candidates are pathRules[node-1].
	paths     map[pathKey]int32
	pathRules []int32
	anyComp   map[string]int32 // **/lit...: lit is one of the components
	always    int32            // nothing literal: tried one by one
}

// pathKey is an edge of the trie of leading literal components. A node's
// candidates are the rules whose components up to there are literal: a
// literal path ending there, or one going on with a glob component.
type pathKey struct {
	node int32
	comp string
}

// globMeta are the bytes that make a component more than a literal to
// filepath.Match.
const globMeta = `*?[\`

// cancelEvery is how many rules an entry is tested against between two
// looks at the walk's cancellation.
const cancelEvery = 1024

// doublestarForm is line, a rule with a slash as gitPattern rewrites it,
// as doublestar spells it, to match a path below the ignore file's
// directory: without its ! (the rule's negate), leading / (such a rule is
// anchored) and final / (Subject tells directories), and with braces,
// literal to git, escaped. (Compile took its trailing spaces off.)
func doublestarForm(line string) string {
	p := strings.TrimPrefix(line, "!")
	p = strings.TrimPrefix(p, "/")
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(p, `\/`) {
		p = p[:len(p)-1]
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
		case c == '{' || c == '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// byteRune is s with each byte a rune of its own (Latin-1 read as UTF-8):
// git matches bytes, so that ? is one byte (it does not match ü, two), and
// filepath.Match, under go-git, matches runes. ASCII stays as it is, and
// patterns and names are both seen so.
func byteRune(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)-i)
	b = append(b, s[:i]...)
	for _, c := range []byte(s[i:]) {
		b = utf8.AppendRune(b, rune(c))
	}
	return string(b)
}

// byteRunes is comps through byteRune, copied only when one changes.
func byteRunes(comps []string) []string {
	for i, c := range comps {
		if b := byteRune(c); b != c {
			out := slices.Clone(comps)
			out[i] = b
			for j := i + 1; j < len(out); j++ {
				out[j] = byteRune(out[j])
			}
			return out
		}
	}
	return comps
}

// Compile parses the bytes of an ignore file in the directory depth
// components below the root; it is nil when the file has no rule.
func Compile(data []byte, depth int) *Rules {
	text := strings.TrimPrefix(string(data), "\xEF\xBB\xBF") // git skips a BOM
	n := strings.Count(text, "\n") + 1
	f := &Rules{depth: depth, rules: make([]rule, 0, n), after: make([]int32, 0, n)}
	for line := range strings.Lines(text) {
		// Without its trailing spaces from here on: what follows sees
		// only an escaped one at the end.
		s := trimTrailingSpaces(strings.TrimRight(line, "\r\n"))
		if strings.TrimSpace(s) == "" || s[0] == '#' {
			continue
		}
		if g := gitPattern(byteRune(s)); !emptySegment(g) {
			f.add(g)
		}
	}
	if len(f.rules) == 0 {
		return nil
	}
	return f
}

// trimTrailingSpaces drops the spaces that end line unless a backslash
// escapes the first of them, as git does: the backslash of an escaped
// backslash (f\\ ) escapes nothing, and the space goes.
func trimTrailingSpaces(line string) string {
	end := -1 // where the trailing unescaped spaces start
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return line[:end]
	}
	return line
}

// emptySegment reports whether the rule s has an empty segment once git
// takes off its negation, the / that anchors it and the / that makes it a
// directory's (foo//bar, //a, b//): git matches no path with it, and
// go-git's matcher dropped the empty segment, so that foo//bar hid
// foo/bar.
func emptySegment(s string) bool {
	p := strings.TrimPrefix(s, "!")
	p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
	return p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//")
}

// add appends the rule g (a line as gitPattern rewrites it) and indexes it.
func (f *Rules) add(g string) {
	shape, _ := ShapeOf(strings.TrimPrefix(g, "!"))
	i := int32(len(f.rules))
	f.after = append(f.after, 0)
	f.rules = append(f.rules, rule{line: g, shape: shape, negate: strings.HasPrefix(g, "!")})
	// The components as go-git's ParsePattern makes them, which matches
	// follows: one trailing slash is dropped, and the rest is split at
	// every slash (its trailing spaces are gone, or escaped).
	p := strings.TrimSuffix(strings.TrimPrefix(g, "!"), "/")
	switch isGlob := strings.Contains(p, "/"); {
	case f.rules[i].shape.Name && !isGlob:
		f.indexName(i, p)
	case !f.rules[i].shape.Name && isGlob:
		f.indexPath(i, p)
	default:
		f.always = f.link(f.always, i)
	}
}

// indexName indexes a rule that filepath.Match(p, name) decides.
func (f *Rules) indexName(i int32, p string) {
	k, ok := literals(p)
	switch {
	case !ok:
		f.always = f.link(f.always, i) // refused by filepath.Match: matches nothing
	case k.exact:
		f.names = f.addIndex(f.names, k.prefix, i)
	case k.prefix != "":
		f.prefixes, f.prefixLens = f.addIndex(f.prefixes, k.prefix, i), addLen(f.prefixLens, len(k.prefix))
	case k.suffix != "":
		f.suffixes, f.suffixLens = f.addIndex(f.suffixes, k.suffix, i), addLen(f.suffixLens, len(k.suffix))
	case k.longest != "":
		f.inner, f.innerLens = f.addIndex(f.inner, k.longest, i), addLen(f.innerLens, len(k.longest))
	default:
		f.always = f.link(f.always, i)
	}
}

// indexPath indexes a rule with a slash, p, which go-git matches on the
// path below the file's directory: its components match the path's one to
// one from the first (empty ones are skipped) until a ** lets the next one
// match further down. Leading literal components go into the trie; a rule
// starting with ** is indexed by the literal component right after it.
func (f *Rules) indexPath(i int32, p string) {
	node := int32(0)
	for p != "" {
		var s string
		s, p, _ = strings.Cut(p, "/")
		if s == "" {
			continue
		}
		if s == "**" || strings.ContainsAny(s, globMeta) {
			if node == 0 {
				f.indexDeep(i, s, p)
				return
			}
			break
		}
		next, ok := f.paths[pathKey{node, s}]
		if !ok {
			if f.paths == nil {
				f.paths = map[pathKey]int32{}
			}
			f.pathRules = append(f.pathRules, 0)
			next = int32(len(f.pathRules))
			f.paths[pathKey{node, s}] = next
		}
		node = next
	}
	if node == 0 {
		f.always = f.link(f.always, i) // no component: matches nothing
		return
	}
	f.pathRules[node-1] = f.link(f.pathRules[node-1], i)
}

// indexDeep indexes a rule with a slash whose first component s is not a
// literal, and rest the components after it: one starting with ** and a
// literal is indexed by that literal, the others are tried one by one.
func (f *Rules) indexDeep(i int32, s, rest string) {
	next, _, _ := strings.Cut(rest, "/")
	if s == "**" && next != "" && next != "**" && !strings.ContainsAny(next, globMeta) {
		f.anyComp = f.addIndex(f.anyComp, next, i)
		return
	}
	f.always = f.link(f.always, i)
}

// link puts the rule i at the head of the candidate list head.
func (f *Rules) link(head, i int32) int32 {
	f.after[i] = head
	return i + 1
}

func (f *Rules) addIndex(m map[string]int32, key string, i int32) map[string]int32 {
	if m == nil {
		m = map[string]int32{}
	}
	m[key] = f.link(m[key], i)
	return m
}

// addLen adds n to the ascending set lens.
func addLen(lens []int, n int) []int {
	if j, found := slices.BinarySearch(lens, n); !found {
		return slices.Insert(lens, j, n)
	}
	return lens
}

// nameLiterals is what a name must hold for a filepath.Match pattern to
// match it: all of it (exact, then in prefix), a literal start, a literal
// end, and the longest literal run anywhere (escapes undone).
type nameLiterals struct {
	exact                   bool
	prefix, suffix, longest string
}

// literals reads the filepath.Match pattern p; ok is false for a pattern
// filepath.Match refuses (an unfinished escape or class), which matches
// nothing.
func literals(p string) (k nameLiterals, ok bool) {
	var run []byte
	meta := false // a *, ? or class seen so far
	end := func() {
		if s := string(run); len(s) > len(k.longest) {
			k.longest = s
		}
		if !meta {
			k.prefix = string(run)
		}
		run = run[:0]
		meta = true
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i++; i == len(p) {
				return k, false
			}
			run = append(run, p[i])
		case '*', '?':
			end()
		case '[':
			end()
			if i = classEnd(p, i); i < 0 {
				return k, false
			}
		default:
			run = append(run, c)
		}
	}
	if !meta {
		return nameLiterals{exact: true, prefix: string(run)}, true
	}
	k.suffix = string(run)
	if len(k.suffix) > len(k.longest) {
		k.longest = k.suffix
	}
	return k, true
}

// classEnd returns the index of the ] that closes the class opened at
// p[i], or -1. In a pattern filepath.Match accepts, the first unescaped ]
// after at least one character closes it.
func classEnd(p string, i int) int {
	i++
	if i < len(p) && p[i] == '^' {
		i++
	}
	for first := true; i < len(p); i++ {
		switch p[i] {
		case ']':
			if !first {
				return i
			}
		case '\\':
			i++
		}
		first = false
	}
	return -1
}

// decide returns the index of the last rule that matches the entry rel (its
// components below the file's directory), or -1. When done is closed it
// may give up early with -1: the walk then stops.
func (f *Rules) decide(rel []string, isDir bool, done <-chan struct{}) int {
	d := decision{f: f, rel: rel, isDir: isDir, done: done, best: -1}
	name := rel[len(rel)-1]
	if f.names != nil {
		d.pick(f.names[name])
	}
	for _, l := range f.prefixLens {
		if l > len(name) {
			break
		}
		d.pick(f.prefixes[name[:l]])
	}
	for _, l := range f.suffixLens {
		if l > len(name) {
			break
		}
		d.pick(f.suffixes[name[len(name)-l:]])
	}
	for _, l := range f.innerLens {
		for j := 0; j+l <= len(name); j++ {
			d.pick(f.inner[name[j:j+l]])
		}
	}
	if f.paths != nil {
		for n, j := int32(0), 0; j < len(rel); j++ {
			if n = f.paths[pathKey{n, rel[j]}]; n == 0 {
				break
			}
			d.pick(f.pathRules[n-1])
		}
	}
	if f.anyComp != nil {
		for _, c := range rel {
			d.pick(f.anyComp[c])
		}
	}
	d.pick(f.always)
	if d.cancelled {
		return -1
	}
	return d.best
}

// decision is one entry's way through a rule set's candidates.
type decision struct {
	f         *Rules
	rel       []string
	isDir     bool
	done      <-chan struct{}
	best      int
	tried     int
	cancelled bool
}

// pick tests the candidates of the list head above best, from the last,
// until one matches.
func (d *decision) pick(head int32) {
	for n := head; n > 0 && int(n-1) > d.best && !d.cancelled; n = d.f.after[n-1] {
		if d.tried++; d.tried%cancelEvery == 0 {
			select {
			case <-d.done:
				d.cancelled = true
				return
			default:
			}
		}
		if d.f.applies(n-1, d.rel, d.isDir) {
			d.best = int(n - 1)
			return
		}
	}
}

func (f *Rules) applies(i int32, rel []string, isDir bool) bool {
	return (f.skip == nil || !f.skip[i]) && f.rules[i].matches(rel, isDir)
}

// gitPattern adapts one ignore-file line to go-git's matcher where it
// differs from git (checked against git by TestIgnorePatternsMatchGit):
//   - a class negated with ! ([!a]) goes to filepath.Match, which wants ^;
//   - a trailing /** must match inside the directory, not the directory
//     itself ("trail/**" with "!trail/y.txt" keeps trail/y.txt), so it
//     becomes /*/**;
//   - ** that is not a whole segment (logs/**.log) is an ordinary *.
//
// Escapes (\!, \#, \ ) are left for filepath.Match, which honours them: an
// escaped ! must stay a literal, never become a negation.
func gitPattern(s string) string {
	if !strings.ContainsAny(s, "[*") {
		return s
	}
	neg := ""
	if strings.HasPrefix(s, "!") {
		neg, s = "!", s[1:]
	}
	dir := ""
	if strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\/`) {
		dir, s = "/", strings.TrimSuffix(s, "/")
	}
	if t, changed := slashlessClasses(s); changed {
		// Its slashes were in classes only: it stays anchored, as a rule
		// with a slash anywhere is.
		if s = t; !strings.Contains(s, "/") {
			s = "/" + s
		}
	}
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		if seg != "**" {
			segs[i] = unescapedRewrite(seg)
		}
	}
	if n := len(segs); n >= 2 && segs[n-1] == "**" && segs[n-2] != "**" && segs[n-2] != "" {
		segs = append(segs[:n-1], "*", "**")
	}
	return neg + strings.Join(segs, "/") + dir
}

// slashlessClasses rewrites each unescaped class of s that holds a slash
// (see bracketClass, which leaves it out), so that s is split at its
// slashes between names only; changed is false when there is none. git
// matches paths, and a class never matches their slash, but [ab/] was cut
// in two, and matched nothing.
func slashlessClasses(s string) (string, bool) {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i++
		case c == '[':
			class, n, ok := bracketClass(s[i:])
			if !ok || !strings.Contains(s[i:i+n], "/") {
				b.WriteByte(c)
				continue
			}
			b.WriteString(class)
			changed = true
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), changed
}

// posixClasses are the bracket classes git's wildmatch knows, as the
// items of a class that filepath.Match and doublestar read ([ escaped as
// classMember writes it). punct leaves out /, which no name holds: kept,
// it cut the rule in two.
var posixClasses = map[string]string{
	"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "blank": " \t", "cntrl": "\x00-\x1f\x7f",
	"digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
	"punct": `!-.:-@\[-` + "`{-~", "space": " \t-\r", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}

// bracketClass reads the bracket expression at the start of s as git's
// wildmatch does and returns it as filepath.Match and doublestar spell it,
// and its length: ! or ^ negates; a ] first is a member, as is a - first
// or last; a member escaped or not starts a range (a reversed one holds
// its start alone); [:digit:] and its like are POSIX classes. Those forms,
// which filepath.Match refuses, made the rule match nothing: [[:digit:]],
// []a], [!]] and [a-] hid what git hides. ok is false for one git aborts
// on (unterminated, an unknown class), whose rule matches nothing.
func bracketClass(s string) (class string, n int, ok bool) {
	j := 1
	neg := j < len(s) && (s[j] == '!' || s[j] == '^')
	if neg {
		j++
	}
	var items strings.Builder
	member := func(c byte) { classMember(&items, c) }
	// at reads the member at s[k], escaped or not: its byte and length.
	at := func(k int) (byte, int) {
		if s[k] == '\\' && k+1 < len(s) {
			return s[k+1], 2
		}
		return s[k], 1
	}
	for first := true; j < len(s); first = false {
		if s[j] == ']' && !first {
			switch {
			case items.Len() == 0 && neg:
				return "?", j + 1, true // all but a slash: any byte of a name
			case items.Len() == 0:
				return "", 0, false // a slash alone, which no name holds
			}
			out := "["
			if neg {
				out += "^"
			}
			return out + items.String() + "]", j + 1, true
		}
		if s[j] == '[' && j+1 < len(s) && s[j+1] == ':' {
			end := strings.Index(s[j+2:], ":]")
			if end < 0 {
				return "", 0, false
			}
			r, known := posixClasses[s[j+2:j+2+end]]
			if !known {
				return "", 0, false
			}
			items.WriteString(r)
			j += 2 + end + 2
			continue
		}
		lo, w := at(j)
		j += w
		if j+1 < len(s) && s[j] == '-' && s[j+1] != ']' {
			hi, hw := at(j + 1)
			j += 1 + hw
			// Without the slash, which no name holds (written, it cut
			// the rule at it): a range from or to it starts after it or
			// ends before it.
			if lo == '/' && hi > lo {
				lo++
			}
			if hi == '/' && lo < hi {
				hi--
			}
			switch {
			case lo < hi:
				member(lo)
				items.WriteByte('-')
				member(hi)
			case lo != '/':
				member(lo)
			}
			continue
		}
		if lo != '/' {
			member(lo)
		}
	}
	return "", 0, false // unterminated
}

// classMember writes c as a member of a class, escaped where it would
// mean something else there.
func classMember(b *strings.Builder, c byte) {
	if c == ']' || c == '-' || c == '\\' || c == '^' || c == '[' {
		b.WriteByte('\\')
	}
	b.WriteByte(c)
}

// unescapedRewrite turns each unescaped bracket expression into the form
// filepath.Match and doublestar take (see bracketClass) and a run of
// unescaped stars into one, leaving what a backslash escapes as it is
// (\** is a name starting with *, \[!x] the name [!x]).
func unescapedRewrite(seg string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '\\' && i+1 < len(seg):
			b.WriteByte(c)
			i++
			b.WriteByte(seg[i])
		case c == '[':
			class, n, ok := bracketClass(seg[i:])
			if !ok {
				// git aborts on it: the rule matches nothing, and so
				// does a segment of a bare [, which filepath.Match and
				// doublestar refuse. Kept as it was, the tail was read
				// as a class of its own ([!] hid a file named !).
				return "["
			}
			b.WriteString(class)
			i += n - 1
		case c == '*' && i+1 < len(seg) && seg[i+1] == '*':
			// ** inside a segment is an ordinary *: keep one of the run.
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
