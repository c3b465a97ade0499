package higmem

import (
	"cmp"
	"context"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Offline tuning. Every threshold of the no-LLM pipeline lives here, so that
// a retune is one diff. They were chosen on the LoCoMo dev conversations
// only, with rules that do not depend on that data (turn order, sessions,
// question marks, speaker names, time expressions, numbers); BENCHMARKS.md
// ("Offline retrieval on LoCoMo dev") gives the measurements.
const (
	// offlineProducer marks records made without an LLM.
	offlineProducer = "offline:o1"

	// Segmentation (incremental, one turn at a time): a turn continues the
	// open event of its session while that event is young, when the turn
	// is short (a reply such as "Wow, cool!"), or when it is similar to the
	// event's last few turns; otherwise, unless it opens a session, it
	// rejoins a clearly matching older event, else it opens a new one. The
	// similarity thresholds sit near the 15th percentile of the similarity
	// between consecutive turns of a LoCoMo dev session (a topic shift
	// about every seven turns); the rejoin thresholds are far stricter, so
	// that only a topic taken up again joins an older event. Retrieval
	// hardly depends on them (BENCHMARKS.md); they were set for events of a
	// useful size.
	segShortTerms   = 4    // turns with fewer content terms always continue
	segMinEventSize = 3    // an open event takes turns until it has this many
	segMaxEventSize = 16   // an event this long takes no more turns
	segWindow       = 4    // how many of the event's last turns a new turn is compared with
	segJoinDense    = 0.65 // cosine(turn, mean of the window) to continue
	segJoinLexical  = 0.14 // share of the turn's terms found in the window
	segRejoinDense  = 0.80 // cosine(turn, event centroid) to rejoin an older event
	segRejoinLex    = 0.60 // share of the turn's terms found in an older event

	// Retrieval. The scorer is linear: a turn's own relevance is its BM25
	// score divided by the question's best BM25 score, plus offDenseWeight
	// times its cosine similarity centred on the mean over the space and
	// scaled so that the best turn gets 1; its context score adds shares of
	// its neighbours' relevance within the session (the answer to a
	// question is usually said right after the turn that matches the
	// question, and a topic spans a few turns) and of its event's best
	// relevance; then cues multiply it. The values come from grid searches
	// on the LoCoMo dev conversations (TestOfflineLoCoMoSweep), picked on a
	// broad plateau that is good with and without an embedder and holds on
	// alternate halves of the conversations.
	offDenseWeight  = 0.3  // weight of the centred cosine next to max-normalised BM25
	offPrev         = 0.25 // share of the previous turn's relevance a turn receives
	offPrevQuestion = 0.7  // the same when the previous turn asks a question (this turn answers it)
	offNext         = 0.35 // share of the next turn's relevance (a reply echoes what it answers)
	offNextQuestion = 0.5  // the same when the next turn asks a question (a follow-up about this turn)
	offFar          = 0.3  // share of the relevance of each turn two away
	offEventShare   = 0.2  // share of the best relevance in the turn's event
	offSpeakerBump  = 1.15 // factor for turns said by a speaker the question names
	offTimeBump     = 1.25 // factor for turns that mention a time, on questions asking for a time
	offCountBump    = 1.2  // factor for turns with a number, on "how many" questions
	offKeepRatio    = 0.55 // after offMinK turns, keep those scoring at least this share of the best
	offMinK         = 6
	offMaxK         = 10
	offPredictMax   = 3 // turns selected inside one candidate event (trace stage "predicted")

	// Keywords and summaries.
	keywordsPerTurn   = 8
	keywordsPerEvent  = 10
	summaryTurns      = 2
	summaryTurnMaxLen = 200
)

// buildOffline annotates turns by rules and groups them into events by
// similarity, then commits the batch.
func (m *Memory) buildOffline(ctx context.Context, st *spaceState, turns []store.Turn, res *AddResult) error {
	b := newBatch(st, turns, m.now().UTC())
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
	// centroid and terms describe whole events (for rejoining), cached
	// until the event changes.
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

// termsOf returns the content terms of the given turns.
func (s *segmenter) termsOf(ids []string) map[string]bool {
	ts := map[string]bool{}
	for _, id := range ids {
		if t, ok := s.turn(id); ok {
			for _, w := range textnorm.Terms(content(t)) {
				ts[w] = true
			}
		}
	}
	return ts
}

// centroidOf returns the normalised mean vector of the given turns, nil
// when none has a vector.
func (s *segmenter) centroidOf(ids []string) []float32 {
	var c []float32
	for _, id := range ids {
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
	return c
}

// eventTerms returns the content terms of an event's members.
func (s *segmenter) eventTerms(e *store.Event) map[string]bool {
	if ts, ok := s.terms[e.ID]; ok {
		return ts
	}
	ts := s.termsOf(e.TurnIDs)
	s.terms[e.ID] = ts
	return ts
}

// eventCentroid returns the normalised mean vector of an event's members.
func (s *segmenter) eventCentroid(e *store.Event) []float32 {
	if c, ok := s.centroid[e.ID]; ok {
		return c
	}
	c := s.centroidOf(e.TurnIDs)
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

// similarity scores how well a turn (terms ts, vector v) fits a group of
// turns (centroid c, terms gt): the cosine when both vectors exist, else
// the share of the turn's terms the group contains. dense reports which.
func similarity(ts []string, v []float32, gt map[string]bool, c []float32) (sim float64, dense bool) {
	if v != nil && c != nil {
		return float64(vec.Dot(v, c)), true
	}
	if len(ts) == 0 {
		return 0, false
	}
	hit := 0
	for _, w := range ts {
		if gt[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(ts)), false
}

// continues reports whether turn t (terms ts, vector v) continues the open
// event e.
func (s *segmenter) continues(e *store.Event, ts []string, v []float32) bool {
	n := len(e.TurnIDs)
	switch {
	case n >= segMaxEventSize:
		return false
	case n < segMinEventSize || len(ts) < segShortTerms:
		return true
	}
	win := e.TurnIDs[n-min(n, segWindow):]
	var c []float32
	if v != nil {
		c = s.centroidOf(win)
	}
	sim, dense := similarity(ts, v, s.termsOf(win), c)
	if dense {
		return sim >= segJoinDense
	}
	return sim >= segJoinLexical
}

// rejoinScore returns how well a turn fits an older event, or 0 when it
// is below the rejoin threshold.
func (s *segmenter) rejoinScore(e *store.Event, ts []string, v []float32) float64 {
	if len(e.TurnIDs) >= segMaxEventSize {
		return 0
	}
	var c []float32
	if v != nil {
		c = s.eventCentroid(e)
	}
	sim, dense := similarity(ts, v, s.eventTerms(e), c)
	if dense && sim < segRejoinDense || !dense && sim < segRejoinLex {
		return 0
	}
	return sim
}

// assign puts turn t into an event: the open event of its session when t
// continues it, else the best matching older event, else a new one.
func (s *segmenter) assign(t store.Turn, v []float32) {
	ts := slices.Compact(slices.Sorted(slices.Values(textnorm.Terms(content(t)))))
	var target, open *store.Event
	if s.prev.ID != "" && s.prev.SessionID == t.SessionID {
		if evs := s.b.eventsOf(s.prev.ID); len(evs) > 0 {
			open = s.b.event(evs[0])
			if s.continues(open, ts, v) {
				target = open
			}
		}
	}
	// A session opens with a new event (its first turns are greetings,
	// which resemble every other greeting); later topic shifts may rejoin
	// an older event.
	if target == nil && open != nil && len(ts) >= segShortTerms {
		best, bestSim := (*store.Event)(nil), 0.0
		consider := func(e *store.Event) {
			if e == nil || e == open {
				return
			}
			if sim := s.rejoinScore(e, ts, v); sim > bestSim {
				best, bestSim = e, sim
			}
		}
		for _, h := range s.st.searchEvents(content(t), v, 5, nil) {
			consider(s.b.event(s.st.events[h.idx].ID))
		}
		// Events created earlier in this batch are not indexed yet.
		for _, id := range s.b.order {
			if _, old := s.b.before[id]; !old {
				consider(s.b.events[id])
			}
		}
		target = best
	}
	if target == nil {
		target = s.b.newEvent("", offlineProducer)
	}
	s.b.join(target, t)
	delete(s.centroid, target.ID)
	delete(s.terms, target.ID)
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
	// Speakers are the event's entities, not its topic.
	names := nameSet(e.Entities...)
	freq := map[string]int{}
	first := map[string]int{}
	display := map[string]string{}
	for _, t := range members {
		for _, w := range keywordsOf(topicText(t), 32, names) {
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
		for _, w := range keywordsOf(topicText(t), 32, names) {
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
		Keywords: keywordsOf(topicText(t), keywordsPerTurn, nameSet(t.Speaker)),
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

// keywordsOf returns up to n distinctive words of text, in order of
// appearance: no stop words, filler words, words shorter than three letters
// or words in exclude (lower-case); capitalised words that do not start a
// sentence rank first, then longer words, ties by position.
func keywordsOf(text string, n int, exclude map[string]bool) []string {
	type kw struct {
		w     string
		score int
		pos   int
	}
	seen := map[string]bool{}
	var ks []kw
	sentenceStart := true
	pos := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			if r == '.' || r == '!' || r == '?' || r == '[' || r == ':' || r == '"' || r == '\n' {
				sentenceStart = true
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += size
		}
		w := strings.Trim(text[i:j], "'’-")
		start := sentenceStart
		sentenceStart = false
		i = j
		pos++
		lw := strings.ToLower(w)
		if utf8.RuneCountInString(lw) < 3 || textnorm.IsStop(lw) || seen[lw] || fillerWords[lw] || exclude[lw] {
			continue
		}
		seen[lw] = true
		s := utf8.RuneCountInString(lw)
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && !start {
			s += 6
		}
		ks = append(ks, kw{w, s, pos})
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

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == '-'
}

// topicText is the text keywords of a turn come from: its words, then the
// captions of its attachments without the words that only name the medium
// ("a photo of ...").
func topicText(t store.Turn) string {
	var b strings.Builder
	b.WriteString(t.Text)
	for _, a := range t.Attachments {
		if a.Caption == "" {
			continue
		}
		b.WriteString("\n")
		for _, w := range strings.Fields(a.Caption) {
			if !mediumWords[strings.ToLower(strings.Trim(w, ".,;:!?"))] {
				b.WriteString(w)
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// mediumWords name the kind of an attachment rather than what it shows.
var mediumWords = map[string]bool{
	"photo": true, "photograph": true, "photography": true, "picture": true, "image": true, "pic": true,
	"screenshot": true, "close": true, "closeup": true,
}

// nameSet returns the lower-cased names, each also by its first word.
func nameSet(names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		out[n] = true
		first, _, _ := strings.Cut(n, " ")
		out[first] = true
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
	"since": true, "last": true, "got": true, "get": true, "made": true, "make": true, "time": true,
	"thing": true, "things": true, "going": true, "feel": true, "feels": true, "lately": true,
	"recently": true, "still": true, "well": true, "yes": true, "maybe": true, "right": true,
	"pretty": true, "kind": true, "even": true, "something": true, "anything": true,
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

// offlineTuning holds the retrieval weights of offline mode. The engine
// always uses defaultOfflineTuning; the type exists so that the scorer can
// be unit-tested and swept in measurements without changing the constants.
type offlineTuning struct {
	DenseWeight                                  float64
	Prev, PrevQuestion, Next, NextQuestion, Far  float64
	EventShare, SpeakerBump, TimeBump, CountBump float64
	KeepRatio                                    float64
	MinK, MaxK                                   int
}

// defaultOfflineTuning returns the tuning made of the constants above.
func defaultOfflineTuning() offlineTuning {
	return offlineTuning{
		DenseWeight: offDenseWeight, Prev: offPrev, PrevQuestion: offPrevQuestion,
		Next: offNext, NextQuestion: offNextQuestion, Far: offFar, EventShare: offEventShare,
		SpeakerBump: offSpeakerBump, TimeBump: offTimeBump, CountBump: offCountBump, KeepRatio: offKeepRatio,
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
	// turns that mention a time when the question asks for a time; counted
	// marks turns with a number when the question asks how many. Each is
	// nil when the question has no such cue.
	speaker, dated, counted []bool
	// mean, when meanSet, is the mean cosine over the visible turns, given
	// rather than computed from dense (see offlineSumMean).
	mean    float64
	meanSet bool
}

// relevance returns each turn's own relevance: normalised BM25 plus the
// weighted cosine (negative cosines count as 0). Invisible turns get 0.
func (tu offlineTuning) relevance(f *turnFeatures) []float64 {
	return tu.relevanceInto(f, make([]float64, len(f.lex)))
}

// relevanceInto is relevance writing into rel (of length len(f.lex)).
func (tu offlineTuning) relevanceInto(f *turnFeatures, rel []float64) []float64 {
	maxLex := 0.0
	for i, v := range f.lex {
		if f.visible[i] {
			maxLex = max(maxLex, v)
		}
	}
	for i := range rel {
		rel[i] = 0
		if f.visible[i] && maxLex > 0 {
			rel[i] = f.lex[i] / maxLex
		}
	}
	if f.dense == nil {
		return rel
	}
	// Cosines of unrelated texts are far from 0 and their spread varies by
	// question, so the dense part is centred on the mean over visible
	// turns and scaled so that the best turn gets 1, like BM25.
	mean, maxD, cnt := 0.0, math.Inf(-1), 0
	for i, d := range f.dense {
		if f.visible[i] {
			mean += d
			maxD = max(maxD, d)
			cnt++
		}
	}
	if cnt == 0 {
		return rel
	}
	mean /= float64(cnt)
	if f.meanSet {
		mean = f.mean
	}
	if !(maxD > mean) {
		return rel
	}
	for i, d := range f.dense {
		if f.visible[i] && d > mean {
			rel[i] += tu.DenseWeight * max(d-mean, 0) / (maxD - mean)
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
	var best []float64
	if tu.EventShare != 0 && f.event != nil {
		ne := 0
		for _, e := range f.event {
			ne = max(ne, e+1)
		}
		best = make([]float64, ne)
	}
	return tu.scoreInto(f, rel, make([]float64, n), best)
}

// scoreInto is score writing into out (of length len(rel)); best is
// scratch space for the best relevance per event, with room for every
// event index in f.event (nil when EventShare is 0 or f.event is nil).
func (tu offlineTuning) scoreInto(f *turnFeatures, rel, out, best []float64) []float64 {
	eventBest(f, rel, best)
	tu.scoreRange(f, rel, out, best, 0, len(rel))
	return out
}

// eventBest sets best[e] to the best relevance among the turns whose first
// event is e (0 when none); nil best is left alone.
func eventBest(f *turnFeatures, rel, best []float64) {
	if best == nil {
		return
	}
	clear(best)
	for i, e := range f.event {
		if e >= 0 {
			best[e] = max(best[e], rel[i])
		}
	}
}

// scoreRange is scoreInto for the turns lo to hi-1, with best already
// computed by eventBest. It returns the index of the best score written
// (lo when none is positive).
func (tu offlineTuning) scoreRange(f *turnFeatures, rel, out, best []float64, lo, hi int) (arg int) {
	n := len(rel)
	ss := f.sameSession[:n]
	vis := f.visible[:n]
	q := f.question[:n]
	arg = lo
	for i := lo; i < hi; i++ {
		out[i] = 0
		if !vis[i] {
			continue
		}
		// Neighbours count only within the turn's session.
		var p1, p2, n1, n2 float64
		if i >= 1 && ss[i] {
			p1 = rel[i-1]
			if i >= 2 && ss[i-1] {
				p2 = rel[i-2]
			}
		}
		if i+1 < n && ss[i+1] {
			n1 = rel[i+1]
			if i+2 < n && ss[i+2] {
				n2 = rel[i+2]
			}
		}
		r := rel[i]
		var b float64
		hasBest := best != nil && f.event[i] >= 0
		if hasBest {
			b = best[f.event[i]]
		}
		if r == 0 && p1 == 0 && p2 == 0 && n1 == 0 && n2 == 0 && b == 0 {
			continue // every term is 0, and so is the score
		}
		// scoreAt, inlined (this loop runs over every turn).
		prev, next := tu.Prev, tu.Next
		if i > 0 && q[i-1] {
			prev = tu.PrevQuestion
		}
		if i+1 < n && q[i+1] {
			next = tu.NextQuestion
		}
		s := r + prev*p1 + next*n1 + tu.Far*(p2+n2)
		if hasBest {
			s += tu.EventShare * b
		}
		if f.speaker != nil && f.speaker[i] {
			s *= tu.SpeakerBump
		}
		if f.dated != nil && f.dated[i] {
			s *= tu.TimeBump
		}
		if f.counted != nil && f.counted[i] {
			s *= tu.CountBump
		}
		out[i] = s
		if s > out[arg] {
			arg = i
		}
	}
	return arg
}

// scoreAt is the context score of visible turn i from its relevance r, the
// relevance of the turns one (p1, n1) and two (p2, n2) before and after it
// within its session (0 outside), and the best relevance b of its event
// (when hasBest).
func (tu offlineTuning) scoreAt(f *turnFeatures, i int, r, p1, p2, n1, n2, b float64, hasBest bool) float64 {
	n := len(f.question)
	prev, next := tu.Prev, tu.Next
	if i > 0 && f.question[i-1] {
		prev = tu.PrevQuestion
	}
	if i+1 < n && f.question[i+1] {
		next = tu.NextQuestion
	}
	s := r + prev*p1 + next*n1 + tu.Far*(p2+n2)
	if hasBest {
		s += tu.EventShare * b
	}
	if f.speaker != nil && f.speaker[i] {
		s *= tu.SpeakerBump
	}
	if f.dated != nil && f.dated[i] {
		s *= tu.TimeBump
	}
	if f.counted != nil && f.counted[i] {
		s *= tu.CountBump
	}
	return s
}

// rank returns the indexes of the turns with a positive score, best first
// (ties by index). Retrieval needs only the top of this order (topRanked,
// offlineEvents); the full order serves the tuning sweeps and the tests.
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

// offlineFeatures computes the features of every turn for a question, in
// slices of its own. Caller holds st.mu.
func (q *query) offlineFeatures() *turnFeatures {
	f := q.featuresIn(&scratch{}, true)
	f.lex = slices.Clone(f.lex)
	f.visible = slices.Clone(f.visible)
	f.sameSession = slices.Clone(f.sameSession)
	f.question = slices.Clone(f.question)
	f.event = slices.Clone(f.event)
	f.dated = slices.Clone(f.dated)
	f.counted = slices.Clone(f.counted)
	return f
}

// featuresIn computes the features of every turn for a question. The
// per-question slices live in sc (lex in sc.lex); the others are the
// space's own turnInfo slices, valid while the caller holds st.mu and never
// to be written.
func (q *query) featuresIn(sc *scratch, dense bool) *turnFeatures {
	st := q.st
	n := len(st.turns)
	f := &turnFeatures{
		sameSession: st.info.sameSession[:n],
		question:    st.info.question[:n],
		event:       st.info.event[:n],
		visible:     st.info.visible[:n],
	}
	if q.sc == sc {
		f.lex, _ = q.turnLexScores()
	} else {
		f.lex, _ = sc.lexScores(st.turnLex, n, q.search)
	}
	if q.sumMean() {
		f.mean, f.meanSet = st.turnVec.MeanDot(q.qv), true
	}
	if dense && q.qv != nil && st.turnVec.Rows() == n {
		sc.dense = grow(sc.dense, n)
		st.turnVec.ScoresInto(sc.dense, q.qv)
		sc.dense64 = grow(sc.dense64, n)
		f.dense = sc.dense64
		for i, s := range sc.dense {
			f.dense[i] = float64(s)
		}
	}
	if q.keepTurn != nil {
		sc.visible = grow(sc.visible, n)
		f.visible = sc.visible
		for i := range n {
			f.visible[i] = q.keepTurn(i)
		}
	}
	if speakers := questionSpeakers(st, q.info.Entities); len(speakers) > 0 {
		named := make([]bool, len(st.info.speakers))
		for id, sp := range st.info.speakers {
			named[id] = speakers[sp]
		}
		sc.speaker = grow(sc.speaker, n)
		f.speaker = sc.speaker
		for i, id := range st.info.speaker[:n] {
			f.speaker[i] = named[id]
		}
	}
	intent := temporal.AnalyzeQuestion(q.question)
	if intent.AsksTime() {
		if err := st.ensureAnnotations(q.ctx); err != nil {
			q.err = err
		}
		f.dated = st.info.dated[:n]
	}
	if asksCount(q.question) || intent.Kind == temporal.IntentFrequency {
		f.counted = st.info.number[:n]
	}
	return f
}

// asksCount reports whether a question asks for a number ("how many",
// "how much").
func asksCount(question string) bool {
	toks := textnorm.Tokens(question)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] == "how" && (toks[i+1] == "many" || toks[i+1] == "much") {
			return true
		}
	}
	return false
}

// numberWords are the spelled-out numbers hasNumber recognises.
var numberWords = map[string]bool{
	"one": true, "two": true, "three": true, "four": true, "five": true, "six": true, "seven": true,
	"eight": true, "nine": true, "ten": true, "eleven": true, "twelve": true, "twenty": true,
	"dozen": true, "hundred": true, "thousand": true, "once": true, "twice": true, "thrice": true,
	"first": true, "second": true, "third": true, "several": true, "couple": true,
}

// hasNumber reports whether text mentions a number, in digits or in words.
func hasNumber(text string) bool {
	for w := range textnorm.TokensSeq(text) {
		if numberWords[w] || strings.ContainsAny(w, "0123456789") {
			return true
		}
	}
	return false
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
	for _, sp := range st.info.speakers {
		if sp == "" {
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
	sc := q.sc
	if sc == nil {
		sc = st.getScratch()
		defer st.putScratch(sc)
		q.sc = sc
		defer func() { q.sc = nil }()
	}
	var f *turnFeatures
	var rel, scores []float64
	// Rows whose rel (scores) may be non-zero; nil for all.
	var relIdx, scoreIdx []int
	ok := false
	if q.sumMean() && !st.limits.noOfflineFast {
		f, rel, scores, relIdx, scoreIdx, ok = q.offlineFast(tu, sc)
		if ok {
			defer func() {
				for _, i := range relIdx {
					rel[i] = 0
				}
				for _, i := range scoreIdx {
					scores[i] = 0
				}
			}()
		}
	}
	if !ok {
		f = q.featuresIn(sc, true)
		n := len(f.lex)
		sc.rel = grow(sc.rel, n)
		rel = tu.relevanceInto(f, sc.rel)
		sc.scores = grow(sc.scores, n)
		var best []float64
		if tu.EventShare != 0 {
			sc.best = grow(sc.best, len(st.events))
			best = sc.best
		}
		scores = tu.scoreInto(f, rel, sc.scores, best)
	}

	byRel := topRankedIn(rel, relIdx, q.ro.KTurn)
	search := make([]string, 0, len(byRel))
	for _, i := range byRel {
		search = append(search, st.turns[i].ID)
	}
	q.stage("search", search)

	// Events in the order of their best member; per event, its best
	// members.
	events, predicted := offlineEvents(q, f, tu, scores, scoreIdx)
	ranked := topRankedIn(scores, scoreIdx, tu.MaxK)
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

// sumMean reports whether the question's centred cosine uses the mean from
// the matrix's sum of rows (see limits.offlineFastRows). Caller holds st.mu.
func (q *query) sumMean() bool {
	st := q.st
	n := len(st.turns)
	return q.keepTurn == nil && q.qv != nil && n >= st.limits.offlineFastRows && st.turnVec.Rows() == n && st.turnVec.Quantized()
}

// offlineFast computes the features, relevance and context scores of an
// unfiltered question on a large space from estimated cosines (int8 scan,
// with error bounds), computing exact cosines only for the turns that can
// matter. It returns exact relevance for every turn that could be among the
// KTurn most relevant and exact scores for every turn that scores at least
// KeepRatio of the best (and 0 elsewhere), which is all that selectOffline
// reads: the outcome is the exact computation's, bit for bit. ok is false
// when that cannot be guaranteed cheaply (too few turns above the keep
// ratio, or a tuning that is not monotone); the caller then computes every
// score exactly.
func (q *query) offlineFast(tu offlineTuning, sc *scratch) (f *turnFeatures, rel, scores []float64, relIdx, scoreIdx []int, ok bool) {
	if tu.DenseWeight < 0 || tu.Prev < 0 || tu.PrevQuestion < 0 || tu.Next < 0 || tu.NextQuestion < 0 ||
		tu.Far < 0 || tu.EventShare < 0 || !(tu.SpeakerBump > 0) || !(tu.TimeBump > 0) || !(tu.CountBump > 0) ||
		!(tu.KeepRatio > 0) || q.ro.KEvent < 0 || q.ro.KTurn <= 0 {
		return nil, nil, nil, nil, nil, false
	}
	st := q.st
	n := len(st.turns)
	mat := &st.turnVec
	sc.est, sc.bound = grow(sc.est, n), grow(sc.bound, n)
	est, bound := sc.est, sc.bound
	// The estimates and the BM25 scores (in featuresIn) are independent:
	// compute them at once.
	var maxLo float64
	estimated := make(chan struct{})
	go func() {
		defer close(estimated)
		maxLo = mat.Estimate(q.qv, est, bound)
	}()
	f = q.featuresIn(sc, false)
	<-estimated

	// Exact cosines on demand; known stays all false between questions.
	sc.exact = grow(sc.exact, n)
	if len(sc.known) < n {
		sc.known = make([]bool, n+n/4)
	}
	defer func() {
		for _, i := range sc.cand {
			sc.known[i] = false
		}
		sc.cand = sc.cand[:0]
	}()
	cos := func(i int) float64 {
		if !sc.known[i] {
			sc.exact[i] = float64(vec.Dot(q.qv, mat.Row(i)))
			sc.known[i] = true
			sc.cand = append(sc.cand, i)
		}
		return sc.exact[i]
	}

	// The best cosine, exactly: only rows whose upper bound reaches the
	// best lower bound can hold it.
	maxD := math.Inf(-1)
	for i := range n {
		if est[i]+bound[i] >= maxLo {
			maxD = max(maxD, cos(i))
		}
	}
	mean := f.mean
	if !(maxD > mean) {
		return nil, nil, nil, nil, nil, false
	}
	maxLex := 0.0
	_, touched := q.turnLexScores()
	for _, i := range touched {
		maxLex = max(maxLex, f.lex[i])
	}
	// relOf is relevanceInto's arithmetic for one turn with cosine d; it
	// grows with d, so an upper bound of d gives one of the relevance.
	relOf := func(i int, d float64) float64 {
		r := 0.0
		if maxLex > 0 {
			r = f.lex[i] / maxLex
		}
		if d > mean {
			r += tu.DenseWeight * max(d-mean, 0) / (maxD - mean)
		}
		return r
	}
	relX := func(i int) float64 { return relOf(i, cos(i)) }
	sc.relHi = grow(sc.relHi, n)
	relHi := sc.relHi
	lex := f.lex
	parallelRange(n, 16384, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			// relOf(i, est[i]+bound[i]), inlined; skipping the terms that
			// are 0 (0/x is 0, and max(d-mean, 0) is d-mean when d > mean).
			r := 0.0
			if l := lex[i]; l != 0 && maxLex > 0 {
				r = l / maxLex
			}
			if d := est[i] + bound[i]; d > mean {
				r += tu.DenseWeight * (d - mean) / (maxD - mean)
			}
			relHi[i] = r
		}
	})
	// Scores grow with every relevance they add up, so these are upper
	// bounds.
	sc.scoreHi = grow(sc.scoreHi, n)
	scoreHi := sc.scoreHi
	var bestHi []float64
	if tu.EventShare != 0 {
		sc.bestHi = grow(sc.bestHi, len(st.events))
		bestHi = sc.bestHi
	}
	if bestHi != nil {
		// eventBest, event by event over each event's members (those
		// whose first event it is), on every core.
		parallelRange(len(st.events), 8192, func(_, lo, hi int) {
			for e := lo; e < hi; e++ {
				b := 0.0
				for _, j := range st.evTurns[e] {
					if int(j) < n && f.event[j] == e {
						b = max(b, relHi[j])
					}
				}
				bestHi[e] = b
			}
		})
	}
	var args [4]int
	parts := parallelRange(n, 16384, func(p, lo, hi int) { args[p] = tu.scoreRange(f, relHi, scoreHi, bestHi, lo, hi) })
	r0 := args[0]
	for _, a := range args[1:parts] {
		if scoreHi[a] > scoreHi[r0] || scoreHi[a] == scoreHi[r0] && a < r0 {
			r0 = a
		}
	}

	bests := map[int]float64{}
	bestOf := func(e int) float64 {
		if b, ok := bests[e]; ok {
			return b
		}
		b := 0.0
		for _, j := range st.evTurns[e] {
			if int(j) < n && f.event[j] == e {
				b = max(b, relX(int(j)))
			}
		}
		bests[e] = b
		return b
	}
	ss := f.sameSession
	// scoreX is scoreInto's arithmetic for one turn, from exact values.
	scoreX := func(i int) float64 {
		var p1, p2, n1, n2 float64
		if i >= 1 && ss[i] {
			p1 = relX(i - 1)
			if i >= 2 && ss[i-1] {
				p2 = relX(i - 2)
			}
		}
		if i+1 < n && ss[i+1] {
			n1 = relX(i + 1)
			if i+2 < n && ss[i+2] {
				n2 = relX(i + 2)
			}
		}
		var b float64
		hasBest := bestHi != nil && f.event[i] >= 0
		if hasBest {
			b = bestOf(f.event[i])
		}
		return tu.scoreAt(f, i, relX(i), p1, p2, n1, n2, b, hasBest)
	}

	// Exact scores, turn by turn in decreasing order of their upper
	// bounds, until nothing selectOffline reads can change: the best score
	// (hence keep), the MaxK best turns, the KEvent events with the best
	// members and each one's offPredictMax best members. Turns never
	// reached keep a score of 0, which selectOffline reads only as "below
	// keep and not among the best".
	// fastScores and fastRel are kept all zero between questions.
	if len(sc.fastScores) < n {
		sc.fastScores = make([]float64, n+n/4)
		sc.fastRel = make([]float64, n+n/4)
	}
	scores = sc.fastScores[:n]
	reached := map[int]bool{}
	top := 0.0
	bestK := newTopK(tu.MaxK) // the MaxK best exact scores
	reach := func(i int) {
		scores[i] = scoreX(i)
		reached[i] = true
		scoreIdx = append(scoreIdx, i)
		top = max(top, scores[i])
		bestK.offer(i, scores[i])
	}
	// The best score: the turn with the best bound, then every turn whose
	// bound reaches its score.
	reach(r0)
	for i, s := range scoreHi {
		if s >= scores[r0] && i != r0 {
			reach(i)
		}
	}
	if !(top > 0) {
		return nil, nil, nil, nil, nil, false
	}
	keep := tu.KeepRatio * top
	// The other turns that can reach keep, best bound first (a heap).
	h := sc.cands[:0]
	for i, s := range scoreHi {
		if s >= keep && !reached[i] {
			h = append(h, i)
		}
	}
	sc.cands = h
	higher := func(a, b int) bool { return scoreHi[a] > scoreHi[b] }
	down := func(j int) {
		for {
			l, r, w := 2*j+1, 2*j+2, j
			if l < len(h) && higher(h[l], h[w]) {
				w = l
			}
			if r < len(h) && higher(h[r], h[w]) {
				w = r
			}
			if w == j {
				return
			}
			h[j], h[w] = h[w], h[j]
			j = w
		}
	}
	for j := len(h)/2 - 1; j >= 0; j-- {
		down(j)
	}
	evBest := map[int][]float64{}
	// settled reports whether the outcome is decided when every turn not
	// reached scores at most bound (below bound when strict, and then
	// below keep).
	settled := func(bound float64, strict bool) bool {
		beats := func(x float64) bool { return x > bound || strict && x >= bound }
		if len(bestK.h) < tu.MaxK || !beats(bestK.h[0].score) {
			return false
		}
		if q.ro.KEvent == 0 {
			return true // no events, nothing predicted
		}
		// The KEvent events with the best members, all at least keep.
		clear(evBest)
		for i := range reached {
			if e := f.event[i]; e >= 0 && scores[i] >= keep {
				evBest[e] = append(evBest[e], scores[i])
			}
		}
		if len(evBest) < q.ro.KEvent {
			return false
		}
		firsts := make([]float64, 0, len(evBest))
		for _, ss := range evBest {
			firsts = append(firsts, slices.Max(ss))
		}
		slices.SortFunc(firsts, func(a, b float64) int { return cmp.Compare(b, a) })
		last := firsts[q.ro.KEvent-1]
		if !beats(last) {
			return false
		}
		if !strict {
			// Each selected event's best members: reach every member
			// that may score at least keep (the selection stands: they
			// score at most bound).
			for e, ss := range evBest {
				if slices.Max(ss) < last {
					continue // not selected
				}
				for _, j := range st.evTurns[e] {
					if j := int(j); j < n && f.event[j] == e && !reached[j] && scoreHi[j] >= keep {
						reach(j)
					}
				}
			}
		}
		return true
	}
	for steps := 0; ; steps++ {
		if len(h) == 0 {
			// Every turn not reached scores below keep.
			if !settled(keep, true) {
				return nil, nil, nil, nil, nil, false
			}
			break
		}
		if steps%8 == 0 && settled(scoreHi[h[0]], false) {
			break
		}
		i := h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		down(0)
		reach(i)
	}

	// The KTurn most relevant turns, likewise in decreasing order of the
	// relevance bounds, from a floor set by the exact relevance known.
	relTop := newTopK(q.ro.KTurn)
	for i := range reached {
		relTop.offer(i, relX(i))
	}
	if len(relTop.h) < q.ro.KTurn {
		return nil, nil, nil, nil, nil, false
	}
	rfloor := relTop.h[0].score
	rc := h[:0]
	for i, r := range relHi {
		if r >= rfloor {
			rc = append(rc, i)
		}
	}
	slices.SortFunc(rc, func(a, b int) int { return cmp.Compare(relHi[b], relHi[a]) })
	sc.cands = rc
	rel = sc.fastRel[:n]
	relTop = newTopK(q.ro.KTurn)
	for j, i := range rc {
		rel[i] = relX(i)
		relIdx = append(relIdx, i)
		relTop.offer(i, rel[i])
		if j+1 < len(rc) && len(relTop.h) == q.ro.KTurn && relTop.h[0].score > relHi[rc[j+1]] {
			break
		}
	}
	return f, rel, scores, relIdx, scoreIdx, true
}

// offlineEvents returns the events holding the best turns (at most KEvent,
// in the rank order of their best member) and, per event, those of its
// three best members that score at least KeepRatio of the best turn (in
// rank order). It is what this walk over rank(scores) computes:
//
//	for _, i := range rank(scores) {
//		e := f.event[i]
//		if e < 0 { continue }
//		if e is new { if len(events) == KEvent { continue }; events += e }
//		if perEvent[e] < offPredictMax && scores[i] >= keep { predicted += i }
//		perEvent[e]++
//	}
//
// without ranking every turn: only turns scoring at least keep can be
// predicted, so they are gathered in one pass, and turns below keep are
// ranked only when their events are needed to fill the list.
//
// only, when not nil, lists every turn whose score may be positive.
func offlineEvents(q *query, f *turnFeatures, tu offlineTuning, scores []float64, only []int) (events, predicted []string) {
	st := q.st
	each := func(yield func(i int, s float64) bool) {
		if only == nil {
			for i, s := range scores {
				if !yield(i, s) {
					return
				}
			}
			return
		}
		for _, i := range only {
			if !yield(i, scores[i]) {
				return
			}
		}
	}
	top := 0.0
	for _, s := range each {
		top = max(top, s)
	}
	if !(top > 0) {
		return nil, nil
	}
	keep := tu.KeepRatio * top
	kEvent := q.ro.KEvent
	// Per event with a member scoring at least keep, its best members in
	// rank order (at most offPredictMax; the first is its best member).
	members := map[int][]int{}
	for i, s := range each {
		e := f.event[i]
		if !(s >= keep) || !(s > 0) || e < 0 {
			continue
		}
		ms := members[e]
		if len(ms) == offPredictMax && !ranksBefore(scores, i, ms[len(ms)-1]) {
			continue
		}
		j := len(ms)
		for j > 0 && ranksBefore(scores, i, ms[j-1]) {
			j--
		}
		if len(ms) < offPredictMax {
			ms = append(ms, 0)
		}
		copy(ms[j+1:], ms[j:])
		ms[j] = i
		members[e] = ms
	}
	// The events whose best members rank highest.
	sel := make([]int, 0, len(members))
	for e := range members {
		sel = append(sel, e)
	}
	slices.SortFunc(sel, func(a, b int) int {
		ia, ib := members[a][0], members[b][0]
		if ranksBefore(scores, ia, ib) {
			return -1
		}
		if ranksBefore(scores, ib, ia) {
			return 1
		}
		return 0
	})
	if kEvent >= 0 && len(sel) > kEvent {
		sel = sel[:kEvent]
	}
	var pred []int
	for _, e := range sel {
		events = append(events, st.events[e].ID)
		pred = append(pred, members[e]...)
	}
	slices.SortFunc(pred, func(a, b int) int {
		if ranksBefore(scores, a, b) {
			return -1
		}
		return 1
	})
	for _, i := range pred {
		predicted = append(predicted, st.turns[i].ID)
	}
	if kEvent >= 0 && len(events) >= kEvent {
		return events, predicted
	}
	// Fill the list from the turns below keep, in rank order.
	seen := map[int]bool{}
	for _, e := range sel {
		seen[e] = true
	}
	for size := 64; ; size *= 4 {
		ranked := topRankedBelow(scores, only, keep, size)
		more := events
		seenMore := maps.Clone(seen)
		for _, i := range ranked {
			if kEvent >= 0 && len(more) >= kEvent {
				break
			}
			if e := f.event[i]; e >= 0 && !seenMore[e] {
				seenMore[e] = true
				more = append(more, st.events[e].ID)
			}
		}
		if kEvent >= 0 && len(more) >= kEvent || len(ranked) < size {
			return more, predicted
		}
	}
}

// ranksBefore reports whether turn a ranks before turn b in rank(scores):
// a higher score, or an equal score and a lower index.
func ranksBefore(scores []float64, a, b int) bool {
	if scores[a] != scores[b] {
		return scores[a] > scores[b]
	}
	return a < b
}

// topRankedBelow is topRankedIn over the positive scores below limit.
func topRankedBelow(scores []float64, only []int, limit float64, k int) []int {
	if k <= 0 {
		return nil
	}
	top := newTopK(k)
	if only != nil {
		for _, i := range only {
			if s := scores[i]; s > 0 && s < limit {
				top.offer(i, s)
			}
		}
		return indexes(top.sorted())
	}
	for i, s := range scores {
		if s > 0 && s < limit && (len(top.h) < k || s > top.h[0].score) {
			top.offer(i, s)
		}
	}
	return indexes(top.sorted())
}

// topRankedIn is topRanked when only (if not nil) lists every index whose
// score may be positive.
func topRankedIn(scores []float64, only []int, k int) []int {
	if only == nil {
		return topRanked(scores, k)
	}
	top := newTopK(k)
	for _, i := range only {
		top.offer(i, scores[i])
	}
	return indexes(top.sorted())
}

func indexes(hits []scored) []int {
	out := make([]int, len(hits))
	for j, h := range hits {
		out[j] = h.idx
	}
	return out
}

// topRanked returns the first k entries of rank(scores): the indexes of the
// k best positive scores, best first, ties by index. It costs one pass and
// a heap of k, where rank sorts every positive score.
func topRanked(scores []float64, k int) []int {
	if k <= 0 {
		return nil
	}
	top := newTopK(k)
	for i, s := range scores {
		if s > 0 && (len(top.h) < k || s > top.h[0].score) {
			top.offer(i, s)
		}
	}
	return indexes(top.sorted())
}
