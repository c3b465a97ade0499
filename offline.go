package higmem

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Offline tuning. Every threshold of the no-LLM pipeline lives here, so that
// a retune is one diff. They were chosen on the LoCoMo dev conversations
// only; see BENCHMARKS.md for how.
const (
	// offlineProducer marks records made without an LLM.
	offlineProducer = "offline:o1"

	// Segmentation: a turn joins the previous turn's event when it is short
	// (a reply such as "Wow, cool!") or similar enough to it.
	segShortTerms   = 4    // turns with fewer content terms always continue
	segJoinDense    = 0.30 // cosine(turn, event centroid) to continue
	segJoinLexical  = 0.25 // share of the turn's terms found in the event
	segRejoinDense  = 0.55 // to rejoin an older event of another session
	segRejoinLex    = 0.50
	segMaxEventSize = 24 // a longer run starts a new event

	// Keywords and summaries.
	keywordsPerTurn   = 8
	keywordsPerEvent  = 10
	summaryTurns      = 2
	summaryTurnMaxLen = 200
)

// buildOffline annotates turns by rules and groups them into events by
// similarity, then commits the batch.
func (m *Memory) buildOffline(ctx context.Context, st *spaceState, turns []store.Turn, res *AddResult) error {
	b := newBatch(st, turns, m.opts.Now().UTC())
	texts := make([]string, len(turns))
	for i, t := range turns {
		texts[i] = turnEmbedText(t)
	}
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return err
	}
	b.turnVecs = vs

	st.mu.RLock()
	seg := newSegmenter(st, b)
	for i, t := range turns {
		b.ann[t.ID] = annotateRules(t)
		var v []float32
		if vs != nil {
			v = vs[i]
		}
		seg.assign(t, v)
	}
	for _, id := range b.order {
		summariseExtractive(st, b, b.events[id])
	}
	st.mu.RUnlock()
	return m.commit(ctx, b, res)
}

// segmenter assigns turns to events without an LLM.
type segmenter struct {
	st   *spaceState
	b    *batch
	prev store.Turn // the turn before the one being assigned
	// centroid and terms describe the events touched in this batch.
	centroid map[string][]float32
	terms    map[string]map[string]bool
}

func newSegmenter(st *spaceState, b *batch) *segmenter {
	s := &segmenter{st: st, b: b, centroid: map[string][]float32{}, terms: map[string]map[string]bool{}}
	if n := len(st.turns); n > 0 {
		s.prev = st.turns[n-1]
	}
	return s
}

// eventTerms returns the content terms of an event's members.
func (s *segmenter) eventTerms(e *store.Event) map[string]bool {
	if ts, ok := s.terms[e.ID]; ok {
		return ts
	}
	ts := map[string]bool{}
	for _, id := range e.TurnIDs {
		if t, ok := s.turn(id); ok {
			for _, w := range textnorm.Terms(content(t)) {
				ts[w] = true
			}
		}
	}
	s.terms[e.ID] = ts
	return ts
}

// eventCentroid returns the normalised mean vector of an event's members.
func (s *segmenter) eventCentroid(e *store.Event) []float32 {
	if c, ok := s.centroid[e.ID]; ok {
		return c
	}
	var c []float32
	for _, id := range e.TurnIDs {
		v := s.turnVec(id)
		if v == nil {
			continue
		}
		if c == nil {
			c = make([]float32, len(v))
		}
		for i, x := range v {
			c[i] += x
		}
	}
	if c != nil {
		vec.Normalize(c)
	}
	s.centroid[e.ID] = c
	return c
}

func (s *segmenter) turn(id string) (store.Turn, bool) {
	if t, ok := s.st.turn(id); ok {
		return t, true
	}
	for _, t := range s.b.turns {
		if t.ID == id {
			return t, true
		}
	}
	return store.Turn{}, false
}

