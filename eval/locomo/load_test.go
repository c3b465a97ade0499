package locomo

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// locomoDevPath is the six-conversation LoCoMo slice shipped beside the
// repository (never committed); tests that need it skip when it is absent.
var locomoDevPath = filepath.Join("..", "..", "..", "shared", "data", "locomo_dev.json")

func loadDevForTest(t testing.TB) []Sample {
	t.Helper()
	if _, err := os.Stat(locomoDevPath); err != nil {
		t.Skipf("LoCoMo dev data not available at %s: %v", locomoDevPath, err)
	}
	samples, err := Load(locomoDevPath)
	if err != nil {
		t.Fatal(err)
	}
	return samples
}

func TestParseTiny(t *testing.T) {
	samples, err := Load(filepath.Join("testdata", "tiny_locomo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 {
		t.Fatalf("got %d samples, want 2", len(samples))
	}
	s := samples[0]
	if s.ID != "tiny-1" || s.Index != 0 || s.SpeakerA != "Ann" || s.SpeakerB != "Ben" {
		t.Fatalf("sample header = %q %d %q %q", s.ID, s.Index, s.SpeakerA, s.SpeakerB)
	}
	if samples[1].ID != "tiny-2" || samples[1].Index != 1 {
		t.Fatalf("second sample = %q %d", samples[1].ID, samples[1].Index)
	}

	// Sessions in numeric order; date keys without a session are ignored.
	var ns []int
	for _, sess := range s.Sessions {
		ns = append(ns, sess.N)
	}
	if !slices.Equal(ns, []int{1, 2, 10}) {
		t.Fatalf("session numbers = %v, want [1 2 10]", ns)
	}
	if s.Sessions[2].DateTime != "9:15 am on 1 June, 2023" {
		t.Fatalf("session 10 date = %q", s.Sessions[2].DateTime)
	}
	tm, err := s.Sessions[0].Time()
	if err != nil || !tm.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
		t.Fatalf("session 1 Time() = %v, %v", tm, err)
	}
	if _, err := (Session{N: 4, DateTime: "yesterday"}).Time(); err == nil {
		t.Fatal("Time() accepted a bad date")
	}

	// Turns, in order, with global Seq and Session.
	var ids []string
	for i, tr := range s.Turns() {
		ids = append(ids, tr.DiaID)
		if tr.Seq != i {
			t.Errorf("turn %s Seq = %d, want %d", tr.DiaID, tr.Seq, i)
		}
	}
	if want := []string{"D1:1", "D1:2", "D1:3", "D2:1", "D10:1", "D10:2"}; !slices.Equal(ids, want) {
		t.Fatalf("turn order = %v, want %v", ids, want)
	}
	contents := map[string]string{
		"D1:1":  "Hi Ben!",
		"D1:2":  "[Image: a photo of a mountain trail] I went hiking yesterday.",
		"D1:3":  "[Image: a painting of a lake] Nice! I love painting.",
		"D10:2": "[Image: a photo of a red bike]",
	}
	for id, want := range contents {
		tr, ok := s.Turn(id)
		if !ok {
			t.Fatalf("Turn(%s) not found", id)
		}
		if got := tr.Content(); got != want {
			t.Errorf("Turn(%s).Content() = %q, want %q", id, got, want)
		}
	}
	d12, _ := s.Turn("D1:2")
	if d12.Speaker != "Ann" || d12.Session != 1 || !slices.Equal(d12.ImgURL, []string{"https://example.invalid/a.jpg"}) {
		t.Errorf("D1:2 = %+v", d12)
	}
	if d13, _ := s.Turn("D1:3"); d13.ImgURL != nil || d13.Caption == "" {
		t.Errorf("D1:3 (caption without URL) = %+v", d13)
	}
	if _, ok := s.Turn("D3:1"); ok {
		t.Error("Turn(D3:1) found in a session that does not exist")
	}

	// Questions.
	if len(s.QA) != 6 {
		t.Fatalf("got %d questions, want 6", len(s.QA))
	}
	q := s.QA
	if q[2].Answer != "2" || q[2].Category != SingleHop {
		t.Errorf("numeric answer: %+v", q[2])
	}
	if q[4].Answer != "" || q[4].AdversarialAnswer != "Ferrari" || q[4].Category != Adversarial {
		t.Errorf("adversarial question: %+v", q[4])
	}
	if q[5].Answer != "No" || q[5].AdversarialAnswer != "Yes" {
		t.Errorf("adversarial question with both answers: %+v", q[5])
	}
	if want := []string{"D1:2", "D10:1", "D1:3", "D2:1"}; !slices.Equal(q[1].Evidence, want) {
		t.Errorf("normalised evidence = %v, want %v", q[1].Evidence, want)
	}
	if want := []string{"D1:2; D10:1", "D1:3 D2:01", "D1:2"}; !slices.Equal(q[1].RawEvidence, want) {
		t.Errorf("raw evidence = %v, want %v", q[1].RawEvidence, want)
	}
	if want := []string{"D2:1", "D9:9"}; !slices.Equal(q[2].Evidence, want) {
		t.Errorf("evidence with malformed ids = %v, want %v", q[2].Evidence, want)
	}
	if want := []string{"D", "D:11:26"}; !slices.Equal(q[2].MalformedEvidence(), want) {
		t.Errorf("MalformedEvidence = %v, want %v", q[2].MalformedEvidence(), want)
	}
	if want := []string{"D9:9"}; !slices.Equal(s.UnknownEvidence(q[2]), want) {
		t.Errorf("UnknownEvidence = %v, want %v", s.UnknownEvidence(q[2]), want)
	}
	if len(q[3].Evidence) != 0 || len(q[3].RawEvidence) != 0 {
		t.Errorf("empty evidence: %#v / %#v", q[3].Evidence, q[3].RawEvidence)
	}
}

