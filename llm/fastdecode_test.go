package llm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"

	"github.com/higmem/higmem/internal/jsonx"
	"github.com/higmem/higmem/internal/prompt"
)

// Types decodeFast is checked on besides higmem's reply types: each way
// a type can be one it must refuse, or one encoding/json reads in a way
// of its own.
type (
	label     string
	fastPlain struct {
		A     string   `json:"a"`
		B     bool     `json:"b,omitempty"`
		L     []string `json:"l"`
		Named label    `json:"named"`
		NoTag string
		Empty string `json:",omitempty"`
		Skip  string `json:"-"`
		//lint:ignore SA5008 on purpose: encoding/json names this field "-", and decodeFast must too
		Dash string `json:"-,"`
		//lint:ignore U1000 on purpose: an unexported field encoding/json leaves alone
		hidden string
		Nested struct {
			X []bool `json:"x"`
		} `json:"nested"`
		Items []fastItem  `json:"items"`
		Lists [][]string  `json:"lists"`
		Tree  []fastPlain `json:"tree"`
	}
	fastItem struct {
		ID   string `json:"id"`
		Tags []label
	}
	fastQuoted struct {
		B bool `json:"b,string"`
	}
	fastNumber struct {
		N int `json:"n"`
	}
	fastPointer struct {
		P *string `json:"p"`
	}
	fastEmbedded struct {
		fastItem
		Z string `json:"z"`
	}
	fastTwice struct {
		X string
		Y string `json:"X"`
	}
	fastOddTag struct {
		A string `json:"a b"`
	}
	fastCustom struct {
		T custom `json:"t"`
	}
	custom  string
	fastMap map[string]string
)

func (c *custom) UnmarshalJSON(b []byte) error { *c = "custom"; return nil }

// fastTargets are the types the tests decode into.
var fastTargets = []any{
	prompt.SelectReply{}, prompt.PredictReply{}, prompt.FilterReply{}, prompt.AnswerReply{}, prompt.JudgeReply{},
	prompt.QueryReply{}, prompt.AffiliateReply{}, prompt.EventCheckReply{}, prompt.EventUpdateReply{}, prompt.TurnNoteReply{},
	prompt.BuildBatchReply{}, prompt.ProfileDecideReply{}, prompt.ProfileUpdateReply{},
	fastPlain{}, fastItem{}, fastQuoted{}, fastNumber{}, fastPointer{}, fastEmbedded{}, fastTwice{}, fastOddTag{}, fastCustom{},
	fastMap{}, []string{}, "", true,
}

// fastDocs are documents decoded into every target.
var fastDocs = []string{
	`{"turn_ids":["D1:2","D3:4"]}`, `{"turn_ids":[]}`, `{"turn_ids":null}`, `{"turn_ids":["a",null,"b"]}`, `{}`, `null`, ` {"turn_ids" : [ "x" ] } `,
	`{"turn_ids":["a"],"turn_ids":["b"]}`, `{"Turn_IDs":["a"]}`, `{"turn_ids":["a\"b"]}`, `{"turn_ids":["é","\u2028"]}`, "{\"turn_ids\":[\"\xff\"]}",
	"{\"turn_ids\":[\"a\tb\"]}", `{"turn_ids":[1]}`, `{"turn_ids":"a"}`, `{"turn_ids":[["a"]]}`, `{"turn_ids":["a",]}`, `{"turn_ids":["a"]`,
	`{"turn_ids":["a"]} x`, `{"turn_ids":["a"],}`, `{"turn_ids" "a"}`, `["a","b"]`, `[]`, `"s"`, `true`, `nul`, `{"turn_ids":["a"]}` + "\x00",
	`{"answer":"Paris"}`, `{"answer":null}`, `{"answer":true}`, `{"label":"CORRECT","reasoning":"r"}`, `{"keyword_query":"q","entities":["e"],"temporal":true}`,
	`{"keyword_query":"q","temporal":"true"}`, `{"keyword_query":"q","temporal":null}`, `{"temporal":fals}`, `{"reasoning":"r","affiliations":["e1","NEW"]}`,
	`{"is_relevant":false,"keywords":[],"tags":null}`, `{"summary":"s","keywords":["k"],"new_facts":[{"time":"t","fact":"f","turn_id":"D1:1"}]}`,
	`{"new_facts":[{"fact":"a"},{"fact":"b","time":null}],"summary":"s"}`, `{"new_facts":[null]}`, `{"new_facts":[{"fact":"a","time":"t"}],"new_facts":[{"fact":"b"}]}`, `{"new_facts":[{"fact":"a","fact":"b"}]}`,
	`{"keywords":["k"],"tags":["t"],"context":"c","entities":[],"links":[{"target":"D1:1","relation":"r"}]}`,
	`{"turns":[{"id":"D1:1","events":["e1"]}],"events":[{"id":"e1","summary":"s","title":"t"}]}`,
	`{"update_decisions":[{"entity_name":"Ann","should_update":true,"reasoning":"r"}]}`,
	`{"summary":"s","facts":[{"entity":"Ann","attribute":"a","value":"v","ended":true,"turn_ids":["D1:1"]}]}`,
	`{"a":"x","b":true,"l":["y"],"named":"n","NoTag":"t","Empty":"e","nested":{"x":[true,false,null]},"items":[{"id":"i","Tags":["g"]}],"lists":[["a"],[],null],"tree":[{"a":"deep","tree":[{}]}]}`,
	`{"notag":"t"}`, `{"Skip":"s"}`, `{"-":"d"}`, `{"hidden":"h"}`, `{"b":"true"}`, `{"n":1}`, `{"p":"x"}`, `{"p":null}`, `{"id":"i","z":"z"}`,
	`{"a":"x"}`, `{"X":"x"}`, `{"a b":"x"}`, `{"t":"x"}`, `{"k":"v"}`, `{"items":[{"id":1}]}`, `{"nested":[]}`, `{"lists":[[1]]}`, `{"l":[]}`, `{"l":{}}`,
	strings.Repeat(`{"tree":[`, 40) + strings.Repeat(`]}`, 40),
}

