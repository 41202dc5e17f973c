package core

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/internal/allocs"
	"github.com/agentfs/agentfs/memfs"
)

func replaceFS() *memfs.FS {
	return memfs.New(map[string]string{
		"a.go":       "foo := http2foo + foobar\r\nreturn foo\r\n",
		"sub/b.txt":  "\ufefffoo\n",
		"sub/c.txt":  "nothing here\n",
		"bin.dat":    "foo\x00",
		"skip/d.txt": "foo\n",
	})
}

// Replace changes every match in every selected file, whole words only
// with word, regex groups expanded, line endings and BOM kept; a count
// that is not the expected one changes nothing.
func TestReplace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		req   ReplaceRequest
		code  fault.Code
		count int
		files map[string]string
	}{
		{"a fixed string", ReplaceRequest{Query: "foo", Replacement: str("bar"), Exclude: []string{"skip"}}, "", 5,
			map[string]string{"a.go": "bar := http2bar + barbar\r\nreturn bar\r\n", "sub/b.txt": "\ufeffbar\n"}},
		{"whole words", ReplaceRequest{Query: "foo", Replacement: str("bar"), Word: true, Include: Globs{"*.go"}}, "", 2,
			map[string]string{"a.go": "bar := http2foo + foobar\r\nreturn bar\r\n", "sub/b.txt": "\ufefffoo\n"}},
		{"regex groups", ReplaceRequest{Query: `(\w+) := (\w+)`, Replacement: str("$2 = ${1}"), Regex: true}, "", 1,
			map[string]string{"a.go": "http2foo = foo + foobar\r\nreturn foo\r\n"}},
		{"ignoring case, deleting", ReplaceRequest{Query: "FOO", Replacement: str(""), IgnoreCase: true, Path: "sub"}, "", 1,
			map[string]string{"sub/b.txt": "\ufeff\n", "skip/d.txt": "foo\n"}},
		{"the expected count", ReplaceRequest{Query: "foo", Replacement: str("bar"), ExpectedCount: new(5), Exclude: []string{"skip"}}, "", 5,
			map[string]string{"sub/b.txt": "\ufeffbar\n"}},
		{"another count", ReplaceRequest{Query: "foo", Replacement: str("bar"), ExpectedCount: new(2)}, fault.CodeStale, 0,
			map[string]string{"a.go": "foo := http2foo + foobar\r\nreturn foo\r\n", "skip/d.txt": "foo\n"}},
		{"a dry run", ReplaceRequest{Query: "foo", Replacement: str("bar"), DryRun: true}, "", 6,
			map[string]string{"a.go": "foo := http2foo + foobar\r\nreturn foo\r\n"}},
		{"no replacement", ReplaceRequest{Query: "foo"}, fault.CodeInvalidArgument, 0, nil},
		{"an empty match", ReplaceRequest{Query: "x*", Regex: true, Replacement: str("y")}, fault.CodeInvalidArgument, 0, nil},
		{"a bad regex", ReplaceRequest{Query: "(", Regex: true, Replacement: str("y")}, fault.CodeInvalidRegex, 0, nil},
		// Not UTF-8: a fixed string was INVALID_REGEX, hinting regex=false;
		// a replacement was written raw, the file then NOT_TEXT.
		{"a query not UTF-8", ReplaceRequest{Query: "foo\xe9", Replacement: str("y")}, fault.CodeInvalidArgument, 0, nil},
		{"a replacement not UTF-8", ReplaceRequest{Query: "foo", Replacement: str("\xc3")}, fault.CodeInvalidArgument, 0,
			map[string]string{"a.go": "foo := http2foo + foobar\r\nreturn foo\r\n"}},
		// A NUL made the files binary: replace, edit and grep skipped them.
		{"a replacement with a NUL", ReplaceRequest{Query: "foo", Replacement: str("a\x00b")}, fault.CodeInvalidArgument, 0,
			map[string]string{"a.go": "foo := http2foo + foobar\r\nreturn foo\r\n"}},
	} {
		m := replaceFS()
		res, err := (&Tools{FS: m}).Replace(ctx, tc.req)
		if tc.code != "" {
			if e := fault.AsError(err); e == nil || e.Code != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		} else if err != nil || res.Replacements != tc.count || tc.name == "a fixed string" && res.BinarySkipped != 1 {
			t.Errorf("%s: %+v, %v; want %d replacements", tc.name, res, err, tc.count)
		}
		for p, want := range tc.files {
			if got := fileText(m, p); got != want {
				t.Errorf("%s: %s is %q, want %q", tc.name, p, got, want)
			}
		}
		if fileText(m, "bin.dat") != "foo\x00" || fileText(m, "sub/c.txt") != "nothing here\n" {
			t.Errorf("%s: a file without a text match changed", tc.name)
		}
	}
}

// A replace whose file changes between the search and the commit runs
// again on the new content; the other writer's change is kept.
func TestReplaceRetriesALostRace(t *testing.T) {
	fsys := &interferingFS{FS: memfs.New(map[string]string{"f": "foo\n"}), n: 1}
	res, err := (&Tools{FS: txnInterfering{fsys}}).Replace(context.Background(), ReplaceRequest{Query: "o", Replacement: str("0")})
	if err != nil || fileText(fsys.FS, "f") != "f00\n0ther 1\n" || res.Replacements != 3 {
		t.Fatalf("%+v, %v; the file is %q", res, err, fileText(fsys.FS, "f"))
	}
}