func TestHandBuiltSampleIndex(t *testing.T) {
	s := Sample{Sessions: []Session{{N: 1, Turns: []Turn{{DiaID: "D1:1", Text: "x"}}}}}
	if tr, ok := s.Turn("D1:1"); !ok || tr.Text != "x" {
		t.Fatalf("Turn on a hand-built sample = %+v, %v", tr, ok)
	}
	if got := s.UnknownEvidence(QA{Evidence: []string{"D1:1", "D1:2"}}); !slices.Equal(got, []string{"D1:2"}) {
		t.Fatalf("UnknownEvidence = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"not json":           `{`,
		"not an array":       `{"sample_id": "x"}`,
		"no conversation":    `[{"sample_id": "x", "qa": []}]`,
		"bad session":        `[{"sample_id": "x", "conversation": {"session_1": [1, 2]}}]`,
		"turn without id":    `[{"sample_id": "x", "conversation": {"session_1": [{"speaker": "A", "text": "hi"}]}}]`,
		"object as text":     `[{"sample_id": "x", "conversation": {"session_1": [{"dia_id": "D1:1", "text": {}}]}}]`,
		"category not int":   `[{"sample_id": "x", "conversation": {}, "qa": [{"question": "q", "category": "two"}]}]`,
		"category missing":   `[{"sample_id": "x", "conversation": {}, "qa": [{"question": "q"}]}]`,
		"evidence is object": `[{"sample_id": "x", "conversation": {}, "qa": [{"question": "q", "category": 1, "evidence": {}}]}]`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(in))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse error = %v, want ErrMalformed", err)
			}
		})
	}
	if _, err := Load(filepath.Join("testdata", "does-not-exist.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v", err)
	}
}

