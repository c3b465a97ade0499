package offline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/vec"
)

// unitRows returns n unit vectors of dimension dim: "random" (Gaussian),
// "sparse" (a few coordinates, as the hashing embedder's), or "clustered"
// (offsets around a few centres: many close cosines, the rows a first pass
// must not lose).
func unitRows(r *rand.Rand, kind string, n, dim int) [][]float32 {
	centres := make([][]float32, 5)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range centres[c] {
			centres[c][j] = float32(r.NormFloat64())
		}
	}
	rows := make([][]float32, n)
	for i := range rows {
		v := make([]float32, dim)
		switch kind {
		case "sparse":
			for range 3 + r.IntN(20) {
				v[r.IntN(dim)] += float32(r.NormFloat64())
			}
		case "clustered":
			c := centres[r.IntN(len(centres))]
			for j := range v {
				v[j] = c[j] + 0.15*float32(r.NormFloat64())
			}
		default:
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
		}
		rows[i] = vec.Normalize(v)
	}
	return rows
}

// TestFastTieredMatchesFull checks the pruned path, whose cosines come from
// the 4-bit scan with an int8 rescan (estimateOf), against the full scan
// of every exact cosine: the same units searched and selected, with the
// same scores and relevance bit for bit, on random, sparse and clustered
// vectors, with the window's cosine alone and mixed with the turn's, and
// with parts of a few hundred units (as on several cores). It also checks
// that the rescan skipped rows, so that the 4-bit bounds were used.
func TestFastTieredMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, kind := range []string{"random", "sparse", "clustered", "random-single", "clustered-single"} {
		for _, w := range []float64{1, 0.5} {
			t.Run(fmt.Sprintf("%s/w=%g", kind, w), func(t *testing.T) {
				n, dim := 3000, 64
				// -single: every run one turn, the bound passes of
				// singles and scoreBoundsSingle.
				kind, single := strings.CutSuffix(kind, "-single")
				f0, _ := benchFeaturesRuns(n, !single)
				win, turn := vec.Matrix{Dim: dim}, vec.Matrix{Dim: dim}
				win.QuantizeFrom(1)
				turn.QuantizeFrom(1)
				for _, v := range unitRows(r, kind, n, dim) {
					win.Append(v)
				}
				for _, v := range unitRows(r, kind, n, dim) {
					turn.Append(v)
				}
				dm := MixOf(&turn, &win, n, w)
				events := make([][]int32, 0)
				for i, e := range f0.Event {
					for int(e) >= len(events) {
						events = append(events, nil)
					}
					if e >= 0 {
						events[e] = append(events[e], int32(i))
					}
				}
				tu := DefaultTuning()
				tu.WindowWeight = w
				pruned, skipped := 0, 0
				queries := unitRows(r, kind, 40, dim)
				for qi, q := range queries {
					if qi%4 == 0 {
						// A question close to one unit, as when it
						// repeats a turn's words.
						u := win.Row(r.IntN(n))
						for j := range q {
							q[j] = 0.3*q[j] + u[j]
						}
						q = vec.Normalize(q)
					}
					lex := make([]float64, n)
					for range 5 + r.IntN(200) {
						lex[r.IntN(n)] = r.Float64() * 8
					}
					features := func(dense bool) *Features {
						f := *f0
						f.Lex = lex
						f.Visible = slices.Repeat([]bool{true}, n)
						f.Mean, f.MeanSet = dm.MeanDot(q), true
						if dense {
							f.Dense = make([]float64, n)
							dm.ScoresInto(q, f.Dense, make([]float32, n), nil)
						}
						return &f
					}
					in := &Input{Tuning: tu, Units: n, KTurn: 10, Vector: q, Dense: dm, EventUnits: events, Features: features, Chunk: 700}
					in.Fast = true
					var sc Scratch
					got := Select(in, &sc)
					in.Fast = false
					var sc2 Scratch
					want := Select(in, &sc2)
					// Other work beside (Input.Beside), on either path:
					// done once, the same selection.
					for _, fast := range []bool{true, false} {
						calls := 0
						in.Fast, in.Beside = fast, func() { calls++ }
						var sc3 Scratch
						b := Select(in, &sc3)
						in.Fast, in.Beside = false, nil
						ref := want
						if fast {
							ref = got
						}
						if calls != 1 || b.Pruned != ref.Pruned || !slices.Equal(b.Search, ref.Search) || b.K != ref.K || !slices.Equal(b.Ranked[:b.K], ref.Ranked[:ref.K]) {
							t.Fatalf("query %d, fast %v, with work beside: %d calls, pruned %v, search %v selected %v; without: pruned %v, %v %v", qi, fast, calls, b.Pruned, b.Search, b.Ranked[:b.K], ref.Pruned, ref.Search, ref.Ranked[:ref.K])
						}
					}
					if got.Pruned {
						pruned++
					}
					if !slices.Equal(got.Search, want.Search) || got.K != want.K || !slices.Equal(got.Ranked[:got.K], want.Ranked[:want.K]) {
						t.Fatalf("query %d: search %v selected %v, full scan %v %v", qi, got.Search, got.Ranked[:got.K], want.Search, want.Ranked[:want.K])
					}
					for _, i := range got.Ranked[:got.K] {
						if math.Float64bits(got.Scores.Scores[i]) != math.Float64bits(want.Scores.Scores[i]) {
							t.Fatalf("query %d unit %d: score %v, full scan %v", qi, i, got.Scores.Scores[i], want.Scores.Scores[i])
						}
					}
					for _, i := range got.Search {
						if math.Float64bits(got.Rel[i]) != math.Float64bits(want.Rel[i]) {
							t.Fatalf("query %d unit %d: relevance %v, full scan %v", qi, i, got.Rel[i], want.Rel[i])
						}
					}
					// Rows the rescan skipped keep their 4-bit bounds,
					// looser than the int8 ones.
					m := dm.Win
					if w < 1 {
						m = dm.Turn
					}
					est, bound := make([]float64, n), make([]float64, n)
					est8, bound8 := make([]float64, n), make([]float64, n)
					estimateOf(m, q, est, bound)
					m.Estimate(q, est8, bound8)
					for i := range n {
						if bound[i] > bound8[i] {
							skipped++
						}
					}
				}
				if pruned < len(queries)/2 {
					t.Errorf("the pruned path decided %d of %d questions", pruned, len(queries))
				}
				if skipped == 0 {
					t.Error("the int8 rescan took every row")
				}
				t.Logf("pruned %d of %d questions; %.1f%% of rows kept 4-bit bounds", pruned, len(queries), 100*float64(skipped)/float64(n*len(queries)))
			})
		}
	}
}

