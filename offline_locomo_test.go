package higmem

import (
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
)

// TestOfflineLoCoMo measures offline retrieval (no LLM) on the LoCoMo dev
// conversations: evidence recall and precision at the K actually returned,
// per category, with the recall of each trace stage, for BM25 only and for
// BM25 + all-MiniLM-L6-v2. It measures; it gates only against a broken
// pipeline. It is skipped unless HIGMEM_LOCOMO=1:
//
//	HIGMEM_LOCOMO=1 go test -run TestOfflineLoCoMo -v -timeout 20m .
//
// Environment:
//
//	HIGMEM_LOCOMO_DATA   the data file (default ../shared/data/locomo_dev.json)
//	HIGMEM_MODELS_DIR    the models root (default minilm.DefaultRoot())
//	HIGMEM_LOCOMO_EMBED  "bm25" or "minilm" to run one configuration only
//	HIGMEM_EMBED_CACHE   a file caching MiniLM vectors between runs
func TestOfflineLoCoMo(t *testing.T) {
	samples := loadLoCoMoDev(t, "HIGMEM_LOCOMO", "set HIGMEM_LOCOMO=1 to run the LoCoMo offline measurement")
	only := os.Getenv("HIGMEM_LOCOMO_EMBED")
	ctx := context.Background()
	if only == "" || only == "bm25" {
		rep := runLoCoMo(ctx, t, samples, nil)
		t.Logf("offline, BM25 only\n%s", rep)
		rep.sanity(t)
	}
	if only == "" || only == "minilm" {
		emb := loadMiniLMForTest(t)
		if emb == nil {
			return
		}
		cache := newCachedEmbedder(emb, os.Getenv("HIGMEM_EMBED_CACHE"))
		rep := runLoCoMo(ctx, t, samples, cache)
		if err := cache.save(); err != nil {
			t.Logf("embedding cache not saved: %v", err)
		}
		t.Logf("offline, BM25 + %s\n%s", emb.ID(), rep)
		rep.sanity(t)
	}
}

// loadMiniLMForTest loads all-MiniLM-L6-v2, or logs why not and returns nil.
func loadMiniLMForTest(t *testing.T) embed.Embedder {
	t.Helper()
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		r, err := minilm.DefaultRoot()
		if err != nil {
			t.Logf("MiniLM run skipped: %v", err)
			return nil
		}
		root = r
	}
	m, err := minilm.Load(minilm.ModelDir(root), minilm.Options{})
	if err != nil {
		t.Logf("MiniLM run skipped: %v", err)
		return nil
	}
	return m
}

// cachedEmbedder memoises an embedder by text, optionally persisting the
// vectors in a gob file so that reruns embed nothing.
type cachedEmbedder struct {
	inner embed.Embedder
	path  string
	mu    sync.Mutex
	vecs  map[string][]float32
	dirty bool
}

func newCachedEmbedder(inner embed.Embedder, path string) *cachedEmbedder {
	c := &cachedEmbedder{inner: inner, path: path, vecs: map[string][]float32{}}
	if path == "" {
		return c
	}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	defer f.Close()
	var saved struct {
		ID   string
		Vecs map[string][]float32
	}
	if gob.NewDecoder(f).Decode(&saved) == nil && saved.ID == inner.ID() {
		c.vecs = saved.Vecs
	}
	return c
}

func (c *cachedEmbedder) Dim() int   { return c.inner.Dim() }
func (c *cachedEmbedder) ID() string { return c.inner.ID() }

func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	c.mu.Lock()
	for i, s := range texts {
		if v, ok := c.vecs[s]; ok {
			out[i] = slices.Clone(v)
		} else if !slices.Contains(miss, s) {
			miss = append(miss, s)
		}
	}
	c.mu.Unlock()
	if len(miss) > 0 {
		vs, err := c.inner.Embed(ctx, miss)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		for i, s := range miss {
			c.vecs[s] = slices.Clone(vs[i])
		}
		c.dirty = true
		for i, s := range texts {
			if out[i] == nil {
				out[i] = slices.Clone(c.vecs[s])
			}
		}
		c.mu.Unlock()
	}
	return out, nil
}

func (c *cachedEmbedder) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return nil
	}
	f, err := os.Create(c.path)
	if err != nil {
		return err
	}
	err = gob.NewEncoder(f).Encode(struct {
		ID   string
		Vecs map[string][]float32
	}{c.inner.ID(), c.vecs})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// locomoStages are the trace stages whose recall is reported.
