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
//   - Expressions without a direction ("on Friday", "in May", "8 May") are
//     taken as the most recent such time not after the reference, unless the
//     sentence carries a future cue ("will", "going to", "planning", "gonna",
//     "'ll", "can't wait", "let's", "works", "sounds" ...), in which case the
//     next such time is used.
//
// The one date format shown to answer models is FormatDay's "8 May 2023".
package temporal