// A file that a transaction refuses (here a stale one, as a hard link or a
// permission would be) changes nothing anywhere.
func TestReplaceAllOrNothing(t *testing.T) {
	m := replaceFS()
	tl := &Tools{FS: refusingTx{m}}
	_, err := tl.Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: str("bar")})
	if e := fault.AsError(err); e == nil || e.Code != fault.CodeHardlink {
		t.Fatalf("%v, want HARDLINK", err)
	}
	if fileText(m, "a.go") != "foo := http2foo + foobar\r\nreturn foo\r\n" || m.Stats().Writes != 0 {
		t.Errorf("a refused replace changed files")
	}
}

// refusingTx refuses every commit, as localfs refuses a file with hard links.
type refusingTx struct{ *memfs.FS }

func (refusingTx) Commit(context.Context, []backend.Op) ([]backend.FileInfo, error) {
	return nil, fault.Errorf(fault.CodeHardlink, "the file has 2 hard links.")
}

// TestReplacerLineEndings: ^ and $ work at each line of a CRLF file and
// after a byte-order mark, \s never takes a CR from its LF, and the file
// keeps its mark and endings; a query without a newline matches within
// lines (\s+$ took blank lines and the final newline). Regexes and fixed
// strings alike.
func TestReplacerLineEndings(t *testing.T) {
	for _, tc := range []struct {
		query, with, in, want string
		n                     int
	}{
		{`E$`, "e", "ONE\r\nTWO\r\n", "ONe\r\nTWO\r\n", 1},
		{`^T`, "t", "ONE\r\nTWO\r\n", "ONE\r\ntWO\r\n", 1},
		{`^O`, "o", "\xef\xbb\xbfONE\nTWO\n", "\xef\xbb\xbfoNE\nTWO\n", 1},
		{`E\n`, "E_\n", "ONE\r\nTWO\r\n", "ONE_\r\nTWO\r\n", 1},
		{`E\s`, "E_\n", "ONE \r\nTWO\r\n", "ONE_\r\n\r\nTWO\r\n", 1},
		{`\s+$`, "", "a  \nb\n\n\nc\n", "a\nb\n\n\nc\n", 1},
		{`\s+$`, "", "a  \r\nb\t\r\nc\r\n", "a\r\nb\r\nc\r\n", 2},
		{`\s+$`, "", "a \r\nb\nc\r\n", "a\r\nb\nc\r\n", 1},
		{`[^x]+`, "y", "ab\ncd", "y\ny", 2},
		// \A and \z are the whole text's: within lines, \A matched at each.
		{`\A#!/bin/sh`, "#!/bin/bash", "#!/bin/sh\necho\n#!/bin/sh\n", "#!/bin/bash\necho\n#!/bin/sh\n", 1},
		{`x\z`, "y", "x\nx", "x\ny", 1},
		// A CR named otherwise than \r, in a mixed file: found.
		{`\x0d`, "", "a\r\nb\nc\r\n", "a\nb\nc\n", 2},
		{`[\x00-\x1f]`, "", "a\r\nb\tc\n", "a\nbc\n", 2},
		// A replacement's newline on a last line without one, in a CRLF
		// file: CRLF.
		{"\x00fixed:b", "B\nC", "a\r\nb", "a\r\nB\r\nC", 1},
		{`(?s)E.T`, "E T", "ONE\r\nTWO\r\n", "ONE TWO\r\n", 1},
		{`O$`, "o", "ONE\r\nTWO\n", "ONE\r\nTWo\n", 1},
		{`foo`, "bar", "keep\r\r\nfoo\r\n", "keep\r\r\nbar\r\n", 1},
		{`\r$`, "", "A\r\nB\r\n", "A\nB\n", 2},
		// A fixed string: its \n matches a CRLF, a replacement's \n is
		// written CRLF (it matched nothing, and left a bare LF).
		{"\x00fixed:line1\nline2", "J", "line1\r\nline2\r\n", "J\r\n", 1},
		{"\x00fixed:line2", "X\nY", "line1\r\nline2\r\n", "line1\r\nX\r\nY\r\n", 1},
		{"\x00fixed:a\rb", "c", "a\rb\r\n", "c\r\n", 1},
		// A replacement's newline, LF or CRLF, is the line's ending: a
		// CRLF was written CRLF in an LF line.
		{"\x00fixed:x", "y\r\nz", "a\r\nx\n", "a\r\ny\nz\n", 1},
		{`x$`, "y\r\nz", "x\nx\r\nx", "y\nz\ny\r\nz\r\ny\nz", 3},
		{`x\n`, "y\r\nz\r\n", "x\nw\n", "y\nz\nw\n", 1},
		{`x\n`, "y\r\nz\n", "x\nw\r\nv\r\n", "y\nz\nw\r\nv\r\n", 1},
		{`(?s)w.*`, "W\nV\n", "x\nw\r\nv\n", "x\nW\r\nV\r\n", 1},
		{`(?s)(w)\r\n(v)`, "$1\n$2", "x\nw\r\nv\n", "x\nw\nv\n", 1},
		{`(w\s+)(v)\z`, "${1}x\n$2", "w\r\nv", "w\r\nx\r\nv", 1},
		// A query that names CR takes the replacement as given, as sed.
		{`\r$`, "\r\n#\r", "a\r\nb\n", "a\r\n#\r\nb\n", 1},
		// A CR within a line of a CRLF file is a character: the file's
		// lines are still matched as LF lines (a query spanning lines
		// matched nothing), and every CR outside the matches, or that a
		// replacement writes, stays.
		{"\x00fixed:foo\nbar", "Q", "one\rtwo\r\nfoo\r\nbar\r\n", "one\rtwo\r\nQ\r\n", 1},
		{`(?s)foo.bar`, "Q\nR", "one\rtwo\r\nfoo\r\nbar\r\n", "one\rtwo\r\nQ\r\nR\r\n", 1},
		{`x\ny`, "Z", "a\r\r\nx\r\ny\r\n", "a\r\r\nZ\r\n", 1},
		{`a\nb`, "a\r", "a\r\nb\r\n", "a\r\r\n", 1},
		{`a\nb`, "A\r\nB", "a\r\nb\r\n", "A\r\nB\r\n", 1},
		// A U+FEFF a replacement puts at the start of the text is a
		// byte-order mark on disk: dropped, as edit and write drop it; one
		// further in, or of the file's own text, stays.
		{"\x00fixed:abc", "\uFEFFX", "abc\nabc\n", "X\n\uFEFFX\n", 2},
		{"\x00fixed:abc", "\uFEFFX", "\xef\xbb\xbfabc\n", "\xef\xbb\xbfX\n", 1},
		{"\x00fixed:abc", "\uFEFFX", "\xef\xbb\xbf\uFEFFabc\n", "\xef\xbb\xbf\uFEFFX\n", 1},
		{`(?s)abc.abc`, "\uFEFF$0", "abc\nabc\n", "abc\nabc\n", 1},
		{`^a`, "\uFEFF", "abc\nabc\n", "bc\n\uFEFFbc\n", 2},
		{`X`, "", "X\uFEFFabc\n", "\uFEFFabc\n", 1},
		{`b`, "\uFEFF", "abc\n", "a\uFEFFc\n", 1},
	} {
		query, fixed := strings.CutPrefix(tc.query, "\x00fixed:")
		rp, err := newReplacer(ReplaceRequest{Query: query, Replacement: &tc.with, Regex: !fixed})
		if err != nil {
			t.Fatal(err)
		}
		if got, n, _, _ := rp.apply([]byte(tc.in)); string(got) != tc.want || n != tc.n || !rp.matches([]byte(tc.in)) {
			t.Errorf("%q in %q: %q (%d), want %q (%d)", tc.query, tc.in, got, n, tc.want, tc.n)
		}
	}
}

