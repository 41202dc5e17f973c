package core

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentfs/agentfs/editmatch"
	"github.com/agentfs/agentfs/fault"
)

// TestReindentLeavesLiterals: re-indentation, at the indentation rung or
// for a one-line oldText found after a line's indentation, shifted every
// line of newText, the body of a here-document and its terminator too
// ("    EOF" ends none), and the inside of a triple-quoted or backtick
// string, whose value changed. Those lines are written as given, the
// others shifted as before; a literal that keeps a line of oldText
// (matched shifted, in the caller's frame) is shifted whole. A retry is
// alreadyApplied where the edit keeps oldText; where it replaces it, a
// retry changes nothing.
func TestReindentLeavesLiterals(t *testing.T) {
	const sh = "main() {\n    if [ -z \"$1\" ]; then\n        echo bad\n        exit 1\n    fi\n}\n"
	for _, tc := range []struct {
		name, src string
		ops       []EditOp
		want      string
		rung      string
		retried   bool // a retry is alreadyApplied; else it is refused or alreadyApplied, never applied
	}{
		// (a) the indentation rung.
		{"heredoc, indentation rung", sh, []EditOp{op("echo bad\nexit 1\n", "cat <<EOF\nusage: x\nEOF\nexit 1\n")},
			"main() {\n    if [ -z \"$1\" ]; then\n        cat <<EOF\nusage: x\nEOF\n        exit 1\n    fi\n}\n", editmatch.RungIndentation, false},
		{"heredoc added around, indentation rung", sh, []EditOp{op("  exit 1\n", "  cat <<EOF >&2\n  usage: x\nEOF\n  exit 1\n")},
			"main() {\n    if [ -z \"$1\" ]; then\n        echo bad\n        cat <<EOF >&2\n  usage: x\nEOF\n        exit 1\n    fi\n}\n", editmatch.RungIndentation, true},
		{"quoted delimiters, two on a line", sh, []EditOp{op("echo bad\nexit 1\n", "cat <<'A' - << \"B\"\n$x\nA\n$y\nB\nexit 1\n")},
			"main() {\n    if [ -z \"$1\" ]; then\n        cat <<'A' - << \"B\"\n$x\nA\n$y\nB\n        exit 1\n    fi\n}\n", editmatch.RungIndentation, false},
		{"<<- with tabs", "f() {\n\tif x; then\n\t\ty\n\tfi\n}\n", []EditOp{op("if x; then\n\ty\nfi\n", "if x; then\n\tcat <<-END\n\tbody\n\tEND\nfi\n")},
			"f() {\n\tif x; then\n\t\tcat <<-END\n\tbody\n\tEND\n\tfi\n}\n", editmatch.RungIndentation, false},
		{"Python triple quotes", "class A:\n    def f(self):\n        return 1\n", []EditOp{op("def f(self):\n    return 1\n", "def f(self):\n    s = \"\"\"\nline\n  two\n\"\"\"\n    return s\n")},
			"class A:\n    def f(self):\n        s = \"\"\"\nline\n  two\n\"\"\"\n        return s\n", editmatch.RungIndentation, false},
		{"''' closed before code", "class A:\n    def f(self):\n        return 1\n", []EditOp{op("def f(self):\n    return 1\n", "def f(self):\n    return '''a\n b\n'''.strip()\n")},
			"class A:\n    def f(self):\n        return '''a\n b\n'''.strip()\n", editmatch.RungIndentation, false},
		{"Go raw string", "func f() {\n\tif x {\n\t\treturn\n\t}\n}\n", []EditOp{op("if x {\n    return\n}\n", "if x {\n    fmt.Print(`a\n  b\n`)\n    return\n}\n")},
			"func f() {\n\tif x {\n\t\tfmt.Print(`a\n  b\n`)\n\t\treturn\n\t}\n}\n", editmatch.RungIndentation, false},
		{"a docstring kept of oldText: shifted whole", "class A:\n    def f(self):\n        \"\"\"Do x.\n\n        More.\n        \"\"\"\n        return 1\n",
			[]EditOp{op("def f(self):\n    \"\"\"Do x.\n\n    More.\n    \"\"\"\n    return 1\n", "def f(self):\n    \"\"\"Do x.\n\n    More text.\n    \"\"\"\n    return 1\n")},
			"class A:\n    def f(self):\n        \"\"\"Do x.\n\n        More text.\n        \"\"\"\n        return 1\n", editmatch.RungIndentation, false},
		// A docstring's indentation is none of its value: shifted with
		// its method (left as given, it ended 4 columns left of it).
		{"a docstring added: shifted", "class A:\n    def f(self):\n        return 1\n", []EditOp{op("def f(self):\n    return 1\n", "def f(self):\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n    return 1\n")},
			"class A:\n    def f(self):\n        \"\"\"Doc.\n\n        More.\n        \"\"\"\n        return 1\n", editmatch.RungIndentation, false},
		{"a shift operator: no heredoc", "int f() {\n    if (x) {\n        return 1;\n    }\n}\n", []EditOp{op("if (x) {\n    return 1;\n}\n", "if (x) {\n    y = 1 << n;\n    return y;\n}\n")},
			"int f() {\n    if (x) {\n        y = 1 << n;\n        return y;\n    }\n}\n", editmatch.RungIndentation, false},
		{"a Markdown fence: no raw string", "- item:\n\n    ```\n    a\n    ```\n", []EditOp{op("```\na\n```\n", "```\nb\n```\n")},
			"- item:\n\n    ```\n    b\n    ```\n", editmatch.RungIndentation, false},
		{"triple quotes in a string: no literal", "class A:\n    def f(self, s):\n        return s\n", []EditOp{op("def f(self, s):\n    return s\n", "def f(self, s):\n    if s.startswith('\"\"\"'):\n        s = s[3:]\n    return s.strip()\n\ndef h(self):\n    \"\"\"H.\"\"\"\n    return 2\n")},
			"class A:\n    def f(self, s):\n        if s.startswith('\"\"\"'):\n            s = s[3:]\n        return s.strip()\n\n    def h(self):\n        \"\"\"H.\"\"\"\n        return 2\n", editmatch.RungIndentation, false},
		// A PHP heredoc's body and terminator are left as given together:
		// PHP strips the terminator's indentation from each body line, and
		// one shifted at column 0 ends none before PHP 7.3.
		{"PHP heredoc", "<?php\nclass A {\n    function f() {\n        return 1;\n    }\n}\n", []EditOp{op("function f() {\n    return 1;\n}\n", "function f() {\n    $s = <<<EOT\n  body\nEOT;\n    return $s;\n}\n")},
			"<?php\nclass A {\n    function f() {\n        $s = <<<EOT\n  body\nEOT;\n        return $s;\n    }\n}\n", editmatch.RungIndentation, false},
		{"PHP nowdoc, indented terminator", "<?php\nclass A {\n    function f() {\n        return 1;\n    }\n}\n", []EditOp{op("function f() {\n    return 1;\n}\n", "function f() {\n    return f(<<<'EOT'\n        a\n          b\n        EOT, 2);\n}\n")},
			"<?php\nclass A {\n    function f() {\n        return f(<<<'EOT'\n        a\n          b\n        EOT, 2);\n    }\n}\n", editmatch.RungIndentation, false},
		{"a here-string: no heredoc", sh, []EditOp{op("echo bad\nexit 1\n", "read a b <<< \"$1\"\necho $a\nread x <<< y\ny=1\n")},
			"main() {\n    if [ -z \"$1\" ]; then\n        read a b <<< \"$1\"\n        echo $a\n        read x <<< y\n        y=1\n    fi\n}\n", editmatch.RungIndentation, false},
		{"C++ raw string", "int main() {\n    if (x) {\n        return 1;\n    }\n}\n", []EditOp{op("if (x) {\n    return 1;\n}\n", "if (x) {\n    auto s = u8R\"sql(\n  SELECT \"a\"\n)sql\";\n    return 1;\n}\n")},
			"int main() {\n    if (x) {\n        auto s = u8R\"sql(\n  SELECT \"a\"\n)sql\";\n        return 1;\n    }\n}\n", editmatch.RungIndentation, false},
		{"Rust raw strings", "fn main() {\n    if x {\n        return;\n    }\n}\n", []EditOp{op("if x {\n    return;\n}\n", "if x {\n    let s = r#\"\n  \"a\"\n\"#;\n    let t = r\"\n b\n\";\n    return;\n}\n")},
			"fn main() {\n    if x {\n        let s = r#\"\n  \"a\"\n\"#;\n        let t = r\"\n b\n\";\n        return;\n    }\n}\n", editmatch.RungIndentation, false},
		{"Python raw strings: shifted", "class A:\n    def f(self):\n        return 1\n", []EditOp{op("def f(self):\n    return 1\n", "def f(self):\n    p = R\"(\" + r\"\\d\"\n    q = \"a)\"\n    return 1\n")},
			"class A:\n    def f(self):\n        p = R\"(\" + r\"\\d\"\n        q = \"a)\"\n        return 1\n", editmatch.RungIndentation, false},
		// oldText found inside a string opened above it: its closing
		// quotes, which newText copies, open none (read as an opener,
		// they paired with the docstring's and left the code between
		// unshifted, 4 columns left of its block: exit 0, an
		// IndentationError).
		{"a string opened above the match: shifted whole", "class A:\n    def f(self):\n        s = \"\"\"\n        one\n        two\"\"\".strip()\n        return s\n",
			[]EditOp{op("    two\"\"\".strip()\n    return s\n", "    two, changed\"\"\".strip()\n    return s.upper()\n\ndef g(self):\n    \"\"\"G.\"\"\"\n    return 1\n")},
			"class A:\n    def f(self):\n        s = \"\"\"\n        one\n        two, changed\"\"\".strip()\n        return s.upper()\n\n    def g(self):\n        \"\"\"G.\"\"\"\n        return 1\n", editmatch.RungIndentation, false},
		// (b) a one-line oldText found after a line's indentation, kept
		// flush on a later line of newText.
		{"heredoc, flush", "main() {\n    if [ -z \"$1\" ]; then\n        exit 1\n    fi\n}\n", []EditOp{op("exit 1", "cat <<EOF\nusage: x\nEOF\nexit 1")},
			"main() {\n    if [ -z \"$1\" ]; then\n        cat <<EOF\nusage: x\nEOF\n        exit 1\n    fi\n}\n", editmatch.RungExact, true},
		{"triple quotes, flush", "def f():\n    print(x)\n", []EditOp{op("print(x)", "msg = \"\"\"\nhello\n  there\n\"\"\"\nprint(x)")},
			"def f():\n    msg = \"\"\"\nhello\n  there\n\"\"\"\n    print(x)\n", editmatch.RungExact, true},
		{"raw string, flush, tabs", "func f() {\n\tx()\n}\n", []EditOp{op("x()\n", "s := `\nq\n`\nx()\n")},
			"func f() {\n\ts := `\nq\n`\n\tx()\n}\n", editmatch.RungExact, true},
		{"an unterminated heredoc: shifted", "def f():\n    print(x)\n", []EditOp{op("print(x)", "y = a <<b\nprint(x)")},
			"def f():\n    y = a <<b\n    print(x)\n", editmatch.RungExact, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outcomes, err := planBoth(t, tc.src, tc.ops)
			if err != nil || got != tc.want || outcomes[0].Rung != tc.rung || !outcomes[0].Reindented {
				t.Fatalf("got %q, %+v, %v;\nwant %q at rung %s, reindented", got, outcomes, err, tc.want, tc.rung)
			}
			again, outcomes, err := planBoth(t, got, tc.ops)
			if tc.retried && (err != nil || !outcomes[0].AlreadyApplied) || again != got && err == nil {
				t.Fatalf("retry: %q, %+v, %v; want unchanged (already applied: %v)", again, outcomes, err, tc.retried)
			}
		})
	}
}

