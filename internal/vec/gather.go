package vec

import "fmt"

// DotsAt writes Dot(q, Row(rows[j])) into out[j] for every j, exactly (bit
// for bit Dot's rounding), for rows anywhere in the matrix: the few a
// pruned search scores exactly, whose float rows are mostly not in cache.
// It asks for every cache line of the rows at once before it reads any
// (prefetch), so that their misses overlap, then takes them four at a
// time; it is meant for a handful of rows a call (each call prefetches
// all of its rows' lines first).
func (m *Matrix) DotsAt(q []float32, rows []int32, out []float32) {
	d := m.Dim
	if len(q) != d {
		panic(fmt.Sprintf("vec: DotsAt: query of length %d for rows of dimension %d", len(q), d))
	}
	if len(out) != len(rows) {
		panic(fmt.Sprintf("vec: DotsAt: %d results for %d rows", len(out), len(rows)))
	}
	n := m.Rows()
	for _, i := range rows {
		if i < 0 || int(i) >= n {
			panic(fmt.Sprintf("vec: DotsAt: row %d of %d", i, n))
		}
	}
	if len(rows) == 0 {
		return
	}
	if d%4 == 0 && d > 0 && useDotsAt {
		dotRowsAt(q, m.Data, d, rows, out)
		return
	}
	for j, i := range rows {
		out[j] = Dot(q, m.Row(int(i)))
	}
}
