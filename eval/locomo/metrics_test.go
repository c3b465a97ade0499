package locomo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/textnorm"
)

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// TestGoldenVectorsReference holds every row of the golden-vector table in
// reference-amem-locomo.md section 8, to 4 decimals.
func TestGoldenVectorsReference(t *testing.T) {
	tests := []struct {
		category             int
		pred, gold           string
		official, amem, bleu float64
	}{
		{4, "She went to the LGBTQ support group.", "LGBTQ support group", 0.6667, 0.6000, 0.3750},
		{4, "running marathons", "ran a marathon", 0.5000, 0.0000, 0.0000},
		{1, "weight training, yoga", "Weight training, Circuit training, Kickboxing, yoga", 0.6250, 0.7500, 0.2865},
		{1, "yoga and kickboxing", "Weight training, Circuit training, Kickboxing, yoga", 0.3333, 0.5000, 0.0902},
		{2, "7 May 2023", "7 May 2023", 1.0000, 1.0000, 1.0000},
		{2, "May 7, 2023", "7 May 2023", 1.0000, 1.0000, 0.7500},
		{3, "Likely no", "LIkely no; though she likes reading, she wants to be a counselor", 1.0000, 0.1538, 0.0025},
		{5, "Not mentioned in the conversation", "Ferrari", 1.0000, 0.0000, 0.0000},
		{5, "Ferrari", "Ferrari", 0.0000, 1.0000, 1.0000},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("cat%d/%s", tt.category, tt.pred)
		t.Run(name, func(t *testing.T) {
			if got := round4(OfficialF1(tt.pred, tt.gold, tt.category)); got != tt.official {
				t.Errorf("OfficialF1 = %.4f, want %.4f", got, tt.official)
			}
			if got := round4(AMemF1(tt.pred, tt.gold)); got != tt.amem {
				t.Errorf("AMemF1 = %.4f, want %.4f", got, tt.amem)
			}
			if got := round4(BLEU1(tt.pred, tt.gold)); got != tt.bleu {
				t.Errorf("BLEU1 = %.4f, want %.4f", got, tt.bleu)
			}
		})
	}
}

// TestMetricsMatchPython checks every metric against values computed with
// NLTK 3.9.1 by testdata/gen_metrics.py.
func TestMetricsMatchPython(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "metrics_golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var g struct {
			Category   int     `json:"category"`
			Pred       string  `json:"pred"`
			Gold       string  `json:"gold"`
			OfficialF1 float64 `json:"official_f1"`
			AMemF1     float64 `json:"amem_f1"`
			BLEU1      float64 `json:"bleu1"`
			Exact      float64 `json:"exact"`
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("bad golden line %q: %v", sc.Text(), err)
		}
		n++
		check := func(metric string, got, want float64) {
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s(%q, %q, cat %d) = %v, Python gives %v", metric, g.Pred, g.Gold, g.Category, got, want)
			}
		}
		check("OfficialF1", OfficialF1(g.Pred, g.Gold, g.Category), g.OfficialF1)
		check("AMemF1", AMemF1(g.Pred, g.Gold), g.AMemF1)
		check("BLEU1", BLEU1(g.Pred, g.Gold), g.BLEU1)
		check("ExactMatch", ExactMatch(g.Pred, g.Gold), g.Exact)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("only %d golden rows", n)
	}
}

func TestEvidenceScore(t *testing.T) {
	tests := []struct {
		selected, gold []string
		p, r           float64
	}{
		{nil, nil, 0, 0},
		{nil, []string{"D1:1"}, 0, 0},
		{[]string{"D1:1"}, nil, 0, 0},
		{[]string{"D1:1", "D1:2"}, []string{"D1:1"}, 0.5, 1},
		{[]string{"D1:1", "D1:1", "D2:2"}, []string{"D1:1", "D3:3"}, 0.5, 0.5},
		{[]string{"D4:1", "D4:2", "D4:3", "D4:4"}, []string{"D4:4", "D4:1", "D9:9"}, 0.5, 2.0 / 3},
		{[]string{"D30:05"}, []string{"D30:5"}, 0, 0}, // ids are compared as given
	}
	for _, tt := range tests {
		p, r := EvidenceScore(tt.selected, tt.gold)
		if math.Abs(p-tt.p) > 1e-12 || math.Abs(r-tt.r) > 1e-12 {
			t.Errorf("EvidenceScore(%v, %v) = %v, %v; want %v, %v", tt.selected, tt.gold, p, r, tt.p, tt.r)
		}
	}
}

