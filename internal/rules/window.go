package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

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
// first, until they hold WindowWords words or WindowTurns turns
// (BENCHMARKS.md, issue 15, round 2, compares this with one turn either
// side, one or two turns before, and means of turn vectors).
//
// Offline retrieval's dense feature is the cosine with the window vector
// (offline.Tuning.WindowWeight); where a window holds a turn the question must not see
// (a filter), the turn's own cosine stands in. Deleting a turn embeds the
// windows that held it again, so that its text does not live on in them.

// The window's definition.
const (
	// WindowWords: a window takes turns before its turn while they hold
	// fewer words than this (a few sentences of context).
	WindowWords = 30
	// WindowTurns: at most this many turns before its turn.
	WindowTurns = 4
	// WindowVersion names the window's definition in the embedder id of
	// the stored window vectors (the engine's windowEmbedder): vectors made under
	// another definition are not found and are made again.
	WindowVersion = "window-w30t4"
)

// windowLine is one turn's line in a window's text.
func windowLine(t *store.Turn) string { return t.Speaker + ": " + Content(*t) }

// WindowStart returns the index of the first turn of turn i's window
// among turns ordered by Seq: the turns before i in its session, nearest
// first, until they hold WindowWords words or WindowTurns turns. same(j)
// reports whether turn j is in the session of turn j-1, words(j) the
// words of turn j.
func WindowStart(i int, same func(j int) bool, words func(j int) int) int {
	start, w := i, 0
	for start > 0 && i-start < WindowTurns && w < WindowWords && same(start) {
		start--
		w += words(start)
	}
	return start
}

// WordCount is the number of words of a turn's content, as a window
// counts them.
func WordCount(t *store.Turn) int { return CountFields(Content(*t)) }

// CountFields returns len(strings.Fields(s)) without building the fields:
// the number of runs of characters that are not white space
// (unicode.IsSpace).
func CountFields(s string) int {
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

// WindowText returns the text a window vector embeds: one line per turn of
// the window, oldest first.
func WindowText(turns func(j int) *store.Turn, start, i int) string {
	var b strings.Builder
	for j := start; j <= i; j++ {
		if j > start {
			b.WriteByte('\n')
		}
		b.WriteString(windowLine(turns(j)))
	}
	return b.String()
}