var locomoStages = []string{"search", "predicted", "final"}

// locomoCell accumulates the scores of one question category.
type locomoCell struct {
	n          int
	r, p, k    float64
	stageR     [3]float64
	stageK     [3]float64
	recallHits int // questions with every gold turn found
}

// locomoReport is the outcome of one run over the dev set.
type locomoReport struct {
	cells [6]locomoCell // by category; 0 unused
	sizes []int         // event sizes
	// multiSession counts events with turns from more than one session.
	multiSession int
	turns        int
	buildTime    time.Duration
	askTime      time.Duration
	calls        int
}

// ingestLoCoMo adds a sample to its own space, one Add per session.
func ingestLoCoMo(ctx context.Context, m *Memory, s *locomo.Sample) (Space, error) {
	sp := Space{UserID: s.ID}
	for _, sess := range s.Sessions {
		in := make([]TurnInput, 0, len(sess.Turns))
		for _, tr := range sess.Turns {
			ti := TurnInput{ID: tr.DiaID, SessionID: strconv.Itoa(sess.N), Speaker: tr.Speaker, Text: tr.Text, Time: sess.DateTime}
			if tr.Caption != "" {
				ti.Attachments = []Attachment{{Kind: "image", Caption: tr.Caption}}
			}
			in = append(in, ti)
		}
		res, err := m.Add(ctx, sp, in)
		if err != nil {
			return sp, err
		}
		if len(res.Calls) > 0 {
			return sp, fmt.Errorf("%d LLM calls while adding session %d", len(res.Calls), sess.N)
		}
	}
	return sp, nil
}

