package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/store/sqlite"
)

// TestLazyAnnotations checks that a space opened without reading its
// annotations (as large spaces are) retrieves exactly what an eagerly
// loaded one does: times shown with evidence, and time cues in scoring.
func TestLazyAnnotations(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := Space{UserID: "lazy"}
	a, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	var in []TurnInput
	for i := range 60 {
		text := []string{"Yesterday I went to the lake with my sister.", "Last week we baked bread.", "How was the museum?",
			"I bought a guitar two days ago.", "We are going to Kyoto next month!"}[i%5]
		in = append(in, TurnInput{ID: fmt.Sprintf("t%d", i), SessionID: strconv.Itoa(i / 10), Speaker: []string{"Ava", "Ben"}[i%2],
			Text: text, Time: fmt.Sprintf("2023-05-%02dT10:00:00Z", 1+i/10)})
	}
	if _, err := a.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	questions := []string{"When did Ava go to the lake?", "What did Ben bake?", "When did they buy a guitar?", "Where are they going next month?"}
	if r, err := a.Retrieve(ctx, sp, questions[0], RetrieveOptions{}); err != nil || !strings.Contains(r.Context, " = ") {
		t.Fatalf("no resolved time in the evidence (%v), the test would check nothing", err)
	}
	for _, eager := range []int{defaultLimits().eagerAnnotations, 0} {
		b, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
		if err != nil {
			t.Fatal(err)
		}
		b.limits.eagerAnnotations = eager
		for _, q := range questions {
			want, err := a.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got.Evidence, want.Evidence, func(x, y Evidence) bool {
				return x.Turn.ID == y.Turn.ID && x.Score == y.Score && slices.Equal(x.Times, y.Times)
			}) || got.Context != want.Context {
				t.Fatalf("eager %d, %q:\ngot  %s\nwant %s", eager, q, got.Context, want.Context)
			}
		}
		bs, _ := b.state(ctx, sp)
		if eager == 0 && !bs.annLoaded.Load() {
			t.Error("a question about time did not load the annotations")
		}
		b.Close()
	}
	a.Close()
}
