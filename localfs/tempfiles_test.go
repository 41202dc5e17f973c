package localfs

import (
	"strings"
	"testing"
)

// isTempName takes exactly the names tempName makes: the prefix and 16
// lower-case hex digits.
func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		tempName():                                true,
		tempPrefix + "0123456789abcdef":           true,
		tempPrefix + "09af09af09af09af":           true,
		tempPrefix + "0123456789abcde":            false, // 15 digits
		tempPrefix + "0123456789abcdef0":          false, // 17
		tempPrefix + "0123456789abcdeg":           false,
		tempPrefix + "0123456789abcde`":           false, // just below 'a'
		tempPrefix + "0123456789abcde/":           false, // just below '0'
		tempPrefix + "0123456789abcde:":           false, // just above '9'
		tempPrefix + "0123456789ABCDEF":           false,
		strings.TrimSuffix(tempPrefix, "-") + "x": false,
		"0123456789abcdef":                        false,
	} {
		if got := isTempName(name); got != want {
			t.Errorf("isTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A record's path may hold a line ending (a directory named so): split at
// the first, the rest of the path was taken for the temp file's identity,
// and the temp file of a dead writer there was never swept.
func TestRecordText(t *testing.T) {
	for _, tc := range []struct {
		record, path, id string
		ok               bool
	}{
		{"/tmp/d/.agentfs-tmp-1\n42:7", "/tmp/d/.agentfs-tmp-1", "42:7", true},
		{"/tmp/d/.agentfs-tmp-1\n", "/tmp/d/.agentfs-tmp-1", "", true},
		{"/tmp/a\nb/.agentfs-tmp-1\n42:7", "/tmp/a\nb/.agentfs-tmp-1", "42:7", true},
		{"/tmp/a\nb/.agentfs-tmp-1\n", "/tmp/a\nb/.agentfs-tmp-1", "", true},
		{"/tmp/d/.agentfs-tmp-1", "", "", false},
		{"rel\n42:7", "rel", "42:7", false},
	} {
		path, id, ok := recordText([]byte(tc.record))
		if path != tc.path || id != tc.id || ok != tc.ok {
			t.Errorf("record %q: %q %q %v, want %q %q %v", tc.record, path, id, ok, tc.path, tc.id, tc.ok)
		}
	}
}
