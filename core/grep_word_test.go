package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/search"
)

// grepLines is the matching line numbers of a grep of the file f.txt
// holding text, in content mode, and checks that count and files modes
// agree with them.
func grepLines(t *testing.T, text string, req GrepRequest) []int {
	t.Helper()
	tl := &Tools{FS: memfs.New(map[string]string{"f.txt": text})}
	req.Path = "."
	res, err := tl.Grep(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v in %q: %v", req, text, err)
	}
	var got []int
	for _, f := range res.Files {
		for _, b := range f.Blocks {
			for i := range b.Lines {
				got = append(got, b.Start+i)
			}
		}
	}
	for _, mode := range []string{ModeCount, ModeFiles} {
		req.Mode = mode
		res, err := tl.Grep(context.Background(), req)
		if err != nil {
			t.Fatalf("%+v in %q: %v", req, text, err)
		}
		n := len(got)
		if mode == ModeFiles {
			n = min(n, 1)
		}
		if res.Count != n {
			t.Errorf("%+v in %q: count %d, want %d as content mode's lines %v", req, text, res.Count, n, got)
		}
	}
	return got
}

// TestGrepWordEdges: --word matches where no word character (a letter,
// mark, digit or connector of any script) is right before or after the
// match, as replace's --word and rg -w: Go's \b knows only ASCII, so that
// \bFoo\b matched in Fooé.
func TestGrepWordEdges(t *testing.T) {
	regex := func(q string) GrepRequest { return GrepRequest{Query: q, Regex: new(true), Word: true} }
	lit := func(q string) GrepRequest { return GrepRequest{Query: q, Word: true} }
	fold := func(req GrepRequest) GrepRequest { req.IgnoreCase = true; return req }
	for _, c := range []struct {
		name string
		req  GrepRequest
		text string
		want []int
	}{
		{"ascii", lit("foo"), "foo bar\nfoobar\nbarfoo\nbar foo.\n(foo)\nfoo-bar\n", []int{1, 4, 5, 6}},
		{"ascii digits", lit("foo"), "foo1\n1foo\nfoo 1\n", []int{3}},
		{"underscore", lit("foo"), "foo_\n_foo\nfoo_bar\nfoo _\n", []int{4}},
		{"connector beyond ascii", lit("foo"), "foo\u203f\nfoo \u203f\n", []int{2}},
		{"letters beyond ascii", lit("Foo"), "Fooé\néFoo\nFoo é\nΩFoo\nFooЖ\n", []int{3}},
		{"word beyond ascii", lit("café"), "café bar\ncafés\nle café.\n", []int{1, 3}},
		{"mark", lit("foo"), "foo\u0301\nfoo \u0301\n", []int{2}},
		{"digits beyond ascii", lit("foo"), "foo\u0663\n\u0663foo\nfoo\uff11\nfoo \u0663\n", []int{4}},
		{"line and file edges", lit("foo"), "foo\nx foo\nfoo x\nxfoo\nfoo", []int{1, 2, 3, 5}},
		{"file edges without newline", lit("foo"), "foo", []int{1}},
		{"crlf", lit("foo"), "foo\r\nx foo\r\nfoox\r\nfoo", []int{1, 2, 4}},
		{"a later match on the line", lit("foo"), "foobar foo\nfoofoo\nfoofoo foo\n", []int{1, 3}},
		{"regex", regex(`fo+`), "fooo bar\nfoooz\nxfoo\n", []int{1}},
		{"regex digits", regex(`\d+`), "a 123 b\na123\n123b\n", []int{1}},
		{"regex digits beyond ascii", regex(`\pN+`), "١٢٣ x\na١٢٣\n", []int{1}},
		{"regex alternation", regex(`foo|foobar`), "foobar x\nfoobarx\n", []int{1}},
		{"regex anchors", regex(`^foo`), "foo bar\nfoobar\n foo\n", []int{1}},
		{"regex punctuation", regex(`foo\(\)`), "call foo() here\nfoo()x\n(foo())\n", []int{1, 3}},
		{"ignore case", fold(lit("foo")), "FOO bar\nFOOé\nxFoO\nFoO\n", []int{1, 4}},
		{"ignore case, kelvin sign", fold(lit("kelvin")), "\u212Aelvin x\nx\u212Aelvinz\n", []int{1}},
		{"ignore case regex", fold(regex(`fo+`)), "FOOO bar\nFOOOZ\n", []int{1}},
		{"no match", lit("foo"), "foobar\nbarfoo\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := grepLines(t, c.text, c.req); !slices.Equal(got, c.want) {
				t.Errorf("%q (regex %v, ignoreCase %v) as a word in %q: lines %v, want %v", c.req.Query, c.req.Regex != nil, c.req.IgnoreCase, c.text, got, c.want)
			}
			// The searcher with buffers of 16 and 64 bytes, most lines
			// streamed: the same lines.
			query, isRegex, _ := c.req.query()
			m, err := search.NewWordMatcher(query, isRegex, c.req.IgnoreCase)
			if err != nil {
				t.Fatal(err)
			}
			s := sizedSearcher(m, 0, 1<<30, [2]int{16, 64})
			s.withCR = namesCR(query, isRegex)
			var got []int
			for _, l := range s.search(t.Context(), iotest.HalfReader(strings.NewReader(c.text))).lines {
				got = append(got, l.line)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%q as a word in %q, small buffers: lines %v, want %v", query, c.text, got, c.want)
			}
		})
	}
}

