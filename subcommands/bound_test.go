package subcommands

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/internal/deeptree"
)

// boundTree makes a tree whose items stress the byte bound: names of 255
// bytes, a path of some 3 KB, a name that is not UTF-8, long lines, lines
// of characters that JSON escapes six-fold, CRLF, and many small files.
func boundTree(t *testing.T, rng *rand.Rand) string {
	dir := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deep := ""
	for i := range 14 {
		deep = filepath.Join(deep, fmt.Sprintf("%03d", i)+strings.Repeat("d", 200))
	}
	write(filepath.Join(deep, "needle.txt"), "needle in a deep file\n")
	write(strings.Repeat("n", 251)+".txt", "needle, long name\n")
	write("odd-\xff\xfe.txt", "needle \xff\xfe not UTF-8\n")
	var ctl, mixed strings.Builder
	for i := range 100 {
		fmt.Fprintf(&ctl, "%d needle \x01\x02\"\\%s\n", i, strings.Repeat("\x03", rng.IntN(200)))
		n := rng.IntN(40)
		if i%10 == 0 {
			n = 3000
		}
		fmt.Fprintf(&mixed, "line %d <&> needle %s\r\n", i, strings.Repeat("é", n))
	}
	write("ctl.txt", ctl.String())
	write("mixed.txt", mixed.String())
	write("one-long-line.txt", strings.Repeat("needle ", 4000))
	for i := range 40 {
		write(fmt.Sprintf("many/f%02d.txt", i), strings.Repeat("needle\n", rng.IntN(5)))
	}
	return dir
}

