package offline

import "math"

// The offline scorer, in its reference form: every turn gets a relevance
// (Relevance) and a context score (ScoreRange), and the best turns are
// kept down to where scores fall off (Cut). fast.go computes the
// same selection on large spaces while reading few exact cosines; this file
// is what it is proven equal to.

// Scale is what one question's relevance is normalised by: the
// best BM25 score and the mean and best cosine over the visible turns. A
// question without a dense part (no vectors, or no cosine above the mean)
// has mean +Inf.
type Scale struct {
	MaxLex, Mean, MaxD float64
}

// NoDense is the cosine given to Relevance for a turn without one.
var NoDense = math.Inf(-1)

// Relevance is the offline relevance formula, the one place it is
// written: a visible turn's BM25 score lex divided by the best, plus
// DenseWeight times its cosine d centred on the mean and scaled so that the
// best turn gets 1 (cosines at or below the mean add nothing). It grows with
// lex and with d, so that bounds of them give bounds of it.
//
// It selects rather than branches on lex and d (a scan over every turn
// would mispredict them): a part that does not apply is 0, and adding +0
// leaves a sum as it is.
func (tu Tuning) Relevance(lex, d float64, s Scale) float64 {
	r := 0.0
	if s.MaxLex > 0 {
		r = lex/s.MaxLex + 0 // +0 for lex 0, whatever its sign
	}
	dense := [2]float64{0, tu.DenseWeight * (d - s.Mean) / (s.MaxD - s.Mean)}
	return r + dense[b2i(d > s.Mean)]
}

// ScaleOf returns the relevance scale of f. Cosines of unrelated texts are
// far from 0 and their spread varies by question, so the dense part is
// centred on the mean over visible turns (or f.Mean when f.MeanSet) and
// scaled by the distance from it to the best.
func ScaleOf(f *Features) Scale {
	s := Scale{Mean: math.Inf(1)}
	for i, v := range f.Lex {
		if f.Visible[i] {
			s.MaxLex = max(s.MaxLex, v)
		}
	}
	if f.Dense == nil {
		return s
	}
	mean, maxD, cnt := 0.0, math.Inf(-1), 0
	for i, d := range f.Dense {
		if f.Visible[i] {
			mean += d
			maxD = max(maxD, d)
			cnt++
		}
	}
	if cnt == 0 {
		return s
	}
	mean /= float64(cnt)
	if f.MeanSet {
		mean = f.Mean
	}
	if maxD > mean {
		s.Mean, s.MaxD = mean, maxD
	}
	return s
}

// RelevanceInto writes each turn's own relevance (Relevance) into rel, of
// length len(f.Lex), and returns it. Invisible turns get 0.
func (tu Tuning) RelevanceInto(f *Features, rel []float64) []float64 {
	f = tu.adjusted(f)
	s := ScaleOf(f)
	for i := range rel {
		rel[i] = 0
		if !f.Visible[i] {
			continue
		}
		d := NoDense
		if f.Dense != nil {
			d = f.Dense[i]
		}
		rel[i] = tu.Relevance(f.Lex[i], d, s)
	}
	return rel
}

// adjusted returns f with the lexical scores normalised for length
// (LexLenPow, when f.Words is set) and long units' passage scores mixed
// into their own (PassageDense, PassageLex, where f has them): a copy when
// that applies, else f.
func (tu Tuning) adjusted(f *Features) *Features {
	lf := tu.lexLenFactors(f.Words)
	pd := tu.PassageDense != 0 && f.PassageDense != nil && f.Dense != nil
	pl := tu.PassageLex != 0 && f.PassageLex != nil
	if lf == nil && !pd && !pl {
		return f
	}
	g := *f
	if lf != nil || pl {
		g.Lex, g.LexMaxSet = make([]float64, len(f.Lex)), false
		for i, v := range f.Lex {
			if pl && f.PassageLex[i] != 0 {
				// A unit whose passages match no word matches none
				// itself: 0 marks the units without passages.
				v = (1-tu.PassageLex)*v + tu.PassageLex*f.PassageLex[i]
			}
			if lf != nil {
				v *= lf[i]
			}
			g.Lex[i] = v
		}
	}
	if pd {
		g.Dense = make([]float64, len(f.Dense))
		for i, v := range f.Dense {
			if p := f.PassageDense[i]; p != 0 {
				v = (1-tu.PassageDense)*v + tu.PassageDense*p
			}
			g.Dense[i] = v
		}
	}
	return &g
}

