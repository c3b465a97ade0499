#include "textflag.h"
#include "go_asm.h"

// Dword limits, and the lanes' turn numbers.
DATA bnd511<>+0(SB)/8, $511
GLOBL bnd511<>(SB), RODATA|NOPTR, $8
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
//
// Per four turns, a lane's byte (link, cue, speaker mark) zero-extended to
// its quadword: VBLENDVPD reads a bit shifted to bit 63, VPERMILPD one at
// bit 1 (picking f0 or f1 of a {f0, f1, f0, f1} factor).
TEXT ·scoreBounds4AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ boundsArgs_rel(AX), SI
	MOVQ boundsArgs_links(AX), R8
	MOVQ boundsArgs_cues(AX), R9
	MOVQ boundsArgs_named(AX), R10
	MOVQ boundsArgs_vis(AX), R11
	MOVQ boundsArgs_words(AX), R12
	MOVQ boundsArgs_event(AX), R13
	MOVQ boundsArgs_best(AX), BX
	MOVQ boundsArgs_lt(AX), DX
	MOVQ boundsArgs_out(AX), DI
	VMOVUPD boundsArgs_prev(AX), Y9
	VMOVUPD boundsArgs_next(AX), Y8
	VMOVUPD boundsArgs_question(AX), Y7
	VMOVUPD boundsArgs_counted(AX), Y6
	VMOVUPD boundsArgs_dated(AX), Y5
	VMOVUPD boundsArgs_speaker(AX), Y4
	VXORPD  Y10, Y10, Y10                     // zero
	VXORPD  Y12, Y12, Y12                     // best per lane
	VPXOR   Y13, Y13, Y13                     // its turn
	VMOVDQU bndidx<>(SB), Y14                 // the lanes' turns
	VPXOR   X11, X11, X11                     // OR of the words
	XORQ    CX, CX

loop:
	// s = x + wp*p1 + wn*n1 + far*(p2 + n2) (SI: two turns before), each
	// neighbour's relevance zeroed unless its link bit is set.
	VPMOVZXBQ   (R8)(CX*1), Y0 // the link bytes
	VMOVUPD     16(SI)(CX*8), Y1
	VPSLLQ      $63, Y0, Y2    // linkPrev
	VBLENDVPD   Y2, 8(SI)(CX*8), Y10, Y2
	VPSRLQ      $3, Y0, Y3     // linkPrevAsks at bit 1
	VPERMILPD   Y3, Y9, Y3
	VFMADD231PD Y2, Y3, Y1
	VPSLLQ      $61, Y0, Y2    // linkNext
	VBLENDVPD   Y2, 24(SI)(CX*8), Y10, Y2
	VPSRLQ      $4, Y0, Y3     // linkNextAsks at bit 1
	VPERMILPD   Y3, Y8, Y3
	VFMADD231PD Y2, Y3, Y1
	VPSRLQ      $1, Y0, Y3
	VPAND       Y0, Y3, Y0     // bit 0: linkPrev and linkPrev2; bit 2: linkNext and linkNext2
	VPSLLQ      $63, Y0, Y2
	VBLENDVPD   Y2, (SI)(CX*8), Y10, Y2
	VPSLLQ      $61, Y0, Y3
	VBLENDVPD   Y3, 32(SI)(CX*8), Y10, Y3
	VADDPD      Y3, Y2, Y2
	VFMADD231PD boundsArgs_far(AX), Y2, Y1

	// The event's share, for events >= 0: the event bests loaded one
	// at a time (four loads are faster than a gather here), the indices
	// clamped to the last event as unsigned (the negative ones too, then
	// zeroed by their sign).
	MOVLQSX     (R13)(CX*4), R14
	CMPQ        R14, boundsArgs_maxEvent(AX)
	CMOVQHI     boundsArgs_maxEvent(AX), R14
	VMOVSD      (BX)(R14*8), X0
	MOVLQSX     4(R13)(CX*4), R14
	CMPQ        R14, boundsArgs_maxEvent(AX)
	CMOVQHI     boundsArgs_maxEvent(AX), R14
	VMOVHPD     (BX)(R14*8), X0, X0
	MOVLQSX     8(R13)(CX*4), R14
	CMPQ        R14, boundsArgs_maxEvent(AX)
	CMOVQHI     boundsArgs_maxEvent(AX), R14
	VMOVSD      (BX)(R14*8), X2
	MOVLQSX     12(R13)(CX*4), R14
	CMPQ        R14, boundsArgs_maxEvent(AX)
	CMOVQHI     boundsArgs_maxEvent(AX), R14
	VMOVHPD     (BX)(R14*8), X2, X2
	VINSERTF128 $1, X2, Y0, Y0
	VPMOVSXDQ   (R13)(CX*4), Y2
	VBLENDVPD   Y2, Y10, Y0, Y0
	VFMADD231PD boundsArgs_es(AX), Y0, Y1

	// The factors: question (bit 0 of the cue byte, times relMargin),
	// counted (bit 1), dated (bit 2), speaker (the mark)...
	VPMOVZXBQ (R9)(CX*1), Y0
	VPADDQ    Y0, Y0, Y2
	VPERMILPD Y2, Y7, Y2
	VPERMILPD Y0, Y6, Y3
	VMULPD    Y3, Y2, Y2
	VPSRLQ    $1, Y0, Y3
	VPERMILPD Y3, Y5, Y3
	VMULPD    Y3, Y2, Y2
	VPMOVZXBQ (R10)(CX*1), Y3
	VPADDQ    Y3, Y3, Y3
	VPERMILPD Y3, Y4, Y3
	VMULPD    Y3, Y2, Y2
	VMULPD    Y2, Y1, Y1

	// ... and the length prior (words at most 511 here; long ORs them),
	// loaded one at a time as the event bests.
	VMOVDQU     (R12)(CX*4), X0
	VPOR        X0, X11, X11
	MOVL        (R12)(CX*4), R14
	CMPQ        R14, $511
	CMOVQHI     bnd511<>(SB), R14
	VMOVSD      (DX)(R14*8), X0
	MOVL        4(R12)(CX*4), R14
	CMPQ        R14, $511
	CMOVQHI     bnd511<>(SB), R14
	VMOVHPD     (DX)(R14*8), X0, X0
	MOVL        8(R12)(CX*4), R14
	CMPQ        R14, $511
	CMOVQHI     bnd511<>(SB), R14
	VMOVSD      (DX)(R14*8), X3
	MOVL        12(R12)(CX*4), R14
	CMPQ        R14, $511
	CMOVQHI     bnd511<>(SB), R14
	VMOVHPD     (DX)(R14*8), X3, X3
	VINSERTF128 $1, X3, Y0, Y0
	VMULPD      Y0, Y1, Y1

	// Invisible turns: 0.
	VPMOVZXBQ (R11)(CX*1), Y0
	VPCMPEQQ  Y10, Y0, Y0
	VANDNPD   Y1, Y0, Y1
	VMOVUPD   Y1, (DI)(CX*8)

	// The best per lane, the first among equals.
	VCMPPD    $0x1E, Y12, Y1, Y0
	VBLENDVPD Y0, Y1, Y12, Y12
	VBLENDVPD Y0, Y14, Y13, Y13
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

