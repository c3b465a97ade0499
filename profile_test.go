package higmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/llm/llmtest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// kuSet is testdata/profiles/knowledge_update.json: dialogues in which a
// fact about a person changes, with the values expected now and before.
type kuSet struct {
	Cases []kuCase `json:"cases"`
}

type kuCase struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	// Undecidable, when set, says why the rules cannot see the change.
	Undecidable string      `json:"rules_undecidable"`
	Turns       []TurnInput `json:"turns"`
	Expect      []kuExpect  `json:"expect"`
}

type kuExpect struct {
	Entity    string   `json:"entity"`
	Attribute string   `json:"attribute"`
	Current   []string `json:"current"`
	Past      []string `json:"past"`
	AsOf      []struct {
		Time   time.Time `json:"time"`
		Values []string  `json:"values"`
	} `json:"as_of"`
}

func loadKU(t *testing.T) kuSet {
	t.Helper()
	b, err := os.ReadFile("testdata/profiles/knowledge_update.json")
	if err != nil {
		t.Fatal(err)
	}
	var s kuSet
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) < 30 {
		t.Fatalf("%d cases, want at least 30", len(s.Cases))
	}
	return s
}

// kuProfiles builds a memory of one case (offline unless o says
// otherwise) and returns its profiles.
func kuProfiles(t *testing.T, c kuCase, o Options, po ProfileOptions) []Profile {
	t.Helper()
	ctx := context.Background()
	if o.Mode == "" {
		o.Mode = ModeOffline
	}
	m, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "ku"}
	if _, err := m.Add(ctx, sp, c.Turns); err != nil {
		t.Fatal(err)
	}
	ps, err := m.Profiles(ctx, sp, po)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// values returns the values of the attribute labelled label in the
// profile of entity, split into current and past.
func values(ps []Profile, entity, label string) (current, past []string) {
	current, past = []string{}, []string{}
	p, ok := profile.Find(ps, entity)
	if !ok {
		return
	}
	a, ok := p.Attribute(label)
	if !ok {
		return
	}
	for _, v := range a.Values {
		if v.Current() {
			current = append(current, v.Value)
		} else {
			past = append(past, v.Value)
		}
	}
	return
}

// TestKnowledgeUpdate runs the knowledge-update set. Offline, for every
// case the rules can decide, the current and past values (and the values
// as of the times asked) are the expected ones; the cases marked
// rules_undecidable (the change is implied, never stated) are counted, and
// what the rules say of them is logged. In default mode with the scripted
// model every case is checked, the whole dialogue in one batch and one
// turn per batch (where the model sees earlier facts only as what memory
// knows): the scripted fake is ours (llm/llmtest/people.go), so this proves
// the plumbing (the build call's people facts, their checks, storage and
// merging across sources), not what a real model reads.
func TestKnowledgeUpdate(t *testing.T) {
	s := loadKU(t)
	for _, mode := range []struct {
		name string
		opts func() Options
		all  bool // check the cases rules cannot decide too
	}{
		{"offline", func() Options { return Options{Mode: ModeOffline} }, false},
		{"default", func() Options { return Options{Mode: ModeDefault, MemoryModel: llmtest.NewScripted()} }, true},
		{"default-batch1", func() Options { return Options{Mode: ModeDefault, MemoryModel: llmtest.NewScripted(), BatchSize: 1} }, true},
	} {
		t.Run(mode.name, func(t *testing.T) { runKU(t, s, mode.opts, mode.all) })
	}
}

