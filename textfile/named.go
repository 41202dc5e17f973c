package textfile

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// NamedEncoding is the codec of the encoding a caller names, as read's
// --encoding takes it, for a file that begins with prefix (nil for none):
// write --encoding writes text in it, so that what read --encoding gave
// goes back as the same bytes.
func NamedEncoding(name string, prefix []byte) (Codec, error) {
	return namedCodec(name, prefix)
}

// CheckEncodable refuses content that c cannot hold, naming its first
// such character and where it is in content (INVALID_ARGUMENT): one c has
// no bytes for, or one whose bytes read back as other text (x/text's
// GB18030 encoder writes U+E000 as the bytes of U+F014; an ESC in
// ISO-2022-JP content is read as an escape).
func (c Codec) CheckEncodable(content string) error {
	if c.dec == nil || c.unit == 2 {
		return nil // UTF-8 and UTF-16 hold every character
	}
	enc, done, err := transform.String(c.dec.NewEncoder(), content)
	at := -1
	if err == nil {
		back, _, err := transform.String(c.dec.NewDecoder(), enc)
		if err == nil && back == content {
			return nil
		}
		// The character whose bytes did not read back as it.
		at = min(commonPrefix(back, content), len(content)-1)
		for at > 0 && !utf8.RuneStart(content[at]) {
			at--
		}
	}
	line, col := 1, 1
	for i, r := range content {
		// What the encoder took went well: the character refused is at
		// done or after.
		if i == at || at < 0 && i >= done && !c.encodes(r) {
			return fault.InvalidArgument("the content's character %q (U+%04X) at line %d, column %d cannot be written in %s.", r, r, line, col, c.name).
				WithDetail("line", line).WithDetail("column", col).WithDetail("offset", i).
				WithHint("leave the encoding out to write the file as UTF-8, or spell that character otherwise; nothing was written")
		}
		if col++; r == '\n' {
			line, col = line+1, 1
		}
	}
	return nil
}

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// encodes reports whether c has bytes for r.
func (c Codec) encodes(r rune) bool {
	_, err := c.encode(string(r))
	return err == nil
}

// encode is text in c, without a byte-order mark.
func (c Codec) encode(text string) ([]byte, error) {
	switch {
	case c.dec == nil:
		return []byte(text), nil
	case c.unit == 2:
		enc, err := encodeUTF16(text, c)
		if err != nil {
			return nil, err
		}
		return enc, nil
	}
	out, _, err := transform.Bytes(c.dec.NewEncoder(), []byte(text))
	return out, err
}

// mark is the byte-order mark a file in c begins with when it has one:
// its own, else its encoding's.
func (c Codec) mark() ([]byte, error) {
	switch {
	case c.bom != nil:
		return c.bom, nil
	case c.dec == nil:
		return bomUTF8, nil
	case c.unit == 2 && c.bigEndian:
		return bomUTF16BE, nil
	case c.unit == 2:
		return bomUTF16LE, nil
	}
	return nil, fault.InvalidArgument("%s has no byte-order mark.", c.name).
		WithHint("leave bom out, or pass --bom=false")
}

// errUnencodable is a character an encoding has no bytes for.
var errUnencodable = errors.New("the character cannot be encoded")

func (whatwg1252) NewEncoder() *encoding.Encoder {
	return &encoding.Encoder{Transformer: encoder1252{}}
}

// encoder1252 encodes as whatwg1252 decodes: the C1 controls x/text's
// charmap leaves out go back to their own byte.
type encoder1252 struct{ transform.NopResetter }

func (encoder1252) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		if !atEOF && !utf8.FullRune(src[nSrc:]) {
			return nDst, nSrc, transform.ErrShortSrc
		}
		r, n := utf8.DecodeRune(src[nSrc:])
		b, ok := charmap.Windows1252.EncodeRune(r)
		if strings.ContainsRune("\u0081\u008D\u008F\u0090\u009D", r) {
			b, ok = byte(r), true
		}
		if !ok || r == utf8.RuneError && n == 1 {
			return nDst, nSrc, errUnencodable
		}
		if nDst >= len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		dst[nDst] = b
		nDst, nSrc = nDst+1, nSrc+n
	}
	return nDst, nSrc, nil
}

// readBack is an encoding whose encoder writes the texts of pairs as
// their bytes, as WHATWG's decoder reads those bytes, where x/text's
// encoder has none for them: a file read with them could not be written
// back.
type readBack struct {
	encoding.Encoding
	pairs []textBytes
	// leads holds the first byte of each text of pairs.
	leads *[256]bool
}

func newReadBack(e encoding.Encoding, pairs []textBytes) readBack {
	leads := new([256]bool)
	for _, p := range pairs {
		leads[p.text[0]] = true
	}
	return readBack{e, pairs, leads}
}

// textBytes is a text and the bytes it is written as.
type textBytes struct {
	text  string
	bytes []byte
}

// shiftJISBack: WHATWG decodes the byte 0x80 to U+0080.
var shiftJISBack = []textBytes{{"\u0080", []byte{0x80}}}

// big5Back: WHATWG decodes these four HKSCS pairs to two characters each.
var big5Back = []textBytes{
	{"\u00CA\u0304", []byte{0x88, 0x62}},
	{"\u00CA\u030C", []byte{0x88, 0x64}},
	{"\u00EA\u0304", []byte{0x88, 0xA3}},
	{"\u00EA\u030C", []byte{0x88, 0xA5}},
}

func (e readBack) NewEncoder() *encoding.Encoder {
	return &encoding.Encoder{Transformer: readBackEncoder{e.Encoding.NewEncoder(), e}}
}

type readBackEncoder struct {
	inner *encoding.Encoder
	readBack
}

func (e readBackEncoder) Reset() { e.inner.Reset() }

// Transform hands the text between two texts of pairs to x/text's
// encoder, which keeps no state between characters in Shift_JIS and Big5.
func (e readBackEncoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		i, p, held := e.next(src[nSrc:])
		if i != 0 {
			part, eof := src[nSrc:], atEOF
			switch {
			case i > 0:
				part, eof = part[:i], true
			case !atEOF && held > 0:
				part, eof = part[:len(part)-held], true
			}
			d, s, err := e.inner.Transform(dst[nDst:], part, eof)
			nDst, nSrc = nDst+d, nSrc+s
			switch {
			case err != nil:
				return nDst, nSrc, err
			case i < 0 && nSrc < len(src):
				return nDst, nSrc, transform.ErrShortSrc // the start of a text of pairs
			case i < 0:
				return nDst, nSrc, nil
			}
			continue
		}
		if nDst+len(p.bytes) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += copy(dst[nDst:], p.bytes)
		nSrc += len(p.text)
	}
	return nDst, nSrc, nil
}

// next is where in src the first text of pairs starts, and its pair; -1
// for none, and then held is how many bytes at the end of src start one.
func (e readBackEncoder) next(src []byte) (at int, pair textBytes, held int) {
	for i, b := range src {
		if !e.leads[b] {
			continue
		}
		for _, p := range e.pairs {
			if b != p.text[0] {
				continue
			}
			rest := src[i:min(len(src), i+len(p.text))]
			switch {
			case string(rest) == p.text:
				return i, p, 0
			case held == 0 && len(rest) < len(p.text) && strings.HasPrefix(p.text, string(rest)):
				held = len(src) - i
			}
		}
	}
	return -1, textBytes{}, held
}
