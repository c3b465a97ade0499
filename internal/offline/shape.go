package offline

import "math"

// Shape-adaptive scoring (issue 32): the scorer's weights were fitted on
// conversations of short alternating turns between two people (LoCoMo) or
// several (FriendsQA). A user–assistant chat has another form: one side
// (the user) writes short messages that state facts about themselves and
// what they want, the other (the assistant) answers each with a long reply
// that elaborates on it. There, 86% of the evidence is the user's (RealMem
// dev), yet the long replies win both halves of the relevance: BM25 finds
// the question's words in them, and the window vector of a user turn is
// mostly the reply before it. Rather than stand down, the scorer reads the
// conversation's shape (Shape, from per-speaker turn lengths) and moves
// its weights towards those fitted for that shape (Tuning.Adapt): a prior
// for the terse side's turns and, above all, for the one that opens a
// session (the user's request), a share of the session's best relevance,
// the turn's own cosine rather than its window's, a prior against long
// runs rather than for them, a long reply's cosine mixed with its best
// passage's (PassageDense), and a stopping rule of at most 8 units
// (LexLenPow, normalising BM25 for length, is there and fitted to 0). On
// conversations of the dev shapes it was fitted on, the shape's weight is
// 0 and the scorer is the one before, bit for bit.

// SpeakerStats accumulates, per speaker (indexed like the space's
// speakers), the number of units and the sum of ln(1+words): what Shape
// reads. Add keeps it as units are appended.
type SpeakerStats struct {
	N        []int32
	LogWords []float64
}

// Add records a unit of speaker sp (an index) with so many words.
func (s *SpeakerStats) Add(sp int32, words int32) {
	for int(sp) >= len(s.N) {
		s.N = append(s.N, 0)
		s.LogWords = append(s.LogWords, 0)
	}
	s.N[sp]++
	s.LogWords[sp] += math.Log1p(float64(max(words, 0)))
}

// Shape is the form of a conversation that the scorer adapts to.
type Shape struct {
	// TwoParty is the share of units said by the two speakers who say
	// most (1 with one or two speakers).
	TwoParty float64
	// Ratio is how much longer the verbose one of those two writes than
	// the terse one: the ratio of their geometric mean of 1+words per
	// unit (1 when there is one speaker).
	Ratio float64
	// Terse is the index of the terse speaker of the two, -1 when there
	// is none.
	Terse int32
}

// Shape returns the conversation's shape.
func (s *SpeakerStats) Shape() Shape {
	sh := Shape{TwoParty: 1, Ratio: 1, Terse: -1}
	a, b := int32(-1), int32(-1) // the two speakers with most units
	total := 0
	for i, n := range s.N {
		total += int(n)
		switch {
		case a < 0 || n > s.N[a]:
			a, b = int32(i), a
		case b < 0 || n > s.N[b]:
			b = int32(i)
		}
	}
	if b < 0 || s.N[b] == 0 || total == 0 {
		return sh
	}
	sh.TwoParty = float64(s.N[a]+s.N[b]) / float64(total)
	ga := s.LogWords[a] / float64(s.N[a])
	gb := s.LogWords[b] / float64(s.N[b])
	sh.Terse = a
	if gb < ga {
		sh.Terse = b
	}
	sh.Ratio = math.Exp(math.Abs(ga - gb))
	return sh
}

// The shape's bounds: a conversation is a user–assistant chat to the
// degree its verbose side writes shapeRatioLo to shapeRatioHi times as
// long as its terse side (geometric means), provided two speakers say at
// least shapeTwoParty of it. The dev conversations: LoCoMo 1.04–1.11,
// FriendsQA 1.2–2.5 but two speakers say only 26–48% of it, RealMem
// 4.3–5.7.
const (
	shapeRatioLo  = 2.5
	shapeRatioHi  = 3.5
	shapeTwoParty = 0.9
)

// Assist returns how far sh is a user–assistant chat, from 0 (the dev
// shapes the base weights were fitted on) to 1.
func (sh Shape) Assist() float64 {
	if sh.Terse < 0 || sh.TwoParty < shapeTwoParty {
		return 0
	}
	return min(max((sh.Ratio-shapeRatioLo)/(shapeRatioHi-shapeRatioLo), 0), 1)
}

