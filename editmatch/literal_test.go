package editmatch

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestLiteralSpans: the openers the scan reads, and those it does not
// (see literalSpans).
func TestLiteralSpans(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       [][2]int
	}{
		{"heredoc", "cat <<EOF\n  a\nEOF\nexit 1", [][2]int{{1, 2}}},
		{"quoted, spaced", "cat << 'END'\na\nEND\ncat <<\"X\"\nb\nX", [][2]int{{1, 2}, {4, 5}}},
		{"backslashed", "cat <<\\EOF\na\nEOF", [][2]int{{1, 2}}},
		{"two on a line, in order", "cat <<A <<B\na\nA\nb\nB\nx", [][2]int{{1, 4}}},
		{"<<- ends after tabs", "cat <<-EOF\n\ta\n\tEOF\nx", [][2]int{{1, 2}}},
		{"<< ends only at column 0 without -", "cat <<EOF\na\n\tEOF\nEOF\nx", [][2]int{{1, 3}}},
		{"an indented terminator ends none", "cat <<EOF\na\n  EOF", nil},
		{"a shift: no terminator", "y = 1 << n\nz = x <<k\n  k", nil},
		{"<<~, and <<< before more of its line (a here-string)", "a = <<~EOF\n  x\nEOF\ncat <<<EOF >out\nEOF", nil},
		{"a digit is no word", "x <<2\n2", nil},
		{"triple quotes", "s = \"\"\"\na\n  b\n\"\"\"\nx", [][2]int{{1, 3}}},
		{"closed on its line", "s = '''a'''\nx\n'''", nil},
		{"the closing line's rest opens another", "a = '''\nx\n''' + '''\ny\n'''", [][2]int{{1, 2}, {3, 4}}},
		{"never closed", "s = \"\"\"\na", nil},
		{"a raw string", "s := `\na\n`\nx", [][2]int{{1, 2}}},
		{"a tagged template, return", "q = sql`\na\n`\nreturn `\nb\n`", [][2]int{{1, 2}, {4, 5}}},
		{"a Markdown fence", "```go\na\n```", nil},
		{"inline code spans", "use `a` and (`b`)\nx\n`", nil},
		{"a backtick starting a line (a quasiquote)", "  `(a ,b)\nx\n  `(c)", nil},
		{"after a word and a space", "see `x\ny` here", nil},
		{"quotes after a heredoc are not read", "cat <<EOF \"\"\"\na\nEOF\nb\n\"\"\"", [][2]int{{1, 2}}},
		// An opener in a string closed on its line, or in a comment,
		// opens none: read as one, it left the code up to the next
		// docstring unshifted (an IndentationError, exit 0).
		{"triple quotes in a string", "if s.startswith('\"\"\"'):\n    s = s[3:]\nreturn s\ndef h():\n    \"\"\"H.\"\"\"", nil},
		{"''' in a string, escaped quotes", "q = \"\\\"'''\"\nx\n'''", nil},
		{"triple quotes in a # comment", "    # strip the \"\"\" quotes\n    s = s.strip()\n\"\"\"", nil},
		{"a backtick in a // comment", "// e.g. x := `\ny\nz := `a`", nil},
		{"a heredoc in a # comment", "# cat <<EOF\nx\nEOF", nil},
		{"a heredoc in quotes", "echo 'cat <<EOF'\nx\nEOF", nil},
		{"# and // that are no comment", "n=${#a} <<EOF\nx\nEOF\nu = \"http://h\" + `\ny\n`", [][2]int{{1, 2}, {4, 5}}},
		{"an unclosed quote is a character", "it's <<EOF\nx\nEOF", [][2]int{{1, 2}}},
		{"a quoted word, then an opener", "f(\"a\", \"\"\"\nx\n\"\"\")", [][2]int{{1, 2}}},
		// PHP here- and nowdocs: <<< and a word that ends the line; the
		// terminator may be indented (PHP 7.3) and followed by ; , ) ] .
		{"PHP heredoc", "$s = <<<EOT\n  a\nEOT;\nx", [][2]int{{1, 2}}},
		{"PHP quoted, spaced, indented terminator", "f(<<<\"A\"\n  a\n  A);\n$t = <<< 'B'\nb\n    B\nx", [][2]int{{1, 2}, {4, 5}}},
		{"PHP body line that starts with the word", "$s = <<<EOT\nEOTS\nEOT is\nEOT . 'x';\nx", [][2]int{{1, 3}}},
		{"here-strings: <<< not ending its line", "cat <<< \"$x\"\nx\n\"\ny=$(tr a b <<< foo)\nfoo\nkernel<<<g, b>>>(p);\ng", nil},
		{"a here-string word, then a line that assigns it", "read x <<< y\ny=1\ny = 2", nil},
		// C++ raw strings: R"delim( to )delim", u8R, uR, UR, LR.
		{"C++ raw string", "auto s = R\"(\n  a \"q\" )\n)\";\nx", [][2]int{{1, 2}}},
		{"C++ raw string, delimiter, prefix", "auto s = u8R\"sql(SELECT\n  )\"\n  x\n)sql\";\ny = LR\"(a)\" + R\"x(b)x\";\nz", [][2]int{{1, 3}}},
		{"C++ raw strings closed on their line", "a = R\"(//)\" + R\"--(x)\")--\";\nb\n)\"", nil},
		{"R\" as a name or no raw string", "FOOR\"(\"\nx\n)\"\nR\"a b(\"\nc\n)a b\"\nR\"x\"\nd", nil},
		{"R\"( that an ordinary string's reading closes (Python)", "p = R\"(\" + r\"\\d\"\nq = \"a)\"", nil},
		// Rust raw strings: r"..", r#".."#, br, cr.
		{"Rust raw string", "let s = r\"\n  a\\\n\";\nx", [][2]int{{1, 2}}},
		{"Rust raw string, hashes, prefix", "let s = br##\"\n  \"# \"\n\"##;\nx", [][2]int{{1, 2}}},
		{"Rust raw string closed on its line", "let s = r#\"a\"b\"#; let t = \"\"\"\nx\n\"\"\"", [][2]int{{1, 2}}},
		{"Python r\" closed on its line, r\"\"\" a triple", "p = re.compile(r\"\\d\")\nx\n\"\ns = r\"\"\"\n  y\n\"\"\"", [][2]int{{4, 5}}},
		{"r\" after a name", "bar\"\nx\n\"", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := literalSpans(strings.Split(tc.text, "\n")); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("literalSpans(%q) = %v; want %v", tc.text, got, tc.want)
			}
		})
	}
}

