package temporal

import (
	"strings"
	"time"
)

// Resolve finds time expressions in text and resolves them against ref, the
// moment the text was said (a turn's occurred_at). Matches are returned in
// text order and never overlap; at each position the longest expression
// wins. Intervals are aligned to midnight in ref's location and half-open.
//
// Covered (case-insensitive):
//
//   - days: today, tonight, this morning/afternoon/evening, earlier today,
//     yesterday (morning …), last night, the day before yesterday, tomorrow,
//     the day after tomorrow;
//   - last/this/next (also "this past", "this coming", "previous") + week,
//     weekend, month, year, a season, a weekday ("last Fri") or a month name;
//     weeks are ISO Monday–Sunday, "last Friday" is the most recent Friday
//     strictly before ref's day, "this Friday" the first Friday on or after
//     it and "next Friday" the first Friday strictly after it;
//   - counts ago: "N days|weeks|weekends|months|years|decades ago" with N as
//     digits, a word (one … twenty, thirty …), "a"/"an", "a couple of" (2),
//     "a few" (2–4) or "several" (3–7); "two weeks ago" is the 7 days centred
//     on ref-14d, months and years are calendar months and years, and
//     "two weekends ago" is the weekend before last weekend; also "the week
//     before last" and "the weekend before last";
//   - windows and durations (KindDuration, ending with ref's day included):
//     "for three years", "for the past 2 weeks", "the last few months",
//     "in the past year", "since 2016", "since last May"; in a clause that
//     looks forward "for a week" starts at ref instead, "in two weeks" is
//     KindFuture (and nothing otherwise: "I finished it in two weeks"), and
//     "the next few days" / "3 days from now" are KindFuture;
//   - absolute dates: "in 2022", "during 2021", "May 2023", "8 May 2023",
//     "May 8th, 2023", "the 8th of May", "2023-05-08", "5/8/2023" (US);
//     without a year ("8 May", "May 8th", "in May", "in the summer") the
//     occurrence the clause's tense points to (see below);
//   - seasons: "summer of 2022", "summer 2022", "last summer", "this winter";
//   - weekdays: "on Monday", "Monday", "on Friday night": the such day
//     strictly before ref's day or the first strictly after it, by the
//     clause's tense; "every Monday" and plurals are ignored;
//   - weekends: "over the weekend", "on the weekend", "the weekend";
//   - parts: "early/mid/late X", "the beginning/start/middle/end of X" for a
//     month, season or year X (the first, middle or last third; Fuzzy);
//   - vague (Fuzzy): "recently", "lately" (the 30 days up to ref's day),
//     "the other day" (the 7 days before ref's day), and "around/about/
//     approximately/roughly/nearly/almost" before any expression above.
//
// Expressions that name a time without a direction (a date or month without
// a year, a bare weekday, "the weekend", "in the summer", "on the 15th") look
// forward in a clause with present, progressive or future phrasing ("it's on
// May 19", "I start on June 3", "we're getting married in June", "I'll",
// "going to", "planning", "can't wait", "until"), back in one with past
// phrasing ("was", "went", "started", "last", "ago", "back in", "since"), and
// otherwise take the occurrence nearer to ref (the earlier on a tie). Only
// the clause containing the expression counts, and within it the cue nearest
// to the expression.
//
// A zero ref is allowed; only KindAbsolute results are meaningful then.
// Resolve is deterministic and safe for concurrent use.
func Resolve(text string, ref time.Time) []Ref {
	toks := tokenize(text)
	if len(toks) == 0 {
		return nil
	}
	r := resolver{src: text, toks: toks, loc: ref.Location(), day: midnight(ref)}
	var out []Ref
	for i := 0; i < len(toks); {
		h := r.match(i)
		if h.n == 0 {
			i++
			continue
		}
		start, end := toks[i].start, toks[i+h.n-1].end
		out = append(out, Ref{
			Text: text[start:end], Pos: start,
			Start: h.start, End: h.end,
			Granularity: h.gran, Kind: h.kind, Fuzzy: h.fuzzy,
		})
		i += h.n
	}
	return out
}

// hit is a match of n tokens.
type hit struct {
	start, end time.Time
	gran       Granularity
	kind       Kind
	fuzzy      bool
	n          int
}

type resolver struct {
	src  string
	toks []token
	loc  *time.Location
	day  time.Time // midnight of the reference day
}

func (r *resolver) key(i int) string {
	if i < 0 || i >= len(r.toks) {
		return ""
	}
	return r.toks[i].key
}

func (r *resolver) isWord(i int) bool { return i >= 0 && i < len(r.toks) && r.toks[i].kind == tWord }

func (r *resolver) isPunct(i int, p string) bool {
	return i >= 0 && i < len(r.toks) && r.toks[i].kind == tPunct && r.toks[i].key == p
}

