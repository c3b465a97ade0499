package higmem

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/eval/locomo"
)

// TestOfflineLoCoMoSweep is the tool the offline retrieval constants were
// chosen with: it builds the dev memories once, computes every question's
// turn features once, and scores variations of defaultOfflineTuning, on all
// conversations and on alternate halves of them (to see whether a choice
// carries over). It is skipped unless HIGMEM_LOCOMO_SWEEP=1:
//
//	HIGMEM_LOCOMO_SWEEP=1 go test -run TestOfflineLoCoMoSweep -v .
//
// HIGMEM_LOCOMO_EMBED selects "bm25" or "minilm" (default both).
func TestOfflineLoCoMoSweep(t *testing.T) {
	samples := loadLoCoMoDev(t, "HIGMEM_LOCOMO_SWEEP", "set HIGMEM_LOCOMO_SWEEP=1 to sweep offline retrieval tuning")
	ctx := context.Background()
	only := os.Getenv("HIGMEM_LOCOMO_EMBED")
	var embs []embed.Embedder
	if only == "" || only == "bm25" {
		embs = append(embs, nil)
	}
	if only == "" || only == "minilm" {
		if e := loadMiniLMForTest(t); e != nil {
			c := newCachedEmbedder(e, os.Getenv("HIGMEM_EMBED_CACHE"))
			defer c.save()
			embs = append(embs, c)
		}
	}
	for _, emb := range embs {
		qs := sweepFeatures(ctx, t, samples, emb)
		name := "BM25 only"
		if emb != nil {
			name = "BM25 + " + emb.ID()
		}
		t.Logf("%s\n%s", name, sweepTable(qs, sweepVariants()))
		if emb != nil {
			t.Logf("%s: fusion of BM25 and dense\n%s", name, fusionTable(qs))
		}
	}
}

// sweepQuestion is one question with its features and gold turn indexes.
type sweepQuestion struct {
	sample   int
	category int
	f        *turnFeatures
	gold     []int
}

// sweepFeatures builds one offline memory per sample and returns every
// question's turn features.
func sweepFeatures(ctx context.Context, t *testing.T, samples []locomo.Sample, emb embed.Embedder) []sweepQuestion {
	t.Helper()
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var out []sweepQuestion
	for si := range samples {
		s := &samples[si]
		st := ingestState(ctx, t, m, s)
		for _, qa := range s.QA {
			if len(qa.Evidence) == 0 || qa.Category < 1 || qa.Category > 5 {
				continue
			}
			q := questionFor(ctx, t, m, st, qa.Question)
			st.mu.RLock()
			sq := sweepQuestion{sample: si, category: qa.Category, f: q.offlineFeatures(), gold: goldIndexes(st, qa.Evidence)}
			st.mu.RUnlock()
			out = append(out, sq)
		}
	}
	return out
}

