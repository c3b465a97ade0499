package harness

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func ptr(x float64) *float64 { return &x }

func TestMeanSD(t *testing.T) {
	cases := []struct {
		xs       []float64
		mean, sd float64
	}{
		{nil, 0, 0},
		{[]float64{0.5}, 0.5, 0},
		{[]float64{0.4, 0.6}, 0.5, 0.1},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 2}, // population sd
	}
	for _, c := range cases {
		m, sd := meanSD(c.xs)
		if !near(m, c.mean) || !near(sd, c.sd) {
			t.Errorf("meanSD(%v) = %v, %v; want %v, %v", c.xs, m, sd, c.mean, c.sd)
		}
	}
}

func TestJudgeScore(t *testing.T) {
	v := func(run int, ok bool, errs ...string) Verdict {
		x := Verdict{Run: run, Correct: ok}
		if len(errs) > 0 {
			x.Error = errs[0]
		}
		return x
	}
	qs := []QuestionRecord{
		{Judge: []Verdict{v(0, true), v(1, true)}},
		{Judge: []Verdict{v(0, true), v(1, false)}},
		{Judge: []Verdict{v(0, false), v(1, false)}},
		{Judge: []Verdict{v(0, true), v(1, false, "unusable")}}, // run 1 not counted
		{}, // not judged
	}
	// Run 0: 3/4; run 1: 1/3. Mean 13/24, population sd 5/24.
	got := judgeScore(qs, 2)
	if got == nil || !near(got.Mean, 13.0/24) || !near(got.SD, 5.0/24) || got.Runs != 2 || got.N != 4 {
		t.Errorf("judgeScore = %+v; want mean %.4f sd %.4f over 2 runs, n 4", got, 13.0/24, 5.0/24)
	}
	if judgeScore([]QuestionRecord{{}, {}}, 3) != nil {
		t.Error("judgeScore without verdicts is not nil")
	}
}

func TestSummarizeGroup(t *testing.T) {
	qs := []QuestionRecord{
		{Category: 1, Scores: &Scores{Official: 1, AMemF1: 0.5, BLEU1: 0.25, EM: 1}, GoldEvidence: []string{"D1:1"},
			K: 4, Precision: 0.25, Recall: 1, ContextTokens: 100, Rounds: 2, WallMS: 10,
			Calls: []CallStat{{Role: llm.RoleAnswer, Operation: "answer", Calls: 1, Prompt: 300, Completion: 5}, {Role: llm.RoleMemory, Operation: "filter", Calls: 1, Prompt: 1000}}},
		{Category: 1, Scores: &Scores{Official: 0, AMemF1: 0.5, BLEU1: 0.75}, GoldEvidence: []string{"D1:2", "D1:3"},
			K: 2, Precision: 0.5, Recall: 0.5, ContextTokens: 50, Rounds: 2, WallMS: 30,
			Calls: []CallStat{{Role: llm.RoleAnswer, Operation: "answer", Calls: 1, Prompt: 100}}},
		// No gold evidence: not in P/R/K, but in every other mean.
		{Category: 3, Scores: &Scores{Official: 0.5}, K: 9, ContextTokens: 0, Rounds: 5, WallMS: 20},
	}
	g := summarizeGroup(qs, 1)
	want := Group{N: 3, Answered: 3, OfficialF1: ptr(0.5), AMemF1: ptr(1.0 / 3), BLEU1: ptr(1.0 / 3), EM: ptr(1.0 / 3),
		EvidenceN: 2, Precision: ptr(0.375), Recall: ptr(0.75), K: ptr(3),
		ContextTokens: 50, AnswerPromptTokens: 400.0 / 3, Rounds: 3, WallMS: 20}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("summarizeGroup =\n%+v\nwant\n%+v", g, want)
	}
	// Unanswered questions leave the answer scores nil.
	g = summarizeGroup([]QuestionRecord{{Category: 2, GoldEvidence: []string{"D1:1"}, Recall: 1, Precision: 1, K: 1}}, 1)
	if g.OfficialF1 != nil || g.AMemF1 != nil || g.Answered != 0 || *g.Recall != 1 {
		t.Errorf("retrieval-only group %+v", g)
	}
	if g := summarizeGroup(nil, 1); g.N != 0 || g.Recall != nil || g.OfficialF1 != nil {
		t.Errorf("empty group %+v", g)
	}
}

