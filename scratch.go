package higmem

import (
	"sync"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/rank"
)

// scratch is per-question working memory sized to the space, reused through
// spaceState.scratch and qscratch so that a question allocates nothing in
// proportion to the space. lex is all zero up to its capacity but for the
// touched entries (or, when unlisted, any entry), all below its length: a
// question's scratch keeps its scores until its next use
// (putQueryScratch); every use clears them first (lexScores), and clears
// them before lex is resized.
type scratch struct {
	lex     []float64
	touched []int
	// unlisted is set when lex may hold scores that touched does not list
	// (lexScoresFew): clearLex clears it whole.
	unlisted bool
	// turnLex is set when lex holds the turn BM25 scores of the query.
	turnLex bool
	// lexTop is the greatest of the scores lex holds (0 when none), as
	// the BM25 index worked it out while it scored them (lexScores).
	lexTop float64
	// search runs the hybrid searches (turn and event search).
	search rank.Searcher
	// The offline features filled per question (featuresIn): the dense
	// feature (float32 scratch and its float64 copy), the visibility of a
	// filtered question and the turns said by a speaker it names.
	dense            []float32
	dense64          []float64
	visible, speaker []bool
	// off is the offline scorer's working memory.
	off offline.Scratch
}

// getScratch returns a scratch; give it back with putScratch.
func (st *spaceState) getScratch() *scratch { return fromPool(st.scratch) }

// fromPool returns a scratch of pool (nil: a new one).
func fromPool(pool *sync.Pool) *scratch {
	if pool != nil {
		if sc, ok := pool.Get().(*scratch); ok {
			return sc
		}
	}
	return &scratch{}
}

// putScratch clears the lexical scores of sc and returns it to the pool.
func (st *spaceState) putScratch(sc *scratch) {
	sc.clearLex()
	if st.scratch != nil {
		st.scratch.Put(sc)
	}
}

// getQueryScratch returns a scratch for a question (query.sc), whose
// lexical scores may be left to clear; give it back with
// putQueryScratch.
func (st *spaceState) getQueryScratch() *scratch { return fromPool(st.qscratch) }

// putQueryScratch returns a question's scratch to the pool of question
// scratches without clearing its lexical scores: they no longer count as
// the turns' (turnLex), and the next question's lexScores clears them
// before it scores (clearLex, from the touched entries kept). In a large
// space that is in the fast scan's features part, beside its far longer
// dense part on the other core, not at the end of the question (clearing
// the 100k turn scores of a common word took some 0.07 ms there). Only
// questions take these scratches: the event search takes clean ones from
// the other pool, so it never pays for a turn scratch's clear.
func (st *spaceState) putQueryScratch(sc *scratch) {
	sc.turnLex, sc.lexTop = false, 0
	if st.qscratch != nil {
		st.qscratch.Put(sc)
	}
}

func (sc *scratch) clearLex() {
	if sc.unlisted || len(sc.touched) > len(sc.lex)/16 {
		// Many entries (a common word): clearing every one takes
		// fewer instructions than one at a time at random. Those past
		// the length are zero already: a scratch that scored the
		// turns and then the events (a quarter as many) clears the
		// events' length, not the turns'.
		clear(sc.lex)
	} else {
		for _, i := range sc.touched {
			sc.lex[i] = 0
		}
	}
	sc.touched, sc.unlisted = sc.touched[:0], false
	sc.turnLex, sc.lexTop = false, 0
}

// grow returns s with length n, reallocating when its capacity is short;
// the contents are unspecified.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// lexScores scores the n documents of ix (refs 0..n-1) for query into
// sc.lex and returns the scores and the refs that matched; sc.lexTop is
// then the greatest score. The previous scores in sc are cleared first.
func (sc *scratch) lexScores(ix *bm25.Index, n int, query string) ([]float64, []int) {
	sc.clearLex()
	if cap(sc.lex) < n {
		sc.lex = make([]float64, n, n+n/4)
	}
	sc.lex = sc.lex[:n]
	sc.touched, sc.lexTop = ix.ScoreRefsTop(query, sc.lex, sc.touched[:0])
	return sc.lex, sc.touched
}

// lexScoresFew is lexScores for a caller that needs no list of the refs
// that matched: they are listed (for clearLex) only while they are few
// enough to clear one by one, so that a common word's 50,000 turns are
// not written out to be cleared all at once anyway.
func (sc *scratch) lexScoresFew(ix *bm25.Index, n int, query string) []float64 {
	sc.clearLex()
	if cap(sc.lex) < n {
		sc.lex = make([]float64, n, n+n/4)
	}
	sc.lex = sc.lex[:n]
	var listed bool
	sc.touched, sc.lexTop, listed = ix.ScoreRefsFew(query, sc.lex, sc.touched[:0], n/16)
	sc.unlisted = !listed
	return sc.lex
}

// turnLexTop returns the greatest of the query's turn BM25 scores (0 when
// no turn scores), worked out with them. Caller holds st.mu.
func (q *query) turnLexTop() float64 {
	q.turnLexScores()
	return q.sc.lexTop
}

// turnLexScores returns the BM25 scores of every turn for the query's
// search text, computing them once per query. Caller holds st.mu.
func (q *query) turnLexScores() []float64 {
	sc := q.sc
	if !sc.turnLex || len(sc.lex) != len(q.st.turns) {
		sc.lexScoresFew(q.st.turnLex, len(q.st.turns), q.search)
		sc.turnLex = true
	}
	return sc.lex
}
