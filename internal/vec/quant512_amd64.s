#include "textflag.h"
#include "go_asm.h"

// The AVX-512 kernels: the same integer sums as the AVX2 ones (exact, in
// any order) and, per row, the same float operations in the same order
// (lane-wise on eight rows instead of four).

// func dotI8AVX512(p []int16, codes []int8, dim int, out []int32)
//
// dotI8 with AVX-512 and VNNI: 32 bytes sign-extended to words by one
// VPMOVSXBW, multiplied by the query words and added in pairs into the
// doublewords by VPDPWSSD (without saturation: the caller bounds the
// sums); a last 16 bytes with VEX VPMADDWD. dim must be a positive
// multiple of 16; the CPU must have AVX512F, BW, VL and VNNI.
TEXT ·dotI8AVX512(SB), NOSPLIT, $0-80
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ out_base+56(FP), DX
	MOVQ out_len+64(FP), BX
	MOVQ CX, R8
	ANDQ $-32, R8 // the bytes read 32 at a time

z8loop2:
	CMPQ BX, $2
	JLT  z8loop1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	LEAQ   (DI)(CX*1), R9
	XORQ   AX, AX
	MOVQ   SI, R10

z8inner2:
	CMPQ      AX, R8
	JGE       z8tail2
	VPMOVSXBW (DI)(AX*1), Z2
	VPMOVSXBW (R9)(AX*1), Z3
	VMOVDQU64 (R10), Z4
	VPDPWSSD  Z4, Z2, Z0
	VPDPWSSD  Z4, Z3, Z1
	ADDQ      $32, AX
	ADDQ      $64, R10
	JMP       z8inner2

z8tail2:
	CMPQ      AX, CX
	JGE       z8sum2
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW (R9)(AX*1), Y3
	VPMADDWD  (R10), Y2, Y2
	VPMADDWD  (R10), Y3, Y3
	VPADDD    Z2, Z0, Z0 // the upper halves are zero (VEX)
	VPADDD    Z3, Z1, Z1

z8sum2:
	VEXTRACTI64X4 $1, Z0, Y2
	VPADDD        Y2, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y3
	VPADDD        Y3, Y1, Y1
	VPHADDD       Y1, Y0, Y0 // row 0 pairs, row 1 pairs, per 128-bit lane
	VEXTRACTI128  $1, Y0, X2
	VPADDD        X2, X0, X0
	VPHADDD       X0, X0, X0 // r0, r1
	VMOVQ         X0, (DX)
	ADDQ          $8, DX
	LEAQ          (R9)(CX*1), DI
	SUBQ          $2, BX
	JMP           z8loop2

z8loop1:
	CMPQ   BX, $0
	JEQ    z8done
	VPXORD Z0, Z0, Z0
	XORQ   AX, AX
	MOVQ   SI, R10

z8inner1:
	CMPQ      AX, R8
	JGE       z8tail1
	VPMOVSXBW (DI)(AX*1), Z2
	VPDPWSSD  (R10), Z2, Z0
	ADDQ      $32, AX
	ADDQ      $64, R10
	JMP       z8inner1

z8tail1:
	CMPQ      AX, CX
	JGE       z8sum1
	VPMOVSXBW (DI)(AX*1), Y2
	VPMADDWD  (R10), Y2, Y2
	VPADDD    Z2, Z0, Z0

z8sum1:
	VEXTRACTI64X4 $1, Z0, Y2
	VPADDD        Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X2
	VPADDD        X2, X0, X0
	VPSHUFD       $0x4E, X0, X2
	VPADDD        X2, X0, X0
	VPSHUFD       $0xB1, X0, X2
	VPADDD        X2, X0, X0
	VMOVD         X0, (DX)
	ADDQ          $4, DX
	ADDQ          CX, DI
	DECQ          BX
	JMP           z8loop1

z8done:
	VZEROUPPER
	RET