// TestReplaceRegexErrorSaysWhatRE2Lacks: replace's INVALID_REGEX names the
// construct and where it is, as grep's does (the flags it compiles with
// once hid both).
func TestReplaceRegexErrorSaysWhatRE2Lacks(t *testing.T) {
	with := "x"
	for q, what := range map[string]string{`a(?=b)`: "lookahead", `(a)\1`: "a backreference"} {
		_, err := newReplacer(ReplaceRequest{Query: q, Replacement: &with, Regex: true})
		if e := fault.AsError(err); e == nil || e.Code != fault.CodeInvalidRegex || e.Details["unsupported"] != what {
			t.Errorf("%s: %v, want INVALID_REGEX naming %s", q, err, what)
		}
	}
}

// --word takes words of any script, as rg -w does: Go's \b knows only
// ASCII, so café was replaced inside cafés, na inside naïve, and été,
// standing alone, was never found. A match sought again after another
// sees the character before it: ^ and \A took it for the text's start.
func TestReplaceWordsInAnyScript(t *testing.T) {
	for _, tc := range []struct {
		query, with string
		regex       bool
		text, want  string
		n           int
	}{
		{"café", "X", false, "café cafés naïve naïveté\n", "X cafés naïve naïveté\n", 1},
		{"na", "Y", false, "café cafés naïve naïveté\n", "", 0},
		{"été", "E", false, "été fête\n", "E fête\n", 1},
		{"foo()", "bar()", false, "call foo() here, foo()x\n", "call bar() here, foo()x\n", 1},
		{"foo", "bar", false, "http2foo foobar foo_x foo\n", "http2foo foobar foo_x bar\n", 1},
		{"a", "b", false, "a a\ta,a\n", "b b\tb,b\n", 4},
		{"a-a", "X", false, "xa-a-a\n", "xa-X\n", 1},
		{"cafe\u0301", "X", false, "cafe\u0301 cafe\u0301s\n", "X cafe\u0301s\n", 1},
		{`caf(é)`, "[$1]", true, "café cafés\n", "[é] cafés\n", 1},
		{`(?P<w>\pL+)é`, "<${w}>", true, "ßé 1ßé\n", "<ß> 1ßé\n", 1},
		{"a\nb", "X", false, "xa\nb a\nb\n", "xa\nb X\n", 1},
		{`x\.|^\.y`, "Z", true, "x..y\n", "Z.y\n", 1},
		{`a\.|\A\.b`, "Z", true, "a..b\n", "Z.b\n", 1},
		{`a\.|^\.b`, "Z", true, "a.\n.b\n", "Z\nZ\n", 2},
	} {
		with := tc.with
		rp, err := newReplacer(ReplaceRequest{Query: tc.query, Replacement: &with, Regex: tc.regex, Word: true})
		if err != nil {
			t.Fatal(err)
		}
		out, n, _, _ := rp.apply([]byte(tc.text))
		if n != tc.n || string(out) != tc.want || rp.matches([]byte(tc.text)) != (tc.n > 0) {
			t.Errorf("%q in %q: %d replacements, %q; want %d, %q", tc.query, tc.text, n, out, tc.n, tc.want)
		}
	}
}

