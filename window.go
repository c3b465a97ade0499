package higmem

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Window vectors: a second embedding of every turn, made of the turn with
// the turns just before it in its session (its window).
//
// A message rarely says everything it means: "Yes, last week with my
// sister" answers something said before it, and a burst of short messages
// spreads one thought over several. Embedded alone, such a turn matches
// nothing; embedded after what it answers or continues, it carries its
// topic. The window is causal, the turn and the turns before it: it is
// known when the turn is added (adding a later turn never changes it), and
// it never holds a turn recorded after its own, so an as-of question does
// not read the future through it. A short message takes more turns before
// it than a long one: the window takes the turns before the turn, nearest
// first, until they hold windowWords words or windowTurns turns
// (BENCHMARKS.md, issue 15, round 2, compares this with one turn either
// side, one or two turns before, and means of turn vectors).
//
// Offline retrieval's dense feature is the cosine with the window vector
// (offWindowWeight); where a window holds a turn the question must not see
// (a filter), the turn's own cosine stands in. Deleting a turn embeds the
// windows that held it again, so that its text does not live on in them.

const (
	// windowWords: a window takes turns before its turn while they hold
	// fewer words than this (a few sentences of context).
	windowWords = 30
	// windowTurns: at most this many turns before its turn.
	windowTurns = 4
	// windowVersion names the window's definition in the embedder id of
	// the stored window vectors (windowEmbedder): vectors made under
	// another definition are not found and are made again.
	windowVersion = "window-w30t4"
)

// windowEmbedder is the embedder id stored with window vectors made by emb.
func windowEmbedder(emb embed.Embedder) string { return emb.ID() + "+" + windowVersion }

// windowLine is one turn's line in a window's text.
func windowLine(t *store.Turn) string { return t.Speaker + ": " + content(*t) }

// windowStart returns the index of the first turn of turn i's window
// among turns ordered by Seq: the turns before i in its session, nearest
// first, until they hold windowWords words or windowTurns turns. same(j)
// reports whether turn j is in the session of turn j-1, words(j) the
// words of turn j.
func windowStart(i int, same func(j int) bool, words func(j int) int) int {
	start, w := i, 0
	for start > 0 && i-start < windowTurns && w < windowWords && same(start) {
		start--
		w += words(start)
	}
	return start
}

// wordCount is the number of words of a turn's content, as a window
// counts them.
func wordCount(t *store.Turn) int { return countFields(content(*t)) }

// countFields returns len(strings.Fields(s)) without building the fields:
// the number of runs of characters that are not white space
// (unicode.IsSpace).
func countFields(s string) int {
	n := 0
	inField := false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !inField {
			n++
		}
		inField = !space
	}
	return n
}

// asciiSpace is unicode.IsSpace for ASCII, as strings.Fields tests it.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// addWindow records the window start of turn i, whose other facts are
// already appended.
func (ti *turnInfo) addWindow(i int) {
	ti.winStart = append(ti.winStart, int32(windowStart(i,
		func(j int) bool { return ti.sameSession[j] },
		func(j int) int { return int(ti.words[j]) })))
}

// windowText returns the text a window vector embeds: one line per turn of
// the window, oldest first.
func windowText(turns func(j int) *store.Turn, start, i int) string {
	var b strings.Builder
	for j := start; j <= i; j++ {
		if j > start {
			b.WriteByte('\n')
		}
		b.WriteString(windowLine(turns(j)))
	}
	return b.String()
}

// windowTexts returns the window text of each of the turns added after the
// state's turns (the state's last turns are their first context). Caller
// holds st.mu.
func (st *spaceState) windowTexts(added []store.Turn) []string {
	n := len(st.turns)
	at := func(j int) *store.Turn {
		if j < n {
			return &st.turns[j]
		}
		return &added[j-n]
	}
	same := func(j int) bool { return at(j).SessionID == at(j-1).SessionID }
	words := func(j int) int {
		if j < n {
			return int(st.info.words[j])
		}
		return wordCount(at(j))
	}
	out := make([]string, len(added))
	for k := range added {
		i := n + k
		out[k] = windowText(at, windowStart(i, same, words), i)
	}
	return out
}

// windowsWithout returns the turns whose window holds turn g (by id) and
// the text of each one's window once g is gone: deleting g embeds them
// again, so that g's text does not live on in them. Caller holds st.mu.
func (st *spaceState) windowsWithout(g int) (ids, texts []string) {
	n := len(st.turns)
	// The turns without g: index j of the new order is j or j+1 of turns.
	old := func(j int) int {
		if j < g {
			return j
		}
		return j + 1
	}
	at := func(j int) *store.Turn { return &st.turns[old(j)] }
	same := func(j int) bool { return at(j).SessionID == at(j-1).SessionID }
	words := func(j int) int { return int(st.info.words[old(j)]) }
	for i := g + 1; i < n && int(st.info.winStart[i]) <= g; i++ {
		ids = append(ids, st.turns[i].ID)
		texts = append(texts, windowText(at, windowStart(i-1, same, words), i-1))
	}
	return ids, texts
}