// TestDecodeFastMatchesUnmarshal checks that wherever decodeFast answers,
// json.Unmarshal gives the same value, and that it answers on the
// well-formed documents of higmem's reply types (the bench's select
// replies among them) and refuses the types it cannot follow.
func TestDecodeFastMatchesUnmarshal(t *testing.T) {
	docs := append([]string{}, fastDocs...)
	for _, c := range prompttest.BenchSelects(t) {
		doc, err := jsonx.Parse(c.Reply, selectSchema(t))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	answered := map[string]int{}
	for _, target := range fastTargets {
		typ := reflect.TypeOf(target)
		for _, doc := range docs {
			if checkDecodeFast(t, typ, doc) {
				answered[typ.String()]++
			}
		}
	}
	for _, name := range []string{"prompt.SelectReply", "prompt.EventUpdateReply", "prompt.ProfileUpdateReply", "llm.fastPlain", "llm.fastItem", "[]string", "string", "bool"} {
		if answered[name] == 0 {
			t.Errorf("decodeFast answered no document for %s", name)
		}
	}
	for _, name := range []string{"prompt.BuildBatchReply", "llm.fastQuoted", "llm.fastNumber", "llm.fastPointer", "llm.fastEmbedded", "llm.fastTwice", "llm.fastOddTag", "llm.fastCustom", "llm.fastMap"} {
		if answered[name] != 0 {
			t.Errorf("decodeFast answered %d documents for %s, which it should refuse", answered[name], name)
		}
	}
	var sel prompt.SelectReply
	if !decodeFast([]byte(docs[len(docs)-1]), reflect.ValueOf(&sel).Elem()) {
		t.Error("decodeFast refused a bench select reply")
	}
}

// checkDecodeFast decodes doc into a new value of typ with decodeFast
// and, when it answers, compares with json.Unmarshal. It reports whether
// decodeFast answered.
func checkDecodeFast(t *testing.T, typ reflect.Type, doc string) bool {
	t.Helper()
	fast := reflect.New(typ)
	if !decodeFast([]byte(doc), fast.Elem()) {
		return false
	}
	want := reflect.New(typ)
	if err := json.Unmarshal([]byte(doc), want.Interface()); err != nil {
		t.Errorf("%s, %q: decodeFast = %+v, json.Unmarshal fails: %v", typ, doc, fast.Elem(), err)
		return true
	}
	if !reflect.DeepEqual(fast.Elem().Interface(), want.Elem().Interface()) {
		t.Errorf("%s, %q: decodeFast = %#v, json.Unmarshal = %#v", typ, doc, fast.Elem(), want.Elem())
	}
	return true
}

// FuzzDecodeFast checks decodeFast against json.Unmarshal on any
// document, for each type of fastTargets.
func FuzzDecodeFast(f *testing.F) {
	for i, doc := range fastDocs {
		f.Add(doc, uint8(i))
	}
	for _, c := range prompttest.BenchSelects(f) {
		f.Add(c.Reply, uint8(0)) // prompt.SelectReply
	}
	f.Fuzz(func(t *testing.T, doc string, which uint8) {
		checkDecodeFast(t, reflect.TypeOf(fastTargets[int(which)%len(fastTargets)]), doc)
	})
}

// selectSchema returns the select prompt's reply schema.
func selectSchema(tb testing.TB) json.RawMessage {
	p, err := prompt.Render(prompt.Select, prompt.SelectData{})
	if err != nil {
		tb.Fatal(err)
	}
	return p.Schema
}

// BenchmarkDecodeFastSelect measures decodeFast alone on the canonical
// documents of the bench's select replies.
func BenchmarkDecodeFastSelect(b *testing.B) {
	var docs [][]byte
	for _, c := range prompttest.BenchSelects(b) {
		doc, err := jsonx.Parse(c.Reply, selectSchema(b))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, doc)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var sel prompt.SelectReply
		if !decodeFast(docs[i%len(docs)], reflect.ValueOf(&sel).Elem()) || len(sel.TurnIDs) == 0 {
			b.Fatal("decodeFast refused a bench select reply")
		}
	}
}
