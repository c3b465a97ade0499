package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFiltersMatch(t *testing.T) {
	md := map[string]string{"topic": "travel", "lang": "en", "note": "visa needed"}
	for _, tc := range []struct {
		name string
		f    Filters
		want bool
	}{
		{"none", nil, true},
		{"eq", Filters{"topic": Eq("travel")}, true},
		{"eq other", Filters{"topic": Eq("pets")}, false},
		{"eq missing", Filters{"x": Eq("")}, false},
		{"ne", Filters{"lang": Ne("fr")}, true},
		{"ne same", Filters{"lang": Ne("en")}, false},
		{"ne missing", Filters{"x": Ne("a")}, true},
		{"in", Filters{"lang": In("fr", "en")}, true},
		{"in not", Filters{"lang": In("fr", "de")}, false},
		{"in missing", Filters{"x": In("a")}, false},
		{"contains", Filters{"note": Contains("visa")}, true},
		{"contains not", Filters{"note": Contains("passport")}, false},
		{"contains missing", Filters{"x": Contains("")}, false},
		{"and", Filters{"topic": Eq("travel"), "lang": Ne("en")}, false},
		{"two ops", Filters{"lang": {Eq: Eq("en").Eq, Ne: Ne("fr").Ne}}, true},
	} {
		if got := tc.f.Match(md); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestParseFilters(t *testing.T) {
	f, err := ParseFilters(`{"topic":"travel","lang":{"ne":"fr","in":["en","de"]},"note":{"contains":"visa"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if *f["topic"].Eq != "travel" || *f["lang"].Ne != "fr" || len(f["lang"].In) != 2 || *f["note"].Contains != "visa" {
		t.Fatalf("%+v", f)
	}
	// Round trip through the client's encoding.
	b, _ := json.Marshal(f)
	g, err := ParseFilters(string(b))
	if err != nil || len(g) != 3 || !g.Match(map[string]string{"topic": "travel", "lang": "en", "note": "visa"}) {
		t.Fatalf("round trip %s: %v", b, err)
	}
	if f, err := ParseFilters(" "); err != nil || f != nil {
		t.Fatal("blank filters")
	}
	for in, msg := range map[string]string{
		`{"a":{"gt":"1"}}`:        `unknown operator "gt"`,
		`{"a":{}}`:                "empty condition",
		`{"a":{"in":[]}}`:         "at least one",
		`{"a":{"in":"x"}}`:        "array of strings",
		`{"a":{"in":[1]}}`:        "array of strings",
		`{"a":{"eq":1}}`:          "want a string",
		`{"a":5}`:                 "string or an object",
		`{"a":null}`:              "string or an object",
		`{"a":[]}`:                "string or an object",
		`{"":"x"}`:                "empty metadata key",
		`[]`:                      "cannot unmarshal",
		`null`:                    "want a JSON object",
		`{"a":"x"} {}`:            "trailing",
		`{"a":`:                   "unexpected EOF",
		`{"a":{"eq":"x"`:          "unexpected EOF",
		`{"a":{"eq":"x","eq":1}}`: "want a string",
	} {
		_, err := ParseFilters(in)
		if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", in, err, msg)
		}
	}
	many := Filters{}
	for i := range 40 {
		many[string(rune('a'+i))] = Eq("x")
	}
	if err := many.Validate(); err == nil {
		t.Error("40 conditions accepted")
	}
}

func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{"", "  ", `{"a":"b"}`, `{"a":{"in":["x","y"],"ne":"z"}}`, `{"a":{"contains":""}}`, `{}`, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseFilters(s)
		if err != nil {
			if !errors.Is(err, ErrBadFilter) {
				t.Fatalf("error not wrapping ErrBadFilter: %v", err)
			}
			return
		}
		if err := fl.Validate(); err != nil {
			t.Fatalf("parsed filters do not validate: %v", err)
		}
		if fl == nil {
			return // blank input
		}
		b, err := json.Marshal(fl)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseFilters(string(b))
		if err != nil || len(again) != len(fl) {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		md := map[string]string{"a": "x"}
		if fl.Match(md) != again.Match(md) {
			t.Fatal("round trip changed the meaning")
		}
	})
}
