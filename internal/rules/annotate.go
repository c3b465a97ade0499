package rules

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/store"
)

// Annotate annotates a turn without an LLM: keywords, entities, resolved
// time expressions and a context line.
func Annotate(t store.Turn) store.Annotation {
	text := Content(t)
	a := store.Annotation{
		TurnID:   t.ID,
		Keywords: Keywords(TopicText(t), offline.KeywordsPerTurn, NameSet(t.Speaker)),
		Entities: Entities(text, t.Speaker),
		Producer: offline.Producer,
	}
	if !t.OccurredAt.IsZero() {
		for _, r := range temporal.Resolve(text, t.OccurredAt) {
			a.TimeRefs = append(a.TimeRefs, store.TimeRef{
				Text: r.Text, Start: r.Start, End: r.End,
				Granularity: r.Granularity.String(), Fuzzy: r.Fuzzy,
			})
		}
	}
	ctxLine := t.Speaker
	if !t.OccurredAt.IsZero() {
		ctxLine += " on " + temporal.FormatDay(t.OccurredAt)
	}
	a.Context = ctxLine + ": " + Truncate(FirstSentence(text), 160)
	return a
}

// Keywords returns up to n distinctive words of text, in order of
// appearance: no stop words, filler words, words shorter than three letters
// or words in exclude (lower-case); capitalised words that do not start a
// sentence rank first, then longer words, ties by position.
func Keywords(text string, n int, exclude map[string]bool) []string {
	type kw struct {
		w     string
		score int
		pos   int
	}
	seen := map[string]bool{}
	var ks []kw
	sentenceStart := true
	pos := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !IsWordRune(r) {
			if r == '.' || r == '!' || r == '?' || r == '[' || r == ':' || r == '"' || r == '\n' {
				sentenceStart = true
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !IsWordRune(r) {
				break
			}
			j += size
		}
		w := strings.Trim(text[i:j], "'’-")
		start := sentenceStart
		sentenceStart = false
		i = j
		pos++
		lw := strings.ToLower(w)
		if utf8.RuneCountInString(lw) < 3 || textnorm.IsStop(lw) || seen[lw] || fillerWords[lw] || exclude[lw] {
			continue
		}
		seen[lw] = true
		s := utf8.RuneCountInString(lw)
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && !start {
			s += 6
		}
		ks = append(ks, kw{w, s, pos})
	}
	slices.SortStableFunc(ks, func(a, b kw) int { return cmp.Compare(b.score, a.score) })
	if len(ks) > n {
		ks = ks[:n]
	}
	slices.SortFunc(ks, func(a, b kw) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.w
	}
	return out
}

// IsWordRune reports whether r belongs to a word (letters, digits, apostrophes, hyphens).
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == '-'
}

// TopicText is the text keywords of a turn come from: its words, then the
// captions of its attachments without the words that only name the medium
// ("a photo of ...").
func TopicText(t store.Turn) string {
	var b strings.Builder
	b.WriteString(t.Text)
	for _, a := range t.Attachments {
		if a.Caption == "" {
			continue
		}
		b.WriteString("\n")
		for _, w := range strings.Fields(a.Caption) {
			if !mediumWords[strings.ToLower(strings.Trim(w, ".,;:!?"))] {
				b.WriteString(w)
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// mediumWords name the kind of an attachment rather than what it shows.
var mediumWords = map[string]bool{
	"photo": true, "photograph": true, "photography": true, "picture": true, "image": true, "pic": true,
	"screenshot": true, "close": true, "closeup": true,
}

// NameSet returns the lower-cased names, each also by its first word.
func NameSet(names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		out[n] = true
		first, _, _ := strings.Cut(n, " ")
		out[first] = true
	}
	return out
}

// fillerWords are chat words that are not stop words but carry no topic.
var fillerWords = map[string]bool{
	"yeah": true, "wow": true, "hey": true, "really": true, "thanks": true, "thank": true, "great": true,
	"awesome": true, "cool": true, "totally": true, "definitely": true, "glad": true, "good": true, "nice": true,
	"amazing": true, "sounds": true, "like": true, "know": true, "think": true, "also": true, "much": true,
	"lot": true, "always": true, "sure": true, "it's": true, "that's": true, "i'm": true, "you're": true,
	"i've": true, "don't": true, "can't": true, "what's": true, "let's": true,
	"since": true, "last": true, "got": true, "get": true, "made": true, "make": true, "time": true,
	"thing": true, "things": true, "going": true, "feel": true, "feels": true, "lately": true,
	"recently": true, "still": true, "well": true, "yes": true, "maybe": true, "right": true,
	"pretty": true, "kind": true, "even": true, "something": true, "anything": true,
}

var entityRE = regexp.MustCompile(`\b[A-Z][\p{L}'’-]+(?:\s+(?:of\s+|the\s+)?[A-Z][\p{L}'’-]+)*`)

// Entities returns capitalised spans that are not sentence-initial stop
// words, plus the speaker, in order of appearance.
func Entities(text, speaker string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(speaker)
	for _, m := range entityRE.FindAllString(text, -1) {
		m = strings.TrimRight(m, "'’-")
		if strings.HasSuffix(m, "'s") || strings.HasSuffix(m, "’s") {
			m = m[:len(m)-len("'s")]
			m = strings.TrimRight(m, "’")
		}
		lw := strings.ToLower(m)
		if textnorm.IsStop(lw) || fillerWords[lw] || len(m) < 2 || lw == "i'm" || lw == "i've" || lw == "i'll" || lw == "i'd" {
			continue
		}
		add(m)
	}
	return out
}

// numberWords are the spelled-out numbers HasNumber recognises.
var numberWords = map[string]bool{
	"one": true, "two": true, "three": true, "four": true, "five": true, "six": true, "seven": true,
	"eight": true, "nine": true, "ten": true, "eleven": true, "twelve": true, "twenty": true,
	"dozen": true, "hundred": true, "thousand": true, "once": true, "twice": true, "thrice": true,
	"first": true, "second": true, "third": true, "several": true, "couple": true,
}

// HasNumber reports whether text mentions a number, in digits or in words.
func HasNumber(text string) bool {
	for w := range textnorm.TokensSeq(text) {
		if numberWords[w] || strings.ContainsAny(w, "0123456789") {
			return true
		}
	}
	return false
}