func TestSummarize(t *testing.T) {
	rc := RunConfig{Systems: []string{"oracle", "amem"}, Samples: []string{"s1", "s0"}, JudgeRuns: 1,
		Skipped: map[string]string{"amem": "no LLM"}}
	qs := []QuestionRecord{
		{System: "oracle", Sample: "s0", QA: 1, Category: 4, Scores: &Scores{Official: 1}, GoldEvidence: []string{"a"}, Recall: 1, Precision: 1, K: 1,
			Stages: []StageScore{{Name: "final", IDs: []string{"a"}, K: 1, Precision: 1, Recall: 1}}, WallMS: 5,
			Calls: []CallStat{{Role: llm.RoleAnswer, Operation: "answer", Calls: 1, Prompt: 10, Completion: 2, Cached: 1}}},
		{System: "oracle", Sample: "s1", QA: 0, Category: 5, Scores: &Scores{Official: 0}, GoldEvidence: []string{"b"}, Recall: 1, Precision: 1, K: 1,
			Stages: []StageScore{{Name: "final", IDs: []string{"b"}, K: 1, Precision: 1, Recall: 1}}, WallMS: 15,
			Calls: []CallStat{{Role: llm.RoleAnswer, Operation: "answer", Calls: 1, Prompt: 20, Completion: 2}}},
		// A duplicate (as after a crash between write and bookkeeping)
		// counts once.
		{System: "oracle", Sample: "s0", QA: 1, Category: 4, Scores: &Scores{Official: 0}},
	}
	bs := []BuildRecord{
		{System: "oracle", Sample: "s0", Session: 1, Turns: 10, WallMS: 1},
		{System: "oracle", Sample: "s0", Session: 2, Turns: 5, WallMS: 2},
		{System: "oracle", Sample: "s0", Session: 2, Turns: 5, WallMS: 2},
	}
	res := Summarize(rc, "r", bs, qs)
	if len(res) != 2 || res[0].System != "oracle" || res[1].System != "amem" {
		t.Fatalf("systems %+v", res)
	}
	o := res[0]
	if o.Questions != 2 || o.Build.Units != 15 || o.Build.WallMS != 3 || o.QA.Units != 2 || o.QA.Calls != 2 || o.QA.Cached != 1 ||
		o.QA.Prompt != 30 || o.QA.WallMS != 20 {
		t.Errorf("oracle totals: questions %d, build %+v, qa %+v", o.Questions, o.Build, o.QA)
	}
	if g := group(o, "4"); g.N != 1 || *g.OfficialF1 != 1 {
		t.Errorf("category 4: %+v (the duplicate counted?)", g)
	}
	if g := group(o, "1-4"); g.N != 1 {
		t.Errorf("1-4 has %d questions", g.N)
	}
	if g := group(o, "1-5"); g.N != 2 || *g.OfficialF1 != 0.5 {
		t.Errorf("1-5: %+v", g)
	}
	if len(o.Stages) != 1 || o.Stages[0] != (StageSummary{Name: "final", N: 2, K: 1, Precision: 1, Recall: 1}) {
		t.Errorf("stages %+v", o.Stages)
	}
	if a := res[1]; a.Skipped != "no LLM" || a.Questions != 0 {
		t.Errorf("amem %+v", a)
	}
	if got := o.QA.Per(float64(o.QA.Prompt)); got != 15 {
		t.Errorf("prompt tokens per question %v", got)
	}
	if (Cost{}).Per(3) != 0 {
		t.Error("Per without units is not 0")
	}
}

func TestSearchCurve(t *testing.T) {
	qs := []QuestionRecord{
		{GoldEvidence: []string{"a", "b"}, Stages: []StageScore{{Name: "search", IDs: []string{"x", "a", "b"}}}},
		{GoldEvidence: []string{"c"}, Stages: []StageScore{{Name: "search", IDs: []string{"c"}}}},
		{GoldEvidence: nil, Stages: []StageScore{{Name: "search", IDs: []string{"z", "y", "x", "w"}}}}, // no gold: ignored
		{GoldEvidence: []string{"d"}, Stages: []StageScore{{Name: "final", IDs: []string{"d"}}}},       // no search stage
	}
	got := searchCurve(qs, 10)
	want := []CurvePoint{{1, 0.5}, {2, 0.75}, {3, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("searchCurve = %v, want %v", got, want)
	}
	if got := searchCurve(qs, 2); len(got) != 2 {
		t.Errorf("limit 2 gave %v", got)
	}
	if searchCurve(qs[3:], 10) != nil {
		t.Error("curve without a search stage")
	}
}

func TestCallStats(t *testing.T) {
	calls := []higmem.Call{
		{Role: llm.RoleMemory, Operation: "predict", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 1}},
		{Role: llm.RoleAnswer, Operation: "answer", Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3}, Cached: true},
		{Role: llm.RoleMemory, Operation: "predict", Usage: llm.Usage{PromptTokens: 5}, Error: "bad", Latency: time.Second},
		{Role: llm.RoleMemory, Operation: "filter", Usage: llm.Usage{PromptTokens: 2}},
	}
	got := callStats(calls)
	want := []CallStat{
		{Role: llm.RoleAnswer, Operation: "answer", Calls: 1, Cached: 1, Prompt: 7, Completion: 3},
		{Role: llm.RoleMemory, Operation: "filter", Calls: 1, Prompt: 2},
		{Role: llm.RoleMemory, Operation: "predict", Calls: 2, Errors: 1, Prompt: 15, Completion: 1, LatencyMS: 1000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("callStats =\n%+v\nwant\n%+v", got, want)
	}
	merged := mergeStats(append([]CallStat(nil), got...), []CallStat{{Role: llm.RoleMemory, Operation: "filter", Calls: 2, Prompt: 4}, {Role: llm.RoleJudge, Operation: "judge", Calls: 1}})
	if len(merged) != 4 || merged[1] != (CallStat{Role: llm.RoleJudge, Operation: "judge", Calls: 1}) || merged[2].Calls != 3 || merged[2].Prompt != 6 {
		t.Errorf("mergeStats = %+v", merged)
	}
}

