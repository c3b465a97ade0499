package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/higmem/higmem/llm"
)

// JunkShape is one kind of bad reply a small real model (Gemma 3 270M over
// llama-cpp-python) gave to higmem's prompts. Most are schema-valid: the
// JSON parses and has the required keys, but what it says is not memory.
type JunkShape struct {
	// Name identifies the shape in test names.
	Name string
	// Kind is the prompt it answers (Request.SchemaName: "build_batch",
	// "event_update", "predict", ...).
	Kind string
	// Syntax is true for shapes whose text is not valid JSON as sent
	// (truncated, wrapped in prose): the JSON layer repairs them.
	Syntax bool
	// Want names the problem a semantic check must find (a memcheck
	// problem kind), "" for syntax shapes whose repair is the JSON layer's.
	Want string
	// Reply writes the reply to req from the ids and text the prompt shows.
	Reply func(req llm.Request) string
}

// view is what a junk shape reads of a prompt.
type view struct {
	p      parsed
	turns  []line // the turns to work on (new turns, or all shown)
	events []event
}

func viewOf(req llm.Request) view {
	var user string
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	v := view{p: parse(user)}
	for _, sec := range v.p.order {
		if strings.HasPrefix(sec, "New turn") {
			v.turns = append(v.turns, v.p.sections[sec]...)
		}
		v.events = append(v.events, v.p.events[sec]...)
	}
	if len(v.turns) == 0 {
		for _, sec := range v.p.order {
			v.turns = append(v.turns, v.p.sections[sec]...)
		}
	}
	return v
}

func (v view) ids() []string {
	out := make([]string, len(v.turns))
	for i, t := range v.turns {
		out[i] = t.id
	}
	return out
}

