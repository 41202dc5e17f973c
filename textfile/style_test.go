package textfile

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
)

func TestStyledContent(t *testing.T) {
	yes, no := true, false
	u16le := func(s string) string {
		var b strings.Builder
		b.WriteString("\xFF\xFE")
		for _, r := range s {
			b.WriteByte(byte(r))
			b.WriteByte(0)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name       string
		file       *string // nil: a new file
		content    string
		lineEnding string
		bom        *bool
		want       string
		ending     string
	}{
		{name: "new file: as given", content: "a\r\nb\n", want: "a\r\nb\n", ending: "mixed"},
		{name: "new file with a mark", content: "\uFEFFa\n", want: "\xEF\xBB\xBFa\n", ending: "lf"},
		{name: "new file, mark dropped", content: "\uFEFFa\n", bom: &no, want: "a\n", ending: "lf"},
		{name: "new file, crlf asked", content: "a\nb", lineEnding: "crlf", want: "a\r\nb", ending: "crlf"},
		{name: "crlf file, lf content", file: ptrTo("x\r\ny\r\n"), content: "a\nb\n", want: "a\r\nb\r\n", ending: "crlf"},
		{name: "crlf file, mixed content", file: ptrTo("x\r\n"), content: "a\r\nb\n", want: "a\r\nb\r\n", ending: "crlf"},
		{name: "crlf file, lf asked", file: ptrTo("x\r\n"), content: "a\r\nb\n", lineEnding: "lf", want: "a\nb\n", ending: "lf"},
		{name: "lf file, crlf content", file: ptrTo("x\n"), content: "a\r\nb\r\n", want: "a\nb\n", ending: "lf"},
		{name: "lf file, crlf asked", file: ptrTo("x\n"), content: "a\nb\n", lineEnding: "crlf", want: "a\r\nb\r\n", ending: "crlf"},
		{name: "a lone CR is content", file: ptrTo("x\r\n"), content: "a\rb\n", want: "a\rb\r\n", ending: "crlf"},
		{name: "new file without a line break", content: "abc", want: "abc", ending: "none"},
		{name: "UTF-16BE stays UTF-16BE", file: ptrTo("\xFE\xFF\x00x\x00\n"), content: "a\n", want: "\xFE\xFF\x00a\x00\n", ending: "lf"},
		{name: "no line break: as given", file: ptrTo("x"), content: "a\r\nb\n", want: "a\r\nb\n", ending: "mixed"},
		{name: "BOM file keeps it", file: ptrTo("\xEF\xBB\xBFx\n"), content: "a\n", want: "\xEF\xBB\xBFa\n", ending: "lf"},
		{name: "BOM file, content with its mark", file: ptrTo("\xEF\xBB\xBFx\n"), content: "\uFEFFa\n", want: "\xEF\xBB\xBFa\n", ending: "lf"},
		{name: "BOM file, bom false", file: ptrTo("\xEF\xBB\xBFx\n"), content: "a\n", bom: &no, want: "a\n", ending: "lf"},
		{name: "no-BOM file drops the content's", file: ptrTo("x\n"), content: "\uFEFFa\n", want: "a\n", ending: "lf"},
		// Read gives the second mark of a file that begins with two.
		{name: "two marks: the second is text", file: ptrTo("\xEF\xBB\xBF\xEF\xBB\xBFx\n"), content: "\uFEFFa\n", want: "\xEF\xBB\xBF\xEF\xBB\xBFa\n", ending: "lf"},
		// cat gives both: the first is the mark.
		{name: "two marks, as cat gives them", file: ptrTo("\xEF\xBB\xBF\xEF\xBB\xBFx\n"), content: "\uFEFF\uFEFFa\n", want: "\xEF\xBB\xBF\xEF\xBB\xBFa\n", ending: "lf"},
		// Written first, a U+FEFF is a mark: without one, the file had one
		// and write answered bom false.
		{name: "two marks, bom false", file: ptrTo("\xEF\xBB\xBF\xEF\xBB\xBFx\n"), content: "\uFEFFa\n", bom: &no, want: "a\n", ending: "lf"},
		{name: "new file, two marks, bom false", content: "\uFEFF\uFEFFa\n", bom: &no, want: "a\n", ending: "lf"},
		{name: "no-BOM file drops two marks", file: ptrTo("x\n"), content: "\uFEFF\uFEFFa\n", want: "a\n", ending: "lf"},
		{name: "UTF-16, bom false drops the text's mark", file: ptrTo("\xFF\xFE\xFF\xFEx\x00\n\x00"), content: "\uFEFFa\n", bom: &no, want: "a\n", ending: "lf"},
		{name: "no-BOM file, bom true", file: ptrTo("x\r\n"), content: "a\n", bom: &yes, want: "\xEF\xBB\xBFa\r\n", ending: "crlf"},
		{name: "UTF-16 stays UTF-16", file: ptrTo(u16le("x\r\n")), content: "hé\n", want: "\xFF\xFEh\x00\xE9\x00\r\x00\n\x00", ending: "crlf"},
		{name: "UTF-16, bom false is UTF-8", file: ptrTo(u16le("x\r\n")), content: "a\n", bom: &no, want: "a\r\n", ending: "crlf"},
		{name: "mixed, unchanged LF content", file: ptrTo("a\r\nb\nc\r\n"), content: "a\nb\nc\n", want: "a\r\nb\nc\r\n", ending: "mixed"},
		{name: "mixed, content as read gives it", file: ptrTo("a\r\nb\nc\r\n"), content: "a\r\nb\nc\r\n", want: "a\r\nb\nc\r\n", ending: "mixed"},
		{name: "mixed, changed line takes the replaced ending", file: ptrTo("a\r\nb\nc\r\n"), content: "a\nB\nc\n", want: "a\r\nB\nc\r\n", ending: "mixed"},
		{name: "mixed, new line takes the usual ending", file: ptrTo("a\r\nb\nc\r\n"), content: "a\nb\nnew\nc\n", want: "a\r\nb\nnew\r\nc\r\n", ending: "mixed"},
		{name: "mixed, final newline dropped", file: ptrTo("a\r\nb\nc\r\n"), content: "a\nb\nc", want: "a\r\nb\nc", ending: "mixed"},
		{name: "mixed, crlf asked", file: ptrTo("a\r\nb\n"), content: "a\nb\n", lineEnding: "crlf", want: "a\r\nb\r\n", ending: "crlf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var file *Style
			if tc.file != nil {
				st, ok := StyleOf([]byte(*tc.file), true)
				if !ok {
					t.Fatalf("StyleOf(%q) is not text", *tc.file)
				}
				file = &st
			}
			got, ws, err := Styled(tc.content, file, tc.lineEnding, tc.bom)
			marked := strings.HasPrefix(tc.want, "\xEF\xBB\xBF") || strings.HasPrefix(tc.want, "\xFF\xFE") || strings.HasPrefix(tc.want, "\xFE\xFF")
			if err != nil || string(got) != tc.want || ws.LineEnding != tc.ending || ws.BOM != marked {
				t.Fatalf("got %q %+v %v, want %q %s", got, ws, err, tc.want, tc.ending)
			}
		})
	}
}

