#include "textflag.h"
#include "go_asm.h"

// func dotI8SSE2(p []int16, codes []int8, dim int, out []int32)
//
// out[r] = sum over j < dim of p[j]*codes[r*dim+j], exactly (int32; the
// caller bounds p so that no sum overflows). dim must be a positive multiple
// of 16. Bytes are sign-extended to words with PUNPCKLBW/PUNPCKHBW and
// PSRAW, then multiplied and pairwise added with PMADDWL (SSE2). Two rows are
// processed at once so that the query words are loaded once for both.
TEXT ·dotI8SSE2(SB), NOSPLIT, $0-80
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ out_base+56(FP), DX
	MOVQ out_len+64(FP), BX

loop2:
	CMPQ BX, $2
	JLT  loop1
	PXOR X0, X0
	PXOR X1, X1
	LEAQ (DI)(CX*1), R9
	XORQ AX, AX            // byte offset into a row
	MOVQ SI, R10           // query words

inner2:
	MOVOU (R10), X4        // p[j:j+8]
	MOVOU 16(R10), X5      // p[j+8:j+16]
	MOVOU (DI)(AX*1), X6   // row 0 bytes j..j+15
	MOVO  X6, X7
	PUNPCKLBW X6, X6
	PUNPCKHBW X7, X7
	PSRAW $8, X6
	PSRAW $8, X7
	PMADDWL X4, X6
	PMADDWL X5, X7
	PADDL X6, X0
	PADDL X7, X0
	MOVOU (R9)(AX*1), X8   // row 1
	MOVO  X8, X9
	PUNPCKLBW X8, X8
	PUNPCKHBW X9, X9
	PSRAW $8, X8
	PSRAW $8, X9
	PMADDWL X4, X8
	PMADDWL X5, X9
	PADDL X8, X1
	PADDL X9, X1
	ADDQ $16, AX
	ADDQ $32, R10
	CMPQ AX, CX
	JLT  inner2

	PSHUFD $0x4E, X0, X2
	PADDL  X2, X0
	PSHUFD $0xB1, X0, X2
	PADDL  X2, X0
	MOVL   X0, (DX)
	PSHUFD $0x4E, X1, X2
	PADDL  X2, X1
	PSHUFD $0xB1, X1, X2
	PADDL  X2, X1
	MOVL   X1, 4(DX)

	ADDQ $8, DX
	LEAQ (R9)(CX*1), DI
	SUBQ $2, BX
	JMP  loop2

loop1:
	CMPQ BX, $0
	JEQ  done
	PXOR X0, X0
	XORQ AX, AX
	MOVQ SI, R10

inner1:
	MOVOU (R10), X4
	MOVOU 16(R10), X5
	MOVOU (DI)(AX*1), X6
	MOVO  X6, X7
	PUNPCKLBW X6, X6
	PUNPCKHBW X7, X7
	PSRAW $8, X6
	PSRAW $8, X7
	PMADDWL X4, X6
	PMADDWL X5, X7
	PADDL X6, X0
	PADDL X7, X0
	ADDQ $16, AX
	ADDQ $32, R10
	CMPQ AX, CX
	JLT  inner1

	PSHUFD $0x4E, X0, X2
	PADDL  X2, X0
	PSHUFD $0xB1, X0, X2
	PADDL  X2, X0
	MOVL   X0, (DX)
	ADDQ $4, DX
	ADDQ CX, DI
	DECQ BX
	JMP  loop1

done:
	RET

// func dotI8AVX2(p []int16, codes []int8, dim int, out []int32)
//
// dotI8 with AVX2: 16 bytes sign-extended to words by one VPMOVSXBW, then
// VPMADDWD. dim must be a positive multiple of 16; the CPU must have AVX2.
TEXT ·dotI8AVX2(SB), NOSPLIT, $0-80
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ out_base+56(FP), DX
	MOVQ out_len+64(FP), BX

avxloop2:
	CMPQ BX, $2
	JLT  avxloop1
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	LEAQ (DI)(CX*1), R9
	XORQ AX, AX
	MOVQ SI, R10

