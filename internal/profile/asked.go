package profile

import (
	"slices"
	"strings"
)

// askWords map question words to the attributes they ask about.
var askWords = map[string][]string{}

func init() {
	for attr, words := range map[string]string{
		Home:         "where live lives living lived moved move moving city reside resides located based relocate relocated",
		Hometown:     "from grew hometown originally",
		Job:          "job work works working career profession occupation employed position role",
		Employer:     "job work works working employer company employed",
		Pet:          "pet pets dog dogs cat cats puppy kitten rabbit bunny hamster parrot bird fish turtle horse snake",
		Partner:      "partner boyfriend girlfriend husband wife dating married fiance fiancee spouse",
		Relationship: "relationship dating married single divorced engaged status",
		Favorite:     "favorite favourite",
		Plan:         "plan plans planning trip travel traveling visit",
	} {
		for _, w := range strings.Fields(words) {
			askWords[w] = append(askWords[w], attr)
		}
	}
}

// pastWords mark a question about an earlier value.
var pastWords = map[string]bool{"before": true, "previously": true, "used": true, "formerly": true, "former": true,
	"originally": true, "old": true, "earlier": true, "past": true, "first": true, "previous": true}

// Asked returns the attributes a question's words (its tokens) ask about,
// and whether it asks about an earlier value.
func Asked(words []string) (attrs []string, past bool) {
	for _, w := range words {
		for _, a := range askWords[w] {
			if !slices.Contains(attrs, a) {
				attrs = append(attrs, a)
			}
		}
		past = past || pastWords[w]
	}
	return attrs, past
}