func (s *segmenter) turnVec(id string) []float32 {
	if i, ok := s.st.pos[id]; ok && s.st.turnVec.Rows() > i {
		return s.st.turnVec.Row(i)
	}
	for i, t := range s.b.turns {
		if t.ID == id && s.b.turnVecs != nil {
			return s.b.turnVecs[i]
		}
	}
	return nil
}

// similarity scores how well turn t (terms ts, vector v) fits event e:
// cosine to the centroid when vectors exist, else the share of the turn's
// terms the event already contains. It returns the score and the threshold
// pair (join, rejoin) that applies to it.
func (s *segmenter) similarity(e *store.Event, ts []string, v []float32) (sim, join, rejoin float64) {
	if c := s.eventCentroid(e); v != nil && c != nil {
		return float64(vec.Dot(v, c)), segJoinDense, segRejoinDense
	}
	if len(ts) == 0 {
		return 0, segJoinLexical, segRejoinLex
	}
	et := s.eventTerms(e)
	hit := 0
	for _, w := range ts {
		if et[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(ts)), segJoinLexical, segRejoinLex
}

// assign puts turn t into an event: the previous turn's event when t
// continues it, else the best matching older event, else a new one.
func (s *segmenter) assign(t store.Turn, v []float32) {
	ts := slices.Compact(slices.Sorted(slices.Values(textnorm.Terms(content(t)))))
	var target *store.Event
	if s.prev.ID != "" && s.prev.SessionID == t.SessionID {
		if evs := s.b.eventsOf(s.prev.ID); len(evs) > 0 {
			e := s.b.event(evs[0])
			sim, join, _ := s.similarity(e, ts, v)
			if len(e.TurnIDs) < segMaxEventSize && (len(ts) < segShortTerms || sim >= join) {
				target = e
			}
		}
	}
	if target == nil {
		best, bestSim := (*store.Event)(nil), 0.0
		for _, h := range s.st.searchEvents(content(t), v, 5, nil) {
			e := s.b.event(s.st.events[h.idx].ID)
			if len(e.TurnIDs) >= segMaxEventSize {
				continue
			}
			if sim, _, rejoin := s.similarity(e, ts, v); sim >= rejoin && sim > bestSim {
				best, bestSim = e, sim
			}
		}
		// Events created earlier in this batch are not indexed yet.
		for _, id := range s.b.order {
			if _, old := s.b.before[id]; old {
				continue
			}
			e := s.b.events[id]
			if len(e.TurnIDs) >= segMaxEventSize {
				continue
			}
			if sim, _, rejoin := s.similarity(e, ts, v); sim >= rejoin && sim > bestSim {
				best, bestSim = e, sim
			}
		}
		target = best
	}
	if target == nil {
		target = s.b.newEvent("", offlineProducer)
	}
	s.b.join(target, t)
	delete(s.centroid, target.ID)
	if et, ok := s.terms[target.ID]; ok {
		for _, w := range ts {
			et[w] = true
		}
	}
	s.prev = t
}

// summariseExtractive sets an event's keywords, title and summary from its
// members: the most frequent content words, and the most central turns.
func summariseExtractive(st *spaceState, b *batch, e *store.Event) {
	var members []store.Turn
	for _, id := range e.TurnIDs {
		if t, ok := st.turn(id); ok {
			members = append(members, t)
			continue
		}
		for _, t := range b.turns {
			if t.ID == id {
				members = append(members, t)
			}
		}
	}
	freq := map[string]int{}
	first := map[string]int{}
	display := map[string]string{}
	for _, t := range members {
		for _, w := range keywordsOf(content(t), 32) {
			k := strings.ToLower(w)
			if _, ok := first[k]; !ok {
				first[k] = len(first)
				display[k] = w
			}
			freq[k]++
		}
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range freq {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(freq[b], freq[a]); c != 0 {
			return c
		}
		return cmp.Compare(first[a], first[b])
	})
	if len(keys) > keywordsPerEvent {
		keys = keys[:keywordsPerEvent]
	}
	e.Keywords = e.Keywords[:0]
	for _, k := range keys {
		e.Keywords = append(e.Keywords, display[k])
	}
	// Centrality: how many of the event's top keywords a turn mentions.
	top := map[string]bool{}
	for _, k := range keys {
		top[k] = true
	}
	type cand struct {
		i     int
		score int
	}
	var cs []cand
	for i, t := range members {
		n := 0
		for _, w := range keywordsOf(content(t), 32) {
			if top[strings.ToLower(w)] {
				n++
			}
		}
		cs = append(cs, cand{i, n})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	if len(cs) > summaryTurns {
		cs = cs[:summaryTurns]
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(a.i, b.i) })
	var parts []string
	for _, c := range cs {
		t := members[c.i]
		parts = append(parts, t.Speaker+": "+truncate(content(t), summaryTurnMaxLen))
	}
	e.Summary = strings.Join(parts, " / ")
	speakers := slices.Clone(e.Entities)
	if len(speakers) > 2 {
		speakers = speakers[:2]
	}
	title := strings.Join(e.Keywords[:min(3, len(e.Keywords))], ", ")
	if len(speakers) > 0 {
		title = strings.Join(speakers, " & ") + ": " + title
	}
	e.Title = title
	e.Producer = offlineProducer
}

// annotateRules annotates a turn without an LLM: keywords, entities,
// resolved time expressions and a context line.
func annotateRules(t store.Turn) store.Annotation {
	text := content(t)
	a := store.Annotation{
		TurnID:   t.ID,
		Keywords: keywordsOf(text, keywordsPerTurn),
		Entities: entitiesOf(text, t.Speaker),
		Producer: offlineProducer,
	}
	if !t.OccurredAt.IsZero() {
		for _, r := range temporal.Resolve(text, t.OccurredAt) {
			a.TimeRefs = append(a.TimeRefs, store.TimeRef{
				Text: r.Text, Start: r.Start, End: r.End,
				Granularity: r.Granularity.String(), Fuzzy: r.Fuzzy,
			})
		}
	}
	ctxLine := t.Speaker
	if !t.OccurredAt.IsZero() {
		ctxLine += " on " + temporal.FormatDay(t.OccurredAt)
	}
	a.Context = ctxLine + ": " + truncate(firstSentence(text), 160)
	return a
}

// keywordsOf returns up to n distinctive words of text: no stop words, no
// short words, capitalised words first, then longer words, ties by position.
func keywordsOf(text string, n int) []string {
	type kw struct {
		w     string
		score int
		pos   int
	}
	seen := map[string]bool{}
	var ks []kw
	for i, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-'
	}) {
		w = strings.Trim(w, "'-")
		lw := strings.ToLower(w)
		if len(lw) < 3 || textnorm.IsStop(lw) || seen[lw] || fillerWords[lw] {
			continue
		}
		seen[lw] = true
		s := len(lw)
		if r := []rune(w)[0]; unicode.IsUpper(r) && i > 0 {
			s += 6
		}
		ks = append(ks, kw{w, s, i})
	}
	slices.SortStableFunc(ks, func(a, b kw) int { return cmp.Compare(b.score, a.score) })
	if len(ks) > n {
		ks = ks[:n]
	}
	slices.SortFunc(ks, func(a, b kw) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.w
	}
	return out
}

