package profile

import (
	"slices"
	"testing"
)

// history renders every value of one attribute of one entity as
// "value[evidence] producers closed-by/closer", in order.
func history(t *testing.T, ps []Profile, entity, label string) []string {
	t.Helper()
	var out []string
	for _, p := range ps {
		if p.Entity != entity {
			continue
		}
		a, ok := p.Attribute(label)
		if !ok {
			return nil
		}
		for _, v := range a.Values {
			s := v.Value + "[" + joinIDs(v.Evidence) + "] " + joinIDs(v.Producers)
			if !v.Current() {
				s += " closed " + v.ClosedBy + "/" + v.ClosedByProducer
			}
			out = append(out, s)
		}
	}
	return out
}

func joinIDs(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += id
	}
	return s
}

const llm = "llm:default:p2"

func TestBuildMerges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		stmts []Statement
		ent   string
		label string
		want  []string
	}{
		{
			name:  "a model's newer value closes the rules' older one",
			lines: []string{"Jo: I live in Leeds.", "Jo: The view from my new flat in York is lovely."},
			stmts: []Statement{{Entity: "Jo", Attribute: "home", Value: "York", Turns: []string{"t2"}, Producer: llm}},
			ent:   "Jo", label: "home",
			want: []string{"Leeds[t1] rules closed t2/" + llm, "York[t2] " + llm},
		},
		{
			name:  "the same value from both is one value with both producers",
			lines: []string{"Ana: I live in Porto.", "Ana: Porto is lovely in May."},
			stmts: []Statement{{Entity: "Ana", Attribute: "City", Value: "porto", Turns: []string{"t2", "t1"}, Producer: llm}},
			ent:   "Ana", label: "home",
			want: []string{"Porto[t1,t2] " + llm + ",rules"},
		},
		{
			name:  "at one turn the rules' reading wins and the model's value stays, closed",
			lines: []string{"Ana: I moved to Lisbon."},
			stmts: []Statement{{Entity: "Ana", Attribute: "home", Value: "Portugal", Turns: []string{"t1"}, Producer: llm}},
			ent:   "Ana", label: "home",
			want: []string{"Lisbon[t1] rules", "Portugal[t1] " + llm + " closed t1/rules"},
		},
		{
			name:  "an ended statement closes the value it names",
			lines: []string{"Ada: My boyfriend Raj is visiting.", "Ada: Ran into my ex Raj at the mall."},
			stmts: []Statement{{Entity: "Ada", Attribute: "partner", Value: "Raj", Ended: true, Turns: []string{"t2"}, Producer: llm}},
			ent:   "Ada", label: "partner",
			want: []string{"Raj[t1] rules closed t2/" + llm},
		},
		{
			name:  "a model's pet name finds the rules' pet",
			lines: []string{"Hal: My parrot Kiwi talks all day.", "Hal: Kiwi lives with my aunt now."},
			stmts: []Statement{{Entity: "Hal", Attribute: "pets", Value: "Kiwi", Ended: true, Turns: []string{"t2"}, Producer: llm}},
			ent:   "Hal", label: "pet",
			want: []string{"Kiwi (parrot)[t1] rules closed t2/" + llm},
		},
		{
			name:  "an ended value never known is kept as past",
			lines: []string{"Ned: Greece can wait."},
			stmts: []Statement{{Entity: "Ned", Attribute: "plan", Value: "trip to Greece", Ended: true, Turns: []string{"t1"}, Producer: llm}},
			ent:   "Ned", label: "plan",
			want: []string{"trip to Greece[t1] " + llm + " closed t1/" + llm},
		},
		{
			name:  "a model's statement of a turn does not change how the rules read it",
			lines: []string{"Di: My cat Luna sleeps all day.", "Di: We renamed our cat Nova, it suits her better."},
			stmts: []Statement{
				{Entity: "Di", Attribute: "pet", Value: "Nova (cat)", Turns: []string{"t2"}, Producer: llm},
				{Entity: "Di", Attribute: "pet", Value: "Nova", Ended: true, Turns: []string{"t2"}, Producer: llm},
			},
			ent: "Di", label: "pet",
			want: []string{"Luna (cat)[t1] rules closed t2/rules", "Nova (cat)[t2] " + llm + ",rules"},
		},
		{
			name:  "a model's own key holds several values, closed only when ended",
			lines: []string{"Mia: I paint.", "Mia: I also climb.", "Mia: I gave up painting."},
			stmts: []Statement{
				{Entity: "Mia", Attribute: "Hobby", Value: "painting", Turns: []string{"t1"}, Producer: llm},
				{Entity: "Mia", Attribute: "hobby", Value: "climbing", Turns: []string{"t2"}, Producer: llm},
				{Entity: "Mia", Attribute: "hobby", Value: "Painting", Ended: true, Turns: []string{"t3"}, Producer: llm},
			},
			ent: "Mia", label: "hobby",
			want: []string{"painting[t1] " + llm + " closed t3/" + llm, "climbing[t2] " + llm},
		},
		{
			name:  "a first name finds the speaker; evidence of deleted turns is skipped",
			lines: []string{"Joey Tribbiani: hi"},
			stmts: []Statement{
				{Entity: "Joey", Attribute: "job", Value: "actor", Turns: []string{"gone", "t1"}, Producer: llm},
				{Entity: "Joey", Attribute: "job", Value: "chef", Turns: []string{"gone"}, Producer: llm},
			},
			ent: "Joey Tribbiani", label: "job",
			want: []string{"actor[t1] " + llm},
		},
		{
			name:  "a person only a model names gets a profile",
			lines: []string{"Ana: Dana from work is moving to Oslo."},
			stmts: []Statement{{Entity: "Dana", Attribute: "home", Value: "Oslo", Turns: []string{"t1"}, Producer: llm}},
			ent:   "Dana", label: "home",
			want: []string{"Oslo[t1] " + llm},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := Build(turns(tc.lines...), tc.stmts)
			if got := history(t, ps, tc.ent, tc.label); !slices.Equal(got, tc.want) {
				t.Errorf("%s.%s:\n got %q\nwant %q", tc.ent, tc.label, got, tc.want)
			}
		})
	}
}

