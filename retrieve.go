package higmem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passindex"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Retrieve finds the turns that answer a question, with a Trace of every
// stage. It never writes an answer; see Ask.
func (m *Memory) Retrieve(ctx context.Context, sp Space, question string, ro RetrieveOptions) (*Result, error) {
	return m.retrieve(ctx, sp, question, ro, &recorder{})
}

// query holds everything one retrieval needs.
type query struct {
	st       *spaceState
	question string
	info     QueryInfo
	qv       []float32 // embedding of the search text; nil without embedder
	search   string    // lexical search text
	ro       RetrieveOptions
	keepTurn func(int) bool
	keepEv   func(int) bool
	trace    *Trace
	rec      *recorder
	// cand maps a turn id to its evidence so far.
	cand map[string]*Evidence
	// noEvents skips the event layer (the NoEvents ablation).
	noEvents bool
	// noTemporal drops resolved dates from evidence (NoTemporal).
	noTemporal bool
	// noProfiles skips profile evidence (NoProfiles).
	noProfiles bool
	// learned is offline retrieval's second stage for the embedder (nil:
	// none fitted, or Ablations.NoStage).
	learned *offline.Stage
	// score caches memberScores.
	score func(i int) float64
	// earlyTop is set when the query will score event members
	// (memberScores, default mode): the greatest BM25 score they need is
	// then worked out beside the fast scan's dense part (featuresIn),
	// where a core is idle, not after the search.
	earlyTop bool
	// sc is the query's working memory, returned to the space's pool when
	// the retrieval ends.
	sc *scratch
	// ctx is the retrieval's context, for reads of annotations (nil in
	// tests that build a query by hand).
	ctx context.Context
	// err is an error met where no error can be returned (reading
	// annotations); retrieve returns it.
	err error
	// pm caches passageScores (pmDone once worked out).
	pm     *passageMatch
	pmDone bool
}

func (m *Memory) retrieve(ctx context.Context, sp Space, question string, ro RetrieveOptions, rec *recorder) (*Result, error) {
	start := time.Now()
	question, ro, err := m.checkRetrieve(sp, question, ro)
	if err != nil {
		return nil, err
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		return nil, err
	}
	q := m.newQuery(ctx, st, question, ro, rec)
	defer st.putQueryScratch(q.sc)
	if err := m.analyze(ctx, q); err != nil {
		return nil, err
	}

	st.mu.RLock()
	defer st.mu.RUnlock()
	q.setFilters()
	if err := m.selectCandidates(ctx, q); err != nil {
		return nil, err
	}
	res := &Result{Question: question, Trace: *q.trace}
	if res.Evidence, err = m.finalEvidence(ctx, q, &res.Trace); err != nil {
		return nil, err
	}
	res.Context = renderContext(res.Evidence)
	res.Trace.Query = q.info
	res.Trace.Calls = rec.calls
	res.Trace.Notes = append(res.Trace.Notes, rec.notes...)
	res.Trace.Elapsed = time.Since(start)
	return res, nil
}

// checkRetrieve validates a question and fills the options' defaults.
func (m *Memory) checkRetrieve(sp Space, question string, ro RetrieveOptions) (string, RetrieveOptions, error) {
	if err := m.check(sp); err != nil {
		return "", ro, err
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return "", ro, fmt.Errorf("%w: empty question", ErrInvalidInput)
	}
	if strings.IndexFunc(question, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return "", ro, fmt.Errorf("%w: question %q has no words to search for", ErrInvalidInput, question)
	}
	if err := m.checkQuestion(question, ro); err != nil {
		return "", ro, err
	}
	if ro.KTurn <= 0 {
		ro.KTurn = m.opts.KTurn
	}
	if ro.KEvent <= 0 {
		ro.KEvent = m.opts.KEvent
	}
	if ro.EvidenceTokens <= 0 {
		ro.EvidenceTokens = m.opts.EvidenceTokens
	}
	return question, ro, nil
}

// newQuery returns the query of a question on st, with its ablations, its
// learned stage and a scratch from st's pool (given back by the caller).
func (m *Memory) newQuery(ctx context.Context, st *spaceState, question string, ro RetrieveOptions, rec *recorder) *query {
	ab := m.opts.Ablations
	q := &query{st: st, question: question, ro: ro, trace: &Trace{Mode: m.opts.Mode}, rec: rec, cand: map[string]*Evidence{},
		noEvents: ab.NoEvents, noTemporal: ab.NoTemporal, noProfiles: ab.NoProfiles, ctx: ctx}
	q.learned = m.learned
	q.sc = st.getQueryScratch()
	q.info = analyzeRules(question)
	if ab.NoTemporal {
		q.info.Temporal, q.info.Start, q.info.End = false, time.Time{}, time.Time{}
	}
	return q
}

