package rank

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/cputime"
	"github.com/higmem/higmem/internal/vec"
)

// searchBench is a space like the events of the bench's 100,000 turns:
// 28,038 rows of short texts over a Zipf vocabulary whose common words
// nearly every row shares (so that BM25 touches almost every row, as
// there), their hashing vectors quantized, and queries with their BM25
// scores.
type searchBench struct {
	mat     vec.Matrix
	ix      *bm25.Index
	queries []string
	qv      [][]float32
	lex     [][]float64
	touched [][]int
}

var (
	searchBenchOnce sync.Once
	searchBenchData *searchBench
)

func getSearchBench(tb testing.TB) *searchBench {
	searchBenchOnce.Do(func() {
		const n, queries = 28038, 32
		r := rand.New(rand.NewPCG(11, 12))
		vocab := make([]string, 5000)
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%dx", i)
		}
		z := rand.NewZipf(r, 1.05, 3, uint64(len(vocab)-1))
		text := func(words int) string {
			w := make([]string, words)
			for i := range w {
				w[i] = vocab[z.Uint64()]
			}
			return strings.Join(w, " ")
		}
		docs := make([]string, n)
		ix := bm25.New(bm25.Options{})
		for i := range docs {
			docs[i] = text(12 + r.IntN(30))
			ix.AddRef(fmt.Sprint(i), i, docs[i])
		}
		emb := hashing.New(0)
		vs, err := emb.Embed(context.Background(), docs)
		if err != nil {
			panic(err)
		}
		d := &searchBench{mat: vec.Matrix{Dim: emb.Dim()}, ix: ix}
		d.mat.QuantizeFrom(1)
		for _, v := range vs {
			d.mat.Append(vec.Normalize(v))
		}
		for range queries {
			q := text(6 + r.IntN(10))
			qv, err := emb.Embed(context.Background(), []string{q})
			if err != nil {
				panic(err)
			}
			lex := make([]float64, n)
			d.touched = append(d.touched, ix.ScoreRefs(q, lex, nil))
			d.lex = append(d.lex, lex)
			d.qv = append(d.qv, vec.Normalize(qv[0]))
			d.queries = append(d.queries, q)
		}
		searchBenchData = d
	})
	return searchBenchData
}

// BenchmarkSearch28k runs the event search of the bench's 100,000 turns
// (k = KEvent = 10, no filter) over synthetic rows of its shape.
func BenchmarkSearch28k(b *testing.B) {
	d := getSearchBench(b)
	var s Searcher
	j := 0
	cpu := cputime.Process()
	scored := 0
	for b.Loop() {
		s.Search(&d.mat, d.lex[j], d.touched[j], d.qv[j], 10, nil)
		scored += s.scored
		j = (j + 1) % len(d.qv)
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(scored)/float64(b.N), "scored/op")
}

// reportCPU reports the process's CPU time per operation since cpu (its
// reading before the loop), which a busy machine does not inflate as it
// does wall time.
func reportCPU(b *testing.B, cpu time.Duration) {
	if c := cputime.Process() - cpu; c > 0 {
		b.ReportMetric(float64(c.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkEventSearch28k is BenchmarkSearch28k with the BM25 scoring
// before it and the clearing after, as the root package's searchEvents
// runs them (the scores are then written just before Search reads them).
func BenchmarkEventSearch28k(b *testing.B) {
	d := getSearchBench(b)
	var s Searcher
	n := d.mat.Rows()
	lex := make([]float64, n)
	var touched []int
	j := 0
	cpu := cputime.Process()
	for b.Loop() {
		touched = d.ix.ScoreRefs(d.queries[j], lex, touched[:0])
		s.Search(&d.mat, lex, touched, d.qv[j], 10, nil)
		clear(lex)
		j = (j + 1) % len(d.qv)
	}
	reportCPU(b, cpu)
}

// BenchmarkSearchParts28k times the passes of Search over every row, on
// BenchmarkSearch28k's rows and first query: lexRange, and rowBounds with
// each block's maximum.
func BenchmarkSearchParts28k(b *testing.B) {
	d := getSearchBench(b)
	lex, touched := d.lex[0], d.touched[0]
	maxLex, _ := lexRange(lex, touched, nil)
	inv, _ := lexInverse(maxLex)
	hi := make([]float64, d.mat.Rows())
	d.mat.UpperTiered(d.qv[0], hi, func(float64) float64 { return 1 })
	eachRankKernel(func(kernels string) {
		b.Run("lexRange/"+kernels, func(b *testing.B) {
			cpu := cputime.Process()
			for b.Loop() {
				lexRange(lex, touched, nil)
			}
			reportCPU(b, cpu)
		})
		b.Run("blockBounds/"+kernels, func(b *testing.B) {
			h := make([]float64, len(hi))
			bmax := make([]float64, (len(hi)+searchBlock-1)/searchBlock)
			cpu := cputime.Process()
			for b.Loop() {
				copy(h, hi)
				blockBounds(lex, h, inv, bmax)
			}
			reportCPU(b, cpu)
		})
	})
}

// BenchmarkBestFirst28k times bestFirst alone on BenchmarkSearch28k's
// rows and queries, from their upper bounds (copied in each time, as
// UpperTiered writes them).
func BenchmarkBestFirst28k(b *testing.B) {
	d := getSearchBench(b)
	n := d.mat.Rows()
	his := make([][]float64, len(d.qv))
	invs, maxs := make([]float64, len(d.qv)), make([]float64, len(d.qv))
	for j := range d.qv {
		his[j] = make([]float64, n)
		d.mat.UpperTiered(d.qv[j], his[j], func(float64) float64 { return math.Inf(1) })
		maxs[j], _ = lexRange(d.lex[j], d.touched[j], nil)
		invs[j], _ = lexInverse(maxs[j])
	}
	var s Searcher
	j, scored := 0, 0
	cpu := cputime.Process()
	for b.Loop() {
		s.est = grow(s.est, n)
		copy(s.est, his[j])
		s.bestFirst(&d.mat, d.lex[j], maxs[j], invs[j], d.qv[j], 10, nil)
		scored += s.scored
		j = (j + 1) % len(d.qv)
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(scored)/float64(b.N), "scored/op")
}