func (v view) eventID() string {
	if len(v.events) > 0 {
		return v.events[0].id
	}
	return "new:1"
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// batch builds a build_batch reply with one item per turn from item, and
// the event records events.
func (v view) batch(item func(i int, t line) map[string]any, events []map[string]any) string {
	items := []map[string]any{}
	for i, t := range v.turns {
		items = append(items, item(i, t))
	}
	if events == nil {
		events = []map[string]any{}
	}
	for _, e := range events {
		v.grounded(e)
	}
	return js(map[string]any{"turns": items, "events": events})
}

func plainItem(i int, t line) map[string]any {
	return map[string]any{"id": t.id, "keywords": keywords(t.text, 3), "tags": []string{"daily life"},
		"context": t.speaker + " talks about " + strings.Join(keywords(t.text, 2), " and ") + ".", "events": []string{"new:1"}}
}

// goodSummary stands for a summary with nothing wrong in it; batch and
// good replace it with one drawn from the turns the prompt shows (a
// record must be grounded in its turns), as they replace goodKeywords and
// goodTitle.
const (
	goodSummary = "Melanie has been painting a lake at sunrise since May 2023."
	goodTitle   = "Weekend plans"
)

var goodKeywords = []string{"painting", "lake"}

// good returns a sound record drawn from the first turn the prompt shows:
// a summary naming its speaker and words, keywords and a title from them.
func (v view) good() (summary string, kws []string, title string) {
	if len(v.turns) == 0 {
		return goodSummary, goodKeywords, goodTitle
	}
	t := v.turns[0]
	kws = keywords(t.text, 2)
	if len(kws) == 0 {
		return goodSummary, goodKeywords, goodTitle
	}
	speaker := t.speaker
	if speaker == "" {
		speaker = "Someone"
	}
	return fmt.Sprintf("%s talked about %s.", speaker, strings.Join(kws, " and ")),
		kws, fmt.Sprintf("%s: %s", speaker, strings.Join(kws, " and "))
}

// grounded replaces the stand-ins of a record (goodSummary, goodKeywords,
// goodTitle) with v's good record.
func (v view) grounded(rec map[string]any) {
	summary, kws, title := v.good()
	if rec["summary"] == goodSummary {
		rec["summary"] = summary
	}
	if rec["title"] == goodTitle {
		rec["title"] = title
	}
	if k, ok := rec["keywords"].([]string); ok && len(k) > 0 && (k[0] == "painting" || k[0] == "lake") {
		rec["keywords"] = kws
	}
}

// withTitle is the record of event new:1 under title, otherwise sound.
func withTitle(title string) []map[string]any {
	return []map[string]any{{"id": "new:1", "title": title, "summary": goodSummary, "keywords": goodKeywords}}
}

// records writes one record per id from rec.
func records(rec func(id string) map[string]any, ids ...string) []map[string]any {
	out := []map[string]any{}
	for _, id := range ids {
		r := rec(id)
		r["id"] = id
		out = append(out, r)
	}
	return out
}

// temporalExample is the first date the answer prompt's temporal
// instruction quotes as the form of an answer ("e.g. "14 March 2021" …").
var temporalExample = regexp.MustCompile(`e\.g\. "([^"]+)"`)

// JunkShapes are the bad replies seen from the real server, at least one
// per prompt kind, reproduced from the prompt they answer.
var JunkShapes = []JunkShape{
	{Name: "title JSON fragment", Kind: "build_batch", Want: "junk_title", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle("}, {"))
	}},
	{Name: "title punctuation", Kind: "build_batch", Want: "junk_title", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle(" ... "))
	}},
	{Name: "title is the label", Kind: "build_batch", Want: "junk_title", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle("new:1"))
	}},
	{Name: "title copied from instructions", Kind: "build_batch", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle("a short title"))
	}},
	{Name: "runaway new:1 … new:232", Kind: "build_batch", Want: "over_cap", Reply: func(r llm.Request) string {
		labels := make([]string, 232)
		var evs []map[string]any
		for i := range labels {
			labels[i] = fmt.Sprintf("new:%d", i+1)
			evs = append(evs, map[string]any{"id": labels[i], "title": "Event " + labels[i], "summary": goodSummary})
		}
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["events"] = labels
			return m
		}, evs)
	}},
	{Name: "ids not shown", Kind: "build_batch", Want: "unknown_id", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["id"] = fmt.Sprintf("D99:%d", i+1)
			m["events"] = []string{"e999"}
			return m
		}, withTitle("Trip to Lisbon"))
	}},
	{Name: "keywords time, fact on every turn", Kind: "build_batch", Want: "stop_word", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["keywords"] = []string{"time", "fact"}
			m["tags"] = []string{"fact"}
			return m
		}, withTitle("Weekend plans"))
	}},
	{Name: "stop-word and empty keywords", Kind: "build_batch", Want: "stop_word", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["keywords"] = []string{"the", "", "and", "  "}
			return m
		}, withTitle("Weekend plans"))
	}},
	{Name: "context copied from instructions", Kind: "build_batch", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["context"] = "one sentence saying what the turn is about"
			return m
		}, withTitle("Weekend plans"))
	}},
	{Name: "context is JSON", Kind: "build_batch", Want: "junk_text", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			m := plainItem(i, t)
			m["context"] = `"keywords": ["painting"], "tags": [`
			return m
		}, withTitle("Weekend plans"))
	}},
	{Name: "one turn listed three times", Kind: "build_batch", Want: "duplicate", Reply: func(r llm.Request) string {
		v := viewOf(r)
		t := v.turns[0]
		items := []map[string]any{plainItem(0, t), plainItem(0, t), plainItem(0, t)}
		return js(map[string]any{"turns": items, "events": withTitle("Weekend plans")})
	}},
	{Name: "only the first turn answered", Kind: "build_batch", Want: "missing", Reply: func(r llm.Request) string {
		v := viewOf(r)
		return js(map[string]any{"turns": []map[string]any{plainItem(0, v.turns[0])}, "events": withTitle("Weekend plans")})
	}},
	{Name: "new event nobody joins", Kind: "build_batch", Want: "unused", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, append(withTitle("Weekend plans"), map[string]any{"id": "new:2", "title": "Painting class", "summary": goodSummary}))
	}},
	{Name: "truncated JSON", Kind: "build_batch", Syntax: true, Want: "missing", Reply: func(r llm.Request) string {
		full := viewOf(r).batch(plainItem, withTitle("Weekend plans"))
		// Cut inside the second item, as a max_tokens stop does.
		i := strings.Index(full, `},{"context"`)
		if i < 0 {
			i = len(full) / 2
		}
		return full[:i+20]
	}},
	{Name: "prose around JSON", Kind: "build_batch", Syntax: true, Reply: func(r llm.Request) string {
		return "Sure! Here is the JSON you asked for:\n```json\n" + viewOf(r).batch(plainItem, withTitle("Weekend plans")) +
			"\n```\nLet me know if you need anything else."
	}},
	// Recorded from llama-cpp-python 0.3.36 serving Gemma 3 270M (base) on
	// LoCoMo conv-26 session 1, verbatim but for the ids shown.
	{Name: "recorded: ids of punctuation, events 1:1 … 61:1", Kind: "build_batch", Want: "unknown_id", Reply: func(r llm.Request) string {
		evs := []string{}
		for i := 7; i <= 61; i++ {
			evs = append(evs, fmt.Sprintf("%d:1", i))
		}
		return js(map[string]any{"turns": []map[string]any{
			{"id": ":{", "events": []string{"1:1"}}, {"id": ":{", "events": []string{"1:2"}}, {"id": ":{", "events": evs},
		}})
	}},
	{Name: "recorded: summary }, with tags new_facts", Kind: "event_update", Want: "junk_text", Reply: func(r llm.Request) string {
		return `{ "summary": "}, " ,"keywords": ["time"], "tags": ["new_facts"], "new_facts": [{"fact": "the new", "turn_id": "}, {" }] }`
	}},
	{Name: "recorded: facts the new turns add", Kind: "event_update", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return `{ "summary": "Caroline and Melanie talk about the support group and painting.", "keywords": ["time"], "tags": ["new_facts"], ` +
			`"new_facts": [{"fact": "the facts the new turns add", "turn_id": "10"}, {"fact": "the facts the new turns add", "turn_id": "11"}]}`
	}},
	{Name: "recorded: predict key1 … key10", Kind: "predict", Want: "unknown_id", Reply: func(r llm.Request) string {
		return `{ "turn_ids": ["key1", "key2", "key3", "key4", "key5", "key6", "key7", "key8", "key9", "key10"]}`
	}},
	{Name: "recorded: filter runs on past the ids shown", Kind: "filter", Want: "unknown_id", Reply: func(r llm.Request) string {
		ids := []string{viewOf(r).ids()[0]}
		for i := 19; i <= 34; i++ {
			ids = append(ids, fmt.Sprintf("D1:%d", i))
		}
		return js(map[string]any{"relevant_ids": ids})
	}},
	{Name: "summary copied from instructions", Kind: "event_update", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return js(map[string]any{"summary": "2 to 3 sentences covering the whole event so far, including what is new: who, what, where and when",
			"keywords": []string{"painting"}, "tags": []string{"hobby"}, "new_facts": []any{}})
	}},
	{Name: "facts reading the new turn", Kind: "event_update", Want: "vacuous", Reply: func(r llm.Request) string {
		v := viewOf(r)
		facts := []map[string]string{}
		for range 28 {
			facts = append(facts, map[string]string{"time": "", "fact": "the new turn", "turn_id": v.ids()[0]})
		}
		summary, kws, _ := v.good()
		return js(map[string]any{"summary": summary, "keywords": kws, "new_facts": facts})
	}},
	{Name: "summary is a JSON fragment", Kind: "event_update", Want: "junk_text", Reply: func(r llm.Request) string {
		return js(map[string]any{"summary": `{"summary": "`, "keywords": []string{"painting"}})
	}},
	{Name: "fact cites a turn not shown", Kind: "event_update", Want: "unknown_id", Reply: func(r llm.Request) string {
		summary, kws, _ := viewOf(r).good()
		return js(map[string]any{"summary": summary, "keywords": kws,
			"new_facts": []map[string]string{{"time": "", "fact": summary, "turn_id": "D42:7"}}})
	}},
	{Name: "forty facts", Kind: "event_update", Want: "over_cap", Reply: func(r llm.Request) string {
		summary, kws, _ := viewOf(r).good()
		facts := []map[string]string{}
		for i := range 40 {
			facts = append(facts, map[string]string{"fact": fmt.Sprintf("%s (part %d)", strings.TrimSuffix(summary, "."), i+1)})
		}
		return js(map[string]any{"summary": summary, "keywords": kws, "new_facts": facts})
	}},
	// Recorded from Ollama v0.17.4 serving SmolLM2-135M-Instruct and Gemma
	// 3 270M with default settings (issue 33): schema-valid records that
	// passed every check above but say nothing the turns said.
	{Name: "recorded ollama: a turn id as a title", Kind: "build_batch", Want: "junk_title", Reply: func(r llm.Request) string {
		v := viewOf(r)
		return v.batch(plainItem, withTitle(v.ids()[len(v.ids())-1]))
	}},
	{Name: "recorded ollama: a LoCoMo-style id as a title", Kind: "build_batch", Want: "junk_title", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle("D3:7"))
	}},
	{Name: "recorded ollama: summary of invented people", Kind: "build_batch", Want: "ungrounded", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": goodTitle, "summary": "Mike Johnson and David Brito met at the community center to plan the fundraiser.",
				"keywords": goodKeywords}
		}, "new:1"))
	}},
	{Name: "recorded ollama: keywords of invented names joined", Kind: "build_batch", Want: "ungrounded", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": goodTitle, "summary": goodSummary, "keywords": []string{"mike_johnson_david_brito", "community_center"}}
		}, "new:1"))
	}},
	{Name: "recorded ollama: the model describes itself", Kind: "build_batch", Want: "role_play", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": goodTitle, "summary": "I am a greyhound dog. I love to run and I sleep twenty hours a day.",
				"keywords": goodKeywords}
		}, "new:1"))
	}},
	{Name: "recorded ollama: update by the model describing itself", Kind: "event_update", Want: "role_play", Reply: func(r llm.Request) string {
		_, kws, _ := viewOf(r).good()
		return js(map[string]any{"summary": "I am a greyhound dog, and I am very happy to be here with you.", "keywords": kws, "new_facts": []any{}})
	}},
	{Name: "recorded ollama: update of invented people and dates", Kind: "event_update", Want: "ungrounded", Reply: func(r llm.Request) string {
		_, kws, _ := viewOf(r).good()
		return js(map[string]any{"summary": "Mike Johnson and David Brito attended the fundraiser on 14 February 1998.", "keywords": kws,
			"new_facts": []any{}})
	}},
	{Name: "recorded ollama: title about someone else", Kind: "build_batch", Want: "ungrounded", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, withTitle("David Brito's fundraiser"))
	}},
	{Name: "predict lists every turn", Kind: "predict", Want: "over_cap", Reply: func(r llm.Request) string {
		ids := viewOf(r).ids()
		return js(map[string]any{"turn_ids": append(ids, ids...)})
	}},
	{Name: "predict ids not shown", Kind: "predict", Want: "unknown_id", Reply: func(r llm.Request) string {
		return js(map[string]any{"turn_ids": []string{"1", "2", "turn_id", "D1:999"}})
	}},
	{Name: "filter repeats and invents ids", Kind: "filter", Want: "duplicate", Reply: func(r llm.Request) string {
		ids := viewOf(r).ids()
		return js(map[string]any{"relevant_ids": []string{ids[0], ids[0], "D7:77"}})
	}},
	{Name: "select runs on past the ids shown", Kind: "select", Want: "unknown_id", Reply: func(r llm.Request) string {
		ids := []string{viewOf(r).ids()[0]}
		for i := 19; i <= 34; i++ {
			ids = append(ids, fmt.Sprintf("D1:%d", i))
		}
		return js(map[string]any{"turn_ids": ids})
	}},
	{Name: "select lists every turn twice", Kind: "select", Want: "duplicate", Reply: func(r llm.Request) string {
		ids := viewOf(r).ids()
		return js(map[string]any{"turn_ids": append(ids, ids...)})
	}},
	{Name: "records: summaries copied from instructions", Kind: "build_batch", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": "Weekend plans", "summary": "2 to 3 sentences covering the whole event so far, including what its new turns add",
				"keywords": []string{"time"}, "new_facts": []any{}}
		}, "new:1"))
	}},
	{Name: "records: summary }, with facts the new", Kind: "build_batch", Want: "junk_text", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": "Weekend plans", "summary": "}, ", "keywords": []string{"time"}, "tags": []string{"new_facts"},
				"new_facts": []map[string]string{{"fact": "the new", "turn_id": "}, {"}}}
		}, "new:1"))
	}},
	{Name: "records: events not shown", Kind: "build_batch", Want: "unknown_id", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, []map[string]any{{"id": "e999", "summary": goodSummary, "keywords": []string{"painting"}},
			{"id": "new:1", "title": "Support group", "summary": "Caroline went to a support group.", "keywords": []string{"support group"}}})
	}},
	{Name: "records: an event shown that no turn joined", Kind: "build_batch", Want: "unused", Reply: func(r llm.Request) string {
		v := viewOf(r)
		return v.batch(plainItem, append(withTitle("Weekend plans"), map[string]any{"id": v.eventID(), "summary": goodSummary}))
	}},
	// Recorded from the same server answering the select and the
	// event-updates prompt that build_batch now folds in
	// (an earlier recording of testdata/llamacpp-gemma3-270m-default.jsonl).
	{Name: "recorded: select 1 … 30", Kind: "select", Want: "unknown_id", Reply: func(r llm.Request) string {
		ids := make([]string, 30)
		for i := range ids {
			ids[i] = fmt.Sprint(i + 1)
		}
		return js(map[string]any{"turn_ids": ids})
	}},
	{Name: "recorded: records of id :{ and summary }, {", Kind: "build_batch", Want: "unknown_id", Reply: func(r llm.Request) string {
		items := []map[string]any{{"id": ":{", "summary": "}, {", "keywords": []string{"who", "what", "where"}, "tags": []string{"when"}}}
		for range 11 {
			items = append(items, map[string]any{"id": ":{", "summary": "}, {", "keywords": []string{"when"}})
		}
		return viewOf(r).batch(plainItem, items)
	}},
	// Recorded from the same server under the schemas narrowed per request
	// (internal/prompt/constrain.go): the ids are now right, the words are
	// not (BENCHMARKS.md, issue 17, narrowed schemas).
	{Name: "recorded narrowed: summary the new turns are now in order", Kind: "build_batch", Want: "vacuous", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": "New events", "summary": "The new turns are now in order.", "keywords": []string{"people"},
				"tags": []string{"person"}, "new_facts": []any{}}
		}, "new:1"))
	}},
	{Name: "recorded narrowed: every context is another turn's text", Kind: "build_batch", Want: "copied_instructions", Reply: func(r llm.Request) string {
		v := viewOf(r)
		other := v.turns[len(v.turns)-1].text
		return v.batch(func(i int, t line) map[string]any {
			it := plainItem(i, t)
			if i < len(v.turns)-1 {
				it["context"] = other
			}
			return it
		}, withTitle("Weekend plans"))
	}},
	{Name: "recorded narrowed: keywords people, tags person on every turn", Kind: "build_batch", Want: "stop_word", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			it := plainItem(i, t)
			it["keywords"], it["tags"] = []string{"people"}, []string{"person"}
			return it
		}, withTitle("Weekend plans"))
	}},
	{Name: "recorded narrowed: a turn joins one label twice", Kind: "build_batch", Want: "duplicate", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			it := plainItem(i, t)
			it["events"] = []string{"new:1", "new:1"}
			return it
		}, withTitle("Weekend plans"))
	}},
	{Name: "recorded narrowed: facts }, { citing the first turn", Kind: "build_batch", Want: "junk_text", Reply: func(r llm.Request) string {
		v := viewOf(r)
		return v.batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": "Weekend plans", "summary": goodSummary, "keywords": []string{"painting"},
				"new_facts": []map[string]string{{"time": "2023-04-15T16:08:09+00:0", "fact": "}, {", "turn_id": v.turns[0].id}}}
		}, "new:1"))
	}},
	{Name: "recorded narrowed: people of labels", Kind: "build_batch", Want: "unknown_id", Reply: func(r llm.Request) string {
		v := viewOf(r)
		var people []map[string]any
		for i := range 3 {
			people = append(people, map[string]any{"entity": fmt.Sprintf("new:%d", i+1), "attribute": fmt.Sprintf("new:%d", i+2),
				"value": "New events", "turn_ids": v.ids(), "ended": false})
		}
		var out map[string]any
		_ = json.Unmarshal([]byte(v.batch(plainItem, withTitle("Weekend plans"))), &out)
		out["people"] = people
		return js(out)
	}},
	{Name: "recorded narrowed: the key of the event on every turn", Kind: "build_batch", Want: "duplicate", Reply: func(r llm.Request) string {
		return viewOf(r).batch(func(i int, t line) map[string]any {
			it := plainItem(i, t)
			it["keywords"], it["tags"], it["context"] = []string{"key"}, []string{"key"}, "the key of the event"
			return it
		}, withTitle("Weekend plans"))
	}},
	{Name: "recorded narrowed: one summary for every event", Kind: "build_batch", Want: "duplicate", Reply: func(r llm.Request) string {
		v := viewOf(r)
		return v.batch(func(i int, t line) map[string]any {
			it := plainItem(i, t)
			it["events"] = []string{fmt.Sprintf("new:%d", i%2+1)}
			return it
		}, records(func(string) map[string]any {
			return map[string]any{"title": "Caroline's week", "summary": "Caroline has a pet and a job she likes.", "keywords": []string{"pet"}}
		}, "new:1", "new:2"))
	}},
	{Name: "recorded narrowed: summary about the new events, with the prompt's ::", Kind: "build_batch", Want: "vacuous", Reply: func(r llm.Request) string {
		return viewOf(r).batch(plainItem, records(func(string) map[string]any {
			return map[string]any{"title": "The new event is a person's name, and it was created by Caroline.",
				"summary":  "The new events are the same as the old ones, but they have different people and places. :: The person who is named in this event has a pet.",
				"keywords": []string{"pet"}}
		}, "new:1"))
	}},
	{Name: "query copied from instructions", Kind: "query", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return js(map[string]any{"keyword_query": "the key terms to search for, without question words", "temporal": false})
	}},
	{Name: "answer copied from instructions", Kind: "answer", Want: "copied_instructions", Reply: func(r llm.Request) string {
		return js(map[string]any{"answer": "a short phrase, using words from the memory where possible"})
	}},
	{Name: "answer is the prompt's temporal example", Kind: "answer", Want: "copied_instructions", Reply: func(r llm.Request) string {
		// SmolLM2 and Gemma 3 270M through Ollama answered "14 March
		// 2021", the first example date of answer.tmpl's temporal
		// instruction, about turns of 2024 (testdata/ollama-*.jsonl).
		// Consumers' junk tests ask a temporal question for it; a prompt
		// without the instruction gets its instructions read back.
		if m := temporalExample.FindStringSubmatch(firstUser(r)); m != nil {
			return js(map[string]any{"answer": m[1]})
		}
		return js(map[string]any{"answer": "a short phrase, using words from the memory where possible"})
	}},
	{Name: "answer is JSON", Kind: "answer", Want: "bad_answer", Reply: func(r llm.Request) string {
		return js(map[string]any{"answer": `{"answer": ""}`})
	}},
	{Name: "affiliation to unknown events", Kind: "affiliate", Want: "unknown_id", Reply: func(r llm.Request) string {
		return js(map[string]any{"affiliations": []string{"e99", "event 1"}, "reasoning": "It fits."})
	}},
	{Name: "turn note of meta words", Kind: "turn_note", Want: "stop_word", Reply: func(r llm.Request) string {
		return js(map[string]any{"keywords": []string{"keywords", "tags", "turn"}, "tags": []string{"tags"},
			"context": "one sentence saying what the turn is about, naming who and, if known, when"})
	}},
}