// A long line is cut around its first whole-word match, not around the
// first match of the query in a longer word.
func TestGrepWordLongLineShowsTheWord(t *testing.T) {
	line := strings.Repeat("foobar ", 400) + "foo end"
	for _, size := range [][2]int{{readChunk, maxLineBuffer}, {16, 64}} {
		m, err := search.NewWordMatcher("foo", false, false)
		if err != nil {
			t.Fatal(err)
		}
		s := sizedSearcher(m, 0, 1<<30, size)
		res := s.search(t.Context(), strings.NewReader(line+"\n"))
		if len(res.lines) != 1 {
			t.Fatalf("buffers %v: %d lines, want 1", size, len(res.lines))
		}
		if text, _ := lineText(res.lines[0]); !strings.Contains(text, "foo end") {
			t.Errorf("buffers %v: the line is shown as %q, without its word", size, text)
		}
	}
}

// A query --word cannot tell words in is refused, never answered empty.
func TestGrepWordRefusesBytes(t *testing.T) {
	_, err := search.NewWordMatcher("caf\xe9", false, false)
	if fault.AsError(err).Code != fault.CodeInvalidArgument {
		t.Fatalf("a query of Latin-1 bytes with word: %v, want INVALID_ARGUMENT", err)
	}
}

// wordTokens make the differential test's lines: words that hold one
// another (foo in foobar, foo_bar, fooé), other scripts, digits,
// connectors, marks and punctuation.
var wordTokens = []string{"foo", "Foo", "FOO", "foobar", "foo_bar", "_foo", "fooé", "éfoo", "foo1", "1foo", "foo\u0663",
	"café", "CAFÉ", "cafés", "\u212Aelvin", "kelvin", "ΩΩ", "foo\u0301", "x", "42", "é", "_", "-", ".", "(", ")", "()", "\u203f", "!"}

// wordQueries are the differential test's queries: literals and regexes.
var wordQueries = []struct {
	q     string
	regex bool
}{
	{"foo", false}, {"café", false}, {"kelvin", false}, {"foo_bar", false}, {"foo()", false}, {"é", false}, {"42", false},
	{`fo+`, true}, {`\d+`, true}, {`foo|foobar`, true}, {`caf.`, true}, {`^foo`, true}, {`foo$`, true}, {`\w+é`, true}, {`[()]+`, true},
}

// The differential test: over random trees, grep --word finds the files
// replace --word changes, and in each the lines that hold one of
// replace's matches; replace's counts are those of its matches found in
// each line, so that both read words as one rule does.
func TestGrepWordAgreesWithReplace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	checked, found := 0, 0
	for round := range 30 {
		files := map[string]string{}
		for i := range 6 {
			var b strings.Builder
			for range 1 + rng.IntN(8) {
				for k := range rng.IntN(6) {
					if k > 0 && rng.IntN(3) > 0 {
						b.WriteString([]string{" ", "", "\t", ", "}[rng.IntN(4)])
					}
					b.WriteString(wordTokens[rng.IntN(len(wordTokens))])
				}
				b.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
			}
			text := b.String()
			if rng.IntN(3) == 0 {
				text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
			}
			files[fmt.Sprintf("d%d/f%d.txt", i%2, i)] = text
		}
		for _, q := range wordQueries {
			for _, ignoreCase := range []bool{false, true} {
				tl := &Tools{FS: memfs.New(files)}
				greq := GrepRequest{Query: q.q, Regex: new(q.regex), IgnoreCase: ignoreCase, Word: true, Mode: ModeCount}
				gres, err := tl.Grep(context.Background(), greq)
				if err != nil {
					t.Fatalf("round %d, grep %+v: %v", round, greq, err)
				}
				rreq := ReplaceRequest{Query: q.q, Replacement: new("\u2603"), Regex: q.regex, IgnoreCase: ignoreCase, Word: true, DryRun: true}
				rres, err := tl.Replace(context.Background(), rreq)
				if err != nil {
					t.Fatalf("round %d, replace %+v: %v", round, rreq, err)
				}
				rp, err := newReplacer(rreq)
				if err != nil {
					t.Fatal(err)
				}
				// By file: grep's lines and replace's matches, and the
				// lines that hold replace's matches.
				grepCount, replaced, lines := map[string]int{}, map[string]int{}, map[string]int{}
				for _, f := range gres.Files {
					grepCount[f.Path] = f.Count
				}
				for _, f := range rres.Files {
					replaced[f.Path] = f.Count
				}
				for name, text := range files {
					n := 0
					for rest := []byte(text); len(rest) > 0; {
						line, ending := cutLine(rest, true)
						if ms := rp.findAll(line); len(ms) > 0 {
							lines[name]++
							n += len(ms)
						}
						rest = rest[len(line)+len(ending):]
					}
					if n != replaced[name] {
						t.Fatalf("round %d, %q (ignoreCase %v) in %s %q: replace counted %d, its matches by line are %d", round, q.q, ignoreCase, name, text, replaced[name], n)
					}
					if grepCount[name] != lines[name] {
						t.Fatalf("round %d, %q (regex %v, ignoreCase %v) in %s %q: grep counted %d lines, replace's matches are on %d", round, q.q, q.regex, ignoreCase, name, text, grepCount[name], lines[name])
					}
					checked++
					if lines[name] > 0 {
						found++
					}
				}
				if gres.FilesSearched != rres.FilesSearched {
					t.Fatalf("round %d, %q: grep searched %d files, replace %d", round, q.q, gres.FilesSearched, rres.FilesSearched)
				}
			}
		}
	}
	if found == 0 || found == checked {
		t.Fatalf("%d of %d files held a word match: the test proves too little", found, checked)
	}
	t.Logf("%d files checked, %d with word matches", checked, found)
}
