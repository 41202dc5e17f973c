package core

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/memfs"
	"github.com/agentfs/agentfs/search"
	"github.com/agentfs/agentfs/textfile"
)

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
		l = endless(text, lines, i, namesCR(query, isRegex))
		if (re == nil && bytes.Contains(l, []byte(query))) || (re != nil && re.Match(l)) {
			out = append(out, i+1)
		}
	}
	return out
}

// endless is line i of lines, text split at its LFs, without its end: a
// CR before the LF, none at the end of a file without a final LF (the CR
// is the line's own, as read keeps it).
func endless(text []byte, lines [][]byte, i int, withCR bool) []byte {
	if withCR || i == len(lines)-1 && !bytes.HasSuffix(text, []byte("\n")) {
		return lines[i]
	}
	return bytes.TrimSuffix(lines[i], []byte("\r"))
}

// checkSearch compares the searcher with naiveLines, reading in small
// pieces so that lines straddle reads, and checks the context it reports
// and the text output shows of each line. It does so twice: with the
// buffers grep uses, and with buffers of 16 and 64 bytes, so that most
// lines are longer than the largest buffer and searched as a stream.
func checkSearch(t testing.TB, query string, isRegex, ignoreCase bool, text []byte, context int) {
	m, err := search.NewMatcher(query, isRegex, ignoreCase)
	if err != nil {
		return
	}
	if bytes.IndexByte(text[:min(len(text), textfile.BinarySample)], 0) >= 0 {
		return
	}
	want := naiveLines(t, query, isRegex, ignoreCase, text)
	lines := bytes.Split(text, []byte("\n"))
	for _, size := range [][2]int{{readChunk, maxLineBuffer}, {16, 64}} {
		s := sizedSearcher(m, context, 1<<30, size)
		s.withCR = namesCR(query, isRegex)
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
			line := endless(text, lines, l.line-1, s.withCR)
			whole := lineRec{line: l.line, text: line, isMatch: l.isMatch}
			if l.isMatch {
				whole.at = max(0, m.FirstMatch(line))
			}
			gt, gb := lineText(l)
			if wt, wb := lineText(whole); gt != wt || gb != wb {
				t.Fatalf("%q in %q (buffers %v): line %d shown as %q %q, want %q %q", query, text, size, l.line, gt, gb, wt, wb)
			}
		}
		if !slices.Equal(got, want) || res.matches != len(want) {
			t.Fatalf("%q (regex %v, ignoreCase %v) in %q (buffers %v): lines %v (count %d), want %v", query, isRegex, ignoreCase, text, size, got, res.matches, want)
		}
		// Counting modes keep no lines and count the same.
		counter := sizedSearcher(m, 0, 0, size)
		counter.withCR = s.withCR
		if n := counter.search(t.Context(), bytes.NewReader(text)); n.matches != len(want) || len(n.lines) != 0 {
			t.Fatalf("%q in %q (buffers %v): counting search found %d (%d lines kept), want %d", query, text, size, n.matches, len(n.lines), len(want))
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
			t.Fatalf("%q in %q with context %d (buffers %v): lines %v, want %v", query, text, context, size, all, wantAll)
		}
	}
}

// sizedSearcher is a searcher that reads in chunks of size[0] bytes and
// holds lines of up to size[1].
func sizedSearcher(m *search.Matcher, context, cap int, size [2]int) *searcher {
	s := newSearcher(m, context, cap)
	s.buf, s.chunk, s.maxLine = make([]byte, size[0]), size[0], size[1]
	return s
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
		// Naming a CR, a query sees a CRLF line's as its last character.
		{`\r$`, true, false}, {"o\r", false, false}, {`[\x00-\x1f]`, true, false},
	} {
		for ctx := 0; ctx <= 2; ctx++ {
			checkSearch(t, c.q, c.regex, c.ignore, text, ctx)
		}
	}
	// A CRLF line longer than the small buffers, searched as a stream.
	long := []byte(strings.Repeat("ab", 50) + "o\r\nshort\r\n" + strings.Repeat("cd", 50) + "\r\n")
	for _, q := range []string{`o\r$`, `\r`, `d$`} {
		checkSearch(t, q, true, false, long, 1)
	}
}

func FuzzSearch(f *testing.F) {
	f.Add("foo", false, false, uint8(0), []byte("foo\nbar foo\r\nbaz"))
	f.Add("ſ", false, true, uint8(1), []byte("S\ns\nſ\n"))
	f.Add(`a\s*b$`, true, false, uint8(2), []byte("a b\r\na\n b\nab"))
	f.Add(`kel`, false, true, uint8(0), []byte("\u212Aelvin\nKEL"))
	f.Add(`[^x]+y`, true, true, uint8(3), []byte("xxy\n\ny\nY"))
	f.Add(`a$`, true, false, uint8(1), []byte("x\na\r"))
	f.Add(`\r$`, true, false, uint8(1), []byte("one\r\ntwo\r\n"))
	f.Fuzz(func(t *testing.T, query string, isRegex, ignoreCase bool, context uint8, text []byte) {
		if len(query) > 32 || len(text) > 4096 {
			t.Skip("large inputs make slow regexes, not new paths")
		}
		if c, ok := textfile.ByBOM(text); ok && !c.IsUTF8() {
			t.Skip("UTF-16 is searched decoded (TestSearchUTF16); the naive oracle reads bytes")
		}
		checkSearch(t, query, isRegex, ignoreCase, text, int(context%4))
	})
}

