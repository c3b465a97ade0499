package higmem

import (
	"fmt"
	"reflect"
	"testing"
)

// TestAnalysisCache checks that the cache of question analyses answers
// what analyzeRules does, the first time and after, that a caller's change
// to the entities it got does not reach the next caller, and that it stays
// right past its bound.
func TestAnalysisCache(t *testing.T) {
	var c analysisCache
	qs := []string{
		"What did Caroline say about the LGBTQ support group?",
		"When did Melanie paint a sunrise in May 2023?",
		"How long has Jon been at Acme since last year?",
		"What did Ben say about keeps me sane?",
		"where?",
	}
	for round := range 3 {
		for _, q := range qs {
			want := analyzeRules(q)
			got := c.analysis(q)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: analysis(%q) = %+v, want %+v", round, q, got, want)
			}
			for i := range got.Entities {
				got.Entities[i] = "changed by the caller"
			}
		}
	}
	if len(analyzeRules(qs[0]).Entities) == 0 {
		t.Fatal("the test needs a question with entities")
	}
	for i := range analysisCacheMax + 10 {
		q := fmt.Sprintf("What did Caroline do on day %d?", i)
		if got, want := c.analysis(q), analyzeRules(q); !reflect.DeepEqual(got, want) {
			t.Fatalf("analysis(%q) = %+v, want %+v", q, got, want)
		}
	}
	if len(c.m) > analysisCacheMax {
		t.Errorf("the cache holds %d questions, more than %d", len(c.m), analysisCacheMax)
	}
}
