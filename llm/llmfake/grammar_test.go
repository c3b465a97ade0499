package llmfake

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/jsonx"
)

// batchSchema is a build_batch-like schema narrowed for three turns.
const batchSchema = `{"type":"object","properties":{
 "turns":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"object","properties":{
   "id":{"type":"string","enum":["D1:1","D1:2","D1:3"]},
   "events":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["e1","new:1","new:2","new:3"]}}},
  "required":["id","events"]}},
 "events":{"type":"array","maxItems":2,"items":{"type":"object","properties":{
   "id":{"type":"string","enum":["e1","new:1","new:2","new:3"]},
   "title":{"type":"string","maxLength":12},
   "summary":{"type":"string","minLength":5}},"required":["id","summary","title"]}}},
 "required":["turns","events"]}`

func TestConform(t *testing.T) {
	for _, c := range []struct {
		name, text string
		check      func(t *testing.T, got map[string]any)
	}{
		{"junk ids become the ids shown, in order", // what the real server wrote under the broad schema
			`{"turns":[{"id":":{","events":["new:1"]},{"id":":{","events":["new:1"]},{"id":":{","events":["events:1"]}],"events":[{"id":"events:1","title":"new:1","summary":"Ana talks"}]}`,
			func(t *testing.T, got map[string]any) {
				ids := []string{}
				for _, tr := range got["turns"].([]any) {
					ids = append(ids, tr.(map[string]any)["id"].(string))
				}
				if strings.Join(ids, ",") != "D1:1,D1:2,D1:3" {
					t.Errorf("turn ids %v", ids)
				}
				ev := got["events"].([]any)[0].(map[string]any)
				if ev["id"] != "e1" { // "events:1" shares "e" with e1 only
					t.Errorf("event id %v", ev["id"])
				}
			}},
		{"cut at maxItems and maxLength, padded to minItems and minLength",
			`{"turns":[{"id":"D1:2","events":["new:1","new:2","e1"]}],"events":[{"id":"new:1","title":"A title much longer than twelve","summary":"ok"}],"extra":1}`,
			func(t *testing.T, got map[string]any) {
				turns := got["turns"].([]any)
				if len(turns) != 3 || len(turns[0].(map[string]any)["events"].([]any)) != 2 {
					t.Errorf("turns %v", turns)
				}
				ev := got["events"].([]any)[0].(map[string]any)
				if len([]rune(ev["title"].(string))) != 12 || len(ev["summary"].(string)) != 5 {
					t.Errorf("event %v", ev)
				}
				if _, ok := got["extra"]; ok {
					t.Error("a key outside the schema survived")
				}
			}},
		{"prose becomes the schema's least instance",
			`Sure! Here are the turns you asked for.`,
			func(t *testing.T, got map[string]any) {
				if len(got["turns"].([]any)) != 3 {
					t.Errorf("turns %v", got["turns"])
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := Conform(c.text, json.RawMessage(batchSchema))
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if _, err := jsonx.Parse(out, json.RawMessage(batchSchema)); err != nil {
				t.Errorf("conformed reply fails its schema: %v: %s", err, out)
			}
			c.check(t, got)
		})
	}
	if got := Conform("{}", json.RawMessage("not a schema")); got != "{}" {
		t.Errorf("an unreadable schema changed the text: %s", got)
	}
}
