package jsonx

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"
)

// strictSchemas are the schemas the strict path is checked on: the
// other tests', higmem's select and build_batch schemas, and schemas
// with every type, nullable, untyped values and items, and enums.
var strictSchemas = []string{
	answerSchema, affSchema, idsSchema, metaSchema, judgeSchema, nestedSchema, listSchema,
	selectSchema,
	`{"type":"object","properties":{"turns":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"keywords":{"type":"array","items":{"type":"string"}},"tags":{"type":"array","items":{"type":"string"}},"context":{"type":"string"},"events":{"type":"array","items":{"type":"string"}}},"required":["id","events"]}},"events":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"summary":{"type":"string"}},"required":["id","summary"]}}},"required":["turns"]}`,
	`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},"s":{"type":["string","null"]},"a":{"type":"array"},"u":{},"o":{"type":"object","properties":{"k":{"type":"integer","nullable":true}}},"l":{"type":"array","items":{"type":["integer","string"]}}}}`,
	`{"type":"object","properties":{"e":{"type":"integer","enum":[1,2]},"f":{"type":"array","items":{"type":"string"},"enum":[["a"]]}},"required":["e"]}`,
	keysSchema,
	`{"properties":{"v":{"type":"number"}},"required":["v"]}`,
	`{"type":["object","array"],"properties":{"x":{"type":"string"}}}`,
	`{"type":"object"}`,
}

const keysSchema = `{"type":"object","properties":{"é":{"type":"string"},"A":{"type":"string"},"a":{"type":"string"},"B":{"type":"boolean"}}}`

const selectSchema = `{"type":"object","properties":{"turn_ids":{"type":"array","items":{"type":"string"}}},"required":["turn_ids"]}`

// strictTexts are replies on which the strict path and the tolerant one
// are compared: well-formed ones of every shape, and each way of being
// almost well-formed.
var strictTexts = []string{
	`{"turn_ids":["D1:2","D3:4"]}`, ` {"turn_ids" : [ "D1:2" ,"D3:4" ] }` + "\n", "\ufeff{\"turn_ids\":[]}", "\ufeff \t{\"turn_ids\":[]}\u00a0",
	`{"turn_ids":["D1:2",]}`, `{"turn_ids":["D1:2"],}`, `{"turn_ids":["D1:2"]`, `{"turn_ids":["D1:2"]}}`, `{"turn_ids":["D1:2"]} x`,
	`{"turn_ids":[1, 2]}`, `{"turn_ids":"D1:2"}`, `{"turn_ids":null}`, `{"turn_ids":[null]}`, `{"Turn_IDs":["a"]}`, `{"turn-ids":["a"]}`,
	`{"turn_ids":["a"],"turn_ids":["b"]}`, `{"turn_ids":["a"],"extra":1}`, `{}`, `{"turn_ids":["a\"b"]}`, `{"turn_ids":["a\nb"]}`,
	`{"turn_ids":["a\u0041"]}`, `{"turn_ids":["a/b","<&>","\u00e9"]}`, "{\"turn_ids\":[\"é\",\"日本\",\"\u2028\"]}", "{\"turn_ids\":[\"\u2029x\"]}",
	"{\"turn_ids\":[\"\xff\"]}", "{\"turn_ids\":[\"a\tb\"]}", "{\"turn_ids\":[\"a\x7fb\"]}", "{\"tu\xe9\":[]}", `{"turn_ids":["D1:2"]}` + "\x00",
	`["D1:2"]`, `"D1:2"`, `null`, `{"turn_ids":[["a"]]}`, `{"turn_ids":[{"a":1}]}`, "```json\n{\"turn_ids\":[\"a\"]}\n```",
	"{\"turn_ids\":[\"a\"]} ```json\n{\"turn_ids\":[\"b\"]}\n```", "[\"a\"] ```json\n[\"b\"]\n```", ``, ` `, "\ufeff",
	`{"answer":"Paris"}`, `{"answer":null}`, `{"answer":3}`, `{"answer":true}`, `{"answer":"x","answer":"y"}`, `{"reasoning":"r","affiliations":["e1"]}`,
	`{"affiliations":["e1"],"reasoning":"r"}`, `{"affiliations":["e1"]}`, `{"ids":[1,2,-3,0]}`, `{"ids":[1.0]}`, `{"ids":[1e2]}`, `{"ids":[-0]}`,
	`{"ids":[9223372036854775807]}`, `{"ids":[9223372036854775808]}`, `{"ids":[01]}`, `{"ids":[1.]}`, `{"ids":[.5]}`, `{"ids":[-]}`, `{"ids":[1E+2]}`,
	`{"ids":["1"]}`, `{"ids":[true]}`, `{"is_relevant":true,"updated_keywords":[],"score":0.5}`, `{"is_relevant":false,"score":-1.5e-3,"updated_keywords":["a"]}`,
	`{"is_relevant":"true","updated_keywords":[]}`, `{"is_relevant":tru,"updated_keywords":[]}`, `{"is_relevant":true,"updated_keywords":[],"score":1}`,
	`{"is_relevant":null,"updated_keywords":[]}`, `{"label":"CORRECT"}`, `{"label":"correct"}`, `{"facts":[{"fact":"a","turn":3}]}`,
	`{"facts":[{"turn":3,"fact":"a"},{"fact":"b","turn":4}]}`, `{"facts":[{"fact":"a"}]}`, `{"facts":[{"fact":"a","turn":"3"}]}`, `{"facts":[]}`,
	`{"turns":[{"id":"D1:1","events":["e1"],"keywords":["k"],"tags":[],"context":"c"}],"events":[{"id":"e1","summary":"s","title":"t"}]}`,
	`{"events":[],"turns":[]}`, `{"turns":[{"events":["new:1"],"id":"x"}],"events":[{"summary":"s","id":"new:1"}]}`,
	`{"n":1,"x":2.5,"b":false,"s":null,"a":[1,"x",null,true],"u":"free","o":{"k":null},"l":[1,"a"]}`, `{"l":[1.5]}`, `{"l":[1e3]}`,
	`{"u":[1]}`, `{"u":{"a":1}}`, `{"u":null}`, `{"u":-1.25E7}`, `{"a":[[1]]}`, `{"a":[{}]}`, `{"o":{}}`, `{"o":{"k":7}}`, `{"o":{"k":7.0}}`,
	`{"o":{"z":1}}`, `{"s":1}`, `{"n":"1"}`, `{"n":null}`, `{"b":null}`, `{"x":1,"n":1,"b":true}`,
	`{"e":1}`, `{"e":3}`, `{"e":1,"f":["a"]}`, `{"é":"x","A":"y","a":"z","B":true}`, `{"a":"z","A":"y","é":"x"}`, `{"b":true}`,
	`{"v":1}`, `{"v":"1"}`, `{"x":"a"}`, `[]`, `["a"]`, `{"x":"a","y":1}`, `{"k":[1,{"a":"b"}],"a":"z"}`, `{ }`, `{"a":{}}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}`,
	strings.Repeat(`{"o":`, 40) + `{}` + strings.Repeat(`}`, 40),
}

