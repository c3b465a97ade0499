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
const (
	offPool        = 30   // turns ranked by hybrid search
	offEventWeight = 0.6  // weight of support from a matching event
	offNeighbour   = 0.25 // share of a strong hit's score given to its neighbours
	offNeighbourOf = 3    // how many top hits lend score to neighbours
	offSpeakerBump = 1.1  // factor when the question names the turn's speaker
	offTimeBump    = 1.1  // factor for dated turns on temporal questions
	offKeepRatio   = 0.45 // keep turns scoring at least this share of the best
	offMinK        = 3
	offMaxK        = 8
)

// retrieveOffline selects turns without an LLM: hybrid search, support from
// the best matching events, neighbours of strong hits, and an adaptive cut
// where scores fall off.
func (m *Memory) retrieveOffline(q *query) {
	st := q.st
	_, events := q.searchStage()
	score := map[int]float64{}
	source := map[int]string{}
	pool := st.searchTurns(q.search, q.qv, offPool, q.keepTurn)
	if len(pool) > 0 {
		top := pool[0].score
		for _, h := range pool {
			score[h.idx] = h.score / top
			source[h.idx] = "search"
		}
	}
	lex := st.turnLex.Scores(q.search)
	maxLex := 0.0
	for _, v := range lex {
		maxLex = max(maxLex, v)
	}
	var predicted []string
	if maxLex > 0 {
		for r, h := range events {
			w := offEventWeight / float64(1+r)
			for _, id := range st.events[h.idx].TurnIDs {
				i, ok := st.pos[id]
				if !ok || lex[id] == 0 || (q.keepTurn != nil && !q.keepTurn(i)) {
					continue
				}
				add := w * lex[id] / maxLex
				if _, seen := score[i]; !seen {
					source[i] = "event"
					predicted = append(predicted, id)
				}
				score[i] += add
			}
		}
	}
	q.stage("predicted", predicted)
	for n, h := range pool {
		if n == offNeighbourOf {
			break
		}
		t := st.turns[h.idx]
		for _, j := range []int{h.idx - 1, h.idx + 1} {
			if j < 0 || j >= len(st.turns) || st.turns[j].SessionID != t.SessionID || (q.keepTurn != nil && !q.keepTurn(j)) {
				continue
			}
			if _, seen := score[j]; !seen {
				source[j] = "neighbour"
			}
			score[j] += offNeighbour * score[h.idx]
		}
	}
	for i := range score {
		t := st.turns[i]
		if slices.ContainsFunc(q.info.Entities, func(e string) bool { return strings.EqualFold(e, t.Speaker) }) {
			score[i] *= offSpeakerBump
		}
		if q.info.Temporal && len(st.ann[t.ID].TimeRefs) > 0 {
			score[i] *= offTimeBump
		}
	}
	ranked := make([]scored, 0, len(score))
	for i, s := range score {
		ranked = append(ranked, scored{i, s})
	}
	sortScored(ranked)
	for n, h := range ranked {
		if n >= offMaxK || (n >= offMinK && h.score < offKeepRatio*ranked[0].score) {
			break
		}
		q.addCand(st.turns[h.idx].ID, source[h.idx], h.score)
	}
}
