package temporal

import "time"

// IntentKind is the main temporal shape of a question.
type IntentKind uint8

// Intent kinds, in the priority order AnalyzeQuestion applies when several
// cues are present (Frequency first, During last).
const (
	// IntentNone: no temporal cue.
	IntentNone IntentKind = iota
	// IntentFrequency: "how often", "how many times".
	IntentFrequency
	// IntentHowLong: "how long", "for how long", "how many years|months|
	// weeks|days …".
	IntentHowLong
	// IntentYear: "what/which year".
	IntentYear
	// IntentMonth: "what/which month".
	IntentMonth
	// IntentWeek: "what/which week".
	IntentWeek
	// IntentDate: "what/which date|day", "what time".
	IntentDate
	// IntentWhen: an interrogative "when".
	IntentWhen
	// IntentOrder: before/after/first/last/earlier/later/since/recently
	// without one of the kinds above.
	IntentOrder
	// IntentDuring: the question only names or restricts to a time ("What
	// did X attend in March 2023?", "… as of December 2023?", "… ago?",
	// a year, a month or weekday name). A bare "during <event>" is not a cue;
	// "during 2022" or "during the summer" is, through Resolve.
	IntentDuring
)

var intentNames = [...]string{"none", "frequency", "how-long", "year", "month", "week", "date", "when", "order", "during"}

// String returns the lower-case name of k.
func (k IntentKind) String() string {
	if int(k) < len(intentNames) {
		return intentNames[k]
	}
	return "none"
}

// Order is the ordering relation a question asks about.
type Order uint8

// Ordering relations.
const (
	OrderNone   Order = iota
	OrderBefore       // "before", "prior to", "earlier"
	OrderAfter        // "after", "later", "since <event>"
	OrderFirst        // "first time", "… first?", "earliest"
	OrderLast         // "last time", "most recently", "recently", "latest"
)

var orderNames = [...]string{"none", "before", "after", "first", "last"}

// String returns the lower-case name of o.
func (o Order) String() string {
	if int(o) < len(orderNames) {
		return orderNames[o]
	}
	return "none"
}

// Intent is the temporal reading of a question.
type Intent struct {
	// Temporal reports whether any temporal cue was found (Kind != IntentNone).
	Temporal bool
	// Kind is the main shape of the question.
	Kind IntentKind
	// Order is the ordering relation asked about, if any.
	Order Order
	// Range is the hull of the time expressions the question names, or nil.
	// Without a reference time only absolute expressions ("May 2023",
	// "in 2022", "8 May 2023") count.
	Range *Interval
	// Refs are the time expressions used for Range.
	Refs []Ref
	// Cues are the matched cue phrases, lower-case, in text order, without
	// duplicates.
	Cues []string
}

// AnalyzeQuestion reads the temporal intent of a question without a
// reference time; see AnalyzeQuestionAt.
func AnalyzeQuestion(q string) Intent { return AnalyzeQuestionAt(q, time.Time{}) }

