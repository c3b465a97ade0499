package higmem

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/llm/llmfake"
)

// The engine's scans were rewritten for speed (issue 9); these tests pin
// them to straightforward reference implementations, bit for bit.

// TestOfflineFastMatchesFull runs offline retrieval on a space large enough
// (with the thresholds lowered) for the pruned path, and checks every
// result against the full computation with the same centre: same evidence,
// scores, sources and trace, bit for bit. It runs as offline mode does,
// with no int8 copy of the turn vectors, and with one, which the window
// weights below 1 (mixing both matrices' bounds) need.
//
// A third run splits the pruned path's passes over the space into parts of
// 100 turns, as on a large space with several cores, so that the parts'
// lists and event bests are merged.
func TestOfflineFastMatchesFull(t *testing.T) {
	t.Parallel() // each run builds a memory of its own
	for _, turnInt8 := range []bool{false, true} {
		t.Run(fmt.Sprintf("turnInt8=%v", turnInt8), func(t *testing.T) { t.Parallel(); testOfflineFastMatchesFull(t, turnInt8, 0, false) })
	}
	t.Run("split", func(t *testing.T) { t.Parallel(); testOfflineFastMatchesFull(t, false, 100, false) })
	// Every message answered: runs of one turn, which the bound pass
	// reads from the relevance bounds (setBounds).
	t.Run("single", func(t *testing.T) { t.Parallel(); testOfflineFastMatchesFull(t, true, 0, true) })
	t.Run("single-split", func(t *testing.T) { t.Parallel(); testOfflineFastMatchesFull(t, false, 100, true) })
}

