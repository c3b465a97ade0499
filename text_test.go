package higmem

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

// TestRenderContextMatchesFormat checks renderContext and evidenceTokens
// against their definitions by fmt and string joins, on random evidence:
// unknown dates, excerpts, resolved times, captions, odd characters.
func TestRenderContextMatchesFormat(t *testing.T) {
	reference := func(ev []Evidence) string {
		var b strings.Builder
		for _, e := range ev {
			date := e.Date
			if date == "" {
				date = "unknown date"
			}
			fmt.Fprintf(&b, "[%s] %s | %s%s: %s", e.Turn.ID, date, e.Turn.Speaker, excerptMarker(e.Excerpt), content(e.Turn))
			if len(e.Times) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(e.Times, "; "))
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	for range 500 {
		var ev []Evidence
		for range r.IntN(6) {
			e := Evidence{Turn: store.Turn{ID: pick("D1:3", "t-7", "", "100%", "a b"), Speaker: pick("Ann", "", "Bo %s"),
				Text: pick("hello", "  padded  ", "", "100% sure; really (yes)", "line\nbreak")}, Date: pick("", "7 May 2023", "sometime")}
			if r.IntN(3) == 0 {
				e.Turn.Attachments = []store.Attachment{{Kind: pick("image", "video", ""), Caption: pick("a dog", "")}}
			}
			if r.IntN(3) == 0 {
				e.Excerpt = &Excerpt{Passages: make([]Passage, 1+r.IntN(2)), Of: 3 + r.IntN(3)}
			}
			for range r.IntN(4) {
				e.Times = append(e.Times, pick("yesterday = 6 May 2023", "", "last week = 1–7 May 2023"))
			}
			if r.IntN(4) == 0 {
				e.Turn.OccurredAt = time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC)
			}
			ev = append(ev, e)
			want := estimateTokens(e.Turn.Speaker+excerptMarker(e.Excerpt)+e.Date+content(e.Turn)) + 8
			if got := evidenceTokens(&e); got != want {
				t.Fatalf("evidenceTokens(%+v) = %d, want %d", e, got, want)
			}
		}
		if got, want := renderContext(ev), reference(ev); got != want {
			t.Fatalf("renderContext:\n%q\nwant\n%q", got, want)
		}
	}
}

// withinBudget returns nil, not an empty list, when there is no evidence
// (a Result's Evidence marshals as null, as it always did), and keeps the
// first evidence however long.
func TestWithinBudgetNoEvidenceIsNil(t *testing.T) {
	q := &query{st: &spaceState{pos: map[string]int{"a": 0}}, pmDone: true, ro: RetrieveOptions{EvidenceTokens: 50}}
	var tr Trace
	if out := q.withinBudget(nil, &tr); out != nil {
		t.Errorf("no evidence: %#v, want nil", out)
	}
	long := &Evidence{Turn: store.Turn{ID: "a", Speaker: "Ann", Text: strings.Repeat("word ", 200)}}
	if out := q.withinBudget([]*Evidence{long}, &tr); len(out) != 1 || len(out[0].Turn.Text) >= 1000 {
		t.Errorf("one long evidence: %d kept, text of %d bytes", len(out), len(out[0].Turn.Text))
	}
}

// chronological sorts evidence as slices.SortFunc with compareTurns does,
// ties (same time and Seq) in the same places, and leaves the input as
// it was.
func TestChronologicalMatchesSortFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	base := time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC)
	for range 3000 {
		n := r.IntN(40)
		var ev []Evidence
		for i := range n {
			e := Evidence{Turn: store.Turn{ID: fmt.Sprint(i), Seq: int64(r.IntN(12))}, Score: float64(i)}
			if r.IntN(4) > 0 {
				e.Turn.OccurredAt = base.Add(time.Duration(r.IntN(5)) * time.Hour)
			}
			ev = append(ev, e)
		}
		in := slices.Clone(ev)
		want := slices.Clone(ev)
		slices.SortFunc(want, func(a, b Evidence) int { return compareTurns(a.Turn, b.Turn) })
		got := chronological(ev)
		if len(got) != len(want) || (got == nil) != (want == nil) {
			t.Fatalf("%d evidence: got %d (nil %v)", n, len(got), got == nil)
		}
		for i := range got {
			if got[i].Turn.ID != want[i].Turn.ID {
				t.Fatalf("%d evidence: order %v, SortFunc %v", n, evidenceIDs(got), evidenceIDs(want))
			}
		}
		if n >= 2 && !slices.EqualFunc(ev, in, func(a, b Evidence) bool { return a.Turn.ID == b.Turn.ID }) {
			t.Fatalf("input reordered")
		}
	}
}

func evidenceIDs(ev []Evidence) []string {
	var out []string
	for _, e := range ev {
		out = append(out, e.Turn.ID)
	}
	return out
}

// turnIndex finds a turn by id, the first that has it, and only a turn
// shown.
func TestTurnIndex(t *testing.T) {
	turns := []store.Turn{{ID: "D1:1"}, {ID: "D1:2"}, {ID: "x"}, {ID: "D1:2"}}
	for id, want := range map[string]int{"D1:1": 0, "D1:2": 1, "x": 2, "D1:3": -1, "": -1, "d1:1": -1} {
		if got := turnIndex(turns, id); got != want {
			t.Errorf("turnIndex(%q) = %v, want %v", id, got, want)
		}
	}
	if turnIndex(nil, "x") != -1 {
		t.Error("found a turn among none")
	}
}
