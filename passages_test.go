package higmem

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
	"github.com/higmem/higmem/internal/passindex"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// longReply is an assistant's reply of about 450 words in five
// paragraphs on unrelated topics; the paragraph on topic fact (one of
// them) holds the fact.
func longReply(seed int, fact string, at int) string {
	topics := []string{"gardening tomatoes compost watering", "marathon training intervals tempo", "sourdough starter flour hydration",
		"budget spreadsheet savings interest", "guitar chords practice metronome"}
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	var paras []string
	for p, topic := range topics {
		ws := strings.Fields(topic)
		var b strings.Builder
		for s := range 6 {
			if s > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "About %s you could try the %s approach and keep notes on the %s every week", ws[r.IntN(len(ws))], ws[r.IntN(len(ws))], ws[r.IntN(len(ws))])
			if p == at && s == 3 {
				b.WriteString(", " + fact)
			}
			b.WriteString(".")
		}
		paras = append(paras, b.String())
	}
	return strings.Join(paras, "\n\n")
}

// passageChat is a user–assistant chat: short user turns, long assistant
// replies; reply r3 states the fact in its fourth paragraph.
func passageChat() []TurnInput {
	var in []TurnInput
	for i := range 6 {
		in = append(in, TurnInput{ID: fmt.Sprintf("u%d", i), SessionID: "s", Speaker: "user", Text: fmt.Sprintf("Can you help me with plan number %d?", i)})
		fact := "and remember your cousin Wilhelmina keeps a pet iguana called Zorblat"
		if i != 3 {
			fact = "and keep going"
		}
		in = append(in, TurnInput{ID: fmt.Sprintf("r%d", i), SessionID: "s", Speaker: "assistant", Text: longReply(i, fact, 3)})
	}
	return in
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	embed.Embedder
	mu    sync.Mutex
	texts int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts += len(texts)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *countingEmbedder) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}

// storedPassages returns the passage vectors stored for sp by emb.
func storedPassages(t *testing.T, s store.Store, sp Space, emb embed.Embedder) map[string][]float32 {
	t.Helper()
	vs, err := s.ListVectors(context.Background(), sp, store.VectorPassage, passageEmbedder(emb))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, v := range vs {
		out[v.ID] = v.Values
	}
	return out
}

