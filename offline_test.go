package higmem

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// testTuning is a fixed tuning, so that scorer tests do not move when the
// tuned constants do.
var testTuning = offlineTuning{
	DenseWeight: 1, Prev: 0.25, PrevQuestion: 0.7, Next: 0.35, NextQuestion: 0.5, Far: 0.3,
	EventShare: 0.2, SpeakerBump: 2, TimeBump: 3, CountBump: 5, KeepRatio: 0.5, MinK: 2, MaxK: 5,
}

// features returns turn features for n turns of one session, all visible,
// with no events and no cues.
func features(lex ...float64) *turnFeatures {
	n := len(lex)
	f := &turnFeatures{lex: lex, visible: make([]bool, n), sameSession: make([]bool, n), question: make([]bool, n), event: make([]int32, n)}
	for i := range n {
		f.visible[i] = true
		f.sameSession[i] = i > 0
		f.event[i] = -1
	}
	return f
}

// relevance returns each turn's own relevance: normalised BM25 plus the
// weighted cosine (negative cosines count as 0). Invisible turns get 0.
func (tu offlineTuning) relevance(f *turnFeatures) []float64 {
	return tu.relevanceInto(f, make([]float64, len(f.lex)))
}

// score returns each turn's context score (scoreRange), in a slice of its
// own.
func (tu offlineTuning) score(f *turnFeatures, rel []float64) []float64 {
	n := len(rel)
	var best []float64
	if tu.EventShare != 0 && f.event != nil {
		ne := 0
		for _, e := range f.event {
			ne = max(ne, int(e)+1)
		}
		best = make([]float64, ne)
	}
	return tu.scoreInto(f, rel, make([]float64, n), best, &runBests{})
}