// ScoreInto writes each turn's context score (see ScoreRange) into out, of
// length len(rel), and returns it; best is scratch space for the best
// relevance per event, with room for every event index in f.Event (nil when
// EventShare is 0 or f.Event is nil), and rb for the best relevance per
// speaker run.
func (tu Tuning) ScoreInto(f *Features, rel, out, best []float64, rb *RunBests) []float64 {
	Complete(f)
	eventBest(f, rel, best)
	rb.Fill(f, rel)
	rb.session = nil
	if tu.SessionShare != 0 {
		rb.session = sessionBest(f, rel)
	}
	tu.ScoreRange(f, rel, out, best, rb, 0, len(rel))
	return out
}

// sessionBest returns the best relevance in each session (indexed by the
// runs' session numbers).
func sessionBest(f *Features, rel []float64) []float64 {
	ns := 0
	if k := len(f.RunSession); k > 0 {
		ns = int(f.RunSession[k-1]) + 1
	}
	out := make([]float64, ns)
	for i, x := range rel {
		s := f.RunSession[f.Run[i]]
		out[s] = max(out[s], x)
	}
	return out
}

// eventBest sets best[e] to the best relevance among the turns whose first
// event is e (0 when none); nil best is left alone.
func eventBest(f *Features, rel, best []float64) {
	if best == nil {
		return
	}
	clear(best)
	for i, e := range f.Event {
		if e >= 0 {
			best[e] = max(best[e], rel[i])
		}
	}
}

