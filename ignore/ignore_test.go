package ignore

import (
	"slices"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

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

// TestExcludesBracedTrailingDoubleStar: a glob whose braces hold an
// alternative that ends the glob with /** matches as the union of the
// globs its braces stand for, as fd -g and rg -g take it: doublestar's
// /** there also matched no name, so that --exclude '{a/**,b/**}' left
// out the directories a and b themselves where a/** and b/** do not, and
// --include '{.*/**,b/**}' took the file .env.
func TestExcludesBracedTrailingDoubleStar(t *testing.T) {
	paths := []struct {
		rel   string
		isDir bool
	}{{"a", true}, {"a/x", false}, {"a/x/y", false}, {"b", true}, {"b/x", false}, {"c", true}, {"c/x", false},
		{".env", false}, {".h", true}, {".h/x", false}, {"x", true}, {"x/a", true}, {"x/a/y", false}, {"x/b", false},
		{"src", true}, {"src/}", true}, {"src/}/f", false}, {"d", false}, {"a/c", false}, {"ax", false}}
	// (A glob with a slash is matched on paths, each of the globs its
	// braces stand for included, as rg -g takes it: ./b is b as one.)
	for braced, union := range map[string][]string{
		"{a/**,b/**}":       {"a/**", "b/**"},
		"{a/**,b}":          {"a/**", "./b"},
		"x/{a/**,b}":        {"x/a/**", "x/b"},
		"{.*/**,b/**}":      {".*/**", "b/**"},
		"{*/**,c}":          {"*/**", "./c"},
		"{a,{b/**,c/**}}":   {"./a", "b/**", "c/**"},
		"{a/**,b}/**":       {"a/**/**", "b/**"},
		"{a/**,b/**}/c":     {"a/**/c", "b/**/c"},
		"{a/**,b/**}x":      {"a/**x", "b/**x"},
		"{src/[}]/**,b}":    {"src/[}]/**", "./b"},
		`{a/\**,b}`:         {`a/\**`, "./b"},
		"{x/{a,b/**},c/**}": {"x/a", "x/b/**", "c/**"},
		"{a/**,a/**/c}":     {"a/**", "a/**/c"},
	} {
		for _, p := range paths {
			want := false
			for _, g := range union {
				want = want || NewExcludes([]string{g}, "").Match(p.rel, lastName(p.rel), p.isDir)
			}
			if got := NewExcludes([]string{braced}, "").Match(p.rel, lastName(p.rel), p.isDir); got != want {
				t.Errorf("exclude %q on %q (dir %v) = %v, want %v as %q", braced, p.rel, p.isDir, got, want, union)
			}
		}
	}
}

// TestBelowOnly: only a /** that ends g, or an alternative of braces
// that end it, is rewritten; a literal comma or } outside braces ends
// nothing.
func TestBelowOnly(t *testing.T) {
	for g, want := range map[string]string{
		"a/**":            "a/*/**",
		"{a,b}/**":        "{a,b}/*/**",
		"{a/**,b/**}":     "{a/*/**,b/*/**}",
		"x/{a/**,b}":      "x/{a/*/**,b}",
		"{a/**,b}/c":      "{a/**,b}/c",
		"a/**,b":          "a/**,b",
		",,/**,":          ",,/**,",
		"a/**}":           "a/**}",
		`a\/**`:           `a\/**`,
		`a/\**`:           `a/\**`,
		"{[,}]/**,b}":     "{[,}]/*/**,b}",
		"**":              "**",
		"a/**/b":          "a/**/b",
		"{a/**/**,b}/**":  "{a/**/**,b}/*/**",
		"{x/{a,b/**},c}":  "{x/{a,b/*/**},c}",
		"{x/{a,b/**}y,c}": "{x/{a,b/**}y,c}",
	} {
		if got := BelowOnly(g); got != want {
			t.Errorf("BelowOnly(%q) = %q, want %q", g, got, want)
		}
	}
}

func TestAlternatives(t *testing.T) {
	for g, want := range map[string][]string{
		"{**/a/*.go,**/b/*.go}":   {"**/a/*.go", "**/b/*.go"},
		"{**/a/src/*.go,zz}":      {"**/a/src/*.go", "zz"},
		"{**/a,b}/*.go":           {"**/a/*.go", "b/*.go"},
		"{**/{a,b},c}/x":          {"**/{a,b}/x", "c/x"},
		"{[,}]/x,**/y}":           {"[,}]/x", "**/y"},
		`{**/a\,b,c}`:             {`**/a\,b`, "c"},
		`{a\,**/b,c}`:             {`{a\,**/b,c}`},
		"{a,b}/x":                 {"{a,b}/x"},
		"x/{**/a,b}":              {"x/{**/a,b}"},
		"**/x":                    {"**/x"},
		"{,**/}a/*.go":            {"a/*.go", "**/a/*.go"},
		"{,**/}/a":                {"{,**/}/a"},
		"{**/a}":                  {"**/a"},
		"{**/a,{b,c}}/d{e,f}":     {"**/a/d{e,f}", "{b,c}/d{e,f}"},
		"{**/a/*.go,b/**}/**/x.c": {"**/a/*.go/**/x.c", "b/**/**/x.c"},
		"{**/q,{**/a/*.go,zz}}":   {"**/q", "**/a/*.go", "zz"},
		"{x,{**/a,{b,**/c}}}/d":   {"x/d", "**/a/d", "b/d", "**/c/d"},
	} {
		if got := Alternatives(g); !slices.Equal(got, want) {
			t.Errorf("Alternatives(%q) = %q, want %q", g, got, want)
		}
	}
}

// TestExcludesLeadingAlternatives: an exclude that starts with braces,
// one alternative of which starts with **/, leaves out what each
// alternative names, the **/ one from the root: matched whole below
// the start, {**/src/*.go,zz} below src left src/main.go in.
func TestExcludesLeadingAlternatives(t *testing.T) {
	// So do braces nested in them, which stand for globs in turn, as
	// include and find's pattern take them: one level split, the nested
	// **/src/*.go was matched below the start, main.go left in.
	for _, g := range []string{"{**/src/*.go,zz}", "{**/q,{**/src/*.go,zz}}"} {
		x := NewExcludes([]string{g}, "src")
		for _, c := range []struct {
			rel  string
			want bool
		}{{"main.go", true}, {"x/src/a.go", true}, {"zz", true}, {"x/zz", false}, {"x/a.go", false}} {
			if got := x.Match(c.rel, lastName(c.rel), false); got != c.want {
				t.Errorf("%s below src, %s excluded: %v, want %v", g, c.rel, got, c.want)
			}
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

// FuzzAlternatives: the globs Alternatives splits a glob into match, taken
// together, what the glob matches, on the same path.
//
//	go test ./ignore -run '^$' -fuzz FuzzAlternatives
func FuzzAlternatives(f *testing.F) {
	f.Add("{**/a/*.go,zz}", "a/b.go")
	f.Add("{**/a,{b,c}}/d{e,f}", "c/de")
	f.Add(`{**/a\,b,c}`, "x/a,b")
	f.Add("{[,}]/x,**/y}", "}/x")
	f.Add("{,**/}a/*.go", "q/a/b.go")
	f.Add("{x,{**/a,{b,**/c}}}/d", "q/c/d")
	f.Fuzz(func(t *testing.T, g, p string) {
		if !doublestar.ValidatePattern(g) {
			return
		}
		alts := Alternatives(g)
		want := doublestar.MatchUnvalidated(g, p)
		got := slices.ContainsFunc(alts, func(a string) bool {
			if !doublestar.ValidatePattern(a) {
				t.Fatalf("Alternatives(%q) gave the invalid glob %q", g, a)
			}
			return doublestar.MatchUnvalidated(a, p)
		})
		if got != want {
			t.Fatalf("%q matches %q: %v; its alternatives %q: %v", g, p, want, alts, got)
		}
	})
}