// TestStrictMatchesFit checks that Parse, strict path first, returns what
// the tolerant path returns (the document or the error), for every
// schema and reply, and that the strict path does answer for the
// well-formed replies (the bench's select replies among them).
func TestStrictMatchesFit(t *testing.T) {
	texts := append(append([]string{}, strictTexts...), benchReplies(t)...)
	answered := 0
	for _, sc := range strictSchemas {
		s, err := schemas.compiled(json.RawMessage(sc))
		if err != nil {
			t.Fatalf("%s: %v", sc, err)
		}
		for _, text := range texts {
			got, err := Parse(text, json.RawMessage(sc))
			want, werr := parseTolerant(text, s)
			if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Errorf("schema %s, reply %q: Parse = %s (%v), tolerant = %s (%v)", sc, text, got, err, want, werr)
			}
			if _, ok := s.strict(text); ok {
				answered++
			}
		}
	}
	sel, _ := schemas.compiled(json.RawMessage(selectSchema))
	for _, r := range benchReplies(t) {
		if _, ok := sel.strict(r); !ok {
			t.Errorf("strict path refused a bench select reply: %s", r)
		}
	}
	// The cases must exercise the strict path, not only its refusals.
	if answered < 40 {
		t.Errorf("the strict path answered %d of the cases", answered)
	}
}

// TestStrictSortsKeys checks the strict path's key order on objects
// written in another order than the canonical one.
func TestStrictSortsKeys(t *testing.T) {
	s, _ := schemas.compiled(json.RawMessage(keysSchema))
	if _, ok := s.strict(`{"é":"x","a":"z","B":true,"A":"y"}`); !ok {
		t.Fatal("the strict path refused keys out of order")
	}
	got, err := Parse(`{ "é" : "x", "a":"z" ,"B":true, "A":"y"}`, json.RawMessage(keysSchema))
	if want := `{"A":"y","B":true,"a":"z","é":"x"}`; err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s", got, err, want)
	}
}

// benchReplies returns the scripted model's select replies recorded from
// the bench (prompttest).
func benchReplies(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, c := range prompttest.BenchSelects(tb) {
		out = append(out, c.Reply)
	}
	return out
}

// FuzzStrict checks that Parse, strict path first, returns what the
// tolerant path returns, on any reply, for each schema of
// strictSchemas.
func FuzzStrict(f *testing.F) {
	for i, s := range []string{
		`{"answer":"x"}`, `[1,2]`, `{"ids": ["1", 2.0]}`, "plain text", `{"facts": [{"fact": "a", "turn": "3"}]}`,
		`{"label": "wrong"}`, `{"is_relevant": "yes", "updated_keywords": "k"}`, `{"keywords": ["a"]}`, "\xe5", "0",
	} {
		f.Add(s, uint8(i))
	}
	for i, s := range strictTexts {
		f.Add(s, uint8(i))
	}
	for _, s := range benchReplies(f) {
		f.Add(s, uint8(7)) // selectSchema
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		sc := strictSchemas[int(which)%len(strictSchemas)]
		s, err := schemas.compiled(json.RawMessage(sc))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(text, json.RawMessage(sc))
		want, werr := parseTolerant(text, s)
		if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("schema %s, reply %q: Parse = %s (%v), tolerant = %s (%v)", sc, text, got, err, want, werr)
		}
	})
}

// BenchmarkParseSelect measures Parse on the bench's select replies.
func BenchmarkParseSelect(b *testing.B) {
	replies := benchReplies(b)
	schema := json.RawMessage(selectSchema)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Parse(replies[i%len(replies)], schema); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSelectTolerant is BenchmarkParseSelect on the tolerant
// path alone (what Parse cost before the strict path).
func BenchmarkParseSelectTolerant(b *testing.B) {
	replies := benchReplies(b)
	s, err := schemas.compiled(json.RawMessage(selectSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := parseTolerant(replies[i%len(replies)], s); err != nil {
			b.Fatal(err)
		}
	}
}
