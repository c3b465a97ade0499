package rules

import (
	"strings"

	"github.com/higmem/higmem/internal/textnorm"
)

// QuestionTerms returns a question's keywords (its tokens less stop words
// and question words) and the entities it names (less question words).
func QuestionTerms(question string) (keywords, entities []string) {
	for _, w := range textnorm.Tokens(question) {
		if !textnorm.IsStop(w) && !questionWords[w] {
			keywords = append(keywords, w)
		}
	}
	for _, e := range Entities(question, "") {
		if !questionWords[strings.ToLower(e)] {
			entities = append(entities, e)
		}
	}
	return keywords, entities
}

var questionWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "which": true, "why": true,
	"how": true, "did": true, "does": true, "do": true, "is": true, "was": true, "would": true, "could": true,
	"likely": true, "might": true,
}
