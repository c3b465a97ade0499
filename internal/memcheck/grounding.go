package memcheck

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/higmem/higmem/internal/textnorm"
)

// Grounding: what a model writes into an event's record must come from the
// turns the record covers (the turns that joined the event in the reply, or
// every turn an update prompt showed) or from the record the prompt showed
// for it. The real server wrote, schema-valid and past every other check:
// summaries of people no turn names ("Mike Johnson and David Brito …"),
// keywords like "mike_johnson_david_brito", a turn id as a title ("S1:4"),
// and "I am a greyhound dog…" over a good summary.
//
// What is checked, and what is left alone so that good records pass
// (TestGroundingGoodRecords measures the false rejects):
//   - names: a capitalised word that is not a stop word, a month or a
//     weekday must be a word (or the stem of one) of the support; case,
//     possessives and stemming ("Caroline's", "painted") do not matter;
//   - dates: a year must be in the support; a month name must be, or the
//     month before or after one that is (a turn of 8 May that says "last
//     month" gives April); days are not checked (a model works out
//     "yesterday");
//   - a title or a summary: besides its names and dates, at least
//     groundShare of its content words (stemmed, neither stop nor meta
//     words) must be in the support: paraphrase keeps most of them, a
//     summary of something else keeps none;
//   - a keyword: at least half of its content words must be in the
//     support (else it is dropped, a repair);
//   - role-play: a title, summary, context or fact in the first person
//     singular ("I am a greyhound dog") is the model speaking as someone,
//     not a record;
//   - an id as a title ("S1:4", "D3:7", "e12") is never a title.

// Problem kinds of grounding.
const (
	Ungrounded = "ungrounded" // names, dates or words the turns cited do not support
	RolePlay   = "role_play"  // the model speaking in the first person
)

// groundShare is the least share of a title's or summary's content words
// that its support must hold.
const groundShare = 0.34

// support is the stemmed words a record may use, plus the months its
// dates may name.
type support struct {
	stems  map[string]bool
	raw    []string // the words, for abbreviations ("St" of "Street")
	months [12]bool
	years  map[string]bool
}

// addText adds the words of text to the support.
func (sp *support) addText(text string) {
	if sp.stems == nil {
		sp.stems, sp.years = map[string]bool{}, map[string]bool{}
	}
	for _, w := range words(text) {
		if !sp.stems[w] {
			sp.raw = append(sp.raw, w)
		}
		sp.stems[w] = true
		sp.stems[textnorm.Stem(w)] = true
		if m, ok := monthOf[w]; ok {
			sp.months[m] = true
		}
		if yearRE.MatchString(w) {
			sp.years[w] = true
		}
	}
}

// has reports whether word w (lower-case) is supported.
func (sp *support) has(w string) bool {
	w = strings.TrimSuffix(w, "s") // possessive "carolines" after folding "Caroline's"
	return sp.stems[w] || sp.stems[textnorm.Stem(w)] || sp.stems[w+"s"]
}

var (
	yearRE = regexp.MustCompile(`^(19|20)\d\d$`)
	// idTitleRE matches turn and event ids: "S1:4", "D3:7", "e12",
	// "new:2", "[D1:3]".
	idTitleRE = regexp.MustCompile(`(?i)^\s*\[?\s*(([a-z]{1,3}\d+:\d+)|(e\d+)|(new:\d+))\s*\]?\s*$`)
)

var monthOf = func() map[string]int {
	m := map[string]int{}
	for i, n := range []string{"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december"} {
		m[n] = i
		if n != "may" {
			m[n[:3]] = i
		}
	}
	m["sept"] = 8
	return m
}()

var weekdays = set(strings.Fields("monday tuesday wednesday thursday friday saturday sunday"))

// firstPerson are the words of a text written in the first person
// singular.
var firstPerson = set(strings.Fields("i i'm im i've ive i'd i'll me my mine myself"))

// attributedRE matches a part of a text that quotes a speaker: "Tom: …",
// "Tom on 2 March 2024: …" (offline summaries quote their turns so).
var attributedRE = regexp.MustCompile(`^\s*\p{Lu}[\p{L}'’ &.-]{0,40}?( on [^:]{1,40})?: `)