// boundResult runs one call and checks the promise of --max-bytes: a
// result fits it whole, newline included; an answer that cannot is
// TOO_LARGE naming a larger bound, at which the call answers (the bound it
// names first may be that of the fields around an item, and then the
// item's: "or more"). It returns the result and the bound that gave it.
func boundResult(t *testing.T, max int, args ...string) (map[string]any, int) {
	t.Helper()
	for range 4 {
		code, out, errs := run(t, "", append([]string{"--max-bytes", strconv.Itoa(max)}, args...)...)
		if code == 0 {
			if len(out) > max {
				t.Fatalf("%q at --max-bytes %d: %d bytes", args, max, len(out))
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			return res, max
		}
		var e struct {
			Error struct {
				Code, Hint string
				Details    map[string]any
			}
		}
		if err := json.Unmarshal([]byte(errs), &e); err != nil || e.Error.Code != "TOO_LARGE" {
			t.Fatalf("%q at --max-bytes %d: exit %d, %s", args, max, code, errs)
		}
		needed, ok := e.Error.Details["needed"].(float64)
		if !ok || int(needed) <= max || e.Error.Details["maxBytes"] != float64(max) || !strings.Contains(e.Error.Hint, "--max-bytes to "+strconv.Itoa(int(needed))) {
			t.Fatalf("%q at --max-bytes %d: %s", args, max, errs)
		}
		max = int(needed)
	}
	t.Fatalf("%q: TOO_LARGE named ever larger bounds", args)
	return nil, 0
}

// pages follows nextOffset (and nextByteOffset) from a first call to the
// end, each page at the bound max (or the larger one an item needs), and
// returns the number of items seen in field and of pages that needed a
// larger bound.
func pages(t *testing.T, max int, field string, args ...string) (items, wider int) {
	t.Helper()
	offset, byteOffset := "", ""
	for calls := 0; ; calls++ {
		a := args
		if offset != "" {
			a = append(append([]string{}, args...), "--offset", offset)
		}
		if byteOffset != "" {
			a = append(a, "--byte-offset", byteOffset)
		}
		res, at := boundResult(t, max, a...)
		if at > max {
			wider++
		}
		if list, ok := res[field].([]any); ok {
			items += len(list)
		}
		next, ok := res["nextOffset"].(float64)
		if !ok {
			return items, wider
		}
		offset = strconv.Itoa(int(next))
		if b, ok := res["nextByteOffset"].(float64); ok {
			byteOffset = strconv.Itoa(int(b))
		}
		if calls > 5000 {
			t.Fatalf("%q at --max-bytes %d: paging does not end", args, max)
		}
	}
}

// TestResultsFitMaxBytes: for bounds from the least --max-bytes up to a few
// KiB, every result of every tool fits the bound, paging ends, and an item
// that no page can hold is TOO_LARGE naming the bound that does.
func TestResultsFitMaxBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	t.Chdir(boundTree(t, rng))
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	bounds := []int{minMaxBytes, 600, 5000}
	for range 4 {
		bounds = append(bounds, 600+rng.IntN(4400))
	}
	for _, max := range bounds {
		for _, f := range []string{"ctl.txt", "mixed.txt", "one-long-line.txt"} {
			pages(t, max, "", "read", f, "--line-numbers")
			pages(t, max, "", "read", f, "--line-truncation", "chars:0")
			boundResult(t, max, "read", f, "--offset", "-3")
		}
		// The deep path, some 2.9 KB, fits no page under that bound.
		if n, wider := pages(t, max, "results", "find"); n != 61 || max < 2867 && wider == 0 || max > 3100 && wider > 0 {
			t.Errorf("find at %d: %d results, %d pages at a larger bound", max, n, wider)
		}
		pages(t, max, "entries", "ls", "--depth", "10", "--long")
		pages(t, max, "files", "grep", "needle", "--context", "2")
		pages(t, max, "files", "grep", "needle", "--mode", "files")
		pages(t, max, "files", "grep", "needle", "--mode", "count")

		var edits []map[string]any
		for i := range 100 {
			edits = append(edits, map[string]any{"oldText": fmt.Sprintf("line %d <&> needle", i), "newText": fmt.Sprintf("LINE %d", i)})
		}
		req, _ := json.Marshal(map[string]any{"path": "mixed.txt", "edits": edits, "dryRun": true})
		res, _ := boundResult(t, max, "edit", "--json", string(req))
		if omitted, _ := res["editsOmitted"].(float64); len(res["edits"].([]any))+int(omitted) != 100 {
			t.Errorf("edit at %d: %v edits, %v omitted", max, len(res["edits"].([]any)), omitted)
		}
		boundResult(t, max, "write", strings.Repeat("w", 250), "--content", "x")
		boundResult(t, max, "rm", strings.Repeat("w", 250))
		// In a batch, each answer line, its id and frame included: the
		// result was bounded alone (517 bytes at 512).
		for _, id := range []string{"1", `"` + strings.Repeat("i", maxIDBytes-2) + `"`} {
			in := fmt.Sprintf(`{"tool":"ls","args":{"depth":10,"long":true},"id":%s}`+"\n"+`{"tool":"grep","args":{"query":"needle","context":2},"id":%s}`+"\n"+`{"tool":"read","args":{"path":"nosuch/%s"},"id":%s}`+"\n", id, id, strings.Repeat("n", 3000), id)
			_, out, _ := run(t, in, "--max-bytes", strconv.Itoa(max), "batch")
			for line := range strings.Lines(out) {
				if len(line) > max {
					t.Errorf("batch at --max-bytes %d, id of %d bytes: a line of %d bytes: %.200s", max, len(id), len(line), line)
				}
			}
		}
		// Several paths share the bound, a failed run's error included.
		if max >= 3*(minMaxBytes+1)+16 {
			_, out, errs := run(t, "", "--max-bytes", strconv.Itoa(max), "read", "ctl.txt", strings.Repeat("m", 200), "one-long-line.txt")
			if len(out) > max || !strings.Contains(out, `"results"`) {
				t.Errorf("read of three paths at --max-bytes %d: %d bytes (%s)", max, len(out), errs)
			}
		}
	}
}