// TestLiteralSpansExported: LiteralSpans is literalSpans, nil at once
// for lines that can open none.
func TestLiteralSpansExported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  [][2]int
	}{
		{"a here-document", []string{"    cat <<EOF", "usage", "EOF", "    exit 1"}, [][2]int{{1, 2}}},
		{"a string", []string{"    s = \"\"\"Doc.", "", "more", "    \"\"\""}, [][2]int{{1, 3}}},
		// A docstring's indentation is none of its value: it is shifted
		// with its code (left as given, a method's ended left of it).
		{"a docstring", []string{"    \"\"\"Doc.", "", "more", "    \"\"\""}, nil},
		{"a raw docstring, then a string", []string{"    r\"\"\"Doc.", "more", "\"\"\"", "s = '''", "x", "'''"}, [][2]int{{4, 5}}},
		{"none opened", []string{"    x = 1 << n", "    y"}, nil},
		{"nothing to scan", []string{"    x = 1", "    y"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LiteralSpans(tc.lines); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("LiteralSpans(%q) = %v; want %v", tc.lines, got, tc.want)
			}
		})
	}
}

// BenchmarkAsGivenLines: the scan is linear in newText, a shift on every
// line included (each looks its terminator up once).
func BenchmarkAsGivenLines(b *testing.B) {
	text := strings.Repeat("    std::cout << x << y;\n    s = \"\"\"\n    a\n\"\"\"\n\tx\n", 5000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		asGivenLines("", text, nil)
	}
}

// BenchmarkRawOpeners: raw strings left open on their lines, each closed
// by a closer of its own (R"d1(, R"d2(, r#", r##"), that none closes: the
// lines are read once for all their closers (20 ms for these 40000 lines,
// where each closer's own scan of them took 24 s).
func BenchmarkRawOpeners(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "    x = R\"d%d(\n    y = r%s\"\n", i, strings.Repeat("#", i%200+1))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		asGivenLines("", text, nil)
	}
}

// TestDangles: lines that open a triple-quoted or backtick string they do
// not close (matched inside a literal opened above them, its closer read
// as an opener), and lines that do not.
func TestDangles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  bool
	}{
		{"a closer, then code", []string{"    two\"\"\".strip()", "    return s"}, true},
		{"a docstring's closer", []string{"    \"\"\"", "    return s"}, true},
		{"a template's closer", []string{"  b`;", "return s"}, true},
		{"closed", []string{"s = '''", "a", "'''"}, false},
		{"closed on its line, a fence", []string{"s = \"\"\"a\"\"\"", "```"}, false},
		{"a here-document and a raw string unclosed", []string{"cat <<EOF", "a", "s := R\"(", "t := r#\""}, false},
		{"nothing to scan", []string{"x = 1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Dangles(tc.lines); got != tc.want {
				t.Fatalf("Dangles(%q) = %v; want %v", tc.lines, got, tc.want)
			}
		})
	}
}
