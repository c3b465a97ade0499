package vec

import "fmt"

// Splice returns a matrix whose row j is row src[j] of m when src[j] is
// not negative, and add[-src[j]-1] otherwise: rows of m dropped, kept in
// a new order, and new rows put among them, in one pass that copies each
// run of consecutive rows of m (and of its int8 copy) as a block. The
// result quantizes from the same number of rows as m, and is quantized
// exactly when it has that many rows (as a matrix built row by row would
// be). When the rows kept stay in order and the new ones all come after
// them (rows deleted, rows appended), the result is m's storage, compacted
// in place; m must not be used afterwards.
func (m *Matrix) Splice(src []int, add [][]float32) Matrix {
	if m.compactable(src) {
		return m.compact(src, add)
	}
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
		q = newQuant(n, d, n)
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
			q.copyRows(j, m.q, lo, hi, d)
		}
		j = k
	}
	out.q = q
	if q == nil {
		out.maybeQuantize()
	}
	return out
}

// compactable reports whether src keeps rows of m in increasing order,
// with new rows only after them.
func (m *Matrix) compactable(src []int) bool {
	if m.Dim == 0 {
		return false
	}
	last, added := -1, false
	for _, p := range src {
		switch {
		case p < 0:
			added = true
		case added || p <= last:
			return false
		default:
			last = p
		}
	}
	return true
}

// compact is Splice when m.compactable(src): the rows kept move down in
// place, run by run, and the new rows are appended.
func (m *Matrix) compact(src []int, add [][]float32) Matrix {
	d, q := m.Dim, m.q
	kept := 0
	for kept < len(src) && src[kept] >= 0 {
		kept++
	}
	for j := 0; j < kept; {
		k := j + 1
		for k < kept && src[k] == src[k-1]+1 {
			k++
		}
		if lo := src[j]; lo != j {
			copy(m.Data[j*d:k*d], m.Data[lo*d:(lo+k-j)*d])
			if q != nil {
				q.copyRows(j, q, lo, lo+k-j, d)
			}
		}
		j = k
	}
	out := *m
	if kept < m.Rows() {
		out.Data = out.Data[:kept*d]
		if q != nil {
			q.truncate(kept, d)
			q.stale.Store(true)
			if kept < m.quantizeAt {
				out.q = nil // as a matrix of this many rows, built row by row
			}
		}
	}
	*m = Matrix{}
	for _, p := range src[kept:] {
		out.Append(add[-p-1])
	}
	return out
}
