// Package editcases holds the edit cases that two levels of tests share:
// editmatch's tests of the ladder and core's tests of the edit plan run
// the same inputs, each checking its own promise.
package editcases

import "math/rand/v2"

// LikeLines is a text of n lines drawn from three made by line, so that
// windows of it match often, and a line of its own now and then: the
// inputs on which a search that checks every window was quadratic, for
// the tests that bound the work of editmatch's and patch's ladders and
// compare them with the loops they replaced.
func LikeLines(rnd *rand.Rand, n int, line func() string) []string {
	kinds := []string{line(), line(), line()}
	lines := make([]string, n)
	for j := range lines {
		if lines[j] = kinds[rnd.IntN(len(kinds))]; rnd.IntN(8) == 0 {
			lines[j] = line()
		}
	}
	return lines
}

// FuzzSeeds are {file, oldText, newText} seeds of the edit fuzz targets:
// line endings, a byte-order mark, whitespace, indentation, typography,
// a gutter, invalid UTF-8.
var FuzzSeeds = [][3]string{
	{"a\nb\nc\n", "b", "B"},
	{"a\r\nb\r\nc\r\n", "a\nb", "x\ny"},
	{"a\r\nb\nc\r\n", "b\n", "b1\nb2\n"},
	{"\xEF\xBB\xBFone\ntwo", "two", "2"},
	{"func f() {  \n\treturn 1\t\n}\n", "func f() {\n\treturn 1\n}\n", "x\n"},
	{"\tif x {\n\t\treturn 1\n\t}\n", "    if x {\n        return 1\n    }", "    if y {\n        return 2\n    }"},
	{"say(\u201chi\u201d) \u2014 ok\n", `say("hi") - ok`, "z"},
	{"one\ntwo\nthree\n", "  2\ttwo\n  3\tthree", "  2\tTWO"},
	{"x \nx\t\n", "x\n", "y\n"},
	{"\r\n\r\n", "\n", "\r"},
	{"ab\u00a0cd", "b c", "q"},
	{"a \u2018x\u2019\r\nb\u200b\r\n", "'x'\nb", "y"},
	{"\uFB01 \xff\uFB01", "fi", "x"},
	{"print(\"hello\")\n", "print(\u201chello\u201d)", "print(\u201chello, world\u201d)"},
	{"wait... \"x\"\n", "wait\u2026 \u201cx\u201d", "wait\u2026 \u201cy\u201d \u2014 z"},
	{"x=\"cafe\u0301\" e\u0301\u0301\n", "caf\u00e9", "tea"},
}

// Restyle is a case of newText written in the file's typography.
type Restyle struct {
	Name, Src, Old, New, Want string
	// Restyled: the match was on the unicode rung, so newText was restyled.
	Restyled bool
}

// Restyles are the restyling cases: a match of the unicode rung writes
// newText in the file's typography; other rungs write it as given.
var Restyles = []Restyle{
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
	// Folded a rune at a time, e and U+0301 never matched é within a
	// line, and the kept text of a whole line was written as given.
	{"NFD kept as the file spells it", "msg = “Cafe\u0301 ready”\n", "msg = \"Café ready\"", "msg = \"Café done\"", "msg = “Cafe\u0301 done”\n", true},
	{"NFD within a line", "x=\"cafe\u0301\"\n", "café", "tea", "x=\"tea\"\n", false},
	{"NFC within a line, oldText in NFD", "x=\"café\" + caf\n", "cafe\u0301", "café!", "x=\"café!\" + caf\n", false},
	{"an exact match writes newText as given", "print(\"a\")\n", "print(\"a\")", "print(“b”)", "print(“b”)\n", false},
	{"the indentation rung only re-indents", "  x = “a”  \n  z\n", "x = “a”\nz", "y = “b”\nz", "  y = “b”\n  z\n", false},
}