// The dwords 0, 2, ..., 14, then 1, 3, ..., 15 (VPERMD), and 0 to 7.
DATA s8perm<>+0(SB)/4, $0
DATA s8perm<>+4(SB)/4, $2
DATA s8perm<>+8(SB)/4, $4
DATA s8perm<>+12(SB)/4, $6
DATA s8perm<>+16(SB)/4, $8
DATA s8perm<>+20(SB)/4, $10
DATA s8perm<>+24(SB)/4, $12
DATA s8perm<>+28(SB)/4, $14
DATA s8perm<>+32(SB)/4, $1
DATA s8perm<>+36(SB)/4, $3
DATA s8perm<>+40(SB)/4, $5
DATA s8perm<>+44(SB)/4, $7
DATA s8perm<>+48(SB)/4, $9
DATA s8perm<>+52(SB)/4, $11
DATA s8perm<>+56(SB)/4, $13
DATA s8perm<>+60(SB)/4, $15
GLOBL s8perm<>(SB), RODATA|NOPTR, $64
DATA s8idx<>+0(SB)/4, $0
DATA s8idx<>+4(SB)/4, $1
DATA s8idx<>+8(SB)/4, $2
DATA s8idx<>+12(SB)/4, $3
DATA s8idx<>+16(SB)/4, $4
DATA s8idx<>+20(SB)/4, $5
DATA s8idx<>+24(SB)/4, $6
DATA s8idx<>+28(SB)/4, $7
GLOBL s8idx<>(SB), RODATA|NOPTR, $32

// The dwords 0, 4, 8, 12, 2, 6, 10, 14 (VPERMD: rows 0 to 3 from lanes
// 0 to 3, rows 4 to 7 from their third dwords), the rest unused.
DATA s8rows<>+0(SB)/4, $0
DATA s8rows<>+4(SB)/4, $4
DATA s8rows<>+8(SB)/4, $8
DATA s8rows<>+12(SB)/4, $12
DATA s8rows<>+16(SB)/4, $2
DATA s8rows<>+20(SB)/4, $6
DATA s8rows<>+24(SB)/4, $10
DATA s8rows<>+28(SB)/4, $14
DATA s8rows<>+32(SB)/8, $0
DATA s8rows<>+40(SB)/8, $0
DATA s8rows<>+48(SB)/8, $0
DATA s8rows<>+56(SB)/8, $0
GLOBL s8rows<>(SB), RODATA|NOPTR, $64

// One row's 64 code bytes at addr: the low nibbles times the query bytes
// in Z29, the high ones times those in Z30, added into acc by VPDPBUSD
// (unsigned codes, signed query bytes, four products a doubleword, no
// saturation).
#define U4ROW(addr, acc) \
	VPSRLW   $4, addr, Z9 \
	VPANDD   addr, Z31, Z8 \
	VPANDD   Z31, Z9, Z9 \
	VPDPBUSD Z29, Z8, acc \
	VPDPBUSD Z30, Z9, acc

// The same on a last 32 bytes, read with the upper half masked off (K2).
#define U4TAIL(addr, acc) \
	VMOVDQU8.Z addr, K2, Z8 \
	VPSRLW     $4, Z8, Z9 \
	VPANDD     Z31, Z8, Z8 \
	VPANDD     Z31, Z9, Z9 \
	VPDPBUSD   Z29, Z8, acc \
	VPDPBUSD   Z30, Z9, acc

// func scan4AVX512(a *scan4Args)
//
// scan4AVX2 on a.n rows (a positive multiple of 8), eight at a time: the
// dot products with VPDPBUSD, 64 code bytes (128 codes) a step, against
// the query bytes in the order zmmQuery gives (per 128 codes, the 64 of
// the low nibbles, then the 64 of the high ones; a last 64 codes as they
// are); then bounds4Go's operations, lane-wise, in scan4AVX2's order, and
// the rows listed with VPCOMPRESSD/VCOMPRESSPD (eight entries written at
// the next free one: the lists have room for a.n). Each group's rows are
// prefetched two groups ahead (PREFETCHT0: the rows past a.n too, which
// cannot fault). The CPU must have AVX512F, BW, VL and VNNI.
TEXT ·scan4AVX512(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), BX
	MOVQ scan4Args_p(BX), SI
	MOVQ scan4Args_codes(BX), DI
	MOVQ scan4Args_rowBytes(BX), CX
	MOVQ scan4Args_c(BX), R14
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Z31 // low-nibble mask
	MOVL $0xFFFFFFFF, AX
	KMOVQ AX, K2         // the low 32 bytes
	VBROADCASTSD scan4Args_maxLow(BX), Z26
	VBROADCASTSD scan4Args_floor(BX), Z27
	VMOVDQU64 s8perm<>(SB), Z25
	VMOVDQU64 s8rows<>(SB), Z24
	XORQ R8, R8 // row
	XORQ DX, DX // rows listed

