//go:build !amd64

package search

// pairSIMD is never set here: only amd64 has pairScanAVX2 and runScanAVX2.
var pairSIMD = false

func pairScanAVX2(p *byte, n, d int, t1, t2, m1, m2 byte) int {
	panic("pairScanAVX2 without AVX2")
}

func runScanAVX2(p *byte, n int, q *[8]byte) int {
	panic("runScanAVX2 without AVX2")
}
