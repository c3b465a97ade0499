package offline

import (
	"math"

	"github.com/higmem/higmem/internal/vec"
)

// The dense feature of offline retrieval: the cosine of the question with
// each unit's own vector and with its window vector (the unit embedded with
// the units before it in its session: the root's window.go), mixed by one
// weight (Tuning.WindowWeight).

// DenseMix is offline retrieval's dense feature over a space: the cosine
// with each turn's vector and with its window vector, mixed by weight w
// ((1-w)·turn + w·window). w is 0 when the space has no window vectors.
type DenseMix struct {
	Turn, Win *vec.Matrix
	W         float64
}

// MixOf returns the dense feature of n units under window weight w: 0 (the
// unit's own cosine alone) when win does not hold n rows, or, below 1, when
// turn is of another dimension. With w below 1 it reads turn, which the
// caller loads first (until then, an empty matrix: the feature sees none);
// with w at 1 it reads win alone.
func MixOf(turn, win *vec.Matrix, n int, w float64) DenseMix {
	if w <= 0 || win.Rows() != n || w < 1 && win.Dim != turn.Dim {
		w = 0
	}
	return DenseMix{Turn: turn, Win: win, W: min(w, 1)}
}

// Ready reports whether the matrices the feature reads hold n rows: the
// window matrix when W > 0, the turn matrix when W < 1 or when turns
// stands in for hidden windows (see ScoresInto).
func (d DenseMix) Ready(n int, turns bool) bool {
	return (d.W <= 0 || d.Win.Rows() == n) && (d.W >= 1 && !turns || d.Turn.Rows() == n)
}

// mix combines a turn's cosine t and its window's cosine x.
func (d DenseMix) mix(t, x float64) float64 { return (1-d.W)*t + d.W*x }

// Exact returns the dense feature of row i, as the full scan computes it.
func (d DenseMix) Exact(q []float32, i int) float64 {
	switch d.W {
	case 0:
		return float64(vec.Dot(q, d.Turn.Row(i)))
	case 1:
		return float64(vec.Dot(q, d.Win.Row(i)))
	}
	return d.mix(float64(vec.Dot(q, d.Turn.Row(i))), float64(vec.Dot(q, d.Win.Row(i))))
}

// ExactInto writes Exact(q, lo+j) into out[j] for every j, with tmp as
// scratch (at least len(out) long): the rows' dot products four at a time
// (vec.Matrix.DotsInto).
func (d DenseMix) ExactInto(q []float32, lo int, out []float64, tmp []float32) {
	d.exactWith(out, tmp[:len(out)], func(m *vec.Matrix, dots []float32) { m.DotsInto(q, lo, dots) })
}

// ExactAt writes Exact(q, rows[j]) into out[j] for every j, with tmp as
// scratch (at least len(rows) long): the rows' dot products with their
// reads overlapped (vec.Matrix.DotsAt).
func (d DenseMix) ExactAt(q []float32, rows []int32, out []float64, tmp []float32) {
	d.exactWith(out[:len(rows)], tmp[:len(rows)], func(m *vec.Matrix, dots []float32) { m.DotsAt(q, rows, dots) })
}

// exactWith writes Exact's values into out from the dot products that
// fill fills into dots (len(out) long) for a matrix: the turn's, the
// window's, or both mixed, as Exact takes them.
func (d DenseMix) exactWith(out []float64, dots []float32, fill func(m *vec.Matrix, dots []float32)) {
	switch d.W {
	case 0, 1:
		m := d.Turn
		if d.W == 1 {
			m = d.Win
		}
		fill(m, dots)
		for j, x := range dots {
			out[j] = float64(x)
		}
		return
	}
	fill(d.Turn, dots)
	for j, x := range dots {
		out[j] = float64(x)
	}
	fill(d.Win, dots)
	for j, x := range dots {
		out[j] = d.mix(out[j], float64(x))
	}
}

// Quantized reports whether the matrices the feature reads keep int8
// copies (for meanDot and estimate).
func (d DenseMix) Quantized() bool {
	return (d.W == 1 || d.Turn.Quantized()) && (d.W == 0 || d.Win.Quantized())
}