// ingestState adds a sample to its own space and returns the space's
// loaded state.
func ingestState(ctx context.Context, t *testing.T, m *Memory, s *locomo.Sample) *spaceState {
	t.Helper()
	sp, err := ingestLoCoMo(ctx, m, s)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// questionFor returns the query of a question as offline retrieval makes
// it: rules, the question as search text, its vector.
func questionFor(ctx context.Context, t *testing.T, m *Memory, st *spaceState, question string) *query {
	t.Helper()
	q := &query{st: st, question: question, info: analyzeRules(question), search: question, ctx: ctx}
	v, err := m.embedQuestion(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	q.qv = v
	return q
}

// goldIndexes returns the turn index of each evidence id, -1 for an id the
// space does not have (never found). Caller holds st.mu.
func goldIndexes(st *spaceState, evidence []string) []int {
	out := make([]int, len(evidence))
	for j, id := range evidence {
		if i, ok := st.pos[id]; ok {
			out[j] = i
		} else {
			out[j] = -1
		}
	}
	return out
}

// sweepVariant is one tuning to score.
type sweepVariant struct {
	name string
	tu   offlineTuning
}

// sweepVariants returns the default tuning and variations of it.
func sweepVariants() []sweepVariant {
	d := defaultOfflineTuning()
	vs := []sweepVariant{{"default", d}}
	vary := func(name string, f func(*offlineTuning)) {
		tu := d
		f(&tu)
		vs = append(vs, sweepVariant{name, tu})
	}
	for _, k := range []int{6, 7, 8, 9, 10} {
		vary(fmt.Sprintf("fixed K=%d", k), func(tu *offlineTuning) { tu.MinK, tu.MaxK = k, k })
	}
	// Ablations: each part of the scorer switched off.
	vary("no neighbours", func(tu *offlineTuning) { tu.Prev, tu.PrevQuestion, tu.Next, tu.NextQuestion, tu.Far = 0, 0, 0, 0, 0 })
	vary("neighbours not question-aware", func(tu *offlineTuning) { tu.PrevQuestion, tu.NextQuestion = tu.Prev, tu.Next })
	vary("no event share", func(tu *offlineTuning) { tu.EventShare = 0 })
	vary("no speaker cue", func(tu *offlineTuning) { tu.SpeakerBump = 1 })
	vary("no time or count cue", func(tu *offlineTuning) { tu.TimeBump, tu.CountBump = 1, 1 })
	vary("no dense", func(tu *offlineTuning) { tu.DenseWeight = 0 })
	if os.Getenv("HIGMEM_LOCOMO_GRID") != "1" {
		return vs
	}
	for _, w := range []float64{0.3, 0.5, 0.7} {
		for _, r := range []float64{0.45, 0.5, 0.55} {
			for _, k := range [][2]int{{6, 9}, {6, 10}, {7, 10}} {
				for _, ev := range []float64{0, 0.2, 0.3} {
					for _, tb := range []float64{1, 1.2, 1.3} {
						for _, cb := range []float64{1, 1.2} {
							vary(fmt.Sprintf("w%.2f r%.2f k%d-%d ev%.2f tb%.2f cb%.2f", w, r, k[0], k[1], ev, tb, cb), func(tu *offlineTuning) {
								tu.DenseWeight, tu.KeepRatio, tu.MinK, tu.MaxK = w, r, k[0], k[1]
								tu.EventShare, tu.TimeBump, tu.CountBump = ev, tb, cb
							})
						}
					}
				}
			}
		}
	}
	return vs
}

// sweepTable scores every variant: R, avg K, R on even and odd samples,
// and R per category.
func sweepTable(qs []sweepQuestion, vs []sweepVariant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| variant | R | avg K | R even | R odd | R c1 | R c2 | R c3 | R c4 | R c5 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range vs {
		var r, k float64
		var half [2]float64
		var halfN [2]int
		var cat [6]float64
		var catN [6]int
		for _, q := range qs {
			rel := v.tu.relevance(q.f)
			sc := v.tu.score(q.f, rel)
			ranked := rankPositive(sc)
			sel := ranked[:v.tu.cut(ranked, sc)]
			hit := 0
			for _, g := range q.gold {
				if g >= 0 && slices.Contains(sel, g) {
					hit++
				}
			}
			x := float64(hit) / float64(len(q.gold))
			r += x
			k += float64(len(sel))
			half[q.sample%2] += x
			halfN[q.sample%2]++
			cat[q.category] += x
			catN[q.category]++
		}
		n := float64(len(qs))
		fmt.Fprintf(&b, "| %s | %.3f | %.2f | %.3f | %.3f |", v.name, r/n, k/n, half[0]/float64(max(halfN[0], 1)), half[1]/float64(max(halfN[1], 1)))
		for c := 1; c <= 5; c++ {
			fmt.Fprintf(&b, " %.3f |", cat[c]/float64(max(catN[c], 1)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// fusionTable compares ways of fusing BM25 and dense similarity: recall of
// the plain top 8 and top 10 of each fused ranking, and the recall of the
// whole offline scorer when its relevance is the RRF score instead of the
// normalised sum.
func fusionTable(qs []sweepQuestion) string {
	const rrfK = 60 // the usual reciprocal-rank fusion constant
	tu := defaultOfflineTuning()
	rrf := func(f *turnFeatures) []float64 {
		out := make([]float64, len(f.lex))
		lex := rankPositive(f.lex)
		dense := rankAll(f.dense)
		for r, i := range lex {
			out[i] += 1 / float64(rrfK+r+1)
		}
		for r, i := range dense {
			out[i] += 1 / float64(rrfK+r+1)
		}
		return out
	}
	sumRaw := func(w float64) func(f *turnFeatures) []float64 {
		return func(f *turnFeatures) []float64 {
			noDense := *f
			noDense.dense = nil
			out := tu.relevance(&noDense)
			for i, d := range f.dense {
				out[i] += w * max(d, 0)
			}
			return out
		}
	}
	centred := func(w float64) func(f *turnFeatures) []float64 {
		return func(f *turnFeatures) []float64 {
			t := tu
			t.DenseWeight = w
			return t.relevance(f)
		}
	}
	lexOnly := func(f *turnFeatures) []float64 { return f.lex }
	denseOnly := func(f *turnFeatures) []float64 { return f.dense }
	rows := []struct {
		name string
		rel  func(f *turnFeatures) []float64
	}{
		{"BM25", lexOnly},
		{"dense (MiniLM cosine)", denseOnly},
		{"RRF (k=60)", rrf},
		{"sum: BM25/max + 1.0 cosine", sumRaw(1)},
		{"sum: BM25/max + 1.5 cosine", sumRaw(1.5)},
		{"sum: BM25/max + 0.3 centred cosine", centred(0.3)},
		{fmt.Sprintf("sum: BM25/max + %.1f centred cosine (default)", tu.DenseWeight), centred(tu.DenseWeight)},
		{"sum: BM25/max + 1.0 centred cosine", centred(1)},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| fusion | R@8 | R@10 | scorer R | scorer avg K |\n|---|---:|---:|---:|---:|\n")
	for _, row := range rows {
		var r8, r10, rs, ks float64
		for _, q := range qs {
			rel := row.rel(q.f)
			ranked := rankAll(rel)
			r8 += goldShare(q.gold, ranked[:min(8, len(ranked))])
			r10 += goldShare(q.gold, ranked[:min(10, len(ranked))])
			// The whole scorer on this relevance, scaled to a best of 1.
			top := 0.0
			for _, x := range rel {
				top = max(top, x)
			}
			scaled := make([]float64, len(rel))
			for i, x := range rel {
				if top > 0 {
					scaled[i] = x / top
				}
			}
			sc := tu.score(q.f, scaled)
			rk := rankPositive(sc)
			sel := rk[:tu.cut(rk, sc)]
			rs += goldShare(q.gold, sel)
			ks += float64(len(sel))
		}
		n := float64(len(qs))
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.2f |\n", row.name, r8/n, r10/n, rs/n, ks/n)
	}
	return b.String()
}

// rankAll orders every index by score, best first (ties by index).
func rankAll(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return idx
}

// goldShare returns the share of gold indexes found in sel.
func goldShare(gold, sel []int) float64 {
	hit := 0
	for _, g := range gold {
		if g >= 0 && slices.Contains(sel, g) {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}
