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

// The words of eight rows' terms (scale, res, inf, norm, four words a
// row) that VPERMW puts in the odd words, the even ones zeroed (K3): each
// bfloat16 becomes the float32 it is. s8terms1: the eight scales, then
// the eight infs; s8terms2: the eight res, then the eight norms.
DATA s8terms1<>+0(SB)/2, $0
DATA s8terms1<>+2(SB)/2, $0
DATA s8terms1<>+4(SB)/2, $0
DATA s8terms1<>+6(SB)/2, $4
DATA s8terms1<>+8(SB)/2, $0
DATA s8terms1<>+10(SB)/2, $8
DATA s8terms1<>+12(SB)/2, $0
DATA s8terms1<>+14(SB)/2, $12
DATA s8terms1<>+16(SB)/2, $0
DATA s8terms1<>+18(SB)/2, $16
DATA s8terms1<>+20(SB)/2, $0
DATA s8terms1<>+22(SB)/2, $20
DATA s8terms1<>+24(SB)/2, $0
DATA s8terms1<>+26(SB)/2, $24
DATA s8terms1<>+28(SB)/2, $0
DATA s8terms1<>+30(SB)/2, $28
DATA s8terms1<>+32(SB)/2, $0
DATA s8terms1<>+34(SB)/2, $2
DATA s8terms1<>+36(SB)/2, $0
DATA s8terms1<>+38(SB)/2, $6
DATA s8terms1<>+40(SB)/2, $0
DATA s8terms1<>+42(SB)/2, $10
DATA s8terms1<>+44(SB)/2, $0
DATA s8terms1<>+46(SB)/2, $14
DATA s8terms1<>+48(SB)/2, $0
DATA s8terms1<>+50(SB)/2, $18
DATA s8terms1<>+52(SB)/2, $0
DATA s8terms1<>+54(SB)/2, $22
DATA s8terms1<>+56(SB)/2, $0
DATA s8terms1<>+58(SB)/2, $26
DATA s8terms1<>+60(SB)/2, $0
DATA s8terms1<>+62(SB)/2, $30
GLOBL s8terms1<>(SB), RODATA|NOPTR, $64
DATA s8terms2<>+0(SB)/2, $0
DATA s8terms2<>+2(SB)/2, $1
DATA s8terms2<>+4(SB)/2, $0
DATA s8terms2<>+6(SB)/2, $5
DATA s8terms2<>+8(SB)/2, $0
DATA s8terms2<>+10(SB)/2, $9
DATA s8terms2<>+12(SB)/2, $0
DATA s8terms2<>+14(SB)/2, $13
DATA s8terms2<>+16(SB)/2, $0
DATA s8terms2<>+18(SB)/2, $17
DATA s8terms2<>+20(SB)/2, $0
DATA s8terms2<>+22(SB)/2, $21
DATA s8terms2<>+24(SB)/2, $0
DATA s8terms2<>+26(SB)/2, $25
DATA s8terms2<>+28(SB)/2, $0
DATA s8terms2<>+30(SB)/2, $29
DATA s8terms2<>+32(SB)/2, $0
DATA s8terms2<>+34(SB)/2, $3
DATA s8terms2<>+36(SB)/2, $0
DATA s8terms2<>+38(SB)/2, $7
DATA s8terms2<>+40(SB)/2, $0
DATA s8terms2<>+42(SB)/2, $11
DATA s8terms2<>+44(SB)/2, $0
DATA s8terms2<>+46(SB)/2, $15
DATA s8terms2<>+48(SB)/2, $0
DATA s8terms2<>+50(SB)/2, $19
DATA s8terms2<>+52(SB)/2, $0
DATA s8terms2<>+54(SB)/2, $23
DATA s8terms2<>+56(SB)/2, $0
DATA s8terms2<>+58(SB)/2, $27
DATA s8terms2<>+60(SB)/2, $0
DATA s8terms2<>+62(SB)/2, $31
GLOBL s8terms2<>(SB), RODATA|NOPTR, $64

// The dwords 0 to 7.
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

