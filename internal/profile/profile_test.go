package profile

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2023, 1, 1, 12, 0, 0, 0, time.UTC)

// turns makes one turn per "Speaker: text" line, a day apart.
func turns(lines ...string) []Turn {
	var out []Turn
	for i, l := range lines {
		sp, text, _ := strings.Cut(l, ": ")
		at := t0.AddDate(0, 0, i)
		out = append(out, Turn{ID: fmt.Sprint("t", i+1), Seq: int64(i + 1), Speaker: sp, Text: text, OccurredAt: at, RecordedAt: at.Add(time.Hour)})
	}
	return out
}

// current returns "label=value" for every current value of every profile,
// "Entity.label=value", sorted.
func current(ps []Profile) []string {
	out := []string{}
	for _, p := range ps {
		for _, a := range p.Attributes {
			for _, v := range a.Current() {
				out = append(out, p.Entity+"."+a.Label()+"="+v.Value)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestRules: what one statement yields, and what it must not.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  []string
	}{
		{[]string{"Ana: I live in Porto."}, []string{"Ana.home=Porto"}},
		{[]string{"Ana: We're currently living in Rio de Janeiro."}, []string{"Ana.home=Rio de Janeiro"}},
		{[]string{"Ana: Moved to Lisbon last week!"}, []string{"Ana.home=Lisbon"}},
		{[]string{"Ana: I live in a tiny flat by the sea."}, nil},
		{[]string{"Ana: Do you live in Porto?"}, nil},
		{[]string{"Ana: If I moved to Paris, I would learn French."}, nil},
		{[]string{"Ana: She said I live in Paris, which is wrong."}, nil},
		{[]string{"Ana: I never lived in Madrid."}, nil},
		{[]string{"Ana: I work as a nurse at St Mary Hospital now."}, []string{"Ana.employer=St Mary Hospital", "Ana.job=nurse"}},
		{[]string{"Ana: I work as a software engineer."}, []string{"Ana.job=software engineer"}},
		{[]string{"Ana: I work from home on Fridays."}, nil},
		{[]string{"Jon: Lost my job as a banker yesterday, so I'm starting my own business."}, nil},
		{[]string{"Ana: My dog Max and my cat Luna are friends."}, []string{"Ana.pet=Luna (cat)", "Ana.pet=Max (dog)"}},
		{[]string{"Ana: My girlfriend, Toby and I are going camping."}, nil},
		{[]string{"Ana: My pup Toby is a German Shepherd."}, []string{"Ana.pet=Toby (dog)"}},
		{[]string{"Ana: I adopted a dog two days ago! A three-year-old greyhound called Biscuit."}, []string{"Ana.pet=Biscuit (dog)"}},
		{[]string{"Ana: My boyfriend Leo cooked."}, []string{"Ana.partner=Leo", "Ana.relationship=dating", "Leo.relation=boyfriend of Ana"}},
		{[]string{"Ana: Ran into my ex Raj today."}, nil},
		{[]string{"Ana: My favorite part was the fireworks."}, nil},
		{[]string{"Ana: My favourite food is sushi because it is light."}, []string{"Ana.favorite food=sushi"}},
		{[]string{"Ana: Dune is my favorite book."}, []string{"Ana.favorite book=Dune"}},
		{[]string{"Ana: It is my favorite book."}, nil},
		{[]string{"Ana: My sister Rita lives in Faro and works as a teacher."}, []string{"Rita.home=Faro", "Rita.job=teacher", "Rita.relation=sister of Ana"}},
		{[]string{"Ana: My sister Rita called and I work as a nurse."}, []string{"Ana.job=nurse", "Rita.relation=sister of Ana"}},
		{[]string{"Ana: My daughter Sara's school is great."}, []string{"Sara.relation=daughter of Ana"}},
		{[]string{"Ana: We're planning a trip to Japan.", "Ana: We cancelled the trip."}, nil},
		{[]string{"Ana: I'm planning a trip to Japan.", "Ana: I cancelled my gym membership."}, []string{"Ana.plan=trip to Japan"}},
		{[]string{"Ana: I booked my Lisbon trip for September!"}, []string{"Ana.plan=trip to Lisbon"}},
		{[]string{"Ana: I got the Windrose job!"}, []string{"Ana.employer=Windrose"}},
		{[]string{"Ana: I'm single these days."}, []string{"Ana.relationship=single"}},
		{[]string{"Ana: I am originally from Chengdu."}, []string{"Ana.hometown=Chengdu"}},
		{[]string{"Ana: I moved to Boston.", "Ben: I moved to Denver."}, []string{"Ana.home=Boston", "Ben.home=Denver"}},
	} {
		got := current(Derive(turns(tc.lines...)))
		want := tc.want
		if want == nil {
			want = []string{}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.lines, got, want)
		}
	}
}

// TestHistory: a change closes the old value on both clocks and keeps it;
// ValidAt and RecordedAt answer "true at T" on each clock.
func TestHistory(t *testing.T) {
	ps := Derive(turns("Ana: I live in Porto.", "Ana: I live in Porto, still.", "Ana: We relocated to Lisbon."))
	a, ok := ps[0].Attribute(Home)
	if !ok || len(a.Values) != 2 {
		t.Fatalf("home: %+v", a)
	}
	porto, lisbon := a.Values[0], a.Values[1]
	if porto.Value != "Porto" || !slices.Equal(porto.Evidence, []string{"t1", "t2"}) || porto.ClosedBy != "t3" || porto.Current() ||
		!porto.ValidFrom.Equal(t0) || !porto.ValidTo.Equal(t0.AddDate(0, 0, 2)) ||
		!porto.RecordedFrom.Equal(t0.Add(time.Hour)) || !porto.RecordedTo.Equal(t0.AddDate(0, 0, 2).Add(time.Hour)) {
		t.Errorf("Porto: %+v", porto)
	}
	if lisbon.Value != "Lisbon" || !lisbon.Current() || !lisbon.ValidTo.IsZero() {
		t.Errorf("Lisbon: %+v", lisbon)
	}
	day := func(d int, h time.Duration) time.Time { return t0.AddDate(0, 0, d).Add(h) }
	for _, tc := range []struct {
		at             time.Time
		valid, recorde []string
	}{
		{day(0, -time.Minute), nil, nil},
		{day(0, 30*time.Minute), []string{"Porto"}, nil},
		{day(1, 0), []string{"Porto"}, []string{"Porto"}},
		{day(2, 30*time.Minute), []string{"Lisbon"}, []string{"Porto"}},
		{day(9, 0), []string{"Lisbon"}, []string{"Lisbon"}},
	} {
		var v, r []string
		for _, x := range a.Values {
			if x.ValidAt(tc.at) {
				v = append(v, x.Value)
			}
			if x.RecordedAt(tc.at) {
				r = append(r, x.Value)
			}
		}
		if !slices.Equal(v, tc.valid) || !slices.Equal(r, tc.recorde) {
			t.Errorf("at %s: valid %q recorded %q, want %q and %q", tc.at, v, r, tc.valid, tc.recorde)
		}
	}
}

// TestDeriveOrder: turns are read in conversation order, whatever order
// they come in, and every speaker has a profile.
func TestDeriveOrder(t *testing.T) {
	ts := turns("Ana: I live in Porto.", "Ben: Hello!", "Ana: I moved to Lisbon.")
	slices.Reverse(ts)
	ps := Derive(ts)
	if len(ps) != 2 || ps[0].Entity != "Ana" || ps[1].Entity != "Ben" || len(ps[1].Attributes) != 0 {
		t.Fatalf("profiles %+v", ps)
	}
	if got := current(ps); !slices.Equal(got, []string{"Ana.home=Lisbon"}) {
		t.Errorf("current %q", got)
	}
}