// testOfflineFastMatchesFull compares the pruned path with the full one on
// a space of about 1,700 turns: its int8 copy of the turn vectors or not,
// parts of chunk turns (0: the engine's), and with single, one turn per
// speaker run.
func testOfflineFastMatchesFull(t *testing.T, turnInt8 bool, chunk int, single bool) {
	ctx := context.Background()
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.limits.turnInt8 {
		t.Fatal("offline mode keeps an int8 copy of the turn vectors")
	}
	m.limits.quantizeRows, m.limits.offlineFastRows, m.limits.turnInt8, m.limits.offlineChunk = 64, 256, turnInt8, chunk
	sp := Space{UserID: "fast"}
	r := rand.New(rand.NewPCG(9, 10))
	places := strings.Fields("lake Lisbon market gym library Kyoto beach museum studio park Berlin mountains bakery shelter")
	things := strings.Fields("painting bread bowl guitar album garden bookshelf scarf chess telescope bike kite camera puzzle")
	var in []TurnInput
	day := 1
	speaker := 0
	for s := range 120 {
		for j := range 5 + r.IntN(20) {
			if single || r.IntN(2) == 0 {
				speaker = 1 - speaker // else a burst goes on: runs of one to a few messages
			}
			text := fmt.Sprintf("I took my %s to the %s and bought a %s.", things[r.IntN(len(things))], places[r.IntN(len(places))], things[r.IntN(len(things))])
			switch r.IntN(5) {
			case 0:
				text = "Wow, how was the " + places[r.IntN(len(places))] + "?"
			case 1:
				text = fmt.Sprintf("We saw %d birds near the %s yesterday.", 2+r.IntN(9), places[r.IntN(len(places))])
			}
			in = append(in, TurnInput{
				ID: fmt.Sprintf("D%d:%d", s+1, j+1), SessionID: strconv.Itoa(s + 1), Speaker: []string{"Ava", "Ben"}[speaker],
				Text: text, Time: fmt.Sprintf("2023-%02d-%02dT10:%02d:00Z", 1+day/28%12, 1+day%28, j%60),
			})
		}
		day += 3
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if st.turnVec.Quantized() != turnInt8 || !st.winVec.Quantized() || st.winVec.Rows() != len(st.turns) || len(st.turns) < st.limits.offlineFastRows {
		t.Fatalf("%d turns, %d window vectors, quantized %v, %v: the fast path would not run", len(st.turns), st.winVec.Rows(), st.turnVec.Quantized(), st.winVec.Quantized())
	}
	if runs := len(st.info.RunStart); (runs == len(st.turns)) != single {
		t.Fatalf("%d runs of %d turns, want one per turn %v", runs, len(st.turns), single)
	}
	questions := []string{"What did Ava say about the guitar?", "When did Ben go to Kyoto?", "How many birds did they see near the lake?",
		"Who bought a telescope?", "What happened at the museum?", "Did Ava bake bread?", "Which puzzle did Ben buy at the market?"}
	for _, p := range places {
		questions = append(questions, "What did Ben do at the "+p+"?")
	}
	fast := 0
	for _, qs := range questions {
		st.limits.noOfflineFast = false
		got, err := m.Retrieve(ctx, sp, qs, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st.limits.noOfflineFast = true
		want, err := m.Retrieve(ctx, sp, qs, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Evidence, want.Evidence, func(a, b Evidence) bool {
			return a.Turn.ID == b.Turn.ID && a.Score == b.Score && slices.Equal(a.Sources, b.Sources) && slices.Equal(a.Events, b.Events)
		}) {
			t.Fatalf("%q: evidence differs\nfast %v\nfull %v", qs, got.IDs(), want.IDs())
		}
		if !slices.EqualFunc(got.Trace.Stages, want.Trace.Stages, func(a, b Stage) bool { return a.Name == b.Name && slices.Equal(a.IDs, b.IDs) }) {
			t.Fatalf("%q: stages differ\nfast %v\nfull %v", qs, got.Trace.Stages, want.Trace.Stages)
		}
		if fastUsed(m, sp, qs) {
			fast++
		}
		// Default mode's turn search (scoredTurns) ranks KTurn turns,
		// more than max K: the same on both paths, and with work beside
		// (the event search), which runs once.
		scored, full := scoredWith(m, sp, qs, false), scoredWith(m, sp, qs, true)
		if !slices.Equal(scored, full) || len(scored) != m.opts.KTurn {
			t.Fatalf("%q: scored turns differ\nfast %v\nfull %v", qs, scored, full)
		}
		calls := 0
		withQuery(m, sp, qs, func(st *spaceState, q *query) {
			var beside []string
			for _, h := range q.scoredTurns(m.opts.KTurn, func() { calls++ }) {
				beside = append(beside, fmt.Sprintf("%s %x", st.turns[h.Index].ID, math.Float64bits(h.Score)))
			}
			if !slices.Equal(beside, scored) || calls != 1 {
				t.Fatalf("%q: with work beside, %d calls, scored turns %v, want %v", qs, calls, beside, scored)
			}
		})
		// Other window weights: the turn's cosine alone (0), and both
		// matrices mixed, whose bounds are mixed too.
		for _, w := range []float64{0, 0.5, 0.25} {
			if !turnInt8 {
				break // the turn vectors' bounds need their int8 copy
			}
			tu := offline.DefaultTuning()
			tu.WindowWeight = w
			got, gotFast := selectWith(m, sp, qs, tu, nil, false)
			want, _ := selectWith(m, sp, qs, tu, nil, true)
			if !gotFast {
				t.Errorf("%q, window weight %g: the fast path did not decide", qs, w)
			}
			if got != want {
				t.Fatalf("%q, window weight %g: selection differs\nfast %s\nfull %s", qs, w, got, want)
			}
		}
	}
	// The learned stage (hashing has none: e5's, forced) on both paths
	// alike. Where speakers send bursts it stands down; one turn per run,
	// it re-orders the best turns of some question.
	reordered := 0
	for _, qs := range questions {
		sm := offline.StageFor("minilm:e5-small-v2:")
		got, gotFast := selectWith(m, sp, qs, offline.DefaultTuning(), sm, false)
		want, _ := selectWith(m, sp, qs, offline.DefaultTuning(), sm, true)
		if !gotFast {
			t.Errorf("%q, learned stage: the fast path did not decide", qs)
		}
		if got != want {
			t.Fatalf("%q, learned stage: selection differs\nfast %s\nfull %s", qs, got, want)
		}
		if plain, _ := selectWith(m, sp, qs, offline.DefaultTuning(), nil, true); plain != got {
			reordered++
		}
		// Default mode's turn search too, in the stage's order.
		if got, want := scoredWith(m, sp, qs, false, sm), scoredWith(m, sp, qs, true, sm); !slices.Equal(got, want) || len(got) != m.opts.KTurn {
			t.Fatalf("%q, learned stage: scored turns differ\nfast %v\nfull %v", qs, got, want)
		}
	}
	if single != (reordered > 0) {
		t.Errorf("the learned stage changed %d of %d selections, one turn per run %v (%.2f turns per run)", reordered, len(questions), single, st.info.UnitsPerRun())
	}
	// Every question here has at least KTurn turns with a positive score:
	// the pruned path decides each one, even where max K is below KTurn.
	if fast < len(questions) {
		t.Fatalf("the fast path decided only %d of %d questions", fast, len(questions))
	}
}

// withQuery runs f with a query of question on sp's state, under the
// state's read lock, set up as retrieve sets one up.
func withQuery(m *Memory, sp Space, question string, f func(st *spaceState, q *query)) {
	ctx := context.Background()
	st, _ := m.state(ctx, sp)
	qv, _ := m.embed(ctx, []string{question})
	st.mu.RLock()
	defer st.mu.RUnlock()
	q := &query{st: st, question: question, info: analyzeRules(question), search: question, qv: qv[0], ctx: ctx,
		ro: RetrieveOptions{KTurn: m.opts.KTurn, KEvent: m.opts.KEvent}, trace: &Trace{}, cand: map[string]*Evidence{}}
	q.sc = st.getScratch()
	defer st.putScratch(q.sc)
	f(st, q)
}

// selectWith runs offline selection with tuning tu and the learned stage
// (nil: none) on the pruned path (unless full) and returns the candidates with their sources and scores
// and the stages, rendered, and whether the pruned path decided.
func selectWith(m *Memory, sp Space, question string, tu offline.Tuning, learned *offline.Stage, full bool) (out string, decided bool) {
	withQuery(m, sp, question, func(st *spaceState, q *query) {
		q.learned = learned
		if !full {
			in := q.offlineInput(tu)
			in.Stage, in.Fast = learned, true
			decided = offline.Score(in, &q.sc.off).Pruned
			q.sc.clearLex()
			q.sc.turnLex = false
		}
		st.limits.noOfflineFast = full
		defer func() { st.limits.noOfflineFast = false }()
		q.selectOffline(tu)
		ids := make([]string, 0, len(q.cand))
		for id := range q.cand {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var b strings.Builder
		for _, id := range ids {
			e := q.cand[id]
			fmt.Fprintf(&b, "%s %v %x; ", id, e.Sources, math.Float64bits(e.Score))
		}
		for _, s := range q.trace.Stages {
			fmt.Fprintf(&b, "%s %v; ", s.Name, s.IDs)
		}
		out = b.String()
	})
	return out, decided
}

// scoredWith returns scoredTurns(KTurn) of a question, as ids and
// scores, on the pruned path (unless full).
func scoredWith(m *Memory, sp Space, question string, full bool, learned ...*offline.Stage) (out []string) {
	withQuery(m, sp, question, func(st *spaceState, q *query) {
		if len(learned) > 0 {
			q.learned = learned[0]
		}
		st.limits.noOfflineFast = full
		defer func() { st.limits.noOfflineFast = false }()
		for _, h := range q.scoredTurns(m.opts.KTurn, nil) {
			out = append(out, fmt.Sprintf("%s %x", st.turns[h.Index].ID, math.Float64bits(h.Score)))
		}
	})
	return out
}

// fastUsed reports whether the pruned path decides a question (rather than
// falling back to the full computation).
func fastUsed(m *Memory, sp Space, question string) (ok bool) {
	withQuery(m, sp, question, func(st *spaceState, q *query) {
		in := q.offlineInput(offline.DefaultTuning())
		in.Stage, in.Fast = nil, true
		ok = offline.Score(in, &q.sc.off).Pruned
	})
	return ok
}

// TestDefaultEventsBeside checks default mode's search stage on a space
// whose events are many enough to be searched beside the turns: the event
// search runs beside the turn scoring's serial part (offline.Input.Beside)
// and the retrieval is the one of the two searches one after the other.
func TestDefaultEventsBeside(t *testing.T) {
	ctx := t.Context()
	m, err := Open(ctx, Options{Mode: ModeDefault, MemoryModel: llmfake.NewScripted(), Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.limits.quantizeRows, m.limits.offlineFastRows = 8, 64
	sp := Space{UserID: "beside"}
	in := topicTurns(400)
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events, %d turns", len(st.events), len(st.turns))
	if len(st.events) < st.limits.quantizeRows || len(st.turns) < st.limits.offlineFastRows {
		t.Fatalf("%d events, %d turns: the event search would not run beside", len(st.events), len(st.turns))
	}
	for _, qs := range []string{"What did Ann say about the roses and the sourdough crust?", "When did Bo talk about the regatta or the gallery?", "Who fed the puppy kibble?"} {
		st.limits.quantizeRows = 8
		got, err := m.Retrieve(ctx, sp, qs, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st.limits.quantizeRows = 1 << 30 // the searches one after the other
		want, err := m.Retrieve(ctx, sp, qs, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.IDs(), want.IDs()) || !slices.EqualFunc(got.Trace.Stages, want.Trace.Stages, func(a, b Stage) bool { return a.Name == b.Name && slices.Equal(a.IDs, b.IDs) }) {
			t.Fatalf("%q: beside %v %v\none after the other %v %v", qs, got.IDs(), got.Trace.Stages, want.IDs(), want.Trace.Stages)
		}
		if !slices.ContainsFunc(got.Trace.Stages, func(s Stage) bool { return s.Name == "events" && len(s.IDs) > 0 }) {
			t.Fatalf("%q: no events found: %v", qs, got.Trace.Stages)
		}
	}
}
