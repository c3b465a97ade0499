package higmem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// predictMax caps how many turns one per-event prediction may return.
const predictMax = 8

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
	// score caches memberScores.
	score func(i int) float64
	// sc is the query's working memory, returned to the space's pool when
	// the retrieval ends.
	sc *scratch
	// ctx is the retrieval's context, for reads of annotations (nil in
	// tests that build a query by hand).
	ctx context.Context
	// err is an error met where no error can be returned (reading
	// annotations); retrieve returns it.
	err error
}

func (m *Memory) retrieve(ctx context.Context, sp Space, question string, ro RetrieveOptions, rec *recorder) (*Result, error) {
	start := time.Now()
	if err := m.check(sp); err != nil {
		return nil, err
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, fmt.Errorf("%w: empty question", ErrInvalidInput)
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
	st, err := m.state(ctx, sp)
	if err != nil {
		return nil, err
	}
	q := &query{st: st, question: question, ro: ro, trace: &Trace{Mode: m.opts.Mode}, rec: rec, cand: map[string]*Evidence{}, noEvents: m.opts.Ablations.NoEvents, noTemporal: m.opts.Ablations.NoTemporal}
	q.sc = st.getScratch()
	defer st.putScratch(q.sc)
	q.ctx = ctx
	q.info = analyzeRules(question)
	if m.opts.Ablations.NoTemporal {
		q.info.Temporal, q.info.Start, q.info.End = false, time.Time{}, time.Time{}
	}

	// Query analysis: an LLM call in paper mode (the reference's rewrite),
	// rules otherwise.
	if m.opts.Mode == ModePaper {
		var r prompt.QueryReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 1, prompt.Query, prompt.QueryData{Question: question}, &r)
		switch {
		case err == nil && strings.TrimSpace(r.KeywordQuery) != "":
			q.info.Keywords = strings.TrimSpace(r.KeywordQuery)
			q.info.Entities = cleanList(append(r.Entities, q.info.Entities...), 10)
			q.info.Temporal = (q.info.Temporal || r.Temporal) && !m.opts.Ablations.NoTemporal
			q.info.By = "llm"
		case err == nil || invalid(err):
			rec.note("query analysis unusable, rules used")
		default:
			return nil, err
		}
		q.trace.Rounds++
	}
	q.search = question
	embedText := question
	if q.info.By == "llm" {
		q.search = q.info.Keywords
		embedText = q.info.Keywords
	}
	if vs, err := m.embed(ctx, []string{embedText}); err != nil {
		return nil, err
	} else if vs != nil {
		q.qv = vs[0]
	}

	st.mu.RLock()
	defer st.mu.RUnlock()
	if !ro.AsOf.IsZero() || ro.Filter != nil {
		asOf, filter := ro.AsOf, ro.Filter
		q.keepTurn = func(i int) bool {
			t := &st.turns[i]
			return (asOf.IsZero() || !t.RecordedAt.After(asOf)) && (filter == nil || filter(*t))
		}
	}
	if !ro.AsOf.IsZero() {
		asOf := ro.AsOf
		q.keepEv = func(i int) bool { return !st.events[i].CreatedAt.After(asOf) }
	}

	switch m.opts.Mode {
	case ModePaper:
		err = m.retrievePaper(ctx, q)
	case ModeDefault:
		err = m.retrieveDefault(ctx, q)
	default:
		m.retrieveOffline(q)
	}
	if err == nil {
		err = q.err
	}
	if err != nil {
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

// analyzeRules analyses a question without an LLM.
func analyzeRules(question string) QueryInfo {
	qi := QueryInfo{By: "rules"}
	var kws []string
	for _, w := range textnorm.Tokens(question) {
		if !textnorm.IsStop(w) && !questionWords[w] {
			kws = append(kws, w)
		}
	}
	qi.Keywords = strings.Join(kws, " ")
	for _, e := range entitiesOf(question, "") {
		if !questionWords[strings.ToLower(e)] {
			qi.Entities = append(qi.Entities, e)
		}
	}
	in := temporal.AnalyzeQuestion(question)
	// AsksTime (when / how long / which year ...) is far more precise than
	// the broad Temporal flag, which also fires on any date mentioned.
	qi.Temporal = in.AsksTime()
	if in.Range != nil {
		qi.Start, qi.End = in.Range.Start, in.Range.End
	}
	return qi
}

var questionWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "which": true, "why": true,
	"how": true, "did": true, "does": true, "do": true, "is": true, "was": true, "would": true, "could": true,
	"likely": true, "might": true,
}

// addCand records a candidate turn with its source and score.
func (q *query) addCand(id, source string, score float64) {
	t, ok := q.st.turn(id)
	if !ok {
		return
	}
	if q.keepTurn != nil && !q.keepTurn(q.st.pos[id]) {
		return
	}
	ev := q.cand[id]
	if ev == nil {
		ev = &Evidence{Turn: t, Date: dateOf(t), Events: slices.Clone(q.st.eventsOf[id])}
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

// searchStage runs turn and event search and records both stages.
func (q *query) searchStage() (turns []scored, events []scored) {
	switch {
	case q.noEvents:
		turns = q.st.searchTurnsIn(q.sc, q.search, q.qv, q.ro.KTurn, q.keepTurn)
	case len(q.st.events) >= q.st.limits.quantizeRows:
		// Large: the two searches are independent; run them at once.
		done := make(chan struct{})
		go func() {
			defer close(done)
			events = q.st.searchEvents(q.search, q.qv, q.ro.KEvent, q.keepEv)
		}()
		turns = q.st.searchTurnsIn(q.sc, q.search, q.qv, q.ro.KTurn, q.keepTurn)
		<-done
	default:
		turns = q.st.searchTurnsIn(q.sc, q.search, q.qv, q.ro.KTurn, q.keepTurn)
		events = q.st.searchEvents(q.search, q.qv, q.ro.KEvent, q.keepEv)
	}
	ids := make([]string, len(turns))
	for i, h := range turns {
		ids[i] = q.st.turns[h.idx].ID
	}
	q.stage("search", ids)
	eids := make([]string, len(events))
	for i, h := range events {
		eids[i] = q.st.events[h.idx].ID
	}
	q.stage("events", eids)
	return turns, events
}

// timeline returns turns in the question's time range (by when they were
// said or by the times they mention), oldest first, at most n.
func (q *query) timeline(n int) []string {
	if !q.info.Temporal || q.info.Start.IsZero() {
		return nil
	}
	if err := q.st.ensureAnnotations(q.ctx); err != nil {
		q.err = err
		return nil
	}
	iv := temporal.Interval{Start: q.info.Start, End: q.info.End}
	var idx []int
	for i, t := range q.st.turns {
		if q.keepTurn != nil && !q.keepTurn(i) {
			continue
		}
		in := !t.OccurredAt.IsZero() && iv.Contains(t.OccurredAt)
		for _, r := range q.st.info.timeRefs[i] {
			if iv.Overlaps(temporal.Interval{Start: r.Start, End: r.End}) {
				in = true
			}
		}
		if in {
			idx = append(idx, i)
		}
	}
	// Prefer the turns that also match the question's words.
	if len(idx) > n {
		scores, _ := q.turnLexScores()
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		idx = idx[:n]
		slices.Sort(idx)
	}
	ids := make([]string, len(idx))
	for j, i := range idx {
		ids[j] = q.st.turns[i].ID
	}
	return ids
}

// eventChunks returns the member turns one event shows its prediction
// calls. Paper mode shows every member, in chunks of PredictChunk turns (one
// call each). Default mode makes one call per event: a large event shows
// only its PredictChunk members most similar to the question, in order, so
// that prompt size stays bounded however large events grow.
func (m *Memory) eventChunks(q *query, e store.Event) [][]store.Turn {
	var idx []int
	for _, id := range e.TurnIDs {
		if i, ok := q.st.pos[id]; ok && (q.keepTurn == nil || q.keepTurn(i)) {
			idx = append(idx, i)
		}
	}
	if m.opts.Mode != ModePaper && len(idx) > m.opts.PredictChunk {
		score := q.memberScores()
		top := slices.Clone(idx)
		slices.SortStableFunc(top, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
		idx = top[:m.opts.PredictChunk]
		slices.Sort(idx)
	}
	var out [][]store.Turn
	for len(idx) > 0 {
		n := min(len(idx), m.opts.PredictChunk)
		chunk := make([]store.Turn, n)
		for j, i := range idx[:n] {
			chunk[j] = q.st.turns[i]
		}
		out = append(out, chunk)
		idx = idx[n:]
	}
	return out
}

// memberScores returns a function scoring a turn index by its similarity to
// the question: BM25 plus, with vectors, the cosine. Computed once per query.
func (q *query) memberScores() func(i int) float64 {
	if q.score == nil {
		lex, touched := q.turnLexScores()
		top := 0.0
		for _, i := range touched {
			top = max(top, lex[i])
		}
		dense := q.qv != nil && q.st.turnVec.Rows() == len(q.st.turns)
		q.score = func(i int) float64 {
			s := 0.0
			if top > 0 && i < len(lex) {
				s = lex[i] / top
			}
			if dense {
				s += float64(vec.Dot(q.qv, q.st.turnVec.Row(i)))
			}
			return s
		}
	}
	return q.score
}

// llmJob is one prediction or filter call of a retrieval round.
type llmJob struct {
	kind  string // prompt.Predict or prompt.Filter
	event store.Event
	part  string
	turns []store.Turn
	out   []string
}

// runJobs runs prediction and filter calls in parallel; unusable replies
// select nothing (and are noted). The space's read lock is released while
// the calls run (jobs carry copies of what they show), so writers and other
// readers never wait for a model; callers must not keep indexes into the
// state across this call.
func (m *Memory) runJobs(ctx context.Context, q *query, round int, jobs []*llmJob) error {
	if len(jobs) == 0 {
		return nil
	}
	q.st.mu.RUnlock()
	defer q.st.mu.RLock()
	return parallel(ctx, m.opts.Concurrency, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		var ids []string
		var err error
		if j.kind == prompt.Predict {
			var r prompt.PredictReply
			err = m.callModel(ctx, q.rec, llm.RoleMemory, round, prompt.Predict, prompt.PredictData{
				Question: q.question, Event: promptEvent(j.event), Turns: promptTurns(j.turns), Part: j.part, Max: predictMax,
			}, &r)
			ids = r.TurnIDs
		} else {
			var r prompt.FilterReply
			err = m.callModel(ctx, q.rec, llm.RoleMemory, round, prompt.Filter, prompt.FilterData{
				Question: q.question, Turns: promptTurns(j.turns),
			}, &r)
			ids = r.RelevantIDs
		}
		if invalid(err) {
			q.rec.note("%s call unusable, it selected nothing: %v", j.kind, err)
			return nil
		}
		if err != nil {
			return err
		}
		// Only ids that were shown count (models invent ids).
		for _, id := range ids {
			id = strings.Trim(strings.TrimSpace(id), "[]")
			if slices.ContainsFunc(j.turns, func(t store.Turn) bool { return t.ID == id }) && !slices.Contains(j.out, id) {
				j.out = append(j.out, id)
			}
		}
		return nil
	})
}

func (m *Memory) predictJobs(q *query, events []scored) []*llmJob {
	var jobs []*llmJob
	for _, h := range events {
		e := q.st.events[h.idx]
		chunks := m.eventChunks(q, e)
		for i, c := range chunks {
			j := &llmJob{kind: prompt.Predict, event: e, turns: c}
			if len(chunks) > 1 {
				j.part = fmt.Sprintf("%d of %d", i+1, len(chunks))
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

func (m *Memory) filterJobs(q *query, ids []string) []*llmJob {
	var jobs []*llmJob
	for len(ids) > 0 {
		n := min(len(ids), m.opts.FilterChunk)
		j := &llmJob{kind: prompt.Filter}
		for _, id := range ids[:n] {
			t, _ := q.st.turn(id)
			j.turns = append(j.turns, t)
		}
		jobs = append(jobs, j)
		ids = ids[n:]
	}
	return jobs
}

func jobIDs(jobs []*llmJob, kind string) []string {
	var ids []string
	for _, j := range jobs {
		if j.kind != kind {
			continue
		}
		for _, id := range j.out {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// retrievePaper follows the reference: search, one prediction call per
// candidate event, then a relevance filter over the union in chunks.
func (m *Memory) retrievePaper(ctx context.Context, q *query) error {
	turns, events := q.searchStage()
	searched := make([]string, len(turns))
	for i, h := range turns {
		searched[i] = q.st.turns[h.idx].ID
	}
	jobs := m.predictJobs(q, events)
	if err := m.runJobs(ctx, q, 2, jobs); err != nil {
		return err
	}
	if len(jobs) > 0 {
		q.trace.Rounds++
	}
	predicted := jobIDs(jobs, prompt.Predict)
	q.stage("predicted", predicted)
	union := slices.Clone(searched)
	for _, id := range predicted {
		if !slices.Contains(union, id) {
			union = append(union, id)
		}
	}
	union = m.withLinks(q, union)
	q.stage("union", union)
	if m.opts.Ablations.NoFilter {
		for i, id := range union {
			q.addCand(id, "search", 1/float64(1+i))
		}
		return nil
	}
	fjobs := m.filterJobs(q, union)
	if err := m.runJobs(ctx, q, 3, fjobs); err != nil {
		return err
	}
	if len(fjobs) > 0 {
		q.trace.Rounds++
	}
	kept := jobIDs(fjobs, prompt.Filter)
	q.stage("filtered", kept)
	rank := map[string]int{}
	for i, id := range searched {
		rank[id] = i + 1
	}
	for _, id := range kept {
		src := "event"
		if rank[id] > 0 {
			src = "search"
		}
		q.addCand(id, src, 1+boost(rank[id]))
	}
	return nil
}

// retrieveDefault runs one parallel round: per-event prediction and a
// relevance filter over the searched (and timeline) turns together. The
// union of what they select is the evidence.
func (m *Memory) retrieveDefault(ctx context.Context, q *query) error {
	turns, events := q.searchStage()
	var searched []string
	for _, h := range turns {
		searched = append(searched, q.st.turns[h.idx].ID)
	}
	tl := q.timeline(2 * m.opts.FilterChunk)
	if len(tl) > 0 {
		q.stage("timeline", tl)
	}
	toFilter := slices.Clone(searched)
	for _, id := range tl {
		if !slices.Contains(toFilter, id) {
			toFilter = append(toFilter, id)
		}
	}
	jobs := m.predictJobs(q, events)
	if !m.opts.Ablations.NoFilter {
		jobs = append(jobs, m.filterJobs(q, toFilter)...)
	}
	if err := m.runJobs(ctx, q, 1, jobs); err != nil {
		return err
	}
	if len(jobs) > 0 {
		q.trace.Rounds++
	}
	predicted := jobIDs(jobs, prompt.Predict)
	kept := jobIDs(jobs, prompt.Filter)
	if m.opts.Ablations.NoFilter {
		kept = toFilter // unfiltered: every searched turn is evidence
	}
	q.stage("predicted", predicted)
	q.stage("filtered", kept)
	rank := map[string]int{}
	for i, id := range searched {
		rank[id] = i + 1
	}
	for _, id := range predicted {
		q.addCand(id, "event", 1+boost(rank[id]))
	}
	for _, id := range kept {
		src := "search"
		if rank[id] == 0 {
			src = "timeline"
		}
		q.addCand(id, src, 1+boost(rank[id]))
	}
	var union []string
	for _, id := range append(predicted, kept...) {
		if !slices.Contains(union, id) {
			union = append(union, id)
		}
	}
	q.stage("union", union)
	return nil
}

// boost turns a search rank (1-based, 0 = not found) into a small bonus.
func boost(rank int) float64 {
	if rank == 0 {
		return 0
	}
	return 1 / float64(1+rank)
}

// withLinks adds the turns linked to ids (paper mode, before the filter;
// see Options.PaperLinks).
func (m *Memory) withLinks(q *query, ids []string) []string {
	if !m.opts.PaperLinks {
		return ids
	}
	out := slices.Clone(ids)
	for _, id := range ids {
		for _, l := range q.st.links[id] {
			if !l.InvalidatedAt.IsZero() {
				continue
			}
			other := l.Target
			if other == id {
				other = l.Source
			}
			if !slices.Contains(out, other) {
				out = append(out, other)
			}
		}
	}
	return out
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
	budget := q.ro.EvidenceTokens
	var out []Evidence
	used := 0
	for _, e := range all {
		cost := estimateTokens(e.Turn.Speaker+e.Date+content(e.Turn)) + 8
		if used+cost > budget && len(out) > 0 {
			tr.Notes = append(tr.Notes, fmt.Sprintf("token budget %d reached: %d less relevant turns left out", budget, len(all)-len(out)))
			break
		}
		used += cost
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Evidence) int { return compareTurns(a.Turn, b.Turn) })
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
			out[i].Times = resolvedTimes(store.Annotation{TimeRefs: refs[i]})
		}
	}
	return out, nil
}

// compareTurns orders turns chronologically: by OccurredAt (unknown times
// last), then Seq.
func compareTurns(a, b store.Turn) int {
	az, bz := a.OccurredAt.IsZero(), b.OccurredAt.IsZero()
	switch {
	case az && !bz:
		return 1
	case !az && bz:
		return -1
	case !az && !bz:
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// estimateTokens approximates a token count (about 4 bytes per token).
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// renderContext renders evidence as the answer model sees it.
func renderContext(ev []Evidence) string {
	var b strings.Builder
	for _, e := range ev {
		date := e.Date
		if date == "" {
			date = "unknown date"
		}
		fmt.Fprintf(&b, "[%s] %s | %s: %s", e.Turn.ID, date, e.Turn.Speaker, content(e.Turn))
		if len(e.Times) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(e.Times, "; "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// resolvedTimes renders an annotation's time expressions as
// "last week = 1–7 May 2023" notes, skipping vague ones.
func resolvedTimes(a store.Annotation) []string {
	var out []string
	for _, r := range a.TimeRefs {
		if r.Fuzzy || r.Start.IsZero() {
			continue
		}
		iv := temporal.Interval{Start: r.Start, End: r.End}.String()
		if iv == "" || strings.EqualFold(iv, r.Text) {
			continue
		}
		n := r.Text + " = " + iv
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