// analyze sets the query's search text and embedding: by rules, or in
// paper mode from the model's rewrite (the reference's), which falls back
// to the rules when unusable or unreachable.
func (m *Memory) analyze(ctx context.Context, q *query) error {
	if m.opts.Mode == ModePaper {
		var r prompt.QueryReply
		err := m.callModel(ctx, q.rec, llm.RoleMemory, 1, prompt.Query, prompt.QueryData{Question: q.question}, &r)
		switch {
		case err == nil && strings.TrimSpace(r.KeywordQuery) != "":
			q.info.Keywords = strings.TrimSpace(r.KeywordQuery)
			q.info.Entities = cleanList(append(r.Entities, q.info.Entities...), 10)
			q.info.Temporal = (q.info.Temporal || r.Temporal) && !m.opts.Ablations.NoTemporal
			q.info.By = "llm"
		case err == nil || invalid(err):
			q.rec.note("query analysis unusable, rules used")
		case llmDown(ctx, err):
			q.rec.down(err)
		default:
			return err
		}
		q.trace.Rounds++
	}
	q.search = q.question
	embedText := q.question
	if q.info.By == "llm" {
		q.search = q.info.Keywords
		embedText = q.info.Keywords
	}
	v, err := m.embedQuestion(ctx, embedText)
	if err != nil {
		return err
	}
	q.qv = v
	return nil
}

// setFilters sets the query's turn and event filters from its as-of time
// and filter (nil: every turn, every event). Caller holds st.mu.
func (q *query) setFilters() {
	st, asOf, filter := q.st, q.ro.AsOf, q.ro.Filter
	if !asOf.IsZero() || filter != nil {
		q.keepTurn = func(i int) bool {
			t := &st.turns[i]
			return (asOf.IsZero() || !t.RecordedAt.After(asOf)) && (filter == nil || filter(*t))
		}
	}
	if !asOf.IsZero() {
		q.keepEv = func(i int) bool { return !st.events[i].CreatedAt.After(asOf) }
	}
}

// selectCandidates runs the mode's selection. When the memory model cannot
// be reached, the offline selection chooses the evidence instead (from a
// fresh query), and the trace says so. Caller holds st.mu.
func (m *Memory) selectCandidates(ctx context.Context, q *query) error {
	var err error
	switch {
	case q.rec.unreachable() != nil:
		m.retrieveOffline(q)
	case m.opts.Mode == ModePaper:
		err = m.retrievePaper(ctx, q)
	case m.opts.Mode == ModeDefault:
		err = m.retrieveDefault(ctx, q)
	default:
		m.retrieveOffline(q)
	}
	if llmDown(ctx, err) {
		q.rec.down(err)
		*q = *q.fresh()
		m.retrieveOffline(q)
		err = nil
	}
	if err == nil {
		err = q.err
	}
	return err
}

// fresh returns a query for the same question with no candidates and no
// stages yet (the trace keeps the calls and notes so far), for a retrieval
// that starts over by the offline rules. It copies the whole query, so that
// a field added later is kept, and resets what belongs to the first try:
// stages, candidates, the member-score cache and the error.
func (q *query) fresh() *query {
	tr := *q.trace
	tr.Stages = nil
	f := *q
	f.trace, f.cand, f.score, f.err = &tr, map[string]*Evidence{}, nil, nil
	return &f
}

// analyzeRules analyses a question without an LLM.
func analyzeRules(question string) QueryInfo {
	qi := QueryInfo{By: "rules"}
	kws, ents := rules.QuestionTerms(question)
	qi.Keywords = strings.Join(kws, " ")
	qi.Entities = ents
	in := temporal.AnalyzeQuestion(question)
	// AsksTime (when / how long / which year ...) is far more precise than
	// the broad Temporal flag, which also fires on any date mentioned.
	qi.Temporal = in.AsksTime()
	if in.Range != nil {
		qi.Start, qi.End = in.Range.Start, in.Range.End
	}
	return qi
}

// addCand records a candidate turn with its source and score.
func (q *query) addCand(id, source string, score float64) {
	if i, ok := q.st.pos[id]; ok {
		q.addCandAt(i, source, score, "")
	}
}

// addCandAt records the turn at state index i as a candidate with its
// source and score, as addCand does by its id; date is the turn's date
// (rules.DateOf) when the caller has it, else "" to work it out.
func (q *query) addCandAt(i int, source string, score float64, date string) {
	if q.keepTurn != nil && !q.keepTurn(i) {
		return
	}
	t := &q.st.turns[i]
	id := t.ID
	ev := q.cand[id]
	if ev == nil {
		if date == "" {
			date = rules.DateOf(*t)
		}
		ev = &Evidence{Turn: *t, Date: date, Events: slices.Clone(q.st.eventsOf[id])}
		q.cand[id] = ev
	}
	if !slices.Contains(ev.Sources, source) {
		ev.Sources = append(ev.Sources, source)
	}
	ev.Score = max(ev.Score, score)
}

// stage appends a stage to the trace.
func (q *query) stage(name string, ids []string) {
	q.trace.Stages = append(q.trace.Stages, Stage{Name: name, IDs: ids})
}