s8loop:
	CMPQ   R8, scan4Args_n(BX)
	JGE    s8done
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   DI, R11             // rows 0 to 2
	LEAQ   (CX)(CX*2), R12
	ADDQ   DI, R12             // rows 3 to 5
	LEAQ   (R12)(CX*2), R13
	ADDQ   CX, R13             // rows 6, 7
	// The group two ahead fetched (the rows are read in order, eight
	// rows a group).
	LEAQ       (DI)(CX*8), R15
	LEAQ       (R15)(CX*8), R15
	LEAQ       (R15)(CX*8), AX
	SUBQ       $64, AX

s8pf:
	PREFETCHT0 (R15)
	ADDQ       $64, R15
	CMPQ       R15, AX
	JLE        s8pf
	MOVQ   SI, R15
	MOVQ   CX, AX              // bytes left

s8inner:
	CMPQ      AX, $64
	JLT       s8tail
	VMOVDQU64 (R15), Z29
	VMOVDQU64 64(R15), Z30
	U4ROW((R11), Z0)
	U4ROW((R11)(CX*1), Z1)
	U4ROW((R11)(CX*2), Z2)
	U4ROW((R12), Z3)
	U4ROW((R12)(CX*1), Z4)
	U4ROW((R12)(CX*2), Z5)
	U4ROW((R13), Z6)
	U4ROW((R13)(CX*1), Z7)
	ADDQ      $64, R11
	ADDQ      $64, R12
	ADDQ      $64, R13
	ADDQ      $128, R15
	SUBQ      $64, AX
	JMP       s8inner

s8tail:
	TESTQ      AX, AX
	JEQ        s8sum
	VMOVDQU8.Z (R15), K2, Z29
	VMOVDQU8.Z 32(R15), K2, Z30
	U4TAIL((R11), Z0)
	U4TAIL((R11)(CX*1), Z1)
	U4TAIL((R11)(CX*2), Z2)
	U4TAIL((R12), Z3)
	U4TAIL((R12)(CX*1), Z4)
	U4TAIL((R12)(CX*2), Z5)
	U4TAIL((R13), Z6)
	U4TAIL((R13)(CX*1), Z7)

