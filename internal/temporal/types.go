package temporal

import (
	"errors"
	"time"
)

// ErrUnparsable is returned by ParseTime when a string is not a timestamp it
// understands. Callers should keep the raw string and flag the value as
// unknown; it is never meant to be fatal.
var ErrUnparsable = errors.New("temporal: unparsable time")

// Granularity is the precision of a parsed time or a resolved expression.
type Granularity uint8

// Granularities, from finest to coarsest.
const (
	GranUnknown Granularity = iota
	GranMillisecond
	GranSecond
	GranMinute
	GranHour
	GranDay
	GranWeek
	GranMonth
	GranSeason
	GranYear
)

var granNames = [...]string{"unknown", "millisecond", "second", "minute", "hour", "day", "week", "month", "season", "year"}

// String returns the lower-case name of g.
func (g Granularity) String() string {
	if int(g) < len(granNames) {
		return granNames[g]
	}
	return "unknown"
}

// Kind says how a resolved expression relates to its reference time.
type Kind uint8

// Kinds of resolved expressions.
const (
	// KindUnknown is the zero value; Resolve never returns it.
	KindUnknown Kind = iota
	// KindPast is a relative expression pointing before the reference
	// ("yesterday", "last week", "two years ago", "in May" without a year).
	KindPast
	// KindPresent is a relative expression containing the reference
	// ("today", "this week", "this summer" said in July).
	KindPresent
	// KindFuture is a relative expression pointing after the reference
	// ("tomorrow", "next month", "this Friday" said on a Tuesday).
	KindFuture
	// KindAbsolute is an expression that names its own year ("in 2022",
	// "May 2023", "8 May 2023"); it does not depend on the reference.
	KindAbsolute
	// KindDuration is a stretch of time reaching up to the reference, or
	// starting from it in a future context ("for three years", "since 2016",
	// "the past few weeks").
	KindDuration
)

var kindNames = [...]string{"unknown", "past", "present", "future", "absolute", "duration"}

// String returns the lower-case name of k.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Interval is a half-open time interval [Start, End).
type Interval struct {
	Start time.Time
	End   time.Time
}

// IsZero reports whether iv is the zero Interval.
func (iv Interval) IsZero() bool { return iv.Start.IsZero() && iv.End.IsZero() }

// Contains reports whether t lies in [Start, End).
func (iv Interval) Contains(t time.Time) bool {
	return !t.Before(iv.Start) && t.Before(iv.End)
}

// Overlaps reports whether iv and o share at least one instant.
func (iv Interval) Overlaps(o Interval) bool {
	return iv.Start.Before(o.End) && o.Start.Before(iv.End)
}

// String formats iv compactly with day precision, e.g. "1–7 May 2023",
// "May 2023" or "2022" (see Describe).
func (iv Interval) String() string { return formatRange(iv.Start, iv.End) }

// Ref is one time expression found in free text by Resolve.
type Ref struct {
	// Text is the matched span, verbatim from the input.
	Text string
	// Pos is the byte offset of Text in the input.
	Pos int
	// Start and End bound the half-open interval the expression denotes,
	// aligned to midnight in the reference time's location.
	Start, End time.Time
	// Granularity is the precision of the expression (day or coarser).
	Granularity Granularity
	// Kind relates the expression to the reference time.
	Kind Kind
	// Fuzzy marks vague expressions ("recently", "a few years ago",
	// "around 2016", "early May") whose interval is a best guess.
	Fuzzy bool
}

// Interval returns r's [Start, End) as an Interval.
func (r Ref) Interval() Interval { return Interval{Start: r.Start, End: r.End} }