// TestRetryOfAReindentedLiteralBesideASibling: an edit at the indentation
// rung whose newText holds a literal, its oldText gone, retried, finds a
// sibling at the unicode rung. newText written with its literal as given
// is the edit's writing (Locate finds it nowhere, its indentation
// uneven), and the retry is NO_MATCH naming its line, where it changed
// the sibling with success.
func TestRetryOfAReindentedLiteralBesideASibling(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new string
		newAt               int
	}{
		{"indentation rung", "def a():\n    if x:\n        print(\"hi\")\n        y = 1\ndef b():\n    print(\u201chi\u201d)\n    y = 1\n",
			"print(\"hi\")\ny = 1\n", "print(\"hi\")\nmsg = '''\nbye\n'''\n", 3},
		{"a heredoc, tabs", "f() {\n\tif x; then\n\t\techo \"hi\"\n\t\tfalse\n\tfi\n}\ng() {\n\techo \u201chi\u201d\n\tfalse\n}\n",
			"echo \"hi\"\nfalse\n", "echo \"hi\"\ncat <<EOF\nbye\nEOF\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once, outcomes, err := planBoth(t, tc.src, []EditOp{op(tc.old, tc.new)})
			if err != nil || !reflect.DeepEqual(outcomes[0].Lines, []int{tc.newAt}) {
				t.Fatalf("first run: %q, %+v, %v; want line %d changed", once, outcomes, err, tc.newAt)
			}
			twice, outcomes, err := planBoth(t, once, []EditOp{op(tc.old, tc.new)})
			var e *fault.Error
			if !errors.As(err, &e) || e.Code != fault.CodeNoMatch || e.Details["newTextLine"] != tc.newAt {
				t.Fatalf("retry: %q, %+v, %v; want NO_MATCH naming line %d", twice, outcomes, err, tc.newAt)
			}
		})
	}
}
