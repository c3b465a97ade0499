package offline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBlockScoreBounds checks the score bounds by blocks where every run
// is one unit: each block's bound is at least every score bound of its
// units and its relevance bound at least their relevance bounds; the unit
// with the best score bound and the units listed above floors are those of
// the pass over every unit, with the same values; and blocks are skipped.
// It covers the speaker, time, number, question and role factors, the
// length prior both ways, event bests and relevance that is mostly low
// with a few high units (as a question's), or uniform.
func TestBlockScoreBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	tunings := map[string]func(*Tuning){
		"default": func(*Tuning) {},
		"roles":   func(tu *Tuning) { tu.TerseBump, tu.OpenBump, tu.QuestionBump = 1.3, 0.7, 0 },
		"shorter": func(tu *Tuning) { tu.LengthPow, tu.EventShare, tu.Next = -0.15, 0.3, 0 },
	}
	for name, adapt := range tunings {
		for _, kind := range []string{"skew", "uniform", "flat"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				skew, flat := kind == "skew", kind == "flat"
				n := 64*40 + 17 // a last block that is not full
				f, _ := benchFeaturesRuns(n, false)
				if len(f.RunStart) != n {
					t.Fatalf("%d runs of %d units", len(f.RunStart), n)
				}
				f.Visible = slices.Clone(f.Visible)
				f.Dated, f.Counted, f.Speaker, f.Role = make([]bool, n), make([]bool, n), make([]bool, n), make([]uint8, n)
				for i := range n {
					f.Visible[i] = r.IntN(20) != 0
					f.Dated[i], f.Counted[i], f.Speaker[i] = r.IntN(5) == 0, r.IntN(7) == 0, r.IntN(2) == 0
					f.Role[i] = uint8(r.IntN(4))
					f.RunWords[i] = int32(r.IntN(700)) // past the length table too
				}
				if flat {
					// Every bound reached: the same relevance and words
					// everywhere, every factor at its largest, every
					// other unit asking.
					for i := range n {
						f.Visible[i], f.Dated[i], f.Counted[i], f.Speaker[i] = true, true, true, true
						f.Role[i], f.RunWords[i], f.Question[i] = 1, 40, i%2 == 0
					}
					var rs Runs
					for i := range n {
						rs.Add(f.SameSession[:i+1], false, 40, f.Question[i])
					}
					f.Run, f.RunStart, f.RunAsks, f.RunWords, f.RunLinks = rs.Run, rs.RunStart, rs.RunAsks, rs.RunWords, rs.RunLinks
				}
				f.Cues = nil
				Complete(f)
				tu := DefaultTuning()
				adapt(&tu)
				relHi := make([]float64, n)
				for i := range relHi {
					if flat {
						relHi[i] = 0.7
					} else if skew {
						relHi[i] = r.Float64() * 0.1
						if r.IntN(300) == 0 {
							relHi[i] = 1 + r.Float64()
						}
					} else {
						relHi[i] = r.Float64() * 1.5
					}
				}
				bestHi := make([]float64, n/4+1)
				eventBest(f, relHi, bestHi)
				want := make([]float64, n)
				wantArg := tu.ScoreRange(f, relHi, want, bestHi, nil, 0, n)

				sc := &Scratch{}
				sc.scoreHi = make([]float64, n)
				for i := range sc.scoreHi {
					sc.scoreHi[i] = math.NaN() // unwritten
				}
				fs := &fastScan{tu: tu, sc: sc, f: f, n: n, relHi: relHi, bestHi: bestHi, scoreHi: sc.scoreHi, in: &Input{Chunk: 64 * 7}}
				arg := fs.blockScoreBounds()
				if arg != wantArg {
					t.Fatalf("best score bound at %d, the pass over every unit %d", arg, wantArg)
				}
				bb := fs.blockBounder()
				for b := range sc.blockHi {
					lo, hi := b*blockSize, min((b+1)*blockSize, n)
					if got, gotRel := bb.of(b); got != sc.blockHi[b] || gotRel != sc.blockRel[b] {
						t.Fatalf("block %d: bounds %v %v, then %v %v", b, sc.blockHi[b], sc.blockRel[b], got, gotRel)
					}
					if m := slices.Max(want[lo:hi]); !(sc.blockHi[b] >= m) {
						t.Fatalf("block %d: bound %v below a score bound %v", b, sc.blockHi[b], m)
					}
					if m := slices.Max(relHi[lo:hi]); !(sc.blockRel[b] >= m) {
						t.Fatalf("block %d: relevance bound %v below %v", b, sc.blockRel[b], m)
					}
				}
				done := 0
				for _, share := range []float64{1, 0.55, 0.2} {
					if share == 0.2 { // the blocks scored up to KeepRatio
						for _, d := range sc.blockDone {
							done += b2i(d)
						}
					}
					floor := share * want[wantArg]
					got := fs.scoresAtLeast(floor, nil)
					var ref []int
					for i, x := range want {
						if x >= floor {
							ref = append(ref, i)
						}
					}
					if !slices.Equal(got, ref) {
						t.Fatalf("score bounds at least %v: %v, want %v", floor, got, ref)
					}
					for _, i := range got {
						if math.Float64bits(sc.scoreHi[i]) != math.Float64bits(want[i]) {
							t.Fatalf("unit %d: score bound %v, want %v", i, sc.scoreHi[i], want[i])
						}
					}
					relFloor := share * slices.Max(relHi)
					gotRel := fs.relAtLeast(relFloor, nil)
					var refRel []int
					for i, x := range relHi {
						if x >= relFloor {
							refRel = append(refRel, i)
						}
					}
					if !slices.Equal(gotRel, refRel) {
						t.Fatalf("relevance bounds at least %v: %v, want %v", relFloor, gotRel, refRel)
					}
				}
				if skew && done == len(sc.blockDone) {
					t.Errorf("every one of %d blocks was scored", done)
				}
				if flat {
					// The bound is reached, to its margin.
					if top := slices.Max(want); !(sc.blockHi[1] <= top*(1+1e-9)) {
						t.Errorf("flat: block bound %v, best score bound %v", sc.blockHi[1], top)
					}
				}
				fs.allScoreBounds()
				for i := range want {
					if math.Float64bits(sc.scoreHi[i]) != math.Float64bits(want[i]) {
						t.Fatalf("unit %d after allScoreBounds: %v, want %v", i, sc.scoreHi[i], want[i])
					}
				}
				t.Logf("%d of %d blocks scored down to 0.55 of the best bound", done, len(sc.blockDone))
			})
		}
	}
}
