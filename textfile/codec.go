// Package textfile turns the bytes of a text file into UTF-8 text and back:
// it recognises what a file is (text, image, PDF, binary) and its encoding
// (byte-order marks, UTF-16, the WHATWG legacy encodings), decodes lines
// without ever repairing them silently, and writes new content in an
// existing file's style (its byte-order mark, encoding and line endings).
// read, write, edit, apply-patch, replace and grep share it so that they
// agree on what text is; it knows nothing of backends or requests.
package textfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"github.com/gabriel-vasile/mimetype"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// BinarySample is the prefix of a UTF-8 file (after its byte-order mark)
// that a NUL makes binary, as ripgrep checks its first buffer: grep, read,
// replace, the index and a write's style all tell text from binary so.
const BinarySample = 64 << 10

// BinaryStart reports whether a UTF-8 text starting with b (after its
// byte-order mark) is binary: a NUL in its sample.
func BinaryStart(b []byte) bool { return bytes.IndexByte(b[:min(len(b), BinarySample)], 0) >= 0 }

// SampleLen is how many bytes from the start of a file in c BinaryHead
// needs: its mark and the bytes that may decode to the first BinarySample
// bytes of UTF-8, at least one per code unit.
func (c Codec) SampleLen() int { return len(c.bom) + c.unit*BinarySample }

// BinaryHead reports whether a text file in c (UTF-8, or UTF-16 from its
// mark) whose first bytes, mark included, are head (SampleLen of them, or
// the whole file) is binary as grep has it: a NUL in the first
// BinarySample bytes of its text after the mark, decoded to UTF-8 for
// UTF-16, whose U+0000 is that NUL.
func (c Codec) BinaryHead(head []byte) bool {
	body := head[min(len(c.bom), len(head)):]
	if c.unit == 1 {
		return BinaryStart(body)
	}
	// n counts the bytes of UTF-8 the units before i decode to: an
	// unpaired surrogate decodes to U+FFFD, three.
	for i, n := 0, 0; i+1 < len(body) && n < BinarySample; i += 2 {
		switch u := c.unitAt(body, i); {
		case u == 0:
			return true
		case u < 0x80:
			n++
		case u < 0x800:
			n += 2
		case highSurrogate(u) && i+3 < len(body) && lowSurrogate(c.unitAt(body, i+2)):
			n, i = n+4, i+2
		default:
			n += 3
		}
	}
	return false
}

// SniffBytes is the prefix Classify needs to classify a file whose
// extension does not say what it is (mimetype's own default limit).
const SniffBytes = 3072

// Codec is how the bytes of a text file become UTF-8 lines. Lines are split
// on the raw newline unit, so byte offsets stay offsets into the file: every
// supported encoding but UTF-16 is ASCII-compatible and never has 0x0A inside
// a character.
type Codec struct {
	name string
	// unit is the width of one code unit: 1, or 2 for UTF-16.
	unit int
	// bigEndian orders a UTF-16 unit.
	bigEndian bool
	// bom is the byte-order mark the file starts with (not content), or nil.
	bom []byte
	// dec decodes to UTF-8; nil means the bytes are UTF-8 already and are
	// only validated, never repaired.
	dec encoding.Encoding
}

// Name is the encoding's WHATWG name: utf-8, utf-16le, shift_jis...
func (c Codec) Name() string { return c.name }

// Unit is the width in bytes of one code unit: 1, or 2 for UTF-16.
func (c Codec) Unit() int { return c.unit }

// BigEndian reports whether a UTF-16 code unit is big-endian.
func (c Codec) BigEndian() bool { return c.bigEndian }

// BOMLen is the length of the byte-order mark the file starts with, 0 for
// none.
func (c Codec) BOMLen() int { return len(c.bom) }

// IsUTF8 reports whether the bytes are UTF-8 already: they are only
// validated, never transformed.
func (c Codec) IsUTF8() bool { return c.dec == nil }

// Stateful reports whether what a byte means depends on the escapes
// before it in its line (ISO-2022-JP's shifts): a part of a line cannot
// be decoded apart from the line's start.
func (c Codec) Stateful() bool { return c.name == "iso-2022-jp" }

