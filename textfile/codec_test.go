package textfile

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, enc string
		kind              Kind
		err               bool
	}{
		{"a.go", "package main\n", "", KindText, false},
		{"a.PNG", "\x89PNG\r\n\x1a\n\x00", "", KindImage, false},
		{"a.png", "not even a png", "", KindText, false},
		{"x.jpg", "plain text\n", "", KindText, false},
		{"x.jpg", "\xff\xd8\xff\xe0\x00\x10JFIF", "", KindImage, false},
		{"y.pdf", "plain\n", "", KindText, false},
		{"y.pdf", "%PDF-1.7\n", "", KindPDF, false},
		{"z.webp", "RIFF\x00\x00\x00\x00WEBPVP8 ", "", KindImage, false},
		{"x.svg", "<svg/>", "", KindText, false},
		{"x", "\x00\x01\x02", "", KindBinary, false},
		{"x", "caf\xe9 au lait", "", "", true},
		{"x", "caf\xe9 au lait", "latin1", KindText, false},
		{"x", "\xfe\xff\x00h\x00i", "utf-16", KindText, false},
		{"x", "a" + strings.Repeat("é", SniffBytes/2-1) + "\xc3", "", KindText, false},
		{"x", "\xff" + strings.Repeat("a", SniffBytes-1), "", "", true},
		{"x", "\xFF\xFEa\x00", "", KindText, false},
		// U+0000 in UTF-16 is binary, as a NUL in UTF-8 is (grep, replace
		// and edit took it so; read showed it as text), and UTF-32LE too.
		{"x", "\xFF\xFEa\x00\x00\x00b\x00", "", KindBinary, false},
		{"x", "\xFE\xFF\x00a\x00\x00", "", KindBinary, false},
		{"x", "\xFF\xFE\x00\x00a\x00\x00\x00", "", KindBinary, false},
		{"x", "\xFF\xFE\x00a\x00b", "", KindText, false},
		{"x", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "", KindImage, false},
		{"x", "\x1f\x8b\x08\xff\x01", "", KindBinary, false},
		// A text that begins with a format's magic, under a name that
		// does not name the format, is text; the format's own bytes are
		// not text, and stay media.
		{"notes.txt", "GIF89a is the header of a GIF file.\nSecond line.\n", "", KindText, false},
		{"pdf-notes.md", "%PDF-1.7 is the first line of every PDF.\n", "", KindText, false},
		{"x", "GIF89a\x01\x00\x01\x00\x80\x00\x00", "", KindImage, false},
		{"x", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "", KindPDF, false},
		{"x", "%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "", KindPDF, false},
		{"x", "%PDF-1.4\r\n" + strings.Repeat("% a comment\r\n", 300), "", KindPDF, false},
	} {
		c, err := Classify(tc.name, []byte(tc.prefix), tc.enc, true)
		if (err != nil) != tc.err || !tc.err && c.Kind != tc.kind {
			t.Errorf("Classify(%q, %q): %v, %v", tc.name, tc.prefix, c.Kind, err)
		}
	}
}