// fillerWords are chat words that are not stop words but carry no topic.
var fillerWords = map[string]bool{
	"yeah": true, "wow": true, "hey": true, "really": true, "thanks": true, "thank": true, "great": true,
	"awesome": true, "cool": true, "totally": true, "definitely": true, "glad": true, "good": true, "nice": true,
	"amazing": true, "sounds": true, "like": true, "know": true, "think": true, "also": true, "much": true,
	"lot": true, "always": true, "sure": true, "it's": true, "that's": true, "i'm": true, "you're": true,
	"i've": true, "don't": true, "can't": true, "what's": true, "let's": true,
}

var entityRE = regexp.MustCompile(`\b[A-Z][\p{L}'’-]+(?:\s+(?:of\s+|the\s+)?[A-Z][\p{L}'’-]+)*`)

// entitiesOf returns capitalised spans that are not sentence-initial stop
// words, plus the speaker, in order of appearance.
func entitiesOf(text, speaker string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(speaker)
	for _, m := range entityRE.FindAllString(text, -1) {
		m = strings.TrimRight(m, "'’-")
		if strings.HasSuffix(m, "'s") || strings.HasSuffix(m, "’s") {
			m = m[:len(m)-len("'s")]
			m = strings.TrimRight(m, "’")
		}
		lw := strings.ToLower(m)
		if textnorm.IsStop(lw) || fillerWords[lw] || len(m) < 2 || lw == "i'm" || lw == "i've" || lw == "i'll" || lw == "i'd" {
			continue
		}
		add(m)
	}
	return out
}