func ptrTo(s string) *string { return &s }

// styleOf: text or not, and a file read only in part is judged by whole
// lines of the part.
func TestStyleOf(t *testing.T) {
	for _, tc := range []struct {
		head     string
		whole    bool
		ok       bool
		crlf, lf int
	}{
		{"a\r\nb\n", true, true, 1, 1},
		{"a\r\nb\r", false, true, 1, 0},
		{"a\nb\r\nc\xE2\x82", false, true, 1, 1},
		{"a\x00b\n", true, false, 0, 0},
		{"\xFFa\n", true, false, 0, 0},
		{"\xFF\xFEa\x00\n\x00", true, true, 0, 1},
		{"\xFF\xFE\x00\xD8", true, false, 0, 0},
		{"", true, true, 0, 0},
	} {
		st, ok := StyleOf([]byte(tc.head), tc.whole)
		if ok != tc.ok || st.crlf != tc.crlf || st.lf != tc.lf {
			t.Errorf("StyleOf(%q, %v) = %+v, %v; want %d crlf, %d lf, %v", tc.head, tc.whole, st, ok, tc.crlf, tc.lf, tc.ok)
		}
	}
}

// TestStyledIn: text in the encoding the caller named, with the file's
// endings learnt in it, and a mark only where that encoding has one.
func TestStyledIn(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name, enc, file, content string
		bom                      *bool
		want, encoding           string
		ok                       bool
	}{
		{"new shift_jis file", "shift_jis", "", "新\n", nil, "\x90\x56\n", "shift_jis", true},
		{"a CRLF latin1 file", "latin1", "a\r\n", "é\n\u0081\n", nil, "\xe9\r\n\x81\r\n", "windows-1252", true},
		{"new utf-16be file, a mark asked", "utf-16be", "", "a", &yes, "\xfe\xff\x00a", "utf-16be", true},
		{"utf-16le file without a mark", "utf-16le", "a\x00\n\x00", "b\n", nil, "b\x00\n\x00", "utf-16le", true},
		{"utf-16le named, a big-endian mark", "utf-16le", "\xfe\xff\x00a", "b", nil, "\xfe\xff\x00b", "utf-16be", true},
		{"utf-8 named", "utf-8", "", "é", nil, "é", "", true},
		{"a mark in shift_jis", "shift_jis", "", "a", &yes, "", "", false},
	} {
		c, err := NamedEncoding(tc.enc, []byte(tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var file *Style
		if tc.file != "" {
			st, ok := StyleIn(c, []byte(tc.file), true)
			if !ok {
				t.Fatalf("%s: the file is not %s text", tc.name, tc.enc)
			}
			file = &st
		}
		got, ws, err := StyledIn(c, tc.content, file, "", tc.bom)
		if (err == nil) != tc.ok || tc.ok && (string(got) != tc.want || ws.Encoding != tc.encoding) {
			t.Errorf("%s: got %q %q, %v; want %q %q", tc.name, got, ws.Encoding, err, tc.want, tc.encoding)
		}
	}
}

// TestNamedEncodingWritesWhatItReads: every text a legacy multi-byte
// encoding decodes from one or two bytes can be written back in it, and
// reads back as that text. Shift_JIS decodes 0x80 to U+0080 (WHATWG),
// which x/text's encoder refuses: a file read with an 0x80 in it could
// not be written back; nor could Big5's 88 62, 88 64, 88 A3 and 88 A5,
// each two characters (Ê or ê and a combining mark).
func TestNamedEncodingWritesWhatItReads(t *testing.T) {
	for _, name := range []string{"shift_jis", "euc-jp", "euc-kr", "gbk", "gb18030", "big5"} {
		c, err := NamedEncoding(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for a := 1; a < 256; a++ {
			for b := 0; b < 256; b++ {
				raw := []byte{byte(a), byte(b)}
				if b == 0 {
					raw = raw[:1]
				}
				text, err := c.Decode(raw)
				if err != nil {
					continue
				}
				out, _, err := StyledIn(c, text, nil, "", nil)
				if err != nil {
					t.Errorf("%s: %x reads as %q, which cannot be written: %v", name, raw, text, err)
					continue
				}
				if back, err := c.Decode(out); err != nil || back != text {
					t.Errorf("%s: %x reads as %q, written %x reads as %q %v", name, raw, text, out, back, err)
				}
			}
		}
	}
}

// TestCheckEncodableRoundTrips: content whose bytes read back as other
// text is refused, naming the character, as one the encoding lacks is:
// x/text's GB18030 encoder writes U+E000 as bytes that read as U+F014,
// and ISO-2022-JP takes an ESC in the content as one of its escapes.
func TestCheckEncodableRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		enc, content string
		bad          rune // 0: written
		line, col    int
	}{
		{"gb18030", "a\ue000b\n", 0xE000, 1, 2},
		{"gb18030", "ok\n\u4e2d\ue864\n", 0xE864, 2, 2},
		{"gb18030", "\u4e2d\ufffd\U0001F600\ue76c\n", 0, 0, 0},
		{"iso-2022-jp", "tab\x1b$BF|\x1b(B end\n", 0x1B, 1, 4},
		{"iso-2022-jp", "a\x1bb\n", 0x1B, 1, 2},
		{"iso-2022-jp", "\u65e5\u672c a\x0e\x0f\n", 0, 0, 0},
		{"big5", "x\n\u00ca\u0304 ok\n", 0, 0, 0},
		{"latin1", "caf\u00e9 \u65e5\n", 0x65E5, 1, 6},
	} {
		c, err := NamedEncoding(tc.enc, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = c.CheckEncodable(tc.content)
		if tc.bad == 0 {
			if err != nil {
				t.Errorf("%s %q: %v", tc.enc, tc.content, err)
			}
			continue
		}
		e := fault.AsError(err)
		if e == nil || e.Code != fault.CodeInvalidArgument || e.Details["line"] != tc.line || e.Details["column"] != tc.col ||
			!strings.Contains(e.Message, fmt.Sprintf("U+%04X", tc.bad)) {
			t.Errorf("%s %q: %v, want INVALID_ARGUMENT on U+%04X at %d:%d", tc.enc, tc.content, err, tc.bad, tc.line, tc.col)
		}
	}
}

// TestBig5PairsAcrossChunks: a pair cut by the end of the encoder's input
// chunk is still written as its two bytes (transform.String hands the
// encoder 4 KiB at a time), and Ê alone is still 88 66.
func TestBig5PairsAcrossChunks(t *testing.T) {
	c, err := NamedEncoding("big5", nil)
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("\u00ca\u0304x\u00ea\u030c\u00ca", 1000)
	want := strings.Repeat("\x88\x62x\x88\xa5\x88\x66", 1000)
	if err := c.CheckEncodable(content); err != nil {
		t.Fatal(err)
	}
	if got, _, err := StyledIn(c, content, nil, "", nil); err != nil || string(got) != want {
		t.Errorf("written as %.40q..., %v; want %.40q...", got, err, want)
	}
}

// FuzzWrittenReadsBack: text that CheckEncodable lets write --encoding
// write reads back as that text: the promise of read-then-write, and what
// x/text's GB18030 encoder broke for the Private Use Area (U+E000 written
// as the bytes of U+F014).
func FuzzWrittenReadsBack(f *testing.F) {
	for _, s := range []string{"a\ue000b", "tab\x1b$BF|\x1b(B end", "\u00ca\u0304x", "caf\u00e9 \u65e5\u672c", "\u0080", "\ufffd", "a\r\nb"} {
		f.Add(s)
	}
	names := []string{"gb18030", "gbk", "shift_jis", "euc-jp", "iso-2022-jp", "big5", "euc-kr", "windows-1252", "latin1", "koi8-r"}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, name := range names {
			c, err := NamedEncoding(name, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if c.CheckEncodable(s) != nil {
				continue
			}
			enc, err := c.encode(s)
			if err != nil {
				t.Fatalf("%s: %q passed CheckEncodable, and its encoding failed: %v", name, s, err)
			}
			if back, err := c.Decode(enc); err != nil || back != s {
				t.Fatalf("%s: %q passed CheckEncodable, written as % x, and reads back as %q (%v)", name, s, enc, back, err)
			}
		}
	})
}
