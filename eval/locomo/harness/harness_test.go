package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/amem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm"
)

// stage returns the ids of a record's named stage.
func stage(q QuestionRecord, name string) []string {
	for _, s := range q.Stages {
		if s.Name == name {
			return s.IDs
		}
	}
	return nil
}

const miniData = "testdata/mini_locomo.json"

// counting wraps a model and counts requests per prompt kind.
type counting struct {
	inner llm.Model
	mu    sync.Mutex
	n     map[string]int
}

func (c *counting) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[req.SchemaName]++
	c.mu.Unlock()
	return c.inner.Complete(ctx, req)
}

func (c *counting) count(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

func scripted(t *testing.T) *counting {
	t.Helper()
	m, err := FakeModel("scripted")
	if err != nil {
		t.Fatal(err)
	}
	return &counting{inner: m}
}

func findSystem(t *testing.T, rep *Report, name string) SystemResult {
	t.Helper()
	for _, s := range rep.Systems {
		if s.System == name {
			return s
		}
	}
	t.Fatalf("system %s not in report", name)
	return SystemResult{}
}

// TestRunEverySystem runs every system on the mini file with the scripted
// model and checks the report, the results file and the charts.
func TestRunEverySystem(t *testing.T) {
	model := scripted(t)
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		Data:      miniData,
		Out:       dir,
		Systems:   SystemNames(),
		Env:       Env{Memory: model, Answer: model, Embedder: hashing.New(64), K: 3},
		Judge:     model,
		JudgeRuns: 2,
		Models:    map[string]string{"memory": "scripted", "answer": "scripted", "judge": "scripted"},
		GitCommit: "0123456789abcdef",
		FakeLLM:   "scripted",
	})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range Sections {
		if !bytes.Contains(md, []byte("\n"+sec+"\n")) {
			t.Errorf("report.md lacks section %q", sec)
		}
	}
	for _, name := range SystemNames() {
		s := findSystem(t, rep, name)
		if s.Skipped != "" {
			t.Errorf("%s skipped: %s", name, s.Skipped)
		}
		if s.Questions != 17 {
			t.Errorf("%s: %d questions, want 17", name, s.Questions)
		}
		if !bytes.Contains(md, []byte("| "+name+" | ran")) {
			t.Errorf("report.md does not list %s as ran", name)
		}
		all := group(s, "1-5")
		if all.Recall == nil || all.EvidenceN != 16 {
			t.Errorf("%s: evidence questions %d, recall %v", name, all.EvidenceN, all.Recall)
		}
		if name == "offline" || name == "offline-no-temporal" || name == "offline-no-profiles" || name == "offline-no-stage" {
			if all.Answered != 0 || all.OfficialF1 != nil || all.J != nil {
				t.Errorf("offline has answer scores: %+v", all)
			}
			continue
		}
		if all.Answered != 17 || all.OfficialF1 == nil || all.AMemF1 == nil || all.BLEU1 == nil {
			t.Errorf("%s: answered %d, scores %v %v %v", name, all.Answered, all.OfficialF1, all.AMemF1, all.BLEU1)
		}
		// The judge skips category 5 and ran twice.
		if j := group(s, "1-4").J; j == nil || j.Runs != 2 || j.N != 14 {
			t.Errorf("%s: judge %+v, want 2 runs over 14 questions", name, j)
		}
		if group(s, "5").J != nil {
			t.Errorf("%s: category 5 was judged", name)
		}
		if s.QA.Per(float64(s.QA.Calls)) < 1 {
			t.Errorf("%s: %.2f LLM calls per question", name, s.QA.Per(float64(s.QA.Calls)))
		}
		if s.Judge.Calls != 28 {
			t.Errorf("%s: %d judge calls, want 28", name, s.Judge.Calls)
		}
	}

	// Baselines behave as defined.
	oracle := group(findSystem(t, rep, "oracle"), "1-5")
	if *oracle.Recall != 1 || *oracle.Precision != 1 {
		t.Errorf("oracle R %.3f P %.3f, want 1 and 1", *oracle.Recall, *oracle.Precision)
	}
	fc := findSystem(t, rep, "full-context")
	if g := group(fc, "1-5"); *g.Recall != 1 || *g.K < 6 {
		t.Errorf("full-context R %.3f K %.1f", *g.Recall, *g.K)
	}
	if fc.Build.Calls != 0 || fc.Build.Units != 22 || fc.QA.Calls != 17 {
		t.Errorf("full-context: %d build calls over %d turns, %d QA calls", fc.Build.Calls, fc.Build.Units, fc.QA.Calls)
	}
	vt := findSystem(t, rep, "hybrid-topk")
	if g := group(vt, "1-5"); *g.K > 3 {
		t.Errorf("hybrid-topk K %.2f > k=3", *g.K)
	}
	if len(vt.Curve) != 3 {
		t.Errorf("hybrid-topk curve %v, want k=1..3", vt.Curve)
	}
	am := findSystem(t, rep, "amem")
	if am.Build.Calls != 2*22 || am.QA.Calls != 2*17 {
		t.Errorf("amem: %d build calls, %d QA calls; want 2 per turn and 2 per question", am.Build.Calls, am.QA.Calls)
	}
	paper := findSystem(t, rep, "higmem-paper")
	if c := paper.Build.Per(float64(paper.Build.Calls)); c < 3 {
		t.Errorf("higmem-paper: %.2f calls per turn, want at least 3", c)
	}
	if r := group(paper, "1-5").Rounds; r < 3 {
		t.Errorf("higmem-paper: %.2f rounds per question", r)
	}
	noEvent := findSystem(t, rep, "paper-no-event")
	if c := noEvent.Build.Per(float64(noEvent.Build.Calls)); c != 1 {
		t.Errorf("paper-no-event: %.2f calls per turn, want 1", c)
	}

	// results.json round-trips to the same report.
	var back Report
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Systems, rep.Systems) {
		t.Error("results.json differs from the returned report")
	}
	if back.Runs[0].Config.Invocations[0].GitCommit != "0123456789abcdef" || back.Runs[0].Config.PromptVersion == "" ||
		back.Runs[0].Config.AMemPrompts != amem.PromptVersion || back.Runs[0].Config.DataSHA256 == "" {
		t.Errorf("config not recorded: %+v", back.Runs[0].Config)
	}
	for _, c := range []string{ChartRecall, ChartF1, ChartTokens, ChartCalls} {
		checkSVG(t, filepath.Join(dir, c))
	}
}