// One row's 64 code bytes at addr (read once, into Z10): the low nibbles
// (AND with Z31) times the query bytes in Z29, the high ones times those
// in Z30, added into acc by VPDPBUSD (unsigned codes, signed query bytes,
// four products a doubleword, no saturation). U4ROW takes the high
// nibbles with a shift and an AND; G4ROW with one GF2P8AFFINEQB (the bit
// matrix in Z28 moves bits 4 to 7 of each byte to bits 0 to 3 and clears
// the rest): one instruction fewer.
#define U4ROW(addr, acc) \
	VMOVDQU64 addr, Z10 \
	VPSRLW    $4, Z10, Z9 \
	VPANDD    Z31, Z10, Z8 \
	VPANDD    Z31, Z9, Z9 \
	VPDPBUSD  Z29, Z8, acc \
	VPDPBUSD  Z30, Z9, acc

#define G4ROW(addr, acc) \
	VMOVDQU64      addr, Z10 \
	VPANDD         Z31, Z10, Z8 \
	VGF2P8AFFINEQB $0, Z28, Z10, Z9 \
	VPDPBUSD       Z29, Z8, acc \
	VPDPBUSD       Z30, Z9, acc

// The same on a last 32 bytes, read with the upper half masked off (K2).
#define U4TAIL(addr, acc) \
	VMOVDQU8.Z addr, K2, Z10 \
	VPSRLW     $4, Z10, Z9 \
	VPANDD     Z31, Z10, Z8 \
	VPANDD     Z31, Z9, Z9 \
	VPDPBUSD   Z29, Z8, acc \
	VPDPBUSD   Z30, Z9, acc

#define G4TAIL(addr, acc) \
	VMOVDQU8.Z     addr, K2, Z10 \
	VPANDD         Z31, Z10, Z8 \
	VGF2P8AFFINEQB $0, Z28, Z10, Z9 \
	VPDPBUSD       Z29, Z8, acc \
	VPDPBUSD       Z30, Z9, acc

// The eight rows of one step, at R11 (rows 0 to 2), R12 (3 to 5) and R13
// (6, 7), into Z0 to Z7.
#define ROWS8(ROW) \
	ROW((R11), Z0) \
	ROW((R11)(CX*1), Z1) \
	ROW((R11)(CX*2), Z2) \
	ROW((R12), Z3) \
	ROW((R12)(CX*1), Z4) \
	ROW((R12)(CX*2), Z5) \
	ROW((R13), Z6) \
	ROW((R13)(CX*1), Z7)

// The cache lines of 512 bytes at r.
#define PF512(r) \
	PREFETCHT0 0(r) \
	PREFETCHT0 64(r) \
	PREFETCHT0 128(r) \
	PREFETCHT0 192(r) \
	PREFETCHT0 256(r) \
	PREFETCHT0 320(r) \
	PREFETCHT0 384(r) \
	PREFETCHT0 448(r)

// s8ahead is how far ahead of a group's first byte its steps prefetch:
// two groups of rows of 128 bytes (1.5 KB to 4 KB measured alike at 100k
// rows, 4 KB 1-2% slower).
#define s8ahead 2048

