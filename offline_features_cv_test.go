package higmem

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Candidate features of conversation beyond the engine's scorer, measured
// by the cross-validation (issue 15, round 2). Each is a property of
// conversation or of English questions, never of one file's format.

// cvLexBs are the BM25 length normalisations measured (-1: none; 0.75 is
// bm25.DefaultB, the engine's before issue 15's second round).
var cvLexBs = []float64{0.75, 0.3, 0.5, -1}

// lexIndexes returns a BM25 index of st's turns for each b of cvLexBs.
// Caller holds st.mu.
func lexIndexes(st *spaceState) map[float64]*bm25.Index {
	out := map[float64]*bm25.Index{}
	for _, b := range cvLexBs {
		ix := bm25.New(bm25.Options{B: b})
		docs := make([]bm25.Doc, len(st.turns))
		for i, t := range st.turns {
			docs[i] = bm25.Doc{ID: t.ID, Ref: i, Text: turnLexText(t)}
		}
		ix.AddBatch(docs)
		out[b] = ix
	}
	return out
}

// cvConvFacts holds per-turn facts of one conversation for the candidate
// features.
type cvConvFacts struct {
	terms    [][]string // distinct index terms of each turn, sorted
	words    []int      // words of each turn
	runWords []int      // words of each turn's speaker run
	session  []int32    // session index of each turn
	reason   []bool     // the turn gives a reason (because, since, so that, 'cause)
	proper   []bool     // the turn names something: a capitalised word not starting a sentence
	vecs     *vec.Matrix
}

var reasonWords = []string{"because", "cause", "since", "reason", "so that", "that's why", "thats why"}

// factsOf computes the facts of st's turns. Caller holds st.mu.
func factsOf(st *spaceState) *cvConvFacts {
	n := len(st.turns)
	cf := &cvConvFacts{terms: make([][]string, n), words: make([]int, n), runWords: make([]int, n), session: make([]int32, n),
		reason: make([]bool, n), proper: make([]bool, n), vecs: &st.turnVec}
	s := int32(0)
	for i := range n {
		t := st.turns[i]
		text := content(t)
		terms := textnorm.Terms(turnLexText(t))
		slices.Sort(terms)
		cf.terms[i] = slices.Compact(terms)
		cf.words[i] = len(strings.Fields(text))
		if i > 0 && !st.info.sameSession[i] {
			s++
		}
		cf.session[i] = s
		low := " " + strings.Join(textnorm.Tokens(text), " ") + " "
		for _, w := range reasonWords {
			if strings.Contains(low, " "+w+" ") {
				cf.reason[i] = true
			}
		}
		for _, e := range entitiesOf(text, "") {
			if !strings.EqualFold(e, t.Speaker) {
				cf.proper[i] = true
			}
		}
	}
	perRun := map[int32]int{}
	for i := range n {
		perRun[st.info.run[i]] += cf.words[i]
	}
	for i := range n {
		cf.runWords[i] = perRun[st.info.run[i]]
	}
	return cf
}

// cvExtra is a set of candidate features, each off at its zero value.
type cvExtra struct {
	// SessShare adds this share of the best relevance in the turn's
	// session (a session about the question's topic).
	SessShare float64
	// Cov multiplies the score by exp(Cov × share of the question's terms
	// the turn has).
	Cov float64
	// Len multiplies the score by (1+words)^Len.
	Len float64
	// RunLen counts the words of the turn's speaker run instead.
	RunLen bool
	// Ans multiplies the score of turns whose form fits the question's
	// type: a reason on "why", a name on "where" and "which".
	Ans float64
	// QTurn multiplies the score of turns that ask a question.
	QTurn float64
	// Dedup skips, in the selection, a turn whose vector has at least this
	// cosine with a turn already selected (0: off).
	Dedup float64
	// LocalDiv multiplies, during the selection, the score of a turn
	// with two or more selected turns within two places of it in its
	// session by 1-LocalDiv (one spot of the conversation does not take
	// every slot).
	LocalDiv float64
	// Adj multiplies, during the selection, the score of a turn within
	// AdjDist turns of one already selected in its session by 1+Adj.
	Adj     float64
	AdjDist int
	// Focus and Near are the first retrieval's feedback (cvExtra.feedback).
	Focus, Near float64
	// Pair multiplies the score of a turn of the exchange between two
	// people the question names (cvQuestion.pair).
	Pair float64
	// SessDiv multiplies, during the selection, the score of turns of a
	// session not yet covered by 1+SessDiv (0: off).
	SessDiv float64
	// LexB, when set, takes the BM25 scores with this length
	// normalisation b (cvLexBs) instead of the engine's (turnBM25B).
	LexB float64
	// EventDense adds this weight times the centred, scaled cosine of the
	// question with the turn's event vector to its relevance.
	EventDense float64
	// LexWin mixes the BM25 score of the turn's window text (max
	// normalised) into the lexical part at this weight.
	LexWin float64
	// NoReport takes the BM25 scores of the question without reporting
	// verbs (say, tell, talk, mention, ...).
	NoReport bool
	// LexContent takes the BM25 scores of the question against the turns'
	// content alone, without the speaker's name the index holds
	// (turnLexText).
	LexContent bool
}