// checkSVG parses an SVG file as XML and checks it draws something.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	shapes := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: invalid XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect", "circle", "polyline":
				shapes++
			}
		}
	}
	if shapes < 3 {
		t.Errorf("%s draws %d shapes", path, shapes)
	}
}

// TestRunWithoutLLM: systems that need an LLM to build are skipped with a
// reason; the others report retrieval without answers.
func TestRunWithoutLLM(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	rep, err := Run(context.Background(), Config{
		Data:    miniData,
		Out:     dir,
		Systems: []string{"higmem", "amem", "hybrid-topk", "oracle", "offline", "full-context"},
		Log:     &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"higmem", "amem"} {
		if s := findSystem(t, rep, name); s.Skipped == "" || s.Questions != 0 {
			t.Errorf("%s not skipped: %+v", name, s)
		}
		if !strings.Contains(log.String(), "skipping "+name) {
			t.Errorf("no skip message for %s in %q", name, log.String())
		}
	}
	for _, name := range []string{"hybrid-topk", "oracle", "offline", "full-context"} {
		s := findSystem(t, rep, name)
		g := group(s, "1-5")
		if s.Skipped != "" || g.N != 17 || g.Answered != 0 || g.Recall == nil {
			t.Errorf("%s: skipped %q, n %d, answered %d, recall %v", name, s.Skipped, g.N, g.Answered, g.Recall)
		}
		if s.QA.Calls != 0 || s.Build.Calls != 0 {
			t.Errorf("%s made LLM calls without an LLM", name)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !bytes.Contains(md, []byte("No system wrote answers")) || !bytes.Contains(md, []byte("**skipped**")) {
		t.Error("report.md does not explain the missing answers and skipped systems")
	}
}

// normalise zeroes what legitimately differs between runs: wall times and
// invocation records.
func normalise(r *Report) {
	for i := range r.Systems {
		s := &r.Systems[i]
		s.Build.WallMS, s.QA.WallMS, s.Run = 0, 0, ""
		for j := range s.Groups {
			s.Groups[j].WallMS = 0
		}
		for _, c := range []*Cost{&s.Build, &s.QA, &s.Judge} {
			for j := range c.ByOp {
				c.ByOp[j].LatencyMS = 0
			}
		}
	}
}

// TestResume interrupts a run after a few questions, damages the last
// line as a kill would, reruns, and checks that no question was evaluated
// twice and that the numbers equal those of an uninterrupted run.
func TestResume(t *testing.T) {
	systems := []string{"higmem", "amem", "hybrid-topk"}
	base := func(dir string, m llm.Model) Config {
		return Config{Data: miniData, Out: dir, Systems: systems, Env: Env{Memory: m, K: 4}, Judge: m, Samples: []string{"conv-a", "1"}}
	}
	// Reference: one uninterrupted run.
	refModel := scripted(t)
	ref, err := Run(context.Background(), base(t.TempDir(), refModel))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	model := scripted(t)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := base(dir, model)
	n := 0
	cfg.OnRecord = func(QuestionRecord) {
		if n++; n == 7 {
			cancel()
		}
	}
	if _, err := Run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	recs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil || len(recs) != 7 {
		t.Fatalf("%d records after the interruption (%v), want 7", len(recs), err)
	}
	// A kill in the middle of a write leaves half a line.
	f, err := os.OpenFile(filepath.Join(dir, QuestionsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"system":"higmem","sample":"conv-a","qa":`)
	f.Close()

	cfg.OnRecord = nil
	got, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err = readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.key()] {
			t.Errorf("question %s evaluated twice", r.key())
		}
		seen[r.key()] = true
	}
	if want := 3 * 17; len(recs) != want {
		t.Errorf("%d records, want %d", len(recs), want)
	}
	// Each answer prompt was sent once per question over both runs.
	if a, r := model.count("answer"), refModel.count("answer"); a != r {
		t.Errorf("%d higmem/hybrid-topk answer calls over both runs, %d in one run", a, r)
	}
	if a, r := model.count(amem.PromptAnswer), refModel.count(amem.PromptAnswer); a != r {
		t.Errorf("%d amem answer calls over both runs, %d in one run", a, r)
	}
	normalise(got)
	normalise(ref)
	if !reflect.DeepEqual(got.Systems, ref.Systems) {
		a, _ := json.MarshalIndent(got.Systems, "", " ")
		b, _ := json.MarshalIndent(ref.Systems, "", " ")
		os.WriteFile(filepath.Join(os.TempDir(), "resume_got.json"), a, 0o644)
		os.WriteFile(filepath.Join(os.TempDir(), "resume_want.json"), b, 0o644)
		t.Errorf("resumed run differs from an uninterrupted one (see resume_got.json and resume_want.json in %s)", os.TempDir())
	}
	if inv := got.Runs[0].Config.Invocations; len(inv) != 2 {
		t.Errorf("%d invocations recorded, want 2", len(inv))
	}

	// Another configuration may not reuse the directory.
	other := base(dir, model)
	other.Env.K = 5
	if _, err := Run(context.Background(), other); !errors.Is(err, ErrConfigMismatch) {
		t.Errorf("changed k: %v, want ErrConfigMismatch", err)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		cfg  Config
		want error
	}{
		{"unknown system", Config{Data: miniData, Systems: []string{"mem0"}}, ErrUnknownSystem},
		{"no systems", Config{Data: miniData}, nil},
		{"no data", Config{Data: "testdata/none.json", Systems: []string{"oracle"}}, os.ErrNotExist},
		{"unknown sample", Config{Data: miniData, Systems: []string{"oracle"}, Samples: []string{"conv-z"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Out = t.TempDir()
			_, err := Run(ctx, c.cfg)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("err %v, want %v", err, c.want)
			}
		})
	}
}

func TestSelectQuestions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rep, err := Run(ctx, Config{Data: miniData, Out: dir, Systems: []string{"oracle"}, Samples: []string{"0"},
		Categories: []int{4, 2}, MaxQuestions: 3})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range recs {
		got = append(got, r.QA)
		if r.Sample != "conv-a" {
			t.Errorf("question of sample %s", r.Sample)
		}
	}
	// conv-a in file order: q0 (cat 2), q1 (cat 4), q5 (cat 4).
	if !reflect.DeepEqual(got, []int{0, 1, 5}) {
		t.Errorf("questions %v, want [0 1 5]", got)
	}
	if c := rep.Runs[0].Config.Categories; !reflect.DeepEqual(c, []int{2, 4}) {
		t.Errorf("categories recorded %v", c)
	}
}

// TestConcurrencyDeterministic: the numbers do not depend on how many
// builds and questions run at once.
func TestConcurrencyDeterministic(t *testing.T) {
	run := func(n int) *Report {
		m := scripted(t)
		rep, err := Run(context.Background(), Config{Data: miniData, Out: t.TempDir(), Concurrency: n,
			Systems: []string{"higmem", "higmem-paper", "amem", "hybrid-topk"}, Env: Env{Memory: m, Embedder: hashing.New(32)}, Judge: m})
		if err != nil {
			t.Fatal(err)
		}
		normalise(rep)
		return rep
	}
	a, b := run(1), run(4)
	if !reflect.DeepEqual(a.Systems, b.Systems) {
		t.Error("concurrency 4 gives other numbers than concurrency 1")
	}
}

// TestTopKBaselines checks the three top-k baselines against what they
// claim: dense-topk is the top k turns by cosine of the embedder's vectors
// (recomputed here), bm25-topk returns only turns sharing a word with the
// question, and the former name vector-topk runs hybrid-topk.
func TestTopKBaselines(t *testing.T) {
	emb := hashing.New(64)
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		Data: miniData, Out: dir,
		Systems: []string{"vector-topk", "dense-topk", "bm25-topk"},
		Env:     Env{Embedder: emb, K: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Systems) != 3 || rep.Systems[0].System != "hybrid-topk" {
		t.Fatalf("systems %v, want hybrid-topk (for vector-topk), dense-topk, bm25-topk", rep.Systems)
	}
	samples, err := locomo.Load(miniData)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checked := map[string]int{}
	for _, q := range qs {
		var s *locomo.Sample
		for i := range samples {
			if samples[i].ID == q.Sample {
				s = &samples[i]
			}
		}
		switch q.System {
		case "dense-topk":
			qv, _ := emb.Embed(ctx, []string{q.Question})
			type hit struct {
				id  string
				cos float32
			}
			var hits []hit
			for _, sess := range s.Sessions {
				for _, tr := range sess.Turns {
					v, _ := emb.Embed(ctx, []string{rules.EmbedForm(tr.Speaker, sess.DateTime, tr.Content())})
					hits = append(hits, hit{tr.DiaID, vec.Dot(vec.Normalize(qv[0]), vec.Normalize(v[0]))})
				}
			}
			slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.cos, a.cos) })
			want := []string{hits[0].id, hits[1].id}
			if got := stage(q, "search"); !slices.Equal(got, want) {
				t.Errorf("dense-topk %q: search %v, want %v", q.Question, got, want)
			}
			checked[q.System]++
		case "bm25-topk":
			words := map[string]bool{}
			for _, w := range textnorm.Terms(q.Question) {
				words[w] = true
			}
			for _, id := range stage(q, "search") {
				tr, _ := s.Turn(id)
				if !slices.ContainsFunc(textnorm.Terms(tr.Speaker+" "+tr.Content()), func(w string) bool { return words[w] }) {
					t.Errorf("bm25-topk %q: %s (%q) shares no term with the question", q.Question, id, tr.Text)
				}
			}
			checked[q.System]++
		}
	}
	if checked["dense-topk"] != 17 || checked["bm25-topk"] != 17 {
		t.Errorf("checked %v, want 17 questions of each", checked)
	}
	// Without an embedder, dense-topk is skipped with the reason.
	rep, err = Run(ctx, Config{Data: miniData, Out: t.TempDir(), Systems: []string{"dense-topk"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Systems[0]; s.Skipped == "" || s.Questions != 0 {
		t.Errorf("dense-topk without an embedder: %+v", s)
	}
}

// TestCategoryNamesFromFile runs a file whose questions carry their own
// type names (as FriendsQA's do): the report names its categories by them,
// counts every category (not only 1-5) and has no LoCoMo name.
func TestCategoryNamesFromFile(t *testing.T) {
	raw, err := os.ReadFile(miniData)
	if err != nil {
		t.Fatal(err)
	}
	var data []map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	types := map[float64]string{1: "What", 2: "When", 3: "Why", 4: "Who", 5: "Where"}
	for _, s := range data {
		for i, q := range s["qa"].([]any) {
			qa := q.(map[string]any)
			c := qa["category"].(float64)
			if c == 5 && i%2 == 0 {
				c = 7 // a category beyond LoCoMo's five
				qa["category"] = c
				types[7] = "How"
			}
			qa["qtype"] = types[c]
		}
	}
	b, _ := json.Marshal(data)
	path := filepath.Join(t.TempDir(), "typed.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Data: path, Out: dir, Systems: []string{"oracle"}})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Systems[0]
	if g := group(s, "7"); g.Name != "How" || g.N == 0 {
		t.Errorf("category 7: %+v", g)
	}
	if g := group(s, "1-5"); g.Name != "all" || g.N != 17 {
		t.Errorf("all: %+v, want 17 questions named all", g)
	}
	if g := group(s, "1-4"); g.N != 17 {
		t.Errorf("1-4 leaves out %d questions of a file without a trap category", 17-g.N)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"1 What", "3 Why", "5 Where", "7 How"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, bad := range []string{"multi-hop", "adversarial", "all (1-4)"} {
		if bytes.Contains(md, []byte("| "+bad)) || bytes.Contains(md, []byte(" "+bad+" |")) {
			t.Errorf("report.md names a LoCoMo category: %q", bad)
		}
	}
}

// higmem-paper runs as the reference's paper command does: paper mode with
// links off (the command passes --ablation-no-link) and the reference's
// one prediction call per event (PredictChunk zero); links are the
// paper-links variant's. Default-mode systems never ask for links (they
// are a paper-mode option), and the former names still resolve.
func TestPaperSystemsAsTheReference(t *testing.T) {
	for name, wantLinks := range map[string]bool{"higmem-paper": false, "paper-no-event": false, "paper-no-filter": false, "paper-links": true} {
		s, err := NewSystem(name)
		if err != nil {
			t.Fatal(err)
		}
		e := s.(*engineSystem)
		if e.mode != higmem.ModePaper || e.links != wantLinks {
			t.Errorf("%s: mode %s, links %v; want paper mode, links %v", name, e.mode, e.links, wantLinks)
		}
	}
	for _, info := range registry {
		if e, ok := info.make().(*engineSystem); ok && e.mode != higmem.ModePaper && e.links {
			t.Errorf("%s asks for links outside paper mode", info.name)
		}
	}
	for old, now := range map[string]string{"paper-no-links": "higmem-paper", "no-links": "higmem"} {
		if s, err := NewSystem(old); err != nil || s.Name() != now {
			t.Errorf("%s resolves to %v, %v; want %s", old, s, err, now)
		}
	}
}

// TestMaxSessions: a slice keeps the first sessions of each sample and the
// questions whose evidence is all within them, builds only those sessions,
// and is recorded in the run's configuration.
func TestMaxSessions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rep, err := Run(ctx, Config{Data: miniData, Out: dir, Systems: []string{"offline"}, Samples: []string{"0"}, MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range recs {
		got = append(got, r.QA)
	}
	// conv-a's questions with every evidence id in session 1: q0 (D1:1),
	// q1 (D1:6), q4 and q9 (D1:4), q5 (D1:3); q10 has no evidence.
	if !reflect.DeepEqual(got, []int{0, 1, 4, 5, 9}) {
		t.Errorf("questions %v, want [0 1 4 5 9]", got)
	}
	builds, err := readJSONL[BuildRecord](filepath.Join(dir, BuildsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(builds) != 1 || builds[0].Session != 1 || builds[0].Turns != 6 {
		t.Errorf("builds %+v, want session 1 only, 6 turns", builds)
	}
	if c := rep.Runs[0].Config; c.MaxSessions != 1 {
		t.Errorf("max sessions recorded %d", c.MaxSessions)
	}
}
