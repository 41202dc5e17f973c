package core

import "unicode/utf16"

// utf16Bytes is s in UTF-16, little-endian unless bigEndian, without a
// byte-order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

// UTF16Bytes is utf16Bytes, for the tests of package core_test.
var UTF16Bytes = utf16Bytes