func (x cvExtra) zero() bool { return x == cvExtra{} }

// apply changes scores sc of question q by the candidate features.
func (x cvExtra) apply(q *cvQuestion, rel, sc []float64) {
	cf := q.conv.facts
	if x.SessShare != 0 {
		best := map[int32]float64{}
		for i, r := range rel {
			s := cf.session[i]
			best[s] = max(best[s], r)
		}
		for i := range sc {
			if sc[i] > 0 || best[cf.session[i]] > 0 {
				sc[i] += x.SessShare * best[cf.session[i]]
			}
		}
	}
	for i := range sc {
		if sc[i] <= 0 {
			continue
		}
		if x.Cov != 0 && len(q.qterms) > 0 {
			sc[i] *= math.Exp(x.Cov * coverage(q.qterms, cf.terms[i]))
		}
		if x.Len != 0 {
			w := cf.words[i]
			if x.RunLen {
				w = cf.runWords[i]
			}
			sc[i] *= math.Pow(1+float64(w), x.Len)
		}
		if x.Ans != 0 && x.Ans != 1 {
			if (q.wh == "why" && cf.reason[i]) || ((q.wh == "where" || q.wh == "which") && cf.proper[i]) {
				sc[i] *= x.Ans
			}
		}
		if x.QTurn != 0 && x.QTurn != 1 && q.f.question[i] {
			sc[i] *= x.QTurn
		}
	}
}

// addEventDense adds EventDense times the centred, scaled cosine of each
// turn's event with the question to rel.
func (x cvExtra) addEventDense(q *cvQuestion, rel []float64) {
	if q.evDense == nil {
		return
	}
	// Centred on the mean over turns with an event, scaled to a best of 1,
	// like the turn's own cosine.
	mean, best, n := 0.0, math.Inf(-1), 0
	for _, d := range q.evDense {
		if !math.IsNaN(d) {
			mean += d
			best = max(best, d)
			n++
		}
	}
	if n == 0 {
		return
	}
	mean /= float64(n)
	for i, d := range q.evDense {
		if !math.IsNaN(d) && d > mean && best > mean && q.f.visible[i] {
			rel[i] += x.EventDense * (d - mean) / (best - mean)
		}
	}
}

// coverage returns the share of the question's terms found in a turn's
// (both sorted and distinct).
func coverage(q, t []string) float64 {
	hit := 0
	for _, w := range q {
		if _, ok := slices.BinarySearch(t, w); ok {
			hit++
		}
	}
	return float64(hit) / float64(len(q))
}

