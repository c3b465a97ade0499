// Package temporal gives higmem deterministic time handling: it parses the
// timestamps callers attach to turns (occurred_at), resolves time expressions
// in free text ("yesterday", "last Friday", "two weekends ago", "in May",
// "since 2016") against the moment a turn was said, detects temporal intent in
// questions, formats dates for answer models and orders turns chronologically.
//
// Everything here is pure computation over the standard library: no clock is
// read (the reference time is always an argument), no randomness is used, and
// the same input always yields the same output.
//
// # Conventions
//
//   - Intervals are half-open [Start, End). Resolved expressions are aligned to
//     midnight in the reference time's location, so their granularity is a day
//     or coarser.
//   - Weeks are ISO weeks, Monday to Sunday. A weekend is Saturday and Sunday.
//   - Seasons are meteorological and northern-hemisphere: spring is March–May,
//     summer June–August, fall (autumn) September–November and winter
//     December–February. The winter of year Y starts in December of Y.
//   - Slash dates are US order, month/day/year ("08/05/2023" is 5 August 2023).
//     Two-digit years are rejected.
//   - Expressions without a direction ("on Friday", "in May", "8 May", "the
//     weekend", "in the summer", "on the 15th") take their direction from the
//     tense of the clause that contains them. Present, progressive and future
//     phrasing looks forward ("it's on May 19", "I start on June 3", "we're
//     getting married in June", "will", "going to", "planning", "can't
//     wait", "in two weeks"); past phrasing looks back ("was", "went",
//     "started", "last", "ago", "back in", "since"); with no cue the nearer
//     occurrence wins, the earlier one on a tie. The reference's own day or
//     month counts in both directions ("in May" said in May is this May); a
//     bare weekday never means the reference day itself.
//
// The one date format shown to answer models is FormatDay's "8 May 2023".
package temporal