// indexed returns the turn ids the space's passage index holds, sorted.
func indexed(t *testing.T, m *Memory, sp Space) []string {
	t.Helper()
	st, err := m.state(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	px := st.passages()
	px.Lock()
	defer px.Unlock()
	var ids []string
	for id := range px.ByTurn {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TestPassagesStoredDeletedAndCaughtUp follows the passage vectors of
// long turns through their life on every store: written with the turns
// (one record per long turn, a vector per passage, each that of the
// passage's text), read back by a fresh memory without embedding, caught
// up by a memory that loaded the space before, made again under another
// embedder, deleted with their turn and with the space.
func TestPassagesStoredDeletedAndCaughtUp(t *testing.T) {
	ctx := context.Background()
	for name, mk := range windowStores {
		t.Run(name, func(t *testing.T) {
			s, m := windowMemory(t, mk, 4)
			emb := m.opts.Embedder
			sp := Space{UserID: "pass"}
			in := passageChat()
			if _, err := m.Add(ctx, sp, in[:4]); err != nil {
				t.Fatal(err)
			}
			// A second memory on the store loads the space now, and
			// catches up with the rest later.
			other, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(64)})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := other.Retrieve(ctx, sp, "iguana", RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Add(ctx, sp, in[4:]); err != nil {
				t.Fatal(err)
			}
			stored := storedPassages(t, s, sp, emb)
			var want []string
			for _, ti := range in {
				if passage.Long(ti.Text) {
					want = append(want, ti.ID)
				}
			}
			if len(want) != 6 || len(stored) != 6 {
				t.Fatalf("%d long turns, %d passage records stored; want 6 and 6", len(want), len(stored))
			}
			for _, ti := range in[1:2] {
				spans := passage.Split(ti.Text)
				tr := store.Turn{Speaker: ti.Speaker, Text: ti.Text}
				var texts []string
				for _, sp := range spans {
					texts = append(texts, passindex.EmbedText(&tr, sp.Text(ti.Text)))
				}
				vs, err := m.embed(ctx, texts)
				if err != nil {
					t.Fatal(err)
				}
				if got := stored[ti.ID]; !slices.Equal(got, slices.Concat(vs...)) {
					t.Fatalf("turn %s: stored %d values, not the %d passages' vectors", ti.ID, len(got), len(spans))
				}
			}
			for _, mm := range []*Memory{m, other} {
				res, err := mm.Retrieve(ctx, sp, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := indexed(t, mm, sp); !slices.Equal(got, want) {
					t.Fatalf("passage index holds %v, want %v", got, want)
				}
				if !strings.Contains(res.Context, "Zorblat") {
					t.Fatalf("the evidence does not show the passage with the fact:\n%s", res.Context)
				}
			}

			// A fresh memory reads them without embedding a passage.
			ce := &countingEmbedder{Embedder: hashing.New(64)}
			fresh, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: ce})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			if _, err := fresh.Retrieve(ctx, sp, "Who keeps a pet iguana?", RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := ce.count(); n != 1 {
				t.Errorf("a fresh memory embedded %d texts, want only the question", n)
			}
			// Another embedder makes them again, and stores them.
			other2, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(32)})
			if err != nil {
				t.Fatal(err)
			}
			defer other2.Close()
			if _, err := other2.Retrieve(ctx, sp, "Who keeps a pet iguana?", RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := len(storedPassages(t, s, sp, hashing.New(32))); n != 6 {
				t.Errorf("%d passage records of the new embedder stored, want 6", n)
			}

			// Deleted with the turn: from the store and from every index.
			if err := m.Delete(ctx, sp, "r3"); err != nil {
				t.Fatal(err)
			}
			if _, ok := storedPassages(t, s, sp, emb)["r3"]; ok {
				t.Error("the passages of deleted turn r3 are still stored")
			}
			for _, mm := range []*Memory{m, other} {
				res, err := mm.Retrieve(ctx, sp, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(indexed(t, mm, sp), "r3") || strings.Contains(res.Context, "Zorblat") {
					t.Fatalf("deleted turn r3 lives on in the passages:\n%s", res.Context)
				}
			}
			if err := m.DeleteSpace(ctx, sp); err != nil {
				t.Fatal(err)
			}
			for _, e := range []embed.Embedder{emb, hashing.New(32)} {
				if n := len(storedPassages(t, s, sp, e)); n != 0 {
					t.Errorf("%d passage records left after DeleteSpace", n)
				}
			}
		})
	}
}

// TestPassageEvidenceExcerpt checks that a long turn's evidence is the
// passage that matches, marked as an excerpt, with the turn's id,
// speaker and time, and that the budget then holds more turns.
func TestPassageEvidenceExcerpt(t *testing.T) {
	ctx := context.Background()
	_, m := windowMemory(t, windowStores["memstore"], 0)
	sp := Space{UserID: "pass"}
	in := passageChat()
	for i := range in {
		in[i].Time = "2024-05-0" + fmt.Sprint(1+i/3) + "T10:00:00Z"
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{EvidenceTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ex *Evidence
	for i, e := range res.Evidence {
		if e.Turn.ID == "r3" {
			ex = &res.Evidence[i]
		}
		if e.Excerpt == nil && passage.Long(in[slices.IndexFunc(in, func(ti TurnInput) bool { return ti.ID == e.Turn.ID })].Text) {
			t.Errorf("long turn %s is evidence whole", e.Turn.ID)
		}
	}
	if ex == nil {
		t.Fatalf("r3 is not evidence: %v", res.IDs())
	}
	if ex.Excerpt == nil || !strings.Contains(ex.Turn.Text, "Zorblat") || ex.Turn.Speaker != "assistant" || ex.Date == "" {
		t.Fatalf("r3's evidence is not the excerpt with the fact: %+v", ex)
	}
	full := in[7].Text
	if len(ex.Turn.Text) > len(full)/2 {
		t.Errorf("the excerpt holds %d of the turn's %d bytes", len(ex.Turn.Text), len(full))
	}
	for _, p := range ex.Excerpt.Passages {
		if !strings.Contains(ex.Turn.Text, strings.TrimSpace(full[p.Start:p.End])) {
			t.Errorf("passage %d's bytes [%d,%d) are not in the excerpt", p.Ordinal, p.Start, p.End)
		}
	}
	if !strings.Contains(res.Context, "[r3] ") || !strings.Contains(res.Context, "assistant (excerpt of a longer message") {
		t.Errorf("the context does not mark r3 as an excerpt:\n%s", res.Context)
	}
	if len(res.Evidence) < 4 {
		t.Errorf("%d evidence turns within 1,000 tokens, want the budget spent on excerpts", len(res.Evidence))
	}
}

// TestPassageBudget checks, over many questions and budgets, that the
// evidence never costs more than the budget and always holds the
// top-ranked passage: the best passage of the best turn.
func TestPassageBudget(t *testing.T) {
	ctx := context.Background()
	_, m := windowMemory(t, windowStores["memstore"], 0)
	sp := Space{UserID: "pass"}
	var in []TurnInput
	for i := range 12 {
		in = append(in, TurnInput{ID: fmt.Sprintf("u%d", i), Speaker: "user", Text: fmt.Sprintf("My note %d: I like topic %d.", i, i)})
		in = append(in, TurnInput{ID: fmt.Sprintf("r%d", i), Speaker: "assistant",
			Text: longReply(i, fmt.Sprintf("and the code word for plan %d is Q%dX", i, i*7), i%5)})
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{120, 200, 300, 500, 1000, 2000} {
		for i := range 12 {
			question := fmt.Sprintf("What is the code word for plan %d?", i)
			res, err := m.Retrieve(ctx, sp, question, RetrieveOptions{EvidenceTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for i := range res.Evidence {
				used += evidenceTokens(&res.Evidence[i])
			}
			if used > budget {
				t.Fatalf("budget %d, %q: the evidence costs %d", budget, question, used)
			}
			// The top-ranked turn and its best passage, as retrieval
			// ranks them.
			st, _ := m.state(ctx, sp)
			st.mu.RLock()
			q := m.newQuery(ctx, st, question, RetrieveOptions{KTurn: m.opts.KTurn, KEvent: m.opts.KEvent, EvidenceTokens: budget}, &recorder{})
			if err := m.analyze(ctx, q); err != nil {
				t.Fatal(err)
			}
			q.setFilters()
			if err := m.selectCandidates(ctx, q); err != nil {
				t.Fatal(err)
			}
			var top *Evidence
			for _, e := range q.cand {
				if top == nil || e.Score > top.Score || e.Score == top.Score && e.Turn.Seq < top.Turn.Seq {
					top = e
				}
			}
			tp, keep := q.passageScores().excerptChoice(st.pos[top.Turn.ID])
			st.mu.RUnlock()
			st.putScratch(q.sc)
			found := false
			for _, e := range res.Evidence {
				if e.Turn.ID != top.Turn.ID {
					continue
				}
				found = true
				if tp == nil {
					continue
				}
				// Its best passage, whole, or cut to fit when the budget
				// is under one passage.
				best := tp.Spans[keep[0]].Text(tp.Text)
				n := min(len(best), 30, max(0, len(e.Turn.Text)-20))
				if e.Excerpt == nil || !slices.ContainsFunc(e.Excerpt.Passages, func(p Passage) bool { return p.Ordinal == keep[0] }) ||
					!strings.Contains(e.Turn.Text, best[:n]) {
					t.Errorf("budget %d, %q: top turn %s shows %q, not its best passage", budget, question, top.Turn.ID, e.Turn.Text[:min(60, len(e.Turn.Text))])
				}
			}
			if !found {
				t.Fatalf("budget %d, %q: the top-ranked turn %s is not evidence (%v)", budget, question, top.Turn.ID, res.IDs())
			}
		}
	}
}

// TestPassagesNoneOnShortTurns checks that the LoCoMo and FriendsQA
// conversations in the repository have no long turn: no passage is made
// or stored, and their retrieval is what it was.
func TestPassagesNoneOnShortTurns(t *testing.T) {
	ctx := context.Background()
	samples, err := locomo.Load("eval/locomo/testdata/tiny_locomo.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/friendsqa/s01e21-scene1.json")
	if err != nil {
		t.Fatal(err)
	}
	var fq struct{ Turns []TurnInput }
	if err := json.Unmarshal(raw, &fq); err != nil || len(fq.Turns) == 0 {
		t.Fatalf("friendsqa scene: %d turns, %v", len(fq.Turns), err)
	}
	convs := map[string][]TurnInput{"friendsqa": fq.Turns}
	for _, s := range samples {
		var turns []TurnInput
		for _, tr := range s.Turns() {
			turns = append(turns, TurnInput{ID: tr.DiaID, Speaker: tr.Speaker, Text: tr.Content()})
		}
		convs["locomo-"+s.ID] = turns
	}
	for name, turns := range convs {
		s, m := windowMemory(t, windowStores["memstore"], 0)
		sp := Space{UserID: "short"}
		if _, err := m.Add(ctx, sp, turns); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Retrieve(ctx, sp, "What did they talk about?", RetrieveOptions{}); err != nil {
			t.Fatal(err)
		}
		if n := len(storedPassages(t, s, sp, m.opts.Embedder)); n != 0 || len(indexed(t, m, sp)) != 0 {
			t.Errorf("%s: %d passage records stored, %d turns indexed; want none", name, n, len(indexed(t, m, sp)))
		}
		for _, tr := range turns {
			if passage.Long(tr.Text) {
				t.Errorf("%s: turn %s is long (%d words)", name, tr.ID, passage.Count(tr.Text))
			}
		}
	}
}

// TestPassageMaxTurn checks that a turn of the documented maximum size is
// accepted and cut into passages.
func TestPassageMaxTurn(t *testing.T) {
	ctx := context.Background()
	s, m := windowMemory(t, windowStores["memstore"], 0)
	sp := Space{UserID: "big"}
	var b strings.Builder
	for b.Len() < DefaultMaxTurnBytes-200 {
		fmt.Fprintf(&b, "Sentence number %d of a very long reply goes on. ", b.Len())
	}
	text := b.String()
	if _, err := m.Add(ctx, sp, []TurnInput{{ID: "big", Speaker: "assistant", Text: text}}); err != nil {
		t.Fatal(err)
	}
	want := len(passage.Split(text)) * m.opts.Embedder.Dim()
	if got := len(storedPassages(t, s, sp, m.opts.Embedder)["big"]); got != want || want == 0 {
		t.Fatalf("stored %d passage values for the 64 KiB turn, want %d", got, want)
	}
	res, err := m.Retrieve(ctx, sp, "What is sentence number 3000?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Evidence) != 1 || res.Evidence[0].Excerpt == nil {
		t.Fatalf("evidence %+v, want an excerpt of the big turn", res.IDs())
	}
}

// recordingModel records the user prompts of one kind a model receives.
type recordingModel struct {
	llm.Model
	kind    string
	mu      sync.Mutex
	prompts []string
}

func (r *recordingModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.SchemaName == r.kind {
		r.mu.Lock()
		for _, msg := range req.Messages {
			if msg.Role == "user" {
				r.prompts = append(r.prompts, msg.Content)
			}
		}
		r.mu.Unlock()
	}
	return r.Model.Complete(ctx, req)
}

// TestPassagesInSelectPrompt checks that default mode's select call shows
// a long turn as the excerpt the evidence shows (the scripted model then
// picks it by the words of the matching passage).
func TestPassagesInSelectPrompt(t *testing.T) {
	ctx := context.Background()
	rec := &recordingModel{Model: llmfake.NewScripted(), kind: "select"}
	m, err := Open(ctx, Options{Mode: ModeDefault, Store: memstore.New(), Embedder: hashing.New(64), MemoryModel: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "sel"}
	if _, err := m.Add(ctx, sp, passageChat()); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	prompts := slices.Clone(rec.prompts)
	rec.mu.Unlock()
	if len(prompts) != 1 {
		t.Fatalf("%d select calls, want 1", len(prompts))
	}
	p := prompts[0]
	if !strings.Contains(p, "Zorblat") || !strings.Contains(p, "(excerpt of a longer message") {
		t.Fatalf("the select prompt does not show r3's matching passage as an excerpt:\n%s", p)
	}
	// No long turn is shown whole: the first paragraph of r3 is not in
	// the prompt.
	r3 := passageChat()[7].Text
	first := r3[:strings.Index(r3, "\n\n")]
	if strings.Contains(p, first) {
		t.Errorf("the select prompt shows r3 whole")
	}
	i := slices.Index(res.IDs(), "r3")
	if i < 0 || res.Evidence[i].Excerpt == nil || !strings.Contains(res.Evidence[i].Turn.Text, "Zorblat") {
		t.Fatalf("the model's selection does not give r3's excerpt as evidence: %v", res.IDs())
	}
}

// TestPassagesMissingAreMade checks that a space whose long turns have no
// stored passage vectors (written by a build without passages, or through
// a path that did not make them) gets them on its first question: embedded
// once and stored, then read back by the next memory without embedding.
func TestPassagesMissingAreMade(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	sp := Space{UserID: "old"}
	old, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(64), Ablations: Ablations{NoPassages: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Add(ctx, sp, passageChat()); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if n := len(storedPassages(t, s, sp, hashing.New(64))); n != 0 {
		t.Fatalf("%d passage records stored without passages", n)
	}
	for round, want := range []int{1 + 6*5, 1} {
		ce := &countingEmbedder{Embedder: hashing.New(64)}
		m, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: ce})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Retrieve(ctx, sp, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		if got := ce.count(); got != want {
			t.Errorf("round %d: embedded %d texts, want %d", round, got, want)
		}
		if n := len(storedPassages(t, s, sp, ce)); n != 6 || !strings.Contains(res.Context, "Zorblat") {
			t.Fatalf("round %d: %d passage records stored, want 6; context:\n%s", round, n, res.Context)
		}
	}
}

// TestPassageFeatures checks that the offline scorer gets each turn's
// best passage scores as plain inputs, and the turn's own scores as Lex
// and Dense.
func TestPassageFeatures(t *testing.T) {
	ctx := context.Background()
	_, m := windowMemory(t, windowStores["memstore"], 0)
	sp := Space{UserID: "pass"}
	if _, err := m.Add(ctx, sp, passageChat()); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	q := m.newQuery(ctx, st, "Who keeps a pet iguana called Zorblat?", RetrieveOptions{KTurn: 10, KEvent: 5, EvidenceTokens: 1000}, &recorder{})
	defer st.putScratch(q.sc)
	if err := m.analyze(ctx, q); err != nil {
		t.Fatal(err)
	}
	f := q.offlineInput(offline.DefaultTuning()).Features(true)
	r3 := st.pos["r3"]
	if len(f.PassageLex) != len(st.turns) || len(f.PassageDense) != len(st.turns) || f.PassageLex[r3] <= 0 || f.PassageDense[r3] == 0 {
		t.Fatalf("passage inputs %v / %v, want r3's (%d) set", f.PassageLex, f.PassageDense, r3)
	}
	if f.PassageLex[st.pos["u3"]] != 0 || f.PassageDense[st.pos["u3"]] != 0 {
		t.Errorf("short turn u3 has passage inputs")
	}
	if f.PassageLex[r3] <= f.PassageLex[st.pos["r2"]] {
		t.Errorf("r3's best passage BM25 %v is not above r2's %v", f.PassageLex[r3], f.PassageLex[st.pos["r2"]])
	}
}

// TestPassageBudgetTurnsBeforeSecondPassages: the budget goes to more
// turns before it goes to second passages. At a budget that holds every
// selected turn with one passage each (the longer of the two it would
// show), every turn is there and no turn is left out, although their
// two-passage excerpts would not all fit; with room to spare (2,000
// tokens) the excerpts show their second passages.
func TestPassageBudgetTurnsBeforeSecondPassages(t *testing.T) {
	ctx := context.Background()
	_, m := windowMemory(t, windowStores["memstore"], 0)
	sp := Space{UserID: "pass2"}
	var in []TurnInput
	for i := range 12 {
		in = append(in, TurnInput{ID: fmt.Sprintf("u%d", i), Speaker: "user", Text: fmt.Sprintf("My note %d: I like sourdough starter %d.", i, i)})
		// Every paragraph is about the same things: passages score
		// alike, so excerpts show two.
		var paras []string
		for p := range 4 {
			paras = append(paras, strings.Repeat(fmt.Sprintf("For the sourdough starter %d keep the flour and the hydration steady, paragraph %d. ", i, p), 6))
		}
		in = append(in, TurnInput{ID: fmt.Sprintf("r%d", i), Speaker: "assistant", Text: strings.Join(paras, "\n\n")})
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	question := "How do I keep my sourdough starter flour hydration steady?"
	wide, err := m.Retrieve(ctx, sp, question, RetrieveOptions{EvidenceTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := m.state(ctx, sp)
	narrow, two := 0, 0
	for _, e := range wide.Evidence {
		if e.Excerpt == nil || len(e.Excerpt.Passages) < 2 {
			narrow += evidenceTokens(&e)
			continue
		}
		two++
		st.mu.RLock()
		tp := passindex.Of(&st.turns[st.pos[e.Turn.ID]])
		st.mu.RUnlock()
		c := 0
		for _, p := range e.Excerpt.Passages {
			one := e
			one.Turn.Text, one.Excerpt = excerptText(tp, []int{p.Ordinal})
			c = max(c, evidenceTokens(&one))
		}
		narrow += c
	}
	if two == 0 || len(wide.Evidence) < 3 {
		t.Fatalf("setup: %d evidence, %d with two passages at 2,000 tokens", len(wide.Evidence), two)
	}
	res, err := m.Retrieve(ctx, sp, question, RetrieveOptions{EvidenceTokens: narrow})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.IDs(), wide.IDs()) {
		t.Errorf("budget %d: evidence %v, want every turn of %v (notes %v)", narrow, res.IDs(), wide.IDs(), res.Trace.Notes)
	}
	used := 0
	for _, e := range res.Evidence {
		used += evidenceTokens(&e)
	}
	if used > narrow {
		t.Errorf("budget %d: the evidence costs %d", narrow, used)
	}
}
