package vec

// dotRows computes out[r] = Dot(q, data[r*dim:(r+1)*dim]) with SSE,
// bit-identical to Dot. dim must be a positive multiple of 4, len(q) >= dim
// and len(data) >= len(out)*dim (the caller checks).
//
//go:noescape
func dotRows(q []float32, data []float32, dim int, out []float32)

const haveDotRows = true