// runLoCoMo builds one offline memory per sample and retrieves every
// question with evidence.
func runLoCoMo(ctx context.Context, t *testing.T, samples []locomo.Sample, emb embed.Embedder) *locomoReport {
	t.Helper()
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rep := &locomoReport{}
	for i := range samples {
		s := &samples[i]
		start := time.Now()
		sp, err := ingestLoCoMo(ctx, m, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		rep.buildTime += time.Since(start)
		rep.turns += len(s.Turns())
		evs, err := m.Events(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			rep.sizes = append(rep.sizes, len(e.Event.TurnIDs))
			sessions := map[string]bool{}
			for _, tr := range e.Turns {
				sessions[tr.SessionID] = true
			}
			if len(sessions) > 1 {
				rep.multiSession++
			}
		}
		start = time.Now()
		for _, q := range s.QA {
			if len(q.Evidence) == 0 || q.Category < 1 || q.Category > 5 {
				continue
			}
			res, err := m.Retrieve(ctx, sp, q.Question, RetrieveOptions{})
			if err != nil {
				t.Fatalf("%s: %q: %v", s.ID, q.Question, err)
			}
			rep.calls += len(res.Trace.Calls)
			rep.add(q, res)
		}
		rep.askTime += time.Since(start)
	}
	return rep
}

func (r *locomoReport) add(q locomo.QA, res *Result) {
	c := &r.cells[q.Category]
	c.n++
	p, rec := locomo.EvidenceScore(res.IDs(), q.Evidence)
	c.r += rec
	c.p += p
	c.k += float64(len(res.Evidence))
	if rec == 1 {
		c.recallHits++
	}
	for i, name := range locomoStages {
		ids := res.Trace.Stage(name)
		_, sr := locomo.EvidenceScore(ids, q.Evidence)
		c.stageR[i] += sr
		c.stageK[i] += float64(len(ids))
	}
}

// sum merges the cells of the given categories.
func (r *locomoReport) sum(cats ...int) locomoCell {
	var out locomoCell
	for _, c := range cats {
		x := r.cells[c]
		out.n += x.n
		out.r += x.r
		out.p += x.p
		out.k += x.k
		out.recallHits += x.recallHits
		for i := range out.stageR {
			out.stageR[i] += x.stageR[i]
			out.stageK[i] += x.stageK[i]
		}
	}
	return out
}

// overall returns recall, precision and mean K over categories 1-5.
func (r *locomoReport) overall() (rec, p, k float64) {
	c := r.sum(1, 2, 3, 4, 5)
	n := float64(max(c.n, 1))
	return c.r / n, c.p / n, c.k / n
}

func (r *locomoReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| questions | n | R | P | avg K | all found | R search (K) | R predicted (K) | R final (K) |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(label string, c locomoCell) {
		n := float64(max(c.n, 1))
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.2f | %.3f |", label, c.n, c.r/n, c.p/n, c.k/n, float64(c.recallHits)/n)
		for i := range locomoStages {
			fmt.Fprintf(&b, " %.3f (%.1f) |", c.stageR[i]/n, c.stageK[i]/n)
		}
		b.WriteByte('\n')
	}
	row("cats 1-5", r.sum(1, 2, 3, 4, 5))
	row("cats 1-4", r.sum(1, 2, 3, 4))
	for c := 1; c <= 5; c++ {
		row(fmt.Sprintf("%d %s", c, locomo.CategoryName(c)), r.cells[c])
	}
	fmt.Fprintf(&b, "\nevents: %s; %d span several sessions\n", sizeDistribution(r.sizes), r.multiSession)
	fmt.Fprintf(&b, "turns %d, build %s, retrieval %s, LLM calls %d\n", r.turns,
		r.buildTime.Round(time.Millisecond), r.askTime.Round(time.Millisecond), r.calls)
	return b.String()
}

// sanity fails the test on a broken pipeline (not on quality).
func (r *locomoReport) sanity(t *testing.T) {
	t.Helper()
	rec, _, k := r.overall()
	if r.calls != 0 {
		t.Errorf("offline retrieval made %d LLM calls", r.calls)
	}
	if rec < 0.3 || k == 0 {
		t.Errorf("recall %.3f at K %.2f: implausibly low, pipeline broken", rec, k)
	}
}

// sizeDistribution summarises event sizes: count, mean, median, max, and
// how many events fall in each size bucket.
func sizeDistribution(sizes []int) string {
	if len(sizes) == 0 {
		return "none"
	}
	s := slices.Clone(sizes)
	slices.Sort(s)
	total := 0
	for _, x := range s {
		total += x
	}
	buckets := []struct {
		lo, hi int
	}{{1, 1}, {2, 2}, {3, 5}, {6, 10}, {11, 20}, {21, 40}, {41, 1 << 30}}
	var parts []string
	for _, bk := range buckets {
		n := 0
		for _, x := range s {
			if x >= bk.lo && x <= bk.hi {
				n++
			}
		}
		label := fmt.Sprintf("%d-%d", bk.lo, bk.hi)
		switch {
		case bk.lo == bk.hi:
			label = strconv.Itoa(bk.lo)
		case bk.hi == 1<<30:
			label = fmt.Sprintf("%d+", bk.lo)
		}
		parts = append(parts, fmt.Sprintf("%s: %d", label, n))
	}
	return fmt.Sprintf("%d events, mean %.1f, median %d, max %d turns; sizes %s",
		len(s), float64(total)/float64(len(s)), s[len(s)/2], s[len(s)-1], strings.Join(parts, ", "))
}

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
		sp, err := ingestLoCoMo(ctx, m, s)
		if err != nil {
			t.Fatal(err)
		}
		st, err := m.state(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, qa := range s.QA {
			if len(qa.Evidence) == 0 || qa.Category < 1 || qa.Category > 5 {
				continue
			}
			q := &query{st: st, question: qa.Question, info: analyzeRules(qa.Question), search: qa.Question}
			vs, err := m.embed(ctx, []string{qa.Question})
			if err != nil {
				t.Fatal(err)
			}
			if vs != nil {
				q.qv = vs[0]
			}
			st.mu.RLock()
			sq := sweepQuestion{sample: si, category: qa.Category, f: q.offlineFeatures()}
			for _, id := range qa.Evidence {
				if i, ok := st.pos[id]; ok {
					sq.gold = append(sq.gold, i)
				} else {
					sq.gold = append(sq.gold, -1) // unknown evidence id: never found
				}
			}
			st.mu.RUnlock()
			out = append(out, sq)
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
		{"sum: BM25/max + 0.3 centred cosine (default)", centred(tu.DenseWeight)},
		{"sum: BM25/max + 0.5 centred cosine", centred(0.5)},
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

// loadLoCoMoDev skips the test unless the environment variable flag is "1"
// (saying why in skip), and loads the LoCoMo dev file (HIGMEM_LOCOMO_DATA,
// default ../shared/data/locomo_dev.json), skipping when it is missing.
func loadLoCoMoDev(t *testing.T, flag, skip string) []locomo.Sample {
	t.Helper()
	if os.Getenv(flag) != "1" {
		t.Skip(skip)
	}
	path := os.Getenv("HIGMEM_LOCOMO_DATA")
	if path == "" {
		path = filepath.Join("..", "shared", "data", "locomo_dev.json")
	}
	samples, err := locomo.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("LoCoMo data not found at %s", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return samples
}
