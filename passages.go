package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
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
// What is stored: one vector record per long turn, of kind
// store.VectorPassage, under the turn's id, its values the passages'
// vectors one after the other, made by the embedder id passageEmbedder
// (the embedder's id, "+" and the passages' definition, passage.Version).
// The passages themselves (ordinal, byte offsets) are worked out again
// from the turn's text, which never changes. The record is written in the
// transaction that adds the turn (batchVectors), so it is journalled with
// it; it is deleted with the turn (store.TurnVectorKinds) and with the
// space; a change of embedder or of the passages' definition makes the
// vectors again (they are not found under the new id).
//
// What is held: a space's passageIndex, brought up to date with the
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
// select call shows the same excerpts (promptTurnOf).

// passageVersion names the passages' definition in the embedder id of
// their stored vectors.
const passageVersion = "passage-" + passage.Version

// Excerpts: what an evidence of a long turn shows.
const (
	// excerptPassages is how many passages an excerpt shows at most.
	excerptPassages = 2
	// excerptKeep: a passage after the best joins the excerpt when its
	// score is at least this share of the best's.
	excerptKeep = 0.9
)

// passageEmbedder is the embedder id stored with passage vectors made by
// emb.
func passageEmbedder(emb embed.Embedder) string { return emb.ID() + "+" + passageVersion }

// passageEmbedText is what a passage's vector embeds: the passage as
// turnEmbedText embeds a turn.
func passageEmbedText(t *store.Turn, text string) string {
	return rules.EmbedForm(t.Speaker, t.OccurredRaw, text)
}

// passageDocID is a passage's id in the passages' BM25 index.
func passageDocID(turnID string, k int) string { return turnID + "\x1f" + strconv.Itoa(k) }

// turnPassages are the passages of one long turn. Never changed once
// made: a query may keep one while the index moves on.
type turnPassages struct {
	id, text, speaker string
	spans             []passage.Span
	// vecs holds the passages' vectors one after the other (nil without
	// an embedder).
	vecs []float32
}

// passagesOf returns the passages of turn t, nil when it is not long.
func passagesOf(t *store.Turn) *turnPassages {
	spans := passage.Split(t.Text)
	if spans == nil {
		return nil
	}
	return &turnPassages{id: t.ID, text: t.Text, speaker: t.Speaker, spans: spans}
}

// texts returns the passages' texts as embedded.
func (tp *turnPassages) embedTexts(t *store.Turn) []string {
	out := make([]string, len(tp.spans))
	for k, s := range tp.spans {
		out[k] = passageEmbedText(t, s.Text(tp.text))
	}
	return out
}

// vector returns passage k's vector of dim values.
func (tp *turnPassages) vector(k, dim int) []float32 { return tp.vecs[k*dim : (k+1)*dim] }

// passageIndex holds a space's passages (see the comment at the top).
type passageIndex struct {
	mu sync.Mutex
	// synced is set once the index matched the state at version (with n
	// turns).
	synced  bool
	version int64
	n       int
	byTurn  map[string]*turnPassages
	lex     *bm25.Index
	// pending holds passage vectors written by this process or caught up
	// from the journal, not yet taken by sync, by turn id.
	pending map[string]*turnPassages
	// count is the index's number of passages; bytes what the index
	// holds, near enough (read by estimateSize without px.mu).
	count int
	bytes atomic.Int64
}

// pendingCap bounds pending: past it, it is emptied (sync then reads the
// store).
const pendingCap = 1 << 14

func newPassageIndex() *passageIndex {
	return &passageIndex{byTurn: map[string]*turnPassages{}, lex: bm25.New(bm25.Options{B: offline.TurnBM25B}),
		pending: map[string]*turnPassages{}}
}

// passages returns st's passage index, made on first use.
func (st *spaceState) passages() *passageIndex {
	if px := st.pass.Load(); px != nil {
		return px
	}
	st.pass.CompareAndSwap(nil, newPassageIndex())
	return st.pass.Load()
}

// note records passage vectors written or caught up (kind
// store.VectorPassage, made under embID) for sync to take.
func (px *passageIndex) note(vs []store.Vector, embID string) {
	px.mu.Lock()
	defer px.mu.Unlock()
	if len(px.pending) > pendingCap {
		clear(px.pending)
	}
	for _, v := range vs {
		if v.Kind == store.VectorPassage && v.Embedder == embID {
			px.pending[v.ID] = &turnPassages{id: v.ID, vecs: v.Values}
		}
	}
}