// ScoreRange is the offline context score formula, the one place it is
// written. It sets out[i] for the turns lo to hi-1: a visible turn's
// relevance plus shares of the relevance of the speaker runs one and two
// before and after its own within the session (each run counts with its
// best turn, rb.best; the share of the run just before or after is larger
// when that run asks a question), of the best relevance among the other
// turns of its own run (rb.second when the turn is its run's best, else
// rb.best) and of the best relevance in its event (best[e], when best is
// not nil), times the speaker, time and number cues; invisible turns score
// 0. Where every run is one turn, the neighbours are the turns around it
// and the run share is 0. It reads rel only at lo to hi-1, rb only at the
// runs of those turns and the two runs either side, and best only at their
// events; where every run is one turn, rel at those turns and the two
// either side and rb not at all (it may be nil; scoreRangeSingle). It returns the index of the best score written (lo when none is
// positive). The score grows with every relevance it adds up, so bounds of
// them give bounds of it.
func (tu Tuning) ScoreRange(f *Features, rel, out, best []float64, rb *RunBests, lo, hi int) (arg int) {
	n := len(rel)
	if len(f.RunStart) == n {
		var sbest []float64
		if rb != nil && tu.SessionShare != 0 {
			sbest = rb.session
		}
		return tu.scoreRangeSingle(f, rel, out, best, sbest, lo, hi)
	}
	// The turns' slices end at hi, which spares the loop their bounds
	// checks.
	rel, out = rel[:hi:n], out[:hi]
	vis := f.Visible[:hi:n]
	run, links, cues := f.Run[:hi:n], f.RunLinks, f.Cues[:hi:n]
	rbest, rsecond, rarg := rb.best, rb.second, rb.arg
	sbest := rb.session
	if tu.SessionShare == 0 {
		sbest = nil // a stale scratch's, when any
	}
	// The flags of a turn select among two factors each, rather than
	// branch on it (they vary from turn to turn and would be mispredicted):
	// a missing factor is 1, and so is a share of 0, which leaves every sum
	// and product as the formula writes it. Loop-invariant tests stay
	// branches.
	sf := tu.scoreFactors(f)
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf, lf := sf.prevOf, sf.nextOf, sf.speakerOf, sf.datedOf, sf.countedOf, sf.questionOf, sf.lf
	// The cues come from one byte per turn (cues): question always,
	// dated and counted when the question asks for them.
	spk, dated, counted, runWords := f.Speaker, f.Dated != nil, f.Counted != nil, f.RunWords
	if spk != nil {
		spk = spk[:hi:n]
	}
	role, roleOf := f.Role, tu.roleFactors()
	if role != nil {
		role = role[:hi:n]
	}
	var event []int32
	if best != nil {
		event = f.Event[:hi:n]
	}
	arg, top := lo, 0.0
	for i := lo; i < hi; i++ {
		if !vis[i] {
			out[i] = 0
			continue
		}
		// Neighbours are runs, and count only within the session (a run
		// continues the session when its first turn does): the run's
		// links say which (RunLinksOf).
		r := int(run[i])
		l := links[r]
		var p1, p2, n1, n2 float64
		if l&linkPrev != 0 {
			p1 = rbest[r-1]
			if l&linkPrev2 != 0 {
				p2 = rbest[r-2]
			}
		}
		if l&linkNext != 0 {
			n1 = rbest[r+1]
			if l&linkNext2 != 0 {
				n2 = rbest[r+2]
			}
		}
		pq, nq := l/linkPrevAsks&1, l/linkNextAsks&1
		mates := [2]float64{rbest[r], rsecond[r]}
		mate := mates[b2i(int(rarg[r]) == i)]
		x := rel[i]
		var b float64
		if event != nil {
			if e := event[i]; e >= 0 {
				b = best[e]
			}
		}
		s := x + prevOf[pq]*p1 + nextOf[nq]*n1 + tu.Far*(p2+n2)
		s += tu.RunShare * mate
		s += tu.EventShare * b
		if sbest != nil {
			s += tu.SessionShare * sbest[f.RunSession[r]]
		}
		if spk != nil {
			s *= speakerOf[b2i(spk[i])]
		}
		c := cues[i]
		if dated {
			s *= datedOf[c/cueDated&1]
		}
		if counted {
			s *= countedOf[c/cueCounted&1]
		}
		s *= questionOf[c&cueQuestion]
		if role != nil {
			s *= roleOf[role[i]&3]
		}
		if lf != nil {
			s *= lf.of(runWords[r])
		}
		// Every term 0 scores +0, whatever its signs.
		s += 0
		out[i] = s
		if s > top {
			arg, top = i, s
		}
	}
	return arg
}

// scoreFactors are the factors ScoreRange selects among per turn, by its
// flags (index 1 when the flag is set): the shares of the runs just before
// and after (larger when that run asks), the speaker, time, number and
// question cues, and the length prior (nil without one).
type scoreFactors struct {
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf [2]float64
	lf                                                        *lengthFactors
}

// scoreFactors returns tu's factors for features f.
func (tu Tuning) scoreFactors(f *Features) scoreFactors {
	sf := scoreFactors{
		prevOf: [2]float64{tu.Prev, tu.PrevQuestion}, nextOf: [2]float64{tu.Next, tu.NextQuestion},
		speakerOf: [2]float64{1, tu.SpeakerBump}, datedOf: [2]float64{1, tu.TimeBump},
		countedOf: [2]float64{1, tu.CountBump}, questionOf: [2]float64{1, tu.QuestionBump},
	}
	if tu.QuestionBump == 0 {
		sf.questionOf[1] = 1
	}
	if tu.LengthPow != 0 && f.RunWords != nil {
		sf.lf = lengthFactorsOf(tu.LengthPow)
	}
	return sf
}

