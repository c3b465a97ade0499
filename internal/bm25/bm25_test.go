package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func fields(s string) []string { return strings.Fields(s) }

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestScoreFormula(t *testing.T) {
	ix := New(Options{Analyzer: fields})
	ix.Add("d1", "a b")
	ix.Add("d2", "b c c")
	ix.Add("d3", "d")
	// Expected values computed by hand with Python:
	// idf(t) = ln(1 + (N - df + 0.5)/(df + 0.5)), N = 3, avgdl = 2.
	got := ix.Scores("c")
	if len(got) != 1 || !near(got["d2"], 1.1823695104798893) {
		t.Fatalf(`Scores("c") = %v, want d2: 1.1823695104798893`, got)
	}
	hits := ix.Search("b c", 10)
	want := []Hit{{"d2", 1.5725612026838962}, {"d1", 0.47000362924573563}}
	if len(hits) != len(want) {
		t.Fatalf(`Search("b c") = %v, want %v`, hits, want)
	}
	for i := range want {
		if hits[i].ID != want[i].ID || !near(hits[i].Score, want[i].Score) {
			t.Fatalf(`Search("b c") = %v, want %v`, hits, want)
		}
	}
	// A repeated query term counts once per repetition.
	if got := ix.Scores("c c")["d2"]; !near(got, 2*1.1823695104798893) {
		t.Fatalf(`Scores("c c")["d2"] = %v, want twice the single-term score`, got)
	}
}

func TestDefaultAnalyzer(t *testing.T) {
	ix := New(Options{})
	ix.Add("D1:3", "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.")
	ix.Add("D1:4", "Melanie: Wow, that's cool! I'm painting a sunset.")
	ix.Add("D1:5", "Caroline: The transgender stories were so inspiring!")
	hits := ix.Search("When did Caroline go to the support groups?", 2)
	if len(hits) == 0 || hits[0].ID != "D1:3" {
		t.Fatalf("Search = %v, want D1:3 first", hits)
	}
	if got := ix.Search("the and of", 5); got != nil {
		t.Fatalf("stop-word-only query returned %v", got)
	}
}

func TestNoLengthNormalisation(t *testing.T) {
	ix := New(Options{Analyzer: fields, B: -1})
	ix.Add("short", "x")
	ix.Add("long", "x y z w v u")
	s := ix.Scores("x")
	if !near(s["short"], s["long"]) {
		t.Fatalf("with B<0 scores should not depend on length: %v", s)
	}
	ix2 := New(Options{Analyzer: fields})
	ix2.Add("short", "x")
	ix2.Add("long", "x y z w v u")
	if s := ix2.Scores("x"); !(s["short"] > s["long"]) {
		t.Fatalf("with default B the shorter document should score higher: %v", s)
	}
}