// denseMix is offline retrieval's dense feature over a space: the cosine
// with each turn's vector and with its window vector, mixed by weight w
// ((1-w)·turn + w·window). w is 0 when the space has no window vectors.
type denseMix struct {
	turn, win *vec.Matrix
	w         float64
}

// denseOf returns the dense feature of st under window weight w: 0 when
// the space has no window vectors, or (mixing both) when the turn vectors
// are of another dimension. With w below 1 it reads the turn vectors,
// which the caller loads first (spaceState.ensureTurnVectors; until then
// the feature sees none); with w at 1 it reads the window vectors alone.
// Caller holds st.mu.
func denseOf(st *spaceState, w float64) denseMix {
	n := len(st.turns)
	turn := &vec.Matrix{}
	if st.turnVecLoaded.Load() {
		turn = &st.turnVec
	}
	if w <= 0 || st.winVec.Rows() != n || w < 1 && st.winVec.Dim != turn.Dim {
		w = 0
	}
	return denseMix{turn: turn, win: &st.winVec, w: min(w, 1)}
}

// ready reports whether the matrices the feature reads hold n rows: the
// window matrix when w > 0, the turn matrix when w < 1 or when turns
// stands in for hidden windows (see scoresInto).
func (d denseMix) ready(n int, turns bool) bool {
	return (d.w <= 0 || d.win.Rows() == n) && (d.w >= 1 && !turns || d.turn.Rows() == n)
}

// mix combines a turn's cosine t and its window's cosine x.
func (d denseMix) mix(t, x float64) float64 { return (1-d.w)*t + d.w*x }

// exact returns the dense feature of row i, as the full scan computes it.
func (d denseMix) exact(q []float32, i int) float64 {
	switch d.w {
	case 0:
		return float64(vec.Dot(q, d.turn.Row(i)))
	case 1:
		return float64(vec.Dot(q, d.win.Row(i)))
	}
	return d.mix(float64(vec.Dot(q, d.turn.Row(i))), float64(vec.Dot(q, d.win.Row(i))))
}

// quantized reports whether the matrices the feature reads keep int8
// copies (for meanDot and estimate).
func (d denseMix) quantized() bool {
	return (d.w == 1 || d.turn.Quantized()) && (d.w == 0 || d.win.Quantized())
}

// meanDot returns the mean of the feature over the rows from the
// matrices' sums of rows (vec.Matrix.MeanDot).
func (d denseMix) meanDot(q []float32) float64 {
	switch d.w {
	case 0:
		return d.turn.MeanDot(q)
	case 1:
		return d.win.MeanDot(q)
	}
	return d.mix(d.turn.MeanDot(q), d.win.MeanDot(q))
}

// estimate writes estimates of the feature and their error bounds (see
// vec.Matrix.Estimate) into est and bound, using est2 and bound2 as
// scratch when both matrices are read, and returns the best lower bound.
func (d denseMix) estimate(q []float32, est, bound, est2, bound2 []float64) float64 {
	switch d.w {
	case 0:
		return d.turn.Estimate(q, est, bound)
	case 1:
		return d.win.Estimate(q, est, bound)
	}
	d.turn.Estimate(q, est, bound)
	d.win.Estimate(q, est2, bound2)
	maxLo := math.Inf(-1)
	for i := range est {
		// The bound of a mix is the mix of the bounds (both weights are
		// positive); the margins of each bound cover the float64
		// rounding of the mix.
		est[i], bound[i] = d.mix(est[i], est2[i]), d.mix(bound[i], bound2[i])
		maxLo = max(maxLo, est[i]-bound[i])
	}
	return maxLo
}

// scoresInto writes the feature of every row into dst (length Rows()),
// with tmp as scratch; where visible (nil: every turn) says a window holds
// a turn the question must not see, the turn's own cosine stands in.
func (d denseMix) scoresInto(q []float32, dst []float64, tmp []float32, winVisible func(i int) bool) {
	if d.w != 1 || winVisible != nil {
		d.turn.ScoresInto(tmp, q)
		for i, s := range tmp {
			dst[i] = float64(s)
		}
	}
	if d.w == 0 {
		return
	}
	d.win.ScoresInto(tmp, q)
	for i, s := range tmp {
		switch {
		case winVisible != nil && !winVisible(i):
			// dst[i] keeps the turn's own cosine.
		case d.w == 1:
			dst[i] = float64(s)
		default:
			dst[i] = d.mix(dst[i], float64(s))
		}
	}
}
