package temporal

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tWord tokKind = iota
	tNum
	tPunct
)

// token is one lexical unit of the input. Offsets are byte offsets into the
// original string.
type token struct {
	start, end int
	// key is the lower-cased word with a possessive "'s" removed, the digit
	// string of a number, or the punctuation rune.
	key  string
	num  int64 // value of a number; -1 when it has more than 18 digits
	ndig int   // digit count of a number
	kind tokKind
	ord  bool // number with an ordinal suffix ("8th")
	cap  bool // word whose first letter is upper-case
	// clitic marks a word that lost a trailing "'s": a possessive
	// ("Melanie's") or a contracted "is"/"has" ("it's", "she's").
	clitic bool
}

func isApos(r rune) bool { return r == '\'' || r == '’' }

// tokenize splits s into words, numbers and single punctuation runes.
// Digits followed by letters are split ("3June" → 3, June) unless the letters
// are an ordinal suffix ("8th").
func tokenize(s string) []token {
	toks := make([]token, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		r, sz := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= '0' && r <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			t := token{start: i, end: j, key: s[i:j], kind: tNum, ndig: j - i}
			if t.ndig <= 18 {
				for k := i; k < j; k++ {
					t.num = t.num*10 + int64(s[k]-'0')
				}
			} else {
				t.num = -1
			}
			if j+2 <= len(s) {
				suf := strings.ToLower(s[j : j+2])
				if (suf == "st" || suf == "nd" || suf == "rd" || suf == "th") && (j+2 == len(s) || !isLetterAt(s, j+2)) {
					t.ord = true
					t.end = j + 2
				}
			}
			toks = append(toks, t)
			i = t.end
		case unicode.IsLetter(r):
			j := i + sz
			for j < len(s) {
				r2, sz2 := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) {
					j += sz2
					continue
				}
				if isApos(r2) && j+sz2 < len(s) && isLetterAt(s, j+sz2) {
					j += sz2
					continue
				}
				break
			}
			toks = append(toks, wordToken(s, i, j, unicode.IsUpper(r)))
			i = j
		case unicode.IsSpace(r):
			i += sz
		default:
			toks = append(toks, token{start: i, end: i + sz, key: s[i : i+sz], kind: tPunct})
			i += sz
		}
	}
	return toks
}

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func wordToken(s string, i, j int, upper bool) token {
	w := s[i:j]
	end := j
	clitic := false
	// Strip a possessive or contracted "'s" ("tomorrow's", "it's").
	if n := len(w); n > 2 && (w[n-1] == 's' || w[n-1] == 'S') {
		if w[n-2] == '\'' {
			w, end, clitic = w[:n-2], j-2, true
		} else if n > 4 && strings.HasSuffix(w[:n-1], "’") {
			w, end, clitic = w[:n-1-len("’")], j-1-len("’"), true
		}
	}
	return token{start: i, end: end, key: lowerKey(w), kind: tWord, cap: upper, clitic: clitic}
}

// lowerKey lower-cases w and maps the typographic apostrophe to ASCII,
// allocating only when w is not already lower-case ASCII.
func lowerKey(w string) string {
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ReplaceAll(strings.ToLower(w), "’", "'")
		}
	}
	return w
}

var monthWords = map[string]time.Month{
	"january": time.January, "jan": time.January,
	"february": time.February, "feb": time.February,
	"march": time.March, "mar": time.March,
	"april": time.April, "apr": time.April,
	"may":  time.May,
	"june": time.June, "jun": time.June,
	"july": time.July, "jul": time.July,
	"august": time.August, "aug": time.August,
	"september": time.September, "sep": time.September, "sept": time.September,
	"october": time.October, "oct": time.October,
	"november": time.November, "nov": time.November,
	"december": time.December, "dec": time.December,
}

var weekdayWords = map[string]time.Weekday{
	"monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday,
	"thursday": time.Thursday, "thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday,
	"friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
	"sunday": time.Sunday, "sun": time.Sunday,
}

// isFullWeekday reports whether key is a full weekday name (all are at least
// six letters; every abbreviation is at most five).
func isFullWeekday(key string) bool {
	_, ok := weekdayWords[key]
	return ok && len(key) >= 6
}

var numberWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
}

type unit uint8

const (
	uNone unit = iota
	uDay
	uWeek
	uWeekend
	uMonth
	uYear
	uDecade
)

var unitWords = map[string]unit{
	"day": uDay, "days": uDay,
	"week": uWeek, "weeks": uWeek,
	"weekend": uWeekend, "weekends": uWeekend,
	"month": uMonth, "months": uMonth,
	"year": uYear, "years": uYear,
	"decade": uDecade, "decades": uDecade,
}

type season uint8

const (
	sNone season = iota
	sSpring
	sSummer
	sFall
	sWinter
)

var seasonWords = map[string]season{
	"spring": sSpring, "summer": sSummer, "fall": sFall, "autumn": sFall, "winter": sWinter,
}

// seasonStart is the first month of each season; winter starts in December
// of its season year.
var seasonStart = [...]time.Month{0, time.March, time.June, time.September, time.December}

var partOfDay = map[string]bool{"morning": true, "afternoon": true, "evening": true, "night": true}