// finalEvidence orders candidates, applies the caps and the token budget,
// and returns them in chronological order. When the budget forces a cut the
// least relevant turns go first.
//
// The times evidence turns mention are resolved here, for the selected
// turns only.
func (m *Memory) finalEvidence(ctx context.Context, q *query, tr *Trace) ([]Evidence, error) {
	all := make([]*Evidence, 0, len(q.cand))
	for _, e := range q.cand {
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *Evidence) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Turn.Seq, b.Turn.Seq)
	})
	if q.ro.MaxEvidence > 0 && len(all) > q.ro.MaxEvidence {
		tr.Notes = append(tr.Notes, fmt.Sprintf("evidence capped at %d of %d turns", q.ro.MaxEvidence, len(all)))
		all = all[:q.ro.MaxEvidence]
	}
	out := chronological(q.withinBudget(all, tr))
	ids := make([]string, len(out))
	for i, e := range out {
		ids[i] = e.Turn.ID
	}
	tr.Stages = append(tr.Stages, Stage{Name: "final", IDs: ids})
	if !q.noTemporal {
		idx := make([]int, len(out))
		for i, e := range out {
			idx[i] = q.st.pos[e.Turn.ID]
		}
		refs, err := q.st.evidenceTimes(ctx, idx)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Times = rules.ResolvedTimes(store.Annotation{TimeRefs: refs[i]})
		}
	}
	return out, nil
}

// widening is a long turn's excerpt with its second passage, shown where
// the budget still has room (withinBudget).
type widening struct {
	tp   *passindex.Turn
	keep []int
	cost int
}

// withinBudget returns the evidence of all (most relevant first) that fits
// the question's token budget. A long turn first shows its best passage
// only; where the excerpt would show a second one (wider, its passages in
// the text's order), it does so after every turn that fits has its place,
// in the order of relevance, as long as the budget has room: the budget
// goes to more turns before it goes to second passages. The first turn
// is always kept, its text cut when it alone is over the budget.
func (q *query) withinBudget(all []*Evidence, tr *Trace) []Evidence {
	budget := q.ro.EvidenceTokens
	var out []Evidence // nil when there is no evidence
	var wider []widening
	if len(all) > 0 {
		// The first is always kept.
		out, wider = make([]Evidence, 0, len(all)), make([]widening, 0, len(all))
	}
	used := 0
	pm := q.passageScores()
	for _, e := range all {
		var w widening
		if tp, keep := pm.excerptChoice(q.st.pos[e.Turn.ID]); tp != nil {
			// A long turn shows the passages that match the question,
			// and costs what they hold.
			e.Turn.Text, e.Excerpt = excerptText(tp, keep[:1])
			if len(keep) > 1 {
				w.tp, w.keep = tp, slices.Sorted(slices.Values(keep))
			}
		}
		cost := evidenceTokens(e)
		if used+cost > budget && len(out) > 0 {
			tr.Notes = append(tr.Notes, fmt.Sprintf("token budget %d reached: %d less relevant turns left out", budget, len(all)-len(out)))
			break
		}
		if cost > budget {
			// The most relevant turn alone is over the budget: its text
			// is cut to fit, with a marker saying so.
			captions := max(0, len(content(e.Turn))-len(e.Turn.Text))
			room := (budget-estimateTokens(e.Turn.Speaker+excerptMarker(e.Excerpt)+e.Date)-8)*4 - captions
			e.Turn.Text = rules.Cut(e.Turn.Text, max(room, 64))
			tr.Notes = append(tr.Notes, fmt.Sprintf("turn %s is longer than the token budget %d: its text is cut", e.Turn.ID, budget))
			cost = evidenceTokens(e)
			w.tp = nil
		}
		used += cost
		w.cost = cost
		out = append(out, *e)
		wider = append(wider, w)
	}
	for j, w := range wider {
		if w.tp == nil {
			continue
		}
		e := out[j]
		e.Turn.Text, e.Excerpt = excerptText(w.tp, w.keep)
		if cost := evidenceTokens(&e); used-w.cost+cost <= budget {
			used += cost - w.cost
			out[j] = e
		}
	}
	return out
}

// chronological returns ev sorted by compareTurns, as
// slices.SortFunc(ev, ...) sorts it: it sorts the positions (the same
// comparisons, so the same order, ties included) and copies each
// evidence once, where sorting the evidence itself copies whole records
// at every swap and every comparison. nil stays nil.
func chronological(ev []Evidence) []Evidence {
	if len(ev) < 2 {
		return ev
	}
	order := make([]int, len(ev))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ta, tb := &ev[a].Turn, &ev[b].Turn
		return temporal.Compare(temporal.Key{At: ta.OccurredAt, Seq: int(ta.Seq)}, temporal.Key{At: tb.OccurredAt, Seq: int(tb.Seq)})
	})
	out := make([]Evidence, len(ev))
	for i, j := range order {
		out[i] = ev[j]
	}
	return out
}

// compareTurns orders turns chronologically: by OccurredAt (unknown times
// last), then Seq.
func compareTurns(a, b store.Turn) int {
	return temporal.Compare(temporal.Key{At: a.OccurredAt, Seq: int(a.Seq)}, temporal.Key{At: b.OccurredAt, Seq: int(b.Seq)})
}
