package higmem

// Speaker runs: the unit of offline retrieval's context score.
//
// People write in bursts: several short messages in a row before the other
// side answers. A speaker run is such a burst, the consecutive turns of one
// speaker within one session (a turn that changes speaker or opens a
// session starts a new run). In a conversation written one message per
// turn, every run is one turn, and the scorer is the turn-by-turn scorer.
//
// The context score (scoreRange) reads runs, not raw turns, wherever it
// relies on turn taking:
//   - the neighbours of a turn are the runs before and after its own (one
//     and two runs away, within the session), each represented by its most
//     relevant turn: "the next turn answers this one" holds between the
//     sides of a conversation, not between two messages of one burst;
//   - a run asks a question when any of its turns does (a burst often ends,
//     or starts, with the question);
//   - a turn receives offRunShare of the best relevance among the other
//     turns of its own run: a burst is one thought split into messages, so
//     the message that matches the question carries the ones that complete
//     it.

// runInfo extends turnInfo with the speaker runs. Indexed like turns:
// run[i] is turn i's run; per run r: runStart[r] is its first turn and
// runAsks[r] whether one of its turns asks a question.
type runInfo struct {
	run      []int32
	runStart []int32
	runAsks  []bool
	// runWords is the number of words of each run's turns.
	runWords []int32
	// runLinks holds each run's links (runLinksOf), kept current as
	// turns are added.
	runLinks []uint8
	// runSession numbers the sessions: runs in one session share it, and
	// it grows by one at each session's first run.
	runSession []int32
}

// The links of a run r (runLinksOf): the bits say which runs around it
// count in its turns' context scores, and whether the runs just before and
// after ask a question, so that scoreRange reads one byte per run rather
// than the sessions, starts and questions of five runs.
const (
	linkPrev     = 1 << iota // run r-1 is in r's session (r's first turn continues the session)
	linkPrev2                // linkPrev, and run r-2 too (r-1's first turn continues it)
	linkNext                 // run r+1 is in r's session
	linkNext2                // linkNext, and run r+2 too
	linkPrevAsks             // linkPrev, and run r-1 asks a question
	linkNextAsks             // linkNext, and run r+1 asks a question
)

// runLinksOf returns the links of run r among the runs starting at rs
// (ss: the turns' sameSession, asks: the runs' runAsks).
func runLinksOf(ss []bool, rs []int32, asks []bool, r int) uint8 {
	nr := len(rs)
	var l uint8
	if r >= 1 && ss[rs[r]] {
		l |= linkPrev
		if asks[r-1] {
			l |= linkPrevAsks
		}
		if r >= 2 && ss[rs[r-1]] {
			l |= linkPrev2
		}
	}
	if r+1 < nr && ss[rs[r+1]] {
		l |= linkNext
		if asks[r+1] {
			l |= linkNextAsks
		}
		if r+2 < nr && ss[rs[r+2]] {
			l |= linkNext2
		}
	}
	return l
}

// addRun records turn i (already appended to ti's other slices): it joins
// the previous turn's run when said by the same speaker in the same
// session.
func (ti *turnInfo) addRun(i int) {
	same := i > 0 && ti.sameSession[i] && ti.speaker[i] == ti.speaker[i-1]
	if !same {
		ti.runStart = append(ti.runStart, int32(i))
		ti.runAsks = append(ti.runAsks, false)
		ti.runWords = append(ti.runWords, 0)
		ti.runSession = append(ti.runSession, nextSession(ti.runSession, ti.sameSession[i]))
	}
	r := len(ti.runStart) - 1
	ti.run = append(ti.run, int32(r))
	ti.runWords[r] += ti.words[i]
	if ti.question[i] {
		ti.runAsks[r] = true
	}
	// Turn i changes only run r (new, or longer and perhaps asking), so
	// only the links of r and the two runs before it.
	for len(ti.runLinks) <= r {
		ti.runLinks = append(ti.runLinks, 0)
	}
	for k := max(r-2, 0); k <= r; k++ {
		ti.runLinks[k] = runLinksOf(ti.sameSession, ti.runStart, ti.runAsks, k)
	}
}

// nextSession returns the session number of a run that follows the runs
// numbered in sessions, continuing the last one's session or not.
func nextSession(sessions []int32, continues bool) int32 {
	if len(sessions) == 0 {
		return 0
	}
	return sessions[len(sessions)-1] + int32(b2i(!continues))
}

// runBests holds, per run, the best relevance of its turns, the first turn
// that has it, and the second best (the best of the others).
type runBests struct {
	best, second []float64
	arg          []int32
}

// grow sizes rb for nr runs.
func (rb *runBests) grow(nr int) {
	rb.best, rb.second, rb.arg = grow(rb.best, nr), grow(rb.second, nr), grow(rb.arg, nr)
}

// fill sets rb from the relevance of every turn.
func (rb *runBests) fill(f *turnFeatures, rel []float64) {
	n := len(rel)
	rb.grow(len(f.runStart))
	for r := range rb.arg {
		rb.setRun(f, rel, r, n)
	}
}

// setRun sets the entries of run r from the relevance of its turns among
// the first n.
func (rb *runBests) setRun(f *turnFeatures, rel []float64, r, n int) {
	best, second, arg := 0.0, 0.0, int32(-1)
	lo, hi := runTurns(f, r, n)
	for i := lo; i < hi; i++ {
		best, second, arg = bestTwo(best, second, arg, rel[i], int32(i))
	}
	rb.best[r], rb.second[r], rb.arg[r] = best, second, arg
}

// bestTwo folds x, the relevance of turn i, into a run's best and second
// best relevance and the best's turn (arg < 0: no turn yet).
func bestTwo(best, second float64, arg int32, x float64, i int32) (float64, float64, int32) {
	switch {
	case arg < 0:
		return x, second, i
	case x > best:
		return x, best, i
	case x > second:
		return best, x, arg
	}
	return best, second, arg
}

// singleRuns sets, on features that have no runs (built by hand in tests),
// one run per turn, which asks when the turn does; and on features without
// them, the runs' links and sessions and the turns' cues from the other
// slices.
func singleRuns(f *turnFeatures) {
	n := len(f.lex)
	if f.run == nil {
		f.run, f.runStart, f.runAsks = make([]int32, n), make([]int32, n), make([]bool, n)
		for i := range n {
			f.run[i], f.runStart[i] = int32(i), int32(i)
			f.runAsks[i] = f.question[i]
		}
	}
	if f.runSession == nil {
		f.runSession = make([]int32, 0, len(f.runStart))
		for _, t := range f.runStart {
			f.runSession = append(f.runSession, nextSession(f.runSession, f.sameSession[t]))
		}
	}
	if f.runLinks == nil {
		f.runLinks = make([]uint8, len(f.runStart))
		for r := range f.runLinks {
			f.runLinks[r] = runLinksOf(f.sameSession, f.runStart, f.runAsks, r)
		}
	}
	if f.cues == nil {
		f.cues = make([]uint8, n)
		for i := range n {
			f.cues[i] = cuesOf(f.question[i], f.counted != nil && f.counted[i], f.dated != nil && f.dated[i])
		}
	}
}

// runTurns returns the turns of run r among the first n: lo to hi-1.
func runTurns(f *turnFeatures, r, n int) (lo, hi int) {
	lo, hi = int(f.runStart[r]), n
	if r+1 < len(f.runStart) {
		hi = min(hi, int(f.runStart[r+1]))
	}
	return lo, hi
}