func (r *resolver) d(n int) time.Time { return addDays(r.day, n) }

// span builds a hit over [s, e).
func span(s, e time.Time, g Granularity, k Kind, n int) hit {
	return hit{start: s, end: e, gran: g, kind: k, n: n}
}

// kindOf classifies [s, e) against the reference day.
func (r *resolver) kindOf(s, e time.Time) Kind {
	switch {
	case !e.After(r.day):
		return KindPast
	case s.After(r.day):
		return KindFuture
	}
	return KindPresent
}

func longest(hs ...hit) hit {
	var best hit
	for _, h := range hs {
		if h.n > best.n {
			best = h
		}
	}
	return best
}

// match tries every pattern at token i and returns the longest match.
func (r *resolver) match(i int) hit {
	if r.toks[i].kind == tPunct {
		return hit{}
	}
	return longest(
		r.approx(i),
		r.point(i, false),
		r.since(i),
		r.part(i),
		r.ago(i),
		r.window(i),
		r.forDuration(i),
		r.inFuture(i),
		r.prepPoint(i),
		r.vague(i),
	)
}

// point matches a self-contained time point. With bare set, it also accepts
// a lone year, month or season (used after since/early/around/in …).
func (r *resolver) point(i int, bare bool) hit {
	hs := []hit{r.deictic(i), r.relative(i), r.date(i), r.seasonAbs(i), r.weekday(i, bare), r.weekend(i), r.earlierLater(i), r.ordinalDay(i)}
	if bare {
		hs = append(hs, r.bareYear(i), r.bareMonth(i), r.bareSeason(i))
	}
	return longest(hs...)
}

// ---- days ------------------------------------------------------------------

func (r *resolver) deictic(i int) hit {
	day := func(off, n int) hit {
		s := r.d(off)
		k := KindPresent
		if off < 0 {
			k = KindPast
		} else if off > 0 {
			k = KindFuture
		}
		return span(s, addDays(s, 1), GranDay, k, n)
	}
	withPart := func(n int) int {
		if partOfDay[r.key(i+1)] {
			return n + 1
		}
		return n
	}
	switch r.key(i) {
	case "today", "tonight":
		return day(0, 1)
	case "yesterday":
		return day(-1, withPart(1))
	case "tomorrow":
		return day(1, withPart(1))
	case "this":
		if k := r.key(i + 1); k == "morning" || k == "afternoon" || k == "evening" {
			return day(0, 2)
		}
	case "last":
		if r.key(i+1) == "night" {
			return day(-1, 2)
		}
	case "the":
		if r.key(i+1) == "day" && r.key(i+2) == "before" && r.key(i+3) == "yesterday" {
			return day(-2, 4)
		}
		if r.key(i+1) == "day" && r.key(i+2) == "after" && r.key(i+3) == "tomorrow" {
			return day(2, 4)
		}
	}
	return hit{}
}

// earlierLater handles "earlier/later today|tonight|this week|month|year".
func (r *resolver) earlierLater(i int) hit {
	k := r.key(i)
	if k != "earlier" && k != "later" {
		return hit{}
	}
	if n := r.key(i + 1); n == "today" || n == "tonight" {
		return span(r.day, r.d(1), GranDay, KindPresent, 2)
	}
	if r.key(i+1) != "this" {
		return hit{}
	}
	s, e, g, ok := r.current(r.key(i + 2))
	if !ok {
		return hit{}
	}
	if k == "earlier" {
		return span(s, r.d(1), g, KindPast, 3)
	}
	if !r.d(1).Before(e) {
		return hit{}
	}
	return span(r.d(1), e, g, KindFuture, 3)
}

// current returns the calendar week, month or year containing the reference.
func (r *resolver) current(u string) (time.Time, time.Time, Granularity, bool) {
	switch unitWords[u] {
	case uWeek:
		s := weekStart(r.day)
		return s, addDays(s, 7), GranWeek, true
	case uMonth:
		s := monthStart(r.day.Year(), r.day.Month(), r.loc)
		return s, s.AddDate(0, 1, 0), GranMonth, true
	case uYear:
		s := yearStart(r.day.Year(), r.loc)
		return s, yearStart(r.day.Year()+1, r.loc), GranYear, true
	}
	return time.Time{}, time.Time{}, GranUnknown, false
}

// ---- last / this / next ------------------------------------------------------

type direction int8

const (
	dirLast direction = -1
	dirThis direction = 0
	dirNext direction = 1
)