s8sum:
	// The eight sums: the rows' halves side by side in pairs (0 and 1 in
	// Z0, 2 and 3 in Z2, ...) and added; then quarters, four rows a
	// register (Z0: 0 to 3, Z4: 4 to 7); then each 128-bit lane's four
	// partial sums of row i and i+4 added, and the rows gathered in order.
	VINSERTI64X4 $1, Y1, Z0, Z8
	VSHUFI64X2   $0xEE, Z1, Z0, Z9
	VPADDD       Z9, Z8, Z0
	VINSERTI64X4 $1, Y3, Z2, Z8
	VSHUFI64X2   $0xEE, Z3, Z2, Z9
	VPADDD       Z9, Z8, Z2
	VINSERTI64X4 $1, Y5, Z4, Z8
	VSHUFI64X2   $0xEE, Z5, Z4, Z9
	VPADDD       Z9, Z8, Z4
	VINSERTI64X4 $1, Y7, Z6, Z8
	VSHUFI64X2   $0xEE, Z7, Z6, Z9
	VPADDD       Z9, Z8, Z6
	VSHUFI64X2   $0x88, Z2, Z0, Z8
	VSHUFI64X2   $0xDD, Z2, Z0, Z9
	VPADDD       Z9, Z8, Z0
	VSHUFI64X2   $0x88, Z6, Z4, Z8
	VSHUFI64X2   $0xDD, Z6, Z4, Z9
	VPADDD       Z9, Z8, Z4
	VPUNPCKLQDQ  Z4, Z0, Z8
	VPUNPCKHQDQ  Z4, Z0, Z9
	VPADDD       Z9, Z8, Z8
	VPSHUFD      $0xB1, Z8, Z9
	VPADDD       Z9, Z8, Z8
	VPERMD       Z8, Z24, Z0 // the eight rows' dot products

	// The bounds of bounds4Go, as scan4AVX2 computes them, on eight rows.
	VPBROADCASTD  40(R14), Y13 // off
	VPSUBD        Y13, Y0, Y0
	VCVTDQ2PD     Y0, Z0       // dot - off
	MOVQ          scan4Args_terms(BX), R10
	VMOVDQU64     (R10)(R8*8), Z1
	VPSLLD        $16, Z1, Z2  // scale, inf of each row
	VPSRLD        $16, Z1, Z3
	VPSLLD        $16, Z3, Z3  // res, norm of each row
	VPERMD        Z2, Z25, Z2  // 8 scales, 8 infs
	VPERMD        Z3, Z25, Z3  // 8 res, 8 norms
	VCVTPS2PD     Y2, Z1
	VBROADCASTSD  0(R14), Z8   // t
	VMULPD        Z8, Z1, Z1   // t*scale
	VMULPD        Z0, Z1, Z0   // x = t*scale*(dot - off)
	VEXTRACTF64X4 $1, Z2, Y2
	VCVTPS2PD     Y2, Z2
	VBROADCASTSD  16(R14), Z10 // ql1
	VMULPD        Z10, Z2, Z2  // b = ql1*inf
	VCVTPS2PD     Y3, Z4
	VBROADCASTSD  8(R14), Z9   // qnorm
	VMULPD        Z9, Z4, Z4   // a = qnorm*res
	VMINPD        Z2, Z4, Z4   // a < b ? a : b
	VEXTRACTF64X4 $1, Z3, Y3
	VCVTPS2PD     Y3, Z3
	VBROADCASTSD  24(R14), Z11 // qerr
	VMULPD        Z11, Z3, Z3  // qerr*norm
	VADDPD        Z3, Z4, Z2   // a + qerr*norm
	VBROADCASTSD  32(R14), Z12 // eps
	VADDPD        Z12, Z2, Z2  // + eps
	VSUBPD        Z2, Z0, Z3   // x - bound
	VMAXPD        Z3, Z26, Z26
	VADDPD        Z2, Z0, Z4   // x + bound
	MOVQ          scan4Args_est(BX), R10
	MOVQ          scan4Args_err(BX), R11
	TESTQ         R11, R11
	JEQ           s8hi
	VMOVUPD       Z0, (R10)(R8*8)
	VMOVUPD       Z2, (R11)(R8*8)
	JMP           s8cmp

s8hi:
	VMOVUPD Z4, (R10)(R8*8) // x + bound alone

s8cmp:
	VCMPPD $0x12, Z4, Z27, K1 // floor <= x+bound (LE_OQ: NaN not listed)
	KMOVW  K1, R11
	LEAQ   (DI)(CX*8), DI
	TESTQ  R11, R11
	JNE    s8list

s8next:
	ADDQ $8, R8
	JMP  s8loop

	// The rows listed: base+row, x and bound, compressed to the next
	// free entries.
s8list:
	MOVQ         scan4Args_base(BX), AX
	ADDQ         R8, AX
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9
	VPADDD       s8idx<>(SB), Y9, Y9
	VPCOMPRESSD  Y9, K1, Y10
	MOVQ         scan4Args_list(BX), R10
	VMOVDQU32    Y10, (R10)(DX*4)
	VCOMPRESSPD  Z0, K1, Z10
	MOVQ         scan4Args_lest(BX), R10
	VMOVUPD      Z10, (R10)(DX*8)
	VCOMPRESSPD  Z2, K1, Z10
	MOVQ         scan4Args_lerr(BX), R10
	VMOVUPD      Z10, (R10)(DX*8)
	POPCNTL      R11, R11
	ADDQ         R11, DX
	JMP          s8next

