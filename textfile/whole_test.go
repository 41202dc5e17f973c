package textfile

import (
	"bytes"
	"testing"
)

// A whole file decodes to the text edit changes, and that text encodes
// back to the very bytes; what edit cannot change losslessly does not
// decode.
func TestDecodeWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		ok    bool
		text  string
		utf16 bool
	}{
		{"utf-8", []byte("a\nb\n"), true, "a\nb\n", false},
		{"utf-8 with its mark", []byte("\xEF\xBB\xBFa\r\n"), true, "a\r\n", false},
		{"utf-16le", []byte("\xFF\xFEa\x00\r\x00\n\x00\xE9\x00"), true, "a\r\né", true},
		{"utf-16be", []byte("\xFE\xFF\x00a\x00\n"), true, "a\n", true},
		{"utf-16 surrogate pair", []byte("\xFF\xFE\x3D\xD8\x00\xDE"), true, "😀", true},
		{"utf-8 with a NUL", []byte("a\x00b"), false, "", false},
		{"invalid utf-8", []byte("a\xFFb"), false, "", false},
		{"utf-16 of odd length", []byte("\xFF\xFEa\x00b"), false, "", false},
		{"utf-16 with a NUL", []byte("\xFF\xFEa\x00\x00\x00"), false, "", false},
		{"utf-16 with a lone surrogate", []byte("\xFF\xFE\x3D\xD8a\x00"), false, "", false},
		{"utf-16 without a mark", []byte("a\x00b\x00"), false, "", false},
	} {
		w, ok := DecodeWhole(tc.data)
		if ok != tc.ok || w.Text != tc.text || (ok && w.UTF16() != tc.utf16) {
			t.Errorf("%s: ok %v text %q utf16 %v, want %v %q %v", tc.name, ok, w.Text, w.UTF16(), tc.ok, tc.text, tc.utf16)
			continue
		}
		if !ok {
			continue
		}
		back, err := w.Encode(w.Text)
		if err != nil || !bytes.Equal(back, tc.data) {
			t.Errorf("%s: encodes back to %q, %v; want the bytes read", tc.name, back, err)
		}
	}
}

// TestNULIn: the NUL that alone makes a file binary to edit, at its byte
// in the file and its line; none for a file that is not text even
// without it.
func TestNULIn(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		at, line   int
		utf16, ok  bool
	}{
		{"text", "a\nb\n", 0, 0, false, false},
		{"UTF-8, line 2", "a\nb\x00c\n", 3, 2, false, true},
		{"UTF-8 with its mark", "\xEF\xBB\xBF\x00", 3, 1, false, true},
		{"not UTF-8 either", "caf\xe9\x00", 0, 0, false, false},
		{"UTF-16LE, line 2", "\xFF\xFEa\x00\n\x00\x00\x00", 6, 2, true, true},
		{"UTF-16BE, line 1", "\xFE\xFF\x00a\x00\x00", 4, 1, true, true},
		{"UTF-16LE, a NUL byte in a character", "\xFF\xFE\x00a", 0, 0, false, false},
		{"UTF-16LE, an unpaired surrogate too", "\xFF\xFE\x00\x00\x00\xd8", 0, 0, false, false},
	} {
		at, line, utf16, ok := NULIn([]byte(tc.data))
		if at != tc.at || line != tc.line || utf16 != tc.utf16 || ok != tc.ok {
			t.Errorf("%s: got %d %d %v %v; want %d %d %v %v", tc.name, at, line, utf16, ok, tc.at, tc.line, tc.utf16, tc.ok)
		}
	}
}
