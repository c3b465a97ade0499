package vec

// dotI8 computes out[r] = sum_j p[j]*codes[r*dim+j] exactly with SSE2.
// dim must be a positive multiple of 16, len(p) >= dim and len(codes) >=
// len(out)*dim (the caller checks), and no sum may overflow an int32.
//
//go:noescape
func dotI8(p []int16, codes []int8, dim int, out []int32)