// A replacement that refers to a group the regex lacks is refused: Expand
// made it "", and read $2_ as a group named "2_" (foo_bar became foo). So
// is sed's \1 for a group the regex has, which was written as it stands.
func TestReplaceGroupReferences(t *testing.T) {
	for _, tc := range []struct {
		with, hint string // hint: "" when the replacement is valid
	}{
		{"$2_$1", "${2}_"},
		{"$3", "2 group(s)"},
		{"${nope}", "2 group(s)"},
		{"$01", "2 group(s)"},
		// A number past the groups: the hint names a group the regex has
		// (sed's \10 is group 1 and a 0), never another it lacks.
		{"$10", "write ${1}0 for group 1"},
		{"$21x", "write ${2}1x for group 2"},
		{"$3x", "2 group(s)"},
		{"$30", "2 group(s)"},
		{"${2}_${1}", ""},
		{"$0 $first $$3 ${2}", ""},
		{"costs $ 5, ${ and $", ""},
		{"${1x", ""}, // no closing brace: a dollar
		// sed's \1 is written as it stands: refused where the group exists.
		{`fmt.Errorf("\1")`, "write $1"},
		{`\2_\1`, "write $2"},
		{`\\1`, "write $1"},
		{`\3 and \0 and a\nb`, ""}, // no group 3; \0 and \n are no groups
	} {
		_, err := newReplacer(ReplaceRequest{Query: `(?P<first>foo)_(bar)`, Replacement: &tc.with, Regex: true})
		e := fault.AsError(err)
		switch {
		case tc.hint == "" && err != nil:
			t.Errorf("%q: %v", tc.with, err)
		case tc.hint != "" && (e == nil || e.Code != fault.CodeInvalidArgument || !strings.Contains(e.Hint, tc.hint)):
			t.Errorf("%q: %v, want INVALID_ARGUMENT hinting %q", tc.with, err, tc.hint)
		}
	}
	with := "$9"
	if _, err := newReplacer(ReplaceRequest{Query: "a", Replacement: &with}); err != nil {
		t.Errorf("a fixed string's replacement is literal: %v", err)
	}
}

// TestReplaceByLineDiff: the diff of a replace within lines is made from
// the lines it changed, with no diff search: the old and new texts are
// its sides, and where the change is plain it is unifiedDiff's.
func TestReplaceByLineDiff(t *testing.T) {
	for _, tc := range []struct{ query, with, in string }{
		{`\s+$`, "", "a  \nb\n\n\nc\n"},
		{`x`, "y", "\xef\xbb\xbfx1\r\nz\r\nx2"},
		{`b`, "B\nB", "a\nb\nc\n"},
		{`b`, "B\nB", "a\r\nb\r\nc\r\n"},
		{`^l`, "> l", strings.Repeat("line\n", 20)},
		{`k`, "K", strings.Repeat("a\n", 10) + "k\n" + strings.Repeat("a\n", 10) + "k"},
	} {
		if !checkByLineDiff(t, tc.query, tc.with, tc.in, true, true) {
			t.Errorf("%q in %q: no replace by line", tc.query, tc.in)
		}
	}
}

// checkByLineDiff checks the diff a replace by line made of in: its old
// side is in, its new side the replaced text, and, with render, it
// renders as the generic diff of the two does (which may align a run of
// changed lines otherwise, as validly). false when the query is no
// expression, or does not match.
func checkByLineDiff(t *testing.T, query, with, in string, regex, render bool) bool {
	t.Helper()
	rp, err := newReplacer(ReplaceRequest{Query: query, Replacement: &with, Regex: regex})
	if err != nil || !rp.byLine {
		return false
	}
	out, n, diff, _ := rp.apply([]byte(in))
	if n == 0 {
		return false
	}
	if diff == nil {
		t.Fatalf("%q in %q: %d matches, no diff", query, in, n)
	}
	var old, now strings.Builder
	for _, l := range diff {
		if l.op != '+' {
			old.WriteString(l.text)
		}
		if l.op != '-' {
			now.WriteString(l.text)
		}
	}
	if old.String() != in || now.String() != string(out) {
		t.Errorf("%q in %q: the diff's sides are %q and %q", query, in, old.String(), now.String())
	}
	if string(out) == in || !render {
		return true // replaced by itself: no file is written, no diff shown
	}
	for _, context := range []int{diffContext, 0, 1} {
		got, _ := renderDiff("f", diff, 0, context)
		if want, _ := contextDiff("f", in, string(out), context); got != want {
			t.Errorf("%q in %q, context %d:\n%s\nwant\n%s", query, in, context, got, want)
		}
	}
	return true
}

// FuzzReplaceByLineDiff: the diff a replace by line builds from its lines
// has the file before and after as its sides, for any text (marks, CR,
// lines without an ending) and query.
func FuzzReplaceByLineDiff(f *testing.F) {
	f.Add("x", "y", "\xef\xbb\xbfx1\r\nz\r\nx2", false)
	f.Add(`\s+$`, "", "a  \nb\n\n\nc\n", true)
	f.Add("b", "B\nB", "a\r\nb\r\nc\r\n", false)
	f.Add("\r", "", "a\r\nb\rc\n", false)
	f.Fuzz(func(t *testing.T, query, with, in string, regex bool) {
		if query != "" {
			checkByLineDiff(t, query, with, in, regex, false)
		}
	})
}

