package higmem_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// paperTurns change topic on every turn, so that with the scripted model
// every turn starts a new event and the previous one's people get their
// profile step.
var paperTurns = []higmem.TurnInput{
	{ID: "p1", Speaker: "Hal", Text: "My parrot Kiwi talks all day.", Time: "2022-01-05T08:00:00Z"},
	{ID: "p2", Speaker: "Mo", Text: "Football season starts soon, I bought tickets.", Time: "2022-01-05T08:01:00Z"},
	{ID: "p3", Speaker: "Hal", Text: "Kiwi lives with my aunt on her farm now, she has more space.", Time: "2022-05-05T08:00:00Z"},
	{ID: "p4", Speaker: "Mo", Text: "Rain again this morning in the valley.", Time: "2022-05-05T08:01:00Z"},
}

// TestPaperProfiles: with Options.PaperProfiles, paper mode runs the
// reference's profile step (one decision on the ended event, one update
// per person chosen), stores what it states as profile records, and the
// profile merges them: the implied departure of Kiwi, which the rules do
// not read, closes the pet. Without the option no profile call is made.
func TestPaperProfiles(t *testing.T) {
	for _, on := range []bool{true, false} {
		ctx := t.Context()
		fake := llmtest.NewScripted()
		s := memstore.New()
		m := open(t, higmem.Options{Mode: higmem.ModePaper, MemoryModel: fake, Store: s, Embedder: hashing.New(64), PaperProfiles: on})
		if _, err := m.Add(ctx, sp, paperTurns); err != nil {
			t.Fatal(err)
		}
		calls := fake.Calls()
		recs, err := s.ListProfileRecords(ctx, sp, "")
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Profile(ctx, sp, "Hal", higmem.ProfileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pets, _ := p.Attribute("pet")
		if !on {
			if calls["profile_decide"]+calls["profile_update"] != 0 || len(recs) != 0 || p.Summary != nil {
				t.Errorf("profiles off: calls %v, %d records, summary %+v", calls, len(recs), p.Summary)
			}
			if len(pets.Values) != 1 || !pets.Values[0].Current() {
				t.Errorf("profiles off: pets %+v; the rules alone keep Kiwi", pets.Values)
			}
			continue
		}
		// Events change on p2, p3, p4: three decisions; Hal is updated
		// after p1's and p3's events, Mo after p2's.
		if calls["profile_decide"] != 3 || calls["profile_update"] != 3 {
			t.Errorf("calls %v: want 3 decisions and 3 updates", calls)
		}
		if p.Summary == nil || !strings.Contains(p.Summary.Text, "Kiwi") || p.Summary.Producer == "" || len(p.Summary.Evidence) == 0 {
			t.Errorf("Hal's summary %+v", p.Summary)
		}
		if len(pets.Values) != 1 || pets.Values[0].Current() || pets.Values[0].ClosedBy != "p3" ||
			!strings.HasPrefix(pets.Values[0].ClosedByProducer, "llm:paper:") || !slices.Contains(pets.Values[0].Producers, "rules") ||
			len(pets.Values[0].Producers) != 2 {
			t.Errorf("Hal's pets %+v: want Kiwi stated by rules and model, closed at p3 by the model", pets.Values)
		}
		for _, r := range recs {
			if !strings.HasPrefix(r.Producer, "llm:paper:") || len(r.TurnIDs) == 0 {
				t.Errorf("record %+v", r)
			}
		}
		if !slices.ContainsFunc(recs, func(r store.ProfileRecord) bool { return r.Attribute == store.ProfileSummary && r.Entity == "Mo" }) {
			t.Errorf("no summary of Mo among %+v", recs)
		}
		// Delete forgets: p3 gone, Kiwi is Hal's again.
		if err := m.Delete(ctx, sp, "p3"); err != nil {
			t.Fatal(err)
		}
		p, _ = m.Profile(ctx, sp, "Hal", higmem.ProfileOptions{})
		pets, _ = p.Attribute("pet")
		if len(pets.Values) != 1 || !pets.Values[0].Current() {
			t.Errorf("after deleting p3: pets %+v", pets.Values)
		}
		if p.Summary != nil && slices.Contains(p.Summary.Evidence, "p3") {
			t.Errorf("summary still cites p3: %+v", p.Summary)
		}
	}
}

// TestPaperProfilesAcrossReloads: the profile step finds the previous
// turn's event from what is stored, so memory built one turn per process
// (each state loaded afresh from the store) holds the same profile records
// as memory built in one.
func TestPaperProfilesAcrossReloads(t *testing.T) {
	records := func(perTurn bool) []string {
		s := memstore.New()
		o := higmem.Options{Mode: higmem.ModePaper, MemoryModel: llmtest.NewScripted(), Store: s, Embedder: hashing.New(64), PaperProfiles: true}
		if perTurn {
			for _, tu := range paperTurns {
				if _, err := open(t, o).Add(t.Context(), sp, []higmem.TurnInput{tu}); err != nil {
					t.Fatal(err)
				}
			}
		} else if _, err := open(t, o).Add(t.Context(), sp, paperTurns); err != nil {
			t.Fatal(err)
		}
		rs, err := s.ListProfileRecords(t.Context(), sp, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID+" "+r.Value)
		}
		return out
	}
	one, reloaded := records(false), records(true)
	if len(one) == 0 || !slices.Equal(one, reloaded) {
		t.Errorf("records built in one memory:\n%q\nbuilt one turn per memory:\n%q", one, reloaded)
	}
}
