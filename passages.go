package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
	"github.com/higmem/higmem/internal/passindex"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Passages: a long turn (more than passage.MinWords words, about 600
// characters) is also indexed as passages of about passage.Target words
// (internal/passage), each with its own vector and BM25 entry, so that a
// question can match the part of a long reply that answers it, and the
// evidence shows that part rather than the whole turn (or, over the
// evidence budget, nothing of it).
//
// What is stored (internal/passindex): one vector record per long turn,
// of kind store.VectorPassage, under the turn's id. The record is written
// in the transaction that adds the turn (batchVectors), so it is journalled
// with it; it is deleted with the turn (store.TurnVectorKinds) and with the
// space; a change of embedder or of the passages' definition makes the
// vectors again (they are not found under the new id).
//
// What is held: a space's passindex.Index, brought up to date with the
// state's turns before a question reads it (sync): passages of turns gone
// are dropped, those of new long turns put in, their vectors taken from
// what this process just wrote or caught up from the journal (pending),
// else read from the store, else embedded (and stored). Turns of at most
// passage.MinWords words (every LoCoMo turn) have no passages: a space
// without long turns is scored exactly as before.
//
// How retrieval uses them: the offline scorer gets each turn's best
// passage BM25 score and cosine as plain inputs (offline.Features.PassageLex
// and PassageDense, see exposePassages; in a user–assistant chat the
// shape's tuning mixes the passage cosine into the turn's own); the
// passages of a turn are ranked for the question; the evidence of a long turn is an excerpt, its best
// passage (and a second one nearly as good, where the budget has room once
// every turn that fits has its best passage), marked as such, and costs the
// evidence budget what the excerpt holds (finalEvidence); default mode's
// select call shows the same excerpts (promptTurnAt).

// passageEmbedder is the embedder id stored with passage vectors made by
// emb.
func passageEmbedder(emb embed.Embedder) string { return passindex.Embedder(emb.ID()) }

// passages returns st's passage index, made on first use.
func (st *spaceState) passages() *passindex.Index {
	if px := st.pass.Load(); px != nil {
		return px
	}
	st.pass.CompareAndSwap(nil, passindex.New())
	return st.pass.Load()
}

// syncPassages brings st's passage index up to the state's turns (see the
// comment at the top). Caller holds st.mu and px's mutex.
func (m *Memory) syncPassages(ctx context.Context, st *spaceState, px *passindex.Index) error {
	v := st.version.Load()
	if px.Synced && px.Version == v && px.N == len(st.turns) {
		return nil
	}
	removed := false
	for id, tp := range px.ByTurn {
		if i, ok := st.pos[id]; !ok || st.turns[i].Text != tp.Text || st.turns[i].Speaker != tp.Speaker {
			px.Remove(id)
			removed = true
		}
	}
	var need []*passindex.Turn
	var at []int
	for i := range st.turns {
		t := &st.turns[i]
		if len(t.Text) <= 2*passage.MinWords || px.ByTurn[t.ID] != nil {
			continue
		}
		// A text has at most its fields plus one word per MaxWordBytes
		// bytes (passage.Count): most turns are known short without
		// cutting them.
		if i < len(st.info.words) && int(st.info.words[i])+len(t.Text)/passage.MaxWordBytes <= passage.MinWords {
			continue
		}
		if tp := passindex.Of(t); tp != nil {
			need, at = append(need, tp), append(at, i)
		}
	}
	if len(need) > 0 {
		if err := m.passageVectorsFor(ctx, st, px, need, at); err != nil {
			return err
		}
	}
	for _, tp := range need {
		px.Add(tp)
	}
	px.Synced, px.Version, px.N = true, v, len(st.turns)
	if len(need) > 0 || removed {
		px.Bytes.Store(px.Lex.Bytes() + int64(px.Count)*int64(4*dimOf(st.mem)+64))
		st.size.Store(st.estimateSize())
	}
	return nil
}

// passageVectorsFor gives the passages need (of the turns at positions at)
// their vectors: from pending, else from the store, else embedded and
// stored (when the store's space is still at the state's version, checked
// under the space's write lock, so that no vector outlives its turn).
// Caller holds st.mu and px's mutex.
func (m *Memory) passageVectorsFor(ctx context.Context, st *spaceState, px *passindex.Index, need []*passindex.Turn, at []int) error {
	emb := m.opts.Embedder
	if emb == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	dim, embID := emb.Dim(), passageEmbedder(emb)
	fits := func(tp *passindex.Turn, vals []float32) bool { return len(vals) == len(tp.Spans)*dim && dim > 0 }
	missing := 0
	for _, tp := range need {
		if p := px.Pending[tp.ID]; p != nil && fits(tp, p.Vecs) {
			tp.Vecs = p.Vecs
			delete(px.Pending, tp.ID)
			continue
		}
		missing++
	}
	if missing == 0 {
		return nil
	}
	stored, err := st.reader.ListVectors(ctx, st.space, store.VectorPassage, embID)
	if err != nil {
		return fmt.Errorf("higmem: read passage vectors of %s: %w", st.space, err)
	}
	byID := make(map[string][]float32, len(stored))
	for _, v := range stored {
		byID[v.ID] = v.Values
	}
	var still []*passindex.Turn
	var texts []string
	for j, tp := range need {
		if tp.Vecs != nil {
			continue
		}
		if vals := byID[tp.ID]; fits(tp, vals) {
			tp.Vecs = vals
			continue
		}
		still = append(still, tp)
		texts = append(texts, tp.EmbedTexts(&st.turns[at[j]])...)
	}
	if len(still) == 0 {
		return nil
	}
	m.opts.Logger.Info("embedding passages missing from the store or made by another embedder",
		"space", st.space.String(), "turns", len(still), "passages", len(texts), "embedder", embID)
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return err
	}
	recs := passindex.Fill(still, vs, embID)
	if st.torn {
		return nil
	}
	version := st.version.Load()
	err = m.store.Update(ctx, func(tx store.Tx) error {
		head, err := tx.Lock(ctx, st.space)
		if err != nil || head.Version != version {
			return err
		}
		return tx.PutVectors(ctx, st.space, recs)
	})
	if err != nil {
		return fmt.Errorf("higmem: store passage vectors: %w", err)
	}
	return nil
}

