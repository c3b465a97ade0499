package offline

// Speaker runs: the unit of offline retrieval's context score.
//
// People write in bursts: several short messages in a row before the other
// side answers. A speaker run is such a burst, the consecutive turns of one
// speaker within one session (a turn that changes speaker or opens a
// session starts a new run). In a conversation written one message per
// turn, every run is one turn, and the scorer is the turn-by-turn scorer.
//
// The context score (ScoreRange) reads runs, not raw turns, wherever it
// relies on turn taking:
//   - the neighbours of a turn are the runs before and after its own (one
//     and two runs away, within the session), each represented by its most
//     relevant turn: "the next turn answers this one" holds between the
//     sides of a conversation, not between two messages of one burst;
//   - a run asks a question when any of its turns does (a burst often ends,
//     or starts, with the question);
//   - a turn receives Tuning.RunShare of the best relevance among the other
//     turns of its own run: a burst is one thought split into messages, so
//     the message that matches the question carries the ones that complete
//     it.

// Runs are the speaker runs of a space's units. Indexed like the units:
// Run[i] is unit i's run; per run r: RunStart[r] is its first unit,
// RunAsks[r] whether one of its units asks a question, RunWords[r] the
// words of its units, RunLinks[r] its links (RunLinksOf) and RunSession[r]
// its session's number (runs in one session share it, and it grows by one
// at each session's first run). Add keeps them as units are appended.
type Runs struct {
	Run        []int32
	RunStart   []int32
	RunAsks    []bool
	RunWords   []int32
	RunLinks   []uint8
	RunSession []int32
}

// The links of a run r (RunLinksOf): the bits say which runs around it
// count in its turns' context scores, and whether the runs just before and
// after ask a question, so that ScoreRange reads one byte per run rather
// than the sessions, starts and questions of five runs.
const (
	linkPrev     = 1 << iota // run r-1 is in r's session (r's first turn continues the session)
	linkPrev2                // linkPrev, and run r-2 too (r-1's first turn continues it)
	linkNext                 // run r+1 is in r's session
	linkNext2                // linkNext, and run r+2 too
	linkPrevAsks             // linkPrev, and run r-1 asks a question
	linkNextAsks             // linkNext, and run r+1 asks a question
)

// RunLinksOf returns the links of run r among the runs starting at rs
// (ss: the turns' sameSession, asks: the runs' runAsks).
func RunLinksOf(ss []bool, rs []int32, asks []bool, r int) uint8 {
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

// Add records unit i, the last of sameSession (the units' SameSession),
// of so many words and asking a question or not: it joins the previous
// unit's run when in its session and said by the same speaker
// (sameSpeaker).
func (rs *Runs) Add(sameSession []bool, sameSpeaker bool, words int32, asks bool) {
	i := len(sameSession) - 1
	if !(i > 0 && sameSession[i] && sameSpeaker) {
		rs.RunStart = append(rs.RunStart, int32(i))
		rs.RunAsks = append(rs.RunAsks, false)
		rs.RunWords = append(rs.RunWords, 0)
		rs.RunSession = append(rs.RunSession, nextSession(rs.RunSession, sameSession[i]))
	}
	r := len(rs.RunStart) - 1
	rs.Run = append(rs.Run, int32(r))
	rs.RunWords[r] += words
	if asks {
		rs.RunAsks[r] = true
	}
	// Unit i changes only run r (new, or longer and perhaps asking), so
	// only the links of r and the two runs before it.
	for len(rs.RunLinks) <= r {
		rs.RunLinks = append(rs.RunLinks, 0)
	}
	for k := max(r-2, 0); k <= r; k++ {
		rs.RunLinks[k] = RunLinksOf(sameSession, rs.RunStart, rs.RunAsks, k)
	}
}

// UnitsPerRun returns the mean number of units per speaker run (1 when
// there are none).
func (rs *Runs) UnitsPerRun() float64 {
	if len(rs.RunStart) == 0 {
		return 1
	}
	return float64(len(rs.Run)) / float64(len(rs.RunStart))
}

// nextSession returns the session number of a run that follows the runs
// numbered in sessions, continuing the last one's session or not.
func nextSession(sessions []int32, continues bool) int32 {
	if len(sessions) == 0 {
		return 0
	}
	return sessions[len(sessions)-1] + int32(b2i(!continues))
}

// RunBests holds, per run, the best relevance of its turns, the first turn
// that has it, and the second best (the best of the others).
type RunBests struct {
	best, second []float64
	arg          []int32
	// session is the best relevance per session number (RunSession),
	// set by ScoreInto under Tuning.SessionShare, else nil.
	session []float64
}

// Grow sizes rb for nr runs.
func (rb *RunBests) Grow(nr int) {
	rb.best, rb.second, rb.arg = grow(rb.best, nr), grow(rb.second, nr), grow(rb.arg, nr)
}

// Fill sets rb from the relevance of every turn.
func (rb *RunBests) Fill(f *Features, rel []float64) {
	n := len(rel)
	rb.Grow(len(f.RunStart))
	for r := range rb.arg {
		rb.setRun(f, rel, r, n)
	}
}

// setRun sets the entries of run r from the relevance of its turns among
// the first n.
func (rb *RunBests) setRun(f *Features, rel []float64, r, n int) {
	best, second, arg := 0.0, 0.0, int32(-1)
	lo, hi := runUnits(f, r, n)
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

// Complete sets, on features that have no runs (built by hand in tests),
// one run per turn, which asks when the turn does; and on features without
// them, the runs' links and sessions and the turns' cues from the other
// slices.
func Complete(f *Features) {
	n := len(f.Lex)
	if f.Run == nil {
		f.Run, f.RunStart, f.RunAsks = make([]int32, n), make([]int32, n), make([]bool, n)
		for i := range n {
			f.Run[i], f.RunStart[i] = int32(i), int32(i)
			f.RunAsks[i] = f.Question[i]
		}
	}
	if f.RunSession == nil {
		f.RunSession = make([]int32, 0, len(f.RunStart))
		for _, t := range f.RunStart {
			f.RunSession = append(f.RunSession, nextSession(f.RunSession, f.SameSession[t]))
		}
	}
	if f.RunLinks == nil {
		f.RunLinks = make([]uint8, len(f.RunStart))
		for r := range f.RunLinks {
			f.RunLinks[r] = RunLinksOf(f.SameSession, f.RunStart, f.RunAsks, r)
		}
	}
	if f.Cues == nil {
		f.Cues = make([]uint8, n)
		for i := range n {
			f.Cues[i] = CuesOf(f.Question[i], f.Counted != nil && f.Counted[i], f.Dated != nil && f.Dated[i])
		}
	}
}

// runUnits returns the turns of run r among the first n: lo to hi-1.
func runUnits(f *Features, r, n int) (lo, hi int) {
	lo, hi = int(f.RunStart[r]), n
	if r+1 < len(f.RunStart) {
		hi = min(hi, int(f.RunStart[r+1]))
	}
	return lo, hi
}