avxinner2:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW (R9)(AX*1), Y3
	VMOVDQU   (R10), Y4
	VPMADDWD  Y4, Y2, Y2
	VPMADDWD  Y4, Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $16, AX
	ADDQ      $32, R10
	CMPQ      AX, CX
	JLT       avxinner2

	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0x4E, X0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0xB1, X0, X2
	VPADDD       X2, X0, X0
	VMOVD        X0, (DX)
	VEXTRACTI128 $1, Y1, X3
	VPADDD       X3, X1, X1
	VPSHUFD      $0x4E, X1, X3
	VPADDD       X3, X1, X1
	VPSHUFD      $0xB1, X1, X3
	VPADDD       X3, X1, X1
	VMOVD        X1, 4(DX)

	ADDQ $8, DX
	LEAQ (R9)(CX*1), DI
	SUBQ $2, BX
	JMP  avxloop2

avxloop1:
	CMPQ BX, $0
	JEQ  avxdone
	VPXOR Y0, Y0, Y0
	XORQ  AX, AX
	MOVQ  SI, R10

avxinner1:
	VPMOVSXBW (DI)(AX*1), Y2
	VMOVDQU   (R10), Y4
	VPMADDWD  Y4, Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, AX
	ADDQ      $32, R10
	CMPQ      AX, CX
	JLT       avxinner1

	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0x4E, X0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0xB1, X0, X2
	VPADDD       X2, X0, X0
	VMOVD        X0, (DX)
	ADDQ         $4, DX
	ADDQ         CX, DI
	DECQ         BX
	JMP          avxloop1

avxdone:
	VZEROUPPER
	RET

// func dotU4AVX2(p []int8, codes []byte, rowBytes int, out []int32)
//
// out[r] = sum over the 2*rowBytes codes u of row r of p[j]*u_j, exactly.
// Each 32 bytes of a row hold 64 codes: the low nibbles the first 32, the
// high nibbles the next 32. VPMADDUBSW multiplies the unsigned codes (at
// most 15) by the signed query bytes (at most 127 in magnitude) and adds
// pairs into words (at most 3,810, no saturation); VPMADDWD by ones widens
// the words' pairs to doublewords. Two rows are processed at once so that
// the query bytes are read once for both. rowBytes must be a positive
// multiple of 32; the CPU must have AVX2.
TEXT ·dotU4AVX2(SB), NOSPLIT, $0-80
	MOVQ p_base+0(FP), SI
	MOVQ codes_base+24(FP), DI
	MOVQ rowBytes+48(FP), CX
	MOVQ out_base+56(FP), DX
	MOVQ out_len+64(FP), BX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15  // low-nibble mask
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14  // word ones

	// Four rows at a time: the query's bytes loaded once for the four,
	// and each row's products summed in words over up to four chunks of
	// 64 codes before they are widened (VPMADDWD): a chunk's words are
	// at most 2*2*15*128 = 7680 in magnitude (VPMADDUBSW does not
	// saturate there), four chunks 30720, within int16.
u4loop4:
	CMPQ BX, $4
	JLT  u4loop2
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	LEAQ (DI)(CX*1), R9
	LEAQ (R9)(CX*1), R11
	LEAQ (R11)(CX*1), R12
	XORQ AX, AX
	MOVQ SI, R10

u4outer4:
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	MOVQ  $4, R13

u4inner4:
	VMOVDQU    (R10), Y6
	VMOVDQU    32(R10), Y7
	VMOVDQU    (DI)(AX*1), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW Y6, Y2, Y2
	VPMADDUBSW Y7, Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPADDW     Y2, Y10, Y10
	VMOVDQU    (R9)(AX*1), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y15, Y4, Y4
	VPAND      Y15, Y5, Y5
	VPMADDUBSW Y6, Y4, Y4
	VPMADDUBSW Y7, Y5, Y5
	VPADDW     Y5, Y4, Y4
	VPADDW     Y4, Y11, Y11
	VMOVDQU    (R11)(AX*1), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW Y6, Y2, Y2
	VPMADDUBSW Y7, Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPADDW     Y2, Y12, Y12
	VMOVDQU    (R12)(AX*1), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y15, Y4, Y4
	VPAND      Y15, Y5, Y5
	VPMADDUBSW Y6, Y4, Y4
	VPMADDUBSW Y7, Y5, Y5
	VPADDW     Y5, Y4, Y4
	VPADDW     Y4, Y13, Y13
	ADDQ       $32, AX
	ADDQ       $64, R10
	CMPQ       AX, CX
	JGE        u4flush4
	DECQ       R13
	JNZ        u4inner4

