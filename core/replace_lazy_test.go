package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/internal/allocs"
	"github.com/agentfs/agentfs/memfs"
)

// A replace of every line of many files renders the diffs its answer has
// room for, and finds a fixed string's matches once a line: 40 files of
// 500,000 changed lines took 1 GB and 11 s, every diff rendered whole
// (and each line searched twice by the expression, 240 bytes allocated
// for its matches) to keep 256 KiB of them. Allocated, 300 times the
// text, now under 64.
func TestReplaceOfEveryLineAllocatesLittleMoreThanItsDiffs(t *testing.T) {
	files := map[string]string{}
	text := 0
	for i := range 10 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("a\n", 20000)
		text += 40000
	}
	for _, dry := range []bool{true, false} {
		m := memfs.New(files)
		var res *ReplaceResult
		var err error
		n := allocs.Bytes(func() {
			res, err = (&Tools{FS: m}).Replace(context.Background(), ReplaceRequest{Query: "a", Replacement: str("b"), DryRun: dry})
		})
		if err != nil || res.Replacements != 200000 || res.FilesChanged != 10 {
			t.Fatalf("dry %v: %v, %+v", dry, err, res)
		}
		if n > 64*uint64(text) {
			t.Errorf("dry %v: allocated %d bytes for %d of text, over 64 times it", dry, n, text)
		}
	}
}

// The diffs a replace renders only when it has room for them are those
// it would have rendered first, fitted as before: at every bound, the
// answer is the answer fitted from every diff whole.
func TestReplaceFitsLaterDiffsAsWholeOnes(t *testing.T) {
	long := strings.Repeat("é\"a\t", 700) // over ReadLineChars: cut in context
	files := map[string]string{
		"every.txt": strings.Repeat("a\n", 300),
		"crlf.txt":  "\ufeffa\r\nb\"\\\r\n" + strings.Repeat("xa\r\n", 50) + "a",
		"few.txt":   strings.Repeat("keep\n", 40) + "a\n" + strings.Repeat("keep\n", 40) + "\x01a\u2028\n" + long + "\n" + "a",
		"long.txt":  long + "\n" + strings.Repeat(long+"a\n", 3),
		"many.txt":  strings.Repeat("a b a\n", 120) + "tail",
		"nl.txt":    strings.Repeat("a\n", 40),
	}
	for _, req := range []ReplaceRequest{
		{Query: "a", Replacement: str("b")},
		{Query: "a", Replacement: str("x\ny")},
		{Query: "a", Replacement: str("")},
		{Query: `a\b`, Regex: true, Replacement: str("[$0]")},
		{Query: "A", IgnoreCase: true, Replacement: str("c")},
		{Query: "a", Word: true, Replacement: str("w")},
	} {
		req.DryRun = true
		whole, err := (&Tools{FS: memfs.New(files), MaxBytes: 64 << 20}).Replace(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for bound := 300; bound < 40000; bound = bound*5/4 + 7 {
			tools := &Tools{FS: memfs.New(files), MaxBytes: bound}
			got, gotErr := tools.Replace(context.Background(), req)
			want := *whole
			want.Files = append([]ReplacedFile(nil), whole.Files...)
			wantErr := tools.fitReplace(&want, nil)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("%q at %d: %v, want %v", req.Query, bound, gotErr, wantErr)
			}
			if gotErr != nil {
				continue
			}
			got.Plan, want.Plan = "", "" // of versions each memfs.New makes its own
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(&want)
			if string(g) != string(w) {
				t.Fatalf("%q at %d:\n%s\nwant\n%s", req.Query, bound, g, w)
			}
		}
	}
}

// renderedJSONLen is jsonLen of renderDiff's rendering.
func TestRenderedJSONLenIsTheRenderings(t *testing.T) {
	long := strings.Repeat("ü\\\"", 900)
	for _, lines := range [][]diffLine{
		{{' ', "a\n"}, {'-', "b\n"}, {'+', "c\n"}, {' ', "d"}},
		{{'-', "\ufeffé\t\x01\n"}, {'+', "\u2028\u2029\r\n"}, {' ', long + "\n"}, {' ', "x\n"}, {' ', "y\n"}, {' ', "z\n"}, {' ', "w\n"}, {' ', "v\n"}, {' ', "u\n"}, {' ', "t\n"}, {'-', "q"}, {'+', "\xff\xfe"}},
		{{'+', long}},
	} {
		for _, path := range []string{"f", "dir/\"quoted\"\n", "é"} {
			for c := range 4 {
				d, _ := renderDiff(path, lines, 7, c)
				if got, want := renderedJSONLen(path, lines, 7, c), jsonLen(d); got != want {
					t.Errorf("%q, context %d: %d, want %d", path, c, got, want)
				}
			}
		}
	}
}
