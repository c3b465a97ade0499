#include "textflag.h"

// func dotRowsAt(q []float32, data []float32, dim int, rows []int32, out []float32)
//
// out[j] = Dot(q, data[rows[j]*dim:(rows[j]+1)*dim]) for every j, with the
// same rounding as Dot and as dotRows (four lane sums of SSE MULPS/ADDPS,
// then ((s0+s1)+s2)+s3). First every cache line of every row is
// prefetched, so that the rows' misses overlap rather than come one after
// another; then four rows are summed at once, as in dotRows. dim must be a
// positive multiple of 4, every row in range, len(out) = len(rows) > 0.
TEXT ·dotRowsAt(SB), NOSPLIT, $0-104
	MOVQ q_base+0(FP), SI
	MOVQ data_base+24(FP), DI
	MOVQ dim+48(FP), CX
	MOVQ rows_base+56(FP), R12
	MOVQ rows_len+64(FP), BX
	MOVQ out_base+80(FP), DX
	SHLQ $2, CX                // row size in bytes

	// Prefetch: every 64 bytes of each row from its start, and its last
	// byte (a row need not start on a line).
	MOVQ BX, R13
	MOVQ R12, R11

pfrow:
	MOVLQSX (R11), R8
	IMULQ   CX, R8
	ADDQ    DI, R8
	XORQ    AX, AX

pfline:
	PREFETCHT0 (R8)(AX*1)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JLT        pfline
	PREFETCHT0 -1(R8)(CX*1)
	ADDQ       $4, R11
	DECQ       R13
	JNZ        pfrow

loop4:
	CMPQ BX, $4
	JLT  loop1
	MOVLQSX 0(R12), R8
	IMULQ   CX, R8
	ADDQ    DI, R8
	MOVLQSX 4(R12), R9
	IMULQ   CX, R9
	ADDQ    DI, R9
	MOVLQSX 8(R12), R10
	IMULQ   CX, R10
	ADDQ    DI, R10
	MOVLQSX 12(R12), R11
	IMULQ   CX, R11
	ADDQ    DI, R11
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORQ  AX, AX

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
	ADDQ $16, R12
	SUBQ $4, BX
	JMP  loop4

loop1:
	CMPQ BX, $0
	JEQ  done
	MOVLQSX (R12), R8
	IMULQ   CX, R8
	ADDQ    DI, R8
	XORPS   X0, X0
	XORQ    AX, AX

inner1:
	MOVUPS (SI)(AX*1), X4
	MOVUPS (R8)(AX*1), X5
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
	ADDQ $4, R12
	DECQ BX
	JMP  loop1

done:
	RET