// DecodingReader is r decoded to UTF-8; r itself for UTF-8.
func (c Codec) DecodingReader(r io.Reader) io.Reader {
	if c.dec == nil {
		return r
	}
	return transform.NewReader(r, c.dec.NewDecoder())
}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

func utf16Codec(bigEndian bool, bom []byte) Codec {
	c := Codec{name: "utf-16le", unit: 2, bom: bom,
		dec: unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)}
	if bigEndian {
		c.name, c.bigEndian = "utf-16be", true
		c.dec = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	}
	return c
}

// ByBOM recognises a byte-order mark at the start of a file.
func ByBOM(prefix []byte) (Codec, bool) {
	switch {
	case bytes.HasPrefix(prefix, bomUTF8):
		return Codec{name: "utf-8", unit: 1, bom: bomUTF8}, true
	case bytes.HasPrefix(prefix, bomUTF16LE):
		return utf16Codec(false, bomUTF16LE), true
	case bytes.HasPrefix(prefix, bomUTF16BE):
		return utf16Codec(true, bomUTF16BE), true
	}
	return Codec{}, false
}

// namedCodec is the codec of an encoding the caller named (WHATWG names and
// labels: latin1, windows-1252, shift_jis, utf-16le...). A byte-order mark
// of that very encoding is still recognised and left out of the content;
// a UTF-16 name on a file with the other UTF-16 mark takes the mark's.
func namedCodec(name string, prefix []byte) (Codec, error) {
	enc, err := htmlindex.Get(name)
	if err != nil {
		return Codec{}, fault.InvalidArgument("unknown encoding %q.", name).
			WithHint("name a WHATWG encoding, for example utf-8, latin1, windows-1252, shift_jis, euc-jp, gbk, utf-16le")
	}
	canon, _ := htmlindex.Name(enc)
	switch canon {
	case "utf-8":
		c := Codec{name: "utf-8", unit: 1}
		if bytes.HasPrefix(prefix, bomUTF8) {
			c.bom = bomUTF8
		}
		return c, nil
	case "utf-16le", "utf-16be":
		if c, ok := ByBOM(prefix); ok && c.unit == 2 {
			// The file's mark tells its byte order, as WHATWG's decode
			// has it: utf-16 (little-endian by label) on a big-endian
			// file with its mark gave U+FFFE and mojibake, bom false.
			return c, nil
		}
		big := canon == "utf-16be"
		var bom []byte
		if b := map[bool][]byte{false: bomUTF16LE, true: bomUTF16BE}[big]; bytes.HasPrefix(prefix, b) {
			bom = b
		}
		return utf16Codec(big, bom), nil
	case "replacement", "x-user-defined":
		return Codec{}, fault.InvalidArgument("encoding %q cannot decode text losslessly.", name).
			WithHint("name the encoding the file was written in, for example latin1 or shift_jis")
	}
	switch canon {
	case "windows-1252":
		enc = whatwg1252{enc}
	case "shift_jis":
		enc = newReadBack(enc, shiftJISBack)
	case "big5":
		enc = newReadBack(enc, big5Back)
	}
	return Codec{name: canon, unit: 1, dec: enc}, nil
}

// whatwg1252 is windows-1252 as WHATWG decodes it, the encoding that the
// labels latin1, iso-8859-1 and ascii name too: x/text's charmap leaves
// 0x81, 0x8D, 0x8F, 0x90 and 0x9D undefined (U+FFFD, which Decode takes
// for an invalid byte, so that a Latin-1 file holding one could not be
// read), where WHATWG and ISO-8859-1 decode them to the C1 controls of the
// same number. Every byte decodes.
type whatwg1252 struct{ encoding.Encoding }

func (whatwg1252) NewDecoder() *encoding.Decoder {
	return &encoding.Decoder{Transformer: decoder1252{}}
}

type decoder1252 struct{ transform.NopResetter }

func (decoder1252) Transform(dst, src []byte, _ bool) (nDst, nSrc int, err error) {
	for ; nSrc < len(src); nSrc++ {
		r := charmap.Windows1252.DecodeByte(src[nSrc])
		if r == utf8.RuneError {
			r = rune(src[nSrc])
		}
		if nDst+utf8.RuneLen(r) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += utf8.EncodeRune(dst[nDst:], r)
	}
	return nDst, nSrc, nil
}