// RealJunk is a scripted fake in the manner of the real small model: it
// answers each prompt with the junk shapes of its kind in turn (Scripted's
// answer for kinds without shapes; CORRECT to every judge prompt), so that a pipeline test sees every
// shape. Safe for concurrent use; the zero value is ready.
type RealJunk struct {
	// Fallback answers kinds without junk shapes (nil: a new Scripted).
	Fallback llm.Model

	mu   sync.Mutex
	next map[string]int
	fb   *Scripted
}

// Complete answers req with the next junk shape of its kind.
func (j *RealJunk) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	var shapes []JunkShape
	for _, s := range JunkShapes {
		if s.Kind == req.SchemaName {
			shapes = append(shapes, s)
		}
	}
	j.mu.Lock()
	if j.next == nil {
		j.next = map[string]int{}
	}
	n := j.next[req.SchemaName]
	j.next[req.SchemaName]++
	fb := j.Fallback
	if fb == nil {
		if j.fb == nil {
			j.fb = NewScripted()
		}
		fb = j.fb
	}
	j.mu.Unlock()
	if req.SchemaName == "judge" || strings.HasPrefix(firstUser(req), "Grade an answer") {
		// The judge the real model was: CORRECT for every answer, "Not
		// mentioned" included.
		content := `{"label":"CORRECT","reasoning":"The answer matches the gold answer."}`
		return llm.Response{Content: content, Model: "real-junk", Usage: llm.Usage{PromptTokens: promptTokens(req), CompletionTokens: 16}}, nil
	}
	if len(shapes) == 0 {
		return fb.Complete(ctx, req)
	}
	content := shapes[n%len(shapes)].Reply(req)
	return llm.Response{Content: content, Model: "real-junk",
		Usage: llm.Usage{PromptTokens: promptTokens(req), CompletionTokens: (len(content) + 3) / 4}}, nil
}

func firstUser(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func promptTokens(req llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return (n + 3) / 4
}
