package higmem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/higmem/higmem/internal/parallel"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rank"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// predictMax caps how many turns one per-event prediction may return.
const predictMax = 8

// searchStage runs turn and event search and records both stages. With
// scored (default mode), the turns are the best of offline retrieval's
// scores (scoredTurns); otherwise (paper mode, as the reference) those of
// hybrid search over the question.
func (q *query) searchStage(scored bool) (turns []rank.Hit, events []rank.Hit) {
	if !scored && q.qv != nil {
		// Hybrid search reads the turn vectors (scoredTurns reads them
		// when it needs them).
		if err := q.st.ensureTurnVectors(q.ctx); err != nil && q.err == nil {
			q.err = err
		}
	}
	if !q.noEvents && q.qv != nil {
		if err := q.st.ensureEventVectors(q.ctx); err != nil && q.err == nil {
			q.err = err
		}
	}
	searchTurns := func() []rank.Hit {
		if scored {
			return q.scoredTurns(q.ro.KTurn, nil)
		}
		return q.st.searchTurnsIn(q.sc, q.search, q.qv, q.ro.KTurn, q.keepTurn)
	}
	switch {
	case q.noEvents:
		turns = searchTurns()
	case scored && len(q.st.events) >= q.st.limits.quantizeRows:
		// Large, default mode: the event search runs beside the turn
		// scoring's serial part (offline.Input.Beside), so that its passes
		// over every turn have both cores.
		turns = q.scoredTurns(q.ro.KTurn, func() {
			events = q.st.searchEvents(q.search, q.qv, q.ro.KEvent, q.keepEv)
		})
	case len(q.st.events) >= q.st.limits.quantizeRows:
		// Large: the two searches are independent; run them at once.
		parallel.For(2, func(part int) {
			if part == 0 {
				turns = searchTurns()
			} else {
				events = q.st.searchEvents(q.search, q.qv, q.ro.KEvent, q.keepEv)
			}
		})
	default:
		turns = searchTurns()
		events = q.st.searchEvents(q.search, q.qv, q.ro.KEvent, q.keepEv)
	}
	ids := make([]string, len(turns))
	for i, h := range turns {
		ids[i] = q.st.turns[h.Index].ID
	}
	q.stage("search", ids)
	eids := make([]string, len(events))
	for i, h := range events {
		eids[i] = q.st.events[h.Index].ID
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
	for i := range q.st.turns {
		if q.keepTurn != nil && !q.keepTurn(i) {
			continue
		}
		// The turn's time read in place: a copy of every record of the
		// space per temporal question costs milliseconds at 100k turns.
		at := q.st.turns[i].OccurredAt
		in := !at.IsZero() && iv.Contains(at)
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
		scores := q.turnLexScores()
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
// calls (paper mode): every member, in one call as the reference does, or
// in chunks of Options.PredictChunk turns (one call each) when set.
func (m *Memory) eventChunks(q *query, e store.Event) [][]store.Turn {
	idx := q.members(e)
	var out [][]store.Turn
	for len(idx) > 0 {
		n := len(idx)
		if m.opts.PredictChunk > 0 {
			n = min(n, m.opts.PredictChunk)
		}
		chunk := make([]store.Turn, n)
		for j, i := range idx[:n] {
			chunk[j] = q.st.turns[i]
		}
		out = append(out, chunk)
		idx = idx[n:]
	}
	return out
}

// members returns the state indexes of e's member turns the query may
// see, in order.
func (q *query) members(e store.Event) []int {
	var idx []int
	for _, id := range e.TurnIDs {
		if i, ok := q.st.pos[id]; ok && (q.keepTurn == nil || q.keepTurn(i)) {
			idx = append(idx, i)
		}
	}
	return idx
}

// memberRank is an event's members the query may see, in the event's
// order and by similarity to the question (memberScores), to choose its n
// members most similar to the question at any n (top).
type memberRank struct {
	members []int // state indexes, in the event's order
	// ranked is members most similar first (stable: ties in the event's
	// order), made on first need from the scores score returns (the
	// question's memberScores, which it computes, and the turn vectors it
	// reads, only then).
	ranked []int
	score  func() func(int) float64
}

// membersAt returns what members returns for the event at state index k,
// read from the event's member positions (evTurns) when they hold one
// for each of its member ids, not looked up by id (a look-up in a map of
// every turn's id, which mostly misses the cache).
func (q *query) membersAt(k int) []int {
	e, pos := &q.st.events[k], q.st.evTurns[k]
	if len(pos) != len(e.TurnIDs) {
		// A member id the state does not hold (or not yet placed).
		return q.members(*e)
	}
	var idx []int
	for _, p := range pos {
		if i := int(p); q.keepTurn == nil || q.keepTurn(i) {
			if idx == nil {
				idx = make([]int, 0, len(pos))
			}
			idx = append(idx, i)
		}
	}
	return idx
}

// newMemberRank returns the members of the event at state index k, to
// rank by memberScores on first need.
func (q *query) newMemberRank(k int) *memberRank {
	return &memberRank{members: q.membersAt(k), score: q.memberScores}
}

// rankMembers returns members sorted by score, highest first, ties in
// their order; each member is scored once.
func rankMembers(members []int, score func(int) float64) []int {
	type scored struct {
		i int
		s float64
	}
	ss := make([]scored, len(members))
	for k, i := range members {
		ss[k] = scored{i, score(i)}
	}
	slices.SortStableFunc(ss, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	out := make([]int, len(ss))
	for k, x := range ss {
		out[k] = x.i
	}
	return out
}

// top returns the indexes of the n members most similar to the question,
// in the state's order; every member, in the event's order, when there are
// no more than n.
func (r *memberRank) top(n int) []int {
	if len(r.members) <= n {
		return r.members
	}
	idx := slices.Clone(r.topSet(n))
	slices.Sort(idx)
	return idx
}

// topSet returns the members top(n) returns, in no given order: the
// first n of ranked, or every member when there are no more than n.
func (r *memberRank) topSet(n int) []int {
	if len(r.members) <= n {
		return r.members
	}
	if r.ranked == nil {
		r.ranked = rankMembers(r.members, r.score())
	}
	return r.ranked[:n]
}

// turnsAt returns the turns at the given state indexes.
func (st *spaceState) turnsAt(idx []int) []store.Turn {
	out := make([]store.Turn, len(idx))
	for j, i := range idx {
		out[j] = st.turns[i]
	}
	return out
}

// memberScores returns a function scoring a turn index by its similarity to
// the question: BM25 plus, with vectors, the cosine. Computed once per query.
func (q *query) memberScores() func(i int) float64 {
	if q.score == nil {
		lex := q.turnLexScores()
		top := q.turnLexTop()
		if q.qv != nil {
			if err := q.st.ensureTurnVectors(q.ctx); err != nil && q.err == nil {
				q.err = err
			}
		}
		dense := q.qv != nil && q.st.turnVecsReady()
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

// llmJob is one prediction, filter or select call of a retrieval round.
type llmJob struct {
	kind  string // prompt.Predict, prompt.Filter or prompt.Select
	event store.Event
	part  string
	turns []store.Turn // every turn the call shows
	sel   *prompt.SelectData
	out   []string
	// at holds the position in turns of each id of out.
	at []int
	// unusable is set when the reply was unusable (out stays empty).
	unusable bool
}

// runJobs runs prediction and filter calls in parallel, as one sequential
// round of the trace; unusable replies select nothing (and are noted). The space's read lock is released while
// the calls run (jobs carry copies of what they show), so writers and other
// readers never wait for a model; callers must not keep indexes into the
// state across this call.
func (m *Memory) runJobs(ctx context.Context, q *query, round int, jobs []*llmJob) error {
	if len(jobs) == 0 {
		return nil
	}
	q.st.mu.RUnlock()
	defer q.st.mu.RLock()
	err := parallel.Run(ctx, m.opts.Concurrency, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		ids, err := m.askJob(ctx, q, round, j, j.turns)
		if invalid(err) {
			j.unusable = true
			if j.kind == prompt.Select {
				q.rec.note("select call unusable, the search hits stand in: %v", err)
			} else {
				q.rec.note("%s call unusable, it selected nothing: %v", j.kind, err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		// Only ids that were shown count (models invent ids).
		for _, id := range ids {
			id = strings.Trim(strings.TrimSpace(id), "[]")
			if at := turnIndex(j.turns, id); at >= 0 && !slices.Contains(j.out, id) {
				j.out = append(j.out, id)
				j.at = append(j.at, at)
			}
		}
		return nil
	})
	if err == nil {
		q.trace.Rounds++
	}
	return err
}

// turnIndex returns the position in turns of the first turn with the id,
// -1 when none has it (reading each turn in place, not a copy of it per
// look).
func turnIndex(turns []store.Turn, id string) int {
	for i := range turns {
		if turns[i].ID == id {
			return i
		}
	}
	return -1
}

// askJob makes job j's call showing turns (all of j's, or part of them)
// and returns the ids the reply chose. A prediction or filter prompt the
// model refuses as too long for its context (llm.ErrContextLength) is
// asked again in two halves, down to single turns; a select prompt, or a
// single turn, that does not fit is an unusable reply (its fallback
// applies).
func (m *Memory) askJob(ctx context.Context, q *query, round int, j *llmJob, turns []store.Turn) ([]string, error) {
	var ids []string
	var err error
	switch j.kind {
	case prompt.Predict:
		var r prompt.PredictReply
		err = m.callModel(ctx, q.rec, llm.RoleMemory, round, prompt.Predict, prompt.PredictData{
			Question: q.question, Event: paperEvent(j.event), Turns: promptTurns(turns), Part: j.part, Max: predictMax,
		}, &r)
		ids = r.TurnIDs
	case prompt.Select:
		var r prompt.SelectReply
		err = m.callModel(ctx, q.rec, llm.RoleMemory, round, prompt.Select, *j.sel, &r)
		ids = r.TurnIDs
	default:
		var r prompt.FilterReply
		err = m.callModel(ctx, q.rec, llm.RoleMemory, round, prompt.Filter, prompt.FilterData{
			Question: q.question, Turns: promptTurns(turns),
		}, &r)
		ids = r.RelevantIDs
	}
	if !errors.Is(err, llm.ErrContextLength) {
		return ids, err
	}
	if j.kind == prompt.Select || len(turns) < 2 {
		return nil, fmt.Errorf("%w: %w", llm.ErrInvalidOutput, err)
	}
	q.rec.note("%s prompt of %d turns over the model's context; asked again in two halves", j.kind, len(turns))
	h := len(turns) / 2
	first, err := m.askJob(ctx, q, round, j, turns[:h])
	if err != nil && !invalid(err) {
		return nil, err
	}
	second, err2 := m.askJob(ctx, q, round, j, turns[h:])
	if err2 != nil && !invalid(err2) {
		return nil, err2
	}
	switch {
	case err != nil && err2 != nil:
		return nil, err // neither half was usable
	case err != nil || err2 != nil:
		q.rec.note("%s call unusable, it selected nothing of half its turns: %v", j.kind, errors.Join(err, err2))
	}
	return append(first, second...), nil
}

func (m *Memory) predictJobs(q *query, events []rank.Hit) []*llmJob {
	var jobs []*llmJob
	for _, h := range events {
		e := q.st.events[h.Index]
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
// candidate event, then a relevance filter over the union in chunks. The
// union also holds the profile evidence of the question (see
// profileEvidence; the reference's own profile path, off in its paper
// setting, is not reproduced).
func (m *Memory) retrievePaper(ctx context.Context, q *query) error {
	turns, events := q.searchStage(false)
	searched := make([]string, len(turns))
	for i, h := range turns {
		searched[i] = q.st.turns[h.Index].ID
	}
	jobs := m.predictJobs(q, events)
	if err := m.runJobs(ctx, q, 2, jobs); err != nil {
		return err
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
	prof := q.profileEvidence()
	if len(prof) > 0 {
		// The turns stating what the question asks of a person's profile
		// go to the filter too.
		q.stage("profile", prof)
		for _, id := range prof {
			if !slices.Contains(union, id) {
				union = append(union, id)
			}
		}
	}
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
	kept := jobIDs(fjobs, prompt.Filter)
	q.stage("filtered", kept)
	rank := map[string]int{}
	for i, id := range searched {
		rank[id] = i + 1
	}
	for _, id := range kept {
		src := "event"
		switch {
		case rank[id] > 0:
			src = "search"
		case slices.Contains(prof, id) && !slices.Contains(predicted, id):
			src = "profile"
		}
		q.addCand(id, src, 1+boost(rank[id]))
	}
	return nil
}

// Caps of default mode's select call.
const (
	// selectMembers is how many member turns of each candidate event a
	// select call shows: those most similar to the question.
	selectMembers = 10
	// selectMax caps the turns one select call may return.
	selectMax = 30
	// selectTokens bounds what a select call shows (its events and turns,
	// about 4 bytes per token), so that with the answer's evidence budget
	// (Options.EvidenceTokens, 2,000) a question stays within 5,000 prompt
	// tokens.
	selectTokens = 2700
)

// promptTurnBytes and promptEventBytes are the sizes of a turn's and an
// event's lines in a prompt, near enough.
func promptTurnBytes(t prompt.Turn) int {
	return len(t.ID) + len(t.Date) + len(t.Speaker) + len(t.Text) + len(t.Note) + 8
}

func promptEventBytes(e prompt.Event) int { return len(e.ID) + len(e.Title) + len(e.Summary) + 12 }

// retrieveDefault makes one select call (one round): it shows the
// candidate events, each with its selectMembers turns closest to the
// question, then the searched, timeline and profile turns no event showed
// (see profileEvidence; within selectTokens: fewer members per event, then
// fewer events, when they would not fit), and the model picks the
// evidence, at most selectMax turns. An unusable reply (junk, or only ids
// that were not shown) leaves the search, timeline and profile hits as the
// evidence. With NoFilter there is no call: every shown turn is
// evidence (up to the token budget).
func (m *Memory) retrieveDefault(ctx context.Context, q *query) error {
	v := m.selectInputs(q)
	v.prepare()
	// Within the budget: fewer members per event first, then fewer
	// events; the searched, timeline and profile turns always show.
	fitLayout(selectMembers, len(v.events), 4*selectTokens, v.show, v.size)
	v.finish()
	q.stage("shown", v.ids)
	selected := v.ids
	if !m.opts.Ablations.NoFilter {
		if err := m.runJobs(ctx, q, 1, []*llmJob{v.job}); err != nil {
			return err
		}
		selected = v.job.out
		if v.job.unusable {
			// The model's reply said nothing usable: the search (and
			// timeline) hits are the evidence, as without the call.
			selected = nil
			for _, id := range slices.Concat(v.searched, v.timeline, v.profile) {
				if !slices.Contains(selected, id) {
					selected = append(selected, id)
				}
			}
		}
	}
	q.stage("selected", selected)
	v.addSelected(selected, !m.opts.Ablations.NoFilter && !v.job.unusable)
	return nil
}

// addSelected makes the selected turns candidates: the model lists the
// most useful first; a search rank adds a little, as in paper mode. With
// byCall, selected is the call's choice (v.job.out), each id at its
// position in the layout (v.job.at): the turn is read at its state index,
// not looked up by its id, where the state still holds it there.
func (v *selectView) addSelected(selected []string, byCall bool) {
	q := v.q
	if len(q.cand) == 0 {
		q.cand = make(map[string]*Evidence, len(selected))
	}
	if !byCall {
		shown := v.shownAs()
		for k, id := range selected {
			q.addCand(id, shown[id], 1+boost(v.ranks[id])+boost(k+1)/2)
		}
		return
	}
	for k, id := range selected {
		p := v.job.at[k]
		score := 1 + boost(v.ranks[id]) + boost(k+1)/2
		if i := v.idx[p]; q.sameTurn(i, &v.job.turns[p]) {
			q.addCandAt(i, v.hows[p], score, v.pts[v.slots[p]].Date)
		} else {
			q.addCand(id, v.hows[p], score)
		}
	}
}

// sameTurn reports whether the state holds at index i the turn t was
// copied from before the state's lock was let go (runJobs), with the same
// time: then i is where the state holds t's id (ids are unique), and the
// turn's date (rules.DateOf) is what it was. A write while the lock was
// let go may have moved or replaced it; the caller then looks it up by
// id. Caller holds st.mu.
func (q *query) sameTurn(i int, t *store.Turn) bool {
	if i >= len(q.st.turns) {
		return false
	}
	s := &q.st.turns[i]
	// == on the times, not Equal: the same instant in another location
	// is another date.
	return s.ID == t.ID && s.OccurredAt == t.OccurredAt && s.OccurredRaw == t.OccurredRaw
}

// fitLayout chooses the select call's layout: n members of each of the
// first nev events, with fewer members per event first, then fewer
// events, until the prompt's size is within limit (or there is nothing
// left to take off), and lays it out with show. The first layout is laid
// out at once (it mostly fits); the others are only measured (size) until
// one fits, which show then lays out.
func fitLayout(n, nev, limit int, show, size func(n, nev int) int) (int, int) {
	if show(n, nev) <= limit {
		return n, nev
	}
	for n > 1 || nev > 0 {
		if n > 1 {
			n--
		} else {
			nev--
		}
		if size(n, nev) <= limit {
			break
		}
	}
	show(n, nev)
	return n, nev
}

// selectView is what default mode's select call shows: the candidate
// events, each with its members closest to the question, then the
// searched, timeline and profile turns no event showed.
type selectView struct {
	q        *query
	events   []rank.Hit
	searched []string       // the turn search's hits, best first
	ranks    map[string]int // 1-based rank of each searched turn
	timeline []string
	profile  []string // the turns stating what the question asks of a profile
	data     *prompt.SelectData
	job      *llmJob
	ids      []string // the ids shown, in order
	// hows says where each of ids was shown: "event", "search",
	// "timeline" or "profile" (see shownAs).
	hows []string
	// memberRanks and promptEvents hold, across the layouts tried, each
	// event's members by similarity and its prompt record (by position
	// in events; promptEvents[k] is set where hasEvent[k]).
	memberRanks  []*memberRank
	promptEvents []prompt.Event
	hasEvent     []bool
	// slot numbers the turns any layout showed (by state index), made
	// once per turn: pts holds each one's prompt line and ptBytes its
	// size (promptTurnBytes); mark is the layout (gen) that last showed
	// it, so that a layout shows a turn once.
	slot    map[int]int
	pts     []prompt.Turn
	ptBytes []int
	mark    []int
	gen     int
	// days formats the dates of the prompt lines slotOf makes.
	days dayMemo
	// loose is the searched, timeline and profile turns, each once, with
	// where each is shown from when no event shows it (made on first
	// need).
	loose []looseTurn
	// idx and slots hold the state indexes and the slots of the turns
	// shown, in order (ids' turns).
	idx, slots []int
}

// shownAs returns where each turn the last layout showed was shown from,
// by id: "event", "search", "timeline" or "profile".
func (v *selectView) shownAs() map[string]string {
	shown := make(map[string]string, len(v.ids))
	for p, id := range v.ids {
		shown[id] = v.hows[p]
	}
	return shown
}

// looseTurn is a turn the select call shows outside the events: its
// state index and where it comes from ("search", "timeline" or
// "profile").
type looseTurn struct {
	i   int
	how string
}

// slotOf returns the slot of the turn at state index i, making its
// prompt line (q.promptTurnAt) when it has none yet.
func (v *selectView) slotOf(i int) int {
	if s, ok := v.slot[i]; ok {
		return s
	}
	return v.put(i, v.q.promptTurnAt(i, &v.days))
}

// put gives the turn at state index i a slot with its prompt line pt,
// unless it has one, and returns its slot.
func (v *selectView) put(i int, pt prompt.Turn) int {
	if s, ok := v.slot[i]; ok {
		return s
	}
	s := len(v.pts)
	v.slot[i] = s
	v.pts = append(v.pts, pt)
	v.ptBytes = append(v.ptBytes, promptTurnBytes(pt))
	v.mark = append(v.mark, 0)
	return s
}

// prepare makes, on both cores, what the first layout (selectMembers
// members of every event, which mostly fits) shows and show would make
// one turn at a time: each event's members ranked and its prompt record,
// and the prompt lines of the members it shows and of the loose turns,
// which show then finds in their slots. The two parts take the events and
// runs of loose turns one at a time, whichever is free first (an event
// that ranks its members costs several that do not). What they share (the
// loose turns, the passage and member scores) is made first; they only
// read it. Caller holds st.mu.
func (v *selectView) prepare() {
	q, nev := v.q, len(v.events)
	if nev == 0 {
		return
	}
	loose := v.looseTurns()
	q.passageScores()
	for _, h := range v.events {
		// Only an event of more members than shown ranks them.
		if len(q.st.events[h.Index].TurnIDs) > selectMembers {
			q.memberScores()
			break
		}
	}
	type line struct {
		i  int
		pt prompt.Turn
	}
	const run = 4 // loose turns per piece of work
	works := nev + (len(loose)+run-1)/run
	var next atomic.Int32
	var made [2][]line
	parallel.For(2, func(part int) {
		var days dayMemo
		var out []line
		for {
			w := int(next.Add(1)) - 1
			if w >= works {
				break
			}
			if w < nev {
				v.promptEvent(w)
				for _, i := range v.rankOf(w).topSet(selectMembers) {
					out = append(out, line{i, q.promptTurnAt(i, &days)})
				}
				continue
			}
			lo := (w - nev) * run
			for _, l := range loose[lo:min(lo+run, len(loose))] {
				out = append(out, line{l.i, q.promptTurnAt(l.i, &days)})
			}
		}
		made[part] = out
	})
	for _, out := range made {
		for _, l := range out {
			v.put(l.i, l.pt)
		}
	}
}

// promptEvent returns the event at position k of events as the select
// prompt shows it (without its facts), made once per event.
func (v *selectView) promptEvent(k int) prompt.Event {
	if !v.hasEvent[k] {
		pe := rules.PromptEvent(v.q.st.events[v.events[k].Index])
		pe.Facts = nil
		v.promptEvents[k], v.hasEvent[k] = pe, true
	}
	return v.promptEvents[k]
}

// rankOf returns the member rank of the event at position k of events,
// made once per event.
func (v *selectView) rankOf(k int) *memberRank {
	if v.memberRanks[k] == nil {
		v.memberRanks[k] = v.q.newMemberRank(v.events[k].Index)
	}
	return v.memberRanks[k]
}

// looseTurns returns v.loose, made on first need: the searched, timeline
// and profile turns in that order, each once (where first listed), shown
// as "search" when the turn search found it, else "timeline" when in the
// time range, else "profile".
func (v *selectView) looseTurns() []looseTurn {
	if v.loose != nil {
		return v.loose
	}
	q := v.q
	v.loose = []looseTurn{}
	seen := map[string]bool{}
	for _, id := range slices.Concat(v.searched, v.timeline, v.profile) {
		i, ok := q.st.pos[id] // always: the three lists hold the state's turns
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		how := "profile"
		switch {
		case v.ranks[id] > 0:
			how = "search"
		case slices.Contains(v.timeline, id):
			how = "timeline"
		}
		v.loose = append(v.loose, looseTurn{i, how})
	}
	return v.loose
}

// selectInputs runs the search stage and gathers the timeline and profile
// turns of q (recording their stages) for the select call.
func (m *Memory) selectInputs(q *query) *selectView {
	// The members' scores need the greatest BM25 score of the turns: the
	// fast scan works it out beside its dense part (featuresIn).
	q.earlyTop = true
	turns, events := q.searchStage(true)
	v := &selectView{q: q, events: events, ranks: map[string]int{}, memberRanks: make([]*memberRank, len(events)),
		promptEvents: make([]prompt.Event, len(events)), hasEvent: make([]bool, len(events))}
	// Room for the turns a full layout shows, about: the members of every
	// event and the loose turns.
	room := selectMembers*len(events) + len(turns)
	v.slot, v.pts, v.ptBytes, v.mark = make(map[int]int, room), make([]prompt.Turn, 0, room), make([]int, 0, room), make([]int, 0, room)
	for _, h := range turns {
		v.searched = append(v.searched, q.st.turns[h.Index].ID)
	}
	v.timeline = q.timeline(m.opts.FilterChunk)
	if len(v.timeline) > 0 {
		q.stage("timeline", v.timeline)
	}
	for i, id := range v.searched {
		v.ranks[id] = i + 1
	}
	// The turns stating what the question asks of a person's profile
	// (current value, or the one held as of RetrieveOptions.AsOf) are
	// shown with the search hits.
	v.profile = q.profileEvidence()
	if len(v.profile) > 0 {
		q.stage("profile", v.profile)
	}
	return v
}

// size returns the size in bytes of the prompt show(n, nev) lays out,
// without laying it out: the first nev events, each with its n members
// closest to the question that no event before it shows (an event
// showing none is left out), then the loose turns no event shows.
func (v *selectView) size(n, nev int) (size int) {
	v.gen++
	add := func(i int) bool {
		s := v.slotOf(i)
		if v.mark[s] == v.gen {
			return false
		}
		v.mark[s] = v.gen
		size += v.ptBytes[s]
		return true
	}
	for k := range v.events[:nev] {
		any := false
		// The set of members shown, in any order: which ones does not
		// depend on it.
		for _, i := range v.rankOf(k).topSet(n) {
			if add(i) {
				any = true
			}
		}
		if any {
			size += promptEventBytes(v.promptEvent(k))
		}
	}
	for _, l := range v.looseTurns() {
		add(l.i)
	}
	return size
}

// show lays out the call with the first nev events, each with its n
// members closest to the question, and returns the prompt's size in bytes
// (size(n, nev)). The job's turns are copies, made for the layout the call
// shows (finish).
func (v *selectView) show(n, nev int) (size int) {
	q := v.q
	v.gen++
	v.data = &prompt.SelectData{Question: q.question, Max: selectMax}
	v.ids, v.hows, v.idx, v.slots = nil, v.hows[:0], v.idx[:0], v.slots[:0]
	// add shows the turn at state index i unless the layout shows it
	// already (marked, as in size).
	add := func(i int, how string) (prompt.Turn, bool) {
		s := v.slotOf(i)
		if v.mark[s] == v.gen {
			return prompt.Turn{}, false
		}
		v.mark[s] = v.gen
		if v.ids == nil {
			// Room for every turn made a slot: a full layout's, about.
			v.ids = make([]string, 0, cap(v.pts))
		}
		v.ids = append(v.ids, v.pts[s].ID)
		v.hows = append(v.hows, how)
		v.idx = append(v.idx, i)
		v.slots = append(v.slots, s)
		size += v.ptBytes[s]
		return v.pts[s], true
	}
	for k := range v.events[:nev] {
		se := prompt.SelectEvent{}
		for _, i := range v.rankOf(k).top(n) {
			if pt, ok := add(i, "event"); ok {
				if se.Turns == nil {
					se.Turns = make([]prompt.Turn, 0, n)
				}
				se.Turns = append(se.Turns, pt)
			}
		}
		if len(se.Turns) > 0 {
			se.Event = v.promptEvent(k)
			if v.data.Events == nil {
				v.data.Events = make([]prompt.SelectEvent, 0, nev)
			}
			v.data.Events = append(v.data.Events, se)
			size += promptEventBytes(se.Event)
		}
	}
	for _, l := range v.looseTurns() {
		if pt, ok := add(l.i, l.how); ok {
			v.data.Turns = append(v.data.Turns, pt)
		}
	}
	return size
}

// finish makes the select call's job for the last layout show made, with
// copies of the turns it shows.
func (v *selectView) finish() {
	v.job = &llmJob{kind: prompt.Select, sel: v.data, turns: v.q.st.turnsAt(v.idx)}
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