// passageMatch is how a question matches the passages of a space.
type passageMatch struct {
	// lex and dense are, per turn (indexed like the state's turns), the
	// best BM25 score and the best cosine of its passages (0 for a turn
	// without passages); dense is nil without a question vector.
	lex, dense []float64
	// turns are the long turns, by position, with each passage's scores.
	turns map[int]*matchedTurn
	// maxLex is the best passage BM25 score of the question.
	maxLex float64
}

// matchedTurn is a long turn's passages with the question's scores.
type matchedTurn struct {
	tp         *passindex.Turn
	lex, dense []float64
}

// passageScores returns how the question matches the space's passages
// (nil when the space has none), worked out once per query. A failure to
// bring the passages up to date is the query's error. Caller holds st.mu.
func (q *query) passageScores() *passageMatch {
	if q.pmDone {
		return q.pm
	}
	q.pmDone = true
	st := q.st
	if st.mem == nil || st.mem.opts.Ablations.NoPassages {
		return nil
	}
	px := st.passages()
	px.Lock()
	defer px.Unlock()
	if err := st.mem.syncPassages(q.ctx, st, px); err != nil {
		if q.err == nil {
			q.err = err
		}
		return nil
	}
	if len(px.ByTurn) == 0 {
		return nil
	}
	n := len(st.turns)
	pm := &passageMatch{lex: make([]float64, n), turns: make(map[int]*matchedTurn, len(px.ByTurn))}
	dim := len(q.qv)
	if dim > 0 {
		pm.dense = make([]float64, n)
	}
	for id, tp := range px.ByTurn {
		i := st.pos[id]
		mt := &matchedTurn{tp: tp, lex: make([]float64, len(tp.Spans))}
		if dim > 0 && len(tp.Vecs) == len(tp.Spans)*dim {
			mt.dense = make([]float64, len(tp.Spans))
			best := -1.0
			for k := range tp.Spans {
				c := float64(vec.Dot(q.qv, tp.Vector(k, dim)))
				mt.dense[k] = c
				best = max(best, c)
			}
			pm.dense[i] = best
		}
		pm.turns[i] = mt
	}
	for doc, s := range px.Lex.Scores(q.search) {
		cut := strings.LastIndexByte(doc, '\x1f')
		k, err := strconv.Atoi(doc[cut+1:])
		i, ok := st.pos[doc[:cut]]
		if cut < 0 || err != nil || !ok || pm.turns[i] == nil || k >= len(pm.turns[i].lex) {
			continue
		}
		pm.turns[i].lex[k] = s
		pm.lex[i] = max(pm.lex[i], s)
		pm.maxLex = max(pm.maxLex, s)
	}
	q.pm = pm
	return pm
}

