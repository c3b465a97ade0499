//go:build amd64 && !purego

#include "textflag.h"

// REDUCE_MINMAX leaves in X0 the least of Y0's eight lanes and in X1 the
// greatest of Y1's (X2 and X3 are clobbered).
#define REDUCE_MINMAX \
	VEXTRACTF128 $1, Y0, X2 \
	VMINPS       X2, X0, X0 \
	VPERMILPS    $0x4e, X0, X2 \
	VMINPS       X2, X0, X0 \
	VPERMILPS    $0xb1, X0, X2 \
	VMINPS       X2, X0, X0 \
	VEXTRACTF128 $1, Y1, X3 \
	VMAXPS       X3, X1, X1 \
	VPERMILPS    $0x4e, X1, X3 \
	VMAXPS       X3, X1, X1 \
	VPERMILPS    $0xb1, X1, X3 \
	VMAXPS       X3, X1, X1

// func gemmBlocksAVX2(nb, k int, a *float32, lda int, b, bias, c *float32, ldc int)
//
// The float32 micro-kernel on nb blocks of 6 rows: block i reads rows
// 6i..6i+5 of a and writes rows 6i..6i+5 of c, each block with the same
// instructions in the same order (gemm6x16 calls it with nb = 1). In a block,
// c[r*ldc+j] = bias[j] + Σ_{p<k} a[r*lda+p]·b[p*16+j] for r < 6, j < 16.
// Twelve YMM accumulators hold the 6×16 block; each step loads one 16-wide
// row of the packed panel and broadcasts one element of each A row.
// nb must be positive. It advances a, c and nb in its argument slots.
TEXT ·gemmBlocksAVX2(SB), NOSPLIT, $0-64
gbblock:
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), R8
	MOVQ lda+24(FP), DX
	SHLQ $2, DX
	MOVQ b+32(FP), BX
	MOVQ bias+40(FP), SI
	MOVQ c+48(FP), DI

	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13

	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11

	XORQ AX, AX
	TESTQ CX, CX
	JZ   gbstore

gbloop:
	VMOVUPS      (BX), Y12
	VMOVUPS      32(BX), Y13
	VBROADCASTSS (R8)(AX*1), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (R9)(AX*1), Y15
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (R10)(AX*1), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R11)(AX*1), Y15
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R12)(AX*1), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R13)(AX*1), Y15
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11
	ADDQ         $64, BX
	ADDQ         $4, AX
	DECQ         CX
	JNZ          gbloop

gbstore:
	MOVQ    ldc+56(FP), SI
	SHLQ    $2, SI
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    SI, DI
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	ADDQ    SI, DI
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	ADDQ    SI, DI
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	ADDQ    SI, DI
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 32(DI)
	ADDQ    SI, DI
	VMOVUPS Y10, (DI)
	VMOVUPS Y11, 32(DI)
	LEAQ (DX)(DX*2), AX
	SHLQ $1, AX
	ADDQ AX, a+16(FP)
	LEAQ (SI)(SI*2), AX
	SHLQ $1, AX
	ADDQ AX, c+48(FP)
	DECQ nb+0(FP)
	JNZ  gbblock
	VZEROUPPER
	RET

// func dotAVX2(a, b *float32, n int) float32
//
// n must be a positive multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ   CX, $16
	JLT    dot8