func TestTiesByIDAndK(t *testing.T) {
	ix := New(Options{Analyzer: fields})
	for _, id := range []string{"e", "c", "a", "d", "b"} {
		ix.Add(id, "same words here")
	}
	ix.Add("z", "other")
	tests := []struct {
		k    int
		want []string
	}{
		{0, []string{"a", "b", "c", "d", "e"}},
		{-1, []string{"a", "b", "c", "d", "e"}},
		{1, []string{"a"}},
		{3, []string{"a", "b", "c"}},
		{100, []string{"a", "b", "c", "d", "e"}},
	}
	for _, tt := range tests {
		var got []string
		for _, h := range ix.Search("words", tt.k) {
			got = append(got, h.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Search(k=%d) = %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestReplaceAndRemove(t *testing.T) {
	ix := New(Options{Analyzer: fields})
	ix.Add("a", "apple banana")
	ix.Add("b", "banana cherry")
	if ix.Len() != 2 {
		t.Fatalf("Len = %d, want 2", ix.Len())
	}
	ix.Add("a", "cherry date")
	if ix.Len() != 2 {
		t.Fatalf("Len after replace = %d, want 2", ix.Len())
	}
	if got := ix.Search("apple", 5); got != nil {
		t.Fatalf("old text of replaced doc still found: %v", got)
	}
	if got := ix.Search("date", 5); len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("new text of replaced doc not found: %v", got)
	}
	if !ix.Remove("b") || ix.Remove("b") || ix.Remove("nope") {
		t.Fatal("Remove should report presence exactly once")
	}
	if got := ix.Search("banana cherry", 5); len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("after Remove: %v", got)
	}
	ix.Remove("a")
	if ix.Len() != 0 || ix.Search("cherry", 5) != nil || len(ix.Scores("cherry")) != 0 {
		t.Fatal("empty index should find nothing")
	}
	ix.Add("c", "cherry")
	if got := ix.Search("cherry", 5); len(got) != 1 || got[0].ID != "c" {
		t.Fatalf("after emptying and re-adding: %v", got)
	}
}

func TestEmpty(t *testing.T) {
	ix := New(Options{})
	if ix.Search("anything", 3) != nil || len(ix.Scores("anything")) != 0 || ix.Len() != 0 {
		t.Fatal("empty index returned results")
	}
	ix.Add("x", "")
	if ix.Len() != 1 || ix.Search("", 3) != nil {
		t.Fatal("empty document or query mishandled")
	}
}

// refScores is a brute-force BM25 over analysed documents.
func refScores(docs map[string][]string, query []string, k1, b float64) map[string]float64 {
	out := map[string]float64{}
	if len(docs) == 0 {
		return out
	}
	n := float64(len(docs))
	total := 0
	df := map[string]int{}
	for _, terms := range docs {
		total += len(terms)
		seen := map[string]bool{}
		for _, t := range terms {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avgdl := float64(total) / n
	for id, terms := range docs {
		s := 0.0
		for _, q := range query {
			tf := 0
			for _, t := range terms {
				if t == q {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			d := float64(df[q])
			idf := math.Log(1 + (n-d+0.5)/(d+0.5))
			f := float64(tf)
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(terms))/avgdl))
		}
		if s > 0 {
			out[id] = s
		}
	}
	return out
}

func TestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	text := func() string {
		n := r.IntN(8)
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))] // skewed
		}
		return strings.Join(w, " ")
	}
	ix := New(Options{Analyzer: fields})
	ref := map[string][]string{}
	for step := range 5000 {
		id := fmt.Sprintf("doc%03d", r.IntN(400))
		switch op := r.IntN(10); {
		case op < 6:
			s := text()
			ix.Add(id, s)
			ref[id] = fields(s)
		case op < 9:
			_, had := ref[id]
			if got := ix.Remove(id); got != had {
				t.Fatalf("step %d: Remove(%s) = %v, want %v", step, id, got, had)
			}
			delete(ref, id)
		default:
			q := text()
			want := refScores(ref, fields(q), DefaultK1, DefaultB)
			got := ix.Scores(q)
			if len(got) != len(want) {
				t.Fatalf("step %d: Scores(%q) has %d docs, want %d", step, q, len(got), len(want))
			}
			for id, w := range want {
				if !near(got[id], w) {
					t.Fatalf("step %d: Scores(%q)[%s] = %v, want %v", step, q, id, got[id], w)
				}
			}
			hits := ix.Search(q, 7)
			for i := 1; i < len(hits); i++ {
				if better(hits[i], hits[i-1]) {
					t.Fatalf("step %d: Search not sorted: %v", step, hits)
				}
			}
			if len(hits) != min(7, len(want)) {
				t.Fatalf("step %d: Search returned %d hits, want %d", step, len(hits), min(7, len(want)))
			}
			// Every document left out scores no higher than the last hit.
			returned := map[string]bool{}
			for _, h := range hits {
				returned[h.ID] = true
			}
			for id, w := range want {
				if !returned[id] && len(hits) > 0 && w > hits[len(hits)-1].Score+1e-9 {
					t.Fatalf("step %d: Search(%q) left out %s (%v) but kept %v", step, q, id, w, hits[len(hits)-1])
				}
			}
		}
		if ix.Len() != len(ref) {
			t.Fatalf("step %d: Len = %d, want %d", step, ix.Len(), len(ref))
		}
	}
	if ix.compacts == 0 {
		t.Fatal("the random operations never triggered a compaction")
	}
}

