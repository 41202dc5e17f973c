#include "textflag.h"

// func pairScanAVX2(p *byte, n, d int, t1, t2, m1, m2 byte) int
//
// The first i below n&^31 where p[i]|m1 == t1 and p[i+d]|m2 == t2, testing
// 32 positions at a time, or n&^31 when there is none. The caller makes
// sure that p[i+d+31] is inside its buffer for every i tested.
TEXT ·pairScanAVX2(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    d+16(FP), DX
	VPBROADCASTB t1+24(FP), Y1
	VPBROADCASTB t2+25(FP), Y2
	VPBROADCASTB m1+26(FP), Y3
	VPBROADCASTB m2+27(FP), Y4
	LEAQ    (SI)(DX*1), DI
	ANDQ    $~31, CX
	XORQ    BX, BX

loop:
	CMPQ    BX, CX
	JGE     none
	VMOVDQU (SI)(BX*1), Y5
	VMOVDQU (DI)(BX*1), Y6
	VPOR    Y3, Y5, Y5
	VPOR    Y4, Y6, Y6
	VPCMPEQB Y1, Y5, Y5
	VPCMPEQB Y2, Y6, Y6
	VPAND   Y5, Y6, Y6
	VPMOVMSKB Y6, AX
	TESTL   AX, AX
	JNZ     found
	ADDQ    $32, BX
	JMP     loop

found:
	BSFL    AX, AX
	ADDQ    AX, BX
	VZEROUPPER
	MOVQ    BX, ret+32(FP)
	RET

none:
	VZEROUPPER
	MOVQ    CX, ret+32(FP)
	RET

// func runScanAVX2(p *byte, n int, q *[8]byte) int
//
// The first i below n&^31 where p[i+k]-q[k] <= q[4+k] (bytes, unsigned)
// for k = 0 to 3, that is where each of four byte ranges holds in turn,
// testing 32 positions at a time, or n&^31 when there is none. The caller
// makes sure that p[i+34] is inside its buffer for every i tested.
TEXT ·runScanAVX2(SB), NOSPLIT, $0-32
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    q+16(FP), R8
	VPBROADCASTB 0(R8), Y1
	VPBROADCASTB 1(R8), Y2
	VPBROADCASTB 2(R8), Y3
	VPBROADCASTB 3(R8), Y4
	VPBROADCASTB 4(R8), Y5
	VPBROADCASTB 5(R8), Y6
	VPBROADCASTB 6(R8), Y7
	VPBROADCASTB 7(R8), Y8
	ANDQ    $~31, CX
	XORQ    BX, BX

rloop:
	CMPQ    BX, CX
	JGE     rnone
	VMOVDQU 0(SI)(BX*1), Y9
	VPSUBB  Y1, Y9, Y9
	VPMINUB Y5, Y9, Y10
	VPCMPEQB Y9, Y10, Y11
	VMOVDQU 1(SI)(BX*1), Y9
	VPSUBB  Y2, Y9, Y9
	VPMINUB Y6, Y9, Y10
	VPCMPEQB Y9, Y10, Y10
	VPAND   Y10, Y11, Y11
	VMOVDQU 2(SI)(BX*1), Y9
	VPSUBB  Y3, Y9, Y9
	VPMINUB Y7, Y9, Y10
	VPCMPEQB Y9, Y10, Y10
	VPAND   Y10, Y11, Y11
	VMOVDQU 3(SI)(BX*1), Y9
	VPSUBB  Y4, Y9, Y9
	VPMINUB Y8, Y9, Y10
	VPCMPEQB Y9, Y10, Y10
	VPAND   Y10, Y11, Y11
	VPMOVMSKB Y11, AX
	TESTL   AX, AX
	JNZ     rfound
	ADDQ    $32, BX
	JMP     rloop

rfound:
	BSFL    AX, AX
	ADDQ    AX, BX
	VZEROUPPER
	MOVQ    BX, ret+24(FP)
	RET

rnone:
	VZEROUPPER
	MOVQ    CX, ret+24(FP)
	RET
