package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// alwaysCorrect is the judge a base 270M model was: CORRECT for anything.
var alwaysCorrect = llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{Content: `{"label":"CORRECT","reasoning":"It matches."}`, Model: "yes-man"}, nil
})

func TestCalibrate(t *testing.T) {
	m, _ := FakeModel("scripted")
	c, err := Calibrate(t.Context(), m)
	if err != nil || !c.Passed || c.Right+c.Wrong != len(CalibrationSet) {
		t.Errorf("scripted judge: %v, %v", c, err)
	}
	c, err = Calibrate(t.Context(), alwaysCorrect)
	if err != nil || c.Passed || c.WrongCorrect != c.Wrong || len(c.Misgraded) != c.Wrong {
		t.Errorf("always-CORRECT judge: %v, %v", c, err)
	}
	nm := 0
	for _, k := range CalibrationSet {
		if !k.Correct && strings.HasPrefix(k.Answer, "Not mentioned") {
			nm++
		}
	}
	if nm < 2 {
		t.Errorf("calibration set has %d \"Not mentioned\" answers", nm)
	}
}

// A judge that says CORRECT to everything fails calibration: the run does
// not judge, and the report withholds J and says why.
func TestJudgeFailingCalibrationWithheld(t *testing.T) {
	model := scripted(t)
	dir := t.TempDir()
	rep, err := Run(t.Context(), Config{Data: miniData, Out: dir, Systems: []string{"higmem", "full-context"},
		Env: Env{Memory: model, K: 3}, Judge: alwaysCorrect, Samples: []string{"0"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Systems {
		for _, g := range s.Groups {
			if g.J != nil {
				t.Errorf("%s group %s has J %v", s.System, g.Key, *g.J)
			}
		}
		if s.Judge.Calls != 0 {
			t.Errorf("%s: %d judge calls after a failed calibration", s.System, s.Judge.Calls)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(md), "**J withheld**") {
		t.Error("report does not say J is withheld")
	}
	if rep.Runs[0].Calibration == nil || rep.Runs[0].Calibration.Passed {
		t.Errorf("calibration %+v", rep.Runs[0].Calibration)
	}

	// A calibrated judge's J is printed with its calibration.
	dir2 := t.TempDir()
	rep, err = Run(t.Context(), Config{Data: miniData, Out: dir2, Systems: []string{"full-context"},
		Env: Env{Memory: model, K: 3}, Judge: model, Samples: []string{"0"}})
	if err != nil {
		t.Fatal(err)
	}
	if group(rep.Systems[0], "1-4").J == nil {
		t.Error("calibrated judge: no J")
	}
	md, _ = os.ReadFile(filepath.Join(dir2, ReportFile))
	if !strings.Contains(string(md), "judge calibration passed") {
		t.Error("report does not show the calibration")
	}
}

// Fallbacks, warnings and notes are counted: a model whose replies are
// unusable makes the engine fall back, and the report says so instead of
// "0 errors".
func TestFallbacksVisible(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(t.Context(), Config{Data: miniData, Out: dir, Systems: []string{"higmem"},
		Env: Env{Memory: llmtest.Junk{}, K: 3}, Samples: []string{"0"}})
	if err != nil {
		t.Fatal(err)
	}
	s := findSystem(t, rep, "higmem")
	if s.Build.Warnings == 0 || s.Build.FellBack == 0 {
		t.Errorf("build: %d warnings, %d fallbacks", s.Build.Warnings, s.Build.FellBack)
	}
	bs, _ := readJSONL[BuildRecord](filepath.Join(dir, BuildsFile))
	kept := 0
	for _, b := range bs {
		kept += len(b.Warnings)
	}
	if kept != s.Build.Warnings {
		t.Errorf("builds.jsonl keeps %d warnings, report counts %d", kept, s.Build.Warnings)
	}
	if s.Build.Reasked == 0 || s.QA.Notes == 0 || s.QA.FellBack == 0 {
		t.Errorf("re-asks %d, question notes %d, question fallbacks %d", s.Build.Reasked, s.QA.Notes, s.QA.FellBack)
	}
	// A re-asked call is still one call: the validity table's calls are
	// the engine's, never fewer than its re-asks (a real run's one
	// build_batch call, re-asked, showed as 0 calls).
	for _, op := range append(s.Build.ByOp, s.QA.ByOp...) {
		if op.Calls > 0 && (op.Logical() != op.Calls || op.Reasked > op.Logical()) {
			t.Errorf("%s: %d calls, %d logical, %d re-asked", op.Operation, op.Calls, op.Logical(), op.Reasked)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(md), "| fell back |") {
		t.Error("report has no validity table")
	}
}

// HTTP requests are counted per operation, besides logical calls: over a
// real client and a server, every call is at least one request, and a
// server that refuses json_schema costs one more the first time.
func TestHTTPRequestsCounted(t *testing.T) {
	sc := llmtest.NewScripted()
	srv := llmtest.NewServer(t, llmtest.RejectResponseFormat(sc.Handler(), "json_schema"))
	c, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "scripted-over-http"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), Config{Data: miniData, Out: t.TempDir(), Systems: []string{"higmem"},
		Env: Env{Memory: c, K: 3}, Samples: []string{"0"}, MaxQuestions: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := findSystem(t, rep, "higmem")
	total := s.Build.Requests + s.QA.Requests
	if total != srv.Calls() || s.Build.Requests < s.Build.Calls || total != s.Build.Calls+s.QA.Calls+1 {
		t.Errorf("requests: build %d (calls %d), questions %d (calls %d); server saw %d",
			s.Build.Requests, s.Build.Calls, s.QA.Requests, s.QA.Calls, srv.Calls())
	}
}

// What the model says is judged too: the real model's junk shapes are
// schema-valid, so the engine stores them (no fallback), but the report
// shows them repaired or rejected by the semantic checks; the scripted
// model's replies are valid.
func TestContentJudged(t *testing.T) {
	content := func(m llm.Model) (valid, bad int) {
		rep, err := Run(t.Context(), Config{Data: miniData, Out: t.TempDir(), Systems: []string{"higmem"},
			Env: Env{Memory: m, K: 3}, Samples: []string{"0"}})
		if err != nil {
			t.Fatal(err)
		}
		s := findSystem(t, rep, "higmem")
		for _, op := range append(s.Build.ByOp, s.QA.ByOp...) {
			valid += op.ContentValid
			bad += op.ContentRepaired + op.ContentRejected
		}
		return valid, bad
	}
	junk, _ := FakeModel("real-junk")
	if v, b := content(junk); b == 0 {
		t.Errorf("real-junk: %d valid, %d repaired or rejected", v, b)
	}
	sc, _ := FakeModel("scripted")
	if v, b := content(sc); v == 0 || b > v/4 {
		t.Errorf("scripted: %d valid, %d repaired or rejected", v, b)
	}
}
