package editmatch

import (
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/internal/editcases"
)

// TestRespacedWork: Respaced's work grows with the lines of the text and
// of old, not with their product. Every window of 20,000 lines of "x"
// matched old's 2,000 lines of "x" but for its last line, each compared
// line by line: 40 million steps.
func TestRespacedWork(t *testing.T) {
	const n, m = 20000, 2000
	tx := New(strings.Repeat("x\n", n))
	if at := tx.Respaced(strings.Repeat("x \n", m) + "q\n"); len(at) != 0 {
		t.Fatalf("Respaced found %v, want none", at)
	}
	if limit := 64 * (n + m); tx.steps > limit {
		t.Errorf("%d steps for %d lines of text and %d of old, want at most %d", tx.steps, n, m, limit)
	}
}

// TestRespacedSameWindows: Respaced finds the windows that checking each
// line by line found.
func TestRespacedSameWindows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	bodies := []string{"x", "x = 1", "x=1", "X", "", " ", "\u2019", "'", "y"}
	spaces := []string{"", " ", "\t", "  "}
	line := func() string {
		return spaces[rnd.IntN(len(spaces))] + bodies[rnd.IntN(len(bodies))] + spaces[rnd.IntN(len(spaces))]
	}
	found := 0
	for round := range 5000 {
		src := strings.Join(editcases.LikeLines(rnd, rnd.IntN(40), line), "\n")
		old := strings.Join(editcases.LikeLines(rnd, 1+rnd.IntN(5), line), "\n")
		if rnd.IntN(2) == 0 {
			old += "\n"
		}
		got, want := New(src).Respaced(old), refRespaced(New(src), old)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: Respaced(%q) in %q = %v, want %v", round, old, src, got, want)
		}
		found += len(want)
	}
	if found < 1000 {
		t.Fatalf("%d windows found in all, too few to compare", found)
	}
}

// refRespaced is Respaced as it was, checking every window line by line.
func refRespaced(t *Text, old string) []int {
	oldLines, _ := splitLines(strings.ReplaceAll(old, "\r\n", "\n"))
	want := make([]string, len(oldLines))
	blank := true
	for i, l := range oldLines {
		want[i] = Spaceless(l)
		blank = blank && want[i] == ""
	}
	if blank || len(want) > len(t.lines) {
		return nil
	}
	have := make([]string, len(t.lines))
	for j := range t.lines {
		have[j] = Spaceless(t.content(j))
	}
	var at []int
	for s := 0; s+len(want) <= len(have); s++ {
		if slices.Equal(want, have[s:s+len(want)]) {
			at = append(at, s+1)
		}
	}
	return at
}

// TestKeptWork: Kept's work grows with the lines of the text and of
// newText, by a logarithm at most, not with their product. Every window
// of 20,000 lines of "  x" held newText's 5,000 lines of "x", which it
// keeps of oldText, and its last, "\tx", but for their white space:
// 75 million lines compared.
func TestKeptWork(t *testing.T) {
	const n, m = 20000, 5000
	tx := New(strings.Repeat("  x\n", n))
	if ms := tx.Kept(strings.Repeat("x\n", m)+"qqq\n", strings.Repeat("x\n", m)+"\tx\n"); len(ms) != 0 {
		t.Fatalf("Kept found %+v, want none", ms)
	}
	lines := n + m + 1
	if limit := 64 * lines * bits.Len(uint(lines)); tx.steps > limit {
		t.Errorf("%d steps for %d lines of text and newText, want at most %d", tx.steps, lines, limit)
	}
}

