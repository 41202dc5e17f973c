package editmatch

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
)

// keptSums filters starts, windows whose lines are want's but for white
// space at their ends, down to those whose lines may also be as Kept
// needs them: byte for byte where newText does not keep its line of
// oldText, and, where it does (and the line is not blank), at the column
// of want's line, at one tab width of 4, 8 or 2 for the whole window.
// Which line of a window needs which differs along newText, so that no
// one scan finds them; sums do. Each such line of want gets a random
// weight, each spelling of a line (or each column) a random value, and a
// window passes where the weighted sum of its lines' values is want's: a
// correlation, computed by number-theoretic transforms in time n log n.
// A window that Kept finds always passes; one that it does not passes
// by chance, about 2 in a billion, and Kept checks each window that
// passes line by line.
func (t *Text) keptSums(want []string, isKept []bool, starts []int) []int {
	n, m := len(t.lines), len(want)
	size := 1
	for size < n+m {
		size <<= 1
	}
	value := map[string]uint64{}
	valueOf := func(key string) uint64 {
		v, ok := value[key]
		if !ok {
			v = 1 + rand.Uint64N(nttMod-1)
			value[key] = v
		}
		return v
	}
	widths := []int{4, 8, 2}
	colKey := func(w int, s string) string {
		return strconv.Itoa(w) + ":" + strconv.Itoa(column(leadingSpace(s), w))
	}
	// exactW weighs want's lines not kept, byte for byte, reversed for
	// the correlation; colsW those kept, not blank, by column. Their
	// targets: want's own sums.
	exactW, colsW := make([]uint64, size), make([]uint64, size)
	var exactT uint64
	colsT := make([]uint64, len(widths))
	for i, l := range want {
		r := 1 + rand.Uint64N(nttMod-1)
		switch {
		case !isKept[i]:
			exactW[m-1-i] = r
			exactT = (exactT + r*valueOf("="+l)) % nttMod
		case strings.TrimSpace(l) != "":
			colsW[m-1-i] = r
			for k, w := range widths {
				colsT[k] = (colsT[k] + r*valueOf(colKey(w, l))) % nttMod
			}
		}
	}
	exactL := make([]uint64, size)
	for j := range n {
		exactL[j] = valueOf("=" + t.content(j))
	}
	ntt(exactW, false)
	ntt(exactL, false)
	ntt(colsW, false)
	for i := range exactW {
		exactW[i] = exactW[i] * exactL[i] % nttMod
	}
	// The window at s sums at s+m-1 of the correlation.
	pass := make([]bool, len(starts))
	cols, sum := make([]uint64, size), make([]uint64, size)
	for k, w := range widths {
		clear(cols)
		for j := range n {
			cols[j] = valueOf(colKey(w, t.content(j)))
		}
		ntt(cols, false)
		for i := range sum {
			sum[i] = (exactW[i] + colsW[i]*cols[i]) % nttMod
		}
		ntt(sum, true)
		target := (exactT + colsT[k]) % nttMod
		for x, s := range starts {
			pass[x] = pass[x] || sum[s+m-1] == target
		}
	}
	// Three transforms, then two a tab width.
	t.steps += (3+2*len(widths))*size*bits.Len(uint(size)) + len(widths)*(n+len(starts)) + n + m
	kept := starts[:0]
	for x, s := range starts {
		if pass[x] {
			kept = append(kept, s)
		}
	}
	return kept
}

// nttMod is the prime 119·2^23+1 of the number-theoretic transform, whose
// root 3 has order 2^23: transforms of up to 8 million entries, where a
// file of 2 MiB has 2 million lines at most.
const nttMod = 998244353

// ntt transforms a (of a power of two entries) in place, modulo nttMod;
// inverse undoes it, scaled back.
func ntt(a []uint64, inverse bool) {
	n := len(a)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for length := 2; length <= n; length <<= 1 {
		w := powMod(3, (nttMod-1)/uint64(length))
		if inverse {
			w = powMod(w, nttMod-2)
		}
		half := length / 2
		roots := make([]uint64, half)
		roots[0] = 1
		for k := 1; k < half; k++ {
			roots[k] = roots[k-1] * w % nttMod
		}
		for i := 0; i < n; i += length {
			for k := range half {
				u, v := a[i+k], a[i+k+half]*roots[k]%nttMod
				a[i+k] = (u + v) % nttMod
				a[i+k+half] = (u + nttMod - v) % nttMod
			}
		}
	}
	if inverse {
		inv := powMod(uint64(n), nttMod-2)
		for i := range a {
			a[i] = a[i] * inv % nttMod
		}
	}
}

// powMod is b^e modulo nttMod.
func powMod(b, e uint64) uint64 {
	r := uint64(1)
	for b %= nttMod; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = r * b % nttMod
		}
		b = b * b % nttMod
	}
	return r
}