// FuzzReplaceCandidateLines: the candidate finder (grep's) that picks the
// lines the expression sees changes nothing: matches, matchesLines over a
// small buffer and apply answer as the expression over every line does,
// with --ignore-case and --word too.
func FuzzReplaceCandidateLines(f *testing.F) {
	f.Add("err", "X", "a err\r\nb\nerr", false, false, false)
	f.Add(`[a-z]+[0-9]{2}`, "N", "x12\ny\r\nab34", true, false, false)
	f.Add("K", "k", "\u212a\nk\n", false, true, false)
	f.Add(`\bis\b`, "IS", "this is\n", true, false, true)
	f.Add("\r", "", "a\r\nb\rc\r", false, false, false)
	f.Add("caf\uFFFD", "X", "un caf\xe9\n", false, false, false)
	f.Add(`caf\x{FFFD}`, "X", "un caf\xe9\n", true, false, false)
	f.Add("tasks", "X", "\u212a\u017f\n\u212a\u017f tas\u212as\n", false, true, false)
	f.Fuzz(func(t *testing.T, query, with, in string, regex, ignoreCase, word bool) {
		req := ReplaceRequest{Query: query, Replacement: &with, Regex: regex, IgnoreCase: ignoreCase, Word: word}
		rp, err := newReplacer(req)
		if err != nil || !rp.byLine || rp.lines == nil {
			return
		}
		plain := *rp
		plain.lines = nil
		data := []byte(in)
		if got, want := rp.matches(data), plain.matches(data); got != want {
			t.Fatalf("%+v in %q: matches %v, every line %v", req, in, got, want)
		}
		streamed, err := rp.matchesLines(bufio.NewReaderSize(strings.NewReader(in), 16))
		if want, _ := plain.matchesLines(bufio.NewReaderSize(strings.NewReader(in), 16)); err != nil || streamed != want {
			t.Fatalf("%+v in %q: streamed %v (%v), every line %v", req, in, streamed, err, want)
		}
		out, n, diff, _ := rp.apply(data)
		wantOut, wantN, wantDiff, _ := plain.apply(data)
		if !bytes.Equal(out, wantOut) || n != wantN || !slices.Equal(diff, wantDiff) {
			t.Fatalf("%+v in %q: apply %q %d, every line %q %d", req, in, out, n, wantOut, wantN)
		}
	})
}

// TestReplaceByItself: matches replaced by themselves change no file: none
// is written or listed (it came with a diff of headers only), but each
// counts, as grep counts it. They were left out of the count only in a
// file with no other change: the same two matches counted 2 in one file
// and 1 in two, and expectedCount 2 (grep's count) was STALE.
func TestReplaceByItself(t *testing.T) {
	for _, tc := range []struct {
		name, query, with string
		files             map[string]string
		count             int
		changed           []string
	}{
		{"alone", "a", "a", map[string]string{"z": "a\nb\n"}, 1, nil},
		{"in one file", "foo( bar)?", "foo bar", map[string]string{"d/a": "foo\nfoo bar\n"}, 2, []string{"d/a"}},
		{"in two files", "foo( bar)?", "foo bar", map[string]string{"d/a": "foo\n", "d/b": "foo bar\n"}, 2, []string{"d/a"}},
	} {
		for _, dry := range []bool{true, false} {
			m := memfs.New(tc.files)
			res, err := (&Tools{FS: m}).Replace(context.Background(), ReplaceRequest{Query: tc.query, Regex: true, Replacement: &tc.with, ExpectedCount: &tc.count, DryRun: dry})
			if err != nil {
				t.Errorf("%s (dry run %v): %v; want %d matches", tc.name, dry, err, tc.count)
				continue
			}
			var changed []string
			for _, f := range res.Files {
				changed = append(changed, f.Path)
			}
			if res.Replacements != tc.count || res.FilesChanged != len(tc.changed) || !slices.Equal(changed, tc.changed) {
				t.Errorf("%s (dry run %v): %+v; want %d replacements, files %v", tc.name, dry, res, tc.count, tc.changed)
			}
			if writes := m.Stats().Writes; dry && writes != 0 || !dry && writes != len(tc.changed) {
				t.Errorf("%s (dry run %v): %d writes", tc.name, dry, writes)
			}
		}
	}
}

// TestReplaceLargeFileAsMatched: a file over replace's limit refuses the
// replace only when it holds a match as apply finds one. Its raw stream
// was matched: \s+$ took each CR of a CRLF file and a blank line's LF
// (TOO_LARGE for a file grep finds no match in, the small file left as it
// was), and a fixed string spanning lines missed its CRLF lines.
func TestReplaceLargeFileAsMatched(t *testing.T) {
	crlf := strings.Repeat("line\r\n", 400000)
	long := strings.Repeat("x", 3<<20) + "\r\n"
	for _, tc := range []struct {
		name, large, query string
		regex              bool
		code               fault.Code // "": the large file is skipped
	}{
		{"a CRLF line's CR is its ending", crlf, `\s+$`, true, ""},
		{"a blank line's LF is its ending", strings.Repeat("line\n\n", 400000), `\s+$`, true, ""},
		{"\\s stays within the line", strings.Repeat("foo\nbar\n", 300000), `foo\s+bar`, true, ""},
		{"a line longer than the limit", long, `\s+$`, true, ""},
		{"a match within a line", crlf + "end  \r\n", `\s+$`, true, fault.CodeTooLarge},
		{"a match at the end of a long line", long + "x", `x$`, true, fault.CodeTooLarge},
		{"a query naming CR sees it", crlf, `\r$`, true, fault.CodeTooLarge},
		{"the first line, after the mark", "\uFEFFfirst\n" + strings.Repeat("line\n", 500000), `^first$`, true, fault.CodeTooLarge},
		{"a fixed string across CRLF lines", crlf + "a\r\nb\r\n", "a\nb", false, fault.CodeTooLarge},
		{"a regex across CRLF lines", crlf + "a\r\nb\r\n", `a$\n^b`, true, fault.CodeTooLarge},
		{"no LF view in mixed lines", crlf + "a\r\nb\n", `a\nb`, true, ""},
		{"a CR within a CRLF line", "one\rtwo\r\n" + crlf + "a\r\nb\r\n", "a\nb", false, fault.CodeTooLarge},
		{"a CR before a CRLF", "one\r\r\n" + crlf + "a\r\nb\r\n", `a\nb`, true, fault.CodeTooLarge},
		// Binary as grep decides, as a small file is: a built tool in the
		// tree refused the whole replace.
		{"a binary file", strings.Repeat("\x00x  \n", 500000), `\s+$`, true, ""},
		{"a binary file after a UTF-8 mark", "\uFEFF" + strings.Repeat("\x00x  \n", 500000), `\s+$`, true, ""},
		{"not UTF-8 (Latin-1)", strings.Repeat("caf\xe9  \n", 400000), `\s+$`, true, ""},
		{"a character cut by the head's end", strings.Repeat("\u00e9", MaxEditBytes/2+10) + "  \n", `\s+$`, true, fault.CodeTooLarge},
		{"a NUL past grep's first bytes", strings.Repeat("x  \n", 20000) + "\x00" + strings.Repeat("x  \n", 600000), `\s+$`, true, ""},
	} {
		m := memfs.New(map[string]string{"d/large": tc.large, "d/small": "x  \ny\n"})
		none := ""
		res, err := (&Tools{FS: m}).Replace(context.Background(), ReplaceRequest{Query: tc.query, Regex: tc.regex, Replacement: &none, Path: "d", DryRun: true})
		switch {
		case tc.code != "":
			if e := fault.AsError(err); e == nil || e.Code != tc.code || e.Path != "d/large" {
				t.Errorf("%s: %+v, %v; want %s for d/large", tc.name, res, err, tc.code)
			}
		case err != nil || len(res.Files) > 0 && res.Files[0].Path == "d/large":
			t.Errorf("%s: %+v, %v; want d/large skipped", tc.name, res, err)
		}
	}
}