// func scan4AVX512(a *scan4Args)
//
// scan4AVX2 on a.n rows (a positive multiple of 8), eight at a time: the
// dot products with VPDPBUSD, 64 code bytes (128 codes) a step, against
// the query bytes in the order zmmQuery gives (per 128 codes, the 64 of
// the low nibbles, then the 64 of the high ones; a last 64 codes as they
// are), the high nibbles taken by GF2P8AFFINEQB when a.gfni is set (the
// CPU has GFNI), else by a shift; then bounds4Go's operations, lane-wise,
// in scan4AVX2's order, and the rows listed with VPCOMPRESSD/VCOMPRESSPD
// (eight entries written at the next free one: the lists have room for
// a.n). Step k of a group prefetches (PREFETCHT0) the eight cache lines
// s8ahead+512*k bytes past the group's first byte (a last step of 32 bytes
// a row, four lines): over the group, as many bytes as its eight rows
// hold, s8ahead bytes further on, so that rows of 128 bytes are fetched
// two groups before they are read (the bytes past the rows too, which
// cannot fault). The bound's
// constants, the masks and the tables stay in registers (Z16 to Z31) for
// the whole call. The CPU must have AVX512F, BW, VL and VNNI, and GFNI for
// a.gfni.
TEXT ·scan4AVX512(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), BX
	MOVQ         scan4Args_p(BX), SI
	MOVQ         scan4Args_codes(BX), DI
	MOVQ         scan4Args_rowBytes(BX), CX
	MOVQ         scan4Args_c(BX), R14
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X8
	VPBROADCASTD X8, Z31            // low-nibble mask
	MOVQ         $0x1020408000000000, AX
	VMOVQ        AX, X8
	VPBROADCASTQ X8, Z28            // GF2P8AFFINEQB: x >> 4
	MOVL         $0xFFFFFFFF, AX
	KMOVQ        AX, K2             // the low 32 bytes
	MOVL         $0xAAAAAAAA, AX
	KMOVD        AX, K3             // the odd words
	VBROADCASTSD scan4Args_maxLow(BX), Z26
	VBROADCASTSD scan4Args_floor(BX), Z27
	VMOVDQU64    s8rows<>(SB), Z24
	VBROADCASTSD 0(R14), Z23        // t
	VBROADCASTSD 8(R14), Z22        // qnorm
	VBROADCASTSD 16(R14), Z21       // ql1
	VBROADCASTSD 24(R14), Z20       // qerr
	VBROADCASTSD 32(R14), Z19       // eps
	VPBROADCASTD 40(R14), Y18       // off
	VMOVDQU64    s8terms1<>(SB), Z17
	VMOVDQU64    s8terms2<>(SB), Z16
	MOVBLZX      scan4Args_gfni(BX), R14
	XORQ         R8, R8             // row
	XORQ         DX, DX             // rows listed

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
	MOVQ   DI, R11               // rows 0 to 2
	LEAQ   (CX)(CX*2), R12
	ADDQ   DI, R12               // rows 3 to 5
	LEAQ   (R12)(CX*2), R13
	ADDQ   CX, R13               // rows 6, 7
	LEAQ   s8ahead(DI), R9       // the bytes to prefetch
	MOVQ   SI, R15
	MOVQ   CX, AX                // bytes left
	TESTQ  R14, R14
	JNE    g8inner

s8inner:
	CMPQ      AX, $64
	JLT       s8tail
	PF512(R9)
	VMOVDQU64 (R15), Z29
	VMOVDQU64 64(R15), Z30
	ROWS8(U4ROW)
	ADDQ      $512, R9
	ADDQ      $64, R11
	ADDQ      $64, R12
	ADDQ      $64, R13
	ADDQ      $128, R15
	SUBQ      $64, AX
	JMP       s8inner