func TestNewRecord(t *testing.T) {
	s := &locomo.Sample{ID: "s", QA: []locomo.QA{
		{Question: "q?", Answer: "beagle", Category: 4, Evidence: []string{"D1:1", "D1:2"}},
		{Question: "car?", AdversarialAnswer: "Ferrari", Category: 5, Evidence: []string{"D1:3"}},
	}}
	out := &Outcome{Answer: "a beagle", Answered: true, Evidence: []string{"D1:1", "D1:5", "D1:1"},
		Stages: []higmem.Stage{{Name: "search", IDs: []string{"D1:2"}}, {Name: "events", IDs: []string{"e1"}}}}
	r := newRecord("x", s, 0, out)
	if r.K != 2 || !near(r.Precision, 0.5) || !near(r.Recall, 0.5) {
		t.Errorf("K %d P %v R %v", r.K, r.Precision, r.Recall)
	}
	if len(r.Stages) != 1 || r.Stages[0].Name != "search" || r.Stages[0].Recall != 0.5 {
		t.Errorf("stages %+v (events must be left out)", r.Stages)
	}
	if r.Scores.Official != locomo.OfficialF1("a beagle", "beagle", 4) || r.Scores.AMemF1 != locomo.AMemF1("a beagle", "beagle") {
		t.Errorf("scores %+v", r.Scores)
	}
	// Category 5: official rule on the answer; A-Mem metrics against the trap.
	r = newRecord("x", s, 1, &Outcome{Answer: "Ferrari", Answered: true})
	if r.Scores.Official != 0 || r.Scores.AMemF1 != 1 || r.Scores.BLEU1 != 1 {
		t.Errorf("trap answer scores %+v", r.Scores)
	}
	r = newRecord("x", s, 1, &Outcome{Answer: "Not mentioned in the conversation", Answered: true})
	if r.Scores.Official != 1 || r.Scores.AMemF1 != 0 {
		t.Errorf("abstention scores %+v", r.Scores)
	}
	if r := newRecord("x", s, 0, &Outcome{}); r.Scores != nil || r.Evidence == nil {
		t.Errorf("unanswered record %+v", r)
	}
}

func TestOpenJSONLRepair(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	count := func() int {
		n := 0
		w, err := openJSONL(path, func([]byte) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		return n
	}
	if err := os.WriteFile(path, []byte("{\"a\":1}\n{\"a\":2}\n{\"a\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The reader's parse of the cut line fails: emulate it.
	n := 0
	w, err := openJSONL(path, func(b []byte) error {
		n++
		if !strings.HasSuffix(string(b), "}") {
			return os.ErrInvalid
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.write(map[string]int{"a": 3}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := os.ReadFile(path)
	if string(b) != "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n" {
		t.Errorf("after repair and append: %q", b)
	}
	if c := count(); c != 3 {
		t.Errorf("%d records, want 3", c)
	}
	// Damage in the middle is an error, not silently dropped.
	if err := os.WriteFile(path, []byte("{\"a\":1}\nxx\n{\"a\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openJSONL(path, func(b []byte) error {
		if b[0] != '{' {
			return os.ErrInvalid
		}
		return nil
	})
	if err == nil {
		t.Error("corrupt middle line accepted")
	}
}

func TestMarkdownWithoutRuns(t *testing.T) {
	md := Markdown(&Report{})
	for _, s := range Sections {
		if !strings.Contains(md, s) {
			t.Errorf("empty report lacks %q", s)
		}
	}
	for _, svg := range []string{RecallChart(nil), F1Chart(nil), TokensChart(nil), CallsChart(nil)} {
		if !strings.HasPrefix(svg, "<svg") || !strings.HasSuffix(svg, "</svg>\n") {
			t.Errorf("chart without data is not an SVG document: %.60q", svg)
		}
	}
}

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0, 1}, {0.7, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {12, 20}, {599, 1000}} {
		if got := niceCeil(c.in); !near(got, c.want) {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSampleRecall(t *testing.T) {
	qs := []QuestionRecord{
		{Sample: "a", GoldEvidence: []string{"D1:1"}, Recall: 1},
		{Sample: "a", GoldEvidence: []string{"D1:2"}, Recall: 0},
		{Sample: "b", GoldEvidence: []string{"D1:1"}, Recall: 1},
		{Sample: "b"}, // no evidence: not counted
	}
	got := sampleRecall(qs)
	if got == nil || got.Mean != 0.75 || got.SD != 0.25 || got.Runs != 2 || got.N != 3 {
		t.Errorf("sampleRecall = %+v, want mean 0.75 sd 0.25 over 2 samples, 3 questions", got)
	}
	if sampleRecall(qs[3:]) != nil {
		t.Error("sampleRecall without evidence is not nil")
	}
}