func TestNormalizeEvidence(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{nil, []string{}},
		{[]string{"D1:3"}, []string{"D1:3"}},
		{[]string{"D8:6; D9:17"}, []string{"D8:6", "D9:17"}},
		{[]string{"D9:1 D4:4 D4:6"}, []string{"D9:1", "D4:4", "D4:6"}},
		{[]string{"D30:05", "D30:5"}, []string{"D30:5"}},
		{[]string{"D", "D:11:26", "d1:2", "D1", "D1:2:3", "D1:x", "S1", " D2:3 "}, []string{"D2:3"}},
		{[]string{"D1:2,D1:3"}, []string{"D1:2", "D1:3"}},
		{[]string{"D0001:0002"}, []string{"D1:2"}},
	}
	for _, tt := range tests {
		if got := NormalizeEvidence(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("NormalizeEvidence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCategoryName(t *testing.T) {
	want := map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial", 7: "category 7"}
	for c, name := range want {
		if got := CategoryName(c); got != name {
			t.Errorf("CategoryName(%d) = %q, want %q", c, got, name)
		}
	}
}

func TestLoadDevData(t *testing.T) {
	samples := loadDevForTest(t)
	if len(samples) != 6 {
		t.Fatalf("got %d samples, want 6", len(samples))
	}
	var ids []string
	turns, questions, sessions, unknown, malformed, noEvidence := 0, 0, 0, 0, 0, 0
	cats := map[int]int{}
	for i := range samples {
		s := &samples[i]
		ids = append(ids, s.ID)
		sessions += len(s.Sessions)
		turns += len(s.Turns())
		for j, sess := range s.Sessions {
			if j > 0 && sess.N <= s.Sessions[j-1].N {
				t.Errorf("%s: sessions out of order", s.ID)
			}
			if _, err := sess.Time(); err != nil {
				t.Errorf("%s: %v", s.ID, err)
			}
			for _, tr := range sess.Turns {
				if !strings.HasPrefix(tr.DiaID, "D"+strconv.Itoa(sess.N)+":") {
					t.Errorf("%s: turn %s in session %d", s.ID, tr.DiaID, sess.N)
				}
			}
		}
		for _, q := range s.QA {
			questions++
			cats[q.Category]++
			unknown += len(s.UnknownEvidence(q))
			malformed += len(q.MalformedEvidence())
			if len(q.Evidence) == 0 {
				noEvidence++
			}
			if q.Category == Adversarial && q.AdversarialAnswer == "" {
				t.Errorf("%s: adversarial question without adversarial_answer: %q", s.ID, q.Question)
			}
		}
	}
	if want := []string{"conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44"}; !slices.Equal(ids, want) {
		t.Errorf("sample ids = %v, want %v", ids, want)
	}
	if turns != 3435 || questions != 1157 || sessions != 156 {
		t.Errorf("got %d turns, %d questions, %d sessions; want 3435, 1157, 156", turns, questions, sessions)
	}
	wantCats := map[int]int{1: 172, 2: 180, 3: 53, 4: 480, 5: 272}
	for c, n := range wantCats {
		if cats[c] != n {
			t.Errorf("category %d has %d questions, want %d", c, cats[c], n)
		}
	}
	// Known anomalies of this slice: "D" and "D:11:26" are malformed, D10:19
	// of conv-42 does not exist, and two open-domain questions have no evidence.
	if malformed != 2 || unknown != 1 || noEvidence != 2 {
		t.Errorf("malformed=%d unknown=%d noEvidence=%d; want 2, 1, 2", malformed, unknown, noEvidence)
	}
}

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "tiny_locomo.json")); err == nil {
		f.Add(string(b))
	}
	f.Add(`[{"sample_id": 1, "conversation": {"session_2": [], "session_1": [{"dia_id": "D1:1", "text": 5}]}}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		samples, err := Parse(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		for i := range samples {
			s := &samples[i]
			for j := 1; j < len(s.Sessions); j++ {
				if s.Sessions[j].N < s.Sessions[j-1].N {
					t.Fatal("sessions not sorted")
				}
			}
			for k, tr := range s.Turns() {
				if tr.Seq != k {
					t.Fatal("Seq not sequential")
				}
			}
			for _, q := range s.QA {
				for _, id := range q.Evidence {
					if got := NormalizeEvidence([]string{id}); len(got) != 1 || got[0] != id {
						t.Fatalf("evidence %q is not canonical", id)
					}
				}
			}
		}
	})
}

func TestCategoryNames(t *testing.T) {
	typed := `[{"sample_id": "s", "conversation": {"speaker_a": "A", "speaker_b": "B",
		"session_1_date_time": "1:00 pm on 8 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
		"qa": [{"question": "Why?", "answer": "x", "evidence": ["D1:1"], "category": 3, "qtype": "Why"},
		       {"question": "Where?", "answer": "x", "evidence": ["D1:1"], "category": 6, "qtype": "Where"},
		       {"question": "Who?", "answer": "x", "evidence": ["D1:1"], "category": 4, "qtype": "Who"},
		       {"question": "Who else?", "answer": "x", "evidence": ["D1:1"], "category": 4, "qtype": "Whom"}]}]`
	samples, err := Parse(strings.NewReader(typed))
	if err != nil {
		t.Fatal(err)
	}
	if got := samples[0].QA[0].Type; got != "Why" {
		t.Errorf("Type = %q, want Why", got)
	}
	want := map[int]string{3: "Why", 6: "Where", 4: "category 4"} // two names for 4: neither
	if got := CategoryNames(samples); !maps.Equal(got, want) {
		t.Errorf("typed file: CategoryNames = %v, want %v", got, want)
	}
	tiny, err := Load(filepath.Join("testdata", "tiny_locomo.json"))
	if err != nil {
		t.Fatal(err)
	}
	for c, name := range CategoryNames(tiny) {
		if name != CategoryName(c) {
			t.Errorf("untyped file: category %d named %q, want LoCoMo's %q", c, name, CategoryName(c))
		}
	}
}