u4flush4:
	VPMADDWD Y14, Y10, Y10
	VPADDD   Y10, Y0, Y0
	VPMADDWD Y14, Y11, Y11
	VPADDD   Y11, Y1, Y1
	VPMADDWD Y14, Y12, Y12
	VPADDD   Y12, Y8, Y8
	VPMADDWD Y14, Y13, Y13
	VPADDD   Y13, Y9, Y9
	CMPQ     AX, CX
	JLT      u4outer4

	// The four sums: pairs within each 128-bit lane, then the lanes.
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y9, Y8, Y8
	VPHADDD      Y8, Y0, Y0
	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VMOVDQU      X0, (DX)
	ADDQ         $16, DX
	LEAQ         (R12)(CX*1), DI
	SUBQ         $4, BX
	JMP          u4loop4

u4loop2:
	CMPQ BX, $2
	JLT  u4loop1
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	LEAQ (DI)(CX*1), R9
	XORQ AX, AX
	MOVQ SI, R10

u4inner2:
	VMOVDQU    (DI)(AX*1), Y2
	VMOVDQU    (R9)(AX*1), Y4
	VMOVDQU    (R10), Y6
	VMOVDQU    32(R10), Y7
	VPSRLW     $4, Y2, Y3
	VPSRLW     $4, Y4, Y5
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPAND      Y15, Y4, Y4
	VPAND      Y15, Y5, Y5
	VPMADDUBSW Y6, Y2, Y2
	VPMADDUBSW Y7, Y3, Y3
	VPMADDUBSW Y6, Y4, Y4
	VPMADDUBSW Y7, Y5, Y5
	VPADDW     Y3, Y2, Y2
	VPADDW     Y5, Y4, Y4
	VPMADDWD   Y14, Y2, Y2
	VPMADDWD   Y14, Y4, Y4
	VPADDD     Y2, Y0, Y0
	VPADDD     Y4, Y1, Y1
	ADDQ       $32, AX
	ADDQ       $64, R10
	CMPQ       AX, CX
	JLT        u4inner2

	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0x4E, X0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0xB1, X0, X2
	VPADDD       X2, X0, X0
	VMOVD        X0, (DX)
	VEXTRACTI128 $1, Y1, X3
	VPADDD       X3, X1, X1
	VPSHUFD      $0x4E, X1, X3
	VPADDD       X3, X1, X1
	VPSHUFD      $0xB1, X1, X3
	VPADDD       X3, X1, X1
	VMOVD        X1, 4(DX)

	ADDQ $8, DX
	LEAQ (R9)(CX*1), DI
	SUBQ $2, BX
	JMP  u4loop2

u4loop1:
	CMPQ BX, $0
	JEQ  u4done
	VPXOR Y0, Y0, Y0
	XORQ  AX, AX
	MOVQ  SI, R10

u4inner1:
	VMOVDQU    (DI)(AX*1), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW (R10), Y2, Y2
	VPMADDUBSW 32(R10), Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPMADDWD   Y14, Y2, Y2
	VPADDD     Y2, Y0, Y0
	ADDQ       $32, AX
	ADDQ       $64, R10
	CMPQ       AX, CX
	JLT        u4inner1

	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0x4E, X0, X2
	VPADDD       X2, X0, X0
	VPSHUFD      $0xB1, X0, X2
	VPADDD       X2, X0, X0
	VMOVD        X0, (DX)
	ADDQ         $4, DX
	ADDQ         CX, DI
	DECQ         BX
	JMP          u4loop1

u4done:
	VZEROUPPER
	RET

// The dwords 0, 2, 4, 6, then 1, 3, 5, 7 (VPERMD).
DATA s4perm<>+0(SB)/4, $0
DATA s4perm<>+4(SB)/4, $2
DATA s4perm<>+8(SB)/4, $4
DATA s4perm<>+12(SB)/4, $6
DATA s4perm<>+16(SB)/4, $1
DATA s4perm<>+20(SB)/4, $3
DATA s4perm<>+24(SB)/4, $5
DATA s4perm<>+28(SB)/4, $7
GLOBL s4perm<>(SB), RODATA|NOPTR, $32

