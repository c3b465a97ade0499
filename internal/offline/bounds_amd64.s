#include "textflag.h"
#include "go_asm.h"

// Dword masks and limits, and the lanes' turn numbers.
DATA bnd63<>+0(SB)/8, $0x0000003f0000003f
DATA bnd63<>+8(SB)/8, $0x0000003f0000003f
GLOBL bnd63<>(SB), RODATA|NOPTR, $16
DATA bnd7<>+0(SB)/8, $0x0000000700000007
DATA bnd7<>+8(SB)/8, $0x0000000700000007
GLOBL bnd7<>(SB), RODATA|NOPTR, $16
DATA bnd511<>+0(SB)/8, $0x000001ff000001ff
DATA bnd511<>+8(SB)/8, $0x000001ff000001ff
GLOBL bnd511<>(SB), RODATA|NOPTR, $16
DATA bndidx<>+0(SB)/8, $0
DATA bndidx<>+8(SB)/8, $1
DATA bndidx<>+16(SB)/8, $2
DATA bndidx<>+24(SB)/8, $3
GLOBL bndidx<>(SB), RODATA|NOPTR, $32
DATA bnd4<>+0(SB)/8, $4
DATA bnd4<>+8(SB)/8, $4
DATA bnd4<>+16(SB)/8, $4
DATA bnd4<>+24(SB)/8, $4
GLOBL bnd4<>(SB), RODATA|NOPTR, $32

// func scoreBounds4AVX2(a *boundsArgs)
TEXT ·scoreBounds4AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ boundsArgs_rel(AX), SI
	MOVQ boundsArgs_links(AX), R8
	MOVQ boundsArgs_cues(AX), R9
	MOVQ boundsArgs_named(AX), R10
	MOVQ boundsArgs_vis(AX), R11
	MOVQ boundsArgs_words(AX), R12
	MOVQ boundsArgs_event(AX), R13
	MOVQ boundsArgs_w(AX), BX
	MOVQ boundsArgs_out(AX), DI
	VPBROADCASTD boundsArgs_maxEvent(AX), X15 // the last event (below 2^31)
	VXORPD  Y12, Y12, Y12                     // best per lane
	VPXOR   Y13, Y13, Y13                     // its turn
	VMOVDQU bndidx<>(SB), Y14                 // the lanes' turns
	VPXOR   X11, X11, X11                     // OR of the words
	XORQ    CX, CX

loop:
	// The neighbours' weights by link byte (rows of four in w).
	VPMOVZXBD  (R8)(CX*1), X6
	VPAND      bnd63<>(SB), X6, X6
	VPSLLD     $2, X6, X6
	VPCMPEQD   Y0, Y0, Y0
	VGATHERDPD Y0, (BX)(X6*8), Y2   // one before
	VPCMPEQD   Y0, Y0, Y0
	VGATHERDPD Y0, 8(BX)(X6*8), Y3  // two before
	VPCMPEQD   Y0, Y0, Y0
	VGATHERDPD Y0, 16(BX)(X6*8), Y4 // one after
	VPCMPEQD   Y0, Y0, Y0
	VGATHERDPD Y0, 24(BX)(X6*8), Y5 // two after

	// s = x + w0*p1 + w2*n1 + w1*p2 + w3*n2 (SI: two turns before).
	VMOVUPD     16(SI)(CX*8), Y7
	VMOVUPD     8(SI)(CX*8), Y1
	VFMADD231PD Y1, Y2, Y7
	VMOVUPD     24(SI)(CX*8), Y1
	VFMADD231PD Y1, Y4, Y7
	VMOVUPD     (SI)(CX*8), Y1
	VFMADD231PD Y1, Y3, Y7
	VMOVUPD     32(SI)(CX*8), Y1
	VFMADD231PD Y1, Y5, Y7

	// The event's share, for events >= 0 (clamped to the last).
	VMOVDQU      (R13)(CX*4), X8
	VPMINSD      X15, X8, X8
	VPCMPEQD     X0, X0, X0
	VPCMPGTD     X0, X8, X9
	VPMOVSXDQ    X9, Y9
	VXORPD       Y10, Y10, Y10
	MOVQ         boundsArgs_best(AX), DX
	VGATHERDPD   Y9, (DX)(X8*8), Y10
	VBROADCASTSD boundsArgs_es(AX), Y1
	VFMADD231PD  Y10, Y1, Y7

	// The factors: by cue byte and speaker mark, and the length prior
	// (words at most 511 here; long ORs them).
	VPMOVZXBD  (R9)(CX*1), X6
	VPAND      bnd7<>(SB), X6, X6
	VPMOVZXBD  (R10)(CX*1), X8
	VPSLLD     $3, X8, X8
	VPOR       X8, X6, X6
	VPCMPEQD   Y0, Y0, Y0
	MOVQ       boundsArgs_g(AX), DX
	VGATHERDPD Y0, (DX)(X6*8), Y2
	VMOVDQU    (R12)(CX*4), X8
	VPOR       X8, X11, X11
	VPMINUD    bnd511<>(SB), X8, X8
	VPCMPEQD   Y0, Y0, Y0
	MOVQ       boundsArgs_lt(AX), DX
	VGATHERDPD Y0, (DX)(X8*8), Y3
	VMULPD     Y3, Y2, Y2
	VMULPD     Y2, Y7, Y7

	// Invisible turns: 0.
	VPMOVZXBQ (R11)(CX*1), Y1
	VPXOR     Y0, Y0, Y0
	VPCMPEQQ  Y0, Y1, Y1
	VANDNPD   Y7, Y1, Y7
	VMOVUPD   Y7, (DI)(CX*8)

	// The best per lane, the first among equals.
	VCMPPD    $0x1E, Y12, Y7, Y1
	VBLENDVPD Y1, Y7, Y12, Y12
	VBLENDVPD Y1, Y14, Y13, Y13
	VPADDQ    bnd4<>(SB), Y14, Y14

	ADDQ $4, CX
	CMPQ CX, boundsArgs_n(AX)
	JLT  loop

	VMOVUPD Y12, boundsArgs_top(AX)
	VMOVDQU Y13, boundsArgs_arg(AX)
	VPSHUFD $0x4E, X11, X1
	VPOR    X1, X11, X11
	VPSHUFD $0xB1, X11, X1
	VPOR    X1, X11, X11
	VMOVD   X11, boundsArgs_long(AX)
	VZEROUPPER
	RET

