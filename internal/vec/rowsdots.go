package vec

import "fmt"

// DotsOfRows writes Dot(q, Row(rows[j])) into out[j] for every j (the same
// values, bit for bit), with tmp as scratch (at least 4*Dim long): the rows
// copied four at a time into tmp, whose reads of scattered rows overlap,
// then dotted at once (dotRows, as DotsInto).
func (m *Matrix) DotsOfRows(q []float32, rows []int, out, tmp []float32) {
	d := m.Dim
	if len(q) != d {
		panic(fmt.Sprintf("vec: query of length %d for matrix of dimension %d", len(q), d))
	}
	out = out[:len(rows)]
	n := m.Rows()
	for _, i := range rows {
		if uint(i) >= uint(n) {
			panic(fmt.Sprintf("vec: DotsOfRows: row %d of %d", i, n))
		}
	}
	if d%4 != 0 || !haveDotRows {
		for j, i := range rows {
			out[j] = Dot(q, m.Data[i*d:(i+1)*d])
		}
		return
	}
	tmp = tmp[:4*d]
	for j := 0; j < len(rows); j += 4 {
		k := min(4, len(rows)-j)
		for r, i := range rows[j : j+k] {
			copy(tmp[r*d:(r+1)*d], m.Data[i*d:(i+1)*d])
		}
		dotRows(q, tmp[:k*d], d, out[j:j+k])
	}
}
