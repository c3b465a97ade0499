#include "textflag.h"

// func dotRows(q []float32, data []float32, dim int, out []float32)
//
// out[r] = Dot(q, data[r*dim:(r+1)*dim]) for every r < len(out), with the
// same rounding as Dot: four lane sums s0..s3 (element j goes to lane j%4),
// each a sequence of float32 multiplies and adds (SSE MULPS/ADDPS, no fused
// multiply-add), then ((s0+s1)+s2)+s3. dim must be a positive multiple of 4
// and data must hold len(out) rows. Four rows are processed at once to hide
// the latency of the adds.
TEXT ·dotRows(SB), NOSPLIT, $0-80
	MOVQ q_base+0(FP), SI
	MOVQ data_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ out_base+56(FP), DX
	MOVQ out_len+64(FP), BX
	SHLQ $2, CX                // row size in bytes

loop4:
	CMPQ BX, $4
	JLT  loop1
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	MOVQ DI, R8
	LEAQ (DI)(CX*1), R9
	LEAQ (R9)(CX*1), R10
	LEAQ (R10)(CX*1), R11
	XORQ AX, AX

inner4:
	MOVUPS (SI)(AX*1), X4
	MOVUPS (R8)(AX*1), X5
	MULPS  X4, X5
	ADDPS  X5, X0
	MOVUPS (R9)(AX*1), X6
	MULPS  X4, X6
	ADDPS  X6, X1
	MOVUPS (R10)(AX*1), X7
	MULPS  X4, X7
	ADDPS  X7, X2
	MOVUPS (R11)(AX*1), X8
	MULPS  X4, X8
	ADDPS  X8, X3
	ADDQ   $16, AX
	CMPQ   AX, CX
	JLT    inner4

	// Horizontal sums ((s0+s1)+s2)+s3 of X0..X3.
	MOVAPS X0, X9
	SHUFPS $0x55, X9, X9
	MOVAPS X0, X10
	SHUFPS $0xAA, X10, X10
	MOVAPS X0, X11
	SHUFPS $0xFF, X11, X11
	ADDSS  X9, X0
	ADDSS  X10, X0
	ADDSS  X11, X0
	MOVSS  X0, (DX)

	MOVAPS X1, X9
	SHUFPS $0x55, X9, X9
	MOVAPS X1, X10
	SHUFPS $0xAA, X10, X10
	MOVAPS X1, X11
	SHUFPS $0xFF, X11, X11
	ADDSS  X9, X1
	ADDSS  X10, X1
	ADDSS  X11, X1
	MOVSS  X1, 4(DX)

	MOVAPS X2, X9
	SHUFPS $0x55, X9, X9
	MOVAPS X2, X10
	SHUFPS $0xAA, X10, X10
	MOVAPS X2, X11
	SHUFPS $0xFF, X11, X11
	ADDSS  X9, X2
	ADDSS  X10, X2
	ADDSS  X11, X2
	MOVSS  X2, 8(DX)

	MOVAPS X3, X9
	SHUFPS $0x55, X9, X9
	MOVAPS X3, X10
	SHUFPS $0xAA, X10, X10
	MOVAPS X3, X11
	SHUFPS $0xFF, X11, X11
	ADDSS  X9, X3
	ADDSS  X10, X3
	ADDSS  X11, X3
	MOVSS  X3, 12(DX)

	ADDQ $16, DX
	LEAQ (R11)(CX*1), DI
	SUBQ $4, BX
	JMP  loop4

loop1:
	CMPQ BX, $0
	JEQ  done
	XORPS X0, X0
	XORQ  AX, AX

inner1:
	MOVUPS (SI)(AX*1), X4
	MOVUPS (DI)(AX*1), X5
	MULPS  X4, X5
	ADDPS  X5, X0
	ADDQ   $16, AX
	CMPQ   AX, CX
	JLT    inner1

	MOVAPS X0, X9
	SHUFPS $0x55, X9, X9
	MOVAPS X0, X10
	SHUFPS $0xAA, X10, X10
	MOVAPS X0, X11
	SHUFPS $0xFF, X11, X11
	ADDSS  X9, X0
	ADDSS  X10, X0
	ADDSS  X11, X0
	MOVSS  X0, (DX)

	ADDQ $4, DX
	ADDQ CX, DI
	DECQ BX
	JMP  loop1

done:
	RET
