package patch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/internal/editcases"
)

// TestSeekWork: the ladder's work grows with the file's lines and the
// chunk's, not with their product. Every window of 20,000 lines of "x"
// matched a chunk's 2,000 lines of "x" but for its last, at each of the
// four rungs, each compared line by line: 160 million steps.
func TestSeekWork(t *testing.T) {
	const n, m = 20000, 2000
	lines := strings.Split(strings.Repeat("x\n", n), "\n")
	old := append(strings.Split(strings.Repeat("x\n", m-1), "\n"), "q")
	steps := 0
	if at, rung, ok := seekLadder(lines, old, 0, &steps); ok {
		t.Fatalf("found at %d (%s), want nowhere", at, rung)
	}
	if limit := 64 * (n + m); steps > limit {
		t.Errorf("%d steps for %d lines of file and %d of chunk, want at most %d", steps, n, m, limit)
	}
}

// TestSeekSameWindows: the ladder finds the place and rung that checking
// every window line by line found.
func TestSeekSameWindows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	like := func(n int) []string { return likeLines(rnd, n) }
	found := 0
	for round := range 5000 {
		lines, old := like(rnd.IntN(40)), like(rnd.IntN(5))
		start := rnd.IntN(10) - 2
		steps := 0
		at, rung, ok := seekLadder(lines, old, start, &steps)
		wantAt, wantRung, wantOK := refSeek(lines, old, start)
		if at != wantAt || rung != wantRung || ok != wantOK {
			t.Fatalf("round %d: Seek(%q, %q, %d) = %d, %q, %v; want %d, %q, %v", round, lines, old, start, at, rung, ok, wantAt, wantRung, wantOK)
		}
		if ok && len(old) > 0 {
			found++
		}
	}
	if found < 500 {
		t.Fatalf("%d chunks found in all, too few to compare", found)
	}
}

// refSeek is the ladder's Seek as it was, checking every window line by
// line.
func refSeek(lines, old []string, start int) (int, string, bool) {
	if len(old) == 0 {
		return start, RungExact, true
	}
	start = max(start, 0)
	if start+len(old) > len(lines) {
		return 0, "", false
	}
	have := make([]string, len(lines)-start)
	want := make([]string, len(old))
	for _, r := range ladderRungs {
		for i, l := range lines[start:] {
			have[i] = r.key(l)
		}
		for i, o := range old {
			want[i] = r.key(o)
		}
	windows:
		for s := 0; s+len(want) <= len(have); s++ {
			for i, w := range want {
				if have[s+i] != w {
					continue windows
				}
			}
			return start + s, r.name, true
		}
	}
	return 0, "", false
}

// TestSpansWork: locating a chunk is near-linear in the file when many of
// its lines are alike its @@ line. Each of them, tried as the chunk's start
// (spans), sought the chunk again from there, keying the rest of the file
// at every rung and scanning it: 200 of them in a file of 600,000 lines
// took 12 s.
func TestSpansWork(t *testing.T) {
	const n, m = 20000, 200
	xs := strings.Repeat("x\n", n)
	lines := splitFile(xs + "y\n" + xs)
	c := Chunk{Context: "y", Lines: []Line{{' ', "x"}}}
	for range m {
		c.Lines = append(c.Lines, Line{' ', "y"})
	}
	c.Lines = append(c.Lines, Line{'-', "q"}, Line{'+', "r"})
	op := Op{Kind: Update, Path: "f", Chunks: []Chunk{c}}
	steps := 0
	if _, _, err := locateChunks(lines, op, ladder{steps: &steps}, false); err == nil {
		t.Fatal("the chunk was located, want not found")
	}
	if limit := 64 * (len(lines) + len(c.Lines)); steps > limit {
		t.Errorf("%d steps for %d lines of file and %d of chunk, want at most %d", steps, len(lines), len(c.Lines), limit)
	}
}

// TestManyChunksWork: locating the chunks of a file is near-linear in
// the file and the patch, however many chunks it has. Each chunk's old
// lines, and the lines it leaves (sought before them for a retry), were
// sought in the whole file, each a scan of it: 5,000 chunks in a file of
// 50,000 lines took 3 s, and four times that at twice both. Chunks found
// only at a loose rung (their lines with trailing blanks the file has
// not) scanned the rest of the file at each stricter rung, twice: 6 s.
func TestManyChunksWork(t *testing.T) {
	const n, k = 20000, 2000
	var content strings.Builder
	for i := range n {
		fmt.Fprintf(&content, "v%d = f(a, b)\n", i)
	}
	lines := splitFile(content.String())
	for _, blanks := range []string{"", "  "} {
		op := Op{Kind: Update, Path: "f"}
		chunkLines := 0
		for c := range k {
			i := c*(n/k) + 1
			ch := Chunk{Lines: []Line{{' ', fmt.Sprintf("v%d = f(a, b)%s", i-1, blanks)}, {'-', fmt.Sprintf("v%d = f(a, b)%s", i, blanks)},
				{'+', fmt.Sprintf("v%d = g(a, b)", i)}, {' ', fmt.Sprintf("v%d = f(a, b)%s", i+1, blanks)}}}
			chunkLines += len(ch.Lines)
			op.Chunks = append(op.Chunks, ch)
		}
		steps := 0
		_, located, err := locateChunks(lines, op, ladder{steps: &steps}, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"": RungExact, "  ": RungTrailingWhitespace}[blanks]; located[k-1].Rung != want {
			t.Fatalf("the last chunk located at the %s rung, want %s", located[k-1].Rung, want)
		}
		if limit := 64 * (len(lines) + chunkLines); steps > limit {
			t.Errorf("blanks %q: %d steps for %d lines of file and %d chunks of %d lines, want at most %d", blanks, steps, len(lines), k, chunkLines, limit)
		}
	}
}