// runKU checks the knowledge-update set with memories opened with opts;
// with all, the cases the rules cannot decide too.
func runKU(t *testing.T, s kuSet, opts func() Options, all bool) {
	sortS := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	decided, undecidable, checks, byModel := 0, 0, 0, 0
	for _, c := range s.Cases {
		t.Run(c.Name, func(t *testing.T) {
			ps := kuProfiles(t, c, opts(), ProfileOptions{})
			if c.Undecidable != "" {
				undecidable++
				if !all {
					for _, e := range c.Expect {
						cur, _ := values(ps, e.Entity, e.Attribute)
						t.Logf("undecidable (%s): %s %s: rules say current %q, the dialogue says %q", c.Undecidable, e.Entity, e.Attribute, cur, e.Current)
					}
					return
				}
			}
			decided++
			for _, e := range c.Expect {
				checks++
				cur, past := values(ps, e.Entity, e.Attribute)
				if d := cmp.Diff(e.Current, cur, sortS); d != "" {
					t.Errorf("%s %s current (-want +got):\n%s", e.Entity, e.Attribute, d)
				}
				if d := cmp.Diff(e.Past, past, sortS); d != "" {
					t.Errorf("%s %s past (-want +got):\n%s", e.Entity, e.Attribute, d)
				}
				if p, ok := profile.Find(ps, e.Entity); ok {
					if a, ok := p.Attribute(e.Attribute); ok && slices.ContainsFunc(a.Values, func(v ProfileValue) bool {
						return slices.ContainsFunc(v.Producers, func(p string) bool { return p != "rules" }) || v.ClosedByProducer != "" && v.ClosedByProducer != "rules"
					}) {
						byModel++
					}
				}
				for _, at := range e.AsOf {
					checks++
					cur, past := values(kuProfiles(t, c, opts(), ProfileOptions{AsOf: at.Time}), e.Entity, e.Attribute)
					got := append(cur, past...)
					if d := cmp.Diff(at.Values, got, sortS, cmpopts.EquateEmpty()); d != "" {
						t.Errorf("%s %s as of %s (-want +got):\n%s", e.Entity, e.Attribute, at.Time.Format(time.DateOnly), d)
					}
				}
			}
		})
	}
	if all && byModel == 0 {
		t.Errorf("no expected attribute holds a value a model stated or closed: the model's facts did not reach the profiles")
	}
	t.Logf("knowledge update: %d cases, %d checked (%d checks, %d attributes with a model's value), %d marked undecidable by rules",
		len(s.Cases), decided, checks, byModel, undecidable)
}

