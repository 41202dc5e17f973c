package search

import (
	"bytes"
	"math/rand"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"

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
		_, err := NewMatcher(c.q, true, false)
		e := fault.AsError(err)
		if c.pos == 0 {
			// About the whole regex: no position rather than a wrong one.
			if e == nil || e.Code != fault.CodeInvalidRegex || e.Details != nil {
				t.Errorf("NewMatcher(%.20q...) = %v, want INVALID_REGEX without a position", c.q, e)
			}
			continue
		}
		if e == nil || e.Code != fault.CodeInvalidRegex || e.Details["position"] != c.pos || e.Details["fragment"] != c.fragment {
			t.Errorf("NewMatcher(%q) = %v, want INVALID_REGEX at %d (%q)", c.q, e, c.pos, c.fragment)
			continue
		}
		if u, _ := e.Details["unsupported"].(string); u != c.unsupported {
			t.Errorf("NewMatcher(%q): unsupported %q, want %q", c.q, u, c.unsupported)
		}
		if want := "position " + strconv.Itoa(c.pos); !strings.Contains(e.Message, want) {
			t.Errorf("NewMatcher(%q): message %q does not say %q", c.q, e.Message, want)
		}
		if c.unsupported != "" && !strings.Contains(e.Message, "RE2 (Go's regexp) does not support") {
			t.Errorf("NewMatcher(%q): message %q does not say RE2 lacks it", c.q, e.Message)
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
		// A class whose only member is a newline is the newline itself.
		{`[\n]`, true, true},
		{`[\x0a]+`, true, true},
		{`[^\x00-\x09\x0b-\x{10FFFF}]`, true, true},
		{`(xy|\n)`, true, true}, // a literal newline anywhere, as rg
		{`x(a|\n)`, true, true}, // Go's parser makes the class [\na]
		{`a|\n`, true, true},
		{`a|\x0a`, true, true},
		{`a|\x{A}`, true, true},
		{`a|\012`, true, true},
		{"\\Qa\nb\\E", true, true}, // a newline quoted
		{`\Qa\nb\E`, true, false},  // a backslash and n quoted
		// A class member, as in ripgrep: [\r\n]+$ finds CRLF lines.
		{`[\r\n]+$`, true, false},
		{`[\na]`, true, false},
		{`[]\n]`, true, false},
		{`[[:space:]\n]x`, true, false},
		{`[^\x0b]`, true, false}, // a range that holds \n
		{`\\n`, true, false},
		{`a[^x]b`, true, false}, // a class that also holds \n is fine
		{`\s+$`, true, false},
		{`a\\nb`, true, false}, // an escaped backslash then n
	} {
		_, err := NewMatcher(c.q, c.regex, false)
		if got := err != nil && fault.AsError(err).Code == fault.CodeInvalidArgument; got != c.fail {
			t.Errorf("NewMatcher(%q, regex=%v) = %v; want refused: %v", c.q, c.regex, err, c.fail)
		}
	}
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
		m, err := NewMatcher(q, true, false)
		if err != nil || m.seq == nil || m.seqRanges == nil {
			t.Fatalf("%q: no class run with a range (%v)", q, err)
		}
		for from := 0; from < len(text); from += 5 {
			pairSIMD = true
			got := m.Candidate(text, from, nil)
			pairSIMD = false
			if want := m.Candidate(text, from, nil); got != want {
				t.Fatalf("%q from %d: %d, want %d", q, from, got, want)
			}
		}
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

// A query with U+FFFD matches, as regexp does, at every byte that is not
// UTF-8, which grep shows as U+FFFD: no finder of U+FFFD's own bytes may
// pass such a line over. A fixed string found only its bytes, where the
// same string with -i found the line.
func TestRuneErrorFindsInvalidBytes(t *testing.T) {
	for _, tc := range []struct {
		query     string
		regex, ic bool
		line      string
	}{
		{`caf\x{FFFD}`, true, false, "un caf\xe9 noir"},
		{"caf\uFFFD", true, false, "un caf\xe9 noir"},
		{`caf\x{FFFD}`, true, true, "un CAF\xe9 noir"},
		{"caf\uFFFD", false, true, "un CAF\xe9 noir"},
		{"caf\uFFFD", false, false, "un caf\xe9 noir"},
		{"caf\uFFFD", false, false, "un caf\uFFFD noir"},
		// Bytes that are not UTF-8 (queryBase64) are sought as they are.
		{"caf\xe9", false, false, "un caf\xe9 noir"},
	} {
		m, err := NewMatcher(tc.query, tc.regex, tc.ic)
		if err != nil {
			t.Fatal(err)
		}
		var fs FoldState
		fs.Reset()
		buf := []byte("a line\n" + tc.line + "\n")
		if c := m.Candidate(buf, 0, &fs); c < 0 || c > len("a line\n")+len(tc.line) || !m.Verify([]byte(tc.line)) {
			t.Errorf("%q (regex %v, ignore case %v) in %q: candidate at %d", tc.query, tc.regex, tc.ic, tc.line, c)
		}
	}
}

// A fixed query with bytes that are not UTF-8 that cannot be sought as
// its bytes is INVALID_ARGUMENT, not INVALID_REGEX about a regex the
// caller never gave.
func TestQueryNotUTF8(t *testing.T) {
	for _, tc := range []struct {
		query string
		ic    bool
		msg   string
	}{
		{"caf\xe9", true, "ignoreCase cannot fold"},
		{"caf\xe9\uFFFD", false, "both U+FFFD"},
	} {
		_, err := NewMatcher(tc.query, false, tc.ic)
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%q (ignore case %v): %v", tc.query, tc.ic, err)
		}
	}
	m, err := NewMatcher("caf\xe9", false, false)
	var fs FoldState
	fs.Reset()
	if err != nil || m.Candidate([]byte("un caf\u00e9 noir\n"), 0, &fs) >= 0 {
		t.Errorf("the bytes caf\\xe9 matched café in UTF-8: %v", err)
	}
}

// BenchmarkFoldSpecialForms: an ignore-case literal with k and s over a
// text full of Kelvin signs and long s and no match. Each candidate had
// searched the rest of the buffer for each special form again: 2 MiB took
// 17 s in replace, 20 MiB 25 s in grep (the reviewer's figures); the
// forms' next places are now kept in FoldState.
func BenchmarkFoldSpecialForms(b *testing.B) {
	m, err := NewMatcher("tasks", false, true)
	if err != nil {
		b.Fatal(err)
	}
	buf := bytes.Repeat([]byte("\u212a and \u017f, no match here\n"), 1<<16)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		var fs FoldState
		fs.Reset()
		for from := 0; from < len(buf); {
			c := m.Candidate(buf, from, &fs)
			if c < 0 {
				break
			}
			from = c + bytes.IndexByte(buf[c:], '\n') + 1
		}
	}
}