func TestDecodeNeverReplacesSilently(t *testing.T) {
	le := func(units ...uint16) []byte {
		var b []byte
		for _, u := range units {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	sjis, _ := namedCodec("shift_jis", nil)
	latin1, _ := namedCodec("latin1", nil)
	for _, tc := range []struct {
		c    Codec
		raw  []byte
		want string
		ok   bool
	}{
		{utf16Codec(false, nil), le('a', 0xFFFD), "a\uFFFD", true},
		{utf16Codec(false, nil), le('a', 0xD800, 'b'), "", false},
		{utf16Codec(false, nil), []byte{'a', 0, 'b'}, "", false},
		{sjis, []byte("\x93\xfa"), "日", true},
		{sjis, []byte("\x93"), "", false},
		{utf16Codec(true, nil), []byte{0, 'a', 0xFF, 0xFD}, "a\uFFFD", true},
		{utf16Codec(true, nil), []byte{0xD8, 0x00, 0, 'b'}, "", false},
		{Codec{name: "utf-8", unit: 1}, []byte("\xff"), "", false},
		// Every byte is Latin-1: the five x/text leaves undefined are the
		// C1 controls of their number, as WHATWG decodes them.
		{latin1, []byte("caf\x81\x8d\x8f\x90\x9d\x80\xe9"), "caf\u0081\u008d\u008f\u0090\u009d\u20ac\u00e9", true},
	} {
		got, err := tc.c.Decode(tc.raw)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s decode %q = %q, %v", tc.c.name, tc.raw, got, err)
		}
	}
}

func TestBoundary(t *testing.T) {
	sjis, _ := namedCodec("shift_jis", nil)
	for _, tc := range []struct {
		c    Codec
		raw  string
		k    int
		want int
	}{
		{Codec{unit: 1}, "aé", 2, 1},
		{Codec{unit: 1}, "aé", 3, 3},
		{Codec{unit: 1}, "a😀", 4, 1},
		{Codec{unit: 1}, "a\xff", 2, 2}, // invalid is left to decode to refuse
		{utf16Codec(false, nil), "a\x00\x3d\xd8\x00\xde", 5, 2},
		{utf16Codec(false, nil), "a\x00\x3d\xd8\x00\xde", 6, 6},
		{utf16Codec(true, nil), "\x00a\xd8\x3d\xde\x00", 4, 2},
		{sjis, "a\x93\xfa", 2, 1},
		{sjis, "a\x93\xfa", 3, 3},
	} {
		if got := tc.c.Boundary([]byte(tc.raw), tc.k); got != tc.want {
			t.Errorf("%s boundary(%q, %d) = %d, want %d", tc.c.name, tc.raw, tc.k, got, tc.want)
		}
	}
}

// A file is served as HTML, SVG or XML, whose scripts a browser runs on
// the serving origin, only when its name says it is one: a Markdown or
// text file that starts with markup is served as text.
func TestServedType(t *testing.T) {
	const html = "<!-- generated -->\n# Report\n<script>fetch('/x')</script>\n"
	const svg = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`
	const rss = `<?xml version="1.0"?><rss version="2.0"></rss>`
	tests := []struct {
		name, content string
		notUTF8       bool
		want          string
	}{
		{"r.md", html, false, "text/plain; charset=utf-8"},
		{"x.txt", "<script>alert(1)</script>\n", false, "text/plain; charset=utf-8"},
		{"README", "<html><body>x</body></html>", false, "text/plain; charset=utf-8"},
		{"page.html", html, false, "text/html; charset=utf-8"},
		{"PAGE.HTM", html, false, "text/html; charset=utf-8"},
		{"notes.md", html, true, "text/plain"},
		{"logo.svg", svg, false, "image/svg+xml"},
		{"logo.txt", svg, false, "text/plain; charset=utf-8"},
		{"feed.rss", rss, false, "application/rss+xml"},
		{"feed.xml", rss, false, "application/rss+xml"},
		{"feed.log", rss, false, "text/plain; charset=utf-8"},
		{"plain.md", "# Title\n\ntext\n", false, "text/plain; charset=utf-8"},
		{"data.json", `{"a": 1}`, false, "application/json"},
		// The charset a sniffer guesses for bytes that are not UTF-8 is
		// no charset of the file's: served with it (EUC-JP or GBK as
		// iso-8859-1), a browser showed mojibake and could not detect.
		// One the file declares (its mark, a meta tag) is kept.
		{"eucjp.txt", "\xc6\xfc\xcb\xdc\xb8\xec\n", true, "text/plain"},
		{"l1.txt", "caf\xe9\n", true, "text/plain"},
		{"cp1252.txt", "\x93quoted\x94\n", true, "text/plain"},
		{"u16.txt", "\xff\xfeh\x00i\x00\n\x00", true, "text/plain; charset=utf-16le"},
		{"sj.html", "<html><head><meta charset=\"shift_jis\"></head>\x82\xa0</html>", true, "text/html; charset=shift_jis"},
		// UTF-8 whole, its prefix cut inside a character.
		{"cut.txt", ("a" + strings.Repeat("é", SniffBytes/2))[:SniffBytes], false, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		if got := ServedType(tt.name, []byte(tt.content), tt.notUTF8); got != tt.want {
			t.Errorf("ServedType(%q, %.20q) = %q; want %q", tt.name, tt.content, got, tt.want)
		}
	}
}

// A link serves a file as the media read takes it for, and as text what
// read takes for text: notes.txt that begins "GIF89a is" was served as
// image/gif, a broken image, where read gave its text.
func TestServedTypeAgreesWithRead(t *testing.T) {
	gif := "GIF89a\x01\x00\x01\x00\x00\x00\x00;"
	for _, tc := range []struct{ name, prefix string }{
		{"notes.txt", "GIF89a is a format"},
		{"notes", "%PDF-1.7 is a version"},
		{"notes.txt", "\x89PNG\r\n\x1a\n as text"},
		{"x.gif", "GIF89a is a format"},
		{"x.gif", gif},
		{"notes.txt", gif},
		{"doc", "%PDF-1.4\n"},
		{"doc", "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"},
		{"pic", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"},
	} {
		c, err := Classify(tc.name, []byte(tc.prefix), "", true)
		if err != nil {
			t.Fatalf("Classify(%q, %q): %v", tc.name, tc.prefix, err)
		}
		served := ServedType(tc.name, []byte(tc.prefix), false)
		_, media := mediaByMIME[served]
		if (c.Kind == KindText) == media || media && served != c.MIME {
			t.Errorf("%s %q: read says %s %s, served as %s", tc.name, tc.prefix, c.Kind, c.MIME, served)
		}
	}
}

// A UTF-16 file's mark tells its byte order whatever the UTF-16 label
// named: utf-16 (little-endian) on a big-endian file decoded mojibake.
func TestNamedUTF16FollowsItsMark(t *testing.T) {
	for _, tc := range []struct{ name, prefix, want string }{
		{"utf-16", "\xfe\xff\x00h", "utf-16be"},
		{"utf-16be", "\xff\xfeh\x00", "utf-16le"},
		{"utf-16le", "h\x00i\x00", "utf-16le"},
	} {
		c, err := Classify("x", []byte(tc.prefix), tc.name, true)
		if err != nil || c.Codec.Name() != tc.want {
			t.Errorf("%s on %q: %s, %v; want %s", tc.name, tc.prefix, c.Codec.Name(), err, tc.want)
		}
	}
}

// lowReader records the lowest offset read from it.
type lowReader struct {
	*strings.Reader
	low int64
}

func (r *lowReader) ReadAt(b []byte, off int64) (int, error) {
	r.low = min(r.low, off)
	return r.Reader.ReadAt(b, off)
}

// StartsCharAt decodes from the last byte before off that no character
// holds, and reads no more than a chunk of its backward scan before it.
func TestStartsCharAt(t *testing.T) {
	sjis, _ := namedCodec("shift_jis", nil)
	gb, _ := namedCodec("gb18030", nil)
	u16le, u16be := utf16Codec(false, nil), utf16Codec(true, nil)
	so := strings.Repeat("\x83\x5c", 3000) // ソ, whose trail byte is '\'
	for _, tc := range []struct {
		c    Codec
		raw  string
		off  int64
		want bool
		low  int64 // the lowest offset it may read: a chunk before the byte
	}{
		{sjis, so, 5000, true, 0},
		{sjis, so, 5001, false, 0},
		{sjis, "\x83\n" + so, 5002, true, 0},
		{sjis, "\x83\n" + so, 5003, false, 0},
		{sjis, so + so + " " + so, 12001 + 5000, true, 12001 - 4096},
		{sjis, so + so + " " + so, 12001 + 4999, false, 12001 - 4096},
		{gb, "ab\x81\x30\x81\x30\x81\x30", 6, true, 0},
		{gb, "ab\x81\x30\x81\x30\x81\x30", 5, false, 0},
		{gb, "ab\x81\x30\x81\x30\x81\x30", 4, false, 0},
		{Codec{name: "utf-8", unit: 1}, "a\xc3\xa9", 2, true, 3},
		// U+1F600 in UTF-16LE after "a": its two halves, then "b".
		{u16le, "a\x00\x3d\xd8\x00\xde" + "b\x00", 2, true, 0},
		{u16le, "a\x00\x3d\xd8\x00\xde" + "b\x00", 4, false, 0},
		{u16le, "a\x00\x3d\xd8\x00\xde" + "b\x00", 6, true, 0},
		{u16be, "\x00a\xd8\x3d\xde\x00", 4, false, 0},
	} {
		r := &lowReader{strings.NewReader(tc.raw), int64(len(tc.raw))}
		got, err := tc.c.StartsCharAt(r, tc.off)
		if err != nil || got != tc.want || r.low < tc.low {
			t.Errorf("%s %.8q at %d: %v, %v, read from %d; want %v, from %d on", tc.c.name, tc.raw, tc.off, got, err, r.low, tc.want, tc.low)
		}
	}
}