// TestMatchesLinesAsWhole: a large file's lines, matched in the reader's
// buffer or rune by rune past it, match as the whole text's do: with a
// 16-byte buffer, lines longer than it, CRLF and lone CR endings, a last
// line without one, and lines that end exactly at the buffer's end.
func TestMatchesLinesAsWhole(t *testing.T) {
	texts := []string{"", "\n", "abc", "a\r\n", "x\r", strings.Repeat("y", 15) + "\n", strings.Repeat("y", 16) + "\n",
		strings.Repeat("y", 17) + "\r\nend", strings.Repeat("z", 40) + "  \n" + strings.Repeat("w", 33), "foo \r\nbar\r\n", "a\rb\nc  "}
	for _, q := range []string{`\s+$`, `^y+$`, `z+\s`, `\r$`, `end$`, `^$`, `w{33}$`, `b`, `^bar`, `x\r`} {
		rp, err := newReplacer(ReplaceRequest{Query: q, Regex: true, Replacement: new(string)})
		if err != nil || !rp.byLine {
			continue // a query that spans lines is matched whole
		}
		for _, text := range texts {
			got, err := rp.matchesLines(bufio.NewReaderSize(strings.NewReader(text), 16))
			if want := rp.matches([]byte(text)); err != nil || got != want {
				t.Errorf("%q in %q: %v, %v; whole: %v", q, text, got, err, want)
			}
		}
	}
}

// readUpTo reads a file whole, or its first limit bytes, whatever the
// size of the reader's reads, keeps what was read before an error, and
// reads into the buffer it is given again.
func TestReadUpTo(t *testing.T) {
	big := strings.Repeat("0123456789", 20000) // over the first 64 KiB
	errRead := errors.New("EIO")
	for _, tc := range []struct {
		name  string
		r     io.Reader
		limit int
		want  string
		err   error
	}{
		{"empty", strings.NewReader(""), 10, "", nil},
		{"whole", strings.NewReader("abc"), 10, "abc", nil},
		{"at the limit", strings.NewReader("abcdef"), 6, "abcdef", nil},
		{"cut at the limit", strings.NewReader("abcdef"), 4, "abcd", nil},
		{"a byte a read", iotest.OneByteReader(strings.NewReader("abcdef")), 10, "abcdef", nil},
		{"grown", strings.NewReader(big), len(big) + 1, big, nil},
		{"grown and cut", strings.NewReader(big), 100001, big[:100001], nil},
		{"an error after data", io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errRead)), 10, "ab", errRead},
	} {
		for _, buf := range [][]byte{nil, make([]byte, 5, 8)} {
			got, err := readUpTo(tc.r, buf, tc.limit)
			if string(got) != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("%s (buffer of %d): %d bytes, %v; want %d bytes, %v", tc.name, cap(buf), len(got), err, len(tc.want), tc.err)
			}
			if s, ok := tc.r.(*strings.Reader); ok {
				s.Seek(0, io.SeekStart)
			} else {
				break // read once
			}
		}
	}
}

