package offline

// Features describes every retrieval unit of a space for one question. A
// unit is a row the scorer ranks: today every unit is a turn, indexed like
// the space's turns. Units are in conversation order, so that the units
// before and after one are its context, and consecutive units of one
// speaker within one session form a speaker run (Runs).
//
// The per-space slices (SameSession, Question, Event, Runs, Cues) belong to
// the caller and are read, never written; the per-question ones (Lex,
// Dense, Visible when filtered, Speaker, Dated, Counted) are the question's.
type Features struct {
	// Lex is the BM25 score (0 when the unit shares no term with the
	// question); Dense is the cosine similarity, nil without vectors.
	Lex, Dense []float64
	// Visible is false for units the retrieval must not see (as-of, filters).
	Visible []bool
	// SameSession[i] is true when unit i belongs to the session of unit
	// i-1 (SameSession[0] is false).
	SameSession []bool
	// Question marks units that ask something (their text has a "?").
	Question []bool
	// Event is the index of the unit's first event, -1 when none.
	Event []int32
	// Runs are the speaker runs; a nil Run means every unit is its own run
	// (see Complete). RunWords is nil where the length prior does not
	// apply.
	Runs
	// Cues are the units' question, counted and dated flags in one byte
	// (CuesOf; the latter two whether or not the question asks for them),
	// what ScoreRange reads with the run links.
	Cues []uint8
	// Speaker marks units said by someone the question names; Dated marks
	// units that mention a time when the question asks for a time; Counted
	// marks units with a number when the question asks how many. Each is
	// nil when the question has no such cue.
	Speaker, Dated, Counted []bool
	// Role holds each unit's role bits (RoleTerse, RoleOpens) in a
	// conversation whose tuning was adapted to its shape (Tuning.Adapt),
	// nil elsewhere; Words is each unit's number of words (read under
	// Tuning.LexLenPow, nil when not needed).
	Role  []uint8
	Words []int32
	// LexMax, when LexMaxSet, is the greatest of 0 and the Lex scores
	// (MaxAbove(Lex)), given rather than looked for by the fast scan (the
	// BM25 index works it out as it writes the scores).
	LexMax    float64
	LexMaxSet bool
	// Mean, when MeanSet, is the mean cosine over the visible units, given
	// rather than computed from Dense (the matrices' sums of rows, on large
	// spaces: see Fast).
	Mean    float64
	MeanSet bool
	// PassageLex and PassageDense are, for units cut into passages (long
	// turns), the best BM25 score and the best cosine of their passages
	// (0 for other units); nil when no unit has passages (PassageDense
	// also without a question vector). Lex and Dense are the unit's own.
	// Only a tuning adapted to a user–assistant shape weighs them, by
	// mixing (Tuning.PassageDense, PassageLex; taking the better of a
	// unit's score and its best passage's made the user–assistant dev
	// chats worse, see BENCHMARKS.md); the pruned path (Fast) does not
	// read them.
	PassageLex, PassageDense []float64
}