// UTF-16 with a byte-order mark is searched as text, as read decodes it and
// ripgrep searches it, with its line numbers; other NULs still mean binary.
func TestSearchUTF16(t *testing.T) {
	m, err := search.NewMatcher("needle", false, false)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(s string, big bool) []byte {
		if big {
			return append([]byte{0xFE, 0xFF}, utf16Bytes(s, true)...)
		}
		return append([]byte{0xFF, 0xFE}, utf16Bytes(s, false)...)
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

// A searcher's skip counts the first matches without keeping them or
// their context, as if a page before had given them: a search of one file
// paged by offset kept every line up to the page's last, 270 bytes a
// match (5.8 GB at offset 16,000,000). The lines kept start with the
// first kept match's before-context past the skipped ones' after-context;
// with small buffers too, where lines are searched as streams.
func TestSearchSkipKeepsNothingBefore(t *testing.T) {
	var b strings.Builder
	for range 1000 {
		b.WriteString("m\nx\nx\n") // a match on lines 1, 4, 7, ...
	}
	m, err := search.NewMatcher("m", false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{readChunk, maxLineBuffer}, {16, 64}} {
		s := sizedSearcher(m, 1, 10+3, size)
		s.skip = 10
		res := s.search(t.Context(), strings.NewReader(b.String()))
		var lines []int
		for _, l := range res.lines {
			lines = append(lines, l.line)
		}
		// Match 10 is line 28 (after-context 29); match 11 is line 31,
		// its before-context 30; the cap stops at match 13, line 37.
		if res.skipped != 10 || !slices.Equal(lines, []int{30, 31, 32, 33, 34, 35, 36, 37}) {
			t.Errorf("buffers %v: skipped %d, kept lines %v", size, res.skipped, lines)
		}
	}
}

// Pages of a grep of one file by offset, with context, give each line
// once, and together what one page gives: the searcher skips what the
// page before gave.
func TestGrepOneFileByOffsetPages(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "line %d\n", i)
		if i%7 == 0 || i%11 == 0 {
			b.WriteString("hit\n")
		}
	}
	tl := &Tools{FS: memfs.New(map[string]string{"f.txt": b.String()})}
	flat := func(res *GrepResult) []string {
		var out []string
		for _, f := range res.Files {
			for _, bl := range f.Blocks {
				for i, l := range bl.Lines {
					out = append(out, fmt.Sprint(bl.Start+i, l))
				}
			}
		}
		return out
	}
	whole, err := tl.Grep(context.Background(), GrepRequest{Query: "hit", Path: "f.txt", Context: 2, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var paged []string
	for off := 0; ; {
		res, err := tl.Grep(context.Background(), GrepRequest{Query: "hit", Path: "f.txt", Context: 2, Limit: 4, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, flat(res)...)
		if res.NextOffset == nil {
			break
		}
		off = *res.NextOffset
	}
	if !slices.Equal(paged, flat(whole)) {
		t.Errorf("the pages give %d lines, one page %d:\n%v\n%v", len(paged), len(flat(whole)), paged, flat(whole))
	}
}

// TestGrepFilePagesFillTheBound: a page of files or counts cut by
// --max-bytes holds what fits, every file once over the pages. Each entry
// was priced as a content mode's ({"path":"","pathBase64":"","blocks":[]}),
// three times an entry of a short path, and a page filled half its bound:
// twice the calls to page through.
func TestGrepFilePagesFillTheBound(t *testing.T) {
	files := map[string]string{}
	var want []string
	for i := range 400 {
		name := fmt.Sprintf("f%03d.go", i)
		files[name] = "func f() {}\n"
		want = append(want, name)
	}
	files["b\xffad.go"] = "func g() {}\n" // a pathBase64
	want = append(want, "b\xffad.go")
	slices.Sort(want)
	const bound = 4000
	tl := &Tools{FS: memfs.New(files), MaxBytes: bound}
	for _, mode := range []string{ModeFiles, ModeCount} {
		var got []string
		req := GrepRequest{Query: "func", Mode: mode, Limit: 1000}
		for range 100 {
			res, err := tl.Grep(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			size := jsonSize(res)
			if size > bound {
				t.Fatalf("%s: a page of %d bytes, over %d", mode, size, bound)
			}
			for _, f := range res.Files {
				p := f.Path
				if f.PathBase64 != "" {
					b, _ := base64.StdEncoding.DecodeString(f.PathBase64)
					p = string(b)
				}
				got = append(got, p)
			}
			if res.NextOffset == nil {
				break
			}
			if size < bound*9/10 {
				t.Errorf("%s: a page of %d entries cut short at %d bytes of %d", mode, len(res.Files), size, bound)
			}
			req.Cursor = res.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the pages list %d files, want %d", mode, len(got), len(want))
		}
	}
}

func TestRegexLookalikeHint(t *testing.T) {
	for _, tc := range []struct {
		query string
		hint  bool
	}{
		{"func .*Serve", true},
		{`a\.b`, true},
		{"x|y", true},
		{"^package", true},
		{"[0-9]+", true},
		{"a{2}", true},
		{`\bword`, true},
		{"plain text", false},
		{"Close()", false},
		{"(group)", false},
		{"[]int", false},
		{"Open(", false},
		{"*ptr", false},
		{`C:\Users`, false},
	} {
		if got := regexLookalikeHint(tc.query) != ""; got != tc.hint {
			t.Errorf("%q: hint %v, want %v", tc.query, got, tc.hint)
		}
	}
}
