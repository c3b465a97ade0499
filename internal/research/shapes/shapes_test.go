package shapes

import (
	"math"
	"strings"
	"testing"
)

func TestChunk(t *testing.T) {
	if got := chunk(strings.Repeat("w ", ChunkMin)); got != nil {
		t.Errorf("a turn of %d words: %d chunks, want none", ChunkMin, len(got))
	}
	// 250 words: 80, 80, then 90 (the last 10 join the third).
	got := chunk(strings.TrimSpace(strings.Repeat("w ", 250)))
	var sizes []int
	for _, c := range got {
		sizes = append(sizes, len(strings.Fields(c)))
	}
	if len(sizes) != 3 || sizes[0] != 80 || sizes[1] != 80 || sizes[2] != 90 {
		t.Errorf("chunk sizes %v, want [80 80 90]", sizes)
	}
}

func TestWindowTexts(t *testing.T) {
	// The engine's window: turns before in the session, nearest first,
	// while they hold fewer than 30 words, at most 4.
	c := &Conv{Units: []Unit{
		{Speaker: "A", Text: "hi", Words: 1, Session: 1},
		{Speaker: "B", Text: strings.TrimSpace(strings.Repeat("x ", 40)), Words: 40, Session: 1},
		{Speaker: "A", Text: "ok", Words: 1, Session: 1},
		{Speaker: "B", Text: "new", Words: 1, Session: 2},
	}}
	w := windowTexts(c)
	if w[0] != "A: hi" || w[2] != "B: "+c.Units[1].Text+"\nA: ok" || w[3] != "B: new" {
		t.Errorf("windows %q", w)
	}
}

func TestScore(t *testing.T) {
	var s Score
	s.Add([]int{1, 2, 3, 4}, []int{2, 9})
	s.Add([]int{5}, []int{-1})
	m := s.Mean()
	if math.Abs(m.R-0.25) > 1e-12 || math.Abs(m.P-0.125) > 1e-12 || m.K != 2.5 {
		t.Errorf("mean %+v, want R 0.25 P 0.125 K 2.5", m)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("Hey Mel! Good to see you. How are you?")
	if len(got) != 3 || got[1] != "Good to see you." {
		t.Errorf("%q", got)
	}
}