// rankPositive returns the indexes of the turns with a positive score, best
// first (ties by index). Retrieval needs only the top of this order
// (rank.Top); the full order serves the tuning sweeps and the tests.
func rankPositive(scores []float64) []int {
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

// offlineFeatures computes the features of every turn for a question, in
// slices of its own, as the engine does. Caller holds st.mu.
func (q *query) offlineFeatures() *turnFeatures { return q.offlineFeaturesW(offWindowWeight) }

// offlineFeaturesW is offlineFeatures with window weight w.
func (q *query) offlineFeaturesW(w float64) *turnFeatures {
	f := q.featuresIn(&scratch{}, denseOf(q.st, w), true)
	f.lex = slices.Clone(f.lex)
	f.visible = slices.Clone(f.visible)
	f.sameSession = slices.Clone(f.sameSession)
	f.question = slices.Clone(f.question)
	f.event = slices.Clone(f.event)
	f.run, f.runStart, f.runAsks, f.runWords = slices.Clone(f.run), slices.Clone(f.runStart), slices.Clone(f.runAsks), slices.Clone(f.runWords)
	f.dated = slices.Clone(f.dated)
	f.counted = slices.Clone(f.counted)
	f.runLinks, f.cues = slices.Clone(f.runLinks), slices.Clone(f.cues)
	return f
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestOfflineRelevance(t *testing.T) {
	tests := []struct {
		name    string
		lex     []float64
		dense   []float64
		visible []bool
		want    []float64
	}{
		{"BM25 over its maximum", []float64{2, 1, 0}, nil, nil, []float64{1, 0.5, 0}},
		{"no match at all", []float64{0, 0, 0}, nil, nil, []float64{0, 0, 0}},
		// mean cosine 0.5, best 0.9: (d-0.5)/0.4, negatives clipped.
		{"dense centred and scaled", []float64{2, 1, 0}, []float64{0.9, 0.5, 0.1}, nil, []float64{2, 0.5, 0}},
		{"dense alone", []float64{0, 0, 0}, []float64{0.3, 0.7, 0.5}, nil, []float64{0, 1, 0}},
		// The invisible turn counts neither in the BM25 maximum nor in
		// the cosine mean.
		{"invisible turns ignored", []float64{4, 1, 2}, []float64{0.9, 0.2, 0.6}, []bool{false, true, true}, []float64{0, 0.5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := features(tt.lex...)
			f.dense = tt.dense
			if tt.visible != nil {
				f.visible = tt.visible
			}
			if got := testTuning.relevance(f); !near(got, tt.want) {
				t.Errorf("relevance = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfflineScore(t *testing.T) {
	tu := testTuning
	tu.EventShare, tu.SpeakerBump, tu.TimeBump, tu.CountBump = 0, 1, 1, 1
	tests := []struct {
		name  string
		rel   []float64
		setup func(f *turnFeatures)
		tu    offlineTuning
		want  []float64
	}{
		{
			name: "statement lends to both sides and two away",
			rel:  []float64{0, 0, 1, 0, 0},
			tu:   tu,
			// turn 1 gets Next (the turn after it is a statement), turn 3
			// gets Prev, turns 0 and 4 get Far.
			want: []float64{0.3, 0.35, 1, 0.25, 0.3},
		},
		{
			name:  "a question lends more to the turn that answers it",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *turnFeatures) { f.question[2] = true },
			tu:    tu,
			want:  []float64{0.3, 0.5, 1, 0.7, 0.3},
		},
		{
			name:  "nothing crosses a session boundary",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *turnFeatures) { f.sameSession[3] = false },
			tu:    tu,
			want:  []float64{0.3, 0.35, 1, 0, 0},
		},
		{
			name:  "invisible turns score 0 but lend nothing either way",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *turnFeatures) { f.visible[3] = false },
			tu:    tu,
			want:  []float64{0.3, 0.35, 1, 0, 0.3},
		},
		{
			name: "event share of the best member",
			rel:  []float64{1, 0, 0, 0.5},
			setup: func(f *turnFeatures) {
				f.event = []int32{0, 0, 1, 1}
			},
			tu:   offlineTuning{EventShare: 0.2, SpeakerBump: 1, TimeBump: 1, CountBump: 1},
			want: []float64{1.2, 0.2, 0.1, 0.6},
		},
		{
			name: "cues multiply",
			rel:  []float64{1, 1, 1, 1},
			setup: func(f *turnFeatures) {
				f.speaker = []bool{true, false, true, false}
				f.dated = []bool{false, true, true, false}
				f.counted = []bool{false, false, true, false}
			},
			tu:   offlineTuning{SpeakerBump: 2, TimeBump: 3, CountBump: 5},
			want: []float64{2, 3, 30, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := features(make([]float64, len(tt.rel))...)
			if tt.setup != nil {
				tt.setup(f)
			}
			if got := tt.tu.score(f, tt.rel); !near(got, tt.want) {
				t.Errorf("score = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfflineRankAndCut(t *testing.T) {
	scores := []float64{3, 0, 10, 8, 9, 2, 1, 8}
	ranked := rankPositive(scores)
	if want := []int{2, 4, 3, 7, 0, 5, 6}; !slices.Equal(ranked, want) {
		t.Fatalf("rank = %v, want %v (zero scores out, ties by index)", ranked, want)
	}
	tests := []struct {
		name       string
		minK, maxK int
		ratio      float64
		ranked     []int
		want       int
	}{
		{"stops where scores fall below half the best", 2, 10, 0.5, ranked, 4},
		{"keeps at least MinK", 6, 10, 0.5, ranked, 6},
		{"keeps at most MaxK", 1, 3, 0.1, ranked, 3},
		{"fewer candidates than MinK", 5, 10, 0.5, ranked[:2], 2},
		{"nothing to keep", 2, 10, 0.5, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := offlineTuning{MinK: tt.minK, MaxK: tt.maxK, KeepRatio: tt.ratio}
			if got := tu.cut(tt.ranked, scores); got != tt.want {
				t.Errorf("cut = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestDefaultOfflineTuning checks that the engine's tuning is the constant
// block and is usable.
func TestDefaultOfflineTuning(t *testing.T) {
	tu := defaultOfflineTuning()
	if tu.DenseWeight != offDenseWeight || tu.PrevQuestion != offPrevQuestion || tu.KeepRatio != offKeepRatio || tu.MaxK != offMaxK {
		t.Errorf("defaultOfflineTuning = %+v does not match the constants", tu)
	}
	if tu.MinK < 1 || tu.MinK > tu.MaxK || tu.KeepRatio <= 0 || tu.KeepRatio >= 1 {
		t.Errorf("unusable cut: %+v", tu)
	}
}

func TestKeywordsOf(t *testing.T) {
	tests := []struct {
		text    string
		n       int
		exclude []string
		want    []string
	}{
		// "Biscuit" is a name (capitalised mid-sentence); then the longest
		// words, ties by position.
		{"Wow, I adopted a greyhound called Biscuit from the shelter!", 3, nil, []string{"adopted", "greyhound", "Biscuit"}},
		// "Thanks" and "Really" start sentences and are fillers; "Sweden"
		// mid-sentence is a name and ranks first.
		{"Thanks! Really. My grandma brought this necklace from Sweden.", 2, nil, []string{"necklace", "Sweden"}},
		{"Caroline, the painting for Melanie is done.", 5, []string{"caroline", "melanie"}, []string{"painting", "done"}},
		{"yeah yeah cool", 3, nil, nil},
	}
	for _, tt := range tests {
		if got := keywordsOf(tt.text, tt.n, nameSet(tt.exclude...)); !slices.Equal(got, tt.want) {
			t.Errorf("keywordsOf(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
		}
	}
}

func TestTopicTextDropsMediumWords(t *testing.T) {
	tr := store.Turn{Text: "Look at this!", Attachments: []store.Attachment{{Kind: "image", Caption: "a photo of a sunset over a lake"}}}
	got := topicText(tr)
	if strings.Contains(got, "photo") || !strings.Contains(got, "sunset over a lake") || !strings.HasPrefix(got, "Look at this!") {
		t.Errorf("topicText = %q", got)
	}
}

func TestEntitiesOf(t *testing.T) {
	got := entitiesOf("Jonas and I visited the Museum of Modern Art. I'm tired, The end.", "Alice")
	want := []string{"Alice", "Jonas", "Museum of Modern Art"}
	if !slices.Equal(got, want) {
		t.Errorf("entitiesOf = %q, want %q", got, want)
	}
}

func TestQuestionCues(t *testing.T) {
	for q, want := range map[string]bool{
		"How many children does Melanie have?": true,
		"How much did the bike cost?":          true,
		"How did Melanie feel?":                false,
		"What did Caroline paint?":             false,
	} {
		if got := asksCount(q); got != want {
			t.Errorf("asksCount(%q) = %v", q, got)
		}
	}
	for text, want := range map[string]bool{
		"We have 3 kids":               true,
		"I ran twice this week":        true,
		"Three of us went":             true,
		"Nothing countable in here...": false,
	} {
		if got := hasNumber(text); got != want {
			t.Errorf("hasNumber(%q) = %v", text, got)
		}
	}
}

// topicEmbedder embeds a text as a fixed direction per topic word it
// contains (plus a small shared component), so that dense segmentation can
// be tested deterministically.
type topicEmbedder struct{ topics []string }

func (e topicEmbedder) Dim() int { return len(e.topics) + 1 }

func (e topicEmbedder) ID() string { return "topics" }

func (e topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, e.Dim())
		v[len(e.topics)] = 0.2
		for j, w := range e.topics {
			if strings.Contains(strings.ToLower(s), w) {
				v[j] = 1
			}
		}
		out[i] = vec.Normalize(v)
	}
	return out, nil
}

// segConversation has two sessions: pottery then a marathon in the first,
// a greeting, work talk and pottery again in the second.
var segConversation = [][]TurnInput{
	{
		{ID: "1", Speaker: "Ann", Text: "I started pottery classes downtown and made my first clay bowl yesterday."},
		{ID: "2", Speaker: "Ben", Text: "A clay bowl from pottery class sounds lovely, did the glaze turn out well?"},
		{ID: "3", Speaker: "Ann", Text: "The glaze on the clay bowl cracked a little, my pottery teacher said that is normal."},
		{ID: "4", Speaker: "Ben", Text: "Cool!"},
		{ID: "5", Speaker: "Ann", Text: "My pottery teacher plans a clay workshop with glaze experiments next week."},
		{ID: "6", Speaker: "Ben", Text: "My marathon training hurts my knee after long runs on the track."},
		{ID: "7", Speaker: "Ann", Text: "Marathon knee pain after long runs needs a physio and rest from the track."},
		{ID: "8", Speaker: "Ben", Text: "The physio says my knee needs rest before the marathon, so no long runs."},
	},
	{
		{ID: "9", Speaker: "Ann", Text: "Hi Ben, good to see you again!"},
		{ID: "10", Speaker: "Ben", Text: "Hi Ann! My week was busy with office meetings and deadlines at work."},
		{ID: "11", Speaker: "Ann", Text: "Office meetings and deadlines every day at work sound exhausting."},
		{ID: "12", Speaker: "Ben", Text: "The office deadlines at work are finally over, meetings are calmer now."},
		{ID: "13", Speaker: "Ben", Text: "Did your pottery teacher fire the clay bowl with the cracked glaze?"},
	},
}

func TestOfflineSegmentation(t *testing.T) {
	for _, tc := range []struct {
		name string
		emb  *topicEmbedder
	}{
		{"lexical", nil},
		{"dense", &topicEmbedder{topics: []string{"pottery", "marathon", "office", "hi "}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			o := Options{Mode: ModeOffline}
			if tc.emb != nil {
				o.Embedder = *tc.emb
			}
			m, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			m.now = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }
			defer m.Close()
			sp := Space{UserID: "seg"}
			for i, sess := range segConversation {
				for j := range sess {
					sess[j].SessionID = string(rune('A' + i))
				}
				if _, err := m.Add(ctx, sp, sess); err != nil {
					t.Fatal(err)
				}
			}
			evs, err := m.Events(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, e := range evs {
				got = append(got, e.Event.TurnIDs)
			}
			// Pottery (with the short "Cool!"), the marathon, the new
			// session's greeting and work talk; the last turn takes the
			// pottery topic up again and rejoins its event.
			want := [][]string{{"1", "2", "3", "4", "5", "13"}, {"6", "7", "8"}, {"9", "10", "11", "12"}}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("events = %v, want %v", got, want)
			}
			if evs[0].Event.Producer != offlineProducer || !slices.Contains(evs[0].Event.Keywords, "pottery") {
				t.Errorf("pottery event: producer %q, keywords %q", evs[0].Event.Producer, evs[0].Event.Keywords)
			}
			for _, e := range evs {
				if slices.ContainsFunc(e.Event.Keywords, func(k string) bool { return k == "Ann" || k == "Ben" }) {
					t.Errorf("event %s keywords %q hold a speaker name", e.Event.ID, e.Event.Keywords)
				}
			}
		})
	}
}

func TestOfflineSegmentationBounds(t *testing.T) {
	ctx := t.Context()
	m, err := Open(ctx, Options{Mode: ModeOffline})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "bounds"}
	var in []TurnInput
	for i := range segMaxEventSize + 4 {
		in = append(in, TurnInput{Speaker: "Ann", SessionID: "1", Text: "The garden roses and tulips bloom again this spring, number " + string(rune('a'+i))})
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	evs, err := m.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || len(evs[0].Turns) != segMaxEventSize || len(evs[1].Turns) != 4 {
		var sizes []int
		for _, e := range evs {
			sizes = append(sizes, len(e.Turns))
		}
		t.Errorf("event sizes %v, want [%d 4]", sizes, segMaxEventSize)
	}
}

// haystack is a conversation in which the answer to "Which breed did Ben
// adopt from the shelter?" follows a question that matches it and shares
// no word with it.
func haystack() []TurnInput {
	in := []TurnInput{
		{ID: "q", Speaker: "Ann", Text: "Which breed did you adopt from the shelter last week?"},
		{ID: "a", Speaker: "Ben", Text: "A greyhound called Biscuit, he sleeps all day."},
	}
	fillers := []string{
		"The weather turned cold and rainy again today.",
		"My sister moved to Lisbon for a new job in design.",
		"We cooked a huge pot of chili for the neighbours.",
		"The train to the city was late three times this month.",
		"I finished reading a novel about sailors and storms.",
		"Our football team lost the final by a single goal.",
		"The bakery on the corner sells amazing cinnamon rolls.",
		"I am learning to play the violin, slowly.",
		"The kids built a treehouse in the backyard.",
		"My laptop broke, so I bought a refurbished one.",
	}
	for i, f := range fillers {
		sp := "Ann"
		if i%2 == 1 {
			sp = "Ben"
		}
		in = append(in, TurnInput{ID: "f" + string(rune('0'+i)), Speaker: sp, Text: f})
	}
	for i := range in {
		in[i].SessionID = "1"
		in[i].Time = "2024-04-06T10:00:00Z"
	}
	return in
}

func TestOfflineRetrieveAnswerAfterQuestion(t *testing.T) {
	ctx := t.Context()
	m, err := Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "hay"}
	if _, err := m.Add(ctx, sp, haystack()); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "Which breed did Ben adopt from the shelter?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace.Calls) != 0 || res.Trace.Mode != ModeOffline {
		t.Fatalf("mode %s with %d calls", res.Trace.Mode, len(res.Trace.Calls))
	}
	best := slices.Clone(res.Evidence)
	slices.SortStableFunc(best, func(a, b Evidence) int { return -cmpFloat(a.Score, b.Score) })
	if len(best) < 2 || best[0].Turn.ID != "q" || best[1].Turn.ID != "a" {
		t.Errorf("best evidence %v, want q then a (the answer follows the question)", res.IDs())
	}
	if len(res.Evidence) > offMaxK {
		t.Errorf("%d evidence turns, more than offMaxK", len(res.Evidence))
	}
	for _, name := range []string{"search", "final"} {
		if !slices.ContainsFunc(res.Trace.Stages, func(s Stage) bool { return s.Name == name }) {
			t.Errorf("trace lacks stage %q", name)
		}
	}
	if s := res.Trace.Stage("search"); len(s) == 0 || s[0] != "q" {
		t.Errorf("search stage %v, want q first", s)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestOfflineFeatures(t *testing.T) {
	ctx := t.Context()
	m, err := Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "feat"}
	in := []TurnInput{
		{ID: "1", SessionID: "s1", Speaker: "Ann Lee", Text: "We went to the museum last Friday.", Time: "2024-04-06T10:00:00Z"},
		{ID: "2", SessionID: "s1", Speaker: "Ben", Text: "Did you see the dinosaurs?", Time: "2024-04-06T10:01:00Z"},
		{ID: "3", SessionID: "s2", Speaker: "Ben", Text: "We bought 2 tickets for the museum.", Time: "2024-05-06T10:00:00Z"},
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	feats := func(question string) *turnFeatures {
		q := &query{st: st, question: question, info: analyzeRules(question), search: question}
		st.mu.RLock()
		defer st.mu.RUnlock()
		return q.offlineFeatures()
	}
	f := feats("When did Ann go to the museum?")
	if !slices.Equal(f.sameSession, []bool{false, true, false}) || !slices.Equal(f.question, []bool{false, true, false}) {
		t.Errorf("sameSession %v, question %v", f.sameSession, f.question)
	}
	if !slices.Equal(f.speaker, []bool{true, false, false}) {
		t.Errorf("speaker %v: the question names Ann (Ann Lee by first name)", f.speaker)
	}
	if !slices.Equal(f.dated, []bool{true, false, false}) {
		t.Errorf("dated %v: only turn 1 mentions a time", f.dated)
	}
	if f.counted != nil || f.dense != nil {
		t.Errorf("counted %v, dense %v: want nil", f.counted, f.dense)
	}
	if f.lex[0] == 0 || f.lex[1] != 0 || f.lex[2] == 0 {
		t.Errorf("lex %v", f.lex)
	}
	if slices.Contains(f.event, -1) {
		t.Errorf("event %v: every turn is in an event", f.event)
	}
	f = feats("How many tickets did Ben buy?")
	if f.dated != nil || !slices.Equal(f.counted, []bool{false, false, true}) || !slices.Equal(f.speaker, []bool{false, true, true}) {
		t.Errorf("dated %v, counted %v, speaker %v", f.dated, f.counted, f.speaker)
	}
}