// CutUTF8BOM splits data into its UTF-8 byte-order mark (empty when it has
// none) and the content after it.
func CutUTF8BOM(data []byte) (bom, body []byte) {
	if bytes.HasPrefix(data, bomUTF8) {
		return data[:len(bomUTF8)], data[len(bomUTF8):]
	}
	return data[:0], data
}

// IsUTF8Text reports whether data is text that edit, apply-patch and replace
// change losslessly: UTF-8 without a NUL byte (which grep takes for binary).
func IsUTF8Text(data []byte) bool {
	return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

// Kind is what a file is to read: text lines, inline media, or only a
// description of a binary.
type Kind string

// The kinds of file.
const (
	KindText   Kind = "text"
	KindImage  Kind = "image"
	KindPDF    Kind = "pdf"
	KindBinary Kind = "binary"
)

// mediaByExt classifies the extensions that need no sniffing, once the
// file's first bytes are their format's magic (a text file named x.jpg is
// text: a model API refuses it as an image); SVG is source text, so it is
// deliberately not here.
var mediaByExt = map[string]struct {
	kind  Kind
	mime  string
	magic func([]byte) bool
}{
	".png":  {KindImage, "image/png", isPNG},
	".jpg":  {KindImage, "image/jpeg", isJPEG},
	".jpeg": {KindImage, "image/jpeg", isJPEG},
	".gif":  {KindImage, "image/gif", isGIF},
	".webp": {KindImage, "image/webp", isWebP},
	".pdf":  {KindPDF, "application/pdf", isPDF},
}

func isPNG(b []byte) bool  { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }
func isJPEG(b []byte) bool { return bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}) }
func isGIF(b []byte) bool {
	return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
}
func isWebP(b []byte) bool {
	return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
}

// isPDF allows what readers allow: the header within the first KiB.
func isPDF(b []byte) bool { return bytes.Contains(b[:min(len(b), 1024)], []byte("%PDF-")) }

// mediaOf is the media an extension names, when the prefix has its magic.
func mediaOf(name string, prefix []byte) (Kind, string, bool) {
	m, ok := mediaByExt[strings.ToLower(path.Ext(name))]
	if !ok || !m.magic(prefix) {
		return "", "", false
	}
	return m.kind, m.mime, true
}

// ServedHead is the most of a file's start ServedHeadType looks at: the
// sample in which UTF-16 text with its mark is binary, the longest.
const ServedHead = 2 + 2*BinarySample

// ServedHeadLen is how many of a file's first bytes ServedHeadType needs
// for it, given prefix, its first SniffBytes (or the whole file): the
// sample in which read takes its text for binary, or prefix alone for a
// file that is not text.
func ServedHeadLen(name string, prefix []byte) int {
	if cls, err := Classify(name, prefix, "", true); err == nil && cls.Kind == KindText {
		return max(len(prefix), cls.Codec.SampleLen())
	}
	return len(prefix)
}

// ServedHeadType is the Content-Type a file whose first bytes are head
// (ServedHeadLen of them, or the whole file) is published and served
// with: ServedType of its first SniffBytes, but application/octet-stream
// for text that read takes for binary, a NUL in the first BinarySample
// bytes of its text, past the bytes sniffed too.
func ServedHeadType(name string, head []byte, notUTF8 bool) string {
	prefix := head[:min(len(head), SniffBytes)]
	if cls, err := Classify(name, prefix, "", true); err == nil && cls.Kind == KindText &&
		cls.Codec.BinaryHead(head[:min(len(head), cls.Codec.SampleLen())]) {
		return "application/octet-stream"
	}
	return ServedType(name, prefix, notUTF8)
}