// TestPathLongerThanTheBound: a tree of 1,100 levels of 255-byte names
// holds paths of up to 281 KB, over the default bound. find pages up to
// the first such entry, then answers TOO_LARGE naming the bound that holds
// it and the offset past it; at that bound, the entry comes whole. So does
// grep for the file at the bottom.
func TestPathLongerThanTheBound(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	const levels = 1100
	deeptree.File(t, root, strings.Repeat("x", 255), levels, "needle.txt", "needle\n")

	// Entry k (from 0) is k+1 levels deep: its path has 256(k+1)-1 bytes.
	first := core.DefaultMaxBytes/256 - 1 // the first entry over the bound
	code, out, errs := run(t, "", "find", "--offset", strconv.Itoa(first))
	var e struct {
		Error struct {
			Code, Hint string
			Details    map[string]float64
		}
	}
	if code != 1 || out != "" || json.Unmarshal([]byte(errs), &e) != nil || e.Error.Code != "TOO_LARGE" ||
		e.Error.Details["offset"] != float64(first) || e.Error.Details["maxBytes"] != core.DefaultMaxBytes ||
		!strings.Contains(e.Error.Hint, "--offset "+strconv.Itoa(first+1)) {
		t.Fatalf("find past the bound: exit %d, %.300s", code, errs)
	}
	needed := int(e.Error.Details["needed"])
	code, out, _ = run(t, "", "--max-bytes", strconv.Itoa(needed), "find", "--offset", strconv.Itoa(first), "--limit", "1")
	var res struct {
		Results []struct{ Path string }
	}
	if code != 0 || len(out) > needed || json.Unmarshal([]byte(out), &res) != nil || len(res.Results) != 1 || len(res.Results[0].Path) != 256*(first+1)-1 {
		t.Fatalf("find at the bound named, %d: exit %d, %d bytes", needed, code, len(out))
	}
	// The page before it holds the entry before, alone, and stops there.
	code, out, _ = run(t, "", "find", "--offset", strconv.Itoa(first-1))
	var page struct {
		Results    []any
		Truncated  bool
		NextOffset int
	}
	if code != 0 || len(out) > core.DefaultMaxBytes || json.Unmarshal([]byte(out), &page) != nil || len(page.Results) != 1 || !page.Truncated || page.NextOffset != first {
		t.Fatalf("the page before: exit %d, %d bytes, next %d", code, len(out), page.NextOffset)
	}

	// grep finds the deepest file, whose path is over the bound.
	code, _, errs = run(t, "", "grep", "needle")
	e.Error.Details = nil
	if code != 1 || json.Unmarshal([]byte(errs), &e) != nil || e.Error.Code != "TOO_LARGE" || e.Error.Details["offset"] != 0 {
		t.Fatalf("grep: exit %d, %.300s", code, errs)
	}
	needed = int(e.Error.Details["needed"])
	code, out, _ = run(t, "", "--max-bytes", strconv.Itoa(needed), "grep", "needle")
	if code != 0 || len(out) > needed || !strings.Contains(out, `"lines":["needle"]`) {
		t.Fatalf("grep at the bound named, %d: exit %d, %d bytes", needed, code, len(out))
	}
}

// TestBatchTooLargeNamesTheBound: in a batch, a result that does not fit
// is TOO_LARGE naming the --max-bytes given, and a need that counts the
// answer's id and frame: run again at that need, the answer comes whole,
// and a byte less refuses it. It named the bound less the frame, and a
// need that failed again; then one that counted the answer's newline
// twice, a byte over the line.
func TestBatchTooLargeNamesTheBound(t *testing.T) {
	t.Chdir(t.TempDir())
	name := filepath.Join(strings.Repeat("d", 150), strings.Repeat("p", 150)+".txt")
	if err := os.Mkdir(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", `"` + strings.Repeat("i", maxIDBytes-2) + `"`} {
		in := fmt.Sprintf(`{"tool":"read","args":{"path":%q},"id":%s}`+"\n", name, id)
		_, out, _ := run(t, in, "--max-bytes", "512", "batch")
		var a struct {
			Error struct {
				Code, Message string
				Details       map[string]int
			}
		}
		if json.Unmarshal([]byte(out), &a) != nil || a.Error.Code != "TOO_LARGE" || a.Error.Details["maxBytes"] != 512 ||
			!strings.Contains(a.Error.Message, "over --max-bytes 512.") {
			t.Fatalf("id %.10s at 512: %s", id, out)
		}
		needed := a.Error.Details["needed"]
		code, out, _ := run(t, in, "--max-bytes", strconv.Itoa(needed), "batch")
		if code != 0 || len(out) != needed || !strings.Contains(out, `"result"`) {
			t.Fatalf("id %.10s at the need named, %d: exit %d, %d bytes: %.200s", id, needed, code, len(out), out)
		}
		if _, out, _ := run(t, in, "--max-bytes", strconv.Itoa(needed-1), "batch"); !strings.Contains(out, `"TOO_LARGE"`) {
			t.Fatalf("id %.10s at a byte under the need named, %d: %.200s", id, needed-1, out)
		}
	}
}