func (r *resolver) relative(i int) hit {
	var dir direction
	n := 1
	switch r.key(i) {
	case "last", "previous":
		dir = dirLast
	case "next", "coming":
		dir = dirNext
	case "this":
		dir = dirThis
		switch r.key(i + 1) {
		case "past":
			dir, n = dirLast, 2
		case "coming":
			dir, n = dirNext, 2
		}
	default:
		return hit{}
	}
	j := i + n
	w := r.key(j)
	switch {
	case unitWords[w] != uNone && !strings.HasSuffix(w, "s"):
		return r.relUnit(unitWords[w], dir, n+1)
	case seasonWords[w] != sNone:
		return r.relSeason(seasonWords[w], dir, n+1)
	case r.weekdayAt(j, true):
		h := r.relWeekday(weekdayWords[w], dir, n+1)
		if r.isPunct(j+1, ".") && len(w) <= 4 { // "last Fri."
			h.n++
		}
		if partOfDay[r.key(j+1)] {
			h.n++
		}
		return h
	}
	if m, ok := monthWords[w]; ok {
		if w == "may" && !r.toks[j].cap {
			return hit{}
		}
		return r.relMonth(m, dir, n+1)
	}
	return hit{}
}

func (r *resolver) relUnit(u unit, dir direction, n int) hit {
	switch u {
	case uWeek:
		s := addDays(weekStart(r.day), 7*int(dir))
		return span(s, addDays(s, 7), GranWeek, dirKind(dir), n)
	case uWeekend:
		var s time.Time
		switch dir {
		case dirLast:
			s = lastWeekend(r.day)
		case dirThis:
			s = thisWeekend(r.day)
		default:
			s = nextWeekend(r.day)
		}
		e := addDays(s, 2)
		return span(s, e, GranWeek, r.kindOf(s, e), n)
	case uMonth:
		s := monthStart(r.day.Year(), r.day.Month()+time.Month(dir), r.loc)
		return span(s, s.AddDate(0, 1, 0), GranMonth, dirKind(dir), n)
	case uYear:
		y := r.day.Year() + int(dir)
		return span(yearStart(y, r.loc), yearStart(y+1, r.loc), GranYear, dirKind(dir), n)
	}
	return hit{}
}

func dirKind(dir direction) Kind {
	switch dir {
	case dirLast:
		return KindPast
	case dirNext:
		return KindFuture
	}
	return KindPresent
}

func (r *resolver) relSeason(se season, dir direction, n int) hit {
	y0 := r.day.Year()
	switch dir {
	case dirLast: // most recent occurrence that has ended by the reference day
		for y := y0 + 1; y >= y0-2; y-- {
			if s, e := seasonSpan(se, y, r.loc); !e.After(r.day) {
				return span(s, e, GranSeason, KindPast, n)
			}
		}
	case dirNext: // first occurrence starting after the reference day
		for y := y0 - 1; y <= y0+2; y++ {
			if s, e := seasonSpan(se, y, r.loc); s.After(r.day) {
				return span(s, e, GranSeason, KindFuture, n)
			}
		}
	default: // the occurrence nearest to the reference day
		cands := r.seasons(se)
		c, _ := r.choose(cands[:], tenseNone)
		return span(c.Start, c.End, GranSeason, r.kindOf(c.Start, c.End), n)
	}
	return hit{}
}

func (r *resolver) relWeekday(w time.Weekday, dir direction, n int) hit {
	var s time.Time
	switch dir {
	case dirLast:
		s = prevWeekday(r.day, w)
	case dirThis:
		s = nextWeekday(r.day, w, true)
	default:
		s = nextWeekday(r.day, w, false)
	}
	e := addDays(s, 1)
	return span(s, e, GranDay, r.kindOf(s, e), n)
}

func (r *resolver) relMonth(m time.Month, dir direction, n int) hit {
	y := r.day.Year()
	switch dir {
	case dirLast:
		if m >= r.day.Month() {
			y--
		}
	case dirNext:
		if m <= r.day.Month() {
			y++
		}
	}
	s := monthStart(y, m, r.loc)
	e := s.AddDate(0, 1, 0)
	return span(s, e, GranMonth, r.kindOf(s, e), n)
}

// ---- counts ------------------------------------------------------------------

// count reads a quantity at i: digits, a number word, "a"/"an", "a couple
// (of)", "a few", "several". It returns the range lo..hi, the tokens used
// and whether the quantity is vague.
func (r *resolver) count(i int) (lo, hi, n int, fuzzy bool) {
	if i >= len(r.toks) {
		return 0, 0, 0, false
	}
	t := r.toks[i]
	if t.kind == tNum {
		if t.ord || t.ndig > 3 || t.num < 1 {
			return 0, 0, 0, false
		}
		return int(t.num), int(t.num), 1, false
	}
	if v, ok := numberWords[t.key]; ok {
		return v, v, 1, false
	}
	switch t.key {
	case "a", "an":
		switch r.key(i + 1) {
		case "couple":
			if r.key(i+2) == "of" {
				return 2, 2, 3, true
			}
			return 2, 2, 2, true
		case "few":
			return 2, 4, 2, true
		}
		return 1, 1, 1, false
	case "couple":
		if r.key(i+1) == "of" {
			return 2, 2, 2, true
		}
		return 2, 2, 1, true
	case "few":
		return 2, 4, 1, true
	case "several":
		return 3, 7, 1, true
	}
	return 0, 0, 0, false
}