DATA rbMargin<>+0(SB)/8, $0x3ff0000000001000 // relMargin, 1 + 2^-40
GLOBL rbMargin<>(SB), RODATA|NOPTR, $8

// func relBounds4AVX2(a *relBoundsArgs)
TEXT ·relBounds4AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ relBoundsArgs_est(AX), SI
	MOVQ relBoundsArgs_bound(AX), R8
	MOVQ relBoundsArgs_lex(AX), R9
	MOVQ relBoundsArgs_relHi(AX), DI
	MOVQ relBoundsArgs_events(AX), R10
	MOVQ relBoundsArgs_eb(AX), R11
	MOVQ relBoundsArgs_top(AX), R12
	XORQ R13, R13 // rows listed
	XORQ CX, CX
	VBROADCASTSD relBoundsArgs_maxLo(AX), Y8
	VBROADCASTSD relBoundsArgs_mean(AX), Y9
	VBROADCASTSD relBoundsArgs_perD(AX), Y10
	VBROADCASTSD relBoundsArgs_invLex(AX), Y11
	VBROADCASTSD rbMargin<>(SB), Y12

rloop:
	// u = est + bound; the rows at or above maxLo listed.
	VMOVUPD   (SI)(CX*8), Y0
	VADDPD    (R8)(CX*8), Y0, Y0
	VCMPPD    $0x1D, Y8, Y0, Y1
	VMOVMSKPD Y1, DX
	TESTQ     DX, DX
	JNE       rlist

rlisted:
	// (lex*invLex + (u > mean ? (u-mean)*perD : 0)) * relMargin
	VSUBPD  Y9, Y0, Y2
	VMULPD  Y10, Y2, Y2
	VCMPPD  $0x1E, Y9, Y0, Y3
	VANDPD  Y3, Y2, Y2
	VMULPD  (R9)(CX*8), Y11, Y4
	VADDPD  Y2, Y4, Y4
	VMULPD  Y12, Y4, Y4
	VMOVUPD Y4, (DI)(CX*8)
	TESTQ   R10, R10
	JEQ     rnext

	// The event bests, one unit after the other (events < 0: none), from
	// the lanes of Y4 (VEX encodings throughout: a legacy SSE instruction
	// after 256-bit ones costs a state transition each time).
	VPERMILPD    $1, X4, X6
	VEXTRACTF128 $1, Y4, X7
	VPERMILPD    $1, X7, X3
	MOVLQSX (R10)(CX*4), DX
	TESTQ   DX, DX
	JLT     re1
	CMPQ    DX, relBoundsArgs_maxEvent(AX)
	JGT     rbad
	VMOVSD  (R11)(DX*8), X5
	VMAXSD  X4, X5, X5
	VMOVSD  X5, (R11)(DX*8)

