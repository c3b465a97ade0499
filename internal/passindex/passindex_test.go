package passindex

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/store"
)

// longTurn returns a turn of paragraphs of 90 numbered words each.
func longTurn(id string, paragraphs int) store.Turn {
	var ps []string
	for i := range paragraphs {
		var ws []string
		for j := range 90 {
			ws = append(ws, fmt.Sprintf("p%dw%d", i, j))
		}
		ps = append(ps, strings.Join(ws, " ")+".")
	}
	return store.Turn{ID: id, Speaker: "Ann", OccurredRaw: "1 May 2023", Text: strings.Join(ps, "\n\n")}
}

func TestOfShortAndLong(t *testing.T) {
	if Of(&store.Turn{ID: "s", Text: "a short turn"}) != nil {
		t.Fatal("a short turn has passages")
	}
	tr := longTurn("t", 4)
	tp := Of(&tr)
	if tp == nil || len(tp.Spans) != 4 {
		t.Fatalf("4 paragraphs of 90 words: %+v, want 4 passages", tp)
	}
	texts := tp.EmbedTexts(&tr)
	if want := "Speaker: Ann. Time: 1 May 2023. Content: p2w0 "; !strings.HasPrefix(texts[2], want) {
		t.Fatalf("passage 2 embeds %.60q, want the prefix %q", texts[2], want)
	}
}

func TestTextsFillAndIndex(t *testing.T) {
	turns := []store.Turn{longTurn("a", 3), {ID: "b", Text: "short"}, longTurn("c", 2)}
	tps, texts := Texts(turns)
	if len(tps) != 2 || len(texts) != 5 {
		t.Fatalf("%d records, %d texts; want 2 and 5", len(tps), len(texts))
	}
	vs := make([][]float32, len(texts))
	for i := range vs {
		vs[i] = []float32{float32(i), -float32(i)}
	}
	recs := Fill(tps, vs, Embedder("e5"))
	if len(recs) != 2 || recs[1].ID != "c" || recs[1].Embedder != "e5+"+Version ||
		!slices.Equal(recs[1].Values, []float32{3, -3, 4, -4}) || !slices.Equal(tps[1].Vector(1, 2), []float32{4, -4}) {
		t.Fatalf("records %+v", recs)
	}
	px := New()
	px.Note(recs, "other")
	if len(px.Pending) != 0 {
		t.Fatal("vectors of another embedder noted")
	}
	px.Note(recs, Embedder("e5"))
	if len(px.Pending) != 2 {
		t.Fatalf("%d pending, want 2", len(px.Pending))
	}
	px.Add(tps[0])
	px.Add(tps[1])
	if px.Count != 5 || len(px.Lex.Scores("p1w3")) != 2 {
		t.Fatalf("count %d, %d passages match p1w3; want 5 and 2", px.Count, len(px.Lex.Scores("p1w3")))
	}
	px.Remove("a")
	if px.Count != 2 || px.ByTurn["a"] != nil || len(px.Lex.Scores("p1w3")) != 1 {
		t.Fatalf("after removing a: count %d", px.Count)
	}
}

func TestChooseRender(t *testing.T) {
	tr := longTurn("t", 4)
	tp := Of(&tr)
	for _, c := range []struct {
		scores []float64
		keep   []int
		begin  string
		end    string
	}{
		{[]float64{0.1, 0.9, 0.85, 0.2}, []int{1, 2}, "… p1w0", "p2w89. …"},
		{[]float64{0.1, 0.85, 0.9, 0.2}, []int{1, 2}, "… p1w0", "p2w89. …"},
		{[]float64{0.9, 0.1, 0.2, 0.85}, []int{0, 3}, "p0w0", "p3w89."},
		{[]float64{0.1, 0.2, 0.5, 0.9}, []int{3}, "… p3w0", "p3w89."},
		{[]float64{0, 0, 0, 0}, []int{0}, "p0w0", "p0w89. …"},
	} {
		best := tp.Choose(func(k int) float64 { return c.scores[k] })
		if c.scores[best[0]] != slices.Max(c.scores) {
			t.Errorf("scores %v: chose %v, not the best passage first", c.scores, best)
		}
		keep := slices.Sorted(slices.Values(best))
		text := tp.Render(keep)
		if !slices.Equal(keep, c.keep) || !strings.HasPrefix(text, c.begin) || !strings.HasSuffix(text, c.end) {
			t.Errorf("scores %v: keep %v, text %.20q…%q; want %v, %q…%q", c.scores, keep, text, text[max(0, len(text)-12):], c.keep, c.begin, c.end)
		}
		if len(c.keep) == 2 && c.keep[1] > c.keep[0]+1 && !strings.Contains(text, " … ") {
			t.Errorf("scores %v: no gap marker between passages apart: %q", c.scores, text)
		}
	}
}
