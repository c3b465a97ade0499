package offline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// withRuns sets the speaker runs of f from each unit's speaker, as
// Runs.Add does.
func withRuns(f *Features, speaker []int32) *Features {
	return withRunWords(f, speaker, make([]int32, len(speaker)))
}

// withRunWords is withRuns with the words of each unit (for the length
// prior).
func withRunWords(f *Features, speaker, words []int32) *Features {
	var rs Runs
	for i := range speaker {
		rs.Add(f.SameSession[:i+1], i > 0 && speaker[i] == speaker[i-1], words[i], f.Question[i])
	}
	f.Run, f.RunStart, f.RunAsks, f.RunWords = rs.Run, rs.RunStart, rs.RunAsks, rs.RunWords
	f.RunLinks = rs.RunLinks // as Add keeps them
	return f
}

func TestScoreSpeakerRuns(t *testing.T) {
	tu := testTuning
	tu.RunShare = 0.5
	tu.EventShare = 0
	// One session: Ava sends three messages, Ben answers with two, Ava
	// once more. Only Ava's second message matches the question.
	f := features(0, 1, 0, 0, 0, 0)
	f.Question[2] = true // Ava's burst ends with a question
	withRuns(f, []int32{0, 0, 0, 1, 1, 0})
	if got, want := f.Run, []int32{0, 0, 0, 1, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
	got := tu.score(f, f.Lex)
	want := []float64{
		0.5,             // Ava's first message: a burst mate of the match
		1,               // the match
		0.5,             // Ava's question, same burst
		tu.PrevQuestion, // Ben answers the burst that asked: its best message is 1
		tu.PrevQuestion, // and so does his second message (one run)
		tu.Far * 1,      // Ava again: two runs after the match
	}
	if !near(got, want) {
		t.Errorf("scores %v, want %v", got, want)
	}
	// The same turns one message per speaker turn: neighbours by turn,
	// no mates; the scorer is the turn-by-turn one.
	single := features(0, 1, 0, 0, 0, 0)
	single.Question[2] = true
	withRuns(single, []int32{0, 1, 0, 1, 0, 1})
	if got, want := tu.score(single, single.Lex), refScore(tu, single, single.Lex); !slices.Equal(got, want) {
		t.Errorf("single-message runs: %v, want the turn scorer's %v", got, want)
	}
	// A new session starts a new run, and neighbours stop there.
	split := features(0, 1, 0)
	split.SameSession[2] = false
	withRuns(split, []int32{0, 0, 0})
	if got := tu.score(split, split.Lex); got[2] != 0 || got[0] != 0.5 {
		t.Errorf("across sessions: %v, want no share for the next session's turn", got)
	}
}

// refRunScore is the context score over speaker runs computed naively: the
// runs around each turn found by walking turns.
func refRunScore(tu Tuning, f *Features, speaker, words []int32, rel []float64) []float64 {
	n := len(rel)
	newRun := func(i int) bool { return i == 0 || !f.SameSession[i] || speaker[i] != speaker[i-1] }
	runOf := func(i int) (lo, hi int) {
		lo, hi = i, i+1
		for !newRun(lo) {
			lo--
		}
		for hi < n && !newRun(hi) {
			hi++
		}
		return lo, hi
	}
	best := func(lo, hi, except int) (b float64, asks bool) {
		for j := lo; j < hi; j++ {
			if j != except {
				b = max(b, rel[j])
			}
			asks = asks || f.Question[j]
		}
		return b, asks
	}
	var evBest map[int32]float64
	if tu.EventShare != 0 && f.Event != nil {
		evBest = map[int32]float64{}
		for i, e := range f.Event {
			if e >= 0 {
				evBest[e] = max(evBest[e], rel[i])
			}
		}
	}
	out := make([]float64, n)
	for i := range n {
		if !f.Visible[i] {
			continue
		}
		lo, hi := runOf(i)
		mate, _ := best(lo, hi, i)
		var p1, p2, n1, n2 float64
		var pq, nq bool
		if lo > 0 && f.SameSession[lo] {
			l1, h1 := runOf(lo - 1)
			p1, pq = best(l1, h1, -1)
			if l1 > 0 && f.SameSession[l1] {
				l2, h2 := runOf(l1 - 1)
				p2, _ = best(l2, h2, -1)
			}
		}
		if hi < n && f.SameSession[hi] {
			l1, h1 := runOf(hi)
			n1, nq = best(l1, h1, -1)
			if h1 < n && f.SameSession[h1] {
				l2, h2 := runOf(h1)
				n2, _ = best(l2, h2, -1)
			}
		}
		prev, next := tu.Prev, tu.Next
		if pq {
			prev = tu.PrevQuestion
		}
		if nq {
			next = tu.NextQuestion
		}
		s := rel[i] + prev*p1 + next*n1 + tu.Far*(p2+n2)
		if mate != 0 {
			s += tu.RunShare * mate
		}
		if evBest != nil && f.Event[i] >= 0 {
			s += tu.EventShare * evBest[f.Event[i]]
		}
		if f.Speaker != nil && f.Speaker[i] {
			s *= tu.SpeakerBump
		}
		if f.Dated != nil && f.Dated[i] {
			s *= tu.TimeBump
		}
		if f.Counted != nil && f.Counted[i] {
			s *= tu.CountBump
		}
		if f.Question[i] && tu.QuestionBump != 0 {
			s *= tu.QuestionBump
		}
		if tu.LengthPow != 0 {
			w := 0
			for j := lo; j < hi; j++ {
				w += int(words[j])
			}
			s *= math.Pow(1+float64(w), tu.LengthPow)
		}
		out[i] = s
	}
	return out
}

func TestRunScoreMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tu := DefaultTuning()
	for trial := range 200 {
		n := 1 + r.IntN(300)
		f := randomFeatures(r, n, 1+r.IntN(20))
		speaker := make([]int32, n)
		for i := range speaker {
			speaker[i] = int32(r.IntN(3))
			if i > 0 && r.IntN(2) == 0 {
				speaker[i] = speaker[i-1] // bursts
			}
		}
		words := make([]int32, n)
		for i := range words {
			words[i] = int32(r.IntN(40))
		}
		if trial%10 == 0 {
			words[r.IntN(n)] = lengthTableSize + 7 // past the table
		}
		withRunWords(f, speaker, words)
		rel := tu.relevance(f)
		if got, want := tu.score(f, rel), refRunScore(tu, f, speaker, words, rel); !near(got, want) {
			t.Fatalf("trial %d: scores differ\ngot  %v\nwant %v", trial, got, want)
		}
	}
}