s8done:
	VMOVAPD       Z26, Z6
	VEXTRACTF64X4 $1, Z6, Y0
	VMAXPD        Y0, Y6, Y6
	VEXTRACTF128  $1, Y6, X0
	VMAXPD        X0, X6, X6
	VPERMILPD     $1, X6, X0
	VMAXPD        X0, X6, X6
	VZEROUPPER
	MOVSD         X6, scan4Args_maxLow(BX)
	MOVQ          DX, scan4Args_nlist(BX)
	RET

// func dotI8RowsAVX512(p []int16, codes []int8, dim int, rows, out []int32)
//
// dotI8AVX512's one-row loop on row rows[k] of codes for each k, into
// out[k], each row's cache lines prefetched (PREFETCHT0) four rows ahead:
// the rows a rescan reads are scattered. len(rows) must be positive.
TEXT ·dotI8RowsAVX512(SB), NOSPLIT, $0-104
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ rows_base+56(FP), R12
	MOVQ rows_len+64(FP), BX
	MOVQ out_base+80(FP), DX
	MOVQ CX, R8
	ANDQ $-32, R8 // the bytes read 32 at a time
	XORQ R13, R13 // k

	// The first four rows fetched.
	XORQ R11, R11

zrpre:
	CMPQ       R11, BX
	JGE        zrloop
	CMPQ       R11, $4
	JGE        zrloop
	MOVLQSX    (R12)(R11*4), AX
	IMULQ      CX, AX
	ADDQ       DI, AX
	XORQ       R9, R9

zrpre1:
	PREFETCHT0 (AX)(R9*1)
	ADDQ       $64, R9
	CMPQ       R9, CX
	JLT        zrpre1
	PREFETCHT0 -1(AX)(CX*1)
	INCQ       R11
	JMP        zrpre

zrloop:
	CMPQ R13, BX
	JGE  zrdone

	// Row k+4 fetched.
	LEAQ       4(R13), AX
	CMPQ       AX, BX
	JGE        zrrow
	MOVLQSX    (R12)(AX*4), AX
	IMULQ      CX, AX
	ADDQ       DI, AX
	XORQ       R9, R9

zrpf:
	PREFETCHT0 (AX)(R9*1)
	ADDQ       $64, R9
	CMPQ       R9, CX
	JLT        zrpf
	PREFETCHT0 -1(AX)(CX*1)

zrrow:
	MOVLQSX (R12)(R13*4), R9
	IMULQ   CX, R9
	ADDQ    DI, R9
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	XORQ    AX, AX
	MOVQ    SI, R10

zrinner:
	CMPQ      AX, R8
	JGE       zrtail
	VPMOVSXBW (R9)(AX*1), Z2
	VPDPWSSD  (R10), Z2, Z0
	ADDQ      $32, AX
	ADDQ      $64, R10
	CMPQ      AX, R8
	JGE       zrtail
	VPMOVSXBW (R9)(AX*1), Z3
	VPDPWSSD  (R10), Z3, Z1
	ADDQ      $32, AX
	ADDQ      $64, R10
	JMP       zrinner

zrtail:
	CMPQ      AX, CX
	JGE       zrsum
	VPMOVSXBW (R9)(AX*1), Y2
	VPMADDWD  (R10), Y2, Y2
	VPADDD    Z2, Z0, Z0

zrsum:
	VPADDD        Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y2
	VPADDD        Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X2
	VPADDD        X2, X0, X0
	VPSHUFD       $0x4E, X0, X2
	VPADDD        X2, X0, X0
	VPSHUFD       $0xB1, X0, X2
	VPADDD        X2, X0, X0
	VMOVD         X0, (DX)(R13*4)
	INCQ          R13
	JMP           zrloop

zrdone:
	VZEROUPPER
	RET
