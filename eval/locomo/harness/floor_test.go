package harness

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
)

// TestFloorAt: a top-k list is cut per question to the K offline mode used
// for the same question, not to the mean K nor to --k.
func TestFloorAt(t *testing.T) {
	rec := func(sys string, qa int, gold, ev, search []string) QuestionRecord {
		q := QuestionRecord{System: sys, Sample: "s", QA: qa, GoldEvidence: gold, Evidence: ev, K: distinct(ev)}
		q.Precision, q.Recall = locomo.EvidenceScore(ev, gold)
		if search != nil {
			q.Stages = []StageScore{{Name: "search", IDs: search}}
		}
		return q
	}
	offline := []QuestionRecord{
		rec("offline", 0, []string{"D1:3"}, []string{"D1:1", "D1:2"}, nil),         // K 2, R 0
		rec("offline", 1, []string{"D1:9"}, []string{"D1:9", "D1:8", "D1:7"}, nil), // K 3, R 1
		rec("offline", 2, nil, []string{"D1:1"}, nil),                              // no gold: left out
	}
	ranked := []string{"D1:1", "D1:1", "D1:2", "D1:3", "D1:9"}
	topk := []QuestionRecord{
		rec("hybrid-topk", 0, []string{"D1:3"}, ranked, ranked), // @2: D1:1 D1:2, R 0, P 0
		rec("hybrid-topk", 1, []string{"D1:9"}, ranked, ranked), // @3: D1:1 D1:2 D1:3, R 0
		rec("hybrid-topk", 2, nil, ranked, ranked),
	}
	f := floorAt(topk, offline)
	if f == nil || f.N != 2 || f.K != 2.5 || f.Recall != 0 || f.Precision != 0 || f.OfflineRecall != 0.5 || !f.Holds() {
		t.Fatalf("floor %+v, want N 2, K 2.5, R 0, P 0, offline R 0.5, holding", f)
	}
	// Gold at rank 4 (3 distinct turns ahead of it: D1:1, D1:2, D1:3): inside K 4, not K 3.
	offline[1] = rec("offline", 1, []string{"D1:9"}, []string{"D1:7", "D1:6", "D1:5", "D1:4"}, nil) // K 4, R 0
	f = floorAt(topk, offline)
	if f.Recall != 0.5 || f.OfflineRecall != 0 || f.Holds() || math.Abs(f.Precision-0.125) > 1e-9 {
		t.Fatalf("floor %+v, want R 0.5 (question 1 at K 4), P 0.125, offline R 0, not holding", f)
	}
	// A list shorter than offline's K is scored whole, and counted.
	offline[1] = rec("offline", 1, []string{"D1:9"}, []string{"a", "b", "c", "d", "e", "f"}, nil)
	if f = floorAt(topk, offline); f.Short != 1 || f.Recall != 0.5 {
		t.Fatalf("floor %+v, want 1 short list, R 0.5", f)
	}
	if floorAt(topk, nil) != nil {
		t.Error("a floor without offline records")
	}
}

// TestFloorInReport runs offline mode and the three top-k systems on the
// in-repo dataset: each top-k system gets its evidence at offline's K,
// recomputed here from questions.jsonl, and report.md and results.json
// show it; offline and systems run without offline get none.
func TestFloorInReport(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		Data: miniData, Out: dir,
		Systems: []string{"offline", "hybrid-topk", "dense-topk", "bm25-topk", "oracle"},
		Env:     Env{Embedder: hashing.New(64), K: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	offK := map[string]int{}
	for _, q := range qs {
		if q.System == "offline" {
			offK[q.Sample+"|"+strconv.Itoa(q.QA)] = q.K
		}
	}
	for _, name := range []string{"hybrid-topk", "dense-topk", "bm25-topk"} {
		s := findSystem(t, rep, name)
		f := s.AtOfflineK
		if f == nil {
			t.Fatalf("%s: no evidence at offline's K", name)
		}
		var n, short int
		var k, r float64
		for _, q := range qs {
			if q.System != name || len(q.GoldEvidence) == 0 {
				continue
			}
			kq, ok := offK[q.Sample+"|"+strconv.Itoa(q.QA)]
			if !ok {
				t.Fatalf("%s: question %d of %s has no offline record", name, q.QA, q.Sample)
			}
			search := stage(q, "search") // distinct ids, ranked
			if len(search) < kq {
				short++ // the engine's search returns only turns that match
			}
			_, rq := locomo.EvidenceScore(search[:min(kq, len(search))], q.GoldEvidence)
			n++
			k += float64(kq)
			r += rq
		}
		if f.N != n || f.Short != short || math.Abs(f.K-k/float64(n)) > 1e-9 || math.Abs(f.Recall-r/float64(n)) > 1e-9 {
			t.Errorf("%s: floor %+v, want N %d, %d short, K %.3f, R %.3f", name, f, n, short, k/float64(n), r/float64(n))
		}
		if off := group(findSystem(t, rep, "offline"), "1-5"); math.Abs(f.OfflineRecall-*off.Recall) > 1e-9 {
			t.Errorf("%s: offline R %.3f beside it, offline's own %.3f", name, f.OfflineRecall, *off.Recall)
		}
	}
	for _, name := range []string{"offline", "oracle"} {
		if f := findSystem(t, rep, name).AtOfflineK; f != nil {
			t.Errorf("%s has a floor line: %+v", name, f)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(md), "The floor: top-k at offline's K") || !strings.Contains(string(md), "R / P @K") {
		t.Error("report.md has no floor table")
	}
	js, _ := os.ReadFile(filepath.Join(dir, ResultsFile))
	if !strings.Contains(string(js), `"at_offline_k"`) {
		t.Error("results.json has no at_offline_k")
	}
	// Without offline in the run, no floor.
	rep, err = Run(context.Background(), Config{Data: miniData, Out: t.TempDir(), Systems: []string{"bm25-topk"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Systems[0].AtOfflineK; f != nil {
		t.Errorf("bm25-topk alone has a floor line: %+v", f)
	}
}