func TestOfficialF1Details(t *testing.T) {
	tests := []struct {
		pred, gold string
		cat        int
		want       float64
	}{
		// "and" is removed as an article; commas vanish before tokenising.
		{"cats and dogs", "cats, dogs", 4, 1},
		// Multiset, not set: repeated tokens count.
		{"sunset sunset", "sunset", 4, 2.0 / 3},
		// Category 3 keeps only the gold text before ';'.
		{"yes", "Yes; because", 3, 1},
		{"yes", "Yes; because", 4, 2.0 / 3},
		// Category 5 never looks at the gold.
		{"It is NOT MENTIONED", "", 5, 1},
		// Non-ASCII punctuation is not removed.
		{"café—bar", "café bar", 4, 0},
	}
	for _, tt := range tests {
		if got := OfficialF1(tt.pred, tt.gold, tt.cat); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("OfficialF1(%q, %q, %d) = %v, want %v", tt.pred, tt.gold, tt.cat, got, tt.want)
		}
	}
}

// TestBM25EvidenceRecall measures (it does not gate) how well plain BM25 over
// a conversation's turns finds the gold evidence of each question, on the
// LoCoMo dev slice. Run with -v to see the table:
//
//	go test ./eval/locomo -run TestBM25EvidenceRecall -v
func TestBM25EvidenceRecall(t *testing.T) {
	samples := loadDevForTest(t)
	ks := []int{5, 8, 10, 20}
	analyzers := []struct {
		name string
		fn   func(string) []string
	}{
		{"plain tokens", textnorm.Tokens},
		{"stop+porter", textnorm.Terms},
	}
	forms := []struct {
		name string
		fn   func(Turn) string
	}{
		{"content", func(tr Turn) string { return tr.Content() }},
		{"speaker: content", func(tr Turn) string { return tr.Speaker + ": " + tr.Content() }},
	}
	for _, an := range analyzers {
		for _, form := range forms {
			// sums[cat][ki], counts[cat]; cat 0 collects nothing.
			var sums [6][4]float64
			var counts [6]int
			for i := range samples {
				s := &samples[i]
				ix := bm25.New(bm25.Options{Analyzer: an.fn})
				for _, tr := range s.Turns() {
					ix.Add(tr.DiaID, form.fn(tr))
				}
				for _, q := range s.QA {
					if len(q.Evidence) == 0 || q.Category < 1 || q.Category > 5 {
						continue
					}
					hits := ix.Search(q.Question, ks[len(ks)-1])
					ids := make([]string, len(hits))
					for j, h := range hits {
						ids[j] = h.ID
					}
					counts[q.Category]++
					for ki, k := range ks {
						_, r := EvidenceScore(ids[:min(k, len(ids))], q.Evidence)
						sums[q.Category][ki] += r
					}
				}
			}
			var b strings.Builder
			fmt.Fprintf(&b, "BM25 evidence recall, analyzer=%s, text=%q\n", an.name, form.name)
			fmt.Fprintf(&b, "  %-16s %5s %6s %6s %6s %6s\n", "questions", "n", "R@5", "R@8", "R@10", "R@20")
			row := func(label string, cats ...int) [4]float64 {
				var r [4]float64
				n := 0
				for _, c := range cats {
					n += counts[c]
					for ki := range ks {
						r[ki] += sums[c][ki]
					}
				}
				for ki := range r {
					if n > 0 {
						r[ki] /= float64(n)
					}
				}
				fmt.Fprintf(&b, "  %-16s %5d %6.3f %6.3f %6.3f %6.3f\n", label, n, r[0], r[1], r[2], r[3])
				for ki := 1; ki < len(r); ki++ {
					if r[ki] < r[ki-1] || r[ki] > 1 {
						t.Errorf("%s/%s %s: recall not monotone in k: %v", an.name, form.name, label, r)
					}
				}
				return r
			}
			all4 := row("cats 1-4", 1, 2, 3, 4)
			row("cats 1-5", 1, 2, 3, 4, 5)
			for c := 1; c <= 5; c++ {
				row(fmt.Sprintf("%d %s", c, CategoryName(c)), c)
			}
			t.Log(b.String())
			// A floor far below the measured values, to catch a broken
			// pipeline rather than to gate quality.
			if all4[2] < 0.3 {
				t.Errorf("%s/%s: R@10 over categories 1-4 = %.3f, implausibly low", an.name, form.name, all4[2])
			}
		}
	}
}
