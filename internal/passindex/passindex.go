// Package passindex holds the passages of a space's long turns (more than
// passage.MinWords words, cut by internal/passage): their embedded texts,
// their stored vector records, the index that keeps them with a BM25 entry
// each (Index), and the excerpt a long turn's evidence shows (Excerpt). It
// reads the store's records and never the engine: the root package
// (passages.go) keeps the index in step with a space's turns and scores a
// question against it.
//
// What is stored: one vector record per long turn, of kind
// store.VectorPassage, under the turn's id, its values the passages'
// vectors one after the other, made by the embedder id Embedder (the
// embedder's id, "+" and the passages' definition, Version). The passages
// themselves (ordinal, byte offsets) are worked out again from the turn's
// text, which never changes.
package passindex

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// Version names the passages' definition in the embedder id of their
// stored vectors.
const Version = "passage-" + passage.Version

// Excerpts: what an evidence of a long turn shows.
const (
	// excerptPassages is how many passages an excerpt shows at most.
	excerptPassages = 2
	// excerptKeep: a passage after the best joins the excerpt when its
	// score is at least this share of the best's.
	excerptKeep = 0.9
)

// Embedder is the embedder id stored with passage vectors made by the
// embedder of id embID.
func Embedder(embID string) string { return embID + "+" + Version }

// EmbedText is what a passage's vector embeds: the passage as
// rules.EmbedText embeds a turn.
func EmbedText(t *store.Turn, text string) string {
	return rules.EmbedForm(t.Speaker, t.OccurredRaw, text)
}

// DocID is a passage's id in the passages' BM25 index.
func DocID(turnID string, k int) string { return turnID + "\x1f" + strconv.Itoa(k) }

// Turn is the passages of one long turn. Never changed once made: a query
// may keep one while the index moves on.
type Turn struct {
	ID, Text, Speaker string
	Spans             []passage.Span
	// Vecs holds the passages' vectors one after the other (nil without
	// an embedder).
	Vecs []float32
}

// Of returns the passages of turn t, nil when it is not long.
func Of(t *store.Turn) *Turn {
	spans := passage.Split(t.Text)
	if spans == nil {
		return nil
	}
	return &Turn{ID: t.ID, Text: t.Text, Speaker: t.Speaker, Spans: spans}
}

// EmbedTexts returns the passages' texts as embedded.
func (tp *Turn) EmbedTexts(t *store.Turn) []string {
	out := make([]string, len(tp.Spans))
	for k, s := range tp.Spans {
		out[k] = EmbedText(t, s.Text(tp.Text))
	}
	return out
}

// Vector returns passage k's vector of dim values.
func (tp *Turn) Vector(k, dim int) []float32 { return tp.Vecs[k*dim : (k+1)*dim] }

// Index holds a space's passages; its mutex guards every field but Bytes.
type Index struct {
	sync.Mutex
	// Synced is set once the index matched the state at Version (with N
	// turns).
	Synced  bool
	Version int64
	N       int
	ByTurn  map[string]*Turn
	Lex     *bm25.Index
	// Pending holds passage vectors written by this process or caught up
	// from the journal, not yet taken by a sync, by turn id.
	Pending map[string]*Turn
	// Count is the index's number of passages; Bytes what the index
	// holds, near enough (read without the mutex).
	Count int
	Bytes atomic.Int64
}

// pendingCap bounds Pending: past it, it is emptied (a sync then reads the
// store).
const pendingCap = 1 << 14

// New returns an empty index.
func New() *Index {
	return &Index{ByTurn: map[string]*Turn{}, Lex: bm25.New(bm25.Options{B: offline.TurnBM25B}),
		Pending: map[string]*Turn{}}
}

// Note records passage vectors written or caught up (kind
// store.VectorPassage, made under embID) for a sync to take.
func (px *Index) Note(vs []store.Vector, embID string) {
	px.Lock()
	defer px.Unlock()
	if len(px.Pending) > pendingCap {
		clear(px.Pending)
	}
	for _, v := range vs {
		if v.Kind == store.VectorPassage && v.Embedder == embID {
			px.Pending[v.ID] = &Turn{ID: v.ID, Vecs: v.Values}
		}
	}
}

// Remove drops the passages of turn id. Caller holds the mutex.
func (px *Index) Remove(id string) {
	tp := px.ByTurn[id]
	if tp == nil {
		return
	}
	for k := range tp.Spans {
		px.Lex.Remove(DocID(id, k))
	}
	px.Count -= len(tp.Spans)
	delete(px.ByTurn, id)
}

// Add puts in the passages of a turn. Caller holds the mutex.
func (px *Index) Add(tp *Turn) {
	docs := make([]bm25.Doc, len(tp.Spans))
	for k, s := range tp.Spans {
		docs[k] = bm25.Doc{ID: DocID(tp.ID, k), Ref: -1, Text: tp.Speaker + " " + s.Text(tp.Text)}
	}
	px.Lex.AddBatch(docs)
	px.ByTurn[tp.ID] = tp
	px.Count += len(tp.Spans)
}

// Texts returns the passages of the long turns among turns, and the texts
// to embed for them (the vectors then go in order to Fill).
func Texts(turns []store.Turn) (recs []*Turn, texts []string) {
	for i := range turns {
		if tp := Of(&turns[i]); tp != nil {
			recs = append(recs, tp)
			texts = append(texts, tp.EmbedTexts(&turns[i])...)
		}
	}
	return recs, texts
}

// Fill sets the vectors of tps from vs (the embeddings of their texts, in
// order) and returns their store records.
func Fill(tps []*Turn, vs [][]float32, embID string) []store.Vector {
	out := make([]store.Vector, 0, len(tps))
	j := 0
	for _, tp := range tps {
		var vals []float32
		for range tp.Spans {
			vals = append(vals, vs[j]...)
			j++
		}
		tp.Vecs = vals
		out = append(out, store.Vector{Kind: store.VectorPassage, ID: tp.ID, Embedder: embID, Values: vals})
	}
	return out
}

// Choose returns the passages an excerpt of the turn shows, best first:
// the passage that scores best, and the next best while they score at
// least excerptKeep of it (at most excerptPassages).
func (tp *Turn) Choose(score func(k int) float64) []int {
	order := make([]int, len(tp.Spans))
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
	return keep
}

// Render writes passages keep (ordinals, ascending) of tp: adjacent ones
// as one piece of the text, "…" where text is left out.
func (tp *Turn) Render(keep []int) string {
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
		s, t := tp.Spans[keep[j]], tp.Spans[keep[e]]
		b.WriteString(strings.TrimSpace(tp.Text[s.Start:t.End]))
		j = e + 1
	}
	if keep[len(keep)-1] < len(tp.Spans)-1 {
		b.WriteString(" …")
	}
	return b.String()
}