dot16:
	VMOVUPS     (SI), Y2
	VMOVUPS     32(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         dot16

dot8:
	TESTQ       CX, CX
	JZ          dotsum
	VMOVUPS     (SI), Y2
	VFMADD231PS (DI), Y2, Y0

dotsum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyAVX2(alpha float32, x, y *float32, n int)
//
// y[i] += alpha·x[i]; n must be a positive multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX

axpy8:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JNZ         axpy8
	VZEROUPPER
	RET

// func gemm6x32AVX512(k int, a *float32, lda int, b *float32, bias *float32, c *float32, ldc int)
//
// Two adjacent packed panels at once: b points at panel j and panel j+1
// follows k*16 floats later; bias and c cover 32 columns.
// c[r*ldc+j] = bias[j] + Σ_{p<k} a[r*lda+p]·B[p][j] for r < 6, j < 32.
TEXT ·gemm6x32AVX512(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), R8
	MOVQ lda+16(FP), DX
	SHLQ $2, DX
	MOVQ b+24(FP), BX
	MOVQ bias+32(FP), SI
	MOVQ c+40(FP), DI

	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13

	// DX = byte offset of the second panel = k*64.
	MOVQ CX, DX
	SHLQ $6, DX

	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z1, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z1, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z1, Z11

	XORQ  AX, AX
	TESTQ CX, CX
	JZ    store512

loop512:
	VMOVUPS      (BX), Z12
	VMOVUPS      (BX)(DX*1), Z13
	VBROADCASTSS (R8)(AX*1), Z14
	VFMADD231PS  Z12, Z14, Z0
	VFMADD231PS  Z13, Z14, Z1
	VBROADCASTSS (R9)(AX*1), Z15
	VFMADD231PS  Z12, Z15, Z2
	VFMADD231PS  Z13, Z15, Z3
	VBROADCASTSS (R10)(AX*1), Z16
	VFMADD231PS  Z12, Z16, Z4
	VFMADD231PS  Z13, Z16, Z5
	VBROADCASTSS (R11)(AX*1), Z17
	VFMADD231PS  Z12, Z17, Z6
	VFMADD231PS  Z13, Z17, Z7
	VBROADCASTSS (R12)(AX*1), Z18
	VFMADD231PS  Z12, Z18, Z8
	VFMADD231PS  Z13, Z18, Z9
	VBROADCASTSS (R13)(AX*1), Z19
	VFMADD231PS  Z12, Z19, Z10
	VFMADD231PS  Z13, Z19, Z11
	ADDQ         $64, BX
	ADDQ         $4, AX
	DECQ         CX
	JNZ          loop512

store512:
	MOVQ    ldc+48(FP), SI
	SHLQ    $2, SI
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    SI, DI
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, 64(DI)
	ADDQ    SI, DI
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, 64(DI)
	ADDQ    SI, DI
	VMOVUPS Z6, (DI)
	VMOVUPS Z7, 64(DI)
	ADDQ    SI, DI
	VMOVUPS Z8, (DI)
	VMOVUPS Z9, 64(DI)
	ADDQ    SI, DI
	VMOVUPS Z10, (DI)
	VMOVUPS Z11, 64(DI)
	VZEROUPPER
	RET

// Constants of geluAVX2, each repeated 8 times (one YMM register):
// 1/√2, 4, -4, 0.5, then the erf32 numerator (a13..a1) and denominator
// (b8..b0) coefficients.
DATA geluc<>+0(SB)/4, $0x3f3504f3
DATA geluc<>+4(SB)/4, $0x3f3504f3
DATA geluc<>+8(SB)/4, $0x3f3504f3
DATA geluc<>+12(SB)/4, $0x3f3504f3
DATA geluc<>+16(SB)/4, $0x3f3504f3
DATA geluc<>+20(SB)/4, $0x3f3504f3
DATA geluc<>+24(SB)/4, $0x3f3504f3
DATA geluc<>+28(SB)/4, $0x3f3504f3
DATA geluc<>+32(SB)/4, $0x40800000
DATA geluc<>+36(SB)/4, $0x40800000
DATA geluc<>+40(SB)/4, $0x40800000
DATA geluc<>+44(SB)/4, $0x40800000
DATA geluc<>+48(SB)/4, $0x40800000
DATA geluc<>+52(SB)/4, $0x40800000
DATA geluc<>+56(SB)/4, $0x40800000
DATA geluc<>+60(SB)/4, $0x40800000
DATA geluc<>+64(SB)/4, $0xc0800000
DATA geluc<>+68(SB)/4, $0xc0800000
DATA geluc<>+72(SB)/4, $0xc0800000
DATA geluc<>+76(SB)/4, $0xc0800000
DATA geluc<>+80(SB)/4, $0xc0800000
DATA geluc<>+84(SB)/4, $0xc0800000
DATA geluc<>+88(SB)/4, $0xc0800000
DATA geluc<>+92(SB)/4, $0xc0800000
DATA geluc<>+96(SB)/4, $0x3f000000
DATA geluc<>+100(SB)/4, $0x3f000000
DATA geluc<>+104(SB)/4, $0x3f000000
DATA geluc<>+108(SB)/4, $0x3f000000
DATA geluc<>+112(SB)/4, $0x3f000000
DATA geluc<>+116(SB)/4, $0x3f000000
DATA geluc<>+120(SB)/4, $0x3f000000
DATA geluc<>+124(SB)/4, $0x3f000000
DATA geluc<>+128(SB)/4, $0xaf95df0b
DATA geluc<>+132(SB)/4, $0xaf95df0b
DATA geluc<>+136(SB)/4, $0xaf95df0b
DATA geluc<>+140(SB)/4, $0xaf95df0b
DATA geluc<>+144(SB)/4, $0xaf95df0b
DATA geluc<>+148(SB)/4, $0xaf95df0b
DATA geluc<>+152(SB)/4, $0xaf95df0b
DATA geluc<>+156(SB)/4, $0xaf95df0b
DATA geluc<>+160(SB)/4, $0x32edffee
DATA geluc<>+164(SB)/4, $0x32edffee
DATA geluc<>+168(SB)/4, $0x32edffee
DATA geluc<>+172(SB)/4, $0x32edffee
DATA geluc<>+176(SB)/4, $0x32edffee
DATA geluc<>+180(SB)/4, $0x32edffee
DATA geluc<>+184(SB)/4, $0x32edffee
DATA geluc<>+188(SB)/4, $0x32edffee
DATA geluc<>+192(SB)/4, $0xb60cff51
DATA geluc<>+196(SB)/4, $0xb60cff51
DATA geluc<>+200(SB)/4, $0xb60cff51
DATA geluc<>+204(SB)/4, $0xb60cff51
DATA geluc<>+208(SB)/4, $0xb60cff51
DATA geluc<>+212(SB)/4, $0xb60cff51
DATA geluc<>+216(SB)/4, $0xb60cff51
DATA geluc<>+220(SB)/4, $0xb60cff51
DATA geluc<>+224(SB)/4, $0xb86ec2d2
DATA geluc<>+228(SB)/4, $0xb86ec2d2
DATA geluc<>+232(SB)/4, $0xb86ec2d2
DATA geluc<>+236(SB)/4, $0xb86ec2d2
DATA geluc<>+240(SB)/4, $0xb86ec2d2
DATA geluc<>+244(SB)/4, $0xb86ec2d2
DATA geluc<>+248(SB)/4, $0xb86ec2d2
DATA geluc<>+252(SB)/4, $0xb86ec2d2
DATA geluc<>+256(SB)/4, $0xba40ac63
DATA geluc<>+260(SB)/4, $0xba40ac63
DATA geluc<>+264(SB)/4, $0xba40ac63
DATA geluc<>+268(SB)/4, $0xba40ac63
DATA geluc<>+272(SB)/4, $0xba40ac63
DATA geluc<>+276(SB)/4, $0xba40ac63
DATA geluc<>+280(SB)/4, $0xba40ac63
DATA geluc<>+284(SB)/4, $0xba40ac63
DATA geluc<>+288(SB)/4, $0xbb41a1f6
DATA geluc<>+292(SB)/4, $0xbb41a1f6
DATA geluc<>+296(SB)/4, $0xbb41a1f6
DATA geluc<>+300(SB)/4, $0xbb41a1f6
DATA geluc<>+304(SB)/4, $0xbb41a1f6
DATA geluc<>+308(SB)/4, $0xbb41a1f6
DATA geluc<>+312(SB)/4, $0xbb41a1f6
DATA geluc<>+316(SB)/4, $0xbb41a1f6
DATA geluc<>+320(SB)/4, $0xbc83dbd4
DATA geluc<>+324(SB)/4, $0xbc83dbd4
DATA geluc<>+328(SB)/4, $0xbc83dbd4
DATA geluc<>+332(SB)/4, $0xbc83dbd4
DATA geluc<>+336(SB)/4, $0xbc83dbd4
DATA geluc<>+340(SB)/4, $0xbc83dbd4
DATA geluc<>+344(SB)/4, $0xbc83dbd4
DATA geluc<>+348(SB)/4, $0xbc83dbd4
DATA geluc<>+352(SB)/4, $0xb77460cd
DATA geluc<>+356(SB)/4, $0xb77460cd
DATA geluc<>+360(SB)/4, $0xb77460cd
DATA geluc<>+364(SB)/4, $0xb77460cd
DATA geluc<>+368(SB)/4, $0xb77460cd
DATA geluc<>+372(SB)/4, $0xb77460cd
DATA geluc<>+376(SB)/4, $0xb77460cd
DATA geluc<>+380(SB)/4, $0xb77460cd
DATA geluc<>+384(SB)/4, $0xb95fbd29
DATA geluc<>+388(SB)/4, $0xb95fbd29
DATA geluc<>+392(SB)/4, $0xb95fbd29
DATA geluc<>+396(SB)/4, $0xb95fbd29
DATA geluc<>+400(SB)/4, $0xb95fbd29
DATA geluc<>+404(SB)/4, $0xb95fbd29
DATA geluc<>+408(SB)/4, $0xb95fbd29
DATA geluc<>+412(SB)/4, $0xb95fbd29
DATA geluc<>+416(SB)/4, $0xbadc924e
DATA geluc<>+420(SB)/4, $0xbadc924e
DATA geluc<>+424(SB)/4, $0xbadc924e
DATA geluc<>+428(SB)/4, $0xbadc924e
DATA geluc<>+432(SB)/4, $0xbadc924e
DATA geluc<>+436(SB)/4, $0xbadc924e
DATA geluc<>+440(SB)/4, $0xbadc924e
DATA geluc<>+444(SB)/4, $0xbadc924e
DATA geluc<>+448(SB)/4, $0xbbf19bf8
DATA geluc<>+452(SB)/4, $0xbbf19bf8
DATA geluc<>+456(SB)/4, $0xbbf19bf8
DATA geluc<>+460(SB)/4, $0xbbf19bf8
DATA geluc<>+464(SB)/4, $0xbbf19bf8
DATA geluc<>+468(SB)/4, $0xbbf19bf8
DATA geluc<>+472(SB)/4, $0xbbf19bf8
DATA geluc<>+476(SB)/4, $0xbbf19bf8
DATA geluc<>+480(SB)/4, $0xbc69b6a7
DATA geluc<>+484(SB)/4, $0xbc69b6a7
DATA geluc<>+488(SB)/4, $0xbc69b6a7
DATA geluc<>+492(SB)/4, $0xbc69b6a7
DATA geluc<>+496(SB)/4, $0xbc69b6a7
DATA geluc<>+500(SB)/4, $0xbc69b6a7
DATA geluc<>+504(SB)/4, $0xbc69b6a7
DATA geluc<>+508(SB)/4, $0xbc69b6a7
GLOBL geluc<>(SB), RODATA|NOPTR, $512

// func geluAVX2(x *float32, n int)
//
// x[i] = x[i]·½(1+erf(x[i]/√2)) with the erf32 rational approximation;
// n must be a positive multiple of 8.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX

gelu8:
	VMOVUPS     (SI), Y0
	VMULPS      geluc<>+0(SB), Y0, Y1
	VMINPS      geluc<>+32(SB), Y1, Y1
	VMAXPS      geluc<>+64(SB), Y1, Y1
	VMULPS      Y1, Y1, Y2
	VMOVUPS     geluc<>+128(SB), Y3
	VFMADD213PS geluc<>+160(SB), Y2, Y3
	VFMADD213PS geluc<>+192(SB), Y2, Y3
	VFMADD213PS geluc<>+224(SB), Y2, Y3
	VFMADD213PS geluc<>+256(SB), Y2, Y3
	VFMADD213PS geluc<>+288(SB), Y2, Y3
	VFMADD213PS geluc<>+320(SB), Y2, Y3
	VMULPS      Y1, Y3, Y3
	VMOVUPS     geluc<>+352(SB), Y4
	VFMADD213PS geluc<>+384(SB), Y2, Y4
	VFMADD213PS geluc<>+416(SB), Y2, Y4
	VFMADD213PS geluc<>+448(SB), Y2, Y4
	VFMADD213PS geluc<>+480(SB), Y2, Y4
	VDIVPS      Y4, Y3, Y3
	VMULPS      geluc<>+96(SB), Y0, Y5
	VFMADD213PS Y5, Y5, Y3
	VMOVUPS     Y3, (SI)
	ADDQ        $32, SI
	SUBQ        $8, CX
	JNZ         gelu8
	VZEROUPPER
	RET

// func geluAVX512(x *float32, n int)
//
// geluAVX2 on 16 values a step (ZMM, each constant broadcast from geluc):
// the same operations in the same order, so the same bits; n must be a
// positive multiple of 16.
TEXT ·geluAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX

gelu16:
	VMOVUPS          (SI), Z0
	VMULPS.BCST      geluc<>+0(SB), Z0, Z1
	VMINPS.BCST      geluc<>+32(SB), Z1, Z1
	VMAXPS.BCST      geluc<>+64(SB), Z1, Z1
	VMULPS           Z1, Z1, Z2
	VBROADCASTSS     geluc<>+128(SB), Z3
	VFMADD213PS.BCST geluc<>+160(SB), Z2, Z3
	VFMADD213PS.BCST geluc<>+192(SB), Z2, Z3
	VFMADD213PS.BCST geluc<>+224(SB), Z2, Z3
	VFMADD213PS.BCST geluc<>+256(SB), Z2, Z3
	VFMADD213PS.BCST geluc<>+288(SB), Z2, Z3
	VFMADD213PS.BCST geluc<>+320(SB), Z2, Z3
	VMULPS           Z1, Z3, Z3
	VBROADCASTSS     geluc<>+352(SB), Z4
	VFMADD213PS.BCST geluc<>+384(SB), Z2, Z4
	VFMADD213PS.BCST geluc<>+416(SB), Z2, Z4
	VFMADD213PS.BCST geluc<>+448(SB), Z2, Z4
	VFMADD213PS.BCST geluc<>+480(SB), Z2, Z4
	VDIVPS           Z4, Z3, Z3
	VMULPS.BCST      geluc<>+96(SB), Z0, Z5
	VFMADD213PS      Z5, Z5, Z3
	VMOVUPS          Z3, (SI)
	ADDQ             $64, SI
	SUBQ             $16, CX
	JNZ              gelu16
	VZEROUPPER
	RET

// Constants of expSubAVX2, each repeated 8 times: the clamp, log2(e), 0.5,
// ln 2 split in two, the Cephes expf polynomial, 1.0 and the int32 127.
DATA expc<>+0(SB)/4, $0xc2aeac50
DATA expc<>+4(SB)/4, $0xc2aeac50
DATA expc<>+8(SB)/4, $0xc2aeac50
DATA expc<>+12(SB)/4, $0xc2aeac50
DATA expc<>+16(SB)/4, $0xc2aeac50
DATA expc<>+20(SB)/4, $0xc2aeac50
DATA expc<>+24(SB)/4, $0xc2aeac50
DATA expc<>+28(SB)/4, $0xc2aeac50
DATA expc<>+32(SB)/4, $0x3fb8aa3b
DATA expc<>+36(SB)/4, $0x3fb8aa3b
DATA expc<>+40(SB)/4, $0x3fb8aa3b
DATA expc<>+44(SB)/4, $0x3fb8aa3b
DATA expc<>+48(SB)/4, $0x3fb8aa3b
DATA expc<>+52(SB)/4, $0x3fb8aa3b
DATA expc<>+56(SB)/4, $0x3fb8aa3b
DATA expc<>+60(SB)/4, $0x3fb8aa3b
DATA expc<>+64(SB)/4, $0x3f000000
DATA expc<>+68(SB)/4, $0x3f000000
DATA expc<>+72(SB)/4, $0x3f000000
DATA expc<>+76(SB)/4, $0x3f000000
DATA expc<>+80(SB)/4, $0x3f000000
DATA expc<>+84(SB)/4, $0x3f000000
DATA expc<>+88(SB)/4, $0x3f000000
DATA expc<>+92(SB)/4, $0x3f000000
DATA expc<>+96(SB)/4, $0x3f318000
DATA expc<>+100(SB)/4, $0x3f318000
DATA expc<>+104(SB)/4, $0x3f318000
DATA expc<>+108(SB)/4, $0x3f318000
DATA expc<>+112(SB)/4, $0x3f318000
DATA expc<>+116(SB)/4, $0x3f318000
DATA expc<>+120(SB)/4, $0x3f318000
DATA expc<>+124(SB)/4, $0x3f318000
DATA expc<>+128(SB)/4, $0xb95e8083
DATA expc<>+132(SB)/4, $0xb95e8083
DATA expc<>+136(SB)/4, $0xb95e8083
DATA expc<>+140(SB)/4, $0xb95e8083
DATA expc<>+144(SB)/4, $0xb95e8083
DATA expc<>+148(SB)/4, $0xb95e8083
DATA expc<>+152(SB)/4, $0xb95e8083
DATA expc<>+156(SB)/4, $0xb95e8083
DATA expc<>+160(SB)/4, $0x39506967
DATA expc<>+164(SB)/4, $0x39506967
DATA expc<>+168(SB)/4, $0x39506967
DATA expc<>+172(SB)/4, $0x39506967
DATA expc<>+176(SB)/4, $0x39506967
DATA expc<>+180(SB)/4, $0x39506967
DATA expc<>+184(SB)/4, $0x39506967
DATA expc<>+188(SB)/4, $0x39506967
DATA expc<>+192(SB)/4, $0x3ab743ce
DATA expc<>+196(SB)/4, $0x3ab743ce
DATA expc<>+200(SB)/4, $0x3ab743ce
DATA expc<>+204(SB)/4, $0x3ab743ce
DATA expc<>+208(SB)/4, $0x3ab743ce
DATA expc<>+212(SB)/4, $0x3ab743ce
DATA expc<>+216(SB)/4, $0x3ab743ce
DATA expc<>+220(SB)/4, $0x3ab743ce
DATA expc<>+224(SB)/4, $0x3c088908
DATA expc<>+228(SB)/4, $0x3c088908
DATA expc<>+232(SB)/4, $0x3c088908
DATA expc<>+236(SB)/4, $0x3c088908
DATA expc<>+240(SB)/4, $0x3c088908
DATA expc<>+244(SB)/4, $0x3c088908
DATA expc<>+248(SB)/4, $0x3c088908
DATA expc<>+252(SB)/4, $0x3c088908
DATA expc<>+256(SB)/4, $0x3d2aa9c1
DATA expc<>+260(SB)/4, $0x3d2aa9c1
DATA expc<>+264(SB)/4, $0x3d2aa9c1
DATA expc<>+268(SB)/4, $0x3d2aa9c1
DATA expc<>+272(SB)/4, $0x3d2aa9c1
DATA expc<>+276(SB)/4, $0x3d2aa9c1
DATA expc<>+280(SB)/4, $0x3d2aa9c1
DATA expc<>+284(SB)/4, $0x3d2aa9c1
DATA expc<>+288(SB)/4, $0x3e2aaaaa
DATA expc<>+292(SB)/4, $0x3e2aaaaa
DATA expc<>+296(SB)/4, $0x3e2aaaaa
DATA expc<>+300(SB)/4, $0x3e2aaaaa
DATA expc<>+304(SB)/4, $0x3e2aaaaa
DATA expc<>+308(SB)/4, $0x3e2aaaaa
DATA expc<>+312(SB)/4, $0x3e2aaaaa
DATA expc<>+316(SB)/4, $0x3e2aaaaa
DATA expc<>+320(SB)/4, $0x3f000000
DATA expc<>+324(SB)/4, $0x3f000000
DATA expc<>+328(SB)/4, $0x3f000000
DATA expc<>+332(SB)/4, $0x3f000000
DATA expc<>+336(SB)/4, $0x3f000000
DATA expc<>+340(SB)/4, $0x3f000000
DATA expc<>+344(SB)/4, $0x3f000000
DATA expc<>+348(SB)/4, $0x3f000000
DATA expc<>+352(SB)/4, $0x3f800000
DATA expc<>+356(SB)/4, $0x3f800000
DATA expc<>+360(SB)/4, $0x3f800000
DATA expc<>+364(SB)/4, $0x3f800000
DATA expc<>+368(SB)/4, $0x3f800000
DATA expc<>+372(SB)/4, $0x3f800000
DATA expc<>+376(SB)/4, $0x3f800000
DATA expc<>+380(SB)/4, $0x3f800000
DATA expc<>+384(SB)/4, $0x0000007f
DATA expc<>+388(SB)/4, $0x0000007f
DATA expc<>+392(SB)/4, $0x0000007f
DATA expc<>+396(SB)/4, $0x0000007f
DATA expc<>+400(SB)/4, $0x0000007f
DATA expc<>+404(SB)/4, $0x0000007f
DATA expc<>+408(SB)/4, $0x0000007f
DATA expc<>+412(SB)/4, $0x0000007f
GLOBL expc<>(SB), RODATA|NOPTR, $416

// func expSubAVX2(x *float32, n int, m float32) float32
//
// x[i] = e^(x[i]-m) (Cephes expf, as exp32) and returns Σ x[i]; n must be a
// positive multiple of 8.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	VXORPS       Y14, Y14, Y14

exp8:
	VMOVUPS      (SI), Y0
	VSUBPS       Y15, Y0, Y0
	VMAXPS       expc<>+0(SB), Y0, Y0
	VMOVUPS      expc<>+32(SB), Y1
	VFMADD213PS  expc<>+64(SB), Y0, Y1
	VROUNDPS     $1, Y1, Y1
	VFNMADD231PS expc<>+96(SB), Y1, Y0
	VFNMADD231PS expc<>+128(SB), Y1, Y0
	VMOVUPS      expc<>+160(SB), Y2
	VFMADD213PS  expc<>+192(SB), Y0, Y2
	VFMADD213PS  expc<>+224(SB), Y0, Y2
	VFMADD213PS  expc<>+256(SB), Y0, Y2
	VFMADD213PS  expc<>+288(SB), Y0, Y2
	VFMADD213PS  expc<>+320(SB), Y0, Y2
	VMULPS       Y0, Y0, Y3
	VFMADD213PS  Y0, Y3, Y2
	VADDPS       expc<>+352(SB), Y2, Y2
	VCVTTPS2DQ   Y1, Y1
	VPADDD       expc<>+384(SB), Y1, Y1
	VPSLLD       $23, Y1, Y1
	VMULPS       Y1, Y2, Y2
	VMOVUPS      Y2, (SI)
	VADDPS       Y2, Y14, Y14
	ADDQ         $32, SI
	SUBQ         $8, CX
	JNZ          exp8

	VEXTRACTF128 $1, Y14, X1
	VADDPS       X1, X14, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

DATA negInf<>+0(SB)/4, $0xff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $4

// func softmaxAVX512(x *float32, n int)
//
// softmax in place on x[:n], n > 0, 16 values a step and the last n%16
// under a mask: m = max x[i]; x[i] = e^(x[i]-m) as expSubAVX2 computes it
// (the same operations); then x[i] *= 1/Σ x[i]. The sum runs in 16 lanes,
// so it is not expSubAVX2's to the bit.
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	MOVQ DX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the tail's lanes
	SHRQ $4, DX  // full steps

	// The greatest value.
	VBROADCASTSS negInf<>(SB), Z0
	MOVQ  SI, DI
	MOVQ  DX, CX
	TESTQ CX, CX
	JZ    smmaxtail

smmax:
	VMAXPS (DI), Z0, Z0
	ADDQ   $64, DI
	DECQ   CX
	JNZ    smmax

smmaxtail:
	VMAXPS        (DI), Z0, K1, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VBROADCASTSS  X0, Z15

	// e^(x-m) and the sum.
	VPXORD Z14, Z14, Z14
	MOVQ   SI, DI
	MOVQ   DX, CX
	TESTQ  CX, CX
	JZ     smexptail

smexp:
	VMOVUPS (DI), Z0
	VSUBPS            Z15, Z0, Z0
	VMAXPS.BCST       expc<>+0(SB), Z0, Z0
	VBROADCASTSS      expc<>+32(SB), Z1
	VFMADD213PS.BCST  expc<>+64(SB), Z0, Z1
	VRNDSCALEPS       $1, Z1, Z1
	VFNMADD231PS.BCST expc<>+96(SB), Z1, Z0
	VFNMADD231PS.BCST expc<>+128(SB), Z1, Z0
	VBROADCASTSS      expc<>+160(SB), Z2
	VFMADD213PS.BCST  expc<>+192(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+224(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+256(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+288(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+320(SB), Z0, Z2
	VMULPS            Z0, Z0, Z3
	VFMADD213PS       Z0, Z3, Z2
	VADDPS.BCST       expc<>+352(SB), Z2, Z2
	VCVTTPS2DQ        Z1, Z1
	VPADDD.BCST       expc<>+384(SB), Z1, Z1
	VPSLLD            $23, Z1, Z1
	VMULPS            Z1, Z2, Z2
	VMOVUPS Z2, (DI)
	VADDPS  Z2, Z14, Z14
	ADDQ    $64, DI
	DECQ    CX
	JNZ     smexp

smexptail:
	VMOVUPS.Z (DI), K1, Z0
	VSUBPS            Z15, Z0, Z0
	VMAXPS.BCST       expc<>+0(SB), Z0, Z0
	VBROADCASTSS      expc<>+32(SB), Z1
	VFMADD213PS.BCST  expc<>+64(SB), Z0, Z1
	VRNDSCALEPS       $1, Z1, Z1
	VFNMADD231PS.BCST expc<>+96(SB), Z1, Z0
	VFNMADD231PS.BCST expc<>+128(SB), Z1, Z0
	VBROADCASTSS      expc<>+160(SB), Z2
	VFMADD213PS.BCST  expc<>+192(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+224(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+256(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+288(SB), Z0, Z2
	VFMADD213PS.BCST  expc<>+320(SB), Z0, Z2
	VMULPS            Z0, Z0, Z3
	VFMADD213PS       Z0, Z3, Z2
	VADDPS.BCST       expc<>+352(SB), Z2, Z2
	VCVTTPS2DQ        Z1, Z1
	VPADDD.BCST       expc<>+384(SB), Z1, Z1
	VPSLLD            $23, Z1, Z1
	VMULPS            Z1, Z2, Z2
	VMOVUPS Z2, K1, (DI)
	VADDPS  Z2, Z14, K1, Z14

	VEXTRACTF64X4 $1, Z14, Y1
	VADDPS        Y1, Y14, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMOVSS        expc<>+352(SB), X1
	VDIVSS        X0, X1, X1
	VBROADCASTSS  X1, Z13

	// x[i] *= 1/sum.
	MOVQ  SI, DI
	MOVQ  DX, CX
	TESTQ CX, CX
	JZ    smscaletail

smscale:
	VMULPS  (DI), Z13, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     smscale

smscaletail:
	VMULPS.Z (DI), Z13, K1, Z0
	VMOVUPS  Z0, K1, (DI)
	VZEROUPPER
	RET

// The lane numbers 0..15.
DATA iota16<>+0(SB)/4, $0
DATA iota16<>+4(SB)/4, $1
DATA iota16<>+8(SB)/4, $2
DATA iota16<>+12(SB)/4, $3
DATA iota16<>+16(SB)/4, $4
DATA iota16<>+20(SB)/4, $5
DATA iota16<>+24(SB)/4, $6
DATA iota16<>+28(SB)/4, $7
DATA iota16<>+32(SB)/4, $8
DATA iota16<>+36(SB)/4, $9
DATA iota16<>+40(SB)/4, $10
DATA iota16<>+44(SB)/4, $11
DATA iota16<>+48(SB)/4, $12
DATA iota16<>+52(SB)/4, $13
DATA iota16<>+56(SB)/4, $14
DATA iota16<>+60(SB)/4, $15
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func packKTAVX512(dst, src *float32, stride, n, dh int, scale float32)
//
// Packs n rows of dh values (row j at src[j*stride:]) times scale as Kᵀ
// in panels of 16 rows: dst[16p·dh + 16d + i] = src[(16p+i)*stride + d]·scale
// for 16p+i < n, and 0 for the rest of the last panel. Each step gathers
// one column of 16 rows (VGATHERDPS; the last panel's missing rows under
// the mask stay 0). n and dh must be positive; stride·15 must fit an int32.
TEXT ·packKTAVX512(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         stride+16(FP), DX
	MOVQ         n+24(FP), R8
	MOVQ         dh+32(FP), R9
	VBROADCASTSS scale+40(FP), Z15
	VPBROADCASTD DX, Z13
	VPMULLD      iota16<>(SB), Z13, Z14 // row i's offset: i·stride
	MOVQ         DX, R10
	SHLQ         $6, R10                // 16 rows in bytes

pkpanel:
	MOVL  $0xffff, AX
	CMPQ  R8, $16
	JGE   pkfull
	MOVQ  R8, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX

pkfull:
	MOVQ SI, R11
	MOVQ R9, CX

pkcol:
	KMOVW      AX, K1
	VPXORD     Z0, Z0, Z0
	VGATHERDPS (R11)(Z14*4), K1, Z0
	VMULPS     Z15, Z0, Z0
	VMOVUPS    Z0, (DI)
	ADDQ       $64, DI
	ADDQ       $4, R11
	DECQ       CX
	JNZ        pkcol
	ADDQ       R10, SI
	SUBQ       $16, R8
	JGT        pkpanel
	VZEROUPPER
	RET

// func qgemmBlocksAVX2(nb, kg int, a *uint8, lda int, b *int8, c *float32, ldc int, rs, rm, cs, csum, bias *float32)
//
// The int8 micro-kernel on nb blocks of 4 rows: block i reads rows 4i..4i+3
// of a, rs and rm and writes rows 4i..4i+3 of c, each block with the same
// instructions in the same order (qgemm4x16 calls it with nb = 1). In a block,
// for r < 4 and j < 16, with
// acc[r][j] = Σ_{p<4kg} a[r*lda+p]·B[p][j] in int32,
// c[r*ldc+j] = acc[r][j]·rs[r]·cs[j] + rm[r]·csum[j] + bias[j].
// a holds unsigned bytes, B signed bytes in [-64, 64] (so that VPMADDUBSW,
// which adds two products in int16 with saturation, cannot saturate:
// 2·255·64 < 32768) packed in groups of 4 rows: group g is 16 columns × 4
// bytes, b[64g + 4j + i] = B[4g+i][j]. Each step broadcasts 4 bytes of each
// A row, multiplies them with the group's 4 bytes of each column
// (VPMADDUBSW then VPMADDWD by ones) and adds the sums to eight YMM
// accumulators.
TEXT ·qgemmBlocksAVX2(SB), NOSPLIT, $0-96
	MOVQ nb+0(FP), R13
	XORQ R12, R12
	TESTQ R13, R13
	JZ    qbdone

qbblock:
	MOVQ kg+8(FP), CX
	MOVQ lda+24(FP), DX
	MOVQ R12, AX
	IMULQ DX, AX
	SHLQ $2, AX
	MOVQ a+16(FP), R8
	ADDQ AX, R8
	MOVQ b+32(FP), BX
	MOVQ ldc+48(FP), AX
	IMULQ R12, AX
	SHLQ $4, AX
	MOVQ c+40(FP), DI
	ADDQ AX, DI

	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11

	VPXOR    Y0, Y0, Y0
	VPXOR    Y1, Y1, Y1
	VPXOR    Y2, Y2, Y2
	VPXOR    Y3, Y3, Y3
	VPXOR    Y4, Y4, Y4
	VPXOR    Y5, Y5, Y5
	VPXOR    Y6, Y6, Y6
	VPXOR    Y7, Y7, Y7
	VPCMPEQW Y11, Y11, Y11
	VPSRLW   $15, Y11, Y11 // int16 ones

	XORQ  AX, AX
	TESTQ CX, CX
	JZ    qbstore

qbloop:
	VMOVDQU      (BX), Y12
	VMOVDQU      32(BX), Y13
	VPBROADCASTD (R8)(AX*1), Y14
	VPMADDUBSW   Y12, Y14, Y15
	VPMADDUBSW   Y13, Y14, Y10
	VPMADDWD     Y11, Y15, Y15
	VPMADDWD     Y11, Y10, Y10
	VPADDD       Y15, Y0, Y0
	VPADDD       Y10, Y1, Y1
	VPBROADCASTD (R9)(AX*1), Y14
	VPMADDUBSW   Y12, Y14, Y15
	VPMADDUBSW   Y13, Y14, Y10
	VPMADDWD     Y11, Y15, Y15
	VPMADDWD     Y11, Y10, Y10
	VPADDD       Y15, Y2, Y2
	VPADDD       Y10, Y3, Y3
	VPBROADCASTD (R10)(AX*1), Y14
	VPMADDUBSW   Y12, Y14, Y15
	VPMADDUBSW   Y13, Y14, Y10
	VPMADDWD     Y11, Y15, Y15
	VPMADDWD     Y11, Y10, Y10
	VPADDD       Y15, Y4, Y4
	VPADDD       Y10, Y5, Y5
	VPBROADCASTD (R11)(AX*1), Y14
	VPMADDUBSW   Y12, Y14, Y15
	VPMADDUBSW   Y13, Y14, Y10
	VPMADDWD     Y11, Y15, Y15
	VPMADDWD     Y11, Y10, Y10
	VPADDD       Y15, Y6, Y6
	VPADDD       Y10, Y7, Y7
	ADDQ         $64, BX
	ADDQ         $4, AX
	DECQ         CX
	JNZ          qbloop

qbstore:
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	MOVQ R12, AX
	SHLQ $4, AX
	MOVQ rs+56(FP), R8
	ADDQ AX, R8
	MOVQ rm+64(FP), R9
	ADDQ AX, R9
	MOVQ cs+72(FP), R10
	MOVQ csum+80(FP), R11
	MOVQ bias+88(FP), SI

	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7

	// Row 0.
	VBROADCASTSS 0(R8), Y12
	VBROADCASTSS 0(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y0, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y1, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 1.
	VBROADCASTSS 4(R8), Y12
	VBROADCASTSS 4(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y2, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y3, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 2.
	VBROADCASTSS 8(R8), Y12
	VBROADCASTSS 8(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y4, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y5, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 3.
	VBROADCASTSS 12(R8), Y12
	VBROADCASTSS 12(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y6, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y7, Y15
	VMOVUPS      Y15, 32(DI)
	INCQ R12
	CMPQ R12, R13
	JLT  qbblock

qbdone:
	VZEROUPPER
	RET

// func q16gemmBlocksAVX2(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32)
//
// The int16 micro-kernel on nb blocks of 4 rows, as qgemmBlocksAVX2 (the
// same output step), with a holding int16 values (lda in values) and B
// int16 packed in groups of 2 rows: group g is 16 columns × 2 values,
// b[32g + 2j + i] = B[2g+i][j]. Each step broadcasts a pair of each A row
// and multiplies it with the group's pair of each column (VPMADDWD, which
// adds the two int32 products exactly), adding the sums to eight YMM
// accumulators. The caller keeps every sum within int32.
TEXT ·q16gemmBlocksAVX2(SB), NOSPLIT, $0-96
	MOVQ nb+0(FP), R13
	XORQ R12, R12
	TESTQ R13, R13
	JZ    q16done

q16block:
	MOVQ kg+8(FP), CX
	MOVQ lda+24(FP), DX
	SHLQ $1, DX // row stride in bytes
	MOVQ R12, AX
	IMULQ DX, AX
	SHLQ $2, AX
	MOVQ a+16(FP), R8
	ADDQ AX, R8
	MOVQ b+32(FP), BX
	MOVQ ldc+48(FP), AX
	IMULQ R12, AX
	SHLQ $4, AX
	MOVQ c+40(FP), DI
	ADDQ AX, DI

	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11

	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

	XORQ  AX, AX
	TESTQ CX, CX
	JZ    q16store

q16loop:
	VMOVDQU      (BX), Y12
	VMOVDQU      32(BX), Y13
	VPBROADCASTD (R8)(AX*1), Y14
	VPBROADCASTD (R9)(AX*1), Y11
	VPMADDWD     Y12, Y14, Y15
	VPMADDWD     Y13, Y14, Y10
	VPMADDWD     Y12, Y11, Y9
	VPMADDWD     Y13, Y11, Y8
	VPADDD       Y15, Y0, Y0
	VPADDD       Y10, Y1, Y1
	VPADDD       Y9, Y2, Y2
	VPADDD       Y8, Y3, Y3
	VPBROADCASTD (R10)(AX*1), Y14
	VPBROADCASTD (R11)(AX*1), Y11
	VPMADDWD     Y12, Y14, Y15
	VPMADDWD     Y13, Y14, Y10
	VPMADDWD     Y12, Y11, Y9
	VPMADDWD     Y13, Y11, Y8
	VPADDD       Y15, Y4, Y4
	VPADDD       Y10, Y5, Y5
	VPADDD       Y9, Y6, Y6
	VPADDD       Y8, Y7, Y7
	ADDQ         $64, BX
	ADDQ         $4, AX
	DECQ         CX
	JNZ          q16loop

q16store:
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	MOVQ R12, AX
	SHLQ $4, AX
	MOVQ rs+56(FP), R8
	ADDQ AX, R8
	MOVQ rm+64(FP), R9
	ADDQ AX, R9
	MOVQ cs+72(FP), R10
	MOVQ csum+80(FP), R11
	MOVQ bias+88(FP), SI

	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7

	// Row 0.
	VBROADCASTSS 0(R8), Y12
	VBROADCASTSS 0(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y0, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y1, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 1.
	VBROADCASTSS 4(R8), Y12
	VBROADCASTSS 4(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y2, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y3, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 2.
	VBROADCASTSS 8(R8), Y12
	VBROADCASTSS 8(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y4, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y5, Y15
	VMOVUPS      Y15, 32(DI)
	ADDQ         DX, DI

	// Row 3.
	VBROADCASTSS 12(R8), Y12
	VBROADCASTSS 12(R9), Y13
	VMULPS       (R10), Y12, Y14
	VMOVUPS      (SI), Y15
	VFMADD231PS  (R11), Y13, Y15
	VFMADD231PS  Y14, Y6, Y15
	VMOVUPS      Y15, (DI)
	VMULPS       32(R10), Y12, Y14
	VMOVUPS      32(SI), Y15
	VFMADD231PS  32(R11), Y13, Y15
	VFMADD231PS  Y14, Y7, Y15
	VMOVUPS      Y15, 32(DI)
	INCQ R12
	CMPQ R12, R13
	JLT  q16block

q16done:
	VZEROUPPER
	RET

// func q16gemm8x48VNNI(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32, pf *int16)
//
// The int16 micro-kernel of q16gemmBlocksAVX2 on blocks of 8 rows and three
// adjacent panels (48 columns), with AVX-512 VNNI: block i reads rows
// 8i..8i+7 of a, rs and rm and writes rows 8i..8i+7 of c; panel p+1
// follows panel p kg*32 values later in b, and cs, csum and bias cover 48
// columns. Each step loads one group (a pair of B rows) of each panel into
// a ZMM register, broadcasts a pair of each A row and adds the products of
// every column to 24 ZMM accumulators with VPDPWSSD, which multiplies two
// pairs of int16 and adds both products to an int32 lane exactly (no
// saturation): 24 VPDPWSSD for 3 loads and 8 broadcasts. The A rows are
// read through three pointers (rows 0, 3 and 6) and lda. Each step also
// prefetches one cache line from pf on into L2, the blocks one after the
// other (pf is meant to be the next panels': a text's rows are few, so
// every layer's weights come from memory once, and without it the first
// block of each three panels waits for them); a prefetch past mapped
// memory does nothing. The int32 sums, and
// so the outputs, are those of q16gemmBlocksAVX2 on each panel, bit for
// bit: the output step is the same, 16 columns at a time. The caller keeps
// every sum within int32.
TEXT ·q16gemm8x48VNNI(SB), NOSPLIT, $0-104
	MOVQ nb+0(FP), R13
	XORQ R12, R12
	TESTQ R13, R13
	JZ   q16gemm8x48VNNIdone

q16gemm8x48VNNIblock:
	MOVQ kg+8(FP), CX
	MOVQ lda+24(FP), DX
	SHLQ $1, DX // row stride in bytes
	MOVQ R12, AX
	IMULQ DX, AX
	SHLQ $3, AX // block × 8 rows
	MOVQ a+16(FP), R8
	ADDQ AX, R8
	LEAQ (DX)(DX*2), AX // three rows
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	MOVQ b+32(FP), BX
	// SI = the byte offset of the next panel (kg*64).
	MOVQ CX, SI
	SHLQ $6, SI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ pf+96(FP), AX
	TESTQ CX, CX
	JZ    q16gemm8x48VNNIstore

q16gemm8x48VNNIloop:
	PREFETCHT1   (AX)
	VMOVDQU32    (BX), Z24
	VMOVDQU32    (BX)(SI*1), Z25
	VMOVDQU32    (BX)(SI*2), Z26
	VPBROADCASTD (R8), Z27
	VPDPWSSD     Z24, Z27, Z0
	VPDPWSSD     Z25, Z27, Z1
	VPDPWSSD     Z26, Z27, Z2
	VPBROADCASTD (R8)(DX*1), Z28
	VPDPWSSD     Z24, Z28, Z3
	VPDPWSSD     Z25, Z28, Z4
	VPDPWSSD     Z26, Z28, Z5
	VPBROADCASTD (R8)(DX*2), Z27
	VPDPWSSD     Z24, Z27, Z6
	VPDPWSSD     Z25, Z27, Z7
	VPDPWSSD     Z26, Z27, Z8
	VPBROADCASTD (R9), Z28
	VPDPWSSD     Z24, Z28, Z9
	VPDPWSSD     Z25, Z28, Z10
	VPDPWSSD     Z26, Z28, Z11
	VPBROADCASTD (R9)(DX*1), Z27
	VPDPWSSD     Z24, Z27, Z12
	VPDPWSSD     Z25, Z27, Z13
	VPDPWSSD     Z26, Z27, Z14
	VPBROADCASTD (R9)(DX*2), Z28
	VPDPWSSD     Z24, Z28, Z15
	VPDPWSSD     Z25, Z28, Z16
	VPDPWSSD     Z26, Z28, Z17
	VPBROADCASTD (R10), Z27
	VPDPWSSD     Z24, Z27, Z18
	VPDPWSSD     Z25, Z27, Z19
	VPDPWSSD     Z26, Z27, Z20
	VPBROADCASTD (R10)(DX*1), Z28
	VPDPWSSD     Z24, Z28, Z21
	VPDPWSSD     Z25, Z28, Z22
	VPDPWSSD     Z26, Z28, Z23
	ADDQ         $64, BX
	ADDQ         $64, AX
	ADDQ         $4, R8
	ADDQ         $4, R9
	ADDQ         $4, R10
	DECQ         CX
	JNZ          q16gemm8x48VNNIloop

	MOVQ AX, pf+96(FP) // the next block prefetches on
q16gemm8x48VNNIstore:
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	MOVQ R12, AX
	SHLQ $3, AX // first row
	MOVQ AX, BX
	IMULQ DX, BX
	MOVQ c+40(FP), DI
	ADDQ BX, DI
	SHLQ $2, AX
	MOVQ rs+56(FP), R8
	ADDQ AX, R8
	MOVQ rm+64(FP), R9
	ADDQ AX, R9
	MOVQ cs+72(FP), R10
	MOVQ csum+80(FP), R11
	MOVQ bias+88(FP), SI

	// Row 0.
	VBROADCASTSS 0(R8), Z24
	VBROADCASTSS 0(R9), Z25
	VCVTDQ2PS    Z0, Z0
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z0, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z1, Z1
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z1, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z2, Z2
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z2, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 1.
	VBROADCASTSS 4(R8), Z24
	VBROADCASTSS 4(R9), Z25
	VCVTDQ2PS    Z3, Z3
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z3, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z4, Z4
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z4, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z5, Z5
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z5, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 2.
	VBROADCASTSS 8(R8), Z24
	VBROADCASTSS 8(R9), Z25
	VCVTDQ2PS    Z6, Z6
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z6, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z7, Z7
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z7, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z8, Z8
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z8, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 3.
	VBROADCASTSS 12(R8), Z24
	VBROADCASTSS 12(R9), Z25
	VCVTDQ2PS    Z9, Z9
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z9, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z10, Z10
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z10, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z11, Z11
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z11, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 4.
	VBROADCASTSS 16(R8), Z24
	VBROADCASTSS 16(R9), Z25
	VCVTDQ2PS    Z12, Z12
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z12, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z13, Z13
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z13, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z14, Z14
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z14, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 5.
	VBROADCASTSS 20(R8), Z24
	VBROADCASTSS 20(R9), Z25
	VCVTDQ2PS    Z15, Z15
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z15, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z16, Z16
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z16, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z17, Z17
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z17, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 6.
	VBROADCASTSS 24(R8), Z24
	VBROADCASTSS 24(R9), Z25
	VCVTDQ2PS    Z18, Z18
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z18, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z19, Z19
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z19, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z20, Z20
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z20, Z27
	VMOVUPS      Z27, 128(DI)
	ADDQ         DX, DI

	// Row 7.
	VBROADCASTSS 28(R8), Z24
	VBROADCASTSS 28(R9), Z25
	VCVTDQ2PS    Z21, Z21
	VMULPS       0(R10), Z24, Z26
	VMOVUPS      0(SI), Z27
	VFMADD231PS  0(R11), Z25, Z27
	VFMADD231PS  Z26, Z21, Z27
	VMOVUPS      Z27, 0(DI)
	VCVTDQ2PS    Z22, Z22
	VMULPS       64(R10), Z24, Z26
	VMOVUPS      64(SI), Z27
	VFMADD231PS  64(R11), Z25, Z27
	VFMADD231PS  Z26, Z22, Z27
	VMOVUPS      Z27, 64(DI)
	VCVTDQ2PS    Z23, Z23
	VMULPS       128(R10), Z24, Z26
	VMOVUPS      128(SI), Z27
	VFMADD231PS  128(R11), Z25, Z27
	VFMADD231PS  Z26, Z23, Z27
	VMOVUPS      Z27, 128(DI)
	INCQ R12
	CMPQ R12, R13
	JLT  q16gemm8x48VNNIblock

q16gemm8x48VNNIdone:
	VZEROUPPER
	RET

// func q16gemm4x48VNNI(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32, pf *int16)
//
// q16gemm8x48VNNI on blocks of 4 rows (the same code with four rows: 12
// accumulators), for the last block of a matrix whose rows are not a
// multiple of 8.
TEXT ·q16gemm4x48VNNI(SB), NOSPLIT, $0-104
	MOVQ nb+0(FP), R13
	XORQ R12, R12
	TESTQ R13, R13
	JZ   q16gemm4x48VNNIdone

q16gemm4x48VNNIblock:
	MOVQ kg+8(FP), CX
	MOVQ lda+24(FP), DX
	SHLQ $1, DX // row stride in bytes
	MOVQ R12, AX
	IMULQ DX, AX
	SHLQ $2, AX // block × 4 rows
	MOVQ a+16(FP), R8
	ADDQ AX, R8
	LEAQ (DX)(DX*2), AX // three rows
	LEAQ (R8)(AX*1), R9
	MOVQ b+32(FP), BX
	// SI = the byte offset of the next panel (kg*64).
	MOVQ CX, SI
	SHLQ $6, SI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ pf+96(FP), AX
	TESTQ CX, CX
	JZ    q16gemm4x48VNNIstore

q16gemm4x48VNNIloop:
	PREFETCHT1   (AX)
	VMOVDQU32    (BX), Z12
	VMOVDQU32    (BX)(SI*1), Z13
	VMOVDQU32    (BX)(SI*2), Z14
	VPBROADCASTD (R8), Z15
	VPDPWSSD     Z12, Z15, Z0
	VPDPWSSD     Z13, Z15, Z1
	VPDPWSSD     Z14, Z15, Z2
	VPBROADCASTD (R8)(DX*1), Z16
	VPDPWSSD     Z12, Z16, Z3
	VPDPWSSD     Z13, Z16, Z4
	VPDPWSSD     Z14, Z16, Z5
	VPBROADCASTD (R8)(DX*2), Z15
	VPDPWSSD     Z12, Z15, Z6
	VPDPWSSD     Z13, Z15, Z7
	VPDPWSSD     Z14, Z15, Z8
	VPBROADCASTD (R9), Z16
	VPDPWSSD     Z12, Z16, Z9
	VPDPWSSD     Z13, Z16, Z10
	VPDPWSSD     Z14, Z16, Z11
	ADDQ         $64, BX
	ADDQ         $64, AX
	ADDQ         $4, R8
	ADDQ         $4, R9
	DECQ         CX
	JNZ          q16gemm4x48VNNIloop

	MOVQ AX, pf+96(FP) // the next block prefetches on
q16gemm4x48VNNIstore:
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	MOVQ R12, AX
	SHLQ $2, AX // first row
	MOVQ AX, BX
	IMULQ DX, BX
	MOVQ c+40(FP), DI
	ADDQ BX, DI
	SHLQ $2, AX
	MOVQ rs+56(FP), R8
	ADDQ AX, R8
	MOVQ rm+64(FP), R9
	ADDQ AX, R9
	MOVQ cs+72(FP), R10
	MOVQ csum+80(FP), R11
	MOVQ bias+88(FP), SI

	// Row 0.
	VBROADCASTSS 0(R8), Z12
	VBROADCASTSS 0(R9), Z13
	VCVTDQ2PS    Z0, Z0
	VMULPS       0(R10), Z12, Z14
	VMOVUPS      0(SI), Z15
	VFMADD231PS  0(R11), Z13, Z15
	VFMADD231PS  Z14, Z0, Z15
	VMOVUPS      Z15, 0(DI)
	VCVTDQ2PS    Z1, Z1
	VMULPS       64(R10), Z12, Z14
	VMOVUPS      64(SI), Z15
	VFMADD231PS  64(R11), Z13, Z15
	VFMADD231PS  Z14, Z1, Z15
	VMOVUPS      Z15, 64(DI)
	VCVTDQ2PS    Z2, Z2
	VMULPS       128(R10), Z12, Z14
	VMOVUPS      128(SI), Z15
	VFMADD231PS  128(R11), Z13, Z15
	VFMADD231PS  Z14, Z2, Z15
	VMOVUPS      Z15, 128(DI)
	ADDQ         DX, DI

	// Row 1.
	VBROADCASTSS 4(R8), Z12
	VBROADCASTSS 4(R9), Z13
	VCVTDQ2PS    Z3, Z3
	VMULPS       0(R10), Z12, Z14
	VMOVUPS      0(SI), Z15
	VFMADD231PS  0(R11), Z13, Z15
	VFMADD231PS  Z14, Z3, Z15
	VMOVUPS      Z15, 0(DI)
	VCVTDQ2PS    Z4, Z4
	VMULPS       64(R10), Z12, Z14
	VMOVUPS      64(SI), Z15
	VFMADD231PS  64(R11), Z13, Z15
	VFMADD231PS  Z14, Z4, Z15
	VMOVUPS      Z15, 64(DI)
	VCVTDQ2PS    Z5, Z5
	VMULPS       128(R10), Z12, Z14
	VMOVUPS      128(SI), Z15
	VFMADD231PS  128(R11), Z13, Z15
	VFMADD231PS  Z14, Z5, Z15
	VMOVUPS      Z15, 128(DI)
	ADDQ         DX, DI

	// Row 2.
	VBROADCASTSS 8(R8), Z12
	VBROADCASTSS 8(R9), Z13
	VCVTDQ2PS    Z6, Z6
	VMULPS       0(R10), Z12, Z14
	VMOVUPS      0(SI), Z15
	VFMADD231PS  0(R11), Z13, Z15
	VFMADD231PS  Z14, Z6, Z15
	VMOVUPS      Z15, 0(DI)
	VCVTDQ2PS    Z7, Z7
	VMULPS       64(R10), Z12, Z14
	VMOVUPS      64(SI), Z15
	VFMADD231PS  64(R11), Z13, Z15
	VFMADD231PS  Z14, Z7, Z15
	VMOVUPS      Z15, 64(DI)
	VCVTDQ2PS    Z8, Z8
	VMULPS       128(R10), Z12, Z14
	VMOVUPS      128(SI), Z15
	VFMADD231PS  128(R11), Z13, Z15
	VFMADD231PS  Z14, Z8, Z15
	VMOVUPS      Z15, 128(DI)
	ADDQ         DX, DI

	// Row 3.
	VBROADCASTSS 12(R8), Z12
	VBROADCASTSS 12(R9), Z13
	VCVTDQ2PS    Z9, Z9
	VMULPS       0(R10), Z12, Z14
	VMOVUPS      0(SI), Z15
	VFMADD231PS  0(R11), Z13, Z15
	VFMADD231PS  Z14, Z9, Z15
	VMOVUPS      Z15, 0(DI)
	VCVTDQ2PS    Z10, Z10
	VMULPS       64(R10), Z12, Z14
	VMOVUPS      64(SI), Z15
	VFMADD231PS  64(R11), Z13, Z15
	VFMADD231PS  Z14, Z10, Z15
	VMOVUPS      Z15, 64(DI)
	VCVTDQ2PS    Z11, Z11
	VMULPS       128(R10), Z12, Z14
	VMOVUPS      128(SI), Z15
	VFMADD231PS  128(R11), Z13, Z15
	VFMADD231PS  Z14, Z11, Z15
	VMOVUPS      Z15, 128(DI)
	INCQ R12
	CMPQ R12, R13
	JLT  q16gemm4x48VNNIblock

q16gemm4x48VNNIdone:
	VZEROUPPER
	RET

// The qword order that undoes VPACKSSDW's per-lane interleaving.
DATA q16perm<>+0(SB)/4, $0
DATA q16perm<>+4(SB)/4, $1
DATA q16perm<>+8(SB)/4, $4
DATA q16perm<>+12(SB)/4, $5
DATA q16perm<>+16(SB)/4, $2
DATA q16perm<>+20(SB)/4, $3
DATA q16perm<>+24(SB)/4, $6
DATA q16perm<>+28(SB)/4, $7
GLOBL q16perm<>(SB), RODATA|NOPTR, $32

DATA q16max<>+0(SB)/4, $8191
GLOBL q16max<>(SB), RODATA|NOPTR, $4

// func quantRow16AVX2(x *float32, n int, dst *int16, mn, inv float32)
//
// dst[i] = the integer nearest (x[i]-mn)·inv, rounded to even and clamped
// to [0, 8191] (0 for a NaN or a value past the int32 range, which
// VCVTPS2DQ makes the least int32), for i < n; n must be a positive
// multiple of 16.
TEXT ·quantRow16AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         dst+16(FP), DI
	VBROADCASTSS mn+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15
	VMOVDQU      q16perm<>(SB), Y13
	VPBROADCASTD q16max<>(SB), Y12
	VPXOR        Y11, Y11, Y11

q16quant:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VSUBPS    Y14, Y0, Y0
	VSUBPS    Y14, Y1, Y1
	VMULPS    Y15, Y0, Y0
	VMULPS    Y15, Y1, Y1
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VPMAXSD   Y11, Y0, Y0
	VPMAXSD   Y11, Y1, Y1
	VPMINSD   Y12, Y0, Y0
	VPMINSD   Y12, Y1, Y1
	VPACKSSDW Y1, Y0, Y0
	VPERMD    Y0, Y13, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JNZ       q16quant
	VZEROUPPER
	RET

// The dword order that undoes VPACKSSDW/VPACKUSWB's per-lane interleaving.
DATA qperm<>+0(SB)/4, $0
DATA qperm<>+4(SB)/4, $4
DATA qperm<>+8(SB)/4, $1
DATA qperm<>+12(SB)/4, $5
DATA qperm<>+16(SB)/4, $2
DATA qperm<>+20(SB)/4, $6
DATA qperm<>+24(SB)/4, $3
DATA qperm<>+28(SB)/4, $7
GLOBL qperm<>(SB), RODATA|NOPTR, $32

// func quantRowAVX2(x *float32, n int, dst *uint8, mn, inv float32)
//
// dst[i] = the byte nearest (x[i]-mn)·inv, rounded to even and clamped to
// [0, 255], for i < n; n must be a positive multiple of 32.
TEXT ·quantRowAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         dst+16(FP), DI
	VBROADCASTSS mn+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15
	VMOVDQU      qperm<>(SB), Y13

quant32:
	VMOVUPS    (SI), Y0
	VMOVUPS    32(SI), Y1
	VMOVUPS    64(SI), Y2
	VMOVUPS    96(SI), Y3
	VSUBPS     Y14, Y0, Y0
	VSUBPS     Y14, Y1, Y1
	VSUBPS     Y14, Y2, Y2
	VSUBPS     Y14, Y3, Y3
	VMULPS     Y15, Y0, Y0
	VMULPS     Y15, Y1, Y1
	VMULPS     Y15, Y2, Y2
	VMULPS     Y15, Y3, Y3
	VCVTPS2DQ  Y0, Y0
	VCVTPS2DQ  Y1, Y1
	VCVTPS2DQ  Y2, Y2
	VCVTPS2DQ  Y3, Y3
	VPACKSSDW  Y1, Y0, Y0
	VPACKSSDW  Y3, Y2, Y2
	VPACKUSWB  Y2, Y0, Y0
	VPERMD     Y0, Y13, Y0
	VMOVDQU    Y0, (DI)
	ADDQ       $128, SI
	ADDQ       $32, DI
	SUBQ       $32, CX
	JNZ        quant32
	VZEROUPPER
	RET

// func minMaxAVX2(x *float32, n int) (mn, mx float32)
//
// The least and greatest of x[:n]; n must be a positive multiple of 8.
TEXT ·minMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JZ      mmdone

mm8:
	VMOVUPS (SI), Y2
	VMINPS  Y2, Y0, Y0
	VMAXPS  Y2, Y1, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     mm8

mmdone:
	REDUCE_MINMAX
	MOVSS        X0, mn+16(FP)
	MOVSS        X1, mx+20(FP)
	VZEROUPPER
	RET

// func minMaxAVX512(x *float32, n int) (mn, mx float32)
//
// minMaxAVX2 on 16 values a step; n must be a positive multiple of 16.
TEXT ·minMaxAVX512(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Z0
	VMOVAPS Z0, Z1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JZ      mm16done

mm16:
	VMOVUPS (SI), Z2
	VMINPS  Z2, Z0, Z0
	VMAXPS  Z2, Z1, Z1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JNZ     mm16

mm16done:
	VEXTRACTF64X4 $1, Z0, Y2
	VMINPS        Y2, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y3
	VMAXPS        Y3, Y1, Y1
	REDUCE_MINMAX
	MOVSS         X0, mn+16(FP)
	MOVSS         X1, mx+20(FP)
	VZEROUPPER
	RET

// func quantRow16AVX512(x *float32, n int, dst *int16, mn, inv float32)
//
// quantRow16AVX2 on 32 values a step (the same conversion and clamps, then
// VPMOVDW, which keeps the low 16 bits of values already in [0, 8191]); n
// must be a positive multiple of 32.
TEXT ·quantRow16AVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         dst+16(FP), DI
	VBROADCASTSS mn+24(FP), Z14
	VBROADCASTSS inv+28(FP), Z15
	VPBROADCASTD q16max<>(SB), Z12
	VPXORD       Z11, Z11, Z11

q16quant32:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VSUBPS    Z14, Z0, Z0
	VSUBPS    Z14, Z1, Z1
	VMULPS    Z15, Z0, Z0
	VMULPS    Z15, Z1, Z1
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VPMAXSD   Z11, Z0, Z0
	VPMAXSD   Z11, Z1, Z1
	VPMINSD   Z12, Z0, Z0
	VPMINSD   Z12, Z1, Z1
	VPMOVDW   Z0, (DI)
	VPMOVDW   Z1, 32(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JNZ       q16quant32
	VZEROUPPER
	RET

// func addSumAVX2(dst, src *float32, n int) float32
//
// dst[i] += src[i] for i < n, and returns Σ dst[i]; n must be a positive
// multiple of 8.
TEXT ·addSumAVX2(SB), NOSPLIT, $0-28
	MOVQ   dst+0(FP), DI
	MOVQ   src+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ   CX, $16
	JLT    as8

as16:
	VMOVUPS (DI), Y2
	VMOVUPS 32(DI), Y3
	VADDPS  (SI), Y2, Y2
	VADDPS  32(SI), Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     as16

as8:
	TESTQ   CX, CX
	JZ      assum
	VMOVUPS (DI), Y2
	VADDPS  (SI), Y2, Y2
	VMOVUPS Y2, (DI)
	VADDPS  Y2, Y0, Y0

assum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX2(x *float32, n int, mean float32) float32
//
// Σ (x[i]-mean)² for i < n; n must be a positive multiple of 8.
TEXT ·sumSqDevAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS mean+16(FP), Y15
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	CMPQ         CX, $16
	JLT          sq8

sq16:
	VMOVUPS     (SI), Y2
	VMOVUPS     32(SI), Y3
	VSUBPS      Y15, Y2, Y2
	VSUBPS      Y15, Y3, Y3
	VFMADD231PS Y2, Y2, Y0
	VFMADD231PS Y3, Y3, Y1
	ADDQ        $64, SI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JGE         sq16

sq8:
	TESTQ       CX, CX
	JZ          sqsum
	VMOVUPS     (SI), Y2
	VSUBPS      Y15, Y2, Y2
	VFMADD231PS Y2, Y2, Y0

sqsum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func normAffineAVX2(dst, x *float32, n int, mean, inv float32, gamma, bias *float32)
//
// dst[i] = (x[i]-mean)·inv·gamma[i] + bias[i] for i < n; n must be a positive
// multiple of 8.
TEXT ·normAffineAVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS mean+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15
	MOVQ         gamma+32(FP), R8
	MOVQ         bias+40(FP), R9

na8:
	VMOVUPS     (SI), Y0
	VSUBPS      Y14, Y0, Y0
	VMULPS      Y15, Y0, Y0
	VMOVUPS     (R9), Y1
	VFMADD231PS (R8), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	ADDQ        $32, R8
	ADDQ        $32, R9
	SUBQ        $8, CX
	JNZ         na8
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
//
// The greatest of x[:n]; n must be a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JZ      mxdone

mx8:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JNZ    mx8

mxdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	MOVSS        X0, ret+16(FP)
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, n int, s float32)
//
// x[i] *= s for i < n; n must be a positive multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1

sc8:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     sc8
	VZEROUPPER
	RET

// func mulMinMaxAVX2(dst, x, s *float32, n int) (mn, mx float32)
//
// dst[i] = x[i]·s[i] for i < n, and returns the least and greatest dst[i];
// n must be a positive multiple of 8.
TEXT ·mulMinMaxAVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    s+16(FP), DX
	MOVQ    n+24(FP), CX
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	VMOVAPS Y0, Y1
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JZ      mmmdone

mmm8:
	VMOVUPS (SI), Y2
	VMULPS  (DX), Y2, Y2
	VMOVUPS Y2, (DI)
	VMINPS  Y2, Y0, Y0
	VMAXPS  Y2, Y1, Y1
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     mmm8

mmmdone:
	REDUCE_MINMAX
	MOVSS        X0, mn+32(FP)
	MOVSS        X1, mx+36(FP)
	VZEROUPPER
	RET