// ServedType is the Content-Type a file is served with (publish's links):
// the media type its extension names when it is one read knows, else what
// the magic of its prefix (up to SniffBytes) says, but text where read
// takes a media's magic for text, with a charset for text: utf-8 unless
// notUTF8 says the whole file is not UTF-8, or one the file declares (its
// byte-order mark, an HTML or XML declaration), never a guess.
func ServedType(name string, prefix []byte, notUTF8 bool) string {
	if _, mime, ok := mediaOf(name, prefix); ok {
		return mime
	}
	m := mimetype.Detect(prefix)
	t := m.String()
	if k, _ := sniffedKind(t, prefix); k == KindText {
		t = "text/plain; charset=utf-8" // as read has it
	}
	if active(m) && !namedBy(m, strings.ToLower(path.Ext(name))) {
		// A browser runs the scripts of a page (HTML, SVG, XML) on the
		// origin that serves it: a notes.md or log.txt that starts with
		// markup is shown as the text its name says it is.
		t = "text/plain; charset=utf-8"
	}
	if notUTF8 {
		// Sniffed from the prefix, UTF-8 there: the rest is not, and its
		// charset is unknown (served as UTF-8, a browser showed U+FFFD).
		t = strings.TrimSuffix(t, "; charset=utf-8")
	}
	// The sniffer's guess for any bytes not UTF-8 (EUC-JP, GBK): served
	// with it, a browser showed mojibake and could not detect.
	for _, guess := range []string{"; charset=iso-8859-1", "; charset=windows-1252"} {
		t = strings.TrimSuffix(t, guess)
	}
	return t
}

// active reports whether a browser shown m may run scripts in it: HTML,
// SVG, XHTML, and XML (which may hold either).
func active(m *mimetype.MIME) bool {
	if m.Is("text/html") || m.Is("image/svg+xml") || m.Is("application/xhtml+xml") {
		return true
	}
	for ; m != nil; m = m.Parent() {
		if m.Is("text/xml") {
			return true
		}
	}
	return false
}

// namedBy reports whether the extension ext (lower case, with its dot)
// names the type m.
func namedBy(m *mimetype.MIME, ext string) bool {
	switch {
	case ext == "":
		return false
	case ext == m.Extension():
		return true
	case m.Is("text/html"):
		return ext == ".htm" || ext == ".xhtml"
	}
	return ext == ".xml" && !m.Is("image/svg+xml")
}

// mediaByMIME are the sniffed types read returns as inline data.
var mediaByMIME = map[string]Kind{
	"image/png": KindImage, "image/jpeg": KindImage, "image/gif": KindImage,
	"image/webp": KindImage, "application/pdf": KindPDF,
}

// Class is the verdict on a file before its content is read.
type Class struct {
	Kind Kind
	MIME string
	// Codec decodes a file of KindText.
	Codec Codec
}

// ErrNotText is a prefix that is neither UTF-8 nor binary: text in an
// encoding that must be named.
var ErrNotText = errors.New("not UTF-8 text")

// Classify decides what a file is from its name and the prefix of its bytes
// (up to SniffBytes; all of a shorter file). encName is the caller's
// encoding, which overrides sniffing for anything not known as media.
// Without sniff (a continuation of a file already read as text) the costly
// magic-number detection is skipped.
func Classify(name string, prefix []byte, encName string, sniff bool) (Class, error) {
	if kind, mime, ok := mediaOf(name, prefix); ok {
		return Class{Kind: kind, MIME: mime}, nil
	}
	if encName != "" {
		c, err := namedCodec(encName, prefix)
		return Class{Kind: KindText, MIME: "text/plain", Codec: c}, err
	}
	if c, ok := ByBOM(prefix); ok {
		if c.unit == 2 && hasNULUnit(prefix[c.BOMLen():]) {
			// U+0000 in UTF-16 (UTF-32LE's mark starts as UTF-16LE's, its
			// characters then U+0000 every other unit): binary, as a NUL
			// byte makes UTF-8 text, and as grep, replace and edit have it.
			return Class{Kind: KindBinary, MIME: "application/octet-stream"}, nil
		}
		return Class{Kind: KindText, MIME: "text/plain", Codec: c}, nil
	}
	mime := "application/octet-stream"
	if sniff {
		mime, _, _ = strings.Cut(mimetype.Detect(prefix).String(), ";")
	}
	switch k, ok := sniffedKind(mime, prefix); {
	case ok && k != KindText:
		return Class{Kind: k, MIME: mime}, nil
	case ok:
		mime = "text/plain"
	}
	if bytes.IndexByte(prefix, 0) >= 0 {
		return Class{Kind: KindBinary, MIME: mime}, nil
	}
	if !ValidPrefix(prefix, len(prefix) == SniffBytes) {
		if mime == "text/plain" || mime == "application/octet-stream" {
			return Class{}, ErrNotText
		}
		return Class{Kind: KindBinary, MIME: mime}, nil
	}
	return Class{Kind: KindText, MIME: mime, Codec: Codec{name: "utf-8", unit: 1}}, nil
}

