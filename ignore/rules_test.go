package ignore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// The reference: the rule-by-rule matcher that the compiled sets replace.
// Every rule of every file is tried, from the last, on the whole path from
// the root, with go-git's domain check.

type refPattern struct {
	gitignore.Pattern
	// whole is the directory-only form, which refuses a file only where
	// the pattern took the whole path (see rule.matches).
	whole   gitignore.Pattern
	domain  []string
	name    bool
	dirOnly bool
	// below: the pattern ends in /**, so it matches all below a path.
	below bool
	// deep is the doublestar form of a pattern with a slash and a **.
	deep   string
	negate bool
}

func (p refPattern) match(comps []string, isDir bool) gitignore.MatchResult {
	if p.dirOnly && !isDir {
		return gitignore.NoMatch
	}
	if p.deep != "" {
		if len(comps) <= len(p.domain) || !slices.Equal(comps[:len(p.domain)], p.domain) {
			return gitignore.NoMatch
		}
		if ok, err := doublestar.Match(p.deep, strings.Join(comps[len(p.domain):], "/")); !ok || err != nil {
			return gitignore.NoMatch
		}
		if p.negate {
			return gitignore.Include
		}
		return gitignore.Exclude
	}
	if p.name && len(comps) > len(p.domain)+1 {
		comps = append(append([]string(nil), p.domain...), comps[len(comps)-1])
	}
	r := p.Pattern.Match(comps, isDir)
	if r != gitignore.NoMatch && !p.name && !p.below && p.whole.Match(comps, false) != gitignore.NoMatch {
		return gitignore.NoMatch
	}
	return r
}

type refSets struct {
	agentfs, ignore, git, exclude []refPattern
	start                         []string
}

func (s *refSets) match(comps []string, isDir bool) bool {
	comps = byteRunes(comps)
	start := byteRunes(s.start)
	for _, set := range [...][]refPattern{s.agentfs, s.ignore, s.git, s.exclude} {
		for i := len(set) - 1; i >= 0; i-- {
			switch set[i].match(comps, isDir) {
			case gitignore.Exclude:
				if s.start != nil && !set[i].name && set[i].match(start, true) == gitignore.Exclude {
					continue
				}
				return true
			case gitignore.Include:
				return false
			}
		}
	}
	return false
}

func refPatterns(data []byte, domain []string) []refPattern {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	var ps []refPattern
	for line := range bytes.Lines(data) {
		s := trimTrailingSpaces(strings.TrimRight(string(line), "\r\n"))
		if strings.TrimSpace(s) == "" || s[0] == '#' {
			continue
		}
		g := gitPattern(byteRune(s))
		if emptySegment(g) {
			continue // matches nothing (TestIgnorePatternsMatchGit)
		}
		body := strings.TrimRight(strings.TrimPrefix(g, "!"), " ")
		dirOnly := strings.HasSuffix(body, "/")
		whole := g
		if !dirOnly {
			whole += "/"
		}
		ps = append(ps, refPattern{
			Pattern: gitignore.ParsePattern(g, domain),
			whole:   gitignore.ParsePattern(whole, domain),
			domain:  domain,
			name:    !strings.Contains(strings.TrimSuffix(body, "/"), "/"),
			dirOnly: dirOnly,
			below:   strings.HasSuffix(g, "/**"),
			negate:  strings.HasPrefix(g, "!"),
		})
		if n := len(ps) - 1; !ps[n].name && strings.Contains(g, "**") {
			ps[n].deep = doublestarForm(g)
		}
	}
	return ps
}

// ignoreCase is one differential case: ignore files in the four lists, a
// start (or none) and entries below them.
type ignoreCase struct {
	files   [numKinds][]caseFile // by Kind
	start   []string
	entries []caseEntry
}

type caseFile struct {
	depth int
	data  string
}

type caseEntry struct {
	comps []string
	isDir bool
}

func (c *ignoreCase) sets() (*Sets, *refSets) {
	var s Sets
	var r refSets
	refs := [4]*[]refPattern{&r.agentfs, &r.ignore, &r.git, &r.exclude}
	domain := byteRunes(c.entries[len(c.entries)-1].comps)
	for k, files := range c.files {
		for _, f := range files {
			s.Add(Kind(k), Compile([]byte(f.data), f.depth))
			*refs[k] = append(*refs[k], refPatterns([]byte(f.data), domain[:f.depth])...)
		}
	}
	if c.start != nil {
		s.SetStart(c.start)
		r.start = c.start
	}
	return &s, &r
}

func (c *ignoreCase) check(t testing.TB) {
	s, r := c.sets()
	for _, e := range c.entries {
		if got, want := s.Match(e.comps, e.isDir), r.match(e.comps, e.isDir); got != want {
			t.Fatalf("%s\nstart %q, entry %q (dir %v): compiled %v, rule by rule %v", c.describe(), c.start, e.comps, e.isDir, got, want)
		}
	}
}

