package higmem

import "github.com/higmem/higmem/internal/rank"

// Search of a space: BM25 over the turns or events fused with dense
// similarity (internal/rank), as used by retrieval and by construction
// (candidate events).

// searchTurnsIn ranks turns for a query: BM25 fused with dense similarity
// (when qv is non-nil) by rank.Hybrid. keep filters turn indexes (nil keeps
// all). It uses the query's scratch, whose lexical scores it leaves set
// (see query.turnLexScores). With qv, the caller loads the turn vectors
// first (ensureTurnVectors). Caller holds st.mu.
func (st *spaceState) searchTurnsIn(sc *scratch, query string, qv []float32, k int, keep func(int) bool) []rank.Hit {
	n := len(st.turns)
	if k <= 0 || n == 0 {
		return nil
	}
	lex, touched := sc.lexScores(st.turnLex, n, query)
	sc.turnLex = true
	if qv == nil || !st.turnVecsReady() {
		return rank.Hybrid(n, lex, touched, nil, k, keep)
	}
	return sc.search.Search(&st.turnVec, lex, touched, qv, k, keep)
}

// searchEvents ranks events for a query like searchTurnsIn. With qv, the
// caller loads the event vectors first (ensureEventVectors). Caller holds
// st.mu.
func (st *spaceState) searchEvents(query string, qv []float32, k int, keep func(int) bool) []rank.Hit {
	n := len(st.events)
	if k <= 0 || n == 0 {
		return nil
	}
	sc := st.getScratch()
	defer st.putScratch(sc)
	if keep == nil && qv != nil && st.eventVecsReady() {
		// The greatest BM25 score is the index's: the events scored
		// (nearly all of them for a common word) need no list, nor the
		// scores a pass to find it.
		lex := sc.lexScoresFew(st.eventLex, n, query)
		return sc.search.SearchTop(&st.eventVec, lex, sc.lexTop, qv, k)
	}
	lex, touched := sc.lexScores(st.eventLex, n, query)
	if qv == nil || !st.eventVecsReady() {
		return rank.Hybrid(n, lex, touched, nil, k, keep)
	}
	return sc.search.Search(&st.eventVec, lex, touched, qv, k, keep)
}
