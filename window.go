package higmem

import (
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Window vectors: a second embedding of every turn, made of the turn with
// the turns just before it in its session (its window, defined in
// internal/rules: rules.WindowStart, rules.WindowText).

// windowEmbedder is the embedder id stored with window vectors made by emb.
func windowEmbedder(emb embed.Embedder) string { return emb.ID() + "+" + rules.WindowVersion }

// addWindow records the window start of turn i, whose other facts are
// already appended.
func (ti *turnInfo) addWindow(i int) {
	ti.winStart = append(ti.winStart, int32(rules.WindowStart(i,
		func(j int) bool { return ti.sameSession[j] },
		func(j int) int { return int(ti.words[j]) })))
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
		return rules.WordCount(at(j))
	}
	out := make([]string, len(added))
	for k := range added {
		i := n + k
		out[k] = rules.WindowText(at, rules.WindowStart(i, same, words), i)
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
		texts = append(texts, rules.WindowText(at, rules.WindowStart(i-1, same, words), i-1))
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