// countUnit reads "<count> <unit>" at i.
func (r *resolver) countUnit(i int) (lo, hi int, u unit, n int, fuzzy bool) {
	lo, hi, n, fuzzy = r.count(i)
	if n == 0 {
		return 0, 0, uNone, 0, false
	}
	u = unitWords[r.key(i+n)]
	if u == uNone {
		return 0, 0, uNone, 0, false
	}
	return lo, hi, u, n + 1, fuzzy
}

// ago handles "<count> <unit> ago" and "the week|weekend before last".
func (r *resolver) ago(i int) hit {
	if r.key(i) == "the" && r.key(i+2) == "before" && r.key(i+3) == "last" {
		if u := unitWords[r.key(i+1)]; u == uWeek || u == uWeekend {
			s, e := unitWindow(r.day, u, 2)
			if u == uWeek {
				s = addDays(weekStart(r.day), -14)
				e = addDays(s, 7)
			}
			return span(s, e, unitGran(u), KindPast, 4)
		}
	}
	lo, hi, u, n, fuzzy := r.countUnit(i)
	if n == 0 || r.key(i+n) != "ago" {
		return hit{}
	}
	s, _ := unitWindow(r.day, u, hi)
	_, e := unitWindow(r.day, u, lo)
	h := span(s, e, unitGran(u), KindPast, n+1)
	h.fuzzy = fuzzy
	return h
}

// pastWindow is the stretch of hi units up to and including the reference
// day, as a duration.
func (r *resolver) pastWindow(hi int, u unit, fuzzy bool, n int) hit {
	h := span(addUnits(r.day, u, -hi), r.d(1), unitGran(u), KindDuration, n)
	h.fuzzy = fuzzy
	return h
}

// window handles "[in|over|for|during|within] [the] last|past|next|coming
// [count] <unit>".
func (r *resolver) window(i int) hit {
	j := i
	switch r.key(j) {
	case "in", "over", "for", "during", "within", "throughout":
		j++
	}
	hasThe := r.key(j) == "the"
	if hasThe {
		j++
	}
	dir := r.key(j)
	if dir != "last" && dir != "past" && dir != "next" && dir != "coming" {
		return hit{}
	}
	j++
	_, hi, u, n, fuzzy := r.countUnit(j)
	if n == 0 {
		u = unitWords[r.key(j)]
		if u == uNone || u == uWeekend || u == uDay {
			return hit{} // "the next day", "the last day of camp": narrative, not deictic
		}
		hi, n = 1, 1
	}
	if !hasThe && n == 1 && dir != "past" {
		return hit{} // "last week" is a calendar week, handled by relative
	}
	if u == uWeekend {
		return hit{}
	}
	total := j + n - i
	if dir == "next" || dir == "coming" {
		s := r.d(1)
		h := span(s, addUnits(s, u, hi), unitGran(u), KindFuture, total)
		h.fuzzy = fuzzy
		return h
	}
	return r.pastWindow(hi, u, fuzzy, total)
}

// forDuration handles "for <count> <unit> [now]".
func (r *resolver) forDuration(i int) hit {
	if r.key(i) != "for" {
		return hit{}
	}
	m := r.hedge(i + 1)
	_, hi, u, n, fuzzy := r.countUnit(i + 1 + m)
	if n == 0 {
		return hit{}
	}
	fuzzy = fuzzy || m > 0
	total := n + 1 + m
	if r.key(i+total) == "now" {
		total++
	}
	if r.pastTense(i) {
		return hit{} // "we were teammates for four years": over, end unknown
	}
	if r.future(i, total) {
		h := span(r.day, addUnits(r.day, u, hi), unitGran(u), KindDuration, total)
		h.fuzzy = fuzzy
		return h
	}
	return r.pastWindow(hi, u, fuzzy, total)
}

// hedge returns how many tokens of a quantity hedge start at i: "about",
// "around", "almost", "nearly", "roughly", "approximately", "over", "under",
// "just under", "just over", "more than", "less than", "at least".
func (r *resolver) hedge(i int) int {
	switch r.key(i) {
	case "about", "around", "almost", "nearly", "roughly", "approximately", "over", "under":
		return 1
	case "just":
		if k := r.key(i + 1); k == "under" || k == "over" || k == "about" {
			return 2
		}
	case "more", "less":
		if r.key(i+1) == "than" {
			return 2
		}
	case "at":
		if r.key(i+1) == "least" {
			return 2
		}
	}
	return 0
}

