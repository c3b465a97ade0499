// Package vec holds the small amount of vector maths higmem needs: dot
// products, normalisation, float32 <-> bytes conversion and an exact top-k
// search over a contiguous row-major matrix.
//
// Scanning a matrix is the cost that grows with a memory space, so it is
// done with SIMD on amd64 (SSE multiplies and adds in the same order as Dot,
// so every score is bit-identical to Dot's) and split across cores for large
// matrices. A large matrix can also keep an int8 copy of its rows
// (QuantizeFrom), scanned four times faster into estimates with rigorous
// error bounds (Estimate), so that a search computes exact scores only for
// the rows that can rank.
package vec

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"

	"github.com/higmem/higmem/internal/parallel"
)

// Dot returns the dot product of a and b, which must have equal length.
func Dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a)
	b = b[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Normalize scales v to unit L2 norm in place and returns it. A zero vector
// is left as is.
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Encode returns v as little-endian float32 bytes.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode parses little-endian float32 bytes.
func Decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vec: decode: %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Hit is one search result: a row index and its score.
type Hit struct {
	Row   int
	Score float32
}

// Matrix is a contiguous row-major matrix of unit vectors, one row per item.
// The zero value is an empty matrix of dimension 0; set Dim before appending.
type Matrix struct {
	Dim  int
	Data []float32

	// quantizeAt and q: see QuantizeFrom.
	quantizeAt int
	q          *quant
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int {
	if m.Dim == 0 {
		return 0
	}
	return len(m.Data) / m.Dim
}

// Append adds a row and returns its index. The row must have length Dim.
func (m *Matrix) Append(v []float32) int {
	if len(v) != m.Dim {
		panic(fmt.Sprintf("vec: append row of length %d to matrix of dimension %d", len(v), m.Dim))
	}
	m.Data = append(m.Data, v...)
	if m.q != nil {
		m.q.append(v)
	} else {
		m.maybeQuantize()
	}
	return m.Rows() - 1
}

// Set replaces row i.
func (m *Matrix) Set(i int, v []float32) {
	copy(m.Data[i*m.Dim:(i+1)*m.Dim], v)
	if m.q != nil {
		m.q.quantize(i, m.Row(i))
		m.q.stale.Store(true)
	}
}

// Bytes returns the memory the matrix holds: its rows, and its int8 and
// 4-bit copies with the copies' scales, bounds and row sum.
func (m *Matrix) Bytes() int64 {
	n := int64(cap(m.Data)) * 4
	if q := m.q; q != nil {
		n += int64(cap(q.codes)) + int64(cap(q.terms))*16 + int64(len(q.sum))*8 + q.q4.bytes()
	}
	return n
}

// Row returns row i (aliasing the matrix storage).
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Dim : (i+1)*m.Dim] }

// TopK returns the k rows with the highest dot product with q, best first.
// Ties are broken by the lower row index. keep, when non-nil, filters rows.
func (m *Matrix) TopK(q []float32, k int, keep func(row int) bool) []Hit {
	n := m.Rows()
	if k <= 0 || n == 0 {
		return nil
	}
	h := make(minHeap, 0, k+1)
	var block [blockRows]float32
	for lo := 0; lo < n; lo += blockRows {
		hi := min(lo+blockRows, n)
		scores := block[:hi-lo]
		m.dotRange(q, lo, scores)
		for j, s := range scores {
			i := lo + j
			if keep != nil && !keep(i) {
				continue
			}
			if len(h) < k {
				heap.Push(&h, Hit{i, s})
				continue
			}
			if better(Hit{i, s}, h[0]) {
				h[0] = Hit{i, s}
				heap.Fix(&h, 0)
			}
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// blockRows is how many rows TopK scores at a time.
const blockRows = 256

// Scores returns the dot product of q with every row.
func (m *Matrix) Scores(q []float32) []float32 {
	out := make([]float32, m.Rows())
	m.ScoresInto(out, q)
	return out
}

// parallelFloats is the matrix size (rows times dimension) from which
// ScoresInto splits the scan across cores; below it one core is faster than
// starting goroutines.
const parallelFloats = 1 << 18

// ScoresInto writes the dot product of q with every row into dst, which
// must have length Rows(). Each score equals Dot(q, Row(i)) exactly. Large
// matrices are scanned by up to GOMAXPROCS goroutines at once.
func (m *Matrix) ScoresInto(dst []float32, q []float32) {
	n := m.Rows()
	if len(dst) != n {
		panic(fmt.Sprintf("vec: ScoresInto: dst has length %d for %d rows", len(dst), n))
	}
	workers := min(runtime.GOMAXPROCS(0), 4, n*m.Dim/parallelFloats)
	if workers <= 1 {
		m.dotRange(q, 0, dst)
		return
	}
	per := (n + workers - 1) / workers
	parallel.For(workers, func(w int) {
		lo := min(w*per, n)
		m.dotRange(q, lo, dst[lo:min(lo+per, n)])
	})
}

// DotsInto writes Dot(q, Row(lo+j)) into out[j] for every j, exactly, four
// rows at a time where it can (faster than Dot row by row: each row's sums
// are a chain of dependent adds).
func (m *Matrix) DotsInto(q []float32, lo int, out []float32) {
	if lo < 0 || lo+len(out) > m.Rows() {
		panic(fmt.Sprintf("vec: DotsInto: rows %d to %d of %d", lo, lo+len(out), m.Rows()))
	}
	m.dotRange(q, lo, out)
}

// dotRange writes Dot(q, Row(lo+j)) into out[j] for every j.
func (m *Matrix) dotRange(q []float32, lo int, out []float32) {
	d := m.Dim
	if len(q) != d {
		panic(fmt.Sprintf("vec: query of length %d for matrix of dimension %d", len(q), d))
	}
	data := m.Data[lo*d : (lo+len(out))*d]
	if d%4 == 0 && haveDotRows {
		dotRows(q, data, d, out)
		return
	}
	for j := range out {
		out[j] = Dot(q, data[j*d:(j+1)*d])
	}
}

// better reports whether a ranks above b.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Row < b.Row
}

// minHeap keeps the worst of the current top k at the root.
type minHeap []Hit

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