// Assistant is the tuning of a user–assistant chat: the weights Adapt
// moves towards. Fitted on RealMem dev and the synthetic user–assistant
// stress, each tested on the other (internal/research/shapes).
type Assistant struct {
	// WindowWeight, LengthPow, DenseWeight, Next, EventShare, MinK,
	// MaxK and KeepRatio replace Tuning's.
	WindowWeight, LengthPow, DenseWeight, Next, EventShare, KeepRatio float64
	MinK, MaxK                                                        int
	// TerseBump multiplies the score of the terse side's units, OpenBump
	// (on top) that of the terse side's unit that opens a session.
	TerseBump, OpenBump float64
	// LexLenPow divides a unit's BM25 score by (its words / the mean
	// words per unit)^LexLenPow before the best is taken.
	LexLenPow float64
	// SessionShare is the share of the best relevance in a unit's session
	// that the unit receives (a session of a chat with an assistant is
	// one thread).
	SessionShare float64
	// PassageDense and PassageLex are the shares of a long unit's best
	// passage cosine and BM25 score (Features.PassageDense, PassageLex)
	// mixed into its own (1 − share of its own): a long reply matches by
	// the part of it that answers, not by its whole.
	PassageDense, PassageLex float64
}

// The bits of a unit's role (Features.Role).
const (
	RoleTerse = 1 << iota // said by the terse side (the user)
	RoleOpens             // opens its session
)

// Adapt returns the tuning for a conversation of shape sh: tu itself when
// sh.Assist() is 0, tu.Assist's weights when it is 1, in between a linear
// mix (the integers rounded).
func (tu Tuning) Adapt(sh Shape) Tuning {
	g := sh.Assist()
	if g == 0 {
		return tu
	}
	a := tu.Assist
	mix := func(x, y float64) float64 { return (1-g)*x + g*y }
	out := tu
	out.WindowWeight = mix(tu.WindowWeight, a.WindowWeight)
	out.LengthPow = mix(tu.LengthPow, a.LengthPow)
	out.DenseWeight = mix(tu.DenseWeight, a.DenseWeight)
	out.Next = mix(tu.Next, a.Next)
	out.NextQuestion = mix(tu.NextQuestion, a.Next)
	out.EventShare = mix(tu.EventShare, a.EventShare)
	out.KeepRatio = mix(tu.KeepRatio, a.KeepRatio)
	out.MinK = int(math.Round(mix(float64(tu.MinK), float64(a.MinK))))
	out.MaxK = int(math.Round(mix(float64(tu.MaxK), float64(a.MaxK))))
	out.TerseBump = mix(1, a.TerseBump)
	out.OpenBump = mix(1, a.OpenBump)
	out.LexLenPow = mix(0, a.LexLenPow)
	out.SessionShare = mix(0, a.SessionShare)
	out.PassageDense = mix(0, a.PassageDense)
	out.PassageLex = mix(0, a.PassageLex)
	out.adapted = true
	return out
}

// Adapted reports whether the tuning was adapted to a shape other than the
// dev shapes (then only the reference path scores: Input.Fast is ignored).
func (tu Tuning) Adapted() bool { return tu.adapted }

// RolesInto writes the role bits of n units into dst (grown as needed) and
// returns it: RoleTerse for the units of speaker terse (speaker[i] their
// speaker indexes), RoleOpens for the units that open their session
// (sameSession false).
func RolesInto(dst []uint8, speaker []int32, sameSession []bool, terse int32) []uint8 {
	n := len(speaker)
	dst = grow(dst, n)
	for i, sp := range speaker {
		var r uint8
		if sp == terse {
			r |= RoleTerse
		}
		if !sameSession[i] {
			r |= RoleOpens
		}
		dst[i] = r
	}
	return dst
}

// roleFactors returns the factor of each role byte under tu.
func (tu Tuning) roleFactors() [4]float64 {
	t, o := tu.TerseBump, tu.OpenBump
	if t == 0 {
		t = 1
	}
	if o == 0 {
		o = 1
	}
	return [4]float64{1, t, 1, t * o}
}

// lexLenFactorsInto writes, per unit, the factor its BM25 score is
// multiplied by under LexLenPow: (words / mean words)^-LexLenPow, at
// least one word; nil when LexLenPow is 0 or words is nil.
func (tu Tuning) lexLenFactors(words []int32) []float64 {
	if tu.LexLenPow == 0 || words == nil {
		return nil
	}
	mean := 0.0
	for _, w := range words {
		mean += float64(max(w, 1))
	}
	mean /= float64(max(len(words), 1))
	out := make([]float64, len(words))
	for i, w := range words {
		out[i] = math.Pow(float64(max(w, 1))/mean, -tu.LexLenPow)
	}
	return out
}