// One unit's event best, from lane x (low double of an X register), where
// the event is owned; else, to ovf (R4OVER).
#define R4EVENT(off, x, ovf) \
	MOVLQSX off(R10)(CX*4), DX \
	CMPQ    DX, relBoundsArgs_eLo(AX) \
	JLT     ovf \
	CMPQ    DX, relBoundsArgs_eHi(AX) \
	JGE     ovf \
	VMOVSD  (R11)(DX*8), X5 \
	VMAXSD  x, X5, X5 \
	VMOVSD  X5, (R11)(DX*8)

// The unit of lane (an event not owned) listed in over unless its event
// is negative (none), then back to next.
#define R4OVER(lane, next, ovf) \
ovf: \
	TESTQ DX, DX \
	JLT   next \
	LEAQ  lane(CX), DX \
	MOVQ  DX, (R14)(R8*8) \
	INCQ  R8 \
	JMP   next

// func relBounds4AVX2(a *relBoundsArgs)
TEXT ·relBounds4AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ relBoundsArgs_hi(AX), SI
	MOVQ relBoundsArgs_lex(AX), R9
	MOVQ relBoundsArgs_relHi(AX), DI
	MOVQ relBoundsArgs_events(AX), R10
	MOVQ relBoundsArgs_eb(AX), R11
	MOVQ relBoundsArgs_top(AX), R12
	MOVQ relBoundsArgs_over(AX), R14
	XORQ R13, R13 // rows listed
	XORQ R8, R8   // units listed in over
	XORQ CX, CX
	VBROADCASTSD relBoundsArgs_maxLo(AX), Y8
	VBROADCASTSD relBoundsArgs_mean(AX), Y9
	VBROADCASTSD relBoundsArgs_perD(AX), Y10
	VBROADCASTSD relBoundsArgs_invLex(AX), Y11
	VBROADCASTSD rbMargin<>(SB), Y12

rloop:
	// u, the cosine's upper bound; the rows at or above maxLo listed.
	VMOVUPD   (SI)(CX*8), Y0
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

	// The event bests, one unit after the other, where the event is
	// owned (the units of others, not negative, listed in over), from
	// the lanes of Y4 (VEX encodings throughout: a legacy SSE instruction
	// after 256-bit ones costs a state transition each time).
	VPERMILPD    $1, X4, X6
	VEXTRACTF128 $1, Y4, X7
	VPERMILPD    $1, X7, X3
	R4EVENT(0, X4, ro0)

re1:
	R4EVENT(4, X6, ro1)

re2:
	R4EVENT(8, X7, ro2)

re3:
	R4EVENT(12, X3, ro3)

rnext:
	ADDQ $4, CX
	CMPQ CX, relBoundsArgs_n(AX)
	JLT  rloop
	MOVQ R13, relBoundsArgs_ntop(AX)
	MOVQ R8, relBoundsArgs_nover(AX)
	VZEROUPPER
	RET

	// The units of events not owned (out of the loop: rare).
	R4OVER(0, re1, ro0)
	R4OVER(1, re2, ro1)
	R4OVER(2, re3, ro2)
	R4OVER(3, rnext, ro3)

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
