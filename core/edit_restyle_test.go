package core

import "testing"

// TestRestyle: a match of the unicode rung writes newText in the file's
// typography; other rungs write it as given.
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
			n := tc.new
			out, oc, err := planBoth(t, tc.src, []EditOp{{OldText: tc.old, NewText: &n}})
			if err != nil || out != tc.want || oc[0].Restyled != tc.restyled {
				t.Fatalf("got %q %+v %v; want %q, restyled %v", out, oc, err, tc.want, tc.restyled)
			}
		})
	}
	n := "“y”"
	out, oc, err := planBoth(t, "s = \"x\"; t = 'x'\n", []EditOp{{OldText: "“x”", NewText: &n, ReplaceAll: true}})
	if err != nil || out != "s = \"y\"; t = 'x'\n" || !oc[0].Restyled {
		t.Fatalf("replaceAll: %q %+v %v", out, oc, err)
	}
}
