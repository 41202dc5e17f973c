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
