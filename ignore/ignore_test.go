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
		if got := NewExcludes([]string{c.glob}, "").Match(c.rel, lastName(c.rel), c.isDir); got != c.want {
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

// TestExcludesFromRoot: a glob that starts with **/ and names more than a
// name is matched against the path from the root, base/rel, as rg -g
// matches the path as given; one that names a name, or starts otherwise,
// against rel.
func TestExcludesFromRoot(t *testing.T) {
	for _, c := range []struct {
		glob, base, rel string
		isDir, want     bool
	}{
		{"**/src/*.go", "src", "main.go", false, true},
		{"**/src/*.go", "", "main.go", false, false},
		{"**/src/*.go", ".", "src/main.go", false, true},
		{"**/{src,lib}/*.go", "lib", "l.go", false, true},
		{"**/src/**", "src/x", "a.go", false, true},
		{"**/src/**", "src", "x", true, true},
		{"**/src/**", "", "src", true, false},
		{"**/a/src/*.go", "a/src", "z.go", false, true},
		{"**/a/src/*.go", "src", "z.go", false, false},
		{"**/src/x/", "src", "x", true, true},
		{"**/src/x/", "src", "x", false, false},
		{"**/src/*.go", "/abs/src", "main.go", false, true},
		{"**/src/*.go", "/", "src/main.go", false, true},
		{"**/src/*.go", "s3://bucket/p/src", "main.go", false, true},
		{"**/main.go", "src", "main.go", false, true},
		{"src/*.go", "src", "main.go", false, false},
		// A leading ./ anchors the glob at the start, **/ and all.
		{"./**/src/*.go", "src", "main.go", false, false},
		{"./**/src/*.go", "src", "x/src/main.go", false, true},
		{"./**/a/src/*.go", "a", "src/n.go", false, false},
	} {
		if got := NewExcludes([]string{c.glob}, c.base).Match(c.rel, lastName(c.rel), c.isDir); got != c.want {
			t.Errorf("exclude %q below %q on %q (dir %v) = %v, want %v", c.glob, c.base, c.rel, c.isDir, got, c.want)
		}
	}
}