// scoreRangeSingle is ScoreRange where every speaker run is one turn (as
// many runs as turns): run r is turn r, a run's best relevance is its
// turn's, and the other turns of its run add nothing. It reads the
// neighbours' relevance from rel rather than the runs' bests (equal there,
// see RunBests.setRun), which spares the scan three of its slices; the
// sums and products are ScoreRange's, in its order, so the scores are
// bit for bit the same (TestOfflineFastMatchesFull, TestScoreRangeSingle).
func (tu Tuning) scoreRangeSingle(f *Features, rel, out, best, sbest []float64, lo, hi int) (arg int) {
	n := len(rel)
	rel, out = rel[:n:n], out[:hi]
	vis := f.Visible[:hi:n]
	links, cues := f.RunLinks[:hi:n], f.Cues[:hi:n]
	sf := tu.scoreFactors(f)
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf, lf := sf.prevOf, sf.nextOf, sf.speakerOf, sf.datedOf, sf.countedOf, sf.questionOf, sf.lf
	spk, dated, counted, runWords := f.Speaker, f.Dated != nil, f.Counted != nil, f.RunWords
	if spk != nil {
		spk = spk[:hi:n]
	}
	role, roleOf := f.Role, tu.roleFactors()
	if role != nil {
		role = role[:hi:n]
	}
	var event []int32
	if best != nil {
		event = f.Event[:hi:n]
	}
	arg, top := lo, 0.0
	for i := lo; i < hi; i++ {
		if !vis[i] {
			out[i] = 0
			continue
		}
		l := links[i]
		var p1, p2, n1, n2 float64
		if l&linkPrev != 0 {
			p1 = rel[i-1]
			if l&linkPrev2 != 0 {
				p2 = rel[i-2]
			}
		}
		if l&linkNext != 0 {
			n1 = rel[i+1]
			if l&linkNext2 != 0 {
				n2 = rel[i+2]
			}
		}
		pq, nq := l/linkPrevAsks&1, l/linkNextAsks&1
		x := rel[i]
		var b float64
		if event != nil {
			if e := event[i]; e >= 0 {
				b = best[e]
			}
		}
		s := x + prevOf[pq]*p1 + nextOf[nq]*n1 + tu.Far*(p2+n2)
		s += tu.RunShare * 0 // the run's other turns: none
		s += tu.EventShare * b
		if sbest != nil {
			s += tu.SessionShare * sbest[f.RunSession[i]]
		}
		if spk != nil {
			s *= speakerOf[b2i(spk[i])]
		}
		c := cues[i]
		if dated {
			s *= datedOf[c/cueDated&1]
		}
		if counted {
			s *= countedOf[c/cueCounted&1]
		}
		s *= questionOf[c&cueQuestion]
		if role != nil {
			s *= roleOf[role[i]&3]
		}
		if lf != nil {
			s *= lf.of(runWords[i])
		}
		s += 0
		out[i] = s
		if s > top {
			arg, top = i, s
		}
	}
	return arg
}

// The bits of a turn's cues (Features.Cues).
const (
	cueQuestion = 1 << iota // the turn asks something
	cueCounted              // it mentions a number (hasNumber)
	cueDated                // its annotation has time expressions
)

// CuesOf returns the cues of a turn that asks a question or not, mentions
// a number or not and is dated or not.
func CuesOf(question, counted, dated bool) uint8 {
	return uint8(b2i(question)*cueQuestion | b2i(counted)*cueCounted | b2i(dated)*cueDated)
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// Cut returns how many of the ranked turns to keep: at least MinK (when
// there are that many), at most MaxK, and beyond MinK only those scoring at
// least KeepRatio of the best.
func (tu Tuning) Cut(ranked []int, scores []float64) int {
	n := 0
	for n < len(ranked) && n < tu.MaxK {
		if n >= tu.MinK && scores[ranked[n]] < tu.KeepRatio*scores[ranked[0]] {
			break
		}
		n++
	}
	return n
}
