package vec

import "fmt"

// Splice returns a matrix whose row j is row src[j] of m when src[j] is
// not negative, and add[-src[j]-1] otherwise: rows of m dropped, kept in
// a new order, and new rows put among them, in one pass that copies each
// run of consecutive rows of m (and of its int8 copy) as a block. The
// result quantizes from the same number of rows as m, and is quantized
// exactly when it has that many rows (as a matrix built row by row would
// be); m is left as it was.
func (m *Matrix) Splice(src []int, add [][]float32) Matrix {
	d := m.Dim
	if d == 0 && len(add) > 0 {
		d = len(add[0])
	}
	out := Matrix{Dim: d, Data: make([]float32, len(src)*d), quantizeAt: m.quantizeAt}
	if d == 0 {
		return out
	}
	n := len(src)
	var q *quant
	if m.q != nil && m.quantizeAt > 0 && n >= m.quantizeAt {
		q = &quant{codes: make([]int8, n*d), scale: make([]float32, n), errQ: make([]float64, n),
			errT: make([]float64, n), sum: make([]float64, d)}
		q.stale.Store(true)
	}
	for j := 0; j < n; {
		if src[j] < 0 {
			v := add[-src[j]-1]
			if len(v) != d {
				panic(fmt.Sprintf("vec: splice in a row of length %d to a matrix of dimension %d", len(v), d))
			}
			copy(out.Data[j*d:(j+1)*d], v)
			if q != nil {
				q.quantize(j, v)
			}
			j++
			continue
		}
		// A run of consecutive rows of m.
		k := j + 1
		for k < n && src[k] == src[k-1]+1 {
			k++
		}
		lo, hi := src[j], src[j]+(k-j)
		copy(out.Data[j*d:k*d], m.Data[lo*d:hi*d])
		if q != nil {
			copy(q.codes[j*d:k*d], m.q.codes[lo*d:hi*d])
			copy(q.scale[j:k], m.q.scale[lo:hi])
			copy(q.errQ[j:k], m.q.errQ[lo:hi])
			copy(q.errT[j:k], m.q.errT[lo:hi])
		}
		j = k
	}
	out.q = q
	if q == nil {
		out.maybeQuantize()
	}
	return out
}
