package higmem

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/store"
)

// TestMemberRankMatchesReference checks that memberRank.top, which ranks an
// event's members once for every layout the select call tries, chooses
// what the reference does at every n: the members in the event's order
// when they are n or fewer, else a stable sort by score (each compared
// through the score function), cut at n, in the state's order; and that it
// asks for the scores once, only when a cut needs them. Scores tie often,
// and members come in any order.
func TestMemberRankMatchesReference(t *testing.T) {
	reference := func(members []int, score func(int) float64, n int) []int {
		idx := slices.Clone(members)
		if len(idx) > n {
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
			idx = idx[:n]
			slices.Sort(idx)
		}
		return idx
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		m := rng.IntN(14)
		members := rng.Perm(40)[:m]
		scores := make([]float64, 40)
		for i := range scores {
			scores[i] = float64(rng.IntN(4)) / 2 // ties
		}
		score := func(i int) float64 { return scores[i] }
		asked := 0
		r := &memberRank{members: members, score: func() func(int) float64 { asked++; return score }}
		for n := m + 1; n >= 0; n-- { // as show tries layouts: fewer members each time
			if got, want := r.top(n), reference(members, score, n); !slices.Equal(got, want) {
				t.Fatalf("members %v, scores %v, n %d: top %v, reference %v", members, scores, n, got, want)
			}
			// The scores are asked for once, and only when a cut needs
			// them (as the reference scores nothing otherwise).
			if want := min(1, max(0, m-n)); asked != want {
				t.Fatalf("members %v, n %d: scores asked for %d times, want %d", members, n, asked, want)
			}
		}
	}
}

// refLayout is the select call's layout as show laid it out before size
// and the slots: everything made afresh, the turns deduplicated by id.
type refLayout struct {
	data  prompt.SelectData
	ids   []string
	shown map[string]string
	size  int
}

// refPromptTurn is the turn t as a prompt shows it, as promptTurnAt made
// it from the turn looked up by its id.
func refPromptTurn(q *query, t store.Turn) prompt.Turn {
	pt := promptTurn(t)
	if text, ex, ok := q.passageScores().excerptOf(q.st.pos[t.ID]); ok {
		pt.Text = rules.Cut(text, maxPromptTurnBytes)
		pt.Note = strings.TrimSpace(strings.Trim(strings.TrimSpace(excerptMarker(ex)), "()"))
	}
	return pt
}

func referenceShow(v *selectView, n, nev int) refLayout {
	q := v.q
	out := refLayout{data: prompt.SelectData{Question: q.question, Max: selectMax}, shown: map[string]string{}}
	add := func(i int, how string) prompt.Turn {
		id := q.st.turns[i].ID
		out.shown[id] = how
		out.ids = append(out.ids, id)
		pt := refPromptTurn(q, q.st.turns[i])
		out.size += promptTurnBytes(pt)
		return pt
	}
	for _, h := range v.events[:nev] {
		members := q.members(q.st.events[h.Index])
		if len(members) > n {
			score := q.memberScores()
			members = slices.Clone(members)
			slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
			members = members[:n]
			slices.Sort(members)
		}
		se := prompt.SelectEvent{}
		for _, i := range members {
			if out.shown[q.st.turns[i].ID] == "" {
				se.Turns = append(se.Turns, add(i, "event"))
			}
		}
		if len(se.Turns) > 0 {
			se.Event = rules.PromptEvent(q.st.events[h.Index])
			se.Event.Facts = nil
			out.data.Events = append(out.data.Events, se)
			out.size += promptEventBytes(se.Event)
		}
	}
	for _, id := range slices.Concat(v.searched, v.timeline, v.profile) {
		i, ok := q.st.pos[id]
		if !ok || out.shown[id] != "" {
			continue
		}
		how := "profile"
		switch {
		case v.ranks[id] > 0:
			how = "search"
		case slices.Contains(v.timeline, id):
			how = "timeline"
		}
		out.data.Turns = append(out.data.Turns, add(i, how))
	}
	return out
}