// inFuture handles "in <count> <unit>" (only in a clause that looks
// forward) and
// "<count> <unit> from now".
func (r *resolver) inFuture(i int) hit {
	if r.key(i) == "in" {
		lo, hi, u, n, fuzzy := r.countUnit(i + 1)
		if n == 0 || r.key(i+1+n) == "ago" || !r.future(i, n+1) {
			return hit{}
		}
		s, _ := unitWindow(r.day, u, -lo)
		_, e := unitWindow(r.day, u, -hi)
		h := span(s, e, unitGran(u), KindFuture, n+1)
		h.fuzzy = fuzzy
		return h
	}
	lo, hi, u, n, fuzzy := r.countUnit(i)
	if n == 0 || r.key(i+n) != "from" || r.key(i+n+1) != "now" {
		return hit{}
	}
	s, _ := unitWindow(r.day, u, -lo)
	_, e := unitWindow(r.day, u, -hi)
	h := span(s, e, unitGran(u), KindFuture, n+2)
	h.fuzzy = fuzzy
	return h
}

// ---- wrappers ------------------------------------------------------------------

// since handles "since <point>", a duration from the point to the reference.
func (r *resolver) since(i int) hit {
	if r.key(i) != "since" {
		return hit{}
	}
	p := longest(r.point(i+1, true), r.part(i+1), r.ago(i+1))
	if p.n == 0 || p.start.After(r.day) {
		return hit{}
	}
	h := span(p.start, r.d(1), p.gran, KindDuration, p.n+1)
	h.fuzzy = p.fuzzy
	return h
}

// part handles "early|mid|late X" and "the beginning|start|middle|end of X".
func (r *resolver) part(i int) hit {
	var third, n int
	switch r.key(i) {
	case "early":
		third, n = 0, 1
	case "mid", "middle":
		third, n = 1, 1
	case "late":
		third, n = 2, 1
	case "the":
		if r.key(i+2) != "of" {
			return hit{}
		}
		switch r.key(i + 1) {
		case "beginning", "start":
			third = 0
		case "middle":
			third = 1
		case "end":
			third = 2
		default:
			return hit{}
		}
		n = 3
	default:
		return hit{}
	}
	if r.isPunct(i+n, "-") {
		n++
	}
	if r.key(i+n) == "in" && r.key(i) != "the" {
		n++
	}
	p := r.point(i+n, true)
	if p.n == 0 || p.gran < GranMonth {
		return hit{}
	}
	var s, e time.Time
	if p.gran >= GranSeason { // whole months: early 2022 is January–April
		months := (p.end.Year()-p.start.Year())*12 + int(p.end.Month()-p.start.Month())
		s = p.start.AddDate(0, months*third/3, 0)
		e = p.start.AddDate(0, months*(third+1)/3, 0)
	} else { // days: early May is 1–10 May, late May is 21–31 May
		days := int((p.end.Sub(p.start) + 12*time.Hour) / (24 * time.Hour))
		s = addDays(p.start, 10*third)
		e = addDays(p.start, 10*(third+1))
		if third == 2 || days < 10*(third+1) {
			e = p.end
		}
	}
	return hit{start: s, end: e, gran: p.gran, kind: p.kind, fuzzy: true, n: n + p.n}
}

// approx handles "around|about|approximately|roughly|nearly|almost|circa X".
func (r *resolver) approx(i int) hit {
	switch r.key(i) {
	case "around", "about", "approximately", "roughly", "nearly", "almost", "circa", "approx":
	default:
		return hit{}
	}
	p := longest(r.ago(i+1), r.bareYear(i+1), r.date(i+1))
	if k := r.key(i); k == "around" || k == "circa" {
		p = longest(p, r.point(i+1, false), r.part(i+1))
	}
	if p.n == 0 {
		return hit{}
	}
	p.n++
	p.fuzzy = true
	return p
}

// prepPoint handles "[back] in|during|throughout|over [the] <year|month|season>".
func (r *resolver) prepPoint(i int) hit {
	j := i
	if r.key(j) == "back" {
		j++
	}
	switch r.key(j) {
	case "in", "during", "throughout", "over":
	default:
		return hit{}
	}
	over := r.key(j) == "over"
	j++
	var p hit
	if over {
		p = r.bareSeason(j)
	} else {
		p = longest(r.bareYear(j), r.bareMonth(j), r.bareSeason(j), r.date(j), r.seasonAbs(j))
	}
	if p.n == 0 {
		return hit{}
	}
	p.n += j - i
	return p
}

// ---- dates ---------------------------------------------------------------------

func (r *resolver) yearAt(i int) (int, bool) {
	if i < 0 || i >= len(r.toks) {
		return 0, false
	}
	t := r.toks[i]
	if t.kind != tNum || t.ord || t.ndig != 4 || t.num < 1000 || t.num > 2999 {
		return 0, false
	}
	return int(t.num), true
}

