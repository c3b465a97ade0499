#include "textflag.h"
#include "dotsum_amd64.h"

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

	DOT4LOOP(inner4)

	// Horizontal sums ((s0+s1)+s2)+s3 of X0..X3.
	HSUM(X0, 0)

	HSUM(X1, 4)

	HSUM(X2, 8)

	HSUM(X3, 12)

	ADDQ $16, DX
	LEAQ (R11)(CX*1), DI
	SUBQ $4, BX
	JMP  loop4

loop1:
	CMPQ BX, $0
	JEQ  done
	XORPS X0, X0
	XORQ  AX, AX

	DOT1LOOP(DI, inner1)

	HSUM(X0, 0)

	ADDQ $4, DX
	ADDQ CX, DI
	DECQ BX
	JMP  loop1

done:
	RET