// TestSelectLayoutsMatchReference checks, on a default-mode space, that
// every layout the select call may try (n members of the first nev
// events) has the size size reports, and that show lays it out as the
// reference does (the events, their turns, the loose turns, where each
// was shown from, in order), whatever layouts were tried before.
func TestSelectLayoutsMatchReference(t *testing.T) {
	ctx := t.Context()
	in := topicTurns(160)
	for i := 0; i < len(in); i += 13 {
		// Long turns: the prompt shows excerpts.
		w := selectTopics[(i/5)%len(selectTopics)]
		var paras []string
		for p := range 4 {
			paras = append(paras, strings.Repeat(fmt.Sprintf("%s %s %s paragraph%d %s. ", w[p], w[p+1], w[0], p, w[4]), 10))
		}
		in[i].Text = strings.Join(paras, "\n\n")
	}
	m, st := openDefaultState(t, "layout", in)
	layouts := 0
	for qi, question := range []string{"What did Ann say about the roses, the sourdough crust and the chess endgame?", "When did Bo talk about the regatta, the guitar riff, the saddle, the gallery or the puppy?", "When in May 2024 did Ann feed the puppy kibble?", "What did Bo say about the museum on 2 May 2024?"} {
		q := m.newQuery(ctx, st, question, RetrieveOptions{KTurn: 10, KEvent: 10, EvidenceTokens: 2000}, &recorder{})
		if err := m.analyze(ctx, q); err != nil {
			t.Fatal(err)
		}
		q.setFilters()
		v := m.selectInputs(q)
		if qi%2 == 0 {
			// The first layout's ranks and lines made on both cores
			// first, as retrieveDefault does; or else one at a time.
			v.prepare()
		}
		t.Logf("%d events in the space, %d found, %d searched, %d in the timeline", len(st.events), len(v.events), len(v.searched), len(v.timeline))
		if len(v.events) < 2 {
			t.Fatalf("%q: %d events found, want several", question, len(v.events))
		}
		rng := rand.New(rand.NewPCG(7, uint64(len(question))))
		var tries [][2]int
		for n := selectMembers; n >= 1; n-- {
			for nev := len(v.events); nev >= 0; nev-- {
				tries = append(tries, [2]int{n, nev})
			}
		}
		rng.Shuffle(len(tries), func(a, b int) { tries[a], tries[b] = tries[b], tries[a] })
		for _, tr := range tries {
			n, nev := tr[0], tr[1]
			want := referenceShow(v, n, nev)
			size := v.size(n, nev)
			shown := v.show(n, nev)
			if size != want.size || shown != want.size {
				t.Fatalf("%q, n %d, nev %d: size %d, show %d, reference %d", question, n, nev, size, shown, want.size)
			}
			if !reflect.DeepEqual(*v.data, want.data) || !slices.Equal(v.ids, want.ids) || !maps.Equal(v.shownAs(), want.shown) {
				t.Fatalf("%q, n %d, nev %d: show laid out\n%+v\n%v\n%v\nreference\n%+v\n%v\n%v", question, n, nev, *v.data, v.ids, v.shownAs(), want.data, want.ids, want.shown)
			}
			idx := make([]int, len(want.ids))
			for j, id := range want.ids {
				idx[j] = st.pos[id]
			}
			if !slices.Equal(v.idx, idx) {
				t.Fatalf("%q, n %d, nev %d: idx %v, want %v", question, n, nev, v.idx, idx)
			}
			layouts++
		}
		st.putScratch(q.sc)
	}
	t.Logf("%d layouts checked", layouts)
}

// fitLayout chooses the layout the former loop chose (laying out each
// layout it tried: fewer members first, then fewer events, until one fits
// or none is left), and show's last layout is that one.
func TestFitLayoutMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		n0, nev0, limit := 1+rng.IntN(10), rng.IntN(6), 50+rng.IntN(100)
		sizes := map[[2]int]int{}
		measure := func(n, nev int) int {
			k := [2]int{n, nev}
			if _, ok := sizes[k]; !ok {
				sizes[k] = 20 + rng.IntN(200)
			}
			return sizes[k]
		}
		n, nev := n0, nev0
		for measure(n, nev) > limit && (n > 1 || nev > 0) {
			if n > 1 {
				n--
			} else {
				nev--
			}
		}
		var last [2]int
		gotN, gotNev := fitLayout(n0, nev0, limit, func(n, nev int) int { last = [2]int{n, nev}; return measure(n, nev) }, measure)
		if gotN != n || gotNev != nev || last != [2]int{n, nev} {
			t.Fatalf("from %d, %d within %d (sizes %v): fitLayout chose %d, %d and laid out %v; the loop chose %d, %d",
				n0, nev0, limit, sizes, gotN, gotNev, last, n, nev)
		}
	}
}