// TestSeveralPathsTooLargeNamesTheBound: with several paths, a result
// that does not fit its share is TOO_LARGE naming the --max-bytes given
// and a need that holds it in its share: run again at that need, each
// result comes whole. It named the share, and its need failed again.
func TestSeveralPathsTooLargeNamesTheBound(t *testing.T) {
	t.Chdir(t.TempDir())
	long := filepath.Join(strings.Repeat("d", 200), strings.Repeat("p", 150)+".txt")
	if err := os.Mkdir(filepath.Dir(long), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{long, "b.txt"} {
		if err := os.WriteFile(name, []byte("hi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, out, _ := run(t, "", "--max-bytes", "1200", "read", long, "b.txt")
	var a struct {
		Results []struct {
			Error struct {
				Code, Message string
				Details       map[string]int
			}
		}
	}
	if json.Unmarshal([]byte(out), &a) != nil || len(a.Results) != 2 || a.Results[0].Error.Code != "TOO_LARGE" ||
		a.Results[0].Error.Details["maxBytes"] != 1200 {
		t.Fatalf("at 1200: %s", out)
	}
	needed := a.Results[0].Error.Details["needed"]
	code, out, errs := run(t, "", "--max-bytes", strconv.Itoa(needed), "read", long, "b.txt")
	if code != 0 || len(out) > needed || strings.Count(out, `"content":"hi\n"`) != 2 {
		t.Fatalf("at the need named, %d: exit %d, %d bytes: %.300s %s", needed, code, len(out), out, errs)
	}
}

// A path that takes most of its share: the item's path is cut, as one
// path's error cuts its own, so that the error keeps its message and the
// need (which was cut away instead, leaving TOO_LARGE with nothing to act on).
func TestSeveralPathsLongPathTooLargeNamesTheNeed(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := strings.Repeat(strings.Repeat("q", 200)+"/", 4)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	long := dir + "f.txt"
	for _, name := range []string{long, "b.txt", "c.txt"} {
		if err := os.WriteFile(name, []byte("hi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range [][]string{{"read"}, {"grep", "hi"}} {
		args := append(append([]string{"--max-bytes", "2600"}, tool...), long, "b.txt", "c.txt")
		_, out, _ := run(t, "", args...)
		if len(out) > 2600 {
			t.Fatalf("%s: %d bytes over 2600", tool[0], len(out))
		}
		var a struct {
			Results []struct {
				Error struct {
					Code, Message string
					Details       map[string]int
				}
			}
		}
		if json.Unmarshal([]byte(out), &a) != nil || len(a.Results) != 3 || a.Results[0].Error.Code != "TOO_LARGE" ||
			a.Results[0].Error.Message == "" || a.Results[0].Error.Details["needed"] == 0 {
			t.Fatalf("%s at 2600: %.400s", tool[0], out)
		}
		needed := a.Results[0].Error.Details["needed"]
		args[1] = strconv.Itoa(needed)
		code, out, errs := run(t, "", args...)
		if code != 0 || len(out) > needed {
			t.Fatalf("%s at the need named, %d: exit %d, %d bytes: %.300s %s", tool[0], needed, code, len(out), out, errs)
		}
	}
}

// TestGrepTooLargeNeedsExactly: a grep match that does not fit is
// TOO_LARGE naming the least bound at which it answers, in JSON and as
// text: at that bound it answers, a byte less it is refused again. Printed
// as text, the page must fit both renderings, and no more: the need is
// the JSON's or the text's, whichever is larger. The text was charged the
// file's JSON entry (its path) and each text line (the path again):
// --max-bytes 734 for 159 bytes printed, where the JSON needs 583.
func TestGrepTooLargeNeedsExactly(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("AGENTFS_STATE_DIR", t.TempDir())
	name := strings.Repeat("p", 146) + ".txt"
	mustRun(t, os.WriteFile(name, []byte("a\nb\nc\nhello\nd\ne\nf\n"), 0o644))
	needRE := regexp.MustCompile(`raise --max-bytes to (\d+)`)
	for _, tc := range [][]string{
		{"grep", "hello", name},                                 // the JSON is the larger
		{"grep", "hello", name, "-C", "3"},                      // the text: the path on 7 lines
		{"--color", "always", "grep", "hello", name, "-C", "3"}, // with its colours
	} {
		var jsonNeeded int
		for _, format := range []string{"json", "text"} {
			at := func(max int) (code int, out, errs string) {
				return run(t, "", append([]string{"--format", format, "--max-bytes", strconv.Itoa(max)}, tc...)...)
			}
			code, _, errs := at(512)
			m := needRE.FindStringSubmatch(errs)
			if code != 1 || !strings.Contains(errs, "TOO_LARGE") || m == nil {
				t.Fatalf("%s %q at 512: exit %d, %s", format, tc, code, errs)
			}
			needed, _ := strconv.Atoi(m[1])
			code, out, errs := at(needed)
			if code != 0 || len(out) > needed || !strings.Contains(out, "hello") {
				t.Errorf("%s %q at the need named, %d: exit %d, %d bytes, %s", format, tc, needed, code, len(out), errs)
			}
			if format == "json" {
				jsonNeeded = needed
			} else if want := max(jsonNeeded, len(out)); needed != want {
				t.Errorf("%s %q: the need named is %d; the JSON needs %d and the text printed is %d bytes", format, tc, needed, jsonNeeded, len(out))
			}
			if code, _, errs := at(needed - 1); code != 1 || !strings.Contains(errs, "TOO_LARGE") {
				t.Errorf("%s %q a byte under the need named, %d: exit %d, %s", format, tc, needed, code, errs)
			}
		}
	}
}