func (r *resolver) dayAt(i int) (int, bool) {
	if i < 0 || i >= len(r.toks) {
		return 0, false
	}
	t := r.toks[i]
	if t.kind != tNum || t.ndig > 2 || t.num < 1 || t.num > 31 {
		return 0, false
	}
	// "May 3 years", "May 8:30", "8/5": not a day of month here.
	if unitWords[r.key(i+1)] != uNone || r.isPunct(i+1, ":") || r.isPunct(i+1, "/") {
		return 0, false
	}
	return int(t.num), true
}

// monthAt reads a month name at i (with an optional abbreviation dot).
// "may" must be capitalised unless strict is false; abbreviations other than
// "May/June/July" need the caller to supply a day or a year.
func (r *resolver) monthAt(i int, strict bool) (time.Month, int, bool) {
	if !r.isWord(i) {
		return 0, 0, false
	}
	m, ok := monthWords[r.toks[i].key]
	if !ok {
		return 0, 0, false
	}
	if strict && r.toks[i].key == "may" && !r.toks[i].cap {
		return 0, 0, false
	}
	n := 1
	if len(r.toks[i].key) <= 4 && r.toks[i].key != "may" && r.toks[i].key != "june" && r.toks[i].key != "july" && r.isPunct(i+1, ".") {
		n = 2
	}
	return m, n, true
}

// skipComma returns i+1 when toks[i] is a comma.
func (r *resolver) skipComma(i int) int {
	if r.isPunct(i, ",") {
		return i + 1
	}
	return i
}

// date handles day-month(-year), month-day(-year), month-year, ISO and US
// slash dates. A lone month name is handled by bareMonth.
func (r *resolver) date(i int) hit {
	return longest(r.dateDM(i), r.dateMD(i), r.dateMY(i), r.dateNumeric(i))
}

// dayHit resolves day d of month m; year y < 0 means "infer from tense".
func (r *resolver) dayHit(y int, m time.Month, d int, n, at int) hit {
	if y >= 0 {
		if !validDate(y, m, d) {
			return hit{}
		}
		s := time.Date(y, m, d, 0, 0, 0, 0, r.loc)
		return span(s, addDays(s, 1), GranDay, KindAbsolute, n)
	}
	// Candidates four years either side, so that 29 February finds a leap
	// year in both directions.
	var buf [9]Interval
	cands := buf[:0]
	for y := r.day.Year() - 4; y <= r.day.Year()+4; y++ {
		if validDate(y, m, d) {
			s := time.Date(y, m, d, 0, 0, 0, 0, r.loc)
			cands = append(cands, Interval{s, addDays(s, 1)})
		}
	}
	return r.pick(cands, at, n, GranDay)
}

// pick chooses among cands the occurrence the clause around toks[at:at+n]
// refers to (see tenseOf and choose) and returns it as a hit of n tokens.
func (r *resolver) pick(cands []Interval, at, n int, g Granularity) hit {
	c, ok := r.choose(cands, r.tenseOf(at, n))
	if !ok {
		return hit{}
	}
	return span(c.Start, c.End, g, r.kindOf(c.Start, c.End), n)
}

// dateDM: "[the] 8[th] [of] May[,] [2023]".
func (r *resolver) dateDM(i int) hit {
	j := i
	the := r.key(j) == "the"
	if the {
		j++
	}
	d, ok := r.dayAt(j)
	if !ok || (the && !r.toks[j].ord) {
		return hit{}
	}
	j++
	if r.key(j) == "of" {
		j++
	}
	m, mn, ok := r.monthAt(j, true)
	if !ok {
		return hit{}
	}
	j += mn
	if y, ok := r.yearAt(r.skipComma(j)); ok {
		j = r.skipComma(j) + 1
		return r.dayHit(y, m, d, j-i, i)
	}
	return r.dayHit(-1, m, d, j-i, i)
}

// dateMD: "May [the] 8[th][,] [2023]".
func (r *resolver) dateMD(i int) hit {
	m, mn, ok := r.monthAt(i, true)
	if !ok {
		return hit{}
	}
	j := i + mn
	if r.key(j) == "the" {
		j++
	}
	d, ok := r.dayAt(j)
	if !ok {
		return hit{}
	}
	j++
	if y, ok := r.yearAt(r.skipComma(j)); ok {
		j = r.skipComma(j) + 1
		return r.dayHit(y, m, d, j-i, i)
	}
	return r.dayHit(-1, m, d, j-i, i)
}

// dateMY: "May[,] 2023".
func (r *resolver) dateMY(i int) hit {
	m, mn, ok := r.monthAt(i, false)
	if !ok {
		return hit{}
	}
	j := r.skipComma(i + mn)
	y, ok := r.yearAt(j)
	if !ok {
		return hit{}
	}
	s := monthStart(y, m, r.loc)
	return span(s, s.AddDate(0, 1, 0), GranMonth, KindAbsolute, j+1-i)
}