// rolePlay reports whether text speaks in the first person singular
// outside the parts that quote a speaker ("Tom: I did it!").
func rolePlay(text string) bool {
	for _, part := range strings.Split(text, " / ") {
		if !attributedRE.MatchString(part) && firstPersonIn(part) {
			return true
		}
	}
	return false
}

// firstPersonIn reports whether text has a first-person singular word.
func firstPersonIn(text string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	}) {
		if firstPerson[strings.ReplaceAll(strings.Trim(w, "'’"), "’", "'")] {
			return true
		}
	}
	return false
}

// nameWords returns the lower-cased words of text that may name someone:
// capitalised, at least two letters, not a stop word, a month or a weekday.
func nameWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' }) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		w = strings.Trim(w, "'’")
		r := []rune(w)
		if len(r) < 2 || !unicode.IsUpper(r[0]) {
			continue
		}
		k := strings.ToLower(strings.ReplaceAll(w, "’", "'"))
		base, _, _ := strings.Cut(k, "'") // "I'm", "Tom's", "Don't"
		if _, month := monthOf[k]; month || weekdays[k] || textnorm.IsStop(k) || metaWords[k] ||
			firstPerson[k] || base != k && (textnorm.IsStop(base) || base == "i") {
			continue
		}
		out = append(out, k)
	}
	return out
}

// ungrounded says what of text its support lacks ("" when nothing):
// a name, a year, a month, or (whole, when share is positive) most of
// its content words.
func (sp *support) ungrounded(text string, share float64) string {
	for _, n := range nameWords(text) {
		if !sp.has(n) && !sp.abbreviates(n) {
			return "name " + n
		}
	}
	content, found := 0, 0
	for _, w := range words(text) {
		if yearRE.MatchString(w) {
			if !sp.years[w] {
				return "year " + w
			}
			continue
		}
		if m, ok := monthOf[w]; ok && w != "may" {
			if !sp.months[m] && !sp.months[(m+11)%12] && !sp.months[(m+1)%12] {
				return "month " + w
			}
			continue
		}
		if textnorm.IsStop(w) || metaWords[w] || isNumber(w) || weekdays[w] {
			continue
		}
		content++
		if sp.has(w) {
			found++
		}
	}
	if share > 0 && content > 0 && float64(found) < share*float64(content) {
		return "words"
	}
	return ""
}

// abbreviates reports whether n (three letters at most) starts a
// supported word: "St" for "Street", "Dr" for "Drive".
func (sp *support) abbreviates(n string) bool {
	if len(n) > 3 {
		return false
	}
	for _, w := range sp.raw {
		if strings.HasPrefix(w, n) {
			return true
		}
	}
	return false
}

// keywordGrounded reports whether at least half of a keyword's content
// words are supported (a keyword of none, all stop words, is left to the
// stop-word check).
func (sp *support) keywordGrounded(k string) bool {
	content, found := 0, 0
	for _, w := range words(k) {
		if textnorm.IsStop(w) {
			continue
		}
		content++
		if sp.has(w) {
			found++
		}
	}
	return content == 0 || 2*found >= content
}

// recordSupport is the support of a record that covers turns (ids shown)
// and continues event (an id shown, or "" for a new event).
func (s Shown) recordSupport(turns []string, event string) *support {
	sp := &support{}
	sp.addText("")
	for _, id := range turns {
		sp.addText(s.turnText[id])
	}
	if event != "" {
		sp.addText(s.eventText[event])
	}
	return sp
}

// allSupport is the support of every turn and event the prompt showed.
func (s Shown) allSupport() *support {
	sp := &support{}
	sp.addText("")
	for _, id := range s.Turns {
		sp.addText(s.turnText[id])
	}
	for _, id := range s.Events {
		sp.addText(s.eventText[id])
	}
	return sp
}

// grounded reports whether the prompt showed turns or events to ground a
// record in (a Shown built by FromPrompt from such a prompt); otherwise
// nothing is checked for grounding.
func (s Shown) grounded() bool { return len(s.turnText) > 0 || len(s.eventText) > 0 }
