package core

import (
	"bytes"
	"encoding/base64"
	"math/rand"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf16"

	"github.com/agentfs/agentfs/fault"
)

func TestRequiredLiteral(t *testing.T) {
	for _, c := range []struct {
		re   string
		want string
		fold bool
	}{
		{`func main`, "func main", false},
		{`func \w+Error\(`, "Error(", false},
		{`(?i)readfile`, "READFILE", true},
		{`(foo)+bar`, "foo", false},
		{`a{2,}bcd`, "bcd", false},
		{`x?yz`, "yz", false},
		{`main|baz`, "", false},
		{`[A-Z][a-z]+[0-9]{2,}`, "", false},
		{`a*`, "", false},
	} {
		tree, err := syntax.Parse(c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		lit, fold := requiredLiteral(tree.Simplify())
		if string(lit) != c.want || (lit != nil && fold != c.fold) {
			t.Errorf("requiredLiteral(%q) = %q fold %v, want %q fold %v", c.re, string(lit), fold, c.want, c.fold)
		}
	}
}

func TestRequiredSeq(t *testing.T) {
	const digits, lower = "0123456789", "abcdefghijklmnopqrstuvwxyz"
	for _, c := range []struct {
		re   string
		want []string // the bytes of each class of the run, none for no run
	}{
		{`[A-Z][a-z]+[0-9]{2,}`, []string{lower, digits, digits}},
		{`[a-z]+[0-9]`, []string{lower, digits}},
		{`\d+x?`, []string{digits}},
		{`(?i)q\w`, []string{"Qq"}},
		{`a|b`, []string{"ab"}},
		{`ab|cd`, nil},
		{`[^x]y*`, nil},
		{`z*`, nil},
		{`[0-9]{3}-[0-9]{4}`, []string{digits, digits, "-", digits}},
	} {
		tree, _ := syntax.Parse(c.re, syntax.Perl)
		var got []string
		for _, set := range requiredSeq(tree.Simplify()) {
			s := ""
			for b := range 256 {
				if set[b] {
					s += string(rune(b))
				}
			}
			got = append(got, s)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("requiredSeq(%q) = %q, want %q", c.re, got, c.want)
		}
	}
}

// TestRegexError checks the position (1-based, in characters) and fragment
// of an invalid regex, where the same text may occur earlier escaped or in a
// class, and the naming of what RE2 leaves out.
func TestRegexError(t *testing.T) {
	for _, c := range []struct {
		q           string
		pos         int
		fragment    string
		unsupported string
	}{
		{`ab[c`, 3, `[c`, ""},
		{`ab[c]x[c`, 7, `[c`, ""},
		{`x*+`, 2, `*+`, "a possessive quantifier"},
		{`a{2}+`, 2, `{2}+`, "a possessive quantifier"},
		{`a**`, 2, `**`, ""},
		{`é(?P<>x)`, 2, `(?P<>`, ""},
		{`a(b`, 2, `(`, ""},
		{`(a(b`, 3, `(`, ""},
		{`a)b`, 2, `)`, ""},
		{`x(y)z)`, 6, `)`, ""},
		{`[(]a)`, 5, `)`, ""},
		{`\Qa(\E)`, 7, `)`, ""},
		{`\\q\q`, 4, `\q`, ""},
		{`z-a[z-a]`, 5, `z-a`, ""},
		{`abc\`, 4, `\`, ""},
		{`(?P<n>a)(?P<>b)`, 9, `(?P<>`, ""},
		{`a|*`, 3, `*`, ""},
		{`foo(?=bar)`, 4, `(?=`, "lookahead"},
		{`foo(?!bar)`, 4, `(?!`, "negative lookahead"},
		{`(?<=a)b`, 1, `(?<=`, "lookbehind"},
		{`ü(?<!a)b`, 2, `(?<!`, "negative lookbehind"},
		{`(a)\1`, 4, `\1`, "a backreference"},
		{`(?P<n>a)(?P=n)`, 9, `(?P=`, "a backreference"},
		{`(?<n>a)\k<n>`, 8, `\k`, "a backreference"},
		{`(?>ab)`, 1, `(?>`, "an atomic group"},
		{"a\xffb[", 2, "\xffb[", ""},
		{strings.Repeat("(", 1001) + strings.Repeat(")", 1001), 0, "", ""},
	} {
		_, err := newMatcher(c.q, true, false)
		e := fault.AsError(err)
		if c.pos == 0 {
			// About the whole regex: no position rather than a wrong one.
			if e == nil || e.Code != fault.CodeInvalidRegex || e.Details != nil {
				t.Errorf("newMatcher(%.20q...) = %v, want INVALID_REGEX without a position", c.q, e)
			}
			continue
		}
		if e == nil || e.Code != fault.CodeInvalidRegex || e.Details["position"] != c.pos || e.Details["fragment"] != c.fragment {
			t.Errorf("newMatcher(%q) = %v, want INVALID_REGEX at %d (%q)", c.q, e, c.pos, c.fragment)
			continue
		}
		if u, _ := e.Details["unsupported"].(string); u != c.unsupported {
			t.Errorf("newMatcher(%q): unsupported %q, want %q", c.q, u, c.unsupported)
		}
		if want := "position " + itoa(c.pos); !strings.Contains(e.Message, want) {
			t.Errorf("newMatcher(%q): message %q does not say %q", c.q, e.Message, want)
		}
		if c.unsupported != "" && !strings.Contains(e.Message, "RE2 (Go's regexp) does not support") {
			t.Errorf("newMatcher(%q): message %q does not say RE2 lacks it", c.q, e.Message)
		}
	}
}

// A query that needs a newline would silently find nothing, line by line.
func TestQueriesThatNeedANewline(t *testing.T) {
	for _, c := range []struct {
		q           string
		regex, fail bool
	}{
		{"foo\nbar", false, true},
		{`foo\nbar`, true, true},
		{"foo\nbar", true, true},
		{`a[\n]b`, true, true},
		{`(xy|\n)`, true, true}, // a literal newline anywhere, as rg
		{`a[^x]b`, true, false}, // a class that also holds \n is fine
		{`\s+$`, true, false},
		{`a\\nb`, true, false}, // an escaped backslash then n
	} {
		_, err := newMatcher(c.q, c.regex, false)
		if got := err != nil && fault.AsError(err).Code == fault.CodeInvalidArgument; got != c.fail {
			t.Errorf("newMatcher(%q, regex=%v) = %v; want refused: %v", c.q, c.regex, err, c.fail)
		}
	}
}

func TestLineTextCutNotUTF8(t *testing.T) {
	long := strings.Repeat("x", 1500) + "\xff needle"
	text, b64 := lineText(lineRec{text: []byte(long), isMatch: true, at: 1501})
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || !strings.Contains(string(raw), "\xff needle") || !strings.Contains(text, "bytes cut]") {
		t.Fatalf("a cut line that is not UTF-8: text %q, textBase64 %q (%v)", text, raw, err)
	}
}

func TestLineText(t *testing.T) {
	long := strings.Repeat("x", 3000) + "needle" + strings.Repeat("é", 1000)
	text, b64 := lineText(lineRec{text: []byte(long), isMatch: true, at: 3000})
	if !strings.Contains(text, "needle") || !strings.HasPrefix(text, "[… ") || !strings.HasSuffix(text, " bytes cut]") || b64 != "" {
		t.Errorf("cut line lost its match or markers: %.80q...", text)
	}
	if len(text) > MaxLineBytes+64 {
		t.Errorf("cut line is %d bytes", len(text))
	}
	text, b64 = lineText(lineRec{text: []byte("a\xffb")})
	if text != "a\uFFFDb" || b64 != "Yf9i" {
		t.Errorf("non-UTF-8 line = %q %q", text, b64)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{`"30s"`: 30 * time.Second, `5`: 5 * time.Second, `"1.5"`: 1500 * time.Millisecond} {
		var d Duration
		if err := d.UnmarshalJSON([]byte(in)); err != nil || time.Duration(d) != want {
			t.Errorf("Duration(%s) = %v, %v", in, time.Duration(d), err)
		}
	}
	var d Duration
	for _, bad := range []string{"-1s", "soon", "1e12", "NaN", "-1", "25h"} {
		if err := d.UnmarshalText([]byte(bad)); err == nil || fault.AsError(err).Code != fault.CodeInvalidArgument {
			t.Errorf("duration %q: %v, want INVALID_ARGUMENT", bad, err)
		}
	}
}

// naiveLines is what a line-by-line grep reports: the matching line
// numbers, each line without its terminator and CR.
func naiveLines(t testing.TB, query string, isRegex, ignoreCase bool, text []byte) []int {
	var re *regexp.Regexp
	if isRegex || ignoreCase {
		p := query
		if !isRegex {
			p = regexp.QuoteMeta(query)
		}
		if ignoreCase {
			p = "(?i)" + p
		}
		re = regexp.MustCompile(p)
	}
	var out []int
	lines := bytes.Split(text, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if (re == nil && bytes.Contains(l, []byte(query))) || (re != nil && re.Match(l)) {
			out = append(out, i+1)
		}
	}
	return out
}

// checkSearch compares the searcher with naiveLines, reading in small
// pieces so that lines straddle reads, and checks the context it reports.
func checkSearch(t testing.TB, query string, isRegex, ignoreCase bool, text []byte, context int) {
	m, err := newMatcher(query, isRegex, ignoreCase)
	if err != nil {
		return
	}
	if bytes.IndexByte(text[:min(len(text), binarySample)], 0) >= 0 {
		return
	}
	want := naiveLines(t, query, isRegex, ignoreCase, text)
	s := newSearcher(m, context, 1<<30)
	res := s.search(t.Context(), iotest.HalfReader(bytes.NewReader(text)))
	var got []int
	prev := 0
	for _, l := range res.lines {
		if l.line <= prev {
			t.Fatalf("%q in %q: line %d after %d", query, text, l.line, prev)
		}
		prev = l.line
		if l.isMatch {
			got = append(got, l.line)
		}
	}
	if !slices.Equal(got, want) || res.matches != len(want) {
		t.Fatalf("%q (regex %v, ignoreCase %v) in %q: lines %v (count %d), want %v", query, isRegex, ignoreCase, text, got, res.matches, want)
	}
	// Counting modes keep no lines and count the same.
	if n := newSearcher(m, 0, 0).search(t.Context(), bytes.NewReader(text)); n.matches != len(want) || len(n.lines) != 0 {
		t.Fatalf("%q in %q: counting search found %d (%d lines kept), want %d", query, text, n.matches, len(n.lines), len(want))
	}
	// Every reported line is within context of a match, and every line
	// within context of a match is reported.
	total := bytes.Count(text, []byte("\n"))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		total++
	}
	var wantAll []int
	for n := 1; n <= total; n++ {
		for _, w := range want {
			if n >= w-context && n <= w+context {
				wantAll = append(wantAll, n)
				break
			}
		}
	}
	var all []int
	for _, l := range res.lines {
		all = append(all, l.line)
	}
	if !slices.Equal(all, wantAll) {
		t.Fatalf("%q in %q with context %d: lines %v, want %v", query, text, context, all, wantAll)
	}
}

func TestSearchTable(t *testing.T) {
	text := []byte("foo\r\nbar Foo\nbaz\n\nKelvin ſecret\nend")
	for _, c := range []struct {
		q             string
		regex, ignore bool
	}{
		{"foo", false, false}, {"foo", false, true}, {"kelvin", false, true}, {"SECRET", false, true},
		{`^$`, true, false}, {`o$`, true, false}, {`^b`, true, false}, {`a.`, true, false},
		{`\w+`, true, false}, {`x*`, true, false}, {"end", false, false}, {`(?i)BA[RZ]`, true, false},
	} {
		for ctx := 0; ctx <= 2; ctx++ {
			checkSearch(t, c.q, c.regex, c.ignore, text, ctx)
		}
	}
}

func FuzzSearch(f *testing.F) {
	f.Add("foo", false, false, uint8(0), []byte("foo\nbar foo\r\nbaz"))
	f.Add("ſ", false, true, uint8(1), []byte("S\ns\nſ\n"))
	f.Add(`a\s*b$`, true, false, uint8(2), []byte("a b\r\na\n b\nab"))
	f.Add(`kel`, false, true, uint8(0), []byte("\u212Aelvin\nKEL"))
	f.Add(`[^x]+y`, true, true, uint8(3), []byte("xxy\n\ny\nY"))
	f.Fuzz(func(t *testing.T, query string, isRegex, ignoreCase bool, context uint8, text []byte) {
		if len(query) > 32 || len(text) > 4096 {
			t.Skip("large inputs make slow regexes, not new paths")
		}
		if _, ok := bomCodec(text); ok && (text[0] == 0xFF || text[0] == 0xFE) {
			t.Skip("UTF-16 is searched decoded (TestSearchUTF16); the naive oracle reads bytes")
		}
		checkSearch(t, query, isRegex, ignoreCase, text, int(context%4))
	})
}

// TestPairFinder checks the pair search, with AVX2 where there is one and
// without, against bytes.Index (and, for fold, against a lower-cased copy)
// at every seventh start of a random text.
func TestPairFinder(t *testing.T) {
	simd := pairSIMD
	defer func() { pairSIMD = simd }()
	for _, pairSIMD = range []bool{simd, false} {
		testPairFinder(t)
	}
}

func testPairFinder(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte("erERtn \t\nfuncFUNCmainMAIN()_x")
	text := make([]byte, 3000)
	for i := range text {
		text[i] = alphabet[rnd.Intn(len(alphabet))]
	}
	lower := bytes.ToLower(text)
	for _, q := range []string{"er", "err", "func main", "e\tr", "nn", "re", "x_", "MAIN(func)\tmain_"} {
		exact, fold := newPairFinder([]byte(q), false), newPairFinder([]byte(q), true)
		for from := 0; from < len(text); from += 7 {
			want := bytes.Index(text[from:], []byte(q))
			if want >= 0 {
				want += from
			}
			if got := exact.index(text, from); got != want {
				t.Fatalf("pair %q from %d = %d, want %d", q, from, got, want)
			}
			want = bytes.Index(lower[from:], []byte(q))
			if want >= 0 {
				want += from
			}
			if got := fold.index(text, from); got != want {
				t.Fatalf("fold pair %q from %d = %d, want %d", q, from, got, want)
			}
		}
	}
}

// TestClassRun checks the shift-and line matcher against regexp on random
// lines, and that it declines what it cannot decide.
func TestClassRun(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte("aAbZz09x_ (\t\r\xff\u212Aé")
	for _, q := range []string{`[A-Z][a-z]+[0-9]{2,}`, `func \w+Error\(`, `(?i)readfile`, `a+b+`, `[0-9]{3}x`, `(ab)c+`, `\d`, `zz`} {
		tree, err := syntax.Parse(q, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		c := newClassRun(tree.Simplify())
		if c == nil {
			t.Fatalf("newClassRun(%q) = nil", q)
		}
		re := regexp.MustCompile(q)
		for range 20000 {
			line := make([]byte, rnd.Intn(12))
			for i := range line {
				line[i] = alphabet[rnd.Intn(len(alphabet))]
			}
			if got, want := c.match(line), re.Match(line); got != want {
				t.Fatalf("%q on %q: %v, want %v", q, line, got, want)
			}
		}
	}
	for _, q := range []string{`a*b`, `^ab`, `a\b`, `ab|cd`, `[^x]y`, `a.b`, `(?i)k`, `é`, `a{2,3}`, `x?`, `(ab)+`} {
		tree, _ := syntax.Parse(q, syntax.Perl)
		if newClassRun(tree.Simplify()) != nil {
			t.Errorf("newClassRun(%q) is not nil", q)
		}
	}
}

// TestSeqScan checks the AVX2 scan for a class run against the byte loop
// from every fifth start of a random text.
func TestSeqScan(t *testing.T) {
	if !pairSIMD {
		t.Skip("no AVX2")
	}
	defer func() { pairSIMD = true }()
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte("aZz09-5x_Qq \n\xff")
	text := make([]byte, 3000)
	for i := range text {
		text[i] = alphabet[rnd.Intn(len(alphabet))]
	}
	for _, q := range []string{`[A-Z][a-z]+[0-9]{2,}`, `[0-9]{3}[a-z]{2}`, `\d+x?`, `[q-s]\w`, `[a-z]+[0-9]`, `[a-z_]+[0-9]`} {
		m, err := newMatcher(q, true, false)
		if err != nil || m.seq == nil || m.seqRanges == nil {
			t.Fatalf("%q: no class run with a range (%v)", q, err)
		}
		for from := 0; from < len(text); from += 5 {
			pairSIMD = true
			got := m.candidate(text, from, nil)
			pairSIMD = false
			if want := m.candidate(text, from, nil); got != want {
				t.Fatalf("%q from %d: %d, want %d", q, from, got, want)
			}
		}
	}
}

// UTF-16 with a byte-order mark is searched as text, as read decodes it and
// ripgrep searches it, with its line numbers; other NULs still mean binary.
func TestSearchUTF16(t *testing.T) {
	m, err := newMatcher("needle", false, false)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(s string, big bool) []byte {
		out := []byte{0xFF, 0xFE}
		if big {
			out = []byte{0xFE, 0xFF}
		}
		for _, u := range utf16.Encode([]rune(s)) {
			if big {
				out = append(out, byte(u>>8), byte(u))
			} else {
				out = append(out, byte(u), byte(u>>8))
			}
		}
		return out
	}
	for _, big := range []bool{false, true} {
		res := newSearcher(m, 0, 10).search(t.Context(), bytes.NewReader(enc("héllo\r\nthe needle\r\nend\r\n", big)))
		if res.binary || len(res.lines) != 1 || res.lines[0].line != 2 || string(res.lines[0].text) != "the needle" {
			t.Fatalf("UTF-16 (big endian %v): binary %v, lines %+v", big, res.binary, res.lines)
		}
	}
	if res := newSearcher(m, 0, 10).search(t.Context(), bytes.NewReader([]byte("needle\x00"))); !res.binary {
		t.Fatal("a NUL without a byte-order mark is no longer binary")
	}
	// A NUL character in the decoded text (or a binary file that starts
	// with FF FE) is binary, as for any other file.
	if res := newSearcher(m, 0, 10).search(t.Context(), bytes.NewReader(enc("needle\x00x\n", false))); !res.binary {
		t.Fatal("UTF-16 holding a NUL character was searched as text")
	}
}