// TestFileLadderSameAnswers: the ladder keyed once for a file answers
// every Seek, on the file, a prefix of it or other lines, from any start,
// as checking every window line by line did, however many olds it is asked
// about by turns.
func TestFileLadderSameAnswers(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	found := 0
	for round := range 400 {
		// Long ones too, whose Seeks from near the start look up the
		// places of the old's rarest line.
		texts := likeLines(rnd, rnd.IntN(60)+rnd.IntN(2)*rnd.IntN(1000))
		f := newFileLadder(texts, nil)
		pool := make([][]string, 1+rnd.IntN(7))
		for i := range pool {
			pool[i] = likeLines(rnd, rnd.IntN(5))
		}
		for q := range 40 {
			old := pool[rnd.IntN(len(pool))]
			lines := texts
			switch rnd.IntN(4) {
			case 0:
				lines = texts[:rnd.IntN(len(texts)+1)]
			case 1:
				if len(texts) > 0 {
					lines = texts[1:]
				}
			}
			start := rnd.IntN(len(texts)+4) - 2
			at, rung, ok := f.Seek(lines, old, start)
			wantAt, wantRung, wantOK := refSeek(lines, old, start)
			if at != wantAt || rung != wantRung || ok != wantOK {
				t.Fatalf("round %d, seek %d: Seek(%q, %q, %d) = %d, %q, %v; want %d, %q, %v", round, q, lines, old, start, at, rung, ok, wantAt, wantRung, wantOK)
			}
			if ok && len(old) > 0 {
				found++
			}
		}
	}
	if found < 2000 {
		t.Fatalf("%d olds found in all, too few to compare", found)
	}
}

// TestLocateSameAnswers: chunks of like lines, @@ lines among them, are
// located where, and fail as, they did when each Seek keyed the file.
func TestLocateSameAnswers(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	placed := 0
	for round := range 3000 {
		texts := likeLines(rnd, 1+rnd.IntN(40))
		var content strings.Builder
		for _, l := range texts {
			content.WriteString(l + "\n")
		}
		lines := splitFile(content.String())
		var op Op
		op.Kind, op.Path = Update, "f"
		for range 1 + rnd.IntN(3) {
			var c Chunk
			if rnd.IntN(3) > 0 {
				c.Context = likeLines(rnd, 1)[0]
			}
			old := likeLines(rnd, 1+rnd.IntN(8))
			if rnd.IntN(4) > 0 {
				// The file's own lines, the @@ line one of them or
				// before them, to be found.
				at := rnd.IntN(len(texts))
				old = texts[at:min(len(texts), at+1+rnd.IntN(8))]
				if c.Context != "" {
					c.Context = texts[max(0, at-rnd.IntN(3)+rnd.IntN(len(old)))]
				}
			}
			for _, l := range old {
				if rnd.IntN(4) == 0 {
					c.Lines = append(c.Lines, Line{'+', likeLines(rnd, 1)[0]})
				}
				c.Lines = append(c.Lines, Line{" -"[rnd.IntN(2)], l})
			}
			c.EOF = rnd.IntN(8) == 0
			op.Chunks = append(op.Chunks, c)
		}
		reps, located, err := locateChunks(lines, op, Ladder, true)
		wantReps, wantLocated, wantErr := locateChunks(lines, op, windowLadder{}, true)
		if fmt.Sprint(reps, located, err) != fmt.Sprint(wantReps, wantLocated, wantErr) {
			t.Fatalf("round %d: file %q, chunks %+v:\n got %v %v %v\nwant %v %v %v", round, texts, op.Chunks, reps, located, err, wantReps, wantLocated, wantErr)
		}
		if err == nil {
			placed++
		}
	}
	if placed < 800 {
		t.Fatalf("%d patches located in all, too few to compare", placed)
	}
}

// windowLadder is the ladder as it was, each Seek keying the lines from
// start and checking every window.
type windowLadder struct{}

func (windowLadder) Seek(lines, old []string, start int) (int, string, bool) {
	return refSeek(lines, old, start)
}

// likeLines is n lines of a few kinds, alike at one rung or another.
func likeLines(rnd *rand.Rand, n int) []string {
	bodies := []string{"x", "x", "y", "", "x\u2019", "x'", "\u2014", "-"}
	spaces := []string{"", "", " ", "\t"}
	line := func() string {
		return spaces[rnd.IntN(len(spaces))] + bodies[rnd.IntN(len(bodies))] + spaces[rnd.IntN(len(spaces))]
	}
	return editcases.LikeLines(rnd, n, line)
}
