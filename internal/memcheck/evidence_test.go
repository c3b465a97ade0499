package memcheck

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
)

// goldFiles are LoCoMo-layout data sets (conversation sessions of turns
// with speaker, dia_id and text; qa with answer and evidence) whose gold
// answers TestEvidenceCopyNoFalseReject also checks, e.g.
// -gold=../../../shared/data/locomo_dev.json,../../../shared/data/friendsqa_dev.json
// (evaluation data is never in the repository).
var goldFiles = flag.String("gold", "", "TestEvidenceCopyNoFalseReject: also check the gold answers of these LoCoMo-layout files (comma-separated)")

// An answer that reads the memory block back as the answer prompt showed
// it ("[id] date | speaker: text") is no answer: SmolLM2 through Ollama
// answered "[S3] 6 April 2024 | Priya: Smart! How did it go? …" and
// ",14:30,25 February 2024 | Priya: …" (testdata/ollama-smollm2-135m-
// default.jsonl), and both passed. A date, a name or a phrase quoted from
// a turn, or a turn id cited alone, is still an answer.
func TestAnswerCopyingEvidenceRejected(t *testing.T) {
	melanie := prompt.Turn{ID: "D2:7", Date: "25 May 2023", Speaker: "Melanie", Text: "We went camping at the lake; the kids loved it."}
	p, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: "When did Caroline go to the support group?", Temporal: true, Turns: []prompt.Turn{t1, melanie}})
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^\[D1:3\] .*$`).FindString(p.User)
	if line == "" {
		t.Fatalf("no memory line for D1:3 in\n%s", p.User)
	}
	s := FromPrompt(p)
	for _, a := range []string{
		line, // the line as shown
		line + "\n" + "[D2:7] 25 May 2023 | Melanie: We went camping at the lake; the kids loved it.",
		"[S3] 6 April 2024 | Priya: Smart! How did it go? Did you make anything? [S5:3] 2 March 2024 | Tom: Yes", // SmolLM2, ids and speakers not shown
		",14:30,8 May 2023 | Caroline: I went to a LGBTQ support group yesterday",                                // no id, the bar and a speaker shown
		"7 May 2023 | Caroline: support group",
		"6 April 2024 | Priya: Smart! How did it go?", // a speaker not shown, after a date
		"unknown date | Tom: yes",
		"8 May 2023 |Melanie : camping",
		"see [D1:3] 8 May 2023 | the support group",
		"[D1:3] unknown date | Caroline",
	} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, s, Caps{}); res.Verdict != Rejected || res.Count(CopiedEvidence) != 1 {
			t.Errorf("answer %q: %v, want rejected: copied_evidence", a, res)
		}
	}
	for _, a := range []string{
		"7 May 2023", "8 May 2023", "the day before 8 May 2023", "May 2023",
		"a LGBTQ support group", `"it was so powerful"`, "It was so powerful.",
		"Caroline: the LGBTQ support group", "Caroline said: I went to a LGBTQ support group yesterday",
		"She said so in [D1:3].", "[D1:3]", "D1:3, 8 May 2023", "[Image: a photo of a lake at sunrise] Melanie painted it",
		"camping | hiking", "Melanie and Caroline", "Not mentioned in the conversation",
	} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, s, Caps{}); res.Count(CopiedEvidence) != 0 || res.Verdict == Rejected {
			t.Errorf("answer %q: %v, want an answer", a, res)
		}
	}
	// Nothing shown: the layout alone ("| Name:") still reads as a copy.
	empty, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: "When?"})
	if err != nil {
		t.Fatal(err)
	}
	for a, want := range map[string]int{"8 May 2023 | Caroline: hi": 1, "8 May 2023": 0, "a | b: c": 0} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, FromPrompt(empty), Caps{}); res.Count(CopiedEvidence) != want {
			t.Errorf("nothing shown, answer %q: %v, want %d copied_evidence", a, res, want)
		}
	}
}

// TestEvidenceCopyNoFalseReject checks the evidence check against answers
// it must leave alone: the gold answers of the repository's conversations
// (examples/conversation.json, testdata/friendsqa), each with its evidence
// turns shown as the answer prompt shows them, and every answer a real
// server gave in the recorded cassettes (testdata/*.jsonl, a reply cut at
// its budget closed; the cassettes keep no prompt, so checked as if no
// turn was shown, the strictest form); only the two cassette answers that
// lay out memory lines are flagged. With -gold, the gold answers of those files
// too.
func TestEvidenceCopyNoFalseReject(t *testing.T) {
	type conv struct {
		Turns []struct {
			ID, Time, Speaker, Text string
		}
		Questions []struct {
			Question, Answer string
			Evidence         []string
		}
	}
	checked := 0
	gold := func(name string, speakerTurns map[string]prompt.Turn, q, a string, evidence []string) {
		var shown []prompt.Turn
		for _, id := range evidence {
			if tr, ok := speakerTurns[id]; ok {
				shown = append(shown, tr)
			}
		}
		p, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: q, Temporal: true, Turns: shown})
		if err != nil {
			t.Fatal(err)
		}
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, FromPrompt(p), Caps{}); res.Count(CopiedEvidence) != 0 {
			t.Errorf("%s: gold answer %q to %q: %v", name, a, q, res)
		}
		checked++
	}
	for _, f := range []string{"../../examples/conversation.json", "../../testdata/friendsqa/s01e21-scene1.json"} {
		var c conv
		readJSON(t, f, &c)
		turns := map[string]prompt.Turn{}
		for _, tr := range c.Turns {
			date := ""
			if tm, err := time.Parse(time.RFC3339, tr.Time); err == nil {
				date = tm.Format("2 January 2006")
			}
			turns[tr.ID] = prompt.Turn{ID: tr.ID, Date: date, Speaker: tr.Speaker, Text: tr.Text}
		}
		for _, q := range c.Questions {
			gold(f, turns, q.Question, q.Answer, q.Evidence)
		}
	}
	fixtures := checked

	// The cassettes: each answer reply with the prompt it answered.
	files, err := filepath.Glob("../../testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes: %v", err)
	}
	flagged := map[string]bool{}
	replies := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e struct {
				Op    string
				Value struct{ Content string }
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if e.Op != "answer" {
				continue
			}
			var r prompt.AnswerReply
			c := strings.TrimSpace(e.Value.Content)
			if json.Unmarshal([]byte(c), &r) != nil && json.Unmarshal([]byte(c+`"}`), &r) != nil && json.Unmarshal([]byte(c+`}`), &r) != nil {
				t.Fatalf("%s: answer reply %q does not decode, even closed", f, e.Value.Content)
			}
			replies++
			// The cassette keeps no prompt: checked as if nothing was
			// shown (any capitalised name after the bar counts).
			if s := (Shown{}); s.copiedEvidence(r.Answer) {
				flagged[filepath.Base(f)+": "+string([]rune(r.Answer)[:40])] = true
			}
		}
	}
	want := []string{
		"ollama-smollm2-135m-default.jsonl: ,14:30,25 February 2024 | Priya: Smart! ",
		"ollama-smollm2-135m-default.jsonl: [S3] 6 April 2024 | Priya: Smart! How di",
	}
	var got []string
	for k := range flagged {
		got = append(got, k)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cassette answers flagged copied_evidence:\n got %q\nwant %q", got, want)
	}

	for _, f := range strings.Split(*goldFiles, ",") {
		if f == "" {
			continue
		}
		var samples []struct {
			SampleID     string         `json:"sample_id"`
			Conversation map[string]any `json:"conversation"`
			QA           []struct {
				Question string
				Answer   any
				Evidence []string
			} `json:"qa"`
		}
		readJSON(t, f, &samples)
		for _, s := range samples {
			turns := map[string]prompt.Turn{}
			for k, v := range s.Conversation {
				list, ok := v.([]any)
				if !ok || !strings.HasPrefix(k, "session_") {
					continue
				}
				date, _ := s.Conversation[k+"_date_time"].(string)
				for _, x := range list {
					m, _ := x.(map[string]any)
					id, _ := m["dia_id"].(string)
					sp, _ := m["speaker"].(string)
					text, _ := m["text"].(string)
					turns[id] = prompt.Turn{ID: id, Date: date, Speaker: sp, Text: text}
				}
			}
			for _, q := range s.QA {
				if q.Answer == nil {
					continue
				}
				gold(filepath.Base(f)+" "+s.SampleID, turns, q.Question, fmt.Sprint(q.Answer), q.Evidence)
			}
		}
	}
	t.Logf("checked %d gold answers of the repository's conversations, %d of -gold files, %d cassette answer replies (%d flagged, as expected)",
		fixtures, checked-fixtures, replies, len(got))
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The junk shape that answers with the answer prompt's temporal example
// (what SmolLM2 and Gemma 3 270M did through Ollama) writes the example,
// given the temporal fixture, and the check rejects it about turns of
// other years.
func TestCopiedExampleShape(t *testing.T) {
	i := slices.IndexFunc(llmtest.JunkShapes, func(s llmtest.JunkShape) bool { return s.Name == "answer is the prompt's temporal example" })
	if i < 0 {
		t.Fatal("no copied-example junk shape")
	}
	p := render(t, prompt.Answer)
	example := regexp.MustCompile(`e\.g\. "([^"]+)"`).FindStringSubmatch(p.User)
	if example == nil {
		t.Fatalf("the answer fixture is not temporal:\n%s", p.User)
	}
	content := llmtest.JunkShapes[i].Reply(request(p))
	res, reply, _ := check(t, prompt.Answer, content, p)
	if got := reply.(*prompt.AnswerReply).Answer; got != example[1] || res.Verdict != Rejected || res.Count(Copied) != 1 {
		t.Errorf("shape answered %q (example %q): %v, want rejected: copied_instructions", got, example[1], res)
	}
}
