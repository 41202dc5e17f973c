// Package linediff diffs two texts line by line, as go-diff's
// DiffMainRunes does over the runes DiffLinesToRunes makes of them, but
// first sets aside the lines that only one side holds, as GNU diff and
// git do: such a line can only be deleted or inserted, so the search
// (O(N·D), N lines and D of them changed) runs over the lines both sides
// hold. Where every line changed (a rename across a file, a rewrite of it)
// nothing is left to search, where go-diff searched until its timeout: a
// file of 25,000 changed lines took the whole 2 s of edit's diff, and
// every file of a replace or apply-patch took it again.
package linediff

import "github.com/sergi/go-diff/diffmatchpatch"

// Runes is dmp.DiffMainRunes(a, b, false) with the lines only one side
// holds set aside: a diff as short as go-diff's (the lines set aside are
// in no common subsequence), merged as go-diff merges its own. Texts
// with no such line are go-diff's alone.
func Runes(dmp *diffmatchpatch.DiffMatchPatch, a, b []rune) []diffmatchpatch.Diff {
	// Only the lines between the common head and tail are looked at, as
	// go-diff looks at them.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	inA, inB := make(map[rune]struct{}, len(ma)), make(map[rune]struct{}, len(mb))
	for _, r := range ma {
		inA[r] = struct{}{}
	}
	for _, r := range mb {
		inB[r] = struct{}{}
	}
	// keptA and keptB are the indexes in ma and mb of the lines both hold.
	kept := func(m []rune, other map[rune]struct{}) []int {
		var k []int
		for i, r := range m {
			if _, ok := other[r]; ok {
				k = append(k, i)
			}
		}
		return k
	}
	keptA, keptB := kept(ma, inB), kept(mb, inA)
	if len(keptA) == len(ma) && len(keptB) == len(mb) {
		return dmp.DiffMainRunes(a, b, false)
	}
	ra, rb := make([]rune, len(keptA)), make([]rune, len(keptB))
	for k, i := range keptA {
		ra[k] = ma[i]
	}
	for k, i := range keptB {
		rb[k] = mb[i]
	}
	var out []diffmatchpatch.Diff
	add := func(op diffmatchpatch.Operation, rs []rune) {
		if len(rs) > 0 {
			out = append(out, diffmatchpatch.Diff{Type: op, Text: string(rs)})
		}
	}
	add(diffmatchpatch.DiffEqual, a[:pre])
	// i and j are the next lines of ma and mb; x and y those of ra and rb.
	i, j, x, y := 0, 0, 0, 0
	// upTo adds the lines of ma and mb before the pair (ia, jb) as deleted
	// and inserted.
	upTo := func(ia, jb int) {
		add(diffmatchpatch.DiffDelete, ma[i:ia])
		add(diffmatchpatch.DiffInsert, mb[j:jb])
		i, j = ia, jb
	}
	var equal []rune
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := len([]rune(d.Text))
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			x += n
		case diffmatchpatch.DiffInsert:
			y += n
		default:
			for range n {
				ia, jb := keptA[x], keptB[y]
				if ia > i || jb > j {
					add(diffmatchpatch.DiffEqual, equal)
					equal = equal[:0]
					upTo(ia, jb)
				}
				equal = append(equal, ma[ia])
				i, j, x, y = ia+1, jb+1, x+1, y+1
			}
		}
	}
	add(diffmatchpatch.DiffEqual, equal)
	upTo(len(ma), len(mb))
	add(diffmatchpatch.DiffEqual, a[len(a)-suf:])
	return dmp.DiffCleanupMerge(out)
}
