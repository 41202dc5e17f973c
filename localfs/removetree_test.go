package localfs

import "testing"

// join builds rm -r's display paths: either side may be empty.
func TestJoin(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""},
		{"", "b", "b"},
		{"a", "", "a"},
		{"a", "b/c", "a/b/c"},
	} {
		if got := join(tc.a, tc.b); got != tc.want {
			t.Errorf("join(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
