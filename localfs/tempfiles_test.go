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