// sniffedKind is what a file whose name does not name its format is, when
// the magic of its prefix says the media type mime that read returns as
// data (ok false for any other mime): that media, unless the prefix is
// UTF-8 text throughout, without a NUL, and not a PDF's first line.
// notes.txt that begins "GIF89a is..." or "%PDF-1.7 is..." is the text
// grep and edit see (it came back as base64 media, which a model API
// refuses), and a link serves it as text.
func sniffedKind(mime string, prefix []byte) (Kind, bool) {
	k, ok := mediaByMIME[mime]
	if !ok {
		return "", false
	}
	if bytes.IndexByte(prefix, 0) >= 0 || !ValidPrefix(prefix, len(prefix) == SniffBytes) || pdfHeader.Match(prefix) {
		return k, true
	}
	return KindText, true
}

// pdfHeader is a PDF's first line, which may be all of its text there
// is in its first KiB (the binary comment after it is optional): a PDF,
// not a note that begins "%PDF-1.7 is".
var pdfHeader = regexp.MustCompile(`\A%PDF-[0-9]\.[0-9][\r\n]`)

// hasNULUnit reports whether b, UTF-16 after its mark, holds U+0000.
func hasNULUnit(b []byte) bool {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return true
		}
	}
	return false
}

// ValidPrefix reports whether b is UTF-8, allowing a character cut by the
// end of the prefix when more of the file follows.
func ValidPrefix(b []byte, more bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if !more {
		return false
	}
	for cut := 1; cut < utf8.UTFMax && cut <= len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return true
		}
	}
	return false
}

// Decode turns one raw line (terminator removed) into UTF-8. Input that is
// not valid in the codec is an error, never shown as U+FFFD: x/text's
// decoders replace silently, so a U+FFFD the raw bytes did not spell out
// means an invalid sequence.
func (c Codec) Decode(raw []byte) (string, error) {
	if c.dec == nil {
		if !utf8.Valid(raw) {
			return "", ErrNotText
		}
		return string(raw), nil
	}
	out, _, err := transform.Bytes(c.dec.NewDecoder(), raw)
	if err != nil || bytes.Count(out, []byte("\uFFFD")) > c.literalFFFD(raw) {
		return "", ErrNotText
	}
	return string(out), nil
}

// literalFFFD counts the U+FFFD characters raw really holds; of the legacy
// encodings only GB18030 can spell one, as 84 31 A4 37.
func (c Codec) literalFFFD(raw []byte) int {
	if c.unit == 2 {
		n := 0
		for i := 0; i+1 < len(raw); i += 2 {
			if c.unitAt(raw, i) == 0xFFFD {
				n++
			}
		}
		return n
	}
	return bytes.Count(raw, []byte{0x84, 0x31, 0xA4, 0x37})
}

// unitAt is the UTF-16 code unit at b[i:i+2], in c's byte order.
func (c Codec) unitAt(b []byte, i int) uint16 {
	if c.bigEndian {
		return binary.BigEndian.Uint16(b[i:])
	}
	return binary.LittleEndian.Uint16(b[i:])
}

func highSurrogate(u uint16) bool { return u >= 0xD800 && u < 0xDC00 }
func lowSurrogate(u uint16) bool  { return u >= 0xDC00 && u < 0xE000 }