s8tail:
	TESTQ      AX, AX
	JEQ        s8sum
	PREFETCHT0 0(R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 128(R9)
	PREFETCHT0 192(R9)
	VMOVDQU8.Z (R15), K2, Z29
	VMOVDQU8.Z 32(R15), K2, Z30
	ROWS8(U4TAIL)
	JMP        s8sum

g8inner:
	CMPQ      AX, $64
	JLT       g8tail
	PF512(R9)
	VMOVDQU64 (R15), Z29
	VMOVDQU64 64(R15), Z30
	ROWS8(G4ROW)
	ADDQ      $512, R9
	ADDQ      $64, R11
	ADDQ      $64, R12
	ADDQ      $64, R13
	ADDQ      $128, R15
	SUBQ      $64, AX
	JMP       g8inner

g8tail:
	TESTQ      AX, AX
	JEQ        s8sum
	PREFETCHT0 0(R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 128(R9)
	PREFETCHT0 192(R9)
	VMOVDQU8.Z (R15), K2, Z29
	VMOVDQU8.Z 32(R15), K2, Z30
	ROWS8(G4TAIL)

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
	VPSUBD        Y18, Y0, Y0
	VCVTDQ2PD     Y0, Z0                   // dot - off
	MOVQ          scan4Args_terms(BX), R10
	VPERMW.Z      (R10)(R8*8), Z17, K3, Z2 // 8 scales, 8 infs
	VPERMW.Z      (R10)(R8*8), Z16, K3, Z3 // 8 res, 8 norms
	VCVTPS2PD     Y2, Z1
	VMULPD        Z23, Z1, Z1              // t*scale
	VMULPD        Z0, Z1, Z0               // x = t*scale*(dot - off)
	VEXTRACTF64X4 $1, Z2, Y2
	VCVTPS2PD     Y2, Z2
	VMULPD        Z21, Z2, Z2              // b = ql1*inf
	VCVTPS2PD     Y3, Z4
	VMULPD        Z22, Z4, Z4              // a = qnorm*res
	VMINPD        Z2, Z4, Z4               // a < b ? a : b
	VEXTRACTF64X4 $1, Z3, Y3
	VCVTPS2PD     Y3, Z3
	VMULPD        Z20, Z3, Z3              // qerr*norm
	VADDPD        Z3, Z4, Z2               // a + qerr*norm
	VADDPD        Z19, Z2, Z2              // + eps
	VSUBPD        Z2, Z0, Z3               // x - bound
	VMAXPD        Z3, Z26, Z26
	VADDPD        Z2, Z0, Z4               // x + bound
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

// The int8 rows' kernels (dotI8RowsAVX512, rescanAVX512) share these
// steps, on the same registers: DI the codes, CX the dimension, R12 the
// rows listed, R15 the terms, SI the query's words, R8 the dimension
// rounded down to 32.

// I8FETCH prefetches (PREFETCHT0) the line of terms and the cache lines
// of codes of row (R12)(idx*4) (idx AX or R11); it uses AX, R9 and R10,
// and lbl is its loop's label.
#define I8FETCH(idx, lbl) \
	MOVLQSX    (R12)(idx*4), AX \
	MOVQ       AX, R10 \
	SHLQ       $4, R10 \
	PREFETCHT0 (R15)(R10*1) \
	IMULQ      CX, AX \
	ADDQ       DI, AX \
	XORQ       R9, R9 \
lbl: \
	PREFETCHT0 (AX)(R9*1) \
	ADDQ       $64, R9 \
	CMPQ       R9, CX \
	JLT        lbl \
	PREFETCHT0 -1(AX)(CX*1)

// I8DOT sums the products of the row at R9 with the query's words into
// X0 (dotI8AVX512's one-row loop: 32 codes a step in two accumulators,
// a last 16 with VPMADDWD); it uses AX, R10 and Z0 to Z3, and inner, tail
// and sum are its labels.
#define I8DOT(inner, tail, sum) \
	VPXORD    Z0, Z0, Z0 \
	VPXORD    Z1, Z1, Z1 \
	XORQ      AX, AX \
	MOVQ      SI, R10 \
inner: \
	CMPQ      AX, R8 \
	JGE       tail \
	VPMOVSXBW (R9)(AX*1), Z2 \
	VPDPWSSD  (R10), Z2, Z0 \
	ADDQ      $32, AX \
	ADDQ      $64, R10 \
	CMPQ      AX, R8 \
	JGE       tail \
	VPMOVSXBW (R9)(AX*1), Z3 \
	VPDPWSSD  (R10), Z3, Z1 \
	ADDQ      $32, AX \
	ADDQ      $64, R10 \
	JMP       inner \
tail: \
	CMPQ      AX, CX \
	JGE       sum \
	VPMOVSXBW (R9)(AX*1), Y2 \
	VPMADDWD  (R10), Y2, Y2 \
	VPADDD    Z2, Z0, Z0 \
sum: \
	VPADDD        Z1, Z0, Z0 \
	VEXTRACTI64X4 $1, Z0, Y2 \
	VPADDD        Y2, Y0, Y0 \
	VEXTRACTI128  $1, Y0, X2 \
	VPADDD        X2, X0, X0 \
	VPSHUFD       $0x4E, X0, X2 \
	VPADDD        X2, X0, X0 \
	VPSHUFD       $0xB1, X0, X2 \
	VPADDD        X2, X0, X0

// func dotI8RowsAVX512(p []int16, codes []int8, dim int, rows, out []int32, terms *termsI8, ahead int)
//
// dotI8AVX512's one-row loop on row rows[k] of codes for each k, into
// out[k], each row's cache lines prefetched (PREFETCHT0) ahead rows
// ahead, with the line of its terms (16 bytes at terms+16*row, which the
// rescan reads next): the rows a rescan reads are scattered. len(rows)
// and ahead must be positive.
TEXT ·dotI8RowsAVX512(SB), NOSPLIT, $0-120
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ rows_base+56(FP), R12
	MOVQ rows_len+64(FP), BX
	MOVQ out_base+80(FP), DX
	MOVQ ahead+112(FP), R14
	MOVQ terms+104(FP), R15
	MOVQ CX, R8
	ANDQ $-32, R8 // the bytes read 32 at a time
	XORQ R13, R13 // k

	// The first rows fetched, up to ahead of them.
	XORQ R11, R11

zrpre:
	CMPQ R11, BX
	JGE  zrloop
	CMPQ R11, R14
	JGE  zrloop
	I8FETCH(R11, zrpre1)
	INCQ R11
	JMP  zrpre

zrloop:
	CMPQ R13, BX
	JGE  zrdone

	// Row k+ahead fetched.
	LEAQ (R13)(R14*1), AX
	CMPQ AX, BX
	JGE  zrrow
	I8FETCH(AX, zrpf)

zrrow:
	MOVLQSX (R12)(R13*4), R9
	IMULQ   CX, R9
	ADDQ    DI, R9
	I8DOT(zrinner, zrtail, zrsum)
	VMOVD   X0, (DX)(R13*4)
	INCQ    R13
	JMP     zrloop

zrdone:
	VZEROUPPER
	RET

// func rescanAVX512(a *rescanArgs)
//
// The tiered scan's int8 rescan of one part in one pass: for each k, the
// dot product of row i = a.sel[k] (dotI8RowsAVX512's loop and prefetch,
// a.ahead rows ahead, codes and terms), then rescanGo's operations on it
// in its order, in scalar VEX float64: x = t16*scale*dot, the bound
// qnorm*errQ + t16*errT + eps (errT = scale*l1/2*c1e9), the running
// largest x - bound (VMAXSD: no NaN and no -0 reach it), and, when the
// bound is below the first pass's a.lerr[a.at[k]], x + bound into est[i]
// (a.err nil) or x and the bound into est[i] and err[i]. a.n must be
// positive; the CPU must have AVX512F, BW, VL and VNNI.
TEXT ·rescanAVX512(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), DX
	MOVQ         rescanArgs_p(DX), SI
	MOVQ         rescanArgs_codes(DX), DI
	MOVQ         rescanArgs_dim(DX), CX
	MOVQ         rescanArgs_sel(DX), R12
	MOVQ         rescanArgs_n(DX), BX
	MOVQ         rescanArgs_ahead(DX), R14
	MOVQ         rescanArgs_terms(DX), R15
	VMOVSD       rescanArgs_t16(DX), X10
	VMOVSD       rescanArgs_qnorm(DX), X11
	VMOVSD       rescanArgs_c1e9(DX), X12
	VMOVSD       rescanArgs_half(DX), X13
	VMOVSD       rescanArgs_eps(DX), X14
	VMOVSD       rescanArgs_maxLow(DX), X7
	MOVQ         CX, R8
	ANDQ         $-32, R8 // the bytes read 32 at a time
	XORQ         R13, R13 // k

	// The first rows fetched, up to ahead of them.
	XORQ R11, R11

rspre:
	CMPQ R11, BX
	JGE  rsloop
	CMPQ R11, R14
	JGE  rsloop
	I8FETCH(R11, rspre1)
	INCQ R11
	JMP  rspre

rsloop:
	CMPQ R13, BX
	JGE  rsdone

	// Row k+ahead fetched.
	LEAQ (R13)(R14*1), AX
	CMPQ AX, BX
	JGE  rsrow
	I8FETCH(AX, rspf)

rsrow:
	MOVLQSX (R12)(R13*4), R11 // i
	MOVQ    R11, R9
	IMULQ   CX, R9
	ADDQ    DI, R9
	I8DOT(rsinner, rstail, rssum)
	VMOVD   X0, AX

	// The estimate and bound of row i (terms at R10: errQ, scale, l1).
	MOVQ      R11, R10
	SHLQ      $4, R10
	ADDQ      R15, R10
	VCVTSI2SDL AX, X2, X2        // float64(dot)
	VCVTSS2SD  8(R10), X1, X1    // scale
	VMULSD     X1, X10, X3       // t16*scale
	VMULSD     X2, X3, X3        // x = t16*scale*dot
	MOVL       12(R10), AX       // l1, zero-extended
	VCVTSI2SDQ AX, X4, X4
	VMULSD     X4, X1, X4        // scale*l1
	VMULSD     X13, X4, X4       // /2
	VMULSD     X12, X4, X4       // *(1+1e-9): errT
	VMULSD     X4, X10, X4       // t16*errT
	VMULSD     0(R10), X11, X5   // qnorm*errQ
	VADDSD     X4, X5, X5        // + t16*errT
	VADDSD     X14, X5, X5       // + eps: the bound
	VSUBSD     X5, X3, X6        // x - bound
	VMAXSD     X6, X7, X7        // maxLow = max(maxLow, x - bound)

	// Kept when tighter than the first pass's bound.
	MOVQ     rescanArgs_at(DX), AX
	MOVLQSX  (AX)(R13*4), AX
	MOVQ     rescanArgs_lerr(DX), R9
	VUCOMISD (R9)(AX*8), X5      // bound against lerr[at[k]]
	JAE      rsnext              // not below
	JPS      rsnext              // unordered (a NaN): not below either
	MOVQ     rescanArgs_est(DX), R9
	MOVQ     rescanArgs_err(DX), R10
	TESTQ    R10, R10
	JEQ      rshi
	VMOVSD   X3, (R9)(R11*8)
	VMOVSD   X5, (R10)(R11*8)
	JMP      rsnext

rshi:
	VADDSD X5, X3, X6
	VMOVSD X6, (R9)(R11*8) // x + bound

rsnext:
	INCQ R13
	JMP  rsloop

rsdone:
	VMOVSD X7, rescanArgs_maxLow(DX)
	VZEROUPPER
	RET

// func pickAVX512(rows *int32, est, err *float64, n int, floor float64, sel, at *int32) int
//
// list4.pick on the first n entries of a list (n a positive multiple of
// 8), eight at a time: est[k]+err[k] >= floor (VCMPPD LE_OQ with the
// floor first: NaN not kept, as Go's >=), the rows kept and their places k
// compressed (VPCOMPRESSD) to the next free entries of sel and at (eight
// entries written each time: sel and at hold n). Returns the number kept.
TEXT ·pickAVX512(SB), NOSPLIT, $0-64
	MOVQ         rows+0(FP), SI
	MOVQ         est+8(FP), R8
	MOVQ         err+16(FP), R9
	MOVQ         n+24(FP), CX
	VBROADCASTSD floor+32(FP), Z1
	MOVQ         sel+40(FP), R10
	MOVQ         at+48(FP), R11
	VMOVDQU32    s8idx<>(SB), Y4 // 0 to 7
	MOVL         $8, AX
	VPBROADCASTD AX, Y5
	XORQ         DX, DX          // k
	XORQ         BX, BX          // kept

pkloop:
	CMPQ        DX, CX
	JGE         pkdone
	VMOVUPD     (R8)(DX*8), Z0
	VADDPD      (R9)(DX*8), Z0, Z0  // est + err
	VCMPPD      $0x12, Z0, Z1, K1   // floor <= est + err
	VMOVDQU32   (SI)(DX*4), Y2
	VPCOMPRESSD Y2, K1, Y3
	VMOVDQU32   Y3, (R10)(BX*4)
	VPCOMPRESSD Y4, K1, Y3
	VMOVDQU32   Y3, (R11)(BX*4)
	VPADDD      Y5, Y4, Y4          // the next eight places
	KMOVB       K1, AX
	POPCNTL     AX, AX
	ADDQ        AX, BX
	ADDQ        $8, DX
	JMP         pkloop

pkdone:
	VZEROUPPER
	MOVQ BX, ret+56(FP)
	RET