// func scan4AVX2(a *scan4Args)
//
// blockGo on a.n rows (a positive multiple of 4), four at a time: the dot
// products of dotU4AVX2's four-row loop (the query bytes read as memory
// operands), left in X0, then bounds4Go's operations on them in the same
// order (the bound's constants broadcast from a.c each time: the dot loop
// takes every other register), the estimates and bounds stored, the
// largest lower bound kept in Y6, and each row whose est+err reaches the
// floor (Y7; VCMPPD LE_OQ, NaN not listed) written to a.list as base+row,
// its estimate and bound to a.lest and a.lerr. With a.err nil, est+err
// alone is stored, in a.est. The CPU must have AVX2.
TEXT ·scan4AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), BX
	MOVQ scan4Args_p(BX), SI
	MOVQ scan4Args_codes(BX), DI
	MOVQ scan4Args_rowBytes(BX), CX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15  // low-nibble mask
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14  // word ones
	VBROADCASTSD scan4Args_maxLow(BX), Y6
	VBROADCASTSD scan4Args_floor(BX), Y7
	XORQ R8, R8            // row
	XORQ DX, DX            // rows listed

s4loop:
	CMPQ R8, scan4Args_n(BX)
	JGE  s4done
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	LEAQ (DI)(CX*1), R9
	LEAQ (R9)(CX*1), R11
	LEAQ (R11)(CX*1), R12
	XORQ AX, AX
	MOVQ SI, R10

s4outer:
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	MOVQ  $4, R13

s4inner:
	VMOVDQU    (DI)(AX*1), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW (R10), Y2, Y2
	VPMADDUBSW 32(R10), Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPADDW     Y2, Y10, Y10
	VMOVDQU    (R9)(AX*1), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y15, Y4, Y4
	VPAND      Y15, Y5, Y5
	VPMADDUBSW (R10), Y4, Y4
	VPMADDUBSW 32(R10), Y5, Y5
	VPADDW     Y5, Y4, Y4
	VPADDW     Y4, Y11, Y11
	VMOVDQU    (R11)(AX*1), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW (R10), Y2, Y2
	VPMADDUBSW 32(R10), Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPADDW     Y2, Y12, Y12
	VMOVDQU    (R12)(AX*1), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y15, Y4, Y4
	VPAND      Y15, Y5, Y5
	VPMADDUBSW (R10), Y4, Y4
	VPMADDUBSW 32(R10), Y5, Y5
	VPADDW     Y5, Y4, Y4
	VPADDW     Y4, Y13, Y13
	ADDQ       $32, AX
	ADDQ       $64, R10
	CMPQ       AX, CX
	JGE        s4flush
	DECQ       R13
	JNZ        s4inner

