package core

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// applyDiff applies the unified diff d to a strictly: each hunk at the
// line its header names, its lines as they stand, its counts as given.
func applyDiff(a, d string) (string, error) {
	var alines []string
	for s := a; s != ""; {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		alines = append(alines, s[:i])
		s = s[i:]
	}
	dl := strings.SplitAfter(d, "\n")
	if len(dl) < 3 {
		return "", fmt.Errorf("short")
	}
	dl = dl[2:]
	var out []string
	pos := 0 // next a line to copy
	for i := 0; i < len(dl) && dl[i] != ""; {
		h := dl[i]
		var os_, ns string
		if _, err := fmt.Sscanf(h, "@@ -%s +%s @@", &os_, &ns); err != nil {
			return "", fmt.Errorf("bad header %q", h)
		}
		parse := func(s string) (int, int) {
			st, c, ok := strings.Cut(s, ",")
			n, _ := strconv.Atoi(st)
			cnt := 1
			if ok {
				cnt, _ = strconv.Atoi(c)
			}
			return n, cnt
		}
		ostart, ocount := parse(os_)
		_, ncount := parse(ns)
		first := ostart - 1
		if ocount == 0 {
			first = ostart
		}
		if first < pos {
			return "", fmt.Errorf("hunk goes back: %q", h)
		}
		out = append(out, alines[pos:first]...)
		pos = first
		i++
		oc, nc := 0, 0
		for i < len(dl) && dl[i] != "" && !strings.HasPrefix(dl[i], "@@") {
			l := dl[i]
			i++
			text := l[1:]
			if i < len(dl) && strings.HasPrefix(dl[i], "\\ No newline") {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(alines) || alines[pos] != text {
					return "", fmt.Errorf("mismatch at %d in %q", pos, h)
				}
				pos++
				oc++
				if l[0] == ' ' {
					out = append(out, text)
					nc++
				}
			case '+':
				out = append(out, text)
				nc++
			}
		}
		if oc != ocount || nc != ncount {
			return "", fmt.Errorf("counts %d %d in %q", oc, nc, h)
		}
	}
	out = append(out, alines[pos:]...)
	return strings.Join(out, ""), nil
}

// TestContextDiffApplies: for every context, the diff of random texts
// (CRLF, lines without an ending, blank lines) applies to the old text
// to give the new, with no more than context lines before a change.
func TestContextDiffApplies(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "a\r\n", "b\r\n", "a", "b", "\n", "x\n"}
	gen := func() string {
		var b strings.Builder
		n := r.Intn(12)
		for i := 0; i < n; i++ {
			w := words[r.Intn(len(words))]
			b.WriteString(w)
		}
		return b.String()
	}
	for it := 0; it < 20000; it++ {
		a := gen()
		b := []byte(a)
		bs := a
		if r.Intn(2) == 0 {
			bs = gen()
		} else if len(b) > 0 {
			k := r.Intn(len(b))
			bs = a[:k] + words[r.Intn(len(words))] + a[k+r.Intn(len(a)-k+1):]
		}
		for c := 0; c <= 4; c++ {
			d, _ := contextDiff("f", a, bs, c)
			if a == bs {
				continue
			}
			got, err := applyDiff(a, d)
			if err != nil || got != bs {
				t.Fatalf("c=%d a=%q b=%q: %v got %q\n%s", c, a, bs, err, got, d)
			}
			// context lines per hunk edge at most c
			for _, h := range strings.Split(d, "@@ -")[1:] {
				ls := strings.SplitAfter(h, "\n")[1:]
				lead := 0
				for _, l := range ls {
					if strings.HasPrefix(l, " ") {
						lead++
					} else {
						break
					}
				}
				if lead > c {
					t.Fatalf("c=%d lead %d a=%q b=%q\n%s", c, lead, a, bs, d)
				}
			}
		}
	}
}

// TestByLineDiffApplies: a replace by line's diff, rendered with every
// context, applies as the generic one does.
func TestByLineDiffApplies(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	words := []string{"a\n", "b\n", "c\n", "a\r\n", "b\r\n", "a", "b", "\n", "x\n", "ab\n"}
	qs := []string{"a", "b", "^a", "a$", "x", `\r`, "ab", "^", "$"}
	ws := []string{"", "Q", "a", "\n", "Q\nR", "b"}
	for it := 0; it < 10000; it++ {
		var sb strings.Builder
		for i, n := 0, r.Intn(12); i < n; i++ {
			sb.WriteString(words[r.Intn(len(words))])
		}
		in := sb.String()
		with := ws[r.Intn(len(ws))]
		rp, err := newReplacer(ReplaceRequest{Query: qs[r.Intn(len(qs))], Replacement: &with, Regex: true})
		if err != nil || !rp.byLine {
			continue
		}
		out, n, diff, _ := rp.apply([]byte(in))
		if n == 0 || string(out) == in || diff == nil {
			continue
		}
		for c := 0; c <= 4; c++ {
			d, _ := renderDiff("f", diff, 0, c)
			got, err := applyDiff(in, d)
			if err != nil || got != string(out) {
				t.Fatalf("c=%d in=%q out=%q: %v got %q\n%s", c, in, out, err, got, d)
			}
		}
	}
}
