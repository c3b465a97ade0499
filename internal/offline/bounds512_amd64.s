#include "textflag.h"
#include "go_asm.h"

// The AVX-512 kernels: eight lanes where the AVX2 ones have four, each
// lane with the same operations in the same order (the same values, bit
// for bit).

DATA b8idx<>+0(SB)/8, $0
DATA b8idx<>+8(SB)/8, $1
DATA b8idx<>+16(SB)/8, $2
DATA b8idx<>+24(SB)/8, $3
DATA b8idx<>+32(SB)/8, $4
DATA b8idx<>+40(SB)/8, $5
DATA b8idx<>+48(SB)/8, $6
DATA b8idx<>+56(SB)/8, $7
GLOBL b8idx<>(SB), RODATA|NOPTR, $64
DATA b8eight<>+0(SB)/8, $8
GLOBL b8eight<>(SB), RODATA|NOPTR, $8
DATA b8one<>+0(SB)/8, $1
GLOBL b8one<>(SB), RODATA|NOPTR, $8
DATA b8four<>+0(SB)/8, $4
GLOBL b8four<>(SB), RODATA|NOPTR, $8
DATA b8w511<>+0(SB)/4, $511
GLOBL b8w511<>(SB), RODATA|NOPTR, $4
DATA b8seven<>+0(SB)/8, $7
GLOBL b8seven<>(SB), RODATA|NOPTR, $8

// func scoreBounds8AVX512(a *boundsArgs)
//
// scoreBounds4AVX2 on a.n turns (a positive multiple of 8), eight at a
// time: a neighbour's relevance loaded where its link bit is set and 0
// elsewhere (a zero-masked load, for VBLENDVPD with zero), the shares
// picked by VPERMILPD from {f0, f1} pairs broadcast to the four 128-bit
// lanes, the product of the factors by cue and mark from sixteen (a.factors,
// VPERMI2PD), the event bests and length factors gathered (VGATHERDPD, the
// indices clamped as the AVX2 kernel's), the same fused multiply-adds and
// products in the same order; top and arg per lane k%8. The CPU must have
// AVX512F, BW and VL.
TEXT ·scoreBounds8AVX512(SB), NOSPLIT, $0-8
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
	VBROADCASTF32X4 boundsArgs_prev(AX), Z9
	VBROADCASTF32X4 boundsArgs_next(AX), Z8
	VMOVUPD         boundsArgs_factors(AX), Z4    // the factors 0 to 7...
	VMOVUPD         boundsArgs_factors+64(AX), Z5 // ... and 8 to 15
	VPBROADCASTQ    b8seven<>(SB), Z6             // the cue bits
	VBROADCASTSD    boundsArgs_far(AX), Z16
	VBROADCASTSD    boundsArgs_es(AX), Z17
	VPBROADCASTQ    b8one<>(SB), Z18   // bit 0
	VPBROADCASTQ    b8four<>(SB), Z19  // bit 2
	MOVL            boundsArgs_maxEvent(AX), R14
	VPBROADCASTD    R14, Y21           // the last event
	VPBROADCASTD    b8w511<>(SB), Y22  // the last length factor
	VPXORQ          Z10, Z10, Z10      // zero
	VPXORQ          Z12, Z12, Z12      // best per lane
	VMOVDQU64       b8idx<>(SB), Z14   // the lanes' offsets
	VPSUBQ          Z14, Z12, Z13      // its step's first turn (0 in all: minus the offsets)
	VPXORD          Y11, Y11, Y11      // OR of the words
	XORQ            CX, CX

