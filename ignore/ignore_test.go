package ignore

import "testing"

// TestExcludesTrailingDoubleStar: an exclude that ends with /** leaves out
// what is below what it names, as in an ignore file, rg -g '!x/**' and fd
// -E: doublestar's /** also matched nothing at all, so that --exclude
// '*/**' left out every file at the top and the answer was empty.
func TestExcludesTrailingDoubleStar(t *testing.T) {
	for _, c := range []struct {
		glob, rel   string
		isDir, want bool
	}{
		{"*/**", "a.go", false, false},
		{"*/**", "src", true, false},
		{"*/**", "src/a.go", false, true},
		{"*/**", "src/sub/a.go", false, true},
		{".*/**", ".env", false, false},
		{".*/**", ".hidden/x", false, true},
		{"src/**", "src", true, false},
		{"src/**", "src/a", false, true},
		{"src/**", "src/sub/b", false, true},
		{"x/**/z/**", "x/y/z", true, false},
		{"x/**/z/**", "x/y/z/f", false, true},
		{"src/**/", "src", true, false},
		{"src/**/", "src/sub", true, true},
		{"**", "a.go", false, true},
		{"**/**", "a.go", false, true},
		{"./**", "a.go", false, true},
		{`src/\**`, "src/*", false, true},
		{`src/\**`, "src/x", false, false},
		{"a/**/b", "a/b", false, true},
	} {
		if got := NewExcludes([]string{c.glob}).Match(c.rel, lastName(c.rel), c.isDir); got != c.want {
			t.Errorf("exclude %q on %q (dir %v) = %v, want %v", c.glob, c.rel, c.isDir, got, c.want)
		}
	}
}

func lastName(rel string) string {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			return rel[i+1:]
		}
	}
	return rel
}

func TestBelowOnlyEscapedSlash(t *testing.T) {
	for g, want := range map[string]string{"a/**": "a/*/**", `a\/**`: `a\/**`, `abc\/**`: `abc\/**`, `a\\/**`: `a\\/*/**`, "**": "**", "a/**/b": "a/**/b"} {
		if got := BelowOnly(g); got != want {
			t.Errorf("BelowOnly(%q) = %q, want %q", g, got, want)
		}
	}
}
