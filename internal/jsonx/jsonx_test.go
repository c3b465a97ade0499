package jsonx

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

const (
	answerSchema = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`
	affSchema    = `{"type":"object","properties":{"reasoning":{"type":"string"},"affiliations":{"type":"array","items":{"type":"string"}}},"required":["reasoning","affiliations"]}`
	idsSchema    = `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}}},"required":["ids"],"additionalProperties":false}`
	metaSchema   = `{"type":"object","properties":{"is_relevant":{"type":"boolean"},"score":{"type":"number"},"updated_keywords":{"type":"array","items":{"type":"string"}}},"required":["is_relevant","updated_keywords"]}`
	judgeSchema  = `{"type":"object","properties":{"label":{"type":"string","enum":["CORRECT","WRONG"]}},"required":["label"]}`
	nestedSchema = `{"type":"object","properties":{"facts":{"type":"array","items":{"type":"object","properties":{"fact":{"type":"string"},"turn":{"type":"integer"}},"required":["fact","turn"]}}},"required":["facts"]}`
	listSchema   = `{"type":"array","items":{"type":"string"}}`
)

// TestParseNasty is a table of replies real models produce. want is the
// canonical document; wantErr is a substring of the error (and the error
// must then wrap ErrSchema or ErrNoJSON).
func TestParseNasty(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		text    string
		want    string
		wantErr string
	}{
		{"clean", answerSchema, `{"answer":"Paris"}`, `{"answer":"Paris"}`, ""},
		{"whitespace and BOM", answerSchema, "\ufeff  \n {\"answer\": \"Paris\"}\n\n", `{"answer":"Paris"}`, ""},
		{"json fence", affSchema, "```json\n{\"reasoning\": \"same trip\", \"affiliations\": [\"e1\"]}\n```", `{"affiliations":["e1"],"reasoning":"same trip"}`, ""},
		{"bare fence", answerSchema, "```\n{\"answer\": \"7 May 2023\"}\n```", `{"answer":"7 May 2023"}`, ""},
		{"sure here is", answerSchema, "Sure! Here is the JSON you asked for:\n\n{\"answer\": \"Caroline\"}\n\nLet me know if you need anything else.", `{"answer":"Caroline"}`, ""},
		{"prose with brackets before", affSchema, "Based on the turns [1] and [2], here is my output: {\"reasoning\": \"x\", \"affiliations\": [\"NEW_EVENT\"]}", `{"affiliations":["NEW_EVENT"],"reasoning":"x"}`, ""},
		{"trailing commas", affSchema, `{"reasoning": "r", "affiliations": ["a", "b",],}`, `{"affiliations":["a","b"],"reasoning":"r"}`, ""},
		{"missing comma", affSchema, "{\"reasoning\": \"r\"\n \"affiliations\": [\"a\" \"b\"]}", `{"affiliations":["a","b"],"reasoning":"r"}`, ""},
		{"single quotes", answerSchema, `{'answer': 'it\'s "fine"'}`, `{"answer":"it's \"fine\""}`, ""},
		{"unquoted keys", answerSchema, `{answer: "Boston"}`, `{"answer":"Boston"}`, ""},
		{"python literals", metaSchema, `{"is_relevant": True, "updated_keywords": [], "score": None}`, ``, `$.score: expected number, got null`},
		{"python literals ok", metaSchema, `{'is_relevant': False, 'updated_keywords': ['a']}`, `{"is_relevant":false,"updated_keywords":["a"]}`, ""},
		{"comments", affSchema, "{\n // why\n \"reasoning\": \"r\", /* list */ \"affiliations\": [\"e2\"]\n}", `{"affiliations":["e2"],"reasoning":"r"}`, ""},
		{"raw newline in string", answerSchema, "{\"answer\": \"line one\nline two\"}", `{"answer":"line one\nline two"}`, ""},
		{"truncated in string", answerSchema, `{"answer": "The cat sat on th`, `{"answer":"The cat sat on th"}`, ""},
		{"truncated after key", affSchema, `{"reasoning": "r", "affiliations": ["e1", "e2"], "extra`, `{"affiliations":["e1","e2"],"reasoning":"r"}`, ""},
		{"truncated in array", affSchema, `{"reasoning": "r", "affiliations": ["e1", "e`, `{"affiliations":["e1","e"],"reasoning":"r"}`, ""},
		{"truncated after colon", affSchema, `{"affiliations": ["e1"], "reasoning": "ok", "note":`, `{"affiliations":["e1"],"reasoning":"ok"}`, ""},
		{"truncated fence", nestedSchema, "```json\n{\"facts\": [{\"fact\": \"moved\", \"turn\": 3}, {\"fact\": \"sold", `{"facts":[{"fact":"moved","turn":3}]}`, ""},
		{"truncated number", idsSchema, `{"ids": [1, 2, 3`, `{"ids":[1,2,3]}`, ""},
		{"truncated literal", metaSchema, `{"updated_keywords": ["x"], "is_relevant": tr`, ``, `missing required key "is_relevant"`},
		{"bare array wrapped", idsSchema, `[3, 5, 8]`, `{"ids":[3,5,8]}`, ""},
		{"bare string wrapped", answerSchema, `"Sweden"`, `{"answer":"Sweden"}`, ""},
		{"bare number to string key", answerSchema, `2022`, `{"answer":"2022"}`, ""},
		{"plain text answer", answerSchema, "She went to the LGBTQ support group on 7 May 2023.", `{"answer":"She went to the LGBTQ support group on 7 May 2023."}`, ""},
		{"plain text in fence", answerSchema, "```\nNot mentioned in the conversation\n```", `{"answer":"Not mentioned in the conversation"}`, ""},
		{"plain text no single key", affSchema, "I think it belongs to a new event.", ``, `no JSON`},
		{"empty", answerSchema, "", ``, `empty`},
		{"only whitespace", affSchema, " \n\t ", ``, `empty`},
		{"number as string", metaSchema, `{"is_relevant": "true", "score": "0.8", "updated_keywords": []}`, `{"is_relevant":true,"score":0.8,"updated_keywords":[]}`, ""},
		{"integers as strings and floats", idsSchema, `{"ids": ["4", 5.0, " 6 "]}`, `{"ids":[4,5,6]}`, ""},
		{"non-integer id", idsSchema, `{"ids": [1.5]}`, ``, `$.ids[0]: expected integer, got number 1.5`},
		{"string for list", metaSchema, `{"is_relevant": false, "updated_keywords": "travel"}`, `{"is_relevant":false,"updated_keywords":["travel"]}`, ""},
		{"null for list", metaSchema, `{"is_relevant": false, "updated_keywords": null}`, `{"is_relevant":false,"updated_keywords":[]}`, ""},
		{"list as JSON string", affSchema, `{"reasoning": "r", "affiliations": "[\"e1\", \"e2\"]"}`, `{"affiliations":["e1","e2"],"reasoning":"r"}`, ""},
		{"missing key", affSchema, `{"reasoning": "no idea"}`, ``, `$: missing required key "affiliations"`},
		{"wrong type object", answerSchema, `{"answer": {"text": "Paris"}}`, ``, `$.answer: expected string, got object`},
		{"key case", answerSchema, `{"Answer": "Paris"}`, `{"answer":"Paris"}`, ""},
		{"enum case fixed", judgeSchema, `{"label": "correct"}`, `{"label":"CORRECT"}`, ""},
		{"enum wrong", judgeSchema, `{"label": "MAYBE"}`, ``, `$.label: string "MAYBE" is not one of "CORRECT", "WRONG"`},
		{"two objects second fits", answerSchema, `Draft: {"reply": "x"} Final: {"answer": "y"}`, `{"answer":"y"}`, ""},
		{"nested wrapper", idsSchema, `{"result": {"ids": [1]}}`, `{"ids":[1]}`, ""},
		{"array schema unwrap", listSchema, `{"keywords": ["a", "b"]}`, `["a","b"]`, ""},
		{"array schema bare", listSchema, "Keywords:\n[\"a\", 'b']", `["a","b"]`, ""},
		{"html not escaped", answerSchema, `{"answer": "<b>&</b>"}`, `{"answer":"<b>&</b>"}`, ""},
		{"unicode escapes kept", answerSchema, `{"answer": "caf\u00e9 \ud83d\ude00"}`, `{"answer":"café 😀"}`, ""},
		{"bad escape", answerSchema, `{"answer": "C:\path"}`, `{"answer":"C:\\path"}`, ""},
		{"think tags", answerSchema, "<think>The user wants {json}. Let me think.</think>\n{\"answer\": \"42\"}", `{"answer":"42"}`, ""},
		{"mismatched brackets", affSchema, `{"reasoning": "r", "affiliations": ["e1"}`, `{"affiliations":["e1"],"reasoning":"r"}`, ""},
		{"extra keys kept", answerSchema, `{"answer": "a", "confidence": 0.9}`, `{"answer":"a","confidence":0.9}`, ""},
		{"unescaped inner quotes", answerSchema, `{"answer": "She said "yes" to the "big" trip"}`, `{"answer":"She said \"yes\" to the \"big\" trip"}`, ""},
		{"apostrophe in single quotes", answerSchema, `{'answer': 'Caroline's dog'}`, `{"answer":"Caroline's dog"}`, ""},
		{"pretty printed missing comma", affSchema, "{\n  \"reasoning\": \"r\"\n  \"affiliations\": []\n}", `{"affiliations":[],"reasoning":"r"}`, ""},
		{"garbage", affSchema, "!!!@@@###", ``, `no JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.text, json.RawMessage(tt.schema))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Parse = %s, want error containing %q", got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrSchema) && !errors.Is(err, ErrNoJSON) {
					t.Fatalf("error %v wraps neither ErrSchema nor ErrNoJSON", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Parse =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestExtract(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{`{"a":1}`, `{"a":1}`},
		{"  [1, 2 ]  ", `[1,2]`},
		{`"just a string"`, `"just a string"`},
		{`true`, `true`},
		{"Here: ```json\n{\"a\": [1,2,]}\n``` done", `{"a":[1,2]}`},
		{`prefix {"a": {"b": [1, {"c": "}"}]}} suffix {"z": 1}`, `{"a":{"b":[1,{"c":"}"}]}}`},
		{`{"a": "x", "b": [1, 2`, `{"a":"x","b":[1,2]}`},
		{`{"a": "unterminated \`, `{"a":"unterminated "}`},
		{`{"a": "\u00`, `{"a":""}`},
		{`{"a": +1, "b": .5, "c": 2.}`, `{"a":1,"b":0.5,"c":2}`},
		{`{"a": undefined, "b": NaN}`, `{"a":null,"b":null}`},
		{`{"a":1}}}`, `{"a":1}`},
		{`{"a": }`, `{"a":null}`},
		{`{,,"a":1,,}`, `{"a":1}`},
	}
	for _, tt := range tests {
		got, err := Extract(tt.text)
		if err != nil {
			t.Errorf("Extract(%q): %v", tt.text, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("Extract(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", "no json here", "}{", "hello: world"} {
		if got, err := Extract(bad); !errors.Is(err, ErrNoJSON) {
			t.Errorf("Extract(%q) = %s, %v; want ErrNoJSON", bad, got, err)
		}
	}
}

func TestParseNilSchema(t *testing.T) {
	got, err := Parse("ok: {'a': [1,],}", nil)
	if err != nil || string(got) != `{"a":[1]}` {
		t.Fatalf("Parse(nil schema) = %s, %v", got, err)
	}
}

func TestBadSchema(t *testing.T) {
	for _, s := range []string{`{`, `{"type": 3}`, `{"type": "strnig"}`, `{"properties": {"a": {"type": ["x"]}}}`} {
		if _, err := Parse(`{"a":1}`, json.RawMessage(s)); !errors.Is(err, ErrBadSchema) {
			t.Errorf("schema %s: err = %v, want ErrBadSchema", s, err)
		}
	}
}

func TestSchemaErrorType(t *testing.T) {
	_, err := Parse(`{"reasoning": 1}`, json.RawMessage(affSchema))
	se, ok := errors.AsType[*SchemaError](err)
	if !ok {
		t.Fatalf("err %v is not a *SchemaError", err)
	}
	if se.Path != "$" || !strings.Contains(se.Problem, "affiliations") {
		t.Fatalf("SchemaError = %+v", se)
	}
}

func TestValidate(t *testing.T) {
	got, err := Validate(json.RawMessage(`{"ids":["1"]}`), json.RawMessage(idsSchema))
	if err != nil || string(got) != `{"ids":[1]}` {
		t.Fatalf("Validate = %s, %v", got, err)
	}
	if _, err := Validate(json.RawMessage(`{"ids":{}}`), json.RawMessage(idsSchema)); !errors.Is(err, ErrSchema) {
		t.Fatalf("Validate wrong type: err = %v", err)
	}
	got, err = Validate(json.RawMessage(`{"b":1, "a":2}`), nil)
	if err != nil || string(got) != `{"a":2,"b":1}` {
		t.Fatalf("Validate(nil schema) = %s, %v", got, err)
	}
	if _, err := Validate(json.RawMessage(`{`), nil); !errors.Is(err, ErrNoJSON) {
		t.Fatalf("Validate(invalid) err = %v", err)
	}
}

// TestParseCanonicalStable checks that Parse output is a fixed point.
func TestParseCanonicalStable(t *testing.T) {
	first, err := Parse("```json\n{'reasoning':'r','affiliations':'e1',}\n```", json.RawMessage(affSchema))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Parse(string(first), json.RawMessage(affSchema))
	if err != nil || string(second) != string(first) {
		t.Fatalf("second pass = %s, %v; first %s", second, err, first)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, "```json\n{\"a\": [1,2,]}\n```", `{'a': 'b'`, `[1, 2, {"c": "d`, `Sure! {"x": True}`,
		`{"a": "\u00`, `{a: 1, b: [nul`, `/* c */ {"a": // x` + "\n" + `1}`, `}{][`, `"str"`, `-`, `{"a":-}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Extract(s)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("Extract(%q) error %v does not wrap ErrNoJSON", s, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Extract(%q) = %q: not valid JSON", s, got)
		}
	})
}

func FuzzParse(f *testing.F) {
	schemas := []string{answerSchema, affSchema, idsSchema, metaSchema, judgeSchema, nestedSchema, listSchema, ""}
	for i, s := range []string{
		`{"answer":"x"}`, `[1,2]`, `{"ids": ["1", 2.0]}`, "plain text", `{"facts": [{"fact": "a", "turn": "3"}]}`,
		`{"label": "wrong"}`, `{"is_relevant": "yes", "updated_keywords": "k"}`, `{"keywords": ["a"]}`,
	} {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		schema := schemas[int(which)%len(schemas)]
		got, err := Parse(s, json.RawMessage(schema))
		if err != nil {
			if !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrSchema) {
				t.Fatalf("Parse(%q) error %v wraps neither sentinel", s, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Parse(%q) = %q: not valid JSON", s, got)
		}
		if schema != "" {
			// The output must itself satisfy the schema unchanged.
			again, err := Validate(got, json.RawMessage(schema))
			if err != nil || string(again) != string(got) {
				t.Fatalf("Parse(%q) = %s, but revalidating gives %s, %v", s, got, again, err)
			}
		}
	})
}

// A reply cut inside the last item of a list keeps the items before it:
// the partial item, which lacks required keys, is dropped.
func TestCutInsideLastItemDropped(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"turns":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"events":{"type":"array","items":{"type":"string"}}},"required":["id","events"]}}},"required":["turns"]}`)
	for _, cut := range []string{
		`{"turns":[{"id":"a","events":["x"]},{"context":"abc`,
		`{"turns":[{"id":"a","events":["x"]},{"id":"b","ev`,
		`{"turns":[{"id":"a","events":["x"]},{"c`,
	} {
		doc, err := Parse(cut, schema)
		if err != nil || string(doc) != `{"turns":[{"events":["x"],"id":"a"}]}` {
			t.Errorf("%s: %s, %v", cut, doc, err)
		}
	}
	// A cut reply whose bad item is not the last is not "repaired" that way.
	if _, err := Parse(`{"turns":[{"id":"a"},{"id":"b"},{"id":"c","ev`, schema); err == nil {
		t.Error("bad middle item accepted")
	}
}

// A schema is compiled once and kept, within the cache's bound, and the
// kept form serves concurrent calls.
func TestSchemaCache(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"cache_test":{"type":"string"}},"required":["cache_test"]}`)
	if _, err := Parse(`{"cache_test":"a"}`, schema); err != nil {
		t.Fatal(err)
	}
	first, err := schemas.compiled(schema)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := Parse(fmt.Sprintf(`{"cache_test":"%d"}`, i), schema); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if again, _ := schemas.compiled(schema); again != first {
		t.Error("the same schema was compiled again")
	}
	for i := range 2 * schemaCacheSize {
		s := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"k%d":{"type":"string"}}}`, i))
		if _, err := Validate(json.RawMessage(`{}`), s); err != nil {
			t.Fatal(err)
		}
	}
	if n := schemas.len(); n > schemaCacheSize {
		t.Errorf("%d schemas kept, bound %d", n, schemaCacheSize)
	}
	if _, err := Parse(`{}`, json.RawMessage(`{"type":"nonsense"}`)); !errors.Is(err, ErrBadSchema) {
		t.Errorf("bad schema: %v", err)
	}
}