// firstSentence returns text up to the end of its first sentence.
func firstSentence(text string) string {
	for i, r := range text {
		if (r == '.' || r == '!' || r == '?') && i > 20 {
			return text[:i+1]
		}
	}
	return text
}

// truncate shortens s to at most n bytes on a rune boundary, adding "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n]) + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Offline retrieval tuning (see the note on the construction constants).
// The scorer is linear: a turn's own relevance is its BM25 score divided by
// the best BM25 score of the question plus offDenseWeight times its cosine
// similarity; its context score adds shares of its neighbours' relevance
// within the session (the answer to a question is usually said right after
// the turn that matches the question, and a topic spans a few turns); then
// cues multiply it. The values come from a grid search on the LoCoMo dev
// conversations (TestOfflineLoCoMo), picked from a broad plateau rather
// than at its single best point, and checked on alternate halves of the
// conversations; they are the same with and without an embedder.
const (
	offDenseWeight  = 1.0  // weight of cosine similarity next to max-normalised BM25
	offPrev         = 0.25 // share of the previous turn's relevance a turn receives
	offPrevQuestion = 0.7  // the same when the previous turn asks a question (this turn answers it)
	offNext         = 0.35 // share of the next turn's relevance (a reply echoes what it answers)
	offNextQuestion = 0.5  // the same when the next turn asks a question (a follow-up about this turn)
	offFar          = 0.3  // share of the relevance of each turn two away
	offEventShare   = 0.0  // share of the best relevance in the turn's event
	offSpeakerBump  = 1.15 // factor for turns said by a speaker the question names
	offTimeBump     = 1.0  // factor for turns that mention a time, on "when" questions
	offKeepRatio    = 0.6  // after offMinK turns, keep those scoring at least this share of the best
	offMinK         = 6
	offMaxK         = 9
	offPredictMax   = 3 // turns selected inside one candidate event (trace stage "predicted")
)

// offlineTuning holds the retrieval weights of offline mode. The engine
// always uses defaultOfflineTuning; the type exists so that the scorer can
// be unit-tested and swept in measurements without changing the constants.
type offlineTuning struct {
	DenseWeight                                  float64
	Prev, PrevQuestion, Next, NextQuestion, Far  float64
	EventShare, SpeakerBump, TimeBump, KeepRatio float64
	MinK, MaxK                                   int
}

// defaultOfflineTuning returns the tuning made of the constants above.
func defaultOfflineTuning() offlineTuning {
	return offlineTuning{
		DenseWeight: offDenseWeight, Prev: offPrev, PrevQuestion: offPrevQuestion,
		Next: offNext, NextQuestion: offNextQuestion, Far: offFar, EventShare: offEventShare,
		SpeakerBump: offSpeakerBump, TimeBump: offTimeBump, KeepRatio: offKeepRatio,
		MinK: offMinK, MaxK: offMaxK,
	}
}