// adjacent reports whether toks[i..j] are written without spaces between.
func (r *resolver) adjacent(i, j int) bool {
	if j >= len(r.toks) {
		return false
	}
	for k := i; k < j; k++ {
		if r.toks[k].end != r.toks[k+1].start {
			return false
		}
	}
	return true
}

// dateNumeric: "2023-05-08", "2023/05/08" and US "5/8/2023".
func (r *resolver) dateNumeric(i int) hit {
	if !r.adjacent(i, i+4) {
		return hit{}
	}
	t0, t2, t4 := r.toks[i], r.toks[i+2], r.toks[i+4]
	if t0.kind != tNum || t2.kind != tNum || t4.kind != tNum || t0.ord || t2.ord || t4.ord {
		return hit{}
	}
	if r.adjacent(i+4, i+5) && !r.isPunct(i+5, ",") && !r.isPunct(i+5, ".") {
		return hit{} // "2023-05-08-1", "5/8/2023x": part of something longer
	}
	if i > 0 && r.adjacent(i-1, i) && (r.isPunct(i-1, "/") || r.isPunct(i-1, "-") || r.toks[i-1].kind != tPunct) {
		return hit{}
	}
	sep := r.key(i + 1)
	if r.key(i+3) != sep || (sep != "-" && sep != "/") {
		return hit{}
	}
	if y, ok := r.yearAt(i); ok && t2.ndig <= 2 && t4.ndig <= 2 {
		return r.dayHit(y, time.Month(t2.num), int(t4.num), 5, i)
	}
	if sep == "/" && t0.ndig <= 2 && t2.ndig <= 2 {
		if y, ok := r.yearAt(i + 4); ok {
			return r.dayHit(y, time.Month(t0.num), int(t2.num), 5, i)
		}
	}
	return hit{}
}

// ordinalFollowers may follow "on the 15th" when it names a day of month
// (rather than, say, "on the 3rd floor").
var ordinalFollowers = map[string]bool{
	"after": true, "before": true, "and": true, "at": true, "in": true, "with": true, "when": true,
	"so": true, "but": true, "too": true, "as": true, "because": true, "i": true, "we": true, "to": true,
	"last": true, "this": true, "next": true,
}

// ordinalDay: "on the 15th" without a month: the 15th before or after the
// reference, by the clause's tense (see tenseOf).
func (r *resolver) ordinalDay(i int) hit {
	if r.key(i) != "on" || r.key(i+1) != "the" || i+2 >= len(r.toks) {
		return hit{}
	}
	t := r.toks[i+2]
	if t.kind != tNum || !t.ord || t.ndig > 2 || t.num < 1 || t.num > 31 {
		return hit{}
	}
	if i+3 < len(r.toks) && r.toks[i+3].kind != tPunct && !ordinalFollowers[r.key(i+3)] {
		return hit{}
	}
	d := int(t.num)
	var buf [5]Interval
	cands := buf[:0]
	for k := -2; k <= 2; k++ {
		first := monthStart(r.day.Year(), r.day.Month()+time.Month(k), r.loc) // normalises month overflow
		if validDate(first.Year(), first.Month(), d) {
			s := time.Date(first.Year(), first.Month(), d, 0, 0, 0, 0, r.loc)
			cands = append(cands, Interval{s, addDays(s, 1)})
		}
	}
	return r.pick(cands, i, 3, GranDay)
}

// bareYear: a lone four-digit year (1900–2100), only after a preposition.
func (r *resolver) bareYear(i int) hit {
	y, ok := r.yearAt(i)
	if !ok || y < 1900 || y > 2100 {
		return hit{}
	}
	if i+1 < len(r.toks) && r.toks[i+1].kind == tWord && unitWords[r.key(i+1)] != uNone {
		return hit{}
	}
	return span(yearStart(y, r.loc), yearStart(y+1, r.loc), GranYear, KindAbsolute, 1)
}

// bareMonth: a lone month name: this year's, last year's or next year's, by
// the clause's tense (see tenseOf).
func (r *resolver) bareMonth(i int) hit {
	m, mn, ok := r.monthAt(i, true)
	if !ok {
		return hit{}
	}
	var cands [3]Interval
	for k := range cands {
		s := monthStart(r.day.Year()-1+k, m, r.loc)
		cands[k] = Interval{s, s.AddDate(0, 1, 0)}
	}
	return r.pick(cands[:], i, mn, GranMonth)
}

// bareSeason: "[the] summer", resolved like bareMonth.
func (r *resolver) bareSeason(i int) hit {
	j := i
	if r.key(j) == "the" {
		j++
	}
	se := seasonWords[r.key(j)]
	if se == sNone {
		return hit{}
	}
	cands := r.seasons(se)
	return r.pick(cands[:], i, j+1-i, GranSeason)
}

