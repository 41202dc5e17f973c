package core

import (
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/search"
)

// TestLongLines searches texts whose lines are mostly longer than the
// largest buffer (64 bytes here), matches placed across the reads and
// past where output cuts a line, against naiveLines: each line is counted
// once, anchors hold at the line's ends only, and the text shown is the
// one the whole line would show.
func TestLongLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "z", "ab", "needle", "NEEDLE", "nee", "dle", "é", "\xff", "\r", " ", "word", "\t"}
	queries := []struct {
		q             string
		regex, ignore bool
	}{
		{"needle", false, false}, {"ab", false, false}, {"é", false, false}, {"\r", false, false},
		{"needle", false, true}, {`^ab`, true, false}, {`b$`, true, false}, {`n.e+dle`, true, false},
		{`a.*z`, true, false}, {`\bword\b`, true, false}, {`^$`, true, false}, {`z\s+a`, true, false},
	}
	for round := range 60 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			n := rng.IntN(3000)
			if rng.IntN(4) == 0 {
				n = rng.IntN(80)
			}
			for ; n > 0; n-- {
				b.WriteString(words[rng.IntN(len(words))])
			}
			if rng.IntN(3) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		text := b.String()
		if rng.IntN(2) == 0 {
			text = strings.TrimSuffix(text, "\n")
		}
		for _, q := range queries {
			checkSearch(t, q.q, q.regex, q.ignore, []byte(text), round%3)
		}
	}
}

// TestNoLineAfterTheLast: a file whose last lines, kept as context, fill
// the buffer up to its end has no line after them. An empty line was
// reported after the last (count 1 for ^$, an extra "" of context).
func TestNoLineAfterTheLast(t *testing.T) {
	for _, q := range []struct {
		q     string
		regex bool
	}{{"a", false}, {"^$", true}, {"^", true}} {
		for _, text := range []string{strings.Repeat("a", 50) + "\n", "a\n" + strings.Repeat("a", 60) + "\n", strings.Repeat("a", 63) + "\r\n"} {
			checkSearch(t, q.q, q.regex, false, []byte(text), 1)
		}
	}
}

// TestLongLineWindow: a match far into a line longer than the largest
// buffer is shown where it is, cut as a line held whole is; a greedy regex
// that reads the line to its end shows it from its start.
func TestLongLineWindow(t *testing.T) {
	line := strings.Repeat("x", 300000) + "needle" + strings.Repeat("y", 900000) + "z"
	for _, c := range []struct {
		q      string
		regex  bool
		prefix string
	}{
		{"needle", false, "[… 299750 bytes cut] xxx"},
		{`needle`, true, "[… 299750 bytes cut] xxx"},
		{`needle.*z`, true, "xxx"},
	} {
		m, err := search.NewMatcher(c.q, c.regex, false)
		if err != nil {
			t.Fatal(err)
		}
		res := sizedSearcher(m, 0, 10, [2]int{4096, 65536}).search(t.Context(), strings.NewReader("first\n"+line+"\nlast\n"))
		if res.err != nil || res.matches != 1 || len(res.lines) != 1 || res.lines[0].line != 2 {
			t.Fatalf("%q: %d matches, lines %+v, %v", c.q, res.matches, res.lines, res.err)
		}
		text, _ := lineText(res.lines[0])
		if !strings.HasPrefix(text, c.prefix) || !strings.HasSuffix(text, " bytes cut]") || len(text) > MaxLineBytes+64 {
			t.Fatalf("%q: shown as %.60q...%q", c.q, text, text[max(0, len(text)-40):])
		}
	}
}

// TestLongLineStopsWhenCancelled: a long line is read on only while the
// search's context lasts, and a search stopped in one reports no match.
func TestLongLineStopsWhenCancelled(t *testing.T) {
	m, err := search.NewMatcher("needle", false, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	text := strings.Repeat("x", 1<<20) + "needle\n"
	r := &cancelAfter{r: strings.NewReader(text), left: 200 << 10, cancel: cancel}
	res := sizedSearcher(m, 0, 10, [2]int{4096, 65536}).search(ctx, r)
	if res.err != context.Canceled || !res.partial || res.matches != 0 {
		t.Fatalf("cancelled in a long line: err %v, partial %v, %d matches", res.err, res.partial, res.matches)
	}
	if r.read > 300<<10 {
		t.Fatalf("read %d bytes after the search was cancelled at 200 KiB", r.read)
	}
}

// cancelAfter reads r and cancels once it has given left bytes.
type cancelAfter struct {
	r      io.Reader
	left   int
	read   int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), 4096)])
	c.read += n
	if c.left -= n; c.left <= 0 {
		c.cancel()
	}
	return n, err
}