b8loop:
	// s = x + wp*p1 + wn*n1 + far*(p2 + n2) (SI: two turns before), each
	// neighbour's relevance 0 unless its link bit is set.
	VPMOVZXBQ   (R8)(CX*1), Z0 // the link bytes
	VMOVUPD     16(SI)(CX*8), Z1
	VPTESTMQ    Z18, Z0, K1    // linkPrev
	VMOVUPD.Z   8(SI)(CX*8), K1, Z2
	VPSRLQ      $3, Z0, Z3     // linkPrevAsks at bit 1
	VPERMILPD   Z3, Z9, Z3
	VFMADD231PD Z2, Z3, Z1
	VPTESTMQ    Z19, Z0, K1    // linkNext
	VMOVUPD.Z   24(SI)(CX*8), K1, Z2
	VPSRLQ      $4, Z0, Z3     // linkNextAsks at bit 1
	VPERMILPD   Z3, Z8, Z3
	VFMADD231PD Z2, Z3, Z1
	VPSRLQ      $1, Z0, Z3
	VPANDQ      Z0, Z3, Z0     // bit 0: linkPrev and linkPrev2; bit 2: linkNext and linkNext2
	VPTESTMQ    Z18, Z0, K1
	VMOVUPD.Z   (SI)(CX*8), K1, Z2
	VPTESTMQ    Z19, Z0, K1
	VMOVUPD.Z   32(SI)(CX*8), K1, Z3
	VADDPD      Z3, Z2, Z2
	VFMADD231PD Z16, Z2, Z1

	// The event's share, for events >= 0 (gathered under that mask into
	// zeros: 0 elsewhere), the indices clamped to the last event as
	// unsigned.
	VMOVDQU     (R13)(CX*4), Y2
	VPMINUD     Y21, Y2, Y3
	VPCMPD      $5, Y10, Y2, K2 // event >= 0
	VPXORQ      Z0, Z0, Z0
	VGATHERDPD  (BX)(Y3*8), K2, Z0
	VFMADD231PD Z17, Z0, Z1

	// The factors: question (bit 0 of the cue byte, times relMargin),
	// counted (bit 1), dated (bit 2), speaker (the mark, bit 3), their
	// product from sixteen entries (boundsArgs.factors: the AVX2 kernel's
	// products)...
	VPMOVZXBQ  (R9)(CX*1), Z2
	VPMOVZXBQ  (R10)(CX*1), Z3
	VPSLLQ     $3, Z3, Z3
	VPTERNLOGQ $0xEA, Z3, Z6, Z2 // cue&7 | mark<<3
	VPERMI2PD  Z5, Z4, Z2
	VMULPD     Z2, Z1, Z1

	// ... and the length prior (words at most 511 here; long ORs them),
	// 0 for invisible turns (K1: their bytes).
	VMOVQ      (R11)(CX*1), X0
	VPTESTMB   X0, X0, K1
	VMOVDQU    (R12)(CX*4), Y0
	VPORD      Y0, Y11, Y11
	VPMINUD    Y22, Y0, Y0
	KXNORW     K2, K2, K2
	VGATHERDPD (DX)(Y0*8), K2, Z3
	VMULPD.Z   Z3, Z1, K1, Z1
	VMOVUPD    Z1, (DI)(CX*8)

	// The best per lane, the first among equals (its step's first turn,
	// the lanes' offsets added after the loop).
	VCMPPD       $0x1E, Z12, Z1, K1
	VMOVAPD      Z1, K1, Z12
	VPBROADCASTQ CX, K1, Z13

	ADDQ $8, CX
	CMPQ CX, boundsArgs_n(AX)
	JLT  b8loop

	VPADDQ    Z14, Z13, Z13
	VMOVUPD   Z12, boundsArgs_top(AX)
	VMOVDQU64 Z13, boundsArgs_arg(AX)
	VEXTRACTI128 $1, Y11, X1
	VPOR      X1, X11, X11
	VPSHUFD   $0x4E, X11, X1
	VPOR      X1, X11, X11
	VPSHUFD   $0xB1, X11, X1
	VPOR      X1, X11, X11
	VMOVD     X11, boundsArgs_long(AX)
	VZEROUPPER
	RET

// func listAtLeast8AVX512(xs *float64, n int, floor float64, dst *int) int
//
// listAtLeast4AVX2 eight at a time: the offsets of the xs at least floor
// (LE_OQ) compressed to dst (eight entries written at the next free one:
// dst has room for n, a positive multiple of 8). The CPU must have
// AVX512F.
TEXT ·listAtLeast8AVX512(SB), NOSPLIT, $0-40
	MOVQ         xs+0(FP), SI
	MOVQ         n+8(FP), R8
	VBROADCASTSD floor+16(FP), Z8
	MOVQ         dst+24(FP), DI
	VMOVDQU64    b8idx<>(SB), Z9
	VPBROADCASTQ b8eight<>(SB), Z10
	XORQ         R9, R9 // listed
	XORQ         CX, CX

