package higmem

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/rank"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
)

// Cross-validation of offline retrieval by conversation (issue 15): the
// scorer's constants are tuned on some conversations and measured on the
// others, on LoCoMo and FriendsQA dev at once, and across files (tuned on
// one file, measured on the other). It also measures candidate changes to
// the scorer (window embeddings, entity cues, query expansion from the
// first retrieval, a stopping rule by question type) out of sample.
// Skipped unless HIGMEM_OFFLINE_CV=1:
//
//	HIGMEM_OFFLINE_CV=1 HIGMEM_EMBED_CACHE=/tmp/emb.gob go test -run TestOfflineCrossValidation -v -timeout 90m .
//
// Environment:
//
//	HIGMEM_DATA_DIR      the directory of locomo_dev.json and friendsqa_dev.json (default ../shared/data)
//	HIGMEM_MODELS_DIR    the models root (default minilm.DefaultRoot())
//	HIGMEM_TEST_MODEL_DIR  another model directory than MiniLM's (e.g. <root>/e5-small-v2)
//	HIGMEM_EMBED_CACHE   a file caching the vectors between runs (one per model)
//	HIGMEM_TEST_ENSEMBLE two model directories "a,b": an ensemble of both (offline_ensemble_test.go),
//	                     cached in HIGMEM_TEST_ENSEMBLE_CACHES "a.gob,b.gob", b weighted by HIGMEM_TEST_ENSEMBLE_WEIGHT
//	HIGMEM_CV_BURST      "0" to leave out the synthetic-burst variant of LoCoMo
//	HIGMEM_CV_WINDOWS    the window text variants to embed (offline_window_cv_test.go; "none")
//	HIGMEM_CV_IDEAS      "1" to add the candidate changes to the grid

// cvQuestion is one dev question with what the scorers read.
type cvQuestion struct {
	conv     *cvConv
	category int
	text     string
	// wh is the question's type: its first wh-word ("other" when none).
	wh   string
	f    *turnFeatures
	gold []int
	// win holds, per window variant (cvWindows), the cosine with each
	// turn's window vector (the turn embedded with its neighbours); empty
	// without an embedder.
	win map[string][]float64
	// prfLex is the BM25 score of every turn for the words the first
	// retrieval's best turns add to the question (nil when none).
	prfLex []float64
	// entity marks turns that mention a name the question mentions.
	entity []bool
	// pair marks turns said by a speaker the question names, next to a
	// run (just before or after, in the session) said by another speaker
	// it names: the exchange between the people asked about (round 7).
	pair []bool
	// qterms are the question's distinct index terms, sorted.
	qterms []string
	// lexB holds the BM25 scores under other length normalisations
	// (cvLexBs).
	lexB map[float64][]float64
	// evDense is the cosine of the question with each turn's first
	// event's vector (NaN without one); lexWin the BM25 score of each
	// turn's window text; lexNoReport the BM25 scores of the question
	// without reporting verbs (set with HIGMEM_CV_MORE=1).
	evDense, lexWin, lexNoReport []float64
	// lexContent holds the BM25 scores of the question against the turns'
	// content alone, without the speaker's name (HIGMEM_CV_MORE=1).
	lexContent []float64
}

// cvConv is one conversation, built into an offline memory.
type cvConv struct {
	id    string
	st    *spaceState
	facts *cvConvFacts
}

// cvSet is one dev set, or a synthetic variant of one.
type cvSet struct {
	name  string
	names map[int]string
	convs []*cvConv
	qs    []cvQuestion
}

// cvTune is a scorer under study: the engine's tuning plus candidate
// changes, each off at its zero value.
type cvTune struct {
	tu offlineTuning
	// Window mixes the window cosine into the turn's cosine with this
	// weight (0: the turn's own, 1: the window's).
	Window float64
	// Win names the window variant (cvWindows); "" is "sym1".
	Win string
	// PRF adds this share of the expansion words' max-normalised BM25 to
	// the lexical score (query expansion from the first retrieval).
	PRF float64
	// EntityBump multiplies the score of turns that mention a name the
	// question mentions.
	EntityBump float64
	// WhMaxK, when set, is the stopping rule's max K per question type.
	WhMaxK map[string]int
	// TopK, when set, ranks by relevance alone and keeps this many (the
	// hybrid-topk baseline).
	TopK int
	// X holds the candidate features of offline_features_cv_test.go.
	X cvExtra
	// KeepSlope raises the stopping rule's keep ratio by this much per
	// turn past MinK.
	KeepSlope float64
	// RunKeep, past MinK, raises the keep ratio by this much for a turn
	// whose speaker run already has a turn in the selection (another
	// message of a burst already passed); such a turn is skipped, not the
	// end of the selection, when it falls short.
	RunKeep float64
	// ZDense, when set, scales the dense part of the relevance by ZDense
	// standard deviations of the question's cosines over the turns instead
	// of by the distance from their mean to the best (relevanceOf).
	ZDense float64
	// WhDense, when set, replaces the dense weight for questions of the
	// given types (whOf).
	WhDense map[string]float64
}

// whWords are the question types of the stopping rule by type.
var whWords = []string{"what", "when", "why", "who", "where", "how", "which", "other"}

