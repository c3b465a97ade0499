package higmem

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/vec"
)

// offlineFeatures computes the features of every turn for a question, in
// slices of its own, as the engine does. Caller holds st.mu.
func (q *query) offlineFeatures() *offline.Features {
	return q.offlineFeaturesW(offline.DefaultTuning().WindowWeight)
}

// offlineFeaturesW is offlineFeatures with window weight w.
func (q *query) offlineFeaturesW(w float64) *offline.Features {
	return q.featuresIn(&scratch{}, denseOf(q.st, w), true).Clone()
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
			if evs[0].Event.Producer != offline.Producer || !slices.Contains(evs[0].Event.Keywords, "pottery") {
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
	for i := range offline.SegMaxEventSize + 4 {
		in = append(in, TurnInput{Speaker: "Ann", SessionID: "1", Text: "The garden roses and tulips bloom again this spring, number " + string(rune('a'+i))})
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	evs, err := m.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || len(evs[0].Turns) != offline.SegMaxEventSize || len(evs[1].Turns) != 4 {
		var sizes []int
		for _, e := range evs {
			sizes = append(sizes, len(e.Turns))
		}
		t.Errorf("event sizes %v, want [%d 4]", sizes, offline.SegMaxEventSize)
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
	if len(res.Evidence) > offline.DefaultTuning().MaxK {
		t.Errorf("%d evidence turns, more than offline.DefaultTuning().MaxK", len(res.Evidence))
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
	feats := func(question string) *offline.Features {
		q := &query{st: st, question: question, info: analyzeRules(question), search: question}
		st.mu.RLock()
		defer st.mu.RUnlock()
		return q.offlineFeatures()
	}
	f := feats("When did Ann go to the museum?")
	if !slices.Equal(f.SameSession, []bool{false, true, false}) || !slices.Equal(f.Question, []bool{false, true, false}) {
		t.Errorf("sameSession %v, question %v", f.SameSession, f.Question)
	}
	if !slices.Equal(f.Speaker, []bool{true, false, false}) {
		t.Errorf("speaker %v: the question names Ann (Ann Lee by first name)", f.Speaker)
	}
	if !slices.Equal(f.Dated, []bool{true, false, false}) {
		t.Errorf("dated %v: only turn 1 mentions a time", f.Dated)
	}
	if f.Counted != nil || f.Dense != nil {
		t.Errorf("counted %v, dense %v: want nil", f.Counted, f.Dense)
	}
	if f.Lex[0] == 0 || f.Lex[1] != 0 || f.Lex[2] == 0 {
		t.Errorf("lex %v", f.Lex)
	}
	if slices.Contains(f.Event, -1) {
		t.Errorf("event %v: every turn is in an event", f.Event)
	}
	f = feats("How many tickets did Ben buy?")
	if f.Dated != nil || !slices.Equal(f.Counted, []bool{false, false, true}) || !slices.Equal(f.Speaker, []bool{false, true, true}) {
		t.Errorf("dated %v, counted %v, speaker %v", f.Dated, f.Counted, f.Speaker)
	}
}
func questionFor(ctx context.Context, t *testing.T, m *Memory, st *spaceState, question string) *query {
	t.Helper()
	q := &query{st: st, question: question, info: analyzeRules(question), search: question, ctx: ctx}
	v, err := m.embedQuestion(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	q.qv = v
	return q
}
