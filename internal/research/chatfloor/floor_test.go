package chatfloor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/textnorm"
)

// item is one evidence turn of one question.
type item struct {
	q       int
	related bool    // the question is the memory's own
	gold    bool    // the turn is in the question's evidence
	cos     float64 // e5-small-v2 cosine of question (query) and turn (passage)
	shared  int     // index terms shared with the question
}

// TestFloor builds offline memories (e5-small-v2) of the first sessions of
// RealMem's first two conversations (4 sessions) and LoCoMo's conv-26 and
// conv-30 (6 sessions), asks each its own questions whose evidence is in
// those sessions and everydayRequests, and prints, for the request-level
// rules the floor was chosen among, the share of each that gets memory.
func TestFloor(t *testing.T) {
	if os.Getenv("HIGMEM_CHAT_FLOOR") == "" {
		t.Skip("an experiment: set HIGMEM_CHAT_FLOOR=1 and HIGMEM_DATA_DIR")
	}
	ctx := context.Background()
	root, err := minilm.DefaultRoot()
	if d := os.Getenv("HIGMEM_MODELS_DIR"); d != "" {
		root, err = d, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	emb, err := minilm.Load(minilm.E5ModelDir(root), minilm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var qe embed.QueryEmbedder = emb
	var samples []locomo.Sample
	for _, f := range []struct {
		file     string
		ids      []string
		sessions int
	}{
		{"realmem_dev.json", []string{"realmem-Adeleke_Okonjo-1", "realmem-Kim_Ji_young-1"}, 4},
		{"locomo_dev.json", []string{"conv-26", "conv-30"}, 6},
	} {
		all, err := locomo.Load(filepath.Join(os.Getenv("HIGMEM_DATA_DIR"), f.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if slices.Contains(f.ids, s.ID) {
				samples = append(samples, s.FirstSessions(f.sessions))
			}
		}
	}
	var items []item
	qid := 0
	for _, s := range samples {
		m, err := higmem.Open(ctx, higmem.Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		sp := higmem.Space{UserID: "u"}
		var in []higmem.TurnInput
		for _, se := range s.Sessions {
			for _, tu := range se.Turns {
				in = append(in, higmem.TurnInput{ID: tu.DiaID, SessionID: fmt.Sprint(se.N), Speaker: tu.Speaker, Text: tu.Content(), Time: se.DateTime})
			}
		}
		if _, err := m.Add(ctx, sp, in); err != nil {
			t.Fatal(err)
		}
		type question struct {
			text    string
			gold    []string
			related bool
		}
		var qs []question
		for _, q := range s.QA {
			if q.Category != 5 && s.InSlice(q) && len(q.Evidence) > 0 && len(qs) < 20 {
				qs = append(qs, question{q.Question, q.Evidence, true})
			}
		}
		for _, g := range everydayRequests {
			qs = append(qs, question{g, nil, false})
		}
		for _, q := range qs {
			qid++
			text := q.text
			if len(text) > 8000 {
				text = text[len(text)-8000:]
			}
			res, err := m.Retrieve(ctx, sp, text, higmem.RetrieveOptions{EvidenceTokens: 1000})
			if err != nil {
				t.Fatal(err)
			}
			qv, err := qe.EmbedQuery(ctx, []string{text})
			if err != nil {
				t.Fatal(err)
			}
			texts := make([]string, len(res.Evidence))
			for i, e := range res.Evidence {
				texts[i] = e.Turn.Text
			}
			tv, err := emb.Embed(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			terms := map[string]bool{}
			for _, w := range textnorm.Terms(text) {
				terms[w] = true
			}
			for i, e := range res.Evidence {
				shared := map[string]bool{}
				for _, w := range textnorm.Terms(e.Turn.Text) {
					if terms[w] {
						shared[w] = true
					}
				}
				var dot float64
				for k := range qv[0] {
					dot += float64(qv[0][k]) * float64(tv[i][k])
				}
				items = append(items, item{q: qid, related: q.related, gold: slices.Contains(q.gold, e.Turn.ID), cos: dot, shared: len(shared)})
			}
		}
		m.Close()
		t.Logf("%s: %d turns, %d questions", s.ID, len(in), len(qs))
	}
	byQ := map[int][]item{}
	for _, it := range items {
		byQ[it.q] = append(byQ[it.q], it)
	}
	var gold []float64
	for _, it := range items {
		if it.gold {
			gold = append(gold, it.cos)
		}
	}
	slices.Sort(gold)
	if len(gold) > 0 {
		t.Logf("gold turns' cosines: %.3f to %.3f, median %.3f (%d turns)", gold[0], gold[len(gold)-1], gold[len(gold)/2], len(gold))
	}
	rule := func(name string, gate func([]item) bool) {
		var rel, relIn, goldAll, goldIn, every, everyIn int
		for _, its := range byQ {
			in := gate(its)
			if its[0].related {
				rel++
				for _, it := range its {
					if it.gold {
						goldAll++
						if in {
							goldIn++
						}
					}
				}
				if in {
					relIn++
				}
			} else {
				every++
				if in {
					everyIn++
				}
			}
		}
		t.Logf("| %s | %d / %d | %d / %d | %.0f%% |", name, relIn, rel, goldIn, goldAll, 100*float64(everyIn)/float64(every))
	}
	t.Log("| rule | own questions that get memory | their gold turns kept | everyday requests that get memory |")
	rule("none", func([]item) bool { return true })
	rule("a shared word", func(its []item) bool { return slices.ContainsFunc(its, func(it item) bool { return it.shared > 0 }) })
	rule("two shared words", func(its []item) bool { return slices.ContainsFunc(its, func(it item) bool { return it.shared > 1 }) })
	for _, c := range []float64{0.77, 0.78, 0.79, 0.80} {
		rule(fmt.Sprintf("a shared word, cosine ≥ %.2f", c), func(its []item) bool {
			return slices.ContainsFunc(its, func(it item) bool { return it.shared > 0 && it.cos >= c })
		})
	}
	for _, c := range []float64{0.78, 0.79, 0.80} {
		rule(fmt.Sprintf("best cosine ≥ %.2f", c), func(its []item) bool {
			return slices.ContainsFunc(its, func(it item) bool { return it.cos >= c })
		})
	}
}

// everydayRequests are messages a chat assistant gets that no memory of a
// person bears on (written for this measurement).
var everydayRequests = []string{
	"Write a Python function that reverses a linked list.",
	"What is 17% of 240?",
	"Translate 'where is the train station' into German.",
	"Write a haiku about the sea.",
	"Explain how a TCP handshake works.",
	"Give me a recipe for pancakes.",
	"What is the capital of Australia?",
	"Summarise the plot of Hamlet in three sentences.",
	"How do I center a div in CSS?",
	"What causes the seasons on Earth?",
	"Suggest a name for a coffee shop.",
	"Convert 72 degrees Fahrenheit to Celsius.",
	"What's the difference between a list and a tuple in Python?",
	"Write a polite email declining a meeting invitation.",
	"How many bones are in the human body?",
	"Explain the difference between weather and climate.",
	"Can you fix this SQL: SELECT * FROM users WHERE name = 'bob",
	"What is the time complexity of quicksort?",
	"Tell me a joke about programmers.",
	"Who painted the Mona Lisa?",
	"Write a limerick about a cat.",
	"How does compound interest work?",
	"What is a good stretching routine for the morning?",
	"Explain recursion to a ten-year-old.",
	"List five tips for a job interview.",
	"What's the boiling point of water at high altitude?",
	"How do I make a git branch and push it?",
	"What is photosynthesis?",
	"Draft a tweet announcing a product launch.",
	"What's the plural of cactus?",
	"Write a regular expression that matches an email address.",
	"Explain what a neural network is.",
	"What year did the Berlin Wall fall?",
	"Give me three ideas for a birthday party theme.",
	"How do vaccines work?",
	"What is the speed of light?",
	"Rewrite this sentence to be more formal: gonna be late, sorry.",
	"What are the main causes of inflation?",
	"How do I sort a dictionary by value in Python?",
	"What's a good book for learning statistics?",
	"Describe the water cycle.",
	"Write a short motivational quote.",
	"How do I convert a string to an integer in JavaScript?",
	"What is the tallest mountain in Africa?",
	"Explain the rules of chess briefly.",
	"Write a SQL query to count rows per day.",
	"What does HTTP 404 mean?",
	"Help me plan a three-day trip to Rome.",
}