// whOf returns the first wh-word of a question, "other" when none.
func whOf(question string) string {
	for _, w := range textnorm.Tokens(question) {
		if slices.Contains(whWords[:7], w) {
			return w
		}
	}
	return "other"
}

// features returns the question's features with the tune's changes to
// relevance applied.
func (ct cvTune) features(q *cvQuestion) *turnFeatures {
	f := q.f
	// The engine's own b is what q.f holds.
	otherB := ct.X.LexB != 0 && ct.X.LexB != cvEngineB()
	if ct.Window == 0 && ct.PRF == 0 && !otherB && ct.X.EventDense == 0 && ct.X.LexWin == 0 && !ct.X.NoReport && !ct.X.LexContent {
		return f
	}
	g := *f
	if otherB {
		if q.lexB == nil {
			panic("BM25 scores under other b: set HIGMEM_CV_LEXB=1")
		}
		g.lex = q.lexB[ct.X.LexB]
		f = &turnFeatures{lex: g.lex, dense: q.f.dense}
	}
	if ct.X.NoReport && q.lexNoReport != nil {
		g.lex = q.lexNoReport
		f = &turnFeatures{lex: g.lex, dense: q.f.dense}
	}
	if ct.X.LexContent {
		if q.lexContent == nil {
			panic("BM25 scores of the content alone: set HIGMEM_CV_MORE=1")
		}
		g.lex = q.lexContent
		f = &turnFeatures{lex: g.lex, dense: q.f.dense}
	}
	if ct.X.LexWin != 0 && q.lexWin != nil {
		mixed := make([]float64, len(g.lex))
		lmax, wmax := slices.Max(g.lex), slices.Max(q.lexWin)
		for i := range mixed {
			mixed[i] = (1 - ct.X.LexWin) * g.lex[i]
			if wmax > 0 {
				mixed[i] += ct.X.LexWin * lmax * q.lexWin[i] / wmax
			}
		}
		g.lex = mixed
		f = &turnFeatures{lex: g.lex, dense: q.f.dense}
	}
	win := ct.Win
	if win == "" {
		win = "sym1"
	}
	w := q.win[win]
	if ct.Window == 1 && w != nil {
		g.dense = w
	} else if ct.Window != 0 && w != nil {
		g.dense = make([]float64, len(f.dense))
		for i := range g.dense {
			g.dense[i] = (1-ct.Window)*f.dense[i] + ct.Window*w[i]
		}
	}
	if ct.PRF != 0 && q.prfLex != nil {
		g.lex = make([]float64, len(f.lex))
		lmax, pmax := slices.Max(f.lex), slices.Max(q.prfLex)
		for i := range g.lex {
			g.lex[i] = f.lex[i]
			if pmax > 0 && lmax > 0 {
				g.lex[i] += ct.PRF * lmax * q.prfLex[i] / pmax
			}
		}
	}
	return &g
}

// scores returns every turn's score under the tune.
func (ct cvTune) scores(q *cvQuestion) []float64 {
	f := ct.features(q)
	if w, ok := ct.WhDense[q.wh]; ok {
		ct.tu.DenseWeight = w
	}
	rel := ct.tu.relevance(f)
	if ct.ZDense != 0 && f.dense != nil {
		rel = zRelevance(ct.tu, f, ct.ZDense)
	}
	if ct.X.EventDense != 0 {
		ct.X.addEventDense(q, rel)
	}
	sc := ct.tu.score(f, rel)
	if !ct.X.zero() {
		ct.X.apply(q, rel, sc)
	}
	if ct.X.Focus != 0 || ct.X.Near != 0 {
		ct.X.feedback(q, sc)
	}
	if ct.X.Pair != 0 && q.pair != nil {
		for i := range sc {
			if q.pair[i] {
				sc[i] *= ct.X.Pair
			}
		}
	}
	if ct.EntityBump != 0 && ct.EntityBump != 1 && q.entity != nil {
		for i := range sc {
			if q.entity[i] {
				sc[i] *= ct.EntityBump
			}
		}
	}
	return sc
}

// sel returns the turns the tune selects for a question.
func (ct cvTune) sel(q *cvQuestion) []int {
	if ct.TopK > 0 {
		ranked := rankPositive(ct.tu.relevance(ct.features(q)))
		return ranked[:min(ct.TopK, len(ranked))]
	}
	sc := ct.scores(q)
	tu := ct.tu
	if ct.X.Dedup != 0 || ct.X.SessDiv != 0 || ct.X.LocalDiv != 0 || ct.X.Adj != 0 {
		return ct.X.selectExtra(q, tu, sc)
	}
	maxK := tu.MaxK
	for _, k := range ct.WhMaxK {
		maxK = max(maxK, k)
	}
	ranked := rank.Top(sc, nil, maxK)
	if k, ok := ct.WhMaxK[q.wh]; ok {
		tu.MaxK = k
		tu.MinK = min(tu.MinK, k)
	}
	if ct.RunKeep != 0 {
		return ct.runKeepCut(q, sc, tu)
	}
	if ct.KeepSlope != 0 {
		n := 0
		for n < len(ranked) && n < tu.MaxK {
			if n >= tu.MinK && sc[ranked[n]] < (tu.KeepRatio+ct.KeepSlope*float64(n-tu.MinK))*sc[ranked[0]] {
				break
			}
			n++
		}
		return ranked[:n]
	}
	return ranked[:tu.cut(ranked, sc)]
}

