package editmatch

import (
	"strings"
	"testing"
)

// FuzzLiteralSpans: the scan of any text never panics, and its spans are
// ranges of the text's lines, none before the first line (the opener's
// is before each), in order and apart; LiteralSpans is the same scan;
// an oldText that dangles leaves no line as given.
func FuzzLiteralSpans(f *testing.F) {
	for _, s := range []string{
		"cat <<EOF\n  a\nEOF\nexit 1", "cat <<A <<B\na\nA\nb\nB\nx", "cat <<-EOF\n\ta\n\tEOF",
		"s = \"\"\"\na\n\"\"\"", "a = '''\nx\n''' + '''\ny\n'''", "s := `\na\n`", "q = sql`\na\n`",
		"```go\na\n```", "use `a` and (`b`)\nx\n`", "x <<", "<<'", "<<\"\"\n", "\"\"\"", "=`\n`", "",
		"\n\n", "cat <<EOF \"\"\"\na\nEOF\nb\n\"\"\"",
		"$s = <<<EOT\n  a\n  EOT;\nx", "<<<'A'\nA", "<<<\"\"\n", "x <<< y\ny;", "R\"(\na\n)\"", "u8R\"d(\n)d\"",
		"R\"(\" + x\n)\"", "R\"", "r#\"\n\"#", "br\"\n\"", "r\"\"\"\na\n\"\"\"", "#\"", "r##\"a\"#\n\"##",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Split(text, "\n")
		spans := literalSpans(lines)
		prev := 0 // the first line a span may start at
		for _, sp := range spans {
			if sp[0] < prev+1 || sp[0] > sp[1] || sp[1] >= len(lines) {
				t.Fatalf("literalSpans(%q) = %v: %v is out of range or order", text, spans, sp)
			}
			prev = sp[1]
		}
		if got := LiteralSpans(lines); len(got) != len(spans) {
			t.Fatalf("LiteralSpans(%q) = %v, literalSpans %v", text, got, spans)
		}
		given := givenLines(lines, nil)
		if given != nil && len(given) != len(lines) {
			t.Fatalf("givenLines: %d marks for %d lines", len(given), len(lines))
		}
		// Lines that dangle leave nothing as given, as oldText.
		if Dangles(lines) && asGivenLines(text, text, nil) != nil {
			t.Fatalf("asGivenLines(%q) with itself as oldText, which dangles: %v", text, given)
		}
	})
}