re1:
	MOVLQSX 4(R10)(CX*4), DX
	TESTQ   DX, DX
	JLT     re2
	CMPQ    DX, relBoundsArgs_maxEvent(AX)
	JGT     rbad
	VMOVSD  (R11)(DX*8), X5
	VMAXSD  X6, X5, X5
	VMOVSD  X5, (R11)(DX*8)

re2:
	MOVLQSX 8(R10)(CX*4), DX
	TESTQ   DX, DX
	JLT     re3
	CMPQ    DX, relBoundsArgs_maxEvent(AX)
	JGT     rbad
	VMOVSD  (R11)(DX*8), X5
	VMAXSD  X7, X5, X5
	VMOVSD  X5, (R11)(DX*8)

re3:
	MOVLQSX 12(R10)(CX*4), DX
	TESTQ   DX, DX
	JLT     rnext
	CMPQ    DX, relBoundsArgs_maxEvent(AX)
	JGT     rbad
	VMOVSD  (R11)(DX*8), X5
	VMAXSD  X3, X5, X5
	VMOVSD  X5, (R11)(DX*8)

rnext:
	ADDQ $4, CX
	CMPQ CX, relBoundsArgs_n(AX)
	JLT  rloop
	MOVQ R13, relBoundsArgs_ntop(AX)
	VZEROUPPER
	RET

rlist:
	// The lanes of DX, as offsets from the first unit.
	TESTQ $1, DX
	JEQ   rl1
	MOVQ  CX, (R12)(R13*8)
	INCQ  R13

rl1:
	TESTQ $2, DX
	JEQ   rl2
	LEAQ  1(CX), BX
	MOVQ  BX, (R12)(R13*8)
	INCQ  R13

rl2:
	TESTQ $4, DX
	JEQ   rl3
	LEAQ  2(CX), BX
	MOVQ  BX, (R12)(R13*8)
	INCQ  R13

rl3:
	TESTQ $8, DX
	JEQ   rlisted
	LEAQ  3(CX), BX
	MOVQ  BX, (R12)(R13*8)
	INCQ  R13
	JMP   rlisted

rbad:
	MOVQ $1, DX
	MOVQ DX, relBoundsArgs_bad(AX)
	VZEROUPPER
	RET

// func listAtLeast4AVX2(xs *float64, n int, floor float64, dst *int) int
TEXT ·listAtLeast4AVX2(SB), NOSPLIT, $0-40
	MOVQ         xs+0(FP), SI
	MOVQ         n+8(FP), R8
	VBROADCASTSD floor+16(FP), Y8
	MOVQ         dst+24(FP), DI
	XORQ         R9, R9 // listed
	XORQ         CX, CX

lloop:
	VCMPPD    $0x12, (SI)(CX*8), Y8, Y1 // floor <= xs (LE_OQ)
	VMOVMSKPD Y1, DX
	TESTQ     DX, DX
	JNE       llist

lnext:
	ADDQ $4, CX
	CMPQ CX, R8
	JLT  lloop
	MOVQ R9, ret+32(FP)
	VZEROUPPER
	RET

llist:
	TESTQ $1, DX
	JEQ   ll1
	MOVQ  CX, (DI)(R9*8)
	INCQ  R9

ll1:
	TESTQ $2, DX
	JEQ   ll2
	LEAQ  1(CX), BX
	MOVQ  BX, (DI)(R9*8)
	INCQ  R9

ll2:
	TESTQ $4, DX
	JEQ   ll3
	LEAQ  2(CX), BX
	MOVQ  BX, (DI)(R9*8)
	INCQ  R9

ll3:
	TESTQ $8, DX
	JEQ   lnext
	LEAQ  3(CX), BX
	MOVQ  BX, (DI)(R9*8)
	INCQ  R9
	JMP   lnext

// func maxAbove4AVX2(xs *float64, n int) float64
TEXT ·maxAbove4AVX2(SB), NOSPLIT, $0-24
	MOVQ   xs+0(FP), SI
	MOVQ   n+8(FP), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ   CX, CX

mloop:
	// VMAXPD keeps its second source unless the first is greater: acc
	// unless x > acc, NaN x included (as the Go loop).
	VMOVUPD (SI)(CX*8), Y2
	VMAXPD  Y0, Y2, Y0
	VMOVUPD 32(SI)(CX*8), Y3
	VMAXPD  Y1, Y3, Y1
	ADDQ    $8, CX
	CMPQ    CX, R8
	JLT     mloop
	VMAXPD  Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPD  X1, X0, X0
	VPERMILPD $1, X0, X1
	VMAXSD  X1, X0, X0
	VMOVSD  X0, ret+16(FP)
	VZEROUPPER
	RET
