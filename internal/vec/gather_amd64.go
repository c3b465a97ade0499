package vec

// useDotsAt reports whether DotsAt runs dotRowsAt (SSE2, every amd64 CPU)
// rather than Dot row by row; the results are the same, bit for bit. A
// variable so that the tests can compare both paths (EachKernel).
var useDotsAt = true

// dotRowsAt computes out[j] = Dot(q, data[rows[j]*dim:(rows[j]+1)*dim])
// with SSE, bit-identical to Dot, after prefetching every cache line of
// the rows. dim must be a positive multiple of 4, len(q) >= dim, every
// row in range and len(out) = len(rows) > 0 (the caller checks).
//
//go:noescape
func dotRowsAt(q []float32, data []float32, dim int, rows []int32, out []float32)
