package rules

import (
	"slices"
	"testing"
)

func TestQuestionTerms(t *testing.T) {
	kws, ents := QuestionTerms("When did Caroline go to the LGBTQ support group?")
	if !slices.Contains(kws, "caroline") || !slices.Contains(kws, "support") || slices.Contains(kws, "when") || slices.Contains(kws, "did") {
		t.Errorf("keywords %q", kws)
	}
	if !slices.Contains(ents, "Caroline") || slices.Contains(ents, "When") {
		t.Errorf("entities %q", ents)
	}
}
