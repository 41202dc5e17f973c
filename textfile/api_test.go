package textfile

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/fault"
)

// TestByBOM: each byte-order mark gives its codec, whose units are those
// of its encoding; no mark, no codec.
func TestByBOM(t *testing.T) {
	for _, tc := range []struct {
		prefix    string
		name      string
		unit      int
		bigEndian bool
		bomLen    int
		utf8      bool
		newline   string
		cr        string
	}{
		{"\xEF\xBB\xBFa", "utf-8", 1, false, 3, true, "\n", "\r"},
		{"\xFF\xFEa\x00", "utf-16le", 2, false, 2, false, "\n\x00", "\r\x00"},
		{"\xFE\xFF\x00a", "utf-16be", 2, true, 2, false, "\x00\n", "\x00\r"},
	} {
		c, ok := ByBOM([]byte(tc.prefix))
		if !ok || c.Name() != tc.name || c.Unit() != tc.unit || c.BigEndian() != tc.bigEndian || c.BOMLen() != tc.bomLen ||
			c.IsUTF8() != tc.utf8 || string(c.Newline()) != tc.newline || string(c.CR()) != tc.cr {
			t.Errorf("ByBOM(%q) = %+v, %v; want %s", tc.prefix, c, ok, tc.name)
		}
	}
	if c, ok := ByBOM([]byte("abc")); ok {
		t.Errorf("ByBOM without a mark = %+v", c)
	}
}

// TestNamedCodec: a named encoding is looked up by its WHATWG labels, its
// own byte-order mark is still recognised (a UTF-16 one of the other
// byte order too, which then wins), and a name that cannot decode
// losslessly, or none, is INVALID_ARGUMENT with a hint.
func TestNamedCodec(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		want         string
		bomLen       int
	}{
		{"UTF8", "\xEF\xBB\xBFa", "utf-8", 3},
		{"utf-8", "a", "utf-8", 0},
		{"utf-16le", "\xFF\xFEa\x00", "utf-16le", 2},
		{"utf-16be", "\xFE\xFF\x00a", "utf-16be", 2},
		// The mark of the other byte order wins, as WHATWG's decode has
		// it (it was decoded big-endian, U+FFFE and mojibake).
		{"utf-16be", "\xFF\xFEa\x00", "utf-16le", 2},
		{"latin1", "caf\xe9", "windows-1252", 0},
	} {
		c, err := namedCodec(tc.name, []byte(tc.prefix))
		if err != nil || c.Name() != tc.want || c.BOMLen() != tc.bomLen {
			t.Errorf("namedCodec(%q, %q) = %+v, %v; want %s with a %d-byte mark", tc.name, tc.prefix, c, err, tc.want, tc.bomLen)
		}
	}
	for _, name := range []string{"klingon", "replacement", "x-user-defined"} {
		_, err := namedCodec(name, nil)
		var e *fault.Error
		if !errors.As(err, &e) || e.Code != fault.CodeInvalidArgument || e.Hint == "" {
			t.Errorf("namedCodec(%q): %v, want INVALID_ARGUMENT with a hint", name, err)
		}
	}
}

// TestDecodingReader: UTF-16 is read as UTF-8; UTF-8 passes through.
func TestDecodingReader(t *testing.T) {
	c, _ := ByBOM([]byte("\xFF\xFE"))
	got, err := io.ReadAll(c.DecodingReader(strings.NewReader("h\x00\xe9\x00\n\x00")))
	if err != nil || string(got) != "hé\n" {
		t.Errorf("UTF-16LE read as %q, %v", got, err)
	}
	r := strings.NewReader("x")
	if u, _ := ByBOM([]byte("\xEF\xBB\xBF")); u.DecodingReader(r) != r {
		t.Error("a UTF-8 reader was wrapped")
	}
}

func TestCutUTF8BOM(t *testing.T) {
	for in, want := range map[string][2]string{
		"\xEF\xBB\xBFa": {"\xEF\xBB\xBF", "a"},
		"a":             {"", "a"},
		"\xEF\xBB":      {"", "\xEF\xBB"},
		"":              {"", ""},
	} {
		bom, body := CutUTF8BOM([]byte(in))
		if string(bom) != want[0] || string(body) != want[1] {
			t.Errorf("CutUTF8BOM(%q) = %q, %q", in, bom, body)
		}
	}
}

func TestIsUTF8Text(t *testing.T) {
	for in, want := range map[string]bool{"": true, "héllo\n": true, "a\x00b": false, "caf\xe9": false} {
		if got := IsUTF8Text([]byte(in)); got != want {
			t.Errorf("IsUTF8Text(%q) = %v", in, got)
		}
	}
}