func (c *ignoreCase) describe() string {
	var b strings.Builder
	for k, files := range c.files {
		for _, f := range files {
			fmt.Fprintf(&b, "%s at depth %d: %q\n", [...]string{".agentfsignore", ".ignore", ".gitignore", "info/exclude"}[k], f.depth, f.data)
		}
	}
	return b.String()
}

// Names and pattern pieces drawn from a small alphabet, so that rules and
// paths meet often.
var (
	caseNames  = []string{"a", "b", "ab", "ba", "a.x", "b.x", "ab.y", ".x", "x", "a b", "a*", "[a]", "!a", "#a", "ä"}
	casePieces = []string{
		"a", "b", "ab", "x", ".x", "a.x", "b.x", "ä", "*", "**", "*.x", "*.y", "a*", "*b", "*a*", "a*b", "?", "a?", "?.x",
		"[ab]", "[!a]*", "[a-b].x", "[^b]", "\\*", "\\!a", "\\#a", "a\\ ", "[a]", "\\[a]", "a[", "a\\", "[]a]", "***", "a**", "**.x",
	}
)

func randLine(rnd *rand.Rand) string {
	if rnd.IntN(12) == 0 { // raw bytes of the pattern syntax
		const chars = "ab*?[]!/\\ .x#^-"
		b := make([]byte, 1+rnd.IntN(7))
		for i := range b {
			b[i] = chars[rnd.IntN(len(chars))]
		}
		return string(b)
	}
	var b strings.Builder
	if rnd.IntN(4) == 0 {
		b.WriteString("!")
	}
	if rnd.IntN(4) == 0 {
		b.WriteString("/")
	}
	for i, n := 0, 1+rnd.IntN(3); i < n; i++ {
		if i > 0 {
			b.WriteString("/")
		}
		if rnd.IntN(3) == 0 {
			b.WriteString(caseNames[rnd.IntN(len(caseNames))])
		} else {
			b.WriteString(casePieces[rnd.IntN(len(casePieces))])
		}
	}
	switch rnd.IntN(8) {
	case 0, 1:
		b.WriteString("/")
	case 2:
		b.WriteString("  ")
	case 3:
		b.WriteString("/**")
	}
	return b.String()
}

func randCase(rnd *rand.Rand) *ignoreCase {
	c := &ignoreCase{}
	comps := make([]string, 1+rnd.IntN(5))
	for i := range comps {
		comps[i] = caseNames[rnd.IntN(len(caseNames))]
	}
	for k := range c.files {
		depth := 0
		for range rnd.IntN(3) {
			depth += rnd.IntN(2)
			if depth >= len(comps) {
				break
			}
			var data strings.Builder
			for range 1 + rnd.IntN(8) {
				data.WriteString(randLine(rnd) + "\n")
			}
			c.files[k] = append(c.files[k], caseFile{depth, data.String()})
		}
	}
	if len(comps) > 1 && rnd.IntN(3) == 0 {
		c.start = comps[:1+rnd.IntN(len(comps)-1)]
	}
	// The entry and its ancestors below the deepest file (and the start),
	// as a walk meets them; the last one as a file or a directory.
	low := len(c.start)
	for _, files := range c.files {
		for _, f := range files {
			low = max(low, f.depth)
		}
	}
	for n := max(low, 1); n <= len(comps); n++ {
		c.entries = append(c.entries, caseEntry{comps[:n], n < len(comps) || rnd.IntN(2) == 0})
	}
	return c
}

// TestRuleSetMatchesRuleByRule checks that the compiled ignore sets decide
// exactly as the rule-by-rule matcher they replace, on generated ignore
// files (several per list, at several depths, with negations, dir-only and
// anchored rules, **, classes, escapes and malformed patterns), starts and
// entries.
func TestRuleSetMatchesRuleByRule(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 5000
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range n {
		randCase(rnd).check(t)
	}
}

// FuzzRuleSet compares the compiled set with the rule-by-rule matcher on one
// .gitignore at the top and one entry.
//
//	go test ./ignore -run '^$' -fuzz FuzzRuleSet
func FuzzRuleSet(f *testing.F) {
	f.Add("*.x\n!a.x\n", "d/a.x", false)
	f.Add("/a/b\n!/a/b/c\n", "a/b/c", false)
	f.Add("a/**/b/\n**/c/*.o\n", "a/x/b", true)
	f.Add("[!a]*\n\\!a\nab?\n", "b/!a", false)
	f.Add("x*\n*y\n*mid*\n", "ab/xmidy", false)
	f.Add("[[:digit:]]\n[]a]\n[!]]x\n[a-]\n[[:bogus:]]\n[\\]-a]\n[a", "d/]x", false)
	f.Fuzz(func(t *testing.T, rules, path string, isDir bool) {
		comps := strings.Split(path, "/")
		for _, c := range comps {
			if c == "" || c == "." || c == ".." {
				return
			}
		}
		c := &ignoreCase{entries: []caseEntry{{comps, isDir}}}
		c.files[Git] = []caseFile{{0, rules}}
		c.check(t)
	})
}
