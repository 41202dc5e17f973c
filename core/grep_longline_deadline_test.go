package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/search"
)

// A deadline that falls inside a line too long for the largest buffer
// (longLine), right after a match whose after-context that line is, cuts
// the result before that match, as one that falls between two reads
// (cutShort): the next page, which skips the matches kept and starts its
// before-context after their after-context, gives the match with its
// context, and the pages joined give each line once, as a search not cut.
// The result kept the match without the lines it had not read, and the
// next page gave neither of them.
func TestDeadlineInsideALongLineKeepsTheContextOfItsMatches(t *testing.T) {
	m, err := search.NewMatcher("needle", false, false)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1<<20)
	for i, text := range []string{
		"needle a\nshort\nneedle b\n" + long + "\nctx\nmore\nneedle c\nend\n",
		"needle a\nshort\nneedle b\nctx\n" + long + "\nmore\nneedle c\nend\n",
		"needle a\nshort\nneedle b\n" + long + "needle\nctx\nmore\nneedle c\nend\n",
		"needle a\n" + long + "\nctx\n" + long + "\nneedle c\nend\n",
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			size := [2]int{4096, 65536}
			whole := sizedSearcher(m, 2, 100, size).search(context.Background(), strings.NewReader(text))
			if whole.err != nil {
				t.Fatal(whole.err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			// Cancelled 200 KiB into the first long line.
			r := &cancelAfter{r: strings.NewReader(text), left: 200 << 10, cancel: cancel}
			first := sizedSearcher(m, 2, 100, size).search(ctx, r)
			if first.err == nil || !first.partial {
				t.Fatalf("not cut short: err %v, partial %v", first.err, first.partial)
			}
			next := sizedSearcher(m, 2, 100, size)
			next.skip = first.matches
			rest := next.search(context.Background(), strings.NewReader(text))
			numbers := func(res ...fileResult) []int {
				var out []int
				for _, r := range res {
					for _, l := range r.lines {
						out = append(out, l.line)
					}
				}
				return out
			}
			if got, want := numbers(first, rest), numbers(whole); !slices.Equal(got, want) {
				t.Errorf("the pages gave lines %v (%v then %v, %d matches kept), want, as a search not cut, %v",
					got, numbers(first), numbers(rest), first.matches, want)
			}
			if first.matches+rest.matches-rest.skipped != whole.matches {
				t.Errorf("matches %d + %d (of which %d skipped), want %d", first.matches, rest.matches, rest.skipped, whole.matches)
			}
		})
	}
}
