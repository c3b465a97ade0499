package bm25

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// synthCorpus returns n deterministic chat-like documents over a Zipf-
// distributed vocabulary of made-up words, and a set of queries.
func synthCorpus(n int) (docs, queries []string) {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	syl := []string{"ka", "lo", "mi", "ter", "son", "ra", "vin", "pel", "dor", "shi", "an", "ex", "qua", "bri", "mon", "tel"}
	vocab := make([]string, 20000)
	for i := range vocab {
		var sb strings.Builder
		for j := 0; j < 2+i%3; j++ {
			sb.WriteString(syl[r.IntN(len(syl))])
		}
		fmt.Fprintf(&sb, "%d", i) // keep words distinct
		vocab[i] = sb.String()
	}
	z := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	sentence := func(words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = vocab[z.Uint64()]
		}
		return strings.Join(w, " ")
	}
	docs = make([]string, n)
	for i := range docs {
		docs[i] = sentence(10 + r.IntN(25))
	}
	queries = make([]string, 64)
	for i := range queries {
		queries[i] = sentence(4 + r.IntN(8))
	}
	return docs, queries
}

var (
	benchMu  sync.Mutex
	benchIdx = map[int]*Index{}
	benchQs  = map[int][]string{}
)

func benchIndex(n int) (*Index, []string) {
	benchMu.Lock()
	defer benchMu.Unlock()
	if ix, ok := benchIdx[n]; ok {
		return ix, benchQs[n]
	}
	docs, qs := synthCorpus(n)
	ix := New(Options{})
	for i, d := range docs {
		ix.Add(fmt.Sprint(i), d)
	}
	benchIdx[n], benchQs[n] = ix, qs
	return ix, qs
}

var benchSizes = []int{1_000, 10_000, 100_000}

func sizeName(n int) string { return fmt.Sprintf("docs=%dk", n/1000) }

func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			ix, qs := benchIndex(n)
			i := 0
			for b.Loop() {
				ix.Search(qs[i%len(qs)], 10)
				i++
			}
		})
	}
}

func BenchmarkScores(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			ix, qs := benchIndex(n)
			i := 0
			for b.Loop() {
				ix.Scores(qs[i%len(qs)])
				i++
			}
		})
	}
}

func BenchmarkSearchParallel(b *testing.B) {
	ix, qs := benchIndex(10_000)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ix.Search(qs[i%len(qs)], 10)
			i++
		}
	})
}

// BenchmarkAdd measures adding one document (analysis included) to an index
// that already holds n documents; ids repeat, so it also exercises replace.
func BenchmarkAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			docs, _ := synthCorpus(n)
			ix := New(Options{})
			for i, d := range docs {
				ix.Add(fmt.Sprint(i), d)
			}
			i := 0
			for b.Loop() {
				ix.Add(fmt.Sprint(i%n), docs[(i*7)%n])
				i++
			}
		})
	}
}

// BenchmarkScoreRefs measures the scoring the engine uses: scores written
// into a caller's slice by ref, then cleared.
func BenchmarkScoreRefs(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			ix, qs := refIndex(n)
			dst := make([]float64, n)
			var touched []int
			i := 0
			for b.Loop() {
				touched = ix.ScoreRefs(qs[i%len(qs)], dst, touched[:0])
				for _, r := range touched {
					dst[r] = 0
				}
				i++
			}
		})
	}
}

// BenchmarkAccumulate measures the scoring loops alone (accumulateLocked
// on analysed queries, by ref and by slot), in Go and with AVX-512 where
// the CPU has it, per query and per posting scored.
func BenchmarkAccumulate(b *testing.B) {
	defer func(old bool) { useScoreAVX512 = old }(useScoreAVX512)
	kernels := []struct {
		name string
		fast bool
	}{{"go", false}}
	if useScoreAVX512 {
		kernels = append(kernels, struct {
			name string
			fast bool
		}{"avx512", true})
	}
	for _, n := range benchSizes {
		ix, qs := refIndex(n)
		qterms := make([][]queryTerm, len(qs))
		for i, q := range qs {
			qterms[i] = queryTerms(ix.analyze(q))
		}
		postings := 0 // per pass over the queries
		for _, q := range qterms {
			for _, qt := range q {
				if tid, ok := ix.termIDs[qt.text]; ok {
					postings += len(ix.terms[tid].postings)
				}
			}
		}
		dst := make([]float64, n)
		for _, byRef := range []bool{true, false} {
			for _, kn := range kernels {
				name := fmt.Sprintf("%s/by=slot/%s", sizeName(n), kn.name)
				if byRef {
					name = fmt.Sprintf("%s/by=ref/%s", sizeName(n), kn.name)
				}
				b.Run(name, func(b *testing.B) {
					useScoreAVX512 = kn.fast
					var touched []int
					i := 0
					for b.Loop() {
						touched, _, _ = ix.accumulateLocked(qterms[i%len(qterms)], dst, touched[:0], byRef, -1)
						for _, r := range touched {
							dst[r] = 0
						}
						i++
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)*float64(len(qterms))/float64(postings), "ns/posting")
				})
			}
		}
	}
}

// BenchmarkScoreKernel measures termScorer.addByRef on one long posting
// list (every second or tenth document, refs equal to the slots, as the
// engine's are after a load), in Go and with AVX-512 where the CPU has
// it: 2,000 documents fit in L1 (compute), 100,000 do not (memory).
func BenchmarkScoreKernel(b *testing.B) {
	have := useScoreAVX512
	defer func() { useScoreAVX512 = have }()
	for _, docs := range []int{2_000, 100_000} {
		for _, every := range []int{2, 10} {
			r := rand.New(rand.NewPCG(1, 2))
			lens := make([]int32, docs)
			refs := make([]int32, docs)
			var ps []posting
			for i := range lens {
				lens[i] = int32(5 + r.IntN(40))
				refs[i] = int32(i)
				if r.IntN(every) == 0 {
					ps = append(ps, posting{doc: int32(i), tf: int32(1 + r.IntN(3))})
				}
			}
			dst := make([]float64, docs)
			touched := make([]int, len(ps))
			plens := make([]int32, len(ps)) // as term.lens holds them
			for j, p := range ps {
				plens[j] = lens[p.doc]
			}
			for _, fast := range []bool{false, true} {
				if fast && !have {
					continue
				}
				name := "go"
				if fast {
					name = "avx512"
				}
				b.Run(fmt.Sprintf("docs=%d/every=%d/%s", docs, every, name), func(b *testing.B) {
					useScoreAVX512 = fast
					sc := termScorer{w: 1.3, c0: 0.3, c1: 0.02}
					for b.Loop() {
						k, _ := sc.addByRef(ps, plens, refs, dst, touched, 0)
						for _, e := range touched[:k] {
							dst[e] = 0
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ps)), "ns/posting")
				})
			}
		}
	}
}

// refIndex returns an index of synthCorpus(n)'s documents, document i with
// ref i, and the corpus's queries.
func refIndex(n int) (*Index, []string) {
	docs, qs := synthCorpus(n)
	ix := New(Options{})
	batch := make([]Doc, len(docs))
	for i, d := range docs {
		batch[i] = Doc{ID: fmt.Sprint(i), Ref: i, Text: d}
	}
	ix.AddBatch(batch)
	return ix, qs
}