// MeanDot returns the mean of the feature over the rows from the
// matrices' sums of rows (vec.Matrix.MeanDot).
func (d DenseMix) MeanDot(q []float32) float64 {
	switch d.W {
	case 0:
		return d.Turn.MeanDot(q)
	case 1:
		return d.Win.MeanDot(q)
	}
	return d.mix(d.Turn.MeanDot(q), d.Win.MeanDot(q))
}

// upper writes upper bounds of the feature, each estimate plus its error
// bound (see vec.Matrix.EstimateTiered), into hi, and returns the best
// lower bound. bound, est2 and bound2 are scratch when both matrices are
// read; one matrix is scanned for its upper bounds alone
// (vec.Matrix.UpperTiered: the same sums, half the bytes written).
func (d DenseMix) upper(q []float32, hi, bound, est2, bound2 []float64) float64 {
	switch d.W {
	case 0:
		return upperOf(d.Turn, q, hi)
	case 1:
		return upperOf(d.Win, q, hi)
	}
	est := hi
	estimateOf(d.Turn, q, est, bound)
	estimateOf(d.Win, q, est2, bound2)
	maxLo := math.Inf(-1)
	for i := range est {
		// The bound of a mix is the mix of the bounds (both weights are
		// positive); the margins of each bound cover the float64
		// rounding of the mix.
		e, b := d.mix(est[i], est2[i]), d.mix(bound[i], bound2[i])
		hi[i] = e + b
		maxLo = max(maxLo, e-b)
	}
	return maxLo
}

// ScoresInto writes the feature of every row into dst (length Rows()),
// with tmp as scratch; where visible (nil: every turn) says a window holds
// a turn the question must not see, the turn's own cosine stands in.
func (d DenseMix) ScoresInto(q []float32, dst []float64, tmp []float32, winVisible func(i int) bool) {
	if d.W != 1 || winVisible != nil {
		d.Turn.ScoresInto(tmp, q)
		for i, s := range tmp {
			dst[i] = float64(s)
		}
	}
	if d.W == 0 {
		return
	}
	d.Win.ScoresInto(tmp, q)
	for i, s := range tmp {
		switch {
		case winVisible != nil && !winVisible(i):
			// dst[i] keeps the turn's own cosine.
		case d.W == 1:
			dst[i] = float64(s)
		default:
			dst[i] = d.mix(dst[i], float64(s))
		}
	}
}

// estimateOf estimates the cosines of m's rows with q (vec.Matrix.
// EstimateTiered): the 4-bit scan of every row, then the int8 rescan of
// the rows whose 4-bit bound reaches the best 4-bit lower bound, the rows
// that may hold the best cosine (and at least the mean: a cosine below the
// mean adds nothing to relevance, so a loose bound there costs nothing).
// The bounds are valid whatever rows the rescan takes, so the pruned path
// decides as from int8 estimates of every row; the floor only trades the
// rescan against the exact cosines the pruned path computes where the
// 4-bit bounds are too loose. On the bench's 100k space (60 questions) it
// rescans 2.7% of the rows and the pruned path computes 337 exact cosines
// a question (122 from int8 estimates of every row); a floor 0.9 of the way
// from the mean rescanned 4.6% for 207 cosines, 1.1 of the way 1.5% for
// 591. A rescan reads 256 bytes of a row at 256 dimensions, an exact
// cosine 1 KiB and the turn's context.
func estimateOf(m *vec.Matrix, q []float32, est, bound []float64) float64 {
	mean := m.MeanDot(q)
	return m.EstimateTiered(q, est, bound, func(maxLow float64) float64 { return max(maxLow, mean) })
}

// upperOf is estimateOf writing each row's estimate plus its bound alone,
// into hi (vec.Matrix.UpperTiered).
func upperOf(m *vec.Matrix, q []float32, hi []float64) float64 {
	mean := m.MeanDot(q)
	return m.UpperTiered(q, hi, func(maxLow float64) float64 { return max(maxLow, mean) })
}