l8loop:
	VCMPPD $0x12, (SI)(CX*8), Z8, K1 // floor <= xs (LE_OQ)
	KMOVW  K1, DX
	TESTQ  DX, DX
	JNE    l8list

l8next:
	VPADDQ Z10, Z9, Z9
	ADDQ   $8, CX
	CMPQ   CX, R8
	JLT    l8loop
	MOVQ   R9, ret+32(FP)
	VZEROUPPER
	RET

l8list:
	VPCOMPRESSQ Z9, K1, Z1
	VMOVDQU64   Z1, (DI)(R9*8)
	POPCNTL     DX, DX
	ADDQ        DX, R9
	JMP         l8next

DATA r8margin<>+0(SB)/8, $0x3ff0000000001000 // relMargin, 1 + 2^-40
GLOBL r8margin<>(SB), RODATA|NOPTR, $8

// One unit's event best, from lane x (low double of an X register), where
// the event is owned; else, to ovf (R8OVER).
#define R8EVENT(off, x, ovf) \
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
#define R8OVER(lane, next, ovf) \
ovf: \
	TESTQ DX, DX \
	JLT   next \
	LEAQ  lane(CX), DX \
	MOVQ  DX, (R14)(R8*8) \
	INCQ  R8 \
	JMP   next

// func relBounds8AVX512(a *relBoundsArgs)
//
// relBounds4AVX2 eight units at a time (a.n a positive multiple of 8): the
// rows at or above maxLo listed by VPCOMPRESSQ (eight entries written at
// the next free one: top has room for n), the relevance bounds with the
// same operations in the same order (the values of singlesGo), and the
// event bests one unit after the other where owned (the units of other
// events, not negative, listed in over). With pre, the units whose bound is
// at least preAt (GE_OQ) listed there too. The CPU must have AVX512F, BW and
// VL.
TEXT ·relBounds8AVX512(SB), NOSPLIT, $0-8
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
	VBROADCASTSD relBoundsArgs_maxLo(AX), Z8
	VBROADCASTSD relBoundsArgs_mean(AX), Z9
	VBROADCASTSD relBoundsArgs_perD(AX), Z10
	VBROADCASTSD relBoundsArgs_invLex(AX), Z11
	VBROADCASTSD r8margin<>(SB), Z12
	VMOVDQU64    b8idx<>(SB), Z13 // the lanes' offsets
	VPBROADCASTQ b8eight<>(SB), Z14
	MOVQ         relBoundsArgs_pre(AX), BX // the next free entry of pre
	VBROADCASTSD relBoundsArgs_preAt(AX), Z15

r8loop:
	// u, the cosine's upper bound; the rows at or above maxLo listed.
	VMOVUPD (SI)(CX*8), Z0
	VCMPPD  $0x1D, Z8, Z0, K1
	KMOVW   K1, DX
	TESTQ   DX, DX
	JNE     r8list

r8listed:
	// (lex*invLex + (u > mean ? (u-mean)*perD : 0)) * relMargin
	VSUBPD    Z9, Z0, Z2
	VMULPD    Z10, Z2, Z2
	VCMPPD    $0x1E, Z9, Z0, K2
	VMOVAPD.Z Z2, K2, Z2
	VMULPD    (R9)(CX*8), Z11, Z4
	VADDPD    Z2, Z4, Z4
	VMULPD    Z12, Z4, Z4
	VMOVUPD   Z4, (DI)(CX*8)
	TESTQ     BX, BX
	JEQ       r8prelisted

	// The units whose bound is at least preAt listed.
	VCMPPD $0x1D, Z15, Z4, K3
	KMOVW  K3, DX
	TESTQ  DX, DX
	JNE    r8pre

r8prelisted:
	TESTQ R10, R10
	JEQ   r8next

	// The event bests, one unit after the other, where owned.
	VPERMILPD      $1, X4, X6
	VEXTRACTF32X4  $1, Z4, X7
	VPERMILPD      $1, X7, X3
	R8EVENT(0, X4, r8o0)

r8e1:
	R8EVENT(4, X6, r8o1)

r8e2:
	R8EVENT(8, X7, r8o2)

r8e3:
	R8EVENT(12, X3, r8o3)

r8e4:
	VEXTRACTF32X4 $2, Z4, X0
	VPERMILPD     $1, X0, X6
	VEXTRACTF32X4 $3, Z4, X7
	VPERMILPD     $1, X7, X3
	R8EVENT(16, X0, r8o4)