func TestBuildSummary(t *testing.T) {
	ps := Build(turns("Ana: I live in Porto.", "Ana: I got a cat."), []Statement{
		{Entity: "Ana", Attribute: SummaryAttribute, Value: "Ana lives in Porto [t1] and has a cat [t2].", Turns: []string{"t1", "t2"}, Producer: "llm:paper:p2"},
	})
	if len(ps) != 1 || ps[0].Summary == nil || ps[0].Summary.Text != "Ana lives in Porto [t1] and has a cat [t2]." ||
		!slices.Equal(ps[0].Summary.Evidence, []string{"t1", "t2"}) || ps[0].Summary.Producer != "llm:paper:p2" {
		t.Fatalf("profiles = %+v", ps)
	}
	if ps := Derive(turns("Ana: I live in Porto.")); ps[0].Summary != nil {
		t.Errorf("rules wrote a summary: %+v", ps[0].Summary)
	}
}

func TestNormalizeLabel(t *testing.T) {
	for raw, want := range map[string]string{
		"home": "home", " Occupation ": "job", "favourite_food": "favorite food", "Favorite Books": "favorite book",
		"hobby": "hobby", "Pets": "pet", "home-city": "home", "marital status": "relationship", "shoe size": "shoe size",
	} {
		if got, ok := NormalizeLabel(raw); !ok || got != want {
			t.Errorf("NormalizeLabel(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"", "  ", "favorite", "what she likes to eat most", "home!", "a/b", "x" + string(make([]byte, 40))} {
		if got, ok := NormalizeLabel(raw); ok {
			t.Errorf("NormalizeLabel(%q) = %q, ok; want refused", raw, got)
		}
	}
}