// TestDenseUpper checks DenseMix.upper on each weight: every upper bound
// at least the exact feature, the best lower bound at most the best
// feature, and the values those of the estimates and bounds (estimateOf)
// mixed and summed, bit for bit.
func TestDenseUpper(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	n, dim := 2000, 64
	win, turn := vec.Matrix{Dim: dim}, vec.Matrix{Dim: dim}
	win.QuantizeFrom(1)
	turn.QuantizeFrom(1)
	for _, v := range unitRows(r, "clustered", n, dim) {
		win.Append(v)
	}
	for _, v := range unitRows(r, "clustered", n, dim) {
		turn.Append(v)
	}
	for _, w := range []float64{0, 0.5, 1} {
		dm := MixOf(&turn, &win, n, w)
		for qi, q := range unitRows(r, "clustered", 6, dim) {
			if qi%2 == 0 {
				u := win.Row(r.IntN(n))
				for j := range q {
					q[j] = 0.3*q[j] + u[j]
				}
				q = vec.Normalize(q)
			}
			hi, bound, est2, bound2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			maxLo := dm.upper(q, hi, bound, est2, bound2)
			// The reference: estimates and bounds of each matrix, mixed.
			e1, b1, e2, b2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			estimateOf(&turn, q, e1, b1)
			estimateOf(&win, q, e2, b2)
			best := math.Inf(-1)
			for i := range n {
				x := dm.Exact(q, i)
				best = max(best, x)
				var want float64
				switch w {
				case 0:
					want = e1[i] + b1[i]
				case 1:
					want = e2[i] + b2[i]
				default:
					want = dm.mix(e1[i], e2[i]) + dm.mix(b1[i], b2[i])
				}
				if !(hi[i] >= x) || math.Float64bits(hi[i]) != math.Float64bits(want) {
					t.Fatalf("w %g, query %d, row %d: upper bound %v, feature %v, want %v", w, qi, i, hi[i], x, want)
				}
			}
			if !(maxLo <= best) {
				t.Fatalf("w %g, query %d: best lower bound %v above the best feature %v", w, qi, maxLo, best)
			}
		}
	}
}
