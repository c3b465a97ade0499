package minilm

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/vec"
)

// TestLoCoMoDenseRecall measures evidence recall of MiniLM dense search
// alone, BM25 alone and their normalised-sum fusion (the engine's hybrid:
// BM25/max + cosine) on the LoCoMo dev file: per sample, rank that
// conversation's turns by the question, categories 1-4, questions with
// evidence. It is a measurement for BENCHMARKS.md, not a check, and runs
// only with HIGMEM_LOCOMO=1:
//
//	HIGMEM_LOCOMO=1 go test -run TestLoCoMoDenseRecall -v ./embed/minilm
func TestLoCoMoDenseRecall(t *testing.T) {
	if os.Getenv("HIGMEM_LOCOMO") == "" {
		t.Skip("set HIGMEM_LOCOMO=1 to measure")
	}
	samples, err := locomo.Load("../../../shared/data/locomo_dev.json")
	if err != nil {
		t.Skipf("LoCoMo dev data: %v", err)
	}
	m := loadTestModel(t)
	ks := []int{5, 10, 20}
	type acc struct{ sum [3]float64 }
	var dense, lex, hyb acc
	n := 0
	for _, s := range samples {
		turns := s.Turns()
		texts := make([]string, len(turns))
		idx := bm25.New(bm25.Options{})
		for i, tr := range turns {
			// The engine's text forms: vectors embed "Speaker: … Time: …
			// Content: …", BM25 indexes speaker and content.
			texts[i] = fmt.Sprintf("Speaker: %s. Time: %s. Content: %s", tr.Speaker, s.Sessions[sessionIndex(s, tr.Session)].DateTime, tr.Content())
			idx.Add(tr.DiaID, tr.Speaker+" "+tr.Content())
		}
		vs, err := m.Embed(t.Context(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range s.QA {
			if q.Category == 5 || len(q.Evidence) == 0 {
				continue
			}
			qv, err := m.Embed(t.Context(), []string{q.Question})
			if err != nil {
				t.Fatal(err)
			}
			cos := make([]float64, len(turns))
			for i := range turns {
				cos[i] = float64(vec.Dot(qv[0], vs[i]))
			}
			bm := idx.Scores(q.Question)
			top := 0.0
			for _, v := range bm {
				top = max(top, v)
			}
			rank := func(score func(i int) float64) []string {
				order := make([]int, len(turns))
				for i := range order {
					order[i] = i
				}
				slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
				ids := make([]string, 20)
				for j := range ids {
					ids[j] = turns[order[j]].DiaID
				}
				return ids
			}
			lexScore := func(i int) float64 {
				if top == 0 {
					return 0
				}
				return bm[turns[i].DiaID] / top
			}
			rd := rank(func(i int) float64 { return cos[i] })
			rl := rank(lexScore)
			rh := rank(func(i int) float64 { return lexScore(i) + cos[i] })
			for j, k := range ks {
				_, r := locomo.EvidenceScore(rd[:k], q.Evidence)
				dense.sum[j] += r
				_, r = locomo.EvidenceScore(rl[:k], q.Evidence)
				lex.sum[j] += r
				_, r = locomo.EvidenceScore(rh[:k], q.Evidence)
				hyb.sum[j] += r
			}
			n++
		}
	}
	t.Logf("LoCoMo dev, categories 1-4, %d questions with evidence", n)
	t.Logf("| retriever | R@5 | R@10 | R@20 |")
	for _, r := range []struct {
		name string
		a    acc
	}{{"BM25 (stop words + Porter)", lex}, {"MiniLM dense", dense}, {"hybrid (BM25/max + cosine)", hyb}} {
		t.Logf("| %s | %.3f | %.3f | %.3f |", r.name, r.a.sum[0]/float64(n), r.a.sum[1]/float64(n), r.a.sum[2]/float64(n))
	}
}

func sessionIndex(s locomo.Sample, n int) int {
	for i, sess := range s.Sessions {
		if sess.N == n {
			return i
		}
	}
	return 0
}
