package higmem

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/offline"
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
// (offline.Tuning.WindowWeight); where a window holds a turn the question must not see
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

// denseOf returns offline retrieval's dense feature of st under window
// weight w (offline.MixOf): the turn vectors as loaded so far (the caller
// loads them first when it reads them: spaceState.ensureTurnVectors) and
// the window vectors. Caller holds st.mu.
func denseOf(st *spaceState, w float64) offline.DenseMix {
	turn := &vec.Matrix{}
	if st.turnVecLoaded.Load() {
		turn = &st.turnVec
	}
	return offline.MixOf(turn, &st.winVec, len(st.turns), w)
}