// cvScore is recall, precision and K summed over questions.
type cvScore struct{ n, r, p, k float64 }

func (s *cvScore) add(q *cvQuestion, sel []int) {
	hit := 0
	for _, g := range q.gold {
		if g >= 0 && slices.Contains(sel, g) {
			hit++
		}
	}
	rel := 0
	for _, i := range sel {
		if slices.Contains(q.gold, i) {
			rel++
		}
	}
	s.n++
	s.r += float64(hit) / float64(len(q.gold))
	if len(sel) > 0 {
		s.p += float64(rel) / float64(len(sel))
	}
	s.k += float64(len(sel))
}

func (s *cvScore) plus(o cvScore) { s.n += o.n; s.r += o.r; s.p += o.p; s.k += o.k }
func (s cvScore) R() float64      { return s.r / max(s.n, 1) }
func (s cvScore) P() float64      { return s.p / max(s.n, 1) }
func (s cvScore) K() float64      { return s.k / max(s.n, 1) }

func meanSD(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// burstSplit returns samples whose turns are split into one message per
// sentence, said in a row by the same speaker, each piece of a gold turn
// gold: a stand-in for chats in bursts of short messages.
func burstSplit(samples []locomo.Sample) []locomo.Sample {
	out := make([]locomo.Sample, len(samples))
	for si, s := range samples {
		ns := s
		ns.ID += "-burst"
		ns.Sessions = nil
		pieces := map[string][]string{}
		for _, sess := range s.Sessions {
			nsess := sess
			nsess.Turns = nil
			for _, tr := range sess.Turns {
				for pi, p := range splitSentences(tr.Text) {
					nt := tr
					nt.Text = p
					nt.DiaID = tr.DiaID + "." + strconv.Itoa(pi)
					if pi > 0 {
						nt.Caption = ""
					}
					pieces[tr.DiaID] = append(pieces[tr.DiaID], nt.DiaID)
					nsess.Turns = append(nsess.Turns, nt)
				}
			}
			ns.Sessions = append(ns.Sessions, nsess)
		}
		ns.QA = nil
		for _, q := range s.QA {
			nq := q
			nq.Evidence = nil
			for _, id := range q.Evidence {
				nq.Evidence = append(nq.Evidence, pieces[id]...)
			}
			ns.QA = append(ns.QA, nq)
		}
		out[si] = ns
	}
	return out
}

// splitSentences splits text after ".", "!" or "?" followed by a space.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(text); i++ {
		if c := text[i]; (c == '.' || c == '!' || c == '?') && text[i+1] == ' ' {
			if p := strings.TrimSpace(text[start : i+1]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	if p := strings.TrimSpace(text[start:]); p != "" {
		out = append(out, p)
	}
	if len(out) == 0 {
		out = []string{text}
	}
	return out
}

// cvPRFTurns and cvPRFWords size the query expansion: the words come from
// the first retrieval's best turns.
const (
	cvPRFTurns = 3
	cvPRFWords = 6
)

// loadCVSet builds every sample of a set into m and computes its
// questions' features.
func loadCVSet(ctx context.Context, t *testing.T, m *Memory, emb embed.Embedder, name string, samples []locomo.Sample, window bool) *cvSet {
	t.Helper()
	set := &cvSet{name: name, names: locomo.CategoryNames(samples)}
	d := defaultOfflineTuning()
	for si := range samples {
		s := &samples[si]
		st := ingestState(ctx, t, m, s)
		c := &cvConv{id: s.ID, st: st}
		set.convs = append(set.convs, c)
		st.mu.RLock()
		c.facts = factsOf(st)
		n := len(st.turns)
		var ixs map[float64]*bm25.Index
		var winIx, contentIx *bm25.Index
		var wins map[string][][]float32
		if window && emb != nil {
			wins = cvWindowVectors(ctx, t, emb, st)
		}
		texts := make([]string, n)
		for i := range n {
			texts[i] = strings.ToLower(content(st.turns[i]))
		}
		st.mu.RUnlock()
		for _, qa := range s.QA {
			if len(qa.Evidence) == 0 {
				continue
			}
			q := questionFor(ctx, t, m, st, qa.Question)
			st.mu.RLock()
			cq := cvQuestion{conv: c, category: qa.Category, text: qa.Question, wh: whOf(qa.Question), f: q.offlineFeaturesW(0), gold: goldIndexes(st, qa.Evidence)}
			cq.f.speaker, cq.f.dense = slices.Clone(cq.f.speaker), slices.Clone(cq.f.dense)
			if os.Getenv("HIGMEM_CV_LEXB") == "1" {
				cq.lexB = map[float64][]float64{}
				if ixs == nil {
					ixs = lexIndexes(st)
				}
				for b, ix := range ixs {
					cq.lexB[b] = make([]float64, n)
					ix.ScoreRefs(qa.Question, cq.lexB[b], nil)
				}
			}
			if os.Getenv("HIGMEM_CV_MORE") == "1" {
				if winIx == nil {
					winIx, contentIx = windowIndex(st), contentIndex(st)
				}
				cq.evDense, cq.lexWin, cq.lexNoReport = moreFeatures(st, winIx, q, qa.Question)
				cq.lexContent = make([]float64, n)
				contentIx.ScoreRefs(qa.Question, cq.lexContent, nil)
			}
			cq.qterms = textnorm.Terms(qa.Question)
			slices.Sort(cq.qterms)
			cq.qterms = slices.Compact(cq.qterms)
			if st.winVec.Rows() == n && q.qv != nil {
				// The engine's window vectors (window.go).
				w := make([]float64, n)
				for i := range n {
					w[i] = float64(vec.Dot(q.qv, st.winVec.Row(i)))
				}
				cq.win = map[string][]float64{"engine": w}
				if os.Getenv("HIGMEM_CV_QDECL") == "1" {
					// The question said as a statement (wh-word and
					// auxiliary dropped), and the mean of the two.
					if vs, err := m.embed(ctx, []string{declarative(qa.Question)}); err == nil && vs != nil {
						d, mix := make([]float64, n), make([]float64, n)
						for i := range n {
							d[i] = float64(vec.Dot(vs[0], st.winVec.Row(i)))
							mix[i] = (d[i] + w[i]) / 2
						}
						cq.win["engine-decl"], cq.win["engine-mix"] = d, mix
					}
				}
			}
			if wins != nil && q.qv != nil {
				if cq.win == nil {
					cq.win = map[string][]float64{}
				}
				for name, vs := range wins {
					w := make([]float64, n)
					for i := range n {
						w[i] = float64(vec.Dot(q.qv, vs[i]))
					}
					cq.win[name] = w
				}
			}
			// Query expansion: the distinctive words of the first
			// retrieval's best turns that the question does not have.
			ranked := rankPositive(d.score(cq.f, d.relevance(cq.f)))
			var b strings.Builder
			for _, i := range ranked[:min(cvPRFTurns, len(ranked))] {
				b.WriteString(topicText(st.turns[i]))
				b.WriteString(". ")
			}
			exclude := map[string]bool{}
			for _, w := range textnorm.Tokens(qa.Question) {
				exclude[w] = true
			}
			if words := keywordsOf(b.String(), cvPRFWords, exclude); len(words) > 0 {
				lex, _ := (&scratch{}).lexScores(st.turnLex, n, strings.Join(words, " "))
				cq.prfLex = slices.Clone(lex)
			}
			cq.pair = pairFlags(cq.f, st.info.speaker[:n])
			// Names the question mentions, found in the turns' text.
			for _, e := range q.info.Entities {
				le := strings.ToLower(e)
				for i := range n {
					if strings.Contains(texts[i], le) {
						if cq.entity == nil {
							cq.entity = make([]bool, n)
						}
						cq.entity[i] = true
					}
				}
			}
			st.mu.RUnlock()
			set.qs = append(set.qs, cq)
		}
	}
	return set
}

// cvEmbedderID is the ID of the embedder loadCVSets last used ("" for
// none).
var cvEmbedderID string

// cvMemory is the memory loadCVSets last loaded the sets into.
var cvMemory *Memory

// loadCVSets loads LoCoMo dev, FriendsQA dev and the burst variant of
// LoCoMo into one offline memory with MiniLM.
func loadCVSets(t *testing.T, window bool) []*cvSet {
	t.Helper()
	if os.Getenv("HIGMEM_OFFLINE_CV") != "1" {
		t.Skip("set HIGMEM_OFFLINE_CV=1")
	}
	dir := os.Getenv("HIGMEM_DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "shared", "data")
	}
	ctx := context.Background()
	var emb embed.Embedder
	if e := loadMiniLMForTest(t); e != nil {
		c := newCachedEmbedder(e, os.Getenv("HIGMEM_EMBED_CACHE"))
		t.Cleanup(func() {
			if err := c.save(); err != nil {
				t.Log(err)
			}
		})
		emb = c
	}
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cvEmbedderID, cvMemory = "", m
	if emb != nil {
		cvEmbedderID = emb.ID()
	}
	var sets []*cvSet
	for _, f := range []struct{ name, file string }{{"LoCoMo", "locomo_dev.json"}, {"FriendsQA", "friendsqa_dev.json"}} {
		samples, err := locomo.Load(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, loadCVSet(ctx, t, m, emb, f.name, samples, window))
		if f.name == "LoCoMo" && os.Getenv("HIGMEM_CV_BURST") != "0" {
			sets = append(sets, loadCVSet(ctx, t, m, emb, "locomo-burst", burstSplit(samples), window))
		}
	}
	return sets
}

// cvConfig is one named point of a grid.
type cvConfig struct {
	name string
	ct   cvTune
}

// cvParam is one tuned parameter of a grid.
type cvParam struct {
	name   string
	values []float64
	set    func(ct *cvTune, v float64)
}

// cvGrid returns every combination of the parameters' values on base.
func cvGrid(base cvTune, ps []cvParam) []cvConfig {
	out := []cvConfig{{"", base}}
	for _, p := range ps {
		var next []cvConfig
		for _, c := range out {
			for _, v := range p.values {
				ct := c.ct
				p.set(&ct, v)
				next = append(next, cvConfig{strings.TrimSpace(fmt.Sprintf("%s %s=%g", c.name, p.name, v)), ct})
			}
		}
		out = next
	}
	return out
}

// cvResults holds every configuration's score on every question:
// [config][set][question].
type cvResults [][][]cvScore

func scoreGrid(sets []*cvSet, grid []cvConfig) cvResults {
	out := make(cvResults, len(grid))
	for ci, c := range grid {
		out[ci] = make([][]cvScore, len(sets))
		for si, set := range sets {
			out[ci][si] = make([]cvScore, len(set.qs))
			for qi := range set.qs {
				out[ci][si][qi].add(&set.qs[qi], c.ct.sel(&set.qs[qi]))
			}
		}
	}
	return out
}

// sum adds up configuration ci's scores on the questions of set si that
// keep accepts (by conversation index).
func (res cvResults) sum(sets []*cvSet, ci, si int, keep func(conv int) bool) cvScore {
	var s cvScore
	set := sets[si]
	for qi := range set.qs {
		if keep(slices.Index(set.convs, set.qs[qi].conv)) {
			s.plus(res[ci][si][qi])
		}
	}
	return s
}

// choose returns the configuration with the best mean recall over the
// tuned sets (train(si, conv) says which questions tune) among those
// whose average K is at most maxK on each, -1 when none is.
func (res cvResults) choose(sets []*cvSet, tuned []bool, maxK float64, train func(si, conv int) bool) int {
	best, bestObj := -1, -1.0
	for ci := range res {
		obj, ok, nt := 0.0, true, 0
		for si := range sets {
			if !tuned[si] {
				continue
			}
			s := res.sum(sets, ci, si, func(c int) bool { return train(si, c) })
			if s.n == 0 {
				continue
			}
			ok = ok && s.K() <= maxK
			obj += s.R()
			nt++
		}
		if ok && nt > 0 && obj/float64(nt) > bestObj {
			best, bestObj = ci, obj/float64(nt)
		}
	}
	return best
}

// crossValidate runs folds-fold cross-validation by conversation
// (conversation c of every set is in fold c mod folds): for each fold, the
// configuration is chosen on the other folds of every tuned set at once and
// scored on the held-out fold of every set. It reports the held-out recall,
// precision and K per fold, their mean and spread, and per category.
func crossValidate(sets []*cvSet, tuned []bool, grid []cvConfig, res cvResults, folds int, maxK float64) string {
	return heldOut(sets, grid, res, folds, maxK, func(fold int) int {
		return res.choose(sets, tuned, maxK, func(_, c int) bool { return c%folds != fold })
	})
}

// heldOut reports the held-out scores of configuration pick(fold) on each
// fold (pick returns -1 when none fits within K maxK), their mean and
// spread, and per category.
func heldOut(sets []*cvSet, grid []cvConfig, res cvResults, folds int, maxK float64, pick func(fold int) int) string {
	var b strings.Builder
	b.WriteString("| fold | chosen |")
	for _, set := range sets {
		fmt.Fprintf(&b, " %s R / P (K) |", set.name)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(sets)) + "\n")
	held := make([][]cvScore, len(sets))
	perConv := make([][]float64, len(sets))
	cats := make([]map[int]*cvScore, len(sets))
	for si := range sets {
		cats[si] = map[int]*cvScore{}
	}
	for fold := range folds {
		ci := pick(fold)
		if ci < 0 {
			fmt.Fprintf(&b, "| %d | none within K %.1f |\n", fold, maxK)
			continue
		}
		fmt.Fprintf(&b, "| %d | %s |", fold, grid[ci].name)
		for si, set := range sets {
			s := res.sum(sets, ci, si, func(c int) bool { return c%folds == fold })
			held[si] = append(held[si], s)
			fmt.Fprintf(&b, " %.3f / %.3f (%.2f) |", s.R(), s.P(), s.K())
			for c := range set.convs {
				if c%folds == fold {
					perConv[si] = append(perConv[si], res.sum(sets, ci, si, func(x int) bool { return x == c }).R())
				}
			}
			for qi := range set.qs {
				q := &set.qs[qi]
				if slices.Index(set.convs, q.conv)%folds == fold {
					if cats[si][q.category] == nil {
						cats[si][q.category] = &cvScore{}
					}
					cats[si][q.category].plus(res[ci][si][qi])
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| set | held-out R (mean ± sd over folds) | P | K | all held-out questions R / P (K) | per conversation R mean ± sd (min–max) |\n|---|---:|---:|---:|---:|---:|\n")
	for si, set := range sets {
		var rs, ps, ks []float64
		var all cvScore
		for _, s := range held[si] {
			rs, ps, ks = append(rs, s.R()), append(ps, s.P()), append(ks, s.K())
			all.plus(s)
		}
		mr, sr := meanSD(rs)
		mp, sp := meanSD(ps)
		mk, _ := meanSD(ks)
		mc, sc := meanSD(perConv[si])
		fmt.Fprintf(&b, "| %s | %.3f ± %.3f | %.3f ± %.3f | %.2f | %.3f / %.3f (%.2f) | %.3f ± %.3f (%.3f–%.3f) |\n",
			set.name, mr, sr, mp, sp, mk, all.R(), all.P(), all.K(), mc, sc, slices.Min(perConv[si]), slices.Max(perConv[si]))
	}
	b.WriteString("\nPer category, held-out questions:\n\n| set | category | n | R | P | K |\n|---|---|---:|---:|---:|---:|\n")
	for si, set := range sets {
		keys := make([]int, 0, len(cats[si]))
		for c := range cats[si] {
			keys = append(keys, c)
		}
		slices.Sort(keys)
		for _, c := range keys {
			s := cats[si][c]
			name := set.names[c]
			if name == "" {
				name = strconv.Itoa(c)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.3f | %.2f |\n", set.name, name, int(s.n), s.R(), s.P(), s.K())
		}
	}
	return b.String()
}

// acrossFiles tunes on every conversation of one file and scores on every
// conversation of each other set.
func acrossFiles(sets []*cvSet, grid []cvConfig, res cvResults, maxK float64) string {
	var b strings.Builder
	b.WriteString("| tuned on | chosen |")
	for _, set := range sets {
		fmt.Fprintf(&b, " %s R / P (K) |", set.name)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(sets)) + "\n")
	for ti, tset := range sets {
		if strings.HasSuffix(tset.name, "-burst") {
			continue
		}
		tuned := make([]bool, len(sets))
		tuned[ti] = true
		ci := res.choose(sets, tuned, maxK, func(int, int) bool { return true })
		if ci < 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |", tset.name, grid[ci].name)
		for si, set := range sets {
			s := res.sum(sets, ci, si, func(int) bool { return true })
			mark := ""
			if si == ti {
				mark = " (in sample)"
			}
			_ = set
			fmt.Fprintf(&b, " %.3f / %.3f (%.2f)%s |", s.R(), s.P(), s.K(), mark)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fixedTable scores named configurations on every question of every set,
// with the spread of the per-conversation recall.
func fixedTable(sets []*cvSet, grid []cvConfig, res cvResults) string {
	var b strings.Builder
	b.WriteString("| configuration |")
	for _, set := range sets {
		fmt.Fprintf(&b, " %s R / P (K) | conv sd |", set.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|---:|", len(sets)) + "\n")
	for ci, c := range grid {
		fmt.Fprintf(&b, "| %s |", c.name)
		for si, set := range sets {
			s := res.sum(sets, ci, si, func(int) bool { return true })
			var xs []float64
			for cv := range set.convs {
				xs = append(xs, res.sum(sets, ci, si, func(x int) bool { return x == cv }).R())
			}
			_, sd := meanSD(xs)
			fmt.Fprintf(&b, " %.3f / %.3f (%.2f) | %.3f |", s.R(), s.P(), s.K(), sd)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cvBaseGrid is the grid of the engine's own constants: the stopping rule
// (keep ratio, max K), the share of a burst's best message (run) and of
// the event's best turn (event).
func cvBaseGrid() []cvParam {
	return []cvParam{
		{"keep", []float64{0.55, 0.65}, func(ct *cvTune, v float64) { ct.tu.KeepRatio = v }},
		{"maxK", cvMaxKs(), func(ct *cvTune, v float64) { ct.tu.MaxK = int(v) }},
		{"run", []float64{0.5, 0.8}, func(ct *cvTune, v float64) { ct.tu.RunShare = v }},
		{"event", []float64{0.2, 0.4}, func(ct *cvTune, v float64) { ct.tu.EventShare = v }},
	}
}

// cvMaxKs are the max K of the base grid; the idea grid, larger, keeps
// the two that win.
func cvMaxKs() []float64 {
	if os.Getenv("HIGMEM_CV_IDEAS") == "1" {
		return []float64{9, 10}
	}
	return []float64{8, 9, 10}
}

// TestOfflineCrossValidation tunes the engine's constants (cvBaseGrid,
// plus the candidate changes with HIGMEM_CV_IDEAS=1) by conversation: 6
// folds, conversation c of each set in fold c mod 6, tuned on the other
// folds of LoCoMo and FriendsQA at once under avg K ≤ 8 on each, scored on
// the held-out fold; locomo-burst is never tuned on. Then across files:
// tuned on all of one file, scored on the other.
func TestOfflineCrossValidation(t *testing.T) {
	ideas := os.Getenv("HIGMEM_CV_IDEAS") == "1"
	sets := loadCVSets(t, ideas)
	tuned := make([]bool, len(sets))
	for i, set := range sets {
		tuned[i] = !strings.HasSuffix(set.name, "-burst")
	}
	ps := cvBaseGrid()
	if ideas {
		ps = append(ps, cvIdeaGrid()...)
	}
	grid := cvGrid(cvTune{tu: defaultOfflineTuning()}, ps)
	res := scoreGrid(sets, grid)
	t.Logf("%d configurations\n\n%s", len(grid), crossValidate(sets, tuned, grid, res, 6, 8))
	t.Logf("across files (K ≤ 8 on the file tuned on)\n\n%s", acrossFiles(sets, grid, res, 8))
	// The default and the baselines on every question, for reference.
	d := defaultOfflineTuning()
	fixed := []cvConfig{{"offline (defaults)", cvTune{tu: d}}}
	fixed = append(fixed, cvIdeaSingles(ideas)...)
	t.Logf("fixed configurations on every question\n\n%s", fixedTable(sets, fixed, scoreGrid(sets, fixed)))
}

// cvIdeaGrid is the candidate changes cross-validated next to the engine's
// constants.
func cvIdeaGrid() []cvParam {
	return []cvParam{
		{"minK", []float64{6, 7}, func(ct *cvTune, v float64) { ct.tu.MinK = int(v) }},
		// window: 0 none, 1 one turn either side, 2 the turn before (causal).
		{"window", []float64{0, 1, 2}, func(ct *cvTune, v float64) {
			ct.Window, ct.Win = min(v, 1)*0.5, map[bool]string{false: "sym1", true: "prev1"}[v == 2]
		}},
		{"prf", []float64{0, 0.3}, func(ct *cvTune, v float64) { ct.PRF = v }},
	}
}

// cvIdeaSingles is each candidate change alone on the defaults; those
// that read window vectors only when they were computed (windows).
func cvIdeaSingles(windows bool) []cvConfig {
	d := cvTune{tu: defaultOfflineTuning()}
	var out []cvConfig
	add := func(name string, f func(ct *cvTune)) {
		ct := d
		f(&ct)
		out = append(out, cvConfig{name, ct})
	}
	if windows {
		for _, w := range []float64{0.3, 0.5, 0.7, 1} {
			add(fmt.Sprintf("window %.1f", w), func(ct *cvTune) { ct.Window = w })
			add(fmt.Sprintf("causal window %.1f", w), func(ct *cvTune) { ct.Window, ct.Win = w, "prev1" })
		}
		add("window 0.5, prf 0.3, min K 7", func(ct *cvTune) { ct.Window, ct.PRF, ct.tu.MinK = 0.5, 0.3, 7 })
		add("causal window 0.5, prf 0.3, min K 7", func(ct *cvTune) { ct.Window, ct.Win, ct.PRF, ct.tu.MinK = 0.5, "prev1", 0.3, 7 })
	}
	add("min K 7", func(ct *cvTune) { ct.tu.MinK = 7 })
	for _, p := range []float64{0.15, 0.3, 0.5} {
		add(fmt.Sprintf("prf %.2f", p), func(ct *cvTune) { ct.PRF = p })
	}
	for _, e := range []float64{1.15, 1.3} {
		add(fmt.Sprintf("entity bump %.2f", e), func(ct *cvTune) { ct.EntityBump = e })
	}
	for _, s := range []float64{1, 1.3, 1.5} {
		add(fmt.Sprintf("speaker bump %.2f", s), func(ct *cvTune) { ct.tu.SpeakerBump = s })
	}
	add("fixed K 8", func(ct *cvTune) { ct.tu.MinK, ct.tu.MaxK = 8, 8 })
	add("K by type: when/who/where 6, else 9", func(ct *cvTune) {
		ct.WhMaxK = map[string]int{"when": 6, "who": 6, "where": 6}
	})
	add("K by type: when 6, else 9", func(ct *cvTune) { ct.WhMaxK = map[string]int{"when": 6} })
	return out
}

// TestCrossValidateChoosesOutOfSample checks the cross-validation's
// bookkeeping on hand-made scores: the configuration is chosen on the
// training folds only, under the K budget, and scored on the held-out one.
func TestCrossValidateChoosesOutOfSample(t *testing.T) {
	// One set, two conversations, one question each; fold = conversation.
	set := &cvSet{name: "s", names: map[int]string{1: "one"}}
	for i := range 2 {
		set.convs = append(set.convs, &cvConv{id: strconv.Itoa(i)})
	}
	for _, c := range set.convs {
		set.qs = append(set.qs, cvQuestion{conv: c, category: 1})
	}
	sets := []*cvSet{set}
	score := func(r, k float64) cvScore { return cvScore{n: 1, r: r, p: r / k, k: k} }
	// Config a is best on conversation 0, b on conversation 1, c is best
	// on both but over the K budget.
	res := cvResults{
		{{score(0.9, 5), score(0.1, 5)}},
		{{score(0.2, 5), score(0.8, 5)}},
		{{score(1, 20), score(1, 20)}},
	}
	grid := []cvConfig{{"a", cvTune{}}, {"b", cvTune{}}, {"c", cvTune{}}}
	tuned := []bool{true}
	if got := res.choose(sets, tuned, 8, func(_, c int) bool { return c != 0 }); got != 1 {
		t.Errorf("holding out conversation 0 chose %d, want 1 (b, best on conversation 1)", got)
	}
	if got := res.choose(sets, tuned, 8, func(_, c int) bool { return c != 1 }); got != 0 {
		t.Errorf("holding out conversation 1 chose %d, want 0 (a)", got)
	}
	if got := res.choose(sets, tuned, 30, func(int, int) bool { return true }); got != 2 {
		t.Errorf("with room for K 20 chose %d, want 2 (c)", got)
	}
	// Held out, each fold scores the configuration chosen on the other:
	// b on conversation 0 (0.2), a on conversation 1 (0.1).
	rep := crossValidate(sets, tuned, grid, res, 2, 8)
	for _, want := range []string{"| 0 | b | 0.200", "| 1 | a | 0.100", "| s | 0.150 ± 0.050"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

// declarative returns a question as a statement: its wh-word (with "much",
// "many", "long", "old", "often" after "how") and the auxiliary after it
// dropped, and the question mark ("Where did Ann go?" → "Ann go").
func declarative(question string) string {
	words := strings.Fields(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(question), "?")))
	i := 0
	if i < len(words) && slices.Contains(whWords[:7], strings.ToLower(words[i])) {
		i++
		if i < len(words) && strings.EqualFold(words[0], "how") && slices.Contains([]string{"much", "many", "long", "old", "often", "far"}, strings.ToLower(words[i])) {
			i++
		}
	}
	if i < len(words) && slices.Contains([]string{"did", "does", "do", "is", "are", "was", "were", "has", "have", "had", "will", "would", "can", "could", "should", "might"}, strings.ToLower(words[i])) {
		i++
	}
	if i == len(words) {
		return question
	}
	return strings.Join(words[i:], " ")
}

// zRelevance is relevanceOf with the dense part scaled by z standard
// deviations of the cosines over the turns (ZDense) instead of by the
// distance from their mean to the best; every turn is visible.
func zRelevance(tu offlineTuning, f *turnFeatures, z float64) []float64 {
	n := len(f.lex)
	maxLex, mean, sq := 0.0, 0.0, 0.0
	for i := range n {
		maxLex = max(maxLex, f.lex[i])
		mean += f.dense[i]
	}
	mean /= float64(n)
	for i := range n {
		sq += (f.dense[i] - mean) * (f.dense[i] - mean)
	}
	sd := math.Sqrt(sq / float64(n))
	rel := make([]float64, n)
	for i := range n {
		if maxLex > 0 {
			rel[i] = f.lex[i] / maxLex
		}
		if d := f.dense[i] - mean; d > 0 && sd > 0 {
			rel[i] += tu.DenseWeight * d / (z * sd)
		}
	}
	return rel
}

// pairFlags marks the turns said by a speaker the question names (f.speaker)
// whose speaker run has, just before or after it in the session, a run
// said by another named speaker; nil when there is none.
func pairFlags(f *turnFeatures, speaker []int32) []bool {
	if f.speaker == nil {
		return nil
	}
	g := *f
	singleRuns(&g)
	rs, nr := g.runStart, len(g.runStart)
	named := func(t int) bool { return f.speaker[t] }
	var out []bool
	for i := range speaker {
		if !named(i) {
			continue
		}
		r := int(g.run[i])
		hit := false
		if r >= 1 && f.sameSession[rs[r]] {
			o := int(rs[r-1])
			hit = speaker[o] != speaker[i] && named(o)
		}
		if !hit && r+1 < nr && f.sameSession[rs[r+1]] {
			o := int(rs[r+1])
			hit = speaker[o] != speaker[i] && named(o)
		}
		if hit {
			if out == nil {
				out = make([]bool, len(speaker))
			}
			out[i] = true
		}
	}
	return out
}

// runKeepCut is the stopping rule with RunKeep (and KeepSlope): the
// ranked turns are taken while they clear the keep ratio, a turn of a
// speaker run already in the selection clearing a higher one.
func (ct cvTune) runKeepCut(q *cvQuestion, sc []float64, tu offlineTuning) []int {
	f := *q.f
	singleRuns(&f)
	ranked := rank.Top(sc, nil, 4*tu.MaxK)
	var out []int
	taken := map[int32]bool{}
	for _, i := range ranked {
		if len(out) == tu.MaxK || sc[i] <= 0 {
			break
		}
		r := f.run[i]
		if n := len(out); n >= tu.MinK {
			keep := tu.KeepRatio + ct.KeepSlope*float64(n-tu.MinK)
			if taken[r] {
				if sc[i] < (keep+ct.RunKeep)*sc[ranked[0]] {
					continue
				}
			} else if sc[i] < keep*sc[ranked[0]] {
				break
			}
		}
		out = append(out, i)
		taken[r] = true
	}
	return out
}

// feedback applies the first retrieval's feedback cues (Focus, Near) to
// the scores: each of the 20 best turns is multiplied by 1 + Focus times
// the share of the 10 best in its session, and by 1 + Near/(1 + its
// distance in turns) from the best turn when in the best turn's session.
func (x cvExtra) feedback(q *cvQuestion, sc []float64) {
	cf := q.conv.facts
	top := rank.Top(sc, nil, 20)
	if len(top) == 0 {
		return
	}
	count := map[int32]int{}
	for _, i := range top[:min(10, len(top))] {
		count[cf.session[i]]++
	}
	t0 := top[0]
	mult := make([]float64, len(top))
	for j, i := range top {
		m := 1 + x.Focus*float64(count[cf.session[i]])/10
		if cf.session[i] == cf.session[t0] {
			m *= 1 + x.Near/float64(1+max(i-t0, t0-i))
		}
		mult[j] = m
	}
	for j, i := range top {
		sc[i] *= mult[j]
	}
}