func TestCompactionKeepsResults(t *testing.T) {
	ix := New(Options{Analyzer: fields})
	fresh := New(Options{Analyzer: fields})
	texts := make([]string, 3000)
	for i := range texts {
		texts[i] = fmt.Sprintf("w%d w%d w%d common", i%17, i%31, i%7)
		ix.Add(fmt.Sprint(i), texts[i])
	}
	for i := range texts {
		if i%6 != 0 {
			ix.Remove(fmt.Sprint(i))
		} else {
			fresh.Add(fmt.Sprint(i), texts[i])
		}
	}
	if ix.dead*2 >= ix.postings && ix.dead >= 1024 {
		t.Fatalf("no compaction happened: %d dead of %d postings", ix.dead, ix.postings)
	}
	if len(ix.docs) >= len(texts) {
		t.Fatalf("compaction kept %d slots", len(ix.docs))
	}
	for _, q := range []string{"common", "w3 w5", "w16 w30 w6", "nothing"} {
		got, want := ix.Search(q, 0), fresh.Search(q, 0)
		if !slices.Equal(got, want) {
			t.Fatalf("Search(%q) after compaction differs from a fresh index:\n%v\n%v", q, got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	ix := New(Options{})
	for i := range 200 {
		ix.Add(fmt.Sprint(i), fmt.Sprintf("turn %d about hiking painting and camping trip %d", i, i%13))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 2000 {
			id := fmt.Sprint(i % 300)
			if i%3 == 0 {
				ix.Remove(id)
			} else {
				ix.Add(id, fmt.Sprintf("camping %d painting", i))
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				hits := ix.Search("painting camping trip", 5)
				for i := 1; i < len(hits); i++ {
					if better(hits[i], hits[i-1]) {
						t.Errorf("unsorted hits %v", hits)
						return
					}
				}
				for _, s := range ix.Scores("hiking") {
					if !(s > 0) {
						t.Errorf("non-positive score %v", s)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestScoreRefs checks that scores by ref equal Scores exactly, through
// replacement, removal and compaction, and that documents without a ref or
// with a ref beyond dst are skipped.
func TestScoreRefs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := strings.Fields("apple banana cherry date elder fig grape honeydew kiwi lemon mango")
	text := func() string {
		var w []string
		for range 1 + r.IntN(8) {
			w = append(w, words[r.IntN(len(words))])
		}
		return strings.Join(w, " ")
	}
	ix := New(Options{Analyzer: fields})
	refOf := map[string]int{}
	for i := range 3000 {
		num := r.IntN(1500)
		id := fmt.Sprintf("d%d", num)
		switch {
		case i%7 == 0:
			ix.Remove(id)
			delete(refOf, id)
		case i%11 == 0:
			ix.Add(id, text()) // no ref
			delete(refOf, id)
		default:
			ref := num + 500 // unique per id; some beyond dst
			ix.AddRef(id, ref, text())
			refOf[id] = ref
		}
	}
	if ix.compacts == 0 {
		t.Fatal("test did not compact")
	}
	for _, q := range []string{"apple", "fig kiwi", "mango mango lemon", "zzz"} {
		dst := make([]float64, 1800)
		touched := ix.ScoreRefs(q, dst, nil)
		want := ix.Scores(q)
		n := 0
		for id, s := range want {
			ref, ok := refOf[id]
			if !ok || ref >= len(dst) {
				continue
			}
			n++
			if dst[ref] != s {
				t.Fatalf("%q: ref %d (%s) = %v, Scores %v", q, ref, id, dst[ref], s)
			}
		}
		if len(touched) != n {
			t.Fatalf("%q: %d refs touched, want %d", q, len(touched), n)
		}
	}
}

// TestAddBatchMatchesAdd checks that a batch builds the same index as one
// Add per document (ids repeat, so later documents replace earlier ones).
func TestAddBatchMatchesAdd(t *testing.T) {
	docs, queries := synthCorpus(3000)
	var batch []Doc
	one := New(Options{})
	for i, d := range docs {
		id := fmt.Sprintf("d%d", i%2500)
		one.AddRef(id, i, d)
		batch = append(batch, Doc{ID: id, Ref: i, Text: d})
	}
	all := New(Options{})
	all.AddBatch(batch)
	if one.Len() != all.Len() {
		t.Fatalf("Len %d, want %d", all.Len(), one.Len())
	}
	for _, q := range queries[:50] {
		a, b := one.Search(q, 0), all.Search(q, 0)
		if !slices.Equal(a, b) {
			t.Fatalf("%q: batch %v, one by one %v", q, b, a)
		}
		da, db := make([]float64, len(docs)), make([]float64, len(docs))
		one.ScoreRefs(q, da, nil)
		all.ScoreRefs(q, db, nil)
		if !slices.Equal(da, db) {
			t.Fatalf("%q: ScoreRefs differ", q)
		}
	}
}

// TestMapRefs checks that MapRefs moves every ref, drops those mapped to a
// negative, and leaves documents without a ref alone.
func TestMapRefs(t *testing.T) {
	ix := New(Options{Analyzer: fields})
	ix.AddRef("a", 0, "apple")
	ix.AddRef("b", 1, "apple banana")
	ix.Add("c", "apple")
	ix.AddRef("d", 2, "apple")
	ix.MapRefs(func(ref int) int {
		if ref == 1 {
			return -1
		}
		return 10 - ref
	})
	dst := make([]float64, 12)
	touched := ix.ScoreRefs("apple", dst, nil)
	slices.Sort(touched)
	if !slices.Equal(touched, []int{8, 10}) {
		t.Fatalf("refs after MapRefs: %v, want [8 10]", touched)
	}
	want := ix.Scores("apple")
	if dst[10] != want["a"] || dst[8] != want["d"] {
		t.Errorf("scores by ref %v, by id %v", dst, want)
	}
}

// termLensErr reports a posting whose length (term.lens) is not its
// document's (ix.lens, -1 once removed), nil when there is none.
func termLensErr(ix *Index) error {
	for tid, tr := range ix.terms {
		if len(tr.lens) != len(tr.postings) {
			return fmt.Errorf("term %d: %d lengths for %d postings", tid, len(tr.lens), len(tr.postings))
		}
		for j, p := range tr.postings {
			if tr.lens[j] != ix.lens[p.doc] {
				return fmt.Errorf("term %d, posting %d (slot %d): length %d, the document's %d", tid, j, p.doc, tr.lens[j], ix.lens[p.doc])
			}
		}
	}
	return nil
}

// sameState reports how two indexes differ in what they hold (nil when
// they hold the same documents, term ids, postings and counts).
func sameState(a, b *Index) error {
	switch {
	case len(a.docs) != len(b.docs) || !slices.Equal(a.lens, b.lens) || !slices.Equal(a.refs, b.refs) || a.identRefs != b.identRefs:
		return fmt.Errorf("documents, lengths or refs differ")
	case a.live != b.live || a.totalLen != b.totalLen || a.postings != b.postings || a.dead != b.dead:
		return fmt.Errorf("counts differ: %d %d %d %d, %d %d %d %d", a.live, a.totalLen, a.postings, a.dead, b.live, b.totalLen, b.postings, b.dead)
	case a.idBytes != b.idBytes || a.termBytes != b.termBytes:
		return fmt.Errorf("bytes differ")
	case len(a.ids) != len(b.ids) || len(a.termIDs) != len(b.termIDs) || len(a.terms) != len(b.terms):
		return fmt.Errorf("maps or terms differ in size")
	}
	for i := range a.docs {
		x, y := a.docs[i], b.docs[i]
		if x.id != y.id || !slices.Equal(x.terms, y.terms) || a.ids[x.id] != b.ids[y.id] {
			return fmt.Errorf("document %d differs", i)
		}
	}
	for t, tid := range a.termIDs {
		if u, ok := b.termIDs[t]; !ok || u != tid {
			return fmt.Errorf("term %q: id %d and %d", t, tid, u)
		}
	}
	if err := termLensErr(a); err != nil {
		return err
	}
	if err := termLensErr(b); err != nil {
		return err
	}
	for tid := range a.terms {
		if a.terms[tid].df != b.terms[tid].df || !slices.Equal(a.terms[tid].postings, b.terms[tid].postings) || !slices.Equal(a.terms[tid].lens, b.terms[tid].lens) {
			return fmt.Errorf("term %d: postings differ", tid)
		}
	}
	return nil
}

// TestAddBatchFreshMatchesAdd checks that a batch of distinct ids into an
// empty index (addFreshLocked) holds what one AddRef per document holds,
// that both stay equal through later adds, replacements, removals and the
// compactions they cause, and that a batch into a non-empty index or with a
// repeated id takes the document-by-document path with the same result.
func TestAddBatchFreshMatchesAdd(t *testing.T) {
	docs, queries := synthCorpus(3000)
	one, all := New(Options{}), New(Options{})
	var batch []Doc
	for i, d := range docs[:2000] {
		id := fmt.Sprintf("d%d", i)
		ref := i
		if i%7 == 0 {
			ref = -1
		}
		one.AddRef(id, ref, d)
		batch = append(batch, Doc{ID: id, Ref: ref, Text: d})
	}
	all.AddBatch(batch)
	if err := sameState(one, all); err != nil {
		t.Fatalf("after the batch: %v", err)
	}
	for tid, tr := range all.terms {
		if cap(tr.postings) != int(tr.df) {
			t.Fatalf("term %d: %d postings in room for %d: the batch did not size them", tid, tr.df, cap(tr.postings))
		}
	}
	// Into a non-empty index, with ids old and repeated.
	batch = batch[:0]
	for i, d := range docs[2000:] {
		id := fmt.Sprintf("d%d", i%600*3)
		one.AddRef(id, i, d)
		batch = append(batch, Doc{ID: id, Ref: i, Text: d})
	}
	all.AddBatch(batch)
	if err := sameState(one, all); err != nil {
		t.Fatalf("after the second batch: %v", err)
	}
	for i := range 1800 {
		id := fmt.Sprintf("d%d", i)
		one.Remove(id)
		all.Remove(id)
	}
	for i := range 300 {
		id := fmt.Sprintf("n%d", i)
		one.Add(id, docs[i])
		all.Add(id, docs[i])
	}
	if err := sameState(one, all); err != nil {
		t.Fatalf("after removals and adds: %v", err)
	}
	if one.compacts == 0 || one.compacts != all.compacts {
		t.Fatalf("compactions %d and %d, want the same and some", one.compacts, all.compacts)
	}
	for _, q := range queries[:50] {
		if a, b := one.Search(q, 0), all.Search(q, 0); !slices.Equal(a, b) {
			t.Fatalf("%q: batch %v, one by one %v", q, b, a)
		}
	}
	// A repeated id in a batch into an empty index.
	one, all = New(Options{}), New(Options{})
	batch = []Doc{{ID: "a", Ref: 0, Text: docs[0]}, {ID: "b", Ref: 1, Text: docs[1]}, {ID: "a", Ref: 2, Text: docs[2]}}
	for _, d := range batch {
		one.AddRef(d.ID, d.Ref, d.Text)
	}
	all.AddBatch(batch)
	if err := sameState(one, all); err != nil {
		t.Fatalf("a repeated id: %v", err)
	}
	all.AddBatch(nil)
	if err := sameState(one, all); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
}
