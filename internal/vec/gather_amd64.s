#include "textflag.h"
#include "dotsum_amd64.h"

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

	DOT4LOOP(inner4)

	// Horizontal sums ((s0+s1)+s2)+s3 of X0..X3.
	HSUM(X0, 0)

	HSUM(X1, 4)

	HSUM(X2, 8)

	HSUM(X3, 12)

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

	DOT1LOOP(R8, inner1)

	HSUM(X0, 0)

	ADDQ $4, DX
	ADDQ $4, R12
	DECQ BX
	JMP  loop1

done:
	RET