s4flush:
	VPMADDWD Y14, Y10, Y10
	VPADDD   Y10, Y0, Y0
	VPMADDWD Y14, Y11, Y11
	VPADDD   Y11, Y1, Y1
	VPMADDWD Y14, Y12, Y12
	VPADDD   Y12, Y8, Y8
	VPMADDWD Y14, Y13, Y13
	VPADDD   Y13, Y9, Y9
	CMPQ     AX, CX
	JLT      s4outer

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y9, Y8, Y8
	VPHADDD      Y8, Y0, Y0
	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0  // the four rows' dot products

	// The bounds of bounds4Go on them, from the four rows' terms
	// (bfloat16, widened to float32 by a shift: the even words scale
	// and inf, the odd words res and norm, gathered by VPERMD).
	MOVQ         scan4Args_c(BX), AX
	VPBROADCASTD 40(AX), X13  // off
	VPSUBD       X13, X0, X0
	VCVTDQ2PD    X0, Y0       // dot - off
	MOVQ         scan4Args_terms(BX), R10
	VMOVDQU      (R10)(R8*8), Y1
	VPSLLD       $16, Y1, Y2  // scale, inf of each row
	VPSRLD       $16, Y1, Y3
	VPSLLD       $16, Y3, Y3  // res, norm of each row
	VMOVDQU      s4perm<>(SB), Y13
	VPERMD       Y2, Y13, Y2  // 4 scales, 4 infs
	VPERMD       Y3, Y13, Y3  // 4 res, 4 norms
	VCVTPS2PD    X2, Y1
	VBROADCASTSD 0(AX), Y8    // t
	VMULPD       Y8, Y1, Y1   // t*scale
	VMULPD       Y0, Y1, Y0   // x = t*scale*(dot - off)
	VEXTRACTI128 $1, Y2, X2
	VCVTPS2PD    X2, Y2
	VBROADCASTSD 16(AX), Y10  // ql1
	VMULPD       Y10, Y2, Y2  // b = ql1*inf
	VCVTPS2PD    X3, Y4
	VBROADCASTSD 8(AX), Y9    // qnorm
	VMULPD       Y9, Y4, Y4   // a = qnorm*res
	VMINPD       Y2, Y4, Y4   // a < b ? a : b
	VEXTRACTI128 $1, Y3, X3
	VCVTPS2PD    X3, Y3
	VBROADCASTSD 24(AX), Y11  // qerr
	VMULPD       Y11, Y3, Y3  // qerr*norm
	VADDPD       Y3, Y4, Y2   // a + qerr*norm
	VBROADCASTSD 32(AX), Y12  // eps
	VADDPD       Y12, Y2, Y2  // + eps
	VSUBPD       Y2, Y0, Y3   // x - bound
	VMAXPD       Y3, Y6, Y6
	VADDPD       Y2, Y0, Y4   // x + bound
	MOVQ         scan4Args_est(BX), R10
	MOVQ         scan4Args_err(BX), R13
	TESTQ        R13, R13
	JEQ          s4hi
	VMOVUPD      Y0, (R10)(R8*8)
	VMOVUPD      Y2, (R13)(R8*8)
	JMP          s4cmp

s4hi:
	VMOVUPD Y4, (R10)(R8*8) // x + bound alone

s4cmp:
	VCMPPD    $0x12, Y4, Y7, Y1 // floor <= x+bound (LE_OQ: NaN not listed)
	VMOVMSKPD Y1, R13
	LEAQ      (R12)(CX*1), DI
	TESTQ     R13, R13
	JNE       s4list

s4next:
	ADDQ $4, R8
	JMP  s4loop

	// Each row listed: base+row, x and bound (lanes 0 and 1 from X0 and
	// X2, lanes 2 and 3 from X5 and X3).
s4list:
	MOVQ         scan4Args_list(BX), R10
	MOVQ         scan4Args_lest(BX), R11
	MOVQ         scan4Args_lerr(BX), R12
	MOVQ         scan4Args_base(BX), AX
	ADDQ         R8, AX
	VEXTRACTF128 $1, Y0, X5
	VEXTRACTF128 $1, Y2, X3
	TESTQ        $1, R13
	JEQ          s4l1
	MOVL         AX, (R10)(DX*4)
	VMOVSD       X0, (R11)(DX*8)
	VMOVSD       X2, (R12)(DX*8)
	INCQ         DX

s4l1:
	TESTQ   $2, R13
	JEQ     s4l2
	LEAQ    1(AX), R9
	MOVL    R9, (R10)(DX*4)
	VMOVHPD X0, (R11)(DX*8)
	VMOVHPD X2, (R12)(DX*8)
	INCQ    DX

s4l2:
	TESTQ  $4, R13
	JEQ    s4l3
	LEAQ   2(AX), R9
	MOVL   R9, (R10)(DX*4)
	VMOVSD X5, (R11)(DX*8)
	VMOVSD X3, (R12)(DX*8)
	INCQ   DX

s4l3:
	TESTQ   $8, R13
	JEQ     s4next
	LEAQ    3(AX), R9
	MOVL    R9, (R10)(DX*4)
	VMOVHPD X5, (R11)(DX*8)
	VMOVHPD X3, (R12)(DX*8)
	INCQ    DX
	JMP     s4next

s4done:
	VEXTRACTF128 $1, Y6, X0
	VMAXPD       X0, X6, X6
	VPERMILPD    $1, X6, X0
	VMAXPD       X0, X6, X6
	VZEROUPPER
	MOVSD        X6, scan4Args_maxLow(BX)
	MOVQ         DX, scan4Args_nlist(BX)
	RET