// TestKeptSameWindows: Kept finds the windows that checking each line by
// line found, the first two of them, whether many windows are filtered
// by their sums (dense) or few checked each.
func TestKeptSameWindows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	indents := []string{"", "", " ", "  ", "    ", "\t", "\t ", "        ", "  \t"}
	bodies := []string{"x", "x", "x", "x ", "y", "", "", " "}
	line := func() string { return indents[rnd.IntN(len(indents))] + bodies[rnd.IntN(len(bodies))] }
	found, many := 0, 0
	for round := range 5000 {
		src := strings.Join(editcases.LikeLines(rnd, rnd.IntN(40), line), "\n")
		if rnd.IntN(2) == 0 {
			src += "\n"
		}
		newLines := editcases.LikeLines(rnd, 1+rnd.IntN(6), line)
		// oldText keeps some of newText's lines, and has others.
		var oldLines []string
		for _, l := range newLines {
			if rnd.IntN(3) > 0 {
				oldLines = append(oldLines, l)
			}
			if rnd.IntN(4) == 0 {
				oldLines = append(oldLines, line())
			}
		}
		oldText, newText := strings.Join(oldLines, "\n"), strings.Join(newLines, "\n")
		if rnd.IntN(2) == 0 {
			oldText, newText = oldText+"\n", newText+"\n"
		}
		want := refKept(New(src), oldText, newText)
		found += min(len(want), 1)
		if len(want) > 2 {
			many++
			want = want[:2]
		}
		// The sums pass the windows Kept finds, and (but by a chance of
		// about 2 in a billion) no other.
		tx := New(src)
		wantLines, _ := splitLines(strings.ReplaceAll(newText, "\r\n", "\n"))
		if len(wantLines) <= len(tx.lines) {
			kept := keptLines(oldText, newText)
			isKept := make([]bool, len(wantLines))
			var starts []int
			for i := range isKept {
				_, isKept[i] = kept[i]
			}
		windows:
			for s := 0; s+len(wantLines) <= len(tx.lines); s++ {
				for i, l := range wantLines {
					if strings.TrimSpace(tx.content(s+i)) != strings.TrimSpace(l) {
						continue windows
					}
				}
				starts = append(starts, s)
			}
			var passed, found []int
			for _, s := range tx.keptSums(wantLines, isKept, starts) {
				passed = append(passed, s+1)
			}
			for _, m := range refKept(New(src), oldText, newText) {
				found = append(found, m.Line)
			}
			if !slices.Equal(passed, found) {
				t.Fatalf("round %d: the sums passed lines %v of %q for %q, want %v", round, passed, src, newText, found)
			}
		}
		for _, dense := range []bool{false, true} {
			tx := New(src)
			tx.denseKept = dense
			if got := tx.Kept(oldText, newText); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d (dense: %v): Kept(%q, %q) in %q =\n%+v\nwant\n%+v", round, dense, oldText, newText, src, got, want)
			}
		}
	}
	if found < 500 || many < 100 {
		t.Fatalf("newText found in %d rounds, more than twice in %d: too few to compare", found, many)
	}
}

// refKept is Kept as it was, checking every window line by line.
func refKept(t *Text, oldText, newText string) []Match {
	kept := keptLines(oldText, newText)
	want, withEOL := splitLines(strings.ReplaceAll(newText, "\r\n", "\n"))
	var ms []Match
	var keptWant, keptHave []string
windows:
	for s := 0; s+len(want) <= len(t.lines); s++ {
		keptWant, keptHave = keptWant[:0], keptHave[:0]
		for i, w := range want {
			_, k := kept[i]
			if k && strings.TrimSpace(t.content(s+i)) != strings.TrimSpace(w) || !k && t.content(s+i) != w {
				continue windows
			}
			if k {
				keptWant, keptHave = append(keptWant, w), append(keptHave, t.content(s+i))
			}
		}
		if !SameColumns(keptWant, keptHave) {
			continue
		}
		last := t.lines[s+len(want)-1]
		m := Match{Start: t.lines[s].start, End: last.end, Line: s + 1, Rung: RungWhitespace}
		if withEOL {
			m.End = last.next
		}
		ms = append(ms, m)
	}
	return ms
}

// TestRetryChecksKeyTheTextOnce: Respaced and Rivalled, asked for each
// edit of a retried batch, key the text's lines once for all of them. Each
// keyed every line again (its bigrams, its spaceless form): a retried
// batch of 138 edits in 2 MB of Go took 22 s, 1000 edits of 20 lines in
// 2 MiB of like lines 98 s. Asked again, they allocate for old's lines,
// not the text's.
func TestRetryChecksKeyTheTextOnce(t *testing.T) {
	const n = 20000
	var src strings.Builder
	for i := range n {
		src.WriteString("value_" + strings.Repeat("x", i%7) + " = compute(alpha, beta)\n")
	}
	tx := New(src.String())
	old := "value_xx = compute(alpha, gamma)\n"
	tx.Respaced(old)
	tx.Rivalled(old, 3, 1)
	if allocs := testing.AllocsPerRun(5, func() {
		tx.Respaced(old)
		tx.Rivalled(old, 3, 1)
	}); allocs > n/10 {
		t.Errorf("%.0f allocations to ask again about a text of %d lines, want at most %d", allocs, n, n/10)
	}
}