// selectExtra is the selection with dedup or session diversity: turns are
// taken greedily by their (adjusted) score, and the stopping rule reads
// the adjusted scores.
func (x cvExtra) selectExtra(q *cvQuestion, tu offlineTuning, sc []float64) []int {
	ranked := rankPositive(sc)
	if x.Dedup == 0 && x.SessDiv == 0 && x.LocalDiv == 0 && x.Adj == 0 {
		return ranked[:tu.cut(ranked, sc)]
	}
	cf := q.conv.facts
	pool := ranked[:min(len(ranked), 4*tu.MaxK)]
	var out []int
	covered := map[int32]bool{}
	top := 0.0
	used := make([]bool, len(pool))
	for len(out) < tu.MaxK {
		bi, bs := -1, 0.0
		for j, i := range pool {
			if used[j] {
				continue
			}
			s := sc[i]
			if x.SessDiv != 0 && len(out) > 0 && !covered[cf.session[i]] {
				s *= 1 + x.SessDiv
			}
			if x.LocalDiv != 0 {
				near := 0
				for _, o := range out {
					if o-i <= 2 && i-o <= 2 && cf.session[o] == cf.session[i] {
						near++
					}
				}
				if near >= 2 {
					s *= 1 - x.LocalDiv
				}
			}
			if x.Adj != 0 {
				for _, o := range out {
					if o-i <= x.AdjDist && i-o <= x.AdjDist && cf.session[o] == cf.session[i] {
						s *= 1 + x.Adj
						break
					}
				}
			}
			if bi < 0 || s > bs {
				bi, bs = j, s
			}
		}
		if bi < 0 {
			break
		}
		used[bi] = true
		i := pool[bi]
		if x.Dedup != 0 && cf.vecs.Rows() > i {
			dup := false
			for _, o := range out {
				if float64(vec.Dot(cf.vecs.Row(i), cf.vecs.Row(o))) >= x.Dedup {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
		}
		if len(out) == 0 {
			top = bs
		}
		if len(out) >= tu.MinK && bs < tu.KeepRatio*top {
			break
		}
		out = append(out, i)
		covered[cf.session[i]] = true
	}
	return out
}

// TestOfflineCVFeatures measures each candidate feature alone on the
// engine's defaults with the ±1 window at 0.5 (the round's starting
// point), then cross-validates the grid of the ones given in
// HIGMEM_CV_FEATURES. Skipped unless HIGMEM_OFFLINE_CV=1.
func TestOfflineCVFeatures(t *testing.T) {
	sets := loadCVSets(t, true)
	tuned := make([]bool, len(sets))
	for i, set := range sets {
		tuned[i] = !strings.HasSuffix(set.name, "-burst")
	}
	base := cvTune{tu: defaultOfflineTuning(), Win: "pw30", Window: 1}
	fixed := []cvConfig{{"offline (defaults)", cvTune{tu: defaultOfflineTuning()}}, {"defaults + window pw30 1.0", base},
		{"defaults + engine window 1.0", cvTune{tu: defaultOfflineTuning(), Win: "engine", Window: 1}}}
	add := func(name string, f func(x *cvExtra)) {
		ct := base
		f(&ct.X)
		fixed = append(fixed, cvConfig{name, ct})
	}
	for _, v := range []float64{0.1, 0.2, 0.4} {
		add(fmt.Sprintf("session share %.1f", v), func(x *cvExtra) { x.SessShare = v })
	}
	for _, v := range []float64{0.3, 0.6, 1} {
		add(fmt.Sprintf("coverage %.1f", v), func(x *cvExtra) { x.Cov = v })
	}
	for _, b := range cvLexBs {
		add(fmt.Sprintf("BM25 b %.1f", b), func(x *cvExtra) { x.LexB = b })
		add(fmt.Sprintf("BM25 b %.1f, length^0.15", b), func(x *cvExtra) { x.LexB, x.Len = b, 0.15 })
	}
	for _, v := range []float64{0.1, 0.15, 0.2} {
		add(fmt.Sprintf("run length^%.2f", v), func(x *cvExtra) { x.Len, x.RunLen = v, true })
		add(fmt.Sprintf("BM25 b 0.3, run length^%.2f", v), func(x *cvExtra) { x.LexB, x.Len, x.RunLen = 0.3, v, true })
		add(fmt.Sprintf("BM25 b 0, run length^%.2f", v), func(x *cvExtra) { x.LexB, x.Len, x.RunLen = -1, v, true })
	}
	for _, b := range cvLexBs {
		fixed = append(fixed, cvConfig{fmt.Sprintf("hybrid-topk 10, BM25 b %.1f", b), cvTune{tu: base.tu, TopK: 10, X: cvExtra{LexB: b}}})
		fixed = append(fixed, cvConfig{fmt.Sprintf("hybrid-topk 10, BM25 b %.1f, window", b), cvTune{tu: base.tu, TopK: 10, X: cvExtra{LexB: b}, Win: base.Win, Window: base.Window}})
	}
	fixed = append(fixed, cvConfig{"hybrid-topk 10", cvTune{tu: base.tu, TopK: 10}}, cvConfig{"hybrid-topk 10, window", cvTune{tu: base.tu, TopK: 10, Win: base.Win, Window: base.Window}})
	for _, v := range []float64{-0.1, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4} {
		add(fmt.Sprintf("length^%.2f", v), func(x *cvExtra) { x.Len = v })
	}
	for _, v := range []float64{1.15, 1.3} {
		add(fmt.Sprintf("answer form ×%.2f", v), func(x *cvExtra) { x.Ans = v })
	}
	for _, v := range []float64{0.85, 1.15} {
		add(fmt.Sprintf("question turn ×%.2f", v), func(x *cvExtra) { x.QTurn = v })
	}
	for _, v := range []float64{0.9, 0.95} {
		add(fmt.Sprintf("dedup cos %.2f", v), func(x *cvExtra) { x.Dedup = v })
	}
	for _, v := range []float64{0.1, 0.25} {
		add(fmt.Sprintf("session diversity %.2f", v), func(x *cvExtra) { x.SessDiv = v })
	}
	t.Logf("fixed configurations on every question\n\n%s", fixedTable(sets, fixed, scoreGrid(sets, fixed)))
}

// reportingVerbs are the verbs a question uses to ask about what was said
// ("what did Ann say about ..."): they name the act of speaking, not its
// content.
var reportingVerbs = map[string]bool{"say": true, "said": true, "says": true, "tell": true, "told": true, "tells": true,
	"talk": true, "talked": true, "talking": true, "mention": true, "mentioned": true, "ask": true, "asked": true, "asks": true,
	"speak": true, "spoke": true, "speaking": true, "discuss": true, "discussed": true}

// windowIndex returns a BM25 index of the window text of every turn of
// st. Caller holds st.mu.
func windowIndex(st *spaceState) *bm25.Index {
	ix := bm25.New(bm25.Options{B: turnBM25B})
	docs := make([]bm25.Doc, len(st.turns))
	at := func(j int) *store.Turn { return &st.turns[j] }
	for i := range st.turns {
		docs[i] = bm25.Doc{ID: st.turns[i].ID, Ref: i, Text: windowText(at, int(st.info.winStart[i]), i)}
	}
	ix.AddBatch(docs)
	return ix
}

// contentIndex returns a BM25 index of st's turns' content alone, without
// the speaker's name (turnLexText has it). Caller holds st.mu.
func contentIndex(st *spaceState) *bm25.Index {
	ix := bm25.New(bm25.Options{B: turnBM25B})
	docs := make([]bm25.Doc, len(st.turns))
	for i, t := range st.turns {
		docs[i] = bm25.Doc{ID: t.ID, Ref: i, Text: content(t)}
	}
	ix.AddBatch(docs)
	return ix
}

// moreFeatures computes the event cosines, the window BM25 scores and the
// BM25 scores without reporting verbs of a question. Caller holds st.mu.
func moreFeatures(st *spaceState, winIx *bm25.Index, q *query, question string) (evDense, lexWin, lexNoReport []float64) {
	n := len(st.turns)
	if q.qv != nil && st.eventVec.Rows() == len(st.events) {
		evDense = make([]float64, n)
		for i := range n {
			evDense[i] = math.NaN()
			if e := st.info.event[i]; e >= 0 {
				evDense[i] = float64(vec.Dot(q.qv, st.eventVec.Row(int(e))))
			}
		}
	}
	lexWin = make([]float64, n)
	winIx.ScoreRefs(question, lexWin, nil)
	var kept []string
	for _, w := range textnorm.Tokens(question) {
		if !reportingVerbs[w] {
			kept = append(kept, w)
		}
	}
	lexNoReport = make([]float64, n)
	st.turnLex.ScoreRefs(strings.Join(kept, " "), lexNoReport, nil)
	return evDense, lexWin, lexNoReport
}