// A replace or apply-patch result fits its bound, whatever the bound, when
// some of its files' diffs fit and others are cut or left out: the bound
// is checked again once the result is written, after the files changed,
// where a result over it would turn a done change into an error. Each
// diff had been counted 12 bytes short (its key), so that 208 of them
// overran 256 KiB by 2.5 KB.
func TestChangedFilesFitTheBound(t *testing.T) {
	files := map[string]string{}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for i := range 40 {
		name := fmt.Sprintf("d/f%02d.txt", i)
		files[name] = strings.Repeat(fmt.Sprintf("x%d \"q\"\t\x01 é\u2028 line\n", i), i%7+1)
		fmt.Fprintf(&patch, "*** Update File: %s\n@@\n-x%d \"q\"\t\x01 é\u2028 line\n+y%d \"q\"\t\x01 é\u2028 LINE\n", name, i, i)
	}
	patch.WriteString("*** End Patch\n")
	with := "LINE"
	for bound := 600; bound <= 12000; bound += 173 {
		tools := &Tools{FS: memfs.New(files), MaxBytes: bound}
		res, err := tools.Replace(context.Background(), ReplaceRequest{Path: "d", Query: "line", Replacement: &with, DryRun: true})
		if err == nil && jsonSize(res) > bound {
			t.Errorf("replace at %d bytes: the result is %d", bound, jsonSize(res))
		}
		pres, err := tools.ApplyPatch(context.Background(), ApplyPatchRequest{Patch: patch.String(), DryRun: true})
		if err == nil && jsonSize(pres) > bound {
			t.Errorf("apply-patch at %d bytes: the result is %d", bound, jsonSize(pres))
		}
	}
}

// When the list of changed files alone is over the bound, as many files
// are listed as fit without their diffs: the prefix was measured with
// them, and 60 files with 40 changed lines each listed 1 at 2000 bytes.
func TestReplaceListsTheFilesThatFit(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("some/longer/directory/file-%02d.txt", i)] = strings.Repeat("foo\n", 40)
	}
	with := "bar"
	res, err := (&Tools{FS: memfs.New(files), MaxBytes: 2000}).Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: &with, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Files); n < 15 || n+res.FilesOmitted != 60 || jsonSize(res) > 2000 || !res.Truncated {
		t.Errorf("%d files listed, %d omitted, %d bytes: %+v", n, res.FilesOmitted, jsonSize(res), res)
	}
}

// lockTimeouts is a backend that records the wait each LockAll is given.
type lockTimeouts struct {
	*memfs.FS
	waits []time.Duration
}

func (l *lockTimeouts) LockAll(_ context.Context, _ []string, timeout time.Duration) (func(), error) {
	l.waits = append(l.waits, timeout)
	return func() {}, nil
}

func (l *lockTimeouts) Lock(ctx context.Context, p string, timeout time.Duration) (func(), error) {
	return l.LockAll(ctx, []string{p}, timeout)
}

// TestReplaceWaitsWithinItsLockTimeout: replace's search (which reads
// again while a file holds a change not yet committed) and its locks
// share one --lock-timeout: each had one of its own, and a replace could
// wait twice as long as it was told.
func TestReplaceWaitsWithinItsLockTimeout(t *testing.T) {
	fs := &lockTimeouts{FS: memfs.New(map[string]string{"a.txt": "old\n"})}
	newText := "new"
	tl := &Tools{FS: fs, LockTimeout: time.Hour}
	if _, err := tl.Replace(context.Background(), ReplaceRequest{Query: "old", Replacement: &newText}); err != nil {
		t.Fatal(err)
	}
	if len(fs.waits) != 1 || fs.waits[0] >= time.Hour {
		t.Errorf("the locks were given %v of a --lock-timeout of 1h the search had begun", fs.waits)
	}
}

// TestRefuseBinaryJudgesAsTheSearch: refuseBinary, which reads a file the
// search skipped as binary again, judges it as the search does: a file
// grown past what replace holds that is text now is a changed file
// (errConflict, searched again), not NOT_TEXT; and a large file's binary
// byte just past that limit is named.
func TestRefuseBinaryJudgesAsTheSearch(t *testing.T) {
	m := memfs.New(map[string]string{
		"text":   strings.Repeat("x\n", MaxEditBytes),
		"nulEnd": strings.Repeat("x", MaxEditBytes) + "\x00",
	})
	tl := &Tools{FS: m}
	if err := tl.refuseBinary(context.Background(), "text"); err != errConflict {
		t.Errorf("large text: %v, want errConflict", err)
	}
	e := wantCode(t, tl.refuseBinary(context.Background(), "nulEnd"), fault.CodeNotText)
	if e.Details["offset"] != MaxEditBytes {
		t.Errorf("NUL past the limit: %v, want its offset %d", e, MaxEditBytes)
	}
}

// pendingFS counts the file openers its walk has handed out (Later) that
// have not yet run: each holds its directory open on a local file system.
type pendingFS struct {
	*memfs.FS
	pending, most atomic.Int64
}

func (p *pendingFS) Walk(ctx context.Context, root string, opts backend.WalkOptions, visit func(backend.WalkEntry) error) error {
	return p.FS.Walk(ctx, root, opts, func(e backend.WalkEntry) error {
		if later := e.Later; later != nil {
			e.Later = func() func() (io.ReadCloser, error) {
				open := later()
				n := p.pending.Add(1)
				for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
				}
				return func() (io.ReadCloser, error) {
					defer p.pending.Add(-1)
					return open()
				}
			}
		}
		return visit(e)
	})
}