// remove drops the passages of turn id. Caller holds px.mu.
func (px *passageIndex) remove(id string) {
	tp := px.byTurn[id]
	if tp == nil {
		return
	}
	for k := range tp.spans {
		px.lex.Remove(passageDocID(id, k))
	}
	px.count -= len(tp.spans)
	delete(px.byTurn, id)
}

// add puts in the passages of a turn. Caller holds px.mu.
func (px *passageIndex) add(tp *turnPassages) {
	docs := make([]bm25.Doc, len(tp.spans))
	for k, s := range tp.spans {
		docs[k] = bm25.Doc{ID: passageDocID(tp.id, k), Ref: -1, Text: tp.speaker + " " + s.Text(tp.text)}
	}
	px.lex.AddBatch(docs)
	px.byTurn[tp.id] = tp
	px.count += len(tp.spans)
}

// passageVectors returns the passage vector records of the long turns
// among turns, and the texts to embed for them (the vectors then go in
// order into the records' Values).
func passageTexts(turns []store.Turn) (recs []*turnPassages, texts []string) {
	for i := range turns {
		if tp := passagesOf(&turns[i]); tp != nil {
			recs = append(recs, tp)
			texts = append(texts, tp.embedTexts(&turns[i])...)
		}
	}
	return recs, texts
}

// fillPassageVectors sets the vectors of tps from vs (the embeddings of
// their texts, in order) and returns their store records.
func fillPassageVectors(tps []*turnPassages, vs [][]float32, embID string) []store.Vector {
	out := make([]store.Vector, 0, len(tps))
	j := 0
	for _, tp := range tps {
		var vals []float32
		for range tp.spans {
			vals = append(vals, vs[j]...)
			j++
		}
		tp.vecs = vals
		out = append(out, store.Vector{Kind: store.VectorPassage, ID: tp.id, Embedder: embID, Values: vals})
	}
	return out
}

// syncPassages brings st's passage index up to the state's turns (see the
// comment at the top). Caller holds st.mu and px.mu.
func (m *Memory) syncPassages(ctx context.Context, st *spaceState, px *passageIndex) error {
	v := st.version.Load()
	if px.synced && px.version == v && px.n == len(st.turns) {
		return nil
	}
	removed := false
	for id, tp := range px.byTurn {
		if i, ok := st.pos[id]; !ok || st.turns[i].Text != tp.text || st.turns[i].Speaker != tp.speaker {
			px.remove(id)
			removed = true
		}
	}
	var need []*turnPassages
	var at []int
	for i := range st.turns {
		t := &st.turns[i]
		if len(t.Text) <= 2*passage.MinWords || px.byTurn[t.ID] != nil {
			continue
		}
		// A text has at most its fields plus one word per MaxWordBytes
		// bytes (passage.Count): most turns are known short without
		// cutting them.
		if i < len(st.info.words) && int(st.info.words[i])+len(t.Text)/passage.MaxWordBytes <= passage.MinWords {
			continue
		}
		if tp := passagesOf(t); tp != nil {
			need, at = append(need, tp), append(at, i)
		}
	}
	if len(need) > 0 {
		if err := m.passageVectorsFor(ctx, st, px, need, at); err != nil {
			return err
		}
	}
	for _, tp := range need {
		px.add(tp)
	}
	px.synced, px.version, px.n = true, v, len(st.turns)
	if len(need) > 0 || removed {
		px.bytes.Store(px.lex.Bytes() + int64(px.count)*int64(4*dimOf(st.mem)+64))
		st.size.Store(st.estimateSize())
	}
	return nil
}

