#include "textflag.h"

// func lexMaxAVX2(lex []float64) (maxBits, or uint64)
//
// Two accumulators of the largest words (signed compare: for floats
// without the sign bit it orders as the values do, and lexRange discards
// the maximum when a sign bit is set) and two of their or, eight words a
// step.
TEXT ·lexMaxAVX2(SB), NOSPLIT, $0-40
	MOVQ   lex_base+0(FP), SI
	MOVQ   lex_len+8(FP), CX
	VPXOR  Y0, Y0, Y0
	VPXOR  Y1, Y1, Y1
	VPXOR  Y2, Y2, Y2
	VPXOR  Y3, Y3, Y3
	XORQ   AX, AX

loop:
	CMPQ      AX, CX
	JGE       reduce
	VMOVDQU   (SI)(AX*8), Y4
	VMOVDQU   32(SI)(AX*8), Y5
	VPOR      Y4, Y2, Y2
	VPOR      Y5, Y3, Y3
	VPCMPGTQ  Y0, Y4, Y6
	VBLENDVPD Y6, Y4, Y0, Y0
	VPCMPGTQ  Y1, Y5, Y7
	VBLENDVPD Y7, Y5, Y1, Y1
	ADDQ      $8, AX
	JMP       loop

reduce:
	VPCMPGTQ     Y0, Y1, Y6
	VBLENDVPD    Y6, Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPCMPGTQ     X0, X1, X6
	VBLENDVPD    X6, X1, X0, X0
	VMOVQ        X0, AX
	VPEXTRQ      $1, X0, BX
	CMPQ         AX, BX
	CMOVQLT      BX, AX
	VPOR         Y3, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPOR         X3, X2, X2
	VMOVQ        X2, R8
	VPEXTRQ      $1, X2, R9
	ORQ          R9, R8
	VZEROUPPER
	MOVQ         AX, maxBits+24(FP)
	MOVQ         R8, or+32(FP)
	RET

// func blockBoundsAVX2(lex, hi []float64, inv float64, bs int, bmax []float64) (nan bool)
//
// For each row, hi = lex*inv + max(hi, 0) (VMAXPD returns its second
// source, hi, when either is NaN: a NaN stays), written back; for each
// block of bs rows, the largest in bmax, and an or of the rows' NaN
// masks, reported at the end.
TEXT ·blockBoundsAVX2(SB), NOSPLIT, $0-89
	MOVQ         lex_base+0(FP), SI
	MOVQ         hi_base+24(FP), DI
	VBROADCASTSD inv+48(FP), Y1
	MOVQ         bs+56(FP), BX
	MOVQ         bmax_base+64(FP), DX
	MOVQ         bmax_len+72(FP), CX
	VXORPD       Y0, Y0, Y0
	VXORPD       Y12, Y12, Y12  // NaN masks of every row

block:
	CMPQ   CX, $0
	JEQ    done
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	MOVQ   BX, R8

rows:
	VMULPD  (SI), Y1, Y2
	VMULPD  32(SI), Y1, Y3
	VMAXPD  (DI), Y0, Y8
	VMAXPD  32(DI), Y0, Y9
	VADDPD  Y8, Y2, Y2
	VADDPD  Y9, Y3, Y3
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	VMAXPD  Y2, Y5, Y5
	VMAXPD  Y3, Y6, Y6
	VCMPPD  $3, Y2, Y2, Y10
	VCMPPD  $3, Y3, Y3, Y11
	VORPD   Y10, Y12, Y12
	VORPD   Y11, Y12, Y12
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, R8
	JNZ     rows

	VMAXPD       Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X6
	VMAXPD       X6, X5, X5
	VPERMILPD    $1, X5, X6
	VMAXSD       X6, X5, X5
	VMOVSD       X5, (DX)
	ADDQ         $8, DX
	DECQ         CX
	JMP          block

done:
	VMOVMSKPD Y12, AX
	VZEROUPPER
	TESTQ     AX, AX
	SETNE     nan+88(FP)
	RET

// func atLeastAVX2(hi []float64, base int, floor float64, out []int32) int
//
// Writes base+i for the indexes i of hi with floor <= hi[i] (ordered: a
// NaN is not) into out, in order, and returns their number; eight rows a
// step, the indexes of a step's mask taken lowest bit first. len(hi) is a
// multiple of 8 and out has room for len(hi).
TEXT ·atLeastAVX2(SB), NOSPLIT, $0-72
	MOVQ         hi_base+0(FP), SI
	MOVQ         hi_len+8(FP), CX
	MOVQ         base+24(FP), R12
	VBROADCASTSD floor+32(FP), Y0
	MOVQ         out_base+40(FP), DI
	XORQ         AX, AX
	XORQ         DX, DX

step:
	CMPQ      AX, CX
	JGE       end
	VCMPPD    $0x12, (SI)(AX*8), Y0, Y1
	VCMPPD    $0x12, 32(SI)(AX*8), Y0, Y2
	VMOVMSKPD Y1, R8
	VMOVMSKPD Y2, R9
	SHLQ      $4, R9
	ORQ       R9, R8
	JNZ       emit

next:
	ADDQ $8, AX
	JMP  step

emit:
	BSFQ R8, R9
	LEAQ (AX)(R9*1), R10
	ADDQ R12, R10
	MOVL R10, (DI)(DX*4)
	INCQ DX
	LEAQ -1(R8), R11
	ANDQ R11, R8
	JNZ  emit
	JMP  next

end:
	VZEROUPPER
	MOVQ DX, ret+64(FP)
	RET