// turnFeatures describes every turn of a space for one question, indexed
// like spaceState.turns.
type turnFeatures struct {
	// lex is the BM25 score (0 when the turn shares no term with the
	// question); dense is the cosine similarity, nil without vectors.
	lex, dense []float64
	// visible is false for turns the retrieval must not see (as-of).
	visible []bool
	// sameSession[i] is true when turn i belongs to the session of turn
	// i-1 (sameSession[0] is false).
	sameSession []bool
	// question marks turns that ask something (their text has a "?").
	question []bool
	// event is the index of the turn's first event, -1 when none.
	event []int
	// speaker marks turns said by someone the question names; dated marks
	// turns that mention a time when the question asks about time.
	speaker, dated []bool
}

// relevance returns each turn's own relevance: normalised BM25 plus the
// weighted cosine (negative cosines count as 0). Invisible turns get 0.
func (tu offlineTuning) relevance(f *turnFeatures) []float64 {
	n := len(f.lex)
	maxLex := 0.0
	for i, v := range f.lex {
		if f.visible[i] {
			maxLex = max(maxLex, v)
		}
	}
	rel := make([]float64, n)
	for i := range n {
		if !f.visible[i] {
			continue
		}
		if maxLex > 0 {
			rel[i] = f.lex[i] / maxLex
		}
		if f.dense != nil {
			rel[i] += tu.DenseWeight * max(f.dense[i], 0)
		}
	}
	return rel
}

// score returns each turn's context score: its relevance plus shares of its
// neighbours' relevance within the session (larger from a question just
// before it or just after it) and of the best relevance in its
// event, times the speaker and time cues. Invisible turns score 0.
func (tu offlineTuning) score(f *turnFeatures, rel []float64) []float64 {
	n := len(rel)
	// within(i, d) reports whether turn i+d is in turn i's session.
	within := func(i, d int) bool {
		j := i + d
		if j < 0 || j >= n {
			return false
		}
		for k := min(i, j) + 1; k <= max(i, j); k++ {
			if !f.sameSession[k] {
				return false
			}
		}
		return true
	}
	at := func(i, d int) float64 {
		if !within(i, d) {
			return 0
		}
		return rel[i+d]
	}
	var best map[int]float64
	if tu.EventShare != 0 && f.event != nil {
		best = map[int]float64{}
		for i, e := range f.event {
			if e >= 0 {
				best[e] = max(best[e], rel[i])
			}
		}
	}
	out := make([]float64, n)
	for i := range n {
		if !f.visible[i] {
			continue
		}
		prev, next := tu.Prev, tu.Next
		if i > 0 && f.question[i-1] {
			prev = tu.PrevQuestion
		}
		if i+1 < n && f.question[i+1] {
			next = tu.NextQuestion
		}
		s := rel[i] + prev*at(i, -1) + next*at(i, 1) + tu.Far*(at(i, -2)+at(i, 2))
		if best != nil && f.event[i] >= 0 {
			s += tu.EventShare * best[f.event[i]]
		}
		if f.speaker != nil && f.speaker[i] {
			s *= tu.SpeakerBump
		}
		if f.dated != nil && f.dated[i] {
			s *= tu.TimeBump
		}
		out[i] = s
	}
	return out
}