// timeline returns the turns said in the question's time range (or
// mentioning a time in it), in order, all of them when n allows.
func TestTimelineTurnsInRange(t *testing.T) {
	ctx := t.Context()
	var in []TurnInput
	for i := range 40 {
		in = append(in, TurnInput{ID: fmt.Sprintf("t%d", i), SessionID: fmt.Sprint(i / 10), Speaker: "Ann",
			Text: fmt.Sprintf("Note %d about the kibble.", i), Time: fmt.Sprintf("2024-05-%02dT10:%02d:00Z", 1+i/10, i%10)})
	}
	m, st := openDefaultState(t, "timeline", in)
	q := m.newQuery(ctx, st, "When on 3 May 2024 did Ann buy kibble?", RetrieveOptions{KTurn: 10, KEvent: 10}, &recorder{})
	defer st.putScratch(q.sc)
	if !q.info.Temporal || q.info.Start.IsZero() {
		t.Fatalf("question read as %+v, want a time range", q.info)
	}
	got := q.timeline(100)
	var want []string
	for i := 20; i < 30; i++ { // said on 3 May
		want = append(want, fmt.Sprintf("t%d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
}

// TestMemberScoresLexScale checks the lexical part of the members' scores
// (memberScores): each turn's BM25 score over the greatest of the
// question's, taken over every turn when the question's words touch many
// (a scan in order) and over the touched ones when few, the same either
// way: a question with a word in every turn, and one with rare words.
func TestMemberScoresLexScale(t *testing.T) {
	ctx := t.Context()
	var in []TurnInput
	for i := range 200 {
		text := fmt.Sprintf("weather note %d: rain again", i)
		if i%50 == 7 {
			text = fmt.Sprintf("the zeppelin %d landed, rain or not", i)
		}
		if i == 123 {
			text = "a xylophone solo"
		}
		in = append(in, TurnInput{ID: fmt.Sprintf("D1:%d", i+1), SessionID: "1", Speaker: []string{"Ann", "Bo"}[i%2], Text: text,
			Time: fmt.Sprintf("2024-05-01T10:%02d:%02dZ", i/60, i%60)})
	}
	m, st := openDefaultState(t, "members", in)
	for _, c := range []struct {
		question string
		many     bool
	}{{"What did Ann say about the rain?", true}, {"When did the zeppelin land?", false}, {"Who played a xylophone?", false}} {
		q := m.newQuery(ctx, st, c.question, RetrieveOptions{KTurn: 10, KEvent: 10}, &recorder{})
		if err := m.analyze(ctx, q); err != nil {
			t.Fatal(err)
		}
		q.setFilters()
		lex := q.turnLexScores()
		matched := 0
		for _, x := range lex {
			if x != 0 {
				matched++
			}
		}
		if many := matched > len(lex)/16; many != c.many || q.sc.unlisted != many {
			t.Fatalf("%q: %d of %d turns matched (unlisted %v), want many %v", c.question, matched, len(lex), q.sc.unlisted, c.many)
		}
		top := slices.Max(lex)
		if !(top > 0) {
			t.Fatalf("%q: no BM25 score", c.question)
		}
		score := q.memberScores()
		for i := range st.turns {
			want := lex[i]/top + float64(vec.Dot(q.qv, st.turnVec.Row(i)))
			if got := score(i); got != want {
				t.Fatalf("%q: turn %d scores %v, want %v", c.question, i, got, want)
			}
		}
	}
}

// openDefaultState opens a default-mode Memory (the scripted model, the
// hashing embedder at 64 dimensions), adds in to the space of user, and
// returns the Memory and the space's state, read-locked until the test
// ends.
func openDefaultState(t *testing.T, user string, in []TurnInput) (*Memory, *spaceState) {
	t.Helper()
	ctx := t.Context()
	m, err := Open(ctx, Options{Mode: ModeDefault, MemoryModel: llmfake.NewScripted(), Embedder: hashing.New(64)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	sp := Space{UserID: user}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.RLock()
	t.Cleanup(st.mu.RUnlock)
	return m, st
}

// selectTopics are topics of their own words (topicTurns).
var selectTopics = [][]string{
	strings.Fields("garden roses compost tulips hedge"), strings.Fields("sourdough starter flour oven crust"),
	strings.Fields("chess opening bishop endgame rook"), strings.Fields("sailing regatta harbour mast keel"),
	strings.Fields("guitar chords strings amplifier riff"), strings.Fields("cycling saddle gears climb pedals"),
	strings.Fields("museum paintings sculpture gallery curator"), strings.Fields("puppy leash vet kibble fetch"),
}

// topicTurns returns n turns in sessions of 40 a day from 1 May 2024, Ann
// and Bo speaking in turn, in runs of five on one of selectTopics: each
// run is an event of the scripted model's, a topic's later runs join it.
func topicTurns(n int) []TurnInput {
	var in []TurnInput
	for i := range n {
		w := selectTopics[(i/5)%len(selectTopics)]
		in = append(in, TurnInput{ID: fmt.Sprintf("D%d:%d", i/40+1, i%40+1), SessionID: fmt.Sprint(i/40 + 1), Speaker: []string{"Ann", "Bo"}[i%2],
			Text: fmt.Sprintf("%s %s %s %s, %s %d.", w[i%5], w[(i+1)%5], w[(i+2)%5], w[(i+3)%5], w[(i+4)%5], i), Time: fmt.Sprintf("2024-05-%02dT10:%02d:00Z", i/40+1, i%40)})
	}
	return in
}

// TestMembersAtMatchesLookup checks that membersAt, which reads an
// event's members from their positions (evTurns), returns what members
// returns looking each id up: for every event, with and without a filter
// on the turns, and for an event listing a turn its positions lack (it
// then looks the ids up).
func TestMembersAtMatchesLookup(t *testing.T) {
	ctx := t.Context()
	m, st := openDefaultState(t, "members-at", topicTurns(160))
	if len(st.events) < 4 {
		t.Fatalf("%d events, want several", len(st.events))
	}
	for _, filter := range []func(Turn) bool{nil, func(t Turn) bool { return !strings.HasSuffix(t.ID, "3") }} {
		q := m.newQuery(ctx, st, "What did Ann say about the roses?", RetrieveOptions{KTurn: 10, KEvent: 10, Filter: filter}, &recorder{})
		q.setFilters()
		for k := range st.events {
			want := q.members(st.events[k])
			if got := q.membersAt(k); !slices.Equal(got, want) || len(want) == 0 {
				t.Fatalf("filter %v, event %d: membersAt %v, members %v", filter != nil, k, got, want)
			}
		}
		st.putScratch(q.sc)
	}
	// An event listing a turn of the state that its positions lack.
	q := m.newQuery(ctx, st, "What did Ann say about the roses?", RetrieveOptions{KTurn: 10, KEvent: 10}, &recorder{})
	defer st.putScratch(q.sc)
	e := &st.events[0]
	ids := e.TurnIDs
	defer func() { e.TurnIDs = ids }()
	extra := st.turns[len(st.turns)-1].ID
	if slices.Contains(ids, extra) {
		t.Fatalf("event 0 holds %s already", extra)
	}
	e.TurnIDs = append(slices.Clip(ids), extra)
	want := q.members(*e)
	if got := q.membersAt(0); !slices.Equal(got, want) || !slices.Contains(got, len(st.turns)-1) {
		t.Fatalf("event listing %s: membersAt %v, members %v", extra, got, want)
	}
}

// TestAddSelectedMatchesLookup checks that addSelected, which reads the
// turns the select call chose at their state index, makes the candidates
// addCand makes looking each id up: the same evidence, source and score;
// and that where a write moved or changed a turn while the lock was let go
// (the job's copy no longer matches the state at that index) it looks the
// id up.
func TestAddSelectedMatchesLookup(t *testing.T) {
	ctx := t.Context()
	m, st := openDefaultState(t, "add-selected", topicTurns(160))
	q := m.newQuery(ctx, st, "What did Ann say about the roses, the sourdough crust and the chess endgame?", RetrieveOptions{KTurn: 10, KEvent: 10, EvidenceTokens: 2000}, &recorder{})
	defer st.putScratch(q.sc)
	if err := m.analyze(ctx, q); err != nil {
		t.Fatal(err)
	}
	q.setFilters()
	v := m.selectInputs(q)
	fitLayout(selectMembers, len(v.events), 4*selectTokens, v.show, v.size)
	v.finish()
	if len(v.ids) < 6 {
		t.Fatalf("%d turns shown, want several", len(v.ids))
	}
	// The model's choice: every third turn shown, last first.
	var out []string
	var at []int
	for p := len(v.ids) - 1; p >= 0; p -= 3 {
		out, at = append(out, v.ids[p]), append(at, p)
	}
	v.job.out, v.job.at = out, at
	reference := func() map[string]*Evidence {
		q.cand = map[string]*Evidence{}
		shown := v.shownAs()
		for k, id := range out {
			q.addCand(id, shown[id], 1+boost(v.ranks[id])+boost(k+1)/2)
		}
		return q.cand
	}
	want := reference()
	q.cand = map[string]*Evidence{}
	v.addSelected(out, true)
	if !reflect.DeepEqual(q.cand, want) {
		t.Fatalf("addSelected made %v, want %v", q.cand, want)
	}
	// A write moved one chosen turn (its old index holds another) and
	// changed another's time (the copy's is stale).
	p0, p1 := at[0], at[1]
	v.idx[p0] = (v.idx[p0] + 1) % len(st.turns)
	v.job.turns[p1].OccurredAt = v.job.turns[p1].OccurredAt.Add(-48 * time.Hour)
	v.pts[v.slots[p1]].Date = "stale"
	q.cand = map[string]*Evidence{}
	v.addSelected(out, true)
	if !reflect.DeepEqual(q.cand, want) {
		t.Fatalf("after a write, addSelected made %v, want %v", q.cand, want)
	}
}

// TestTurnLexTop checks the greatest turn BM25 score the members' scores
// divide by (turnLexTop): worked out by the fast scan's features part
// (featuresIn without the dense feature) for a query that will score
// members, the greatest of the scores either way, and worked out again
// once the scratch's scores are cleared for another search.
func TestTurnLexTop(t *testing.T) {
	ctx := t.Context()
	m, st := openDefaultState(t, "lex-top", topicTurns(160))
	greatest := func(q *query) float64 {
		lex := q.turnLexScores()
		return slices.Max(lex)
	}
	q := m.newQuery(ctx, st, "What did Ann say about the roses?", RetrieveOptions{KTurn: 10, KEvent: 10}, &recorder{})
	defer st.putScratch(q.sc)
	if err := m.analyze(ctx, q); err != nil {
		t.Fatal(err)
	}
	q.setFilters()
	q.earlyTop = true
	f := q.featuresIn(q.sc, q.denseOf(1), false)
	if q.sc.lexTop != greatest(q) || !(q.sc.lexTop > 0) || !f.LexMaxSet || f.LexMax != q.sc.lexTop {
		t.Fatalf("after the features: top %v (features %v, set %v), want %v", q.sc.lexTop, f.LexMax, f.LexMaxSet, greatest(q))
	}
	// The scratch cleared (as putScratch does) and another search.
	q.sc.clearLex()
	q.search = "When did Bo play the guitar riff on the amplifier?"
	if got, want := q.turnLexTop(), greatest(q); got != want || got == 0 {
		t.Fatalf("another search: top %v, want %v", got, want)
	}
}

// TestDayMemo checks that dayMemo.dateOf formats each turn's date as
// rules.DateOf does, over turns of one day in two locations, of other
// days (the next, then one in another month with the same day of the
// month, then one in another year with the same month and day), of no
// known time (the caller's text, or nothing) and again
// of the first day.
func TestDayMemo(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	at := func(y int, m time.Month, d, h int, loc *time.Location) store.Turn {
		return store.Turn{OccurredAt: time.Date(y, m, d, h, 0, 0, 0, loc)}
	}
	turns := []store.Turn{at(2024, 5, 8, 10, time.UTC), at(2024, 5, 8, 23, paris), at(2024, 5, 8, 23, time.UTC), at(2024, 5, 9, 9, time.UTC), at(2024, 6, 9, 9, time.UTC), at(2024, 6, 8, 9, time.UTC),
		at(2025, 6, 8, 9, time.UTC), {OccurredRaw: "some Tuesday"}, {}, at(2025, 6, 8, 1, paris), at(2024, 5, 8, 0, paris)}
	var days dayMemo
	for k := range turns {
		if got, want := days.dateOf(&turns[k]), rules.DateOf(turns[k]); got != want {
			t.Fatalf("turn %d (%v): %q, want %q", k, turns[k].OccurredAt, got, want)
		}
	}
}

// TestQueryScratchLeftToClear checks a question's scratch given back with
// its scores left to clear (putQueryScratch): the next question on it
// scores the turns afresh (not the last question's scores), with every
// entry but those its words touch zero, the greatest score its own; from
// a question whose word touches every turn to one of a rare word, and
// back.
func TestQueryScratchLeftToClear(t *testing.T) {
	ctx := t.Context()
	var in []TurnInput
	for i := range 200 {
		text := fmt.Sprintf("weather note %d: rain again", i)
		if i%50 == 7 {
			text = fmt.Sprintf("the zeppelin %d landed", i)
		}
		in = append(in, TurnInput{ID: fmt.Sprintf("D1:%d", i+1), SessionID: "1", Speaker: []string{"Ann", "Bo"}[i%2], Text: text,
			Time: fmt.Sprintf("2024-05-01T10:%02d:%02dZ", i/60, i%60)})
	}
	m, st := openDefaultState(t, "left-to-clear", in)
	sc := &scratch{}
	for _, question := range []string{"What did Ann say about the rain?", "When did the zeppelin land?", "What did Bo say about the weather?"} {
		q := m.newQuery(ctx, st, question, RetrieveOptions{KTurn: 10, KEvent: 10}, &recorder{})
		st.putScratch(q.sc)
		q.sc = sc // the last question's, its scores left
		if err := m.analyze(ctx, q); err != nil {
			t.Fatal(err)
		}
		lex := q.turnLexScores()
		top := q.turnLexTop()
		want := make([]float64, len(st.turns))
		st.turnLex.ScoreRefs(q.search, want, nil)
		if !slices.Equal(lex, want) || top != slices.Max(want) || !(top > 0) {
			t.Fatalf("%q: scores %v (top %v), want %v", question, lex, top, want)
		}
		if full := sc.lex[:cap(sc.lex)]; slices.ContainsFunc(full[len(lex):], func(x float64) bool { return x != 0 }) {
			t.Fatalf("%q: scores past the turns", question)
		}
		(&spaceState{}).putQueryScratch(sc)
	}
}

// TestSearchEventsTop checks the event search that takes the BM25
// index's greatest score and no list of the events scored
// (lexScoresFew, rank.Searcher.SearchTop) against Search with the list,
// on quantized event vectors (where SearchTop reads the greatest score)
// and without.
func TestSearchEventsTop(t *testing.T) {
	ctx := t.Context()
	m, st := openDefaultState(t, "events-top", topicTurns(160))
	if err := st.ensureEventVectors(ctx); err != nil {
		t.Fatal(err)
	}
	for _, quantize := range []bool{false, true} {
		if quantize {
			st.eventVec.QuantizeFrom(1)
		}
		if !st.eventVecsReady() || st.eventVec.Quantized() != quantize || len(st.events) < 5 {
			t.Fatalf("%d events, vectors ready %v, quantized %v", len(st.events), st.eventVecsReady(), st.eventVec.Quantized())
		}
		for _, question := range []string{"What did Ann say about the roses?", "When did Bo play the guitar riff on the amplifier?", "sourdough crust", "zeppelin"} {
			qv, err := m.embedQuestion(ctx, question)
			if err != nil {
				t.Fatal(err)
			}
			got := st.searchEvents(question, qv, 5, nil)
			sc := &scratch{}
			lex, touched := sc.lexScores(st.eventLex, len(st.events), question)
			want := sc.search.Search(&st.eventVec, lex, touched, qv, 5, nil)
			if !slices.Equal(got, want) || (question != "zeppelin" && len(got) == 0) {
				t.Fatalf("quantized %v, %q: %v, want %v", quantize, question, got, want)
			}
		}
	}
}
