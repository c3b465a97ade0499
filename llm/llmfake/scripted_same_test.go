package llmfake

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"

	"github.com/higmem/higmem/llm"
)

// The tests below prove that Scripted, rewritten without regular
// expressions and with one tokenisation per text, replies exactly as the
// old implementation (oldfake_test.go) did: on every prompt the tests of
// the module sent it (testdata/prompts.jsonl.gz), on the golden prompts of
// internal/prompt, and on fuzzed text.
//
// testdata/prompts.jsonl.gz holds the distinct requests that Scripted
// received during `go test` of the root package, internal/cli,
// internal/bench, internal/memcheck, server/... and eval/..., and during
// `higmem bench -q --sizes 100000 --modes offline,default --queries 300`,
// recorded with a binary built with the llmfakerecord tag (record.go),
// each line marked "from": "bench" or "test". To check further
// recordings, list them in HIGMEM_LLMFAKE_SAME (separated by the OS's
// path list separator).

// sameSystem is the system message of the requests the tests build.
const sameSystem = "You are the memory module of a long-term conversational assistant."

// sameKinds returns the prompt kinds the fake answers, sorted, and one it
// does not know.
func sameKinds() []string {
	var ks []string
	for k := range replies {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return append(ks, "no_such_prompt")
}

// checkSame fails t unless the new and the old Scripted give the same
// reply (or error) to req.
func checkSame(t testing.TB, req llm.Request) {
	t.Helper()
	ctx := context.Background()
	for try := 0; ; try++ {
		got, gerr := (&Scripted{}).Complete(ctx, req)
		want, werr := oldComplete(ctx, req)
		if got == want && errText(gerr) == errText(werr) {
			return
		}
		// profile_decide joins the events' texts in map order, so a
		// name spanning two texts can be found or not at random, by
		// either implementation: retry before failing.
		if req.SchemaName == "profile_decide" && try < 50 {
			continue
		}
		t.Fatalf("%s: new reply\n%+v (err %v)\nold reply\n%+v (err %v)\nprompt:\n%q",
			req.SchemaName, got, gerr, want, werr, user(req))
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func user(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// recordedReq is one recorded request; from says where it was recorded
// ("bench", "test", or "" when the file does not say).
type recordedReq struct {
	llm.Request
	from string
}

// loadRecorded reads a record file (plain or gzipped JSON lines).
func loadRecorded(t testing.TB, path string) []recordedReq {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r *bufio.Scanner
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = bufio.NewScanner(z)
	} else {
		r = bufio.NewScanner(f)
	}
	r.Buffer(nil, 64<<20)
	var out []recordedReq
	for r.Scan() {
		var rec struct {
			Kind     string        `json:"kind"`
			From     string        `json:"from"`
			Messages []llm.Message `json:"messages"`
		}
		if err := json.Unmarshal(r.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, recordedReq{llm.Request{SchemaName: rec.Kind, Messages: rec.Messages}, rec.From})
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// recordedPrompts returns the committed recording and any listed in
// HIGMEM_LLMFAKE_SAME.
func recordedPrompts(t testing.TB) []recordedReq {
	reqs := loadRecorded(t, filepath.Join("testdata", "prompts.jsonl.gz"))
	if env := os.Getenv("HIGMEM_LLMFAKE_SAME"); env != "" {
		for _, p := range filepath.SplitList(env) {
			reqs = append(reqs, loadRecorded(t, p)...)
		}
	}
	return reqs
}

// goldenPrompts returns internal/prompt's golden prompts, each as the
// request of its kind (named by the file).
func goldenPrompts(t testing.TB) []llm.Request {
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "prompt", "testdata", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden prompts: %v", err)
	}
	kinds := sameKinds()
	var out []llm.Request
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		kind := ""
		for _, k := range kinds {
			if strings.HasPrefix(base, k) && len(k) > len(kind) {
				kind = k
			}
		}
		sys, usr, ok := strings.Cut(strings.TrimPrefix(string(b), "SYSTEM:\n"), "\n\nUSER:\n")
		if kind == "" || !ok {
			t.Fatalf("%s: no kind or no USER part", base)
		}
		out = append(out, llm.Request{SchemaName: kind, Messages: []llm.Message{{Role: "system", Content: sys}, {Role: "user", Content: usr}}})
	}
	return out
}

func TestScriptedSameRecorded(t *testing.T) {
	reqs := recordedPrompts(t)
	kinds := map[string]int{}
	for _, req := range reqs {
		checkSame(t, req.Request)
		kinds[req.SchemaName]++
	}
	t.Logf("%d recorded requests the same: %v", len(reqs), kinds)
	// The recording must cover every prompt kind.
	for _, k := range sameKinds()[:len(replies)] {
		if kinds[k] == 0 {
			t.Errorf("no recorded %s prompt", k)
		}
	}
}

func TestScriptedSameGolden(t *testing.T) {
	for _, req := range goldenPrompts(t) {
		// Every kind on every golden prompt: a prompt of one kind read
		// as another exercises more of each reply.
		for _, k := range sameKinds() {
			req.SchemaName = k
			checkSame(t, req)
		}
	}
}

// TestParseSame compares what the new and the old parser read of the
// recorded and golden prompts, field by field: replies use only part of
// it.
func TestParseSame(t *testing.T) {
	for _, req := range goldenPrompts(t) {
		checkParse(t, user(req))
	}
	for _, req := range recordedPrompts(t) {
		checkParse(t, user(req.Request))
	}
}

// checkParse fails t unless parse and oldParse read s alike.
func checkParse(t testing.TB, s string) {
	t.Helper()
	p, o := parse(s), oldParse(s)
	g, _ := json.Marshal(dumpParsed(p))
	w, _ := json.Marshal(dumpParsed(o.asNew()))
	if string(g) != string(w) {
		t.Fatalf("parse of %q:\nnew %s\nold %s", s, g, w)
	}
}

// dumpParsed renders p for comparison (unexported fields and all).
func dumpParsed(p parsed) map[string]any {
	secs := map[string][][4]string{}
	for k, ls := range p.sections {
		for _, l := range ls {
			secs[k] = append(secs[k], [4]string{l.id, l.date, l.speaker, l.text})
		}
	}
	evs := map[string][][2]string{}
	for k, es := range p.events {
		for _, e := range es {
			evs[k] = append(evs[k], [2]string{e.id, e.text})
		}
	}
	return map[string]any{"raw": p.raw, "question": p.question, "order": p.order, "gold": p.gold,
		"graded": p.graded, "max": p.max, "sections": secs, "events": evs}
}

// checkWords fails t unless the word functions agree with the old ones
// on a and b.
func checkWords(t testing.TB, a, b string) {
	t.Helper()
	if g, w := words(a), oldWords(a); !slices.Equal(g, w) {
		t.Fatalf("words(%q) = %q, old %q", a, g, w)
	}
	for _, n := range []int{0, 1, 3, 5, 10} {
		if g, w := keywords(a, n), oldKeywords(a, n); !slices.Equal(g, w) || g == nil {
			t.Fatalf("keywords(%q, %d) = %q, old %q", a, n, g, w)
		}
	}
	if g, w := overlap(a, b), oldOverlap(a, b); g != w {
		t.Fatalf("overlap(%q, %q) = %d, old %d", a, b, g, w)
	}
	if g, w := overlap(b, a), oldOverlap(b, a); g != w {
		t.Fatalf("overlap(%q, %q) = %d, old %d", b, a, g, w)
	}
}

func TestWordsSame(t *testing.T) {
	cases := [][2]string{
		{"", ""},
		{"The Cat sat on the MAT; the cat!", "a cat, mats and THE mat"},
		{"İstanbul KELVIN \u212a\u212a\u212a ǅemal ΣΊΣΥΦΟΣ straße", "istanbul kkk ǆemal σίσυφοσ STRASSE"},
		{"bad \xff\xfeutf8 ab\xe2\x80cd caf\xc3\xa9s", "abcd cafés utf8"},
		{"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen",
			"nineteen eighteen one two eleven"},
		{"x1 22 333 4444 ⅰⅱⅲ ②③④ ٣٤٥ 三四五", "333 4444 ٣٤٥ 三四五"},
	}
	for _, c := range cases {
		checkWords(t, c[0], c[1])
	}
}

// FuzzScriptedSame compares the new and the old fake on random prompt
// text: every prompt kind on it, the parser, and the word functions on
// its two halves. Run it with a short minimisation time: the default
// 60 s per new input is spent on long seeds.
//
//	go test -run '^$' -fuzz FuzzScriptedSame -fuzztime 180s -fuzzminimizetime 2s ./llm/llmfake
func FuzzScriptedSame(f *testing.F) {
	for _, req := range goldenPrompts(f) {
		f.Add(user(req))
	}
	perKind := map[string]int{}
	for _, req := range recordedPrompts(f) {
		// Small ones only: the fuzzer is slow on long inputs.
		if s := user(req.Request); len(s) <= 4096 && perKind[req.SchemaName] < 2 {
			perKind[req.SchemaName]++
			f.Add(s)
		}
	}
	f.Add("[] a | b: c\n[a] b | c: d\n[x]  | : \n[y] d | e | f:g: h\n[z] q:r | s : t | u: v\n(event ) x\n(event e1)  \n(event e2) t")
	f.Add("utmost 7, most 8 at most x at most 12 at most 3\nQuestion: a b c\nEvent:\n  Its turns:  \n- x:\n[1] 2 | 3: 4")
	kinds := sameKinds()
	f.Fuzz(func(t *testing.T, s string) {
		checkParse(t, s)
		checkWords(t, s[:len(s)/2], s[len(s)/2:])
		req := llm.Request{Messages: []llm.Message{{Role: "system", Content: sameSystem}, {Role: "user", Content: s}}}
		for _, k := range kinds {
			req.SchemaName = k
			checkSame(t, req)
		}
	})
}

// BenchmarkComplete times the new and the old fake on recorded select
// prompts, the prompt default mode sends for every question: "bench" are
// those of `higmem bench` at 100k turns (6 kB of user text at the median),
// "tests" those of the tests (1.8 kB).
func BenchmarkComplete(b *testing.B) {
	sel := map[string][]llm.Request{}
	for _, req := range recordedPrompts(b) {
		if req.SchemaName == "select" {
			from := "tests"
			if req.from == "bench" {
				from = "bench"
			}
			sel[from] = append(sel[from], req.Request)
		}
	}
	ctx := context.Background()
	impls := []struct {
		name     string
		complete func(context.Context, llm.Request) (llm.Response, error)
	}{{"new", (&Scripted{}).Complete}, {"old", oldComplete}}
	for _, from := range []string{"bench", "tests"} {
		reqs := sel[from]
		if len(reqs) == 0 {
			b.Fatalf("no recorded %s select prompts", from)
		}
		for _, im := range impls {
			b.Run(from+"/"+im.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := im.complete(ctx, reqs[i%len(reqs)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSelects returns the select calls recorded from `higmem bench` on
// the 100k space (prompttest.BenchSelects) as
// requests, and the reply the scripted model gave each.
func benchSelects(tb testing.TB) ([]llm.Request, []string) {
	tb.Helper()
	var reqs []llm.Request
	var replies []string
	for _, c := range prompttest.BenchSelects(tb) {
		reqs = append(reqs, llm.Request{SchemaName: "select",
			Messages: []llm.Message{{Role: "system", Content: c.System}, {Role: "user", Content: c.User}}})
		replies = append(replies, c.Reply)
	}
	return reqs, replies
}

// TestScriptedSameBenchSelect checks the bench's recorded select calls:
// the new fake replies as the old one and as recorded, and every other
// prompt kind read on these prompts replies as the old one.
func TestScriptedSameBenchSelect(t *testing.T) {
	reqs, want := benchSelects(t)
	for i, req := range reqs {
		got, err := (&Scripted{}).Complete(context.Background(), req)
		if err != nil || got.Content != want[i] {
			t.Fatalf("select %d: reply %s (err %v), recorded %s", i, got.Content, err, want[i])
		}
		checkParse(t, user(req))
		for _, k := range sameKinds() {
			req.SchemaName = k
			checkSame(t, req)
		}
	}
}

// BenchmarkSelectBench times the new and the old fake on the bench's
// recorded select calls (4.3–8.2 kB of user text), one call per op.
func BenchmarkSelectBench(b *testing.B) {
	reqs, _ := benchSelects(b)
	ctx := context.Background()
	impls := []struct {
		name     string
		complete func(context.Context, llm.Request) (llm.Response, error)
	}{{"new", (&Scripted{}).Complete}, {"old", oldComplete}}
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := im.complete(ctx, reqs[i%len(reqs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// selectPrompt builds a select prompt from data, a few bytes per line:
// section headers (repeated, trimmed or not), turn lines (few ids, so
// that some repeat; dates with stray bars; speakers and texts from a
// small vocabulary in mixed case, with punctuation and non-ASCII words),
// event lines, questions and other lines, so that the fuzzer explores
// what the select reply reads rather than random text.
func selectPrompt(data []byte) string {
	heads := []string{"Event:", "Its turns:", "Turns found by search:", "  Its turns:  ", "- note:", "Other:", "Event: "}
	ids := []string{"D1:1", "D1:2", "D2:7", "D10:3", "x", "D1:1 "}
	dates := []string{"1 May 2020", "a |b: c", "a| b: c", "", "x | y", "|"}
	speakers := []string{"Ben", "Ava", "BEN", "ben:x", "", "Zoë"}
	vocab := []string{"museum", "Museum", "MUSEUM", "kite", "bought", "Ben", "the", "in", "at", "a", "ok",
		"museums", "straße", "STRASSE", "Café", "caf\u00e9s", "\u212aite", "İstanbul", "istanbul", "x1",
		"2024", "kite's", "mu-seum", "ka\xffte", "keeps", "me", "sane", "ΣΊΣΥΦΟΣ", "σίσυφοσ"}
	seps := []string{" ", ", ", "! ", "?", " - ", "\t", ":", " | "}
	var b strings.Builder
	b.WriteString("Pick the memory turns that answer a question.\n\n")
	text := func(d []byte) string {
		var t strings.Builder
		for _, c := range d {
			t.WriteString(vocab[int(c)%len(vocab)])
			t.WriteString(seps[int(c/32)%len(seps)])
		}
		return t.String()
	}
	for i := 0; i < len(data); {
		op := data[i]
		i++
		arg := byte(0)
		if i < len(data) {
			arg = data[i]
		}
		words := data[i:min(len(data), i+int(op>>4)%6+1)]
		switch op % 8 {
		case 0:
			b.WriteString(heads[int(arg)%len(heads)])
			i++
		case 1, 2, 3, 4:
			fmt.Fprintf(&b, "[%s] %s | %s: %s", ids[int(arg)%len(ids)], dates[int(op>>3)%len(dates)],
				speakers[int(arg>>3)%len(speakers)], text(words))
			i += len(words)
		case 5:
			fmt.Fprintf(&b, "(event e%d) %s :: %s", arg, text(words), text(words))
			i += len(words)
		case 6:
			b.WriteString("Question: What did Ben say about " + text(words))
			i += len(words)
		case 7:
			other := []string{"Return ids,", "Gold answer: at most", "", "[D1:1] bad line", "Answer to grade: x",
				"(event e1)", "- item", "Question: x"}
			fmt.Fprintf(&b, "%s at most %d%s", other[arg%8], arg%40, []string{"", ":", " : "}[int(arg>>3)%3])
			i++
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzSelectSame compares the new and the old fake's select reply on
// prompts built by selectPrompt, and the reply through parse (as
// another prompt kind's reader would) with the one Complete gives.
//
//	go test -run '^$' -fuzz FuzzSelectSame -fuzztime 60s ./llm/llmfake
func FuzzSelectSame(f *testing.F) {
	f.Add([]byte{6, 0, 5, 0, 0, 1, 1, 0, 1, 2, 17, 5, 0, 2, 3, 0, 0, 1, 1, 0, 1, 7, 3})
	f.Add([]byte{7, 9, 1, 0, 6, 0}) // a turn after "Gold answer: …:", no header
	f.Add([]byte("\x16\x05\x00\x1a\x00\x01\x01\x00\x00\x02\x10\x00\x00\x01\x21\x03\x05\x09\x00\x01\x31\x04\x05\x00\x06\x07\x02"))
	f.Add([]byte("\x06\x00\x05\x00\x00\x01\x15\x01\x00\x00\x02\x15\x00\x00\x04\x51\x00\x05\x00\x00\x01\x12\x01\x07\x11\x00\x16\x22\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := selectPrompt(data)
		req := llm.Request{SchemaName: "select", Messages: []llm.Message{{Role: "system", Content: sameSystem}, {Role: "user", Content: s}}}
		checkSame(t, req)
		b, _ := json.Marshal(parse(s).selectIDs())
		if got, _ := (&Scripted{}).Complete(context.Background(), req); got.Content != string(b) {
			t.Fatalf("Complete %s, through parse %s", got.Content, b)
		}
	})
}
