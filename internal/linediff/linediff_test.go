package linediff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// sides are the two texts a diff of runes stands for.
func sides(ds []diffmatchpatch.Diff) (a, b string, equal int) {
	var sa, sb strings.Builder
	for _, d := range ds {
		if d.Type != diffmatchpatch.DiffInsert {
			sa.WriteString(d.Text)
		}
		if d.Type != diffmatchpatch.DiffDelete {
			sb.WriteString(d.Text)
		}
		if d.Type == diffmatchpatch.DiffEqual {
			equal += len([]rune(d.Text))
		}
	}
	return sa.String(), sb.String(), equal
}

// TestRunesAgreesWithGoDiff: on texts small enough for go-diff's search
// to finish, Runes gives back both texts and keeps as many lines as
// go-diff does, merged as go-diff merges (no two runs of one kind in a
// row, a deletion before the insertion beside it).
func TestRunesAgreesWithGoDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: go-diff's answer is the shortest
	for n := range 3000 {
		text := func() string {
			var s strings.Builder
			for range rng.IntN(30) {
				// A small alphabet for lines both sides hold, a large
				// one for lines only one side holds.
				if rng.IntN(3) == 0 {
					fmt.Fprintf(&s, "u%d\n", rng.IntN(1000))
				} else {
					fmt.Fprintf(&s, "%c\n", 'a'+rng.IntN(4))
				}
			}
			return s.String()
		}
		a, b := text(), text()
		ra, rb, _ := dmp.DiffLinesToRunes(a, b)
		got := Runes(dmp, ra, rb)
		ga, gb, kept := sides(got)
		if ga != string(ra) || gb != string(rb) {
			t.Fatalf("case %d: the diff of %q and %q stands for %q and %q", n, a, b, ga, gb)
		}
		if _, _, want := sides(dmp.DiffMainRunes(ra, rb, false)); kept != want {
			t.Fatalf("case %d: %d lines kept of %q and %q, go-diff keeps %d", n, kept, a, b, want)
		}
		for k := 1; k < len(got); k++ {
			if got[k].Type == got[k-1].Type || got[k].Type == diffmatchpatch.DiffDelete && got[k-1].Type == diffmatchpatch.DiffInsert {
				t.Fatalf("case %d: %v after %v", n, got[k].Type, got[k-1].Type)
			}
		}
	}
}

// TestRunesEveryLineChanged: every other line changed to one the old
// text does not hold, as a rename across a file changes them, is no
// search: the lines kept are found with no time to search at all, where
// go-diff, out of time, deleted and inserted the whole text (and took
// its whole timeout, 2 s of an edit's, to get there).
func TestRunesEveryLineChanged(t *testing.T) {
	var a, b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&a, "x = old(%d)\n}\n", i)
		fmt.Fprintf(&b, "x = new(%d)\n}\n", i)
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = time.Nanosecond
	ra, rb, _ := dmp.DiffLinesToRunes(a.String(), b.String())
	if _, _, kept := sides(Runes(dmp, ra, rb)); kept != 20000 {
		t.Fatalf("%d lines kept, want the 20000 lines of }", kept)
	}
}