// TestAppended: appended content takes the file's endings (a mixed file's
// majority) and encoding, never a byte-order mark of its own.
func TestAppended(t *testing.T) {
	style := func(s string) *Style {
		st, ok := StyleOf([]byte(s), true)
		if !ok {
			t.Fatalf("StyleOf(%q) is not text", s)
		}
		return &st
	}
	for _, tc := range []struct {
		name       string
		file       *Style
		content    string
		lineEnding string
		want       string
	}{
		{"no text style: as given", nil, "a\r\nb\n", "", "a\r\nb\n"},
		{"no text style: the mark dropped", nil, "\uFEFFa\n", "", "a\n"},
		{"crlf file", style("x\r\n"), "a\nb\n", "", "a\r\nb\r\n"},
		{"lf file", style("x\n"), "a\r\nb\r\n", "", "a\nb\n"},
		{"mixed, mostly crlf", style("x\r\ny\r\nz\n"), "a\nb\n", "", "a\r\nb\r\n"},
		{"mixed, mostly lf", style("x\r\ny\nz\n"), "a\r\nb\n", "", "a\nb\n"},
		{"lf asked", style("x\r\n"), "a\r\n", "lf", "a\n"},
		{"UTF-16 file", style("\xFF\xFEx\x00\n\x00"), "\uFEFFé\n", "", "\xe9\x00\n\x00"},
		// A CRLF file appended in parts, cut between a CR and its LF: the
		// LF ends the file's last line (it was made CRLF: CR CR LF).
		{"crlf file cut after a CR", style("l1\r\nl2\r"), "\nl3\n", "", "\nl3\r\n"},
		{"crlf asked, file cut after a CR", style("x\r\ny\r"), "\n", "crlf", "\n"},
		{"UTF-16 file cut after a CR", style("\xFF\xFEx\x00\r\x00\n\x00y\x00\r\x00"), "\nz\n", "", "\n\x00z\x00\r\x00\n\x00"},
	} {
		got, err := Appended(tc.content, tc.file, tc.lineEnding)
		if err != nil || !bytes.Equal(got, []byte(tc.want)) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestWithoutNewMarks(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		put      int
		want     string
	}{
		{"hello\n", "\uFEFFHELLO\n", 1, "HELLO\n"},
		{"hello\n", "\uFEFF\uFEFFHELLO\n", 2, "HELLO\n"},
		{"\uFEFFtwo\n", "\uFEFFTWO\n", 1, "\uFEFFTWO\n"},
		{"\uFEFFtwo\n", "\uFEFF\uFEFFTWO\n", 2, "\uFEFFTWO\n"},
		{"\uFEFFtwo\n", "TWO\n", 0, "TWO\n"},
		{"a\n", "a\n\uFEFFb\n", 0, "a\n\uFEFFb\n"},
		// Line 1 deleted: line 2's own U+FEFF comes first, and stays.
		{"\n\uFEFFb\n", "\uFEFFb\n", 0, "\uFEFFb\n"},
		// One put before one of old's brought to the start.
		{"\n\uFEFFb\n", "\uFEFF\uFEFFb\n", 1, "\uFEFFb\n"},
	} {
		if got := WithoutNewMarks(tc.old, tc.new, tc.put); got != tc.want {
			t.Errorf("WithoutNewMarks(%q, %q, %d) = %q, want %q", tc.old, tc.new, tc.put, got, tc.want)
		}
	}
}

// TestInvalidAfterMark: the first byte a marked file's encoding does not
// take, at its offset in the file; a valid file, or one without a mark,
// has none.
func TestInvalidAfterMark(t *testing.T) {
	for _, tc := range []struct {
		name, data, enc string
		at              int
		bad             bool
	}{
		{"no mark, Latin-1", "caf\xe9", "", 0, false},
		{"UTF-8 mark, valid, a NUL", "\xEF\xBB\xBFcaf\xc3\xa9\x00", "", 0, false},
		{"UTF-8 mark, Latin-1", "\xEF\xBB\xBFcaf\xe9\n", "utf-8", 6, true},
		{"UTF-8 mark, a cut character", "\xEF\xBB\xBFa\xc3", "utf-8", 4, true},
		{"UTF-16LE, a pair", "\xFF\xFEa\x00\x3d\xd8\x00\xde", "", 0, false},
		{"UTF-16LE, a lone high surrogate", "\xFF\xFEh\x00\x00\xd8\n\x00", "utf-16le", 4, true},
		{"UTF-16LE, a high surrogate last", "\xFF\xFEh\x00\x00\xd8", "utf-16le", 4, true},
		{"UTF-16LE, a lone low surrogate", "\xFF\xFE\x00\xdch\x00", "utf-16le", 2, true},
		{"UTF-16LE, odd length", "\xFF\xFEh\x00x", "utf-16le", 4, true},
		{"UTF-16BE, a pair", "\xFE\xFF\xd8\x3d\xde\x00", "", 0, false},
		{"UTF-16BE, a lone high surrogate", "\xFE\xFF\x00h\xd8\x00\x00\n", "utf-16be", 4, true},
		{"UTF-16BE, U+0000", "\xFE\xFF\x00\x00", "", 0, false},
	} {
		enc, at, bad := InvalidAfterMark([]byte(tc.data))
		if enc != tc.enc || at != tc.at || bad != tc.bad {
			t.Errorf("%s: got %q %d %v; want %q %d %v", tc.name, enc, at, bad, tc.enc, tc.at, tc.bad)
		}
	}
}
