package higmem

import (
	"context"
	"slices"
	"testing"

	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// TestProfileRecordsMerge: profile records stored in the space (what a
// model stated) join the rules' reading in Profiles, a model's newer value
// closes the rules' older one, and deleting a turn forgets the records
// citing it: one with other evidence is stored again without it, one only
// that turn backed goes, and a record repeating the turn's words goes too.
func TestProfileRecordsMerge(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	m, err := Open(ctx, Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "u"}
	if _, err := m.Add(ctx, sp, []TurnInput{
		{ID: "a", Speaker: "Jo", Text: "I live in Leeds.", Time: "2023-01-05T08:00:00Z"},
		{ID: "b", Speaker: "Jo", Text: "The view from my new flat in York is lovely.", Time: "2023-04-05T08:00:00Z"},
		{ID: "c", Speaker: "Jo", Text: "York has great tea rooms, and I paint on Sundays.", Time: "2023-04-06T08:00:00Z"},
	}); err != nil {
		t.Fatal(err)
	}
	at := func(id string) (store.Turn, bool) {
		st, _ := m.state(ctx, sp)
		st.mu.RLock()
		defer st.mu.RUnlock()
		return st.turn(id)
	}
	york := profilerec.Record("Jo", "home", "York", false, []string{"b", "c"}, at, "llm:test", m.now())
	hobby := profilerec.Record("Jo", "hobby", "painting", false, []string{"c"}, at, "llm:test", m.now())
	// A model that repeated a word only turn b says ("view").
	view := profilerec.Record("Jo", "favorite view", "the view", false, []string{"a"}, at, "llm:test", m.now())
	if york.StatedAt.Day() != 6 {
		t.Errorf("StatedAt %v: want the time of the latest evidence turn, c", york.StatedAt)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		return writeProfileRecords(ctx, tx, sp, []store.ProfileRecord{york, hobby, view}, nil, m.now())
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Profile(ctx, sp, "Jo", ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, past := values([]Profile{p}, "Jo", "home"); !slices.Equal(cur, []string{"York"}) || !slices.Equal(past, []string{"Leeds"}) {
		t.Fatalf("home current %q past %q; want York, with Leeds closed by the model's value", cur, past)
	}
	home, _ := p.Attribute("home")
	if v := home.Values[0]; v.ClosedBy != "b" || v.ClosedByProducer != "llm:test" || !slices.Equal(v.Producers, []string{"rules"}) {
		t.Errorf("Leeds: %+v", v)
	}
	if v := home.Values[1]; !slices.Equal(v.Evidence, []string{"b", "c"}) || !slices.Equal(v.Producers, []string{"llm:test"}) {
		t.Errorf("York: %+v", v)
	}
	if cur, _ := values([]Profile{p}, "Jo", "hobby"); !slices.Equal(cur, []string{"painting"}) {
		t.Errorf("hobby %q", cur)
	}

	if err := m.Delete(ctx, sp, "b"); err != nil {
		t.Fatal(err)
	}
	rs, err := s.ListProfileRecords(ctx, sp, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Attribute+"="+r.Value+" "+r.TurnIDs[0]+"/"+r.ID)
	}
	want := []string{"hobby=painting c/" + hobby.ID, "home=York c/" + york.ID}
	if !slices.Equal(got, want) {
		t.Errorf("records after deleting b: %q, want %q (York rebuilt on c alone, the record repeating b gone)", got, want)
	}
	hist, _ := m.History(ctx, sp, "profile", "")
	var acts []string
	for _, c := range hist {
		acts = append(acts, c.Action+" "+c.ID)
	}
	if !slices.Contains(acts, "update "+york.ID) || !slices.Contains(acts, "delete "+view.ID) {
		t.Errorf("profile history %q: want York's rebuild and the dropped record", acts)
	}
	p, _ = m.Profile(ctx, sp, "Jo", ProfileOptions{})
	if cur, past := values([]Profile{p}, "Jo", "home"); !slices.Equal(cur, []string{"York"}) || !slices.Equal(past, []string{"Leeds"}) {
		t.Errorf("after deleting b: home current %q past %q; York still stated by c", cur, past)
	}
	if err := m.Delete(ctx, sp, "c"); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.ListProfileRecords(ctx, sp, ""); len(rs) != 0 {
		t.Errorf("records citing only deleted turns remain: %+v", rs)
	}
	p, _ = m.Profile(ctx, sp, "Jo", ProfileOptions{})
	if cur, past := values([]Profile{p}, "Jo", "home"); !slices.Equal(cur, []string{"Leeds"}) || len(past) != 0 {
		t.Errorf("after deleting c: home current %q past %q; want Leeds again", cur, past)
	}
}