// rank returns the indexes of the turns with a positive score, best first
// (ties by index).
func rank(scores []float64) []int {
	var idx []int
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// cut returns how many of the ranked turns to keep: at least MinK (when
// there are that many), at most MaxK, and beyond MinK only those scoring at
// least KeepRatio of the best.
func (tu offlineTuning) cut(ranked []int, scores []float64) int {
	n := 0
	for n < len(ranked) && n < tu.MaxK {
		if n >= tu.MinK && scores[ranked[n]] < tu.KeepRatio*scores[ranked[0]] {
			break
		}
		n++
	}
	return n
}

// offlineFeatures computes the features of every turn for a question.
// Caller holds st.mu.
func (q *query) offlineFeatures() *turnFeatures {
	st := q.st
	n := len(st.turns)
	f := &turnFeatures{
		lex:         make([]float64, n),
		visible:     make([]bool, n),
		sameSession: make([]bool, n),
		question:    make([]bool, n),
		event:       make([]int, n),
	}
	for id, s := range st.turnLex.Scores(q.search) {
		if i, ok := st.pos[id]; ok {
			f.lex[i] = s
		}
	}
	if q.qv != nil && st.turnVec.Rows() == n {
		f.dense = make([]float64, n)
		for i, s := range st.turnVec.Scores(q.qv) {
			f.dense[i] = float64(s)
		}
	}
	speakers := questionSpeakers(st, q.info.Entities)
	if len(speakers) > 0 {
		f.speaker = make([]bool, n)
	}
	if q.info.Temporal {
		f.dated = make([]bool, n)
	}
	for i, t := range st.turns {
		f.visible[i] = q.keepTurn == nil || q.keepTurn(i)
		f.sameSession[i] = i > 0 && st.turns[i-1].SessionID == t.SessionID
		f.question[i] = strings.Contains(t.Text, "?")
		f.event[i] = -1
		if evs := st.eventsOf[t.ID]; len(evs) > 0 {
			if e, ok := st.evPos[evs[0]]; ok {
				f.event[i] = e
			}
		}
		if f.speaker != nil {
			f.speaker[i] = speakers[strings.ToLower(t.Speaker)]
		}
		if f.dated != nil {
			f.dated[i] = len(st.ann[t.ID].TimeRefs) > 0
		}
	}
	return f
}

// questionSpeakers returns the lower-cased speakers of the space that the
// question names, by full name or by first name.
func questionSpeakers(st *spaceState, entities []string) map[string]bool {
	if len(entities) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, e := range entities {
		names[strings.ToLower(e)] = true
	}
	out := map[string]bool{}
	for _, t := range st.turns {
		sp := strings.ToLower(t.Speaker)
		if sp == "" || out[sp] {
			continue
		}
		first, _, _ := strings.Cut(sp, " ")
		if names[sp] || names[first] {
			out[sp] = true
		}
	}
	return out
}

// retrieveOffline selects turns without an LLM. Every turn gets a relevance
// (BM25 fused with dense similarity by a normalised sum) and a context score
// (relevance plus its neighbours' and its event's, times speaker and time
// cues); the best turns are kept down to where scores fall off. The trace
// records the hybrid search ("search"), the events holding the best turns
// ("events"), the best turns inside each of those events ("predicted") and
// the selection ("final").
func (m *Memory) retrieveOffline(q *query) {
	m.selectOffline(q, defaultOfflineTuning())
}

// selectOffline runs offline retrieval with the given tuning.
func (m *Memory) selectOffline(q *query, tu offlineTuning) {
	st := q.st
	f := q.offlineFeatures()
	rel := tu.relevance(f)
	scores := tu.score(f, rel)

	byRel := rank(rel)
	search := make([]string, 0, q.ro.KTurn)
	for _, i := range byRel[:min(len(byRel), q.ro.KTurn)] {
		search = append(search, st.turns[i].ID)
	}
	q.stage("search", search)

	ranked := rank(scores)
	// Events in the order of their best member; per event, its best
	// members.
	var events, predicted []string
	perEvent := map[int]int{}
	for _, i := range ranked {
		e := f.event[i]
		if e < 0 {
			continue
		}
		if _, seen := perEvent[e]; !seen {
			if len(events) == q.ro.KEvent {
				continue
			}
			events = append(events, st.events[e].ID)
		}
		if perEvent[e] < offPredictMax && scores[i] >= tu.KeepRatio*scores[ranked[0]] {
			predicted = append(predicted, st.turns[i].ID)
		}
		perEvent[e]++
	}
	q.stage("events", events)
	q.stage("predicted", predicted)

	inSearch := map[string]bool{}
	for _, id := range search {
		inSearch[id] = true
	}
	for _, i := range ranked[:tu.cut(ranked, scores)] {
		src := "neighbour"
		switch id := st.turns[i].ID; {
		case inSearch[id]:
			src = "search"
		case slices.Contains(predicted, id):
			src = "event"
		}
		q.addCand(st.turns[i].ID, src, scores[i])
	}
}
