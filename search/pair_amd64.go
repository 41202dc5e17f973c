package search

import "golang.org/x/sys/cpu"

// pairSIMD is set where pairScanAVX2 and runScanAVX2 can run.
var pairSIMD = cpu.X86.HasAVX2

// pairScanAVX2 tests 32 positions at a time for a pair of bytes: see
// pair_amd64.s.
//
//go:noescape
func pairScanAVX2(p *byte, n, d int, t1, t2, m1, m2 byte) int

// runScanAVX2 tests 32 positions at a time for a run of four byte ranges:
// see pair_amd64.s.
//
//go:noescape
func runScanAVX2(p *byte, n int, q *[8]byte) int