// AnalyzeQuestionAt reads the temporal intent of q by keyword heuristics. If
// ref is not zero, relative expressions ("last year") are resolved against it
// and may set Range; otherwise they are only cues.
func AnalyzeQuestionAt(q string, ref time.Time) Intent {
	toks := tokenize(q)
	var in Intent
	var seen [IntentDuring + 1]bool
	cueSet := map[string]bool{}
	addCue := func(c string) {
		if !cueSet[c] {
			cueSet[c] = true
			in.Cues = append(in.Cues, c)
		}
	}
	key := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].key
	}
	setOrder := func(o Order, cue string) {
		if in.Order == OrderNone {
			in.Order = o
		}
		seen[IntentOrder] = true
		addCue(cue)
	}
	for i, t := range toks {
		if t.kind == tNum {
			if t.ndig == 4 && !t.ord && t.num >= 1900 && t.num <= 2100 {
				seen[IntentDuring] = true
				addCue(t.key)
			}
			continue
		}
		if t.kind != tWord {
			continue
		}
		switch k := t.key; k {
		case "when":
			if i == 0 || auxWords[key(i+1)] || key(i-1) == "since" || key(i-1) == "until" {
				seen[IntentWhen] = true
				addCue("when")
			}
		case "what", "which":
			switch n := key(i + 1); n {
			case "date", "day":
				seen[IntentDate] = true
				addCue(k + " " + n)
			case "time":
				if key(i+2) != "of" { // "what time of year" is not a clock time
					seen[IntentDate] = true
					addCue(k + " " + n)
				}
			case "year":
				seen[IntentYear] = true
				addCue(k + " " + n)
			case "month":
				seen[IntentMonth] = true
				addCue(k + " " + n)
			case "week", "weekend":
				seen[IntentWeek] = true
				addCue(k + " " + n)
			}
		case "how":
			switch n := key(i + 1); n {
			case "long":
				seen[IntentHowLong] = true
				addCue("how long")
			case "often", "frequently":
				seen[IntentFrequency] = true
				addCue("how " + n)
			case "many", "much":
				switch u := key(i + 2); u {
				case "times":
					seen[IntentFrequency] = true
					addCue("how many times")
				case "years", "months", "weeks", "days", "hours", "minutes", "decades", "weekends", "time":
					seen[IntentHowLong] = true
					addCue("how " + n + " " + u)
				}
			}
		case "before":
			setOrder(OrderBefore, k)
		case "prior":
			if key(i+1) == "to" {
				setOrder(OrderBefore, "prior to")
			}
		case "earlier", "earliest":
			if k == "earliest" {
				setOrder(OrderFirst, k)
			} else {
				setOrder(OrderBefore, k)
			}
		case "after", "later", "afterwards", "since":
			setOrder(OrderAfter, k)
		case "latest":
			setOrder(OrderLast, k)
		case "first", "last":
			o := OrderFirst
			if k == "last" {
				o = OrderLast
			}
			// An ordinal adjective ("her first screenplay") is not an order
			// cue; "first time", "… first?", "came first," and "the first to"
			// are.
			n := key(i + 1)
			endsClause := i+1 >= len(toks) || toks[i+1].kind == tPunct
			if n == "time" || endsClause || (n == "to" && key(i-1) == "the") {
				setOrder(o, k)
			}
		case "recently", "lately":
			if key(i-1) == "most" {
				setOrder(OrderLast, "most recently")
			} else {
				setOrder(OrderLast, k)
			}
		case "ago", "currently", "anymore", "nowadays":
			seen[IntentDuring] = true
			addCue(k)
		case "as":
			if key(i+1) == "of" {
				seen[IntentDuring] = true
				addCue("as of")
			}
		default:
			// Month names only when capitalised ("March", not "they march");
			// lower-case "in march 2023" still counts through Resolve below.
			if _, ok := monthWords[k]; ok && t.cap {
				seen[IntentDuring] = true
				addCue(k)
			} else if isFullWeekday(k) || seasonWords[k] != sNone && (key(i-1) == "the" || key(i-1) == "last" || key(i-1) == "this" || key(i-1) == "in") {
				seen[IntentDuring] = true
				addCue(k)
			}
		}
	}
	for _, r := range Resolve(q, ref) {
		if k := lowerKey(r.Text); k == "recently" || k == "lately" {
			continue // an order cue above, not a range
		}
		if ref.IsZero() && r.Kind != KindAbsolute {
			// Still a temporal cue ("last year", "yesterday"), but there is no
			// reference to place it.
			seen[IntentDuring] = true
			addCue(lowerKey(r.Text))
			continue
		}
		seen[IntentDuring] = true
		addCue(lowerKey(r.Text))
		in.Refs = append(in.Refs, r)
		if in.Range == nil {
			in.Range = &Interval{Start: r.Start, End: r.End}
			continue
		}
		if r.Start.Before(in.Range.Start) {
			in.Range.Start = r.Start
		}
		if r.End.After(in.Range.End) {
			in.Range.End = r.End
		}
	}
	for k := IntentFrequency; k <= IntentDuring; k++ {
		if seen[k] {
			in.Kind = k
			break
		}
	}
	in.Temporal = in.Kind != IntentNone
	return in
}

// AsksTime reports whether the answer to the question is itself a time or a
// duration (when, what date/week/month/year, how long), as opposed to a
// question that merely mentions or orders by time.
func (in Intent) AsksTime() bool {
	switch in.Kind {
	case IntentWhen, IntentDate, IntentWeek, IntentMonth, IntentYear, IntentHowLong:
		return true
	}
	return false
}

var auxWords = map[string]bool{
	"did": true, "do": true, "does": true, "is": true, "was": true, "were": true, "will": true,
	"would": true, "has": true, "have": true, "had": true, "can": true, "could": true, "are": true,
	"am": true, "should": true, "might": true,
}
