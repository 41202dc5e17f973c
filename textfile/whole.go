package textfile

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Whole is a whole text file as edit changes it: the text after its
// byte-order mark, decoded when the mark declares UTF-16, so that an edit
// of a UTF-16 file (which read and grep decode, and write keeps) is an
// edit of its text, written back in its encoding.
type Whole struct {
	c Codec
	// Text is the file's content after its mark, in UTF-8.
	Text string
}

// DecodeWhole decodes data, a whole file: UTF-8 without a NUL (marked or
// not), or UTF-16 marked as such whose text holds no NUL either. ok is
// false for anything else, which edit cannot change losslessly.
func DecodeWhole(data []byte) (w Whole, ok bool) {
	c, marked := ByBOM(data)
	if !marked || c.unit == 1 {
		if !IsUTF8Text(data) {
			return Whole{}, false
		}
		bom, body := CutUTF8BOM(data)
		return Whole{c: Codec{name: "utf-8", unit: 1, bom: bom}, Text: string(body)}, true
	}
	text, err := c.Decode(data[len(c.bom):])
	if err != nil || strings.IndexByte(text, 0) >= 0 {
		return Whole{}, false
	}
	return Whole{c: c, Text: text}, true
}

// NULIn finds the NUL that alone keeps DecodeWhole from taking data for
// text: the first NUL byte of a UTF-8 file, or U+0000 of a marked UTF-16
// one, at its offset in the file and on its line (from 1). ok is false
// when data holds none, or is not text even without it.
func NULIn(data []byte) (at, line int, utf16 bool, ok bool) {
	c, marked := ByBOM(data)
	if !marked || c.unit == 1 {
		at = bytes.IndexByte(data, 0)
		if at < 0 || !utf8.Valid(data) {
			return 0, 0, false, false
		}
		return at, LineAt(data, at), false, true
	}
	if _, err := c.Decode(data[len(c.bom):]); err != nil {
		return 0, 0, false, false
	}
	for i := len(c.bom); i+1 < len(data); i += 2 {
		if c.unitAt(data, i) == 0 {
			return i, LineAt(data, i), true, true
		}
	}
	return 0, 0, false, false
}

// LineAt is the line (from 1) of a whole file that its byte at is on:
// one more than the newline units before it, in the encoding its
// byte-order mark names (UTF-8 for none).
func LineAt(whole []byte, at int) int {
	c, marked := ByBOM(whole)
	at = min(at, len(whole))
	if !marked || c.unit == 1 {
		return bytes.Count(whole[:at], []byte{'\n'}) + 1
	}
	line := 1
	for i := len(c.bom); i+1 < at; i += 2 {
		if c.unitAt(whole, i) == '\n' {
			line++
		}
	}
	return line
}

// UTF16 reports whether the file is UTF-16.
func (w Whole) UTF16() bool { return w.c.unit == 2 }

// Mark is the byte-order mark of a UTF-8 file, "" for none or for UTF-16
// (whose text a diff shows decoded).
func (w Whole) Mark() string {
	if w.UTF16() {
		return ""
	}
	return string(w.c.bom)
}

// Encode is text as the file holds it: its mark, then text in its
// encoding.
func (w Whole) Encode(text string) ([]byte, error) {
	if !w.UTF16() {
		return append(append([]byte{}, w.c.bom...), text...), nil
	}
	enc, err := encodeUTF16(text, w.c)
	if err != nil {
		return nil, err
	}
	return append(append([]byte{}, w.c.bom...), enc...), nil
}