// Parse's shortcut (the whole reply, when it fits, without looking for
// other candidates) returns what trying every candidate in order returns,
// on the replies of TestParseNasty and variants of them, for every
// schema.
func TestParseShortcutMatchesCandidates(t *testing.T) {
	texts := []string{
		`{"answer":"Paris"}`, "\ufeff  \n {\"answer\": \"Paris\"}\n\n", "\ufeff\ufeff{\"answer\":\"Paris\"}", "\ufeff\ufeff\"Sweden\"",
		"\ufeff\ufeff[3, 5]", " \ufeff\"Sweden\"", `"Sweden"`, `2022`, `[3, 5, 8]`, `{"ids": ["4", 5.0, " 6 "]}`, `{"ids": [1.5]}`,
		`{"reasoning": "r", "affiliations": ["a", "b",],}`, "```json\n{\"answer\": \"x\"}\n```", `{"result": {"ids": [1]}}`,
		`{"keywords": ["a", "b"]}`, `{"label": "correct"}`, `{"label": "MAYBE"}`, `{"answer": {"text": "Paris"}}`,
		`{"reasoning": "no idea"}`, `{"is_relevant": "true", "score": "0.8", "updated_keywords": []}`, `{"facts": [{"fact": "a", "turn": "3"}]}`,
		`Draft: {"reply": "x"} Final: {"answer": "y"}`, `{"answer": "<b>&</b>"}`, "plain text", "", " \n ", `null`, `[]`, `{}`,
		`{"turn_ids":["t1","t2"]}`, `["t1"]`, `{"answer": "a", "confidence": 0.9}`, `{"answer":"x"} {"answer":"y"}`,
	}
	for _, sc := range []string{answerSchema, affSchema, idsSchema, metaSchema, judgeSchema, nestedSchema, listSchema} {
		s, err := schemas.compiled(json.RawMessage(sc))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			got, err := Parse(text, json.RawMessage(sc))
			want, werr := parseCandidates(text, s)
			if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Errorf("schema %s, reply %q: Parse = %s (%v), every candidate in order = %s (%v)", sc, text, got, err, want, werr)
			}
		}
	}
}

// TestRenameDeterministic checks that a key matching two declared
// properties ("A" and "a"), or two keys matching one, are renamed the
// same way on every call (map order once decided it: FuzzStrict found
// it, seed d90dc66c737f89fd).
func TestRenameDeterministic(t *testing.T) {
	for text, want := range map[string]string{
		"{\"A \\r\":\"x\"}":         `{"A":"x"}`,
		`{" a":"x","a ":"y"}`:       `{"A":"x","a":"y"}`,
		`{"A":"x","b ":true}`:       `{"A":"x","B":true}`,
		`{"a ":"y","A":"x"," A":1}`: `{"A":"x","a":"1","a ":"y"}`,
	} {
		for range 64 {
			got, err := Parse(text, json.RawMessage(keysSchema))
			if err != nil || string(got) != want {
				t.Fatalf("Parse(%s) = %s, %v; want %s", text, got, err, want)
			}
		}
	}
}
