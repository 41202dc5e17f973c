package core

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestUnifiedDiff(t *testing.T) {
	long := strings.Repeat("é", ReadLineChars+1) // 4002 bytes
	tests := []struct {
		name, a, b, want string
		first            int
		context          int // -1: unifiedDiff's
	}{
		{"equal", "a\n", "a\n", "", 0, -1},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", "--- p\n+++ p\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 2, -1},
		{"insert at start", "a\n", "z\na\n", "--- p\n+++ p\n@@ -1 +1,2 @@\n+z\n a\n", 1, -1},
		{"delete last", "a\nb\n", "a\n", "--- p\n+++ p\n@@ -1,2 +1 @@\n a\n-b\n", 2, -1},
		{"only insert", "", "a\n", "--- p\n+++ p\n@@ -0,0 +1 @@\n+a\n", 1, -1},
		{"no final newline", "a\nb", "a\nc", "--- p\n+++ p\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n", 2, -1},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n",
			"--- p\n+++ p\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+y\n", 1, -1},
		{"close changes share a hunk", "1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n",
			"--- p\n+++ p\n@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n", 1, -1},
		// As diff -U0 and -U1 write them.
		{"two hunks, no context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n",
			"--- p\n+++ p\n@@ -1 +1 @@\n-1\n+x\n@@ -12 +12 @@\n-12\n+y\n", 1, 0},
		{"two hunks, one line of context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n",
			"--- p\n+++ p\n@@ -1,2 +1,2 @@\n-1\n+x\n 2\n@@ -11,2 +11,2 @@\n 11\n-12\n+y\n", 1, 1},
		{"insert at start, no context", "a\n", "z\na\n", "--- p\n+++ p\n@@ -0,0 +1 @@\n+z\n", 1, 0},
		{"delete last, no context", "a\nb\n", "a\n", "--- p\n+++ p\n@@ -2 +1,0 @@\n-b\n", 2, 0},
		// An unchanged line is cut as read cuts it, by characters, with
		// its marker; changed lines stay whole.
		{"a long context line", long + "\nb\n" + long, long + "\nB\n" + long,
			"--- p\n+++ p\n@@ -1,3 +1,3 @@\n " + strings.Repeat("é", ReadLineChars) + " …[line cut: 4002 bytes in all]\n-b\n+B\n " +
				strings.Repeat("é", ReadLineChars) + " …[line cut: 4002 bytes in all]\n\\ No newline at end of file\n", 2, -1},
		{"a long changed line", "a\n" + long + "\n", "a\n" + long + "x\n",
			"--- p\n+++ p\n@@ -1,2 +1,2 @@\n a\n-" + long + "\n+" + long + "x\n", 2, -1},
		{"a context line of the cut's length", strings.Repeat("é", ReadLineChars) + "\nb\n", strings.Repeat("é", ReadLineChars) + "\nB\n",
			"--- p\n+++ p\n@@ -1,2 +1,2 @@\n " + strings.Repeat("é", ReadLineChars) + "\n-b\n+B\n", 2, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, first := unifiedDiff("p", tc.a, tc.b)
			if tc.context >= 0 {
				got, first = contextDiff("p", tc.a, tc.b, tc.context)
			}
			if got != tc.want {
				t.Errorf("diff\n%s\nwant\n%s", got, tc.want)
			}
			if tc.first != 0 && first != tc.first {
				t.Errorf("first changed line %d, want %d", first, tc.first)
			}
		})
	}
}

func TestUnifiedDiffLargeFile(t *testing.T) {
	var a, b strings.Builder
	for i := 1; i <= 1000; i++ {
		a.WriteString(itoa(i) + "\n")
		switch i {
		case 50:
			b.WriteString("fifty\n")
		case 700:
			b.WriteString("700\nseven hundred and a half\n")
		default:
			b.WriteString(itoa(i) + "\n")
		}
	}
	got, first := unifiedDiff("p", a.String(), b.String())
	want := "--- p\n+++ p\n" +
		"@@ -47,7 +47,7 @@\n 47\n 48\n 49\n-50\n+fifty\n 51\n 52\n 53\n" +
		"@@ -698,6 +698,7 @@\n 698\n 699\n 700\n+seven hundred and a half\n 701\n 702\n 703\n"
	if got != want || first != 50 {
		t.Errorf("first %d, diff\n%s\nwant\n%s", first, got, want)
	}
	got, _ = unifiedDiff("p", a.String()+"x", a.String()+"y")
	if want := "--- p\n+++ p\n@@ -998,4 +998,4 @@\n 998\n 999\n 1000\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"; got != want {
		t.Errorf("diff\n%s\nwant\n%s", got, want)
	}
}

// An edit that joins two lines keeps three lines of context after the
// change, as diff -u gives, so that a strict patch (-F0) applies it.
func TestUnifiedDiffJoinedLines(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := strings.Replace(a, "6\n", "six ", 1)
	got, _ := unifiedDiff("x", a, b)
	want := "--- x\n+++ x\n@@ -3,8 +3,7 @@\n 3\n 4\n 5\n-6\n-7\n+six 7\n 8\n 9\n 10\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant (diff -u):\n%s", got, want)
	}
}

// The diff of a file with a BOM carries the BOM on line 1, as the file does.
func TestEditDiffKeepsBOM(t *testing.T) {
	bom := "\ufeff"
	fs := newLockedFS(map[string]string{"c": bom + "one\r\ntwo\r\nthree\r\nfour"})
	n := "2\n3"
	res, err := (&Tools{FS: fs, LockTimeout: time.Second}).Edit(context.Background(), EditRequest{Path: "c", Edits: []EditOp{{OldText: "two\nthree", NewText: &n}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Diff, "\n "+bom+"one\r\n") {
		t.Fatalf("the diff's first context line lost the BOM:\n%q", res.Diff)
	}
}

// A diff's header quotes a name as git does (core.quotePath=false, whose
// output these are): a name holding a newline and "+++ b" ended the
// header early, and a parser took its second line for the new name.
func TestDiffName(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"plain.txt", "plain.txt"},
		{"é d.txt", "é d.txt"},
		{"a\n+++ b", `"a\n+++ b"`},
		{"q\"u\\o\x01t\tz", `"q\"u\\o\001t\tz"`},
		{"del\x7f", `"del\177"`},
	} {
		if got := diffName(tt.path); got != tt.want {
			t.Errorf("diffName(%q) = %s, want %s", tt.path, got, tt.want)
		}
	}
	if d, _ := unifiedDiff("a\n+++ b", "x\n", "y\n"); !strings.HasPrefix(d, "--- \"a\\n+++ b\"\n+++ \"a\\n+++ b\"\n@@ ") {
		t.Errorf("the diff of a name with a newline begins %q", d)
	}
}