// passageVectorsFor gives the passages need (of the turns at positions at)
// their vectors: from pending, else from the store, else embedded and
// stored (when the store's space is still at the state's version, checked
// under the space's write lock, so that no vector outlives its turn).
// Caller holds st.mu and px.mu.
func (m *Memory) passageVectorsFor(ctx context.Context, st *spaceState, px *passageIndex, need []*turnPassages, at []int) error {
	emb := m.opts.Embedder
	if emb == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	dim, embID := emb.Dim(), passageEmbedder(emb)
	fits := func(tp *turnPassages, vals []float32) bool { return len(vals) == len(tp.spans)*dim && dim > 0 }
	missing := 0
	for _, tp := range need {
		if p := px.pending[tp.id]; p != nil && fits(tp, p.vecs) {
			tp.vecs = p.vecs
			delete(px.pending, tp.id)
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
	var still []*turnPassages
	var texts []string
	for j, tp := range need {
		if tp.vecs != nil {
			continue
		}
		if vals := byID[tp.id]; fits(tp, vals) {
			tp.vecs = vals
			continue
		}
		still = append(still, tp)
		texts = append(texts, tp.embedTexts(&st.turns[at[j]])...)
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
	recs := fillPassageVectors(still, vs, embID)
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
	tp         *turnPassages
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
	px.mu.Lock()
	defer px.mu.Unlock()
	if err := st.mem.syncPassages(q.ctx, st, px); err != nil {
		if q.err == nil {
			q.err = err
		}
		return nil
	}
	if len(px.byTurn) == 0 {
		return nil
	}
	n := len(st.turns)
	pm := &passageMatch{lex: make([]float64, n), turns: make(map[int]*matchedTurn, len(px.byTurn))}
	dim := len(q.qv)
	if dim > 0 {
		pm.dense = make([]float64, n)
	}
	for id, tp := range px.byTurn {
		i := st.pos[id]
		mt := &matchedTurn{tp: tp, lex: make([]float64, len(tp.spans))}
		if dim > 0 && len(tp.vecs) == len(tp.spans)*dim {
			mt.dense = make([]float64, len(tp.spans))
			best := -1.0
			for k := range tp.spans {
				c := float64(vec.Dot(q.qv, tp.vector(k, dim)))
				mt.dense[k] = c
				best = max(best, c)
			}
			pm.dense[i] = best
		}
		pm.turns[i] = mt
	}
	for doc, s := range px.lex.Scores(q.search) {
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
// question: its best passage, and the next best when it scores at least
// excerptKeep of it (at most excerptPassages), in the text's order; ok is
// false when the turn has no passages.
func (pm *passageMatch) excerptOf(i int) (text string, ex *Excerpt, ok bool) {
	tp, keep := pm.excerptChoice(i)
	if tp == nil {
		return "", nil, false
	}
	keep = slices.Clone(keep)
	slices.Sort(keep)
	return excerptText(tp, keep)
}

// excerptChoice returns the passages an excerpt of the long turn at
// position i shows, best first (see excerptOf), and the turn's passages;
// nil when the turn has no passages.
func (pm *passageMatch) excerptChoice(i int) (*turnPassages, []int) {
	if pm == nil {
		return nil, nil
	}
	mt := pm.turns[i]
	if mt == nil {
		return nil, nil
	}
	n := len(mt.tp.spans)
	score := func(k int) float64 {
		s := 0.0
		if mt.dense != nil {
			s += mt.dense[k]
		}
		if pm.maxLex > 0 {
			s += mt.lex[k] / pm.maxLex
		}
		return s
	}
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := score(a), score(b)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	keep := []int{order[0]}
	for _, k := range order[1:] {
		if len(keep) >= excerptPassages || score(k) < excerptKeep*score(order[0]) || score(order[0]) <= 0 {
			break
		}
		keep = append(keep, k)
	}
	return mt.tp, keep
}

// excerptText renders passages keep (ordinals, ascending) of tp: adjacent
// ones as one piece of the text, "…" where text is left out.
func excerptText(tp *turnPassages, keep []int) (string, *Excerpt, bool) {
	ex := &Excerpt{Of: len(tp.spans), Bytes: len(tp.text)}
	var b strings.Builder
	if keep[0] > 0 {
		b.WriteString("… ")
	}
	for j := 0; j < len(keep); {
		e := j
		for e+1 < len(keep) && keep[e+1] == keep[e]+1 {
			e++
		}
		if j > 0 {
			b.WriteString(" … ")
		}
		s, t := tp.spans[keep[j]], tp.spans[keep[e]]
		b.WriteString(strings.TrimSpace(tp.text[s.Start:t.End]))
		j = e + 1
	}
	if keep[len(keep)-1] < len(tp.spans)-1 {
		b.WriteString(" …")
	}
	for _, k := range keep {
		s := tp.spans[k]
		ex.Passages = append(ex.Passages, Passage{Ordinal: k, Start: s.Start, End: s.End})
	}
	return b.String(), ex, true
}

// promptTurnOf returns turn t as a prompt shows it to the memory model:
// for a long turn, the excerpt the evidence would show (the passages that
// match the question), with a note saying it is one. Caller holds st.mu.
func (q *query) promptTurnOf(t store.Turn) prompt.Turn {
	pt := promptTurn(t)
	if text, ex, ok := q.passageScores().excerptOf(q.st.pos[t.ID]); ok {
		pt.Text = cutText(text, maxPromptTurnBytes)
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