// Boundary returns the largest k' <= k at which raw can be cut without
// splitting a character.
func (c Codec) Boundary(raw []byte, k int) int {
	k = min(k, len(raw))
	switch {
	case c.unit == 2:
		k &^= 1
		if k >= 2 && highSurrogate(c.unitAt(raw, k-2)) {
			k -= 2 // keep a surrogate pair together
		}
		return k
	case c.dec == nil:
		start := k
		for start > 0 && k-start < utf8.UTFMax {
			start--
			if utf8.RuneStart(raw[start]) {
				break
			}
		}
		if start < k && !utf8.FullRune(raw[start:k]) {
			return start
		}
		return k
	}
	// A multi-byte legacy encoding: its decoder knows where characters end,
	// and leaves a sequence cut at k unconsumed when not told it is the end.
	dst := make([]byte, 4*k+16)
	_, n, _ := c.dec.NewDecoder().Transform(dst, raw[:k], false)
	return n
}

// multiByte names the legacy encodings whose trail bytes can be lead or
// ASCII bytes too: a decoder started inside a character reads on without
// noticing, so only decoding from before it tells where characters start.
var multiByte = map[string]bool{"shift_jis": true, "euc-jp": true, "gbk": true, "gb18030": true, "big5": true, "euc-kr": true}

// syncBelow bounds the bytes that no multi-byte character holds in any of
// them: their lead bytes are 0x81 and up, their trail bytes 0x40 and up
// (EUC-JP's 0xA1, EUC-KR's 0x41), and GB18030's four-byte digits 0x30 to
// 0x39. A newline is one: a character starts after each.
const syncBelow = 0x30

// StartsCharAt reports whether byte off of r, text in c, starts a
// character. In a multi-byte legacy encoding it decodes from the last byte
// before off that no character holds (at worst the line's start), reading
// only the bytes from there to off; in UTF-16 (off even) it reads the
// units before and at off, which must not be a surrogate pair. For UTF-8
// (its caller looks at the byte at off) and the one-byte encodings it
// reads nothing.
func (c Codec) StartsCharAt(r io.ReaderAt, off int64) (bool, error) {
	if c.unit == 2 {
		var b [4]byte
		if off < 2 {
			return true, nil
		}
		n, err := r.ReadAt(b[:], off-2)
		if n < len(b) && err != io.EOF {
			return false, err
		}
		return n < len(b) || !highSurrogate(c.unitAt(b[:], 0)) || !lowSurrogate(c.unitAt(b[:], 2)), nil
	}
	if !multiByte[c.name] {
		return true, nil
	}
	const chunk = 4096
	buf := make([]byte, chunk+4)
	from, err := syncBefore(r, off, buf[:chunk])
	if err != nil {
		return false, err
	}
	dec := c.dec.NewDecoder()
	// No character takes more than 4 bytes of UTF-8 for each of its bytes.
	dst := make([]byte, 4*len(buf))
	var carry []byte
	for pos := from; pos < off; {
		n := copy(buf, carry)
		m := int(min(chunk, off-pos))
		if err := readAt(r, buf[n:n+m], pos); err != nil {
			return false, err
		}
		pos += int64(m)
		// Not at the end: a character cut at off is left unconsumed.
		_, used, _ := dec.Transform(dst, buf[:n+m], false)
		carry = append([]byte(nil), buf[used:n+m]...)
	}
	return len(carry) == 0, nil
}

// syncBefore is the offset just after the last byte before off below
// syncBelow, or 0; it reads back from off a chunk (len(buf)) at a time.
func syncBefore(r io.ReaderAt, off int64, buf []byte) (int64, error) {
	for end := off; end > 0; {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if err := readAt(r, b, start); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] < syncBelow {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// readAt fills b from r at off.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	_, err := io.ReadFull(io.NewSectionReader(r, off, int64(len(b))), b)
	return err
}

// Newline is the raw newline unit of the codec, and CR the carriage return.
func (c Codec) Newline() []byte { return c.encodeASCII('\n') }

// CR is the raw carriage return unit of the codec.
func (c Codec) CR() []byte { return c.encodeASCII('\r') }

func (c Codec) encodeASCII(b byte) []byte {
	switch {
	case c.unit == 1:
		return []byte{b}
	case c.bigEndian:
		return []byte{0, b}
	}
	return []byte{b, 0}
}