// seasons returns the occurrences of se around the reference day, in order.
func (r *resolver) seasons(se season) [4]Interval {
	var cands [4]Interval
	for k := range cands {
		s, e := seasonSpan(se, r.day.Year()-2+k, r.loc)
		cands[k] = Interval{s, e}
	}
	return cands
}

// seasonAbs: "[the] summer [of] 2022".
func (r *resolver) seasonAbs(i int) hit {
	j := i
	if r.key(j) == "the" {
		j++
	}
	se := seasonWords[r.key(j)]
	if se == sNone {
		return hit{}
	}
	j++
	if r.key(j) == "of" {
		j++
	}
	y, ok := r.yearAt(r.skipComma(j))
	if !ok {
		return hit{}
	}
	j = r.skipComma(j) + 1
	s, e := seasonSpan(se, y, r.loc)
	return span(s, e, GranSeason, KindAbsolute, j-i)
}

// ---- weekdays and weekends -----------------------------------------------------

// weekdayAt reports whether toks[j] names a weekday. Abbreviations are
// accepted only with abbrev set, and "sun", "sat", "wed" and "mon", which are
// also ordinary words, only when capitalised.
func (r *resolver) weekdayAt(j int, abbrev bool) bool {
	if !r.isWord(j) {
		return false
	}
	k := r.toks[j].key
	if _, ok := weekdayWords[k]; !ok {
		return false
	}
	if isFullWeekday(k) {
		return true
	}
	if !abbrev {
		return false
	}
	switch k {
	case "sun", "sat", "wed", "mon":
		return r.toks[j].cap
	}
	return true
}

// weekday: "on Monday [night]", "Monday". Abbreviations need "on".
func (r *resolver) weekday(i int, bare bool) hit {
	j := i
	on := r.key(j) == "on"
	if on {
		j++
	}
	if !r.weekdayAt(j, on || bare) {
		return hit{}
	}
	w := weekdayWords[r.key(j)]
	if k := r.key(i - 1); !on && (k == "every" || k == "each" || k == "on" || modifierBefore(k)) {
		return hit{}
	}
	n := j + 1 - i
	if partOfDay[r.key(j+1)] {
		n++
	}
	// A bare weekday is never the reference day itself (that would be
	// "today"): the one before it or the one after.
	prev, next := prevWeekday(r.day, w), nextWeekday(r.day, w, false)
	return r.pick([]Interval{{prev, addDays(prev, 1)}, {next, addDays(next, 1)}}, i, n, GranDay)
}

// modifierBefore reports whether a word before a bare weekday makes it a
// modifier rather than a date: "eight Friday classes", "the Friday market",
// "our Sunday walks".
func modifierBefore(k string) bool {
	switch k {
	case "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "some", "many", "few", "several":
		return true
	}
	if _, ok := numberWords[k]; ok {
		return true
	}
	return k != "" && k[0] >= '0' && k[0] <= '9'
}

// weekend: "[over|on|at|during] the weekend".
func (r *resolver) weekend(i int) hit {
	j := i
	switch r.key(j) {
	case "over", "on", "at", "during":
		j++
	}
	if r.key(j) != "the" || r.key(j+1) != "weekend" {
		return hit{}
	}
	// The weekend containing the reference day, or the last and the next.
	s := saturdayOnOrBefore(r.day)
	var cands [3]Interval
	for k := range cands {
		sat := addDays(s, 7*(k-1))
		cands[k] = Interval{sat, addDays(sat, 2)}
	}
	return r.pick(cands[:], i, j+2-i, GranWeek)
}

// ---- vague -----------------------------------------------------------------------

func (r *resolver) vague(i int) hit {
	var h hit
	switch r.key(i) {
	case "recently", "lately":
		h = span(r.d(-30), r.d(1), GranMonth, KindPast, 1)
	case "the":
		if r.key(i+1) == "other" && r.key(i+2) == "day" {
			h = span(r.d(-7), r.day, GranWeek, KindPast, 3)
		}
	}
	h.fuzzy = h.n > 0
	return h
}

// ---- tense -------------------------------------------------------------------------

// future reports whether the clause around toks[i:i+n] looks forward (see
// tenseOf).
func (r *resolver) future(i, n int) bool { return r.tenseOf(i, n) == tenseFuture }

// pastTense reports whether the clause before toks[i] uses "was" or "were",
// which makes a following "for N years" a closed stretch in the past.
func (r *resolver) pastTense(i int) bool {
	for k, steps := i-1, 0; k >= 0 && steps < 12; k, steps = k-1, steps+1 {
		if r.boundary(k) {
			break
		}
		if key := r.toks[k].key; key == "was" || key == "were" {
			return true
		}
	}
	return false
}

func (r *resolver) boundary(k int) bool {
	t := r.toks[k]
	return t.kind == tPunct && (t.key == "." || t.key == "!" || t.key == "?" || t.key == ";")
}