r8e5:
	R8EVENT(20, X6, r8o5)

r8e6:
	R8EVENT(24, X7, r8o6)

r8e7:
	R8EVENT(28, X3, r8o7)

r8next:
	ADDQ $8, CX
	CMPQ CX, relBoundsArgs_n(AX)
	JLT  r8loop
	MOVQ  R13, relBoundsArgs_ntop(AX)
	MOVQ  R8, relBoundsArgs_nover(AX)
	TESTQ BX, BX
	JEQ   r8ret
	SUBQ  relBoundsArgs_pre(AX), BX
	SHRQ  $3, BX
	MOVQ  BX, relBoundsArgs_npre(AX)

r8ret:
	VZEROUPPER
	RET

r8pre:
	// The lanes of K3, as offsets from the first unit, at BX.
	VPBROADCASTQ CX, Z1
	VPADDQ       Z13, Z1, Z1
	VPCOMPRESSQ  Z1, K3, Z2
	VMOVDQU64    Z2, (BX)
	POPCNTL      DX, DX
	LEAQ         (BX)(DX*8), BX
	JMP          r8prelisted

	// The units of events not owned (out of the loop: rare).
	R8OVER(0, r8e1, r8o0)
	R8OVER(1, r8e2, r8o1)
	R8OVER(2, r8e3, r8o2)
	R8OVER(3, r8e4, r8o3)
	R8OVER(4, r8e5, r8o4)
	R8OVER(5, r8e6, r8o5)
	R8OVER(6, r8e7, r8o6)
	R8OVER(7, r8next, r8o7)

r8list:
	// The lanes of K1, as offsets from the first unit.
	VPBROADCASTQ CX, Z1
	VPADDQ       Z13, Z1, Z1
	VPCOMPRESSQ  Z1, K1, Z2
	VMOVDQU64    Z2, (R12)(R13*8)
	POPCNTL      DX, DX
	ADDQ         DX, R13
	JMP          r8listed

// func speakers16AVX512(ids *int32, dst *bool, n int, named *int32, k int)
//
// Sixteen ids a step: each compared with the k named ids (broadcast once
// into Z16 to Z23), the matches ORed in K1, and the bytes 1 where set, 0
// elsewhere, stored (VMOVDQU8 of ones under K1, zeroing).
TEXT ·speakers16AVX512(SB), NOSPLIT, $0-40
	MOVQ ids+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ named+24(FP), R8
	MOVQ k+32(FP), R9
	MOVL $0x01010101, AX
	VPBROADCASTD AX, X31 // sixteen bytes of 1
	// The named ids, broadcast (only the first k are compared; k of 0
	// marks nothing: K1 stays clear).
	VPBROADCASTD (R8), Z16
	VPBROADCASTD 4(R8), Z17
	VPBROADCASTD 8(R8), Z18
	VPBROADCASTD 12(R8), Z19
	VPBROADCASTD 16(R8), Z20
	VPBROADCASTD 20(R8), Z21
	VPBROADCASTD 24(R8), Z22
	VPBROADCASTD 28(R8), Z23
	XORQ BX, BX

sploop:
	CMPQ      BX, CX
	JGE       spdone
	VMOVDQU32 (SI)(BX*4), Z0
	KXORW     K1, K1, K1
	CMPQ      R9, $0
	JEQ       spstore
	VPCMPEQD  Z16, Z0, K1
	CMPQ      R9, $1
	JEQ       spstore
	VPCMPEQD  Z17, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $2
	JEQ       spstore
	VPCMPEQD  Z18, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $3
	JEQ       spstore
	VPCMPEQD  Z19, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $4
	JEQ       spstore
	VPCMPEQD  Z20, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $5
	JEQ       spstore
	VPCMPEQD  Z21, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $6
	JEQ       spstore
	VPCMPEQD  Z22, Z0, K2
	KORW      K2, K1, K1
	CMPQ      R9, $7
	JEQ       spstore
	VPCMPEQD  Z23, Z0, K2
	KORW      K2, K1, K1

spstore:
	VMOVDQU8.Z X31, K1, X1
	VMOVDQU8   X1, (DI)(BX*1)
	ADDQ       $16, BX
	JMP        sploop

spdone:
	VZEROUPPER
	RET