// exposePassages hands the scorer, as plain inputs, each turn's best
// passage BM25 score and cosine (offline.Features.PassageLex and
// PassageDense). The turn's own Lex and Dense are left as they are: taking
// the better of a turn's score and its best passage's (a max over its
// passages) made offline retrieval worse on the user–assistant dev chats,
// whose answers are mostly in short user turns (BENCHMARKS.md, "Passages of
// long turns"), so how much a passage counts is the scorer's to weigh
// (offline.Tuning.PassageDense, PassageLex).
// Caller holds st.mu.
func (q *query) exposePassages(f *offline.Features) {
	if pm := q.passageScores(); pm != nil {
		f.PassageLex, f.PassageDense = pm.lex, pm.dense
	}
}

// excerptOf returns the excerpt of the long turn at position i for the
// question: the passages excerptChoice picks, in the text's order; ok is
// false when the turn has no passages.
func (pm *passageMatch) excerptOf(i int) (text string, ex *Excerpt, ok bool) {
	tp, keep := pm.excerptChoice(i)
	if tp == nil {
		return "", nil, false
	}
	text, ex = excerptText(tp, slices.Sorted(slices.Values(keep)))
	return text, ex, true
}

// excerptChoice returns the turn's passages and those an excerpt of the
// long turn at position i shows, best first (passindex.Turn.Choose, its
// passages scored by cosine plus BM25 over the question's best); nil when
// the turn has no passages.
func (pm *passageMatch) excerptChoice(i int) (*passindex.Turn, []int) {
	if pm == nil {
		return nil, nil
	}
	mt := pm.turns[i]
	if mt == nil {
		return nil, nil
	}
	return mt.tp, mt.tp.Choose(func(k int) float64 {
		s := 0.0
		if mt.dense != nil {
			s += mt.dense[k]
		}
		if pm.maxLex > 0 {
			s += mt.lex[k] / pm.maxLex
		}
		return s
	})
}

// excerptText renders passages keep (ordinals, ascending) of tp as an
// excerpt.
func excerptText(tp *passindex.Turn, keep []int) (string, *Excerpt) {
	ex := &Excerpt{Of: len(tp.Spans), Bytes: len(tp.Text)}
	for _, k := range keep {
		s := tp.Spans[k]
		ex.Passages = append(ex.Passages, Passage{Ordinal: k, Start: s.Start, End: s.End})
	}
	return tp.Render(keep), ex
}

// promptTurnAt returns the turn at state index i as a prompt shows it to
// the memory model: for a long turn, the excerpt the evidence would show
// (the passages that match the question), with a note saying it is one.
// Its date comes from days. Caller holds st.mu.
func (q *query) promptTurnAt(i int, days *dayMemo) prompt.Turn {
	t := &q.st.turns[i]
	pt := promptTurnDated(*t, days.dateOf(t))
	if text, ex, ok := q.passageScores().excerptOf(i); ok {
		pt.Text = rules.Cut(text, maxPromptTurnBytes)
		pt.Note = strings.TrimSpace(strings.Trim(strings.TrimSpace(excerptMarker(ex)), "()"))
	}
	return pt
}

// dimOf is the dimension of m's embedder (0 without one).
func dimOf(m *Memory) int {
	if m == nil || m.opts.Embedder == nil {
		return 0
	}
	return m.opts.Embedder.Dim()
}
