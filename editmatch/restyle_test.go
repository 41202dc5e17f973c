package editmatch

import "testing"

// apply replaces every match of old in src with new, as an edit of one
// oldText does, and reports whether any was restyled.
func apply(t *testing.T, src, old, new string) (string, bool) {
	t.Helper()
	tx := New(src)
	ms := tx.Locate(old)
	if len(ms) == 0 {
		t.Fatalf("%q not found in %q", old, src)
	}
	rw := tx.Rewriter(old, new, ms[0].Rung)
	out, at, restyledAny := "", 0, false
	for _, m := range ms {
		repl, restyled, _ := rw.Rewrite(m)
		out += src[at:m.Start] + repl
		at, restyledAny = m.End, restyledAny || restyled
	}
	return out + src[at:], restyledAny
}

// TestRestyle: a match of the unicode rung writes newText in the file's
// typography; other rungs write it as given. (core's TestRestyle checks
// the same through the edit plan.)
func TestRestyle(t *testing.T) {
	for _, tc := range []struct {
		name, src, old, new, want string
		restyled                  bool
	}{
		{"curly quotes into ASCII code", "print(\"hello\")\n", "print(“hello”)", "print(“hello, world”)", "print(\"hello, world\")\n", true},
		{"an added line folds too", "x = \"a\"\n", "x = “a”\n", "x = “a”\ny = ‘b’ – 1\n", "x = \"a\"\ny = 'b' - 1\n", true},
		{"the region in ASCII, curly elsewhere", "doc = “x”\ncode = \"y\"\n", "code = “y”", "code = “z”\nmore = “w”", "doc = “x”\ncode = \"z\"\nmore = \"w\"\n", true},
		{"kept text in the file's curly quotes", "say “hello” — now\n", "say \"hello\" - now", "say \"bye\" - now", "say “bye” — now\n", true},
		{"curly quotes added to a curly file stay", "say “hello”\n", "say \"hello\"", "say \"hello\", ‘yes’", "say “hello”, ‘yes’\n", true},
		{"ASCII added to a curly file stays", "a “b” c\n", "a \"b\" c", "a \"b\" \"d\" c", "a “b” \"d\" c\n", true},
		{"NBSP kept where the file has it", "1\u00a0000 units\n", "1 000 units", "2 000 units", "2\u00a0000 units\n", true},
		{"NBSP added to a file without one", "a - b\n", "a – b", "a – b\u00a0c", "a - b c\n", true},
		{"an ellipsis group kept whole", "wait... \"x\"\n", "wait… “x”", "wait… “y”", "wait... \"y\"\n", true},
		{"a zero-width space is dropped with its group", "ab \"x\"\n", "a\u200bb “x”", "a\u200bb “y”", "ab \"y\"\n", true},
		{"CRLF lines", "print(\"a\")\r\nprint(\"b\")\r\n", "print(“a”)\nprint(“b”)\n", "print(“a”)\nprint(“c”)\n", "print(\"a\")\r\nprint(\"c\")\r\n", true},
		{"indentation and quotes", "func f() {\n\tif s == \"a\" {\n\t\treturn \"b\"\n\t}\n}\n", "if s == “a” {\n    return “b”\n}", "if s == “a” {\n    log(“x”)\n    return “b”\n}",
			"func f() {\n\tif s == \"a\" {\n\t\tlog(\"x\")\n\t\treturn \"b\"\n\t}\n}\n", true},
		{"an exact match writes newText as given", "print(\"a\")\n", "print(\"a\")", "print(“b”)", "print(“b”)\n", false},
		{"the indentation rung only re-indents", "  x = “a”  \n  z\n", "x = “a”\nz", "y = “b”\nz", "  y = “b”\n  z\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, restyled := apply(t, tc.src, tc.old, tc.new)
			if out != tc.want || restyled != tc.restyled {
				t.Fatalf("got %q, restyled %v; want %q, %v", out, restyled, tc.want, tc.restyled)
			}
		})
	}
	if out, restyled := apply(t, "s = \"x\"; t = 'x'\n", "“x”", "“y”"); out != "s = \"y\"; t = 'x'\n" || !restyled {
		t.Fatalf("every match: %q, restyled %v", out, restyled)
	}
}