// TestProfilesDeleteForgets: a deleted turn's facts leave the profile, and
// the value it had closed holds again.
func TestProfilesDeleteForgets(t *testing.T) {
	ctx := context.Background()
	m, err := Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "u"}
	_, err = m.Add(ctx, sp, []TurnInput{
		{ID: "a", Speaker: "Ana", Text: "I live in Porto with my cat Luna.", Time: "2023-01-01T10:00:00Z"},
		{ID: "b", Speaker: "Ana", Text: "I moved to Lisbon!", Time: "2023-03-01T10:00:00Z"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Profile(ctx, sp, "ana", ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, past := values([]Profile{p}, "Ana", "home"); !slices.Equal(cur, []string{"Lisbon"}) || !slices.Equal(past, []string{"Porto"}) {
		t.Fatalf("before delete: home current %q past %q", cur, past)
	}
	if err := m.Delete(ctx, sp, "b"); err != nil {
		t.Fatal(err)
	}
	ps, err := m.Profiles(ctx, sp, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, past := values(ps, "Ana", "home"); !slices.Equal(cur, []string{"Porto"}) || len(past) != 0 {
		t.Errorf("after deleting b: home current %q past %q, want Porto and nothing past", cur, past)
	}
	for _, p := range ps {
		for _, a := range p.Attributes {
			for _, v := range a.Values {
				if slices.Contains(v.Evidence, "b") || v.ClosedBy == "b" {
					t.Errorf("%s %s %q still points to deleted turn b", p.Entity, a.Label(), v.Value)
				}
			}
		}
	}
	if err := m.Delete(ctx, sp, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Profile(ctx, sp, "Ana", ProfileOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("profile of a speaker with no turns left: err = %v, want ErrNotFound", err)
	}
}

// TestProfilesCache: profiles are derived once per state of the turns, and
// again after an add.
func TestProfilesCache(t *testing.T) {
	ctx := context.Background()
	m, _ := Open(ctx, Options{})
	defer m.Close()
	sp := Space{UserID: "u"}
	if _, err := m.Add(ctx, sp, []TurnInput{{Speaker: "Bo", Text: "I work at Acme."}}); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Profiles(ctx, sp, ProfileOptions{}); err != nil {
		t.Fatal(err)
	}
	c1 := st.profileCache.Load()
	if _, err := m.Profile(ctx, sp, "Bo", ProfileOptions{}); err != nil {
		t.Fatal(err)
	}
	if c2 := st.profileCache.Load(); c2 != c1 {
		t.Error("a second read derived the profiles again")
	}
	if _, err := m.Add(ctx, sp, []TurnInput{{Speaker: "Bo", Text: "I started working at Initech."}}); err != nil {
		t.Fatal(err)
	}
	p, err := m.Profile(ctx, sp, "Bo", ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, past := values([]Profile{p}, "Bo", "employer"); !slices.Equal(cur, []string{"Initech"}) || !slices.Equal(past, []string{"Acme"}) {
		t.Errorf("after an add: employer current %q past %q", cur, past)
	}
	if st.profileCache.Load() == c1 {
		t.Error("the cache survived an add")
	}
	// The last turn deleted and another stored under its id (same count,
	// same sequence number): the profile follows.
	if err := m.Delete(ctx, sp, "t2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, sp, []TurnInput{{ID: "t2", Speaker: "Bo", Text: "I started working at Globex."}}); err != nil {
		t.Fatal(err)
	}
	p, err = m.Profile(ctx, sp, "Bo", ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, past := values([]Profile{p}, "Bo", "employer"); !slices.Equal(cur, []string{"Globex"}) || !slices.Equal(past, []string{"Acme"}) {
		t.Errorf("after replacing t2: employer current %q past %q", cur, past)
	}
}

// TestProfileErrors covers the argument errors.
func TestProfileErrors(t *testing.T) {
	ctx := context.Background()
	m, _ := Open(ctx, Options{})
	sp := Space{UserID: "u"}
	if _, err := m.Profile(ctx, sp, " ", ProfileOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty entity: %v", err)
	}
	if _, err := m.Profile(ctx, sp, "Nobody", ProfileOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown entity: %v", err)
	}
	if _, err := m.Profiles(ctx, Space{}, ProfileOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty space: %v", err)
	}
	m.Close()
	if _, err := m.Profiles(ctx, sp, ProfileOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

// whereDoesAnaLive asks where Ana lives of a memory opened with o holding
// movedAmidFiller(n).
func whereDoesAnaLive(t *testing.T, o Options, n int) *Result {
	t.Helper()
	ctx := context.Background()
	m, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	sp := Space{UserID: "u"}
	if _, err := m.Add(ctx, sp, movedAmidFiller(n)); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "Where does Ana live these days?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// movedAmidFiller is Ana's old home ("home-old"), n turns of filler, and
// her move ("home-new").
func movedAmidFiller(n int) []TurnInput {
	turns := []TurnInput{{ID: "home-old", Speaker: "Ana", Text: "I live in Porto.", Time: "2023-01-01T10:00:00Z"}}
	for i := range n {
		turns = append(turns, TurnInput{ID: fmt.Sprint("f", i), Speaker: []string{"Ana", "Ben"}[i%2],
			Text: fmt.Sprintf("Filler talk number %d about gardens, weather and where the best coffee is.", i), Time: "2023-02-01T10:00:00Z"})
	}
	return append(turns, TurnInput{ID: "home-new", Speaker: "Ana", Text: "Big news, we relocated to Lisbon.", Time: "2023-03-01T10:00:00Z"})
}

// TestRetrieveProfileEvidence: offline retrieval of a question about a
// person's current home adds the turn that states it, and not the one that
// stated the old home; with Ablations.NoProfiles it does not.
func TestRetrieveProfileEvidence(t *testing.T) {
	for _, off := range []bool{false, true} {
		res := whereDoesAnaLive(t, Options{Ablations: Ablations{NoProfiles: off}}, 40)
		ids := res.IDs()
		if got := slices.Contains(ids, "home-new"); got == off {
			t.Errorf("NoProfiles=%v: evidence %v, home-new included = %v", off, ids, got)
		}
		if !off && !slices.Contains(res.Trace.Stage("profile"), "home-new") || slices.Contains(res.Trace.Stage("profile"), "home-old") {
			t.Errorf("NoProfiles=%v: profile stage %v", off, res.Trace.Stage("profile"))
		}
	}
}

// TestProfileEvidenceKeepsMaxK: offline, a profile turn the selection did
// not hold joins the evidence in place of the least relevant turn, so that
// K stays within the stopping rule's maximum (offline.DefaultTuning().MaxK,
// 9) instead of going one over it; the trace says what was left out.
func TestProfileEvidenceKeepsMaxK(t *testing.T) {
	ctx := context.Background()
	maxK := offline.DefaultTuning().MaxK
	for _, off := range []bool{false, true} {
		m, err := Open(ctx, Options{Ablations: Ablations{NoProfiles: off}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		sp := Space{UserID: "u"}
		turns := []TurnInput{{ID: "home-new", Speaker: "Ana", Text: "Big news, we relocated to Lisbon.", Time: "2023-03-01T10:00:00Z"}}
		for i := range 30 { // as relevant as each other: the selection keeps maxK of them
			turns = append(turns, TurnInput{ID: fmt.Sprint("f", i), Speaker: "Ben",
				Text: fmt.Sprintf("Where does Ana live these days, I wonder, number %d.", i), Time: "2023-04-01T10:00:00Z"})
		}
		if _, err := m.Add(ctx, sp, turns); err != nil {
			t.Fatal(err)
		}
		res, err := m.Retrieve(ctx, sp, "Where does Ana live these days?", RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids := res.IDs()
		if len(ids) != maxK {
			t.Errorf("NoProfiles=%v: K %d, want the maximum %d: %v", off, len(ids), maxK, ids)
		}
		if slices.Contains(ids, "home-new") == off {
			t.Errorf("NoProfiles=%v: evidence %v", off, ids)
		}
		if !off && !slices.ContainsFunc(res.Trace.Notes, func(n string) bool { return strings.Contains(n, "left out for the profile") }) {
			t.Errorf("no note of the turn left out: %v", res.Trace.Notes)
		}
		if !off && slices.Contains(ids, fmt.Sprint("f", maxK-1)) {
			t.Errorf("the least relevant selected turn (the latest of equals) was kept: %v", ids)
		}
	}
}

// TestRetrieveProfileEvidenceLLM: in default and paper mode the turns
// stating a person's current home join what the model is shown (the select
// call's turns; the filter's union) as the "profile" stage, and the old
// home's turn does not; Ablations.NoProfiles turns it off.
func TestRetrieveProfileEvidenceLLM(t *testing.T) {
	for _, mode := range []Mode{ModeDefault, ModePaper} {
		for _, off := range []bool{false, true} {
			res := whereDoesAnaLive(t, Options{Mode: mode, MemoryModel: llmtest.NewScripted(), Ablations: Ablations{NoProfiles: off}, KTurn: 3, KEvent: 2}, 30)
			stage, shown := res.Trace.Stage("profile"), res.Trace.Stage("shown")
			if mode == ModePaper {
				shown = res.Trace.Stage("union")
			}
			switch {
			case off && stage != nil:
				t.Errorf("%s, NoProfiles: profile stage %v", mode, stage)
			case !off && (!slices.Equal(stage, []string{"home-new"}) || !slices.Contains(shown, "home-new")):
				t.Errorf("%s: profile stage %v, shown %v; want home-new shown to the model", mode, stage, shown)
			}
		}
	}
}
