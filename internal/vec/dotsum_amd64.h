// The steps dotRows (dot_amd64.s) and dotRowsAt (gather_amd64.s) share,
// which give Dot's rounding: the query at SI, AX counting the row's bytes
// from 0 to CX (its size), X4 to X11 scratch.

// DOT4LOOP adds the lane products of the rows at R8, R9, R10 and R11 with
// the query into X0, X1, X2 and X3 (SSE MULPS/ADDPS, no fused
// multiply-add); inner is its label.
#define DOT4LOOP(inner) \
inner: \
	MOVUPS (SI)(AX*1), X4 \
	MOVUPS (R8)(AX*1), X5 \
	MULPS  X4, X5 \
	ADDPS  X5, X0 \
	MOVUPS (R9)(AX*1), X6 \
	MULPS  X4, X6 \
	ADDPS  X6, X1 \
	MOVUPS (R10)(AX*1), X7 \
	MULPS  X4, X7 \
	ADDPS  X7, X2 \
	MOVUPS (R11)(AX*1), X8 \
	MULPS  X4, X8 \
	ADDPS  X8, X3 \
	ADDQ   $16, AX \
	CMPQ   AX, CX \
	JLT    inner

// DOT1LOOP adds the lane products of the row at row with the query into
// X0; inner is its label.
#define DOT1LOOP(row, inner) \
inner: \
	MOVUPS (SI)(AX*1), X4 \
	MOVUPS (row)(AX*1), X5 \
	MULPS  X4, X5 \
	ADDPS  X5, X0 \
	ADDQ   $16, AX \
	CMPQ   AX, CX \
	JLT    inner

// HSUM writes ((s0+s1)+s2)+s3 of the lane sums in x to off(DX).
#define HSUM(x, off) \
	MOVAPS x, X9 \
	SHUFPS $0x55, X9, X9 \
	MOVAPS x, X10 \
	SHUFPS $0xAA, X10, X10 \
	MOVAPS x, X11 \
	SHUFPS $0xFF, X11, X11 \
	ADDSS  X9, x \
	ADDSS  X10, x \
	ADDSS  X11, x \
	MOVSS  x, off(DX)