// A replace searches the files as its walk finds them, a few per worker
// ahead of it (queued, one being read by each worker, one being sent): it walked the whole tree first, holding an opener, and so
// the directory, of every file until the search, and a replace of a word
// in 11 files of a tree of 800 directories was IO_ERROR (too many open
// files) under ulimit -n 512, where grep and rg found them (514 MB for a
// million files).
func TestReplaceSearchesAsItWalks(t *testing.T) {
	files := map[string]string{}
	for d := range 40 {
		for f := range 50 {
			files[fmt.Sprintf("d%02d/f%02d.txt", d, f)] = "nothing here\n"
		}
	}
	files["d07/f03.txt"] = "a foo here\n"
	files["d31/f49.txt"] = "foo\nfoo\n"
	fsys := &pendingFS{FS: memfs.New(files)}
	res, err := (&Tools{FS: fsys}).Replace(context.Background(), ReplaceRequest{Query: "foo", Replacement: str("bar"), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range res.Files {
		paths = append(paths, f.Path)
	}
	if res.Replacements != 3 || res.FilesSearched != 2000 || !slices.Equal(paths, []string{"d07/f03.txt", "d31/f49.txt"}) {
		t.Errorf("replacements %d, searched %d, files %v; want 3, 2000, [d07/f03.txt d31/f49.txt]", res.Replacements, res.FilesSearched, paths)
	}
	if n := fsys.pending.Load(); n != 0 {
		t.Errorf("%d openers never ran", n)
	}
	if most, bound := fsys.most.Load(), int64(searchAhead+1)*int64(max(1, runtime.GOMAXPROCS(0)))+1; most > bound {
		t.Errorf("%d openers were pending at once, over %d", most, bound)
	}
}

// A replace whose result could never fit is refused before that result
// is built, by line, over the whole text and with groups: a 100 KB
// replacement of each byte of a 1 MB file (100 GB) ended in Go's out of
// memory, where TOO_LARGE belongs.
func TestReplaceRefusesAnOversizedResultUnbuilt(t *testing.T) {
	with := strings.Repeat("x", 32<<10)
	for _, tc := range []struct {
		name string
		req  ReplaceRequest
	}{
		{"a fixed string", ReplaceRequest{Query: "a", Replacement: &with}},
		{"a regex", ReplaceRequest{Query: "a+", Regex: true, Replacement: &with}},
		{"across lines", ReplaceRequest{Query: "a\n", Replacement: &with}},
		{"whole words", ReplaceRequest{Query: "a", Word: true, Replacement: &with}},
		{"a group many times", ReplaceRequest{Query: "(a)", Regex: true, Replacement: str(strings.Repeat("$1", 16<<10))}},
		{"a group by name", ReplaceRequest{Query: "(?P<g>a)", Regex: true, Replacement: str(strings.Repeat("${g}", 8<<10))}},
	} {
		m := memfs.New(map[string]string{"f": strings.Repeat("a\n", 8000), "crlf": strings.Repeat("a\r\n", 8000)})
		var err error
		n := allocs.Bytes(func() { _, err = (&Tools{FS: m, LockTimeout: time.Second}).Replace(context.Background(), tc.req) })
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeTooLarge || e.Details["limit"] != MaxEditBytes {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if size, _ := e.Details["size"].(int); size <= maxPlannedText {
			t.Errorf("%s: size %v", tc.name, e.Details["size"])
		}
		if n > 64<<20 {
			t.Errorf("%s: allocated %d MiB to refuse it", tc.name, n>>20)
		}
	}
}

// FuzzExpansionSize: the size expansionOf gives a replacement in a text
// is the length of what regexp makes of it, a template (Expand's $
// references, read by templateRefs) or a fixed string, for any query
// and text: a size short of it would let through a result that cannot
// fit, one past it refuse one that can.
func FuzzExpansionSize(f *testing.F) {
	f.Add(`(\w)(\w)(\d*)`, "$2$1$3$$x$", "ab12 cd34\r\nx y é9\n")
	f.Add(`(?P<n>a)|(?P<n>c)|(x)`, "[$n$3$0${0}$00$01$9]", "abcx")
	f.Add(`\w+`, "$ ${ ${} ${0 $é$_ ${n}x $123456789 $1234567890", "one two")
	f.Fuzz(func(t *testing.T, query, with, text string) {
		re, err := regexp.Compile(query)
		if err != nil || len(text) > 1<<12 || len(with) > 1<<8 {
			return
		}
		b := []byte(text)
		ms := re.FindAllSubmatchIndex(b, -1)
		if got, want := expansionOf(re, []byte(with), false).replaced(b, ms), len(re.ReplaceAll(b, []byte(with))); got != want {
			t.Errorf("%q with %q in %q: sized %d, made %d", query, with, text, got, want)
		}
		if got, want := expansionOf(re, []byte(with), true).replaced(b, ms), len(re.ReplaceAllLiteral(b, []byte(with))); got != want {
			t.Errorf("%q with %q as it stands in %q: sized %d, made %d", query, with, text, got, want)
		}
	})
}

// expansion sizes what Expand makes, so that the refusal above is of
// no result that would fit.
func TestExpansionSizesWhatExpandMakes(t *testing.T) {
	src := []byte("ab12 cd34\r\nx y é9\n")
	for _, tc := range []struct{ query, with string }{
		{`(\w)(\w)(\d*)`, "$2$1$3$$x$"},
		{`(?P<a>\w)(?P<b>\w)`, "${b}-$a-${a}x-$ax-$bb-${c}"},
		{`(?P<n>a)|(?P<n>c)|(x)`, "[$n$3$0${0}$00$01$9]"},
		{`\w+`, "$ ${ ${} ${0 $é$_"},
		{`(\w+)\s`, "$1\r\n$1"},
	} {
		re := regexp.MustCompile(tc.query)
		x := expansionOf(re, []byte(tc.with), false)
		ms := re.FindAllSubmatchIndex(src, -1)
		if got, want := x.replaced(src, ms), len(re.ReplaceAll(src, []byte(tc.with))); got != want {
			t.Errorf("%s with %q: sized %d, made %d", tc.query, tc.with, got, want)
		}
		if got, want := expansionOf(re, []byte(tc.with), true).replaced(src, ms), len(re.ReplaceAllLiteral(src, []byte(tc.with))); got != want {
			t.Errorf("%s with %q as it stands: sized %d, made %d", tc.query, tc.with, got, want)
		}
	}
}
