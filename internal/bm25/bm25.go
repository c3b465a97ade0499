// Package bm25 is an incremental in-memory Okapi BM25 index over short
// documents keyed by string ids, used for lexical retrieval of turns and
// events and for fusion with vector search.
//
// A document's terms come from an analyzer, textnorm.Terms by default
// (lower-case word tokens without NLTK stop words, Porter-stemmed). The score
// of a document d for a query q is
//
//	sum over query terms t:  idf(t) * tf(t,d)*(k1+1) / (tf(t,d) + k1*(1 - b + b*|d|/avgdl))
//	idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//
// with N the number of documents, df(t) the number of documents containing t,
// |d| the number of terms of d and avgdl the mean of |d|. This is Robertson's
// BM25 with Lucene's always-positive idf; a term repeated in the query counts
// once per repetition. Only documents that share at least one term with the
// query get a score, and every such score is positive.
//
// A document may carry a ref, a small non-negative integer the caller
// chooses (such as the document's position in its own slice); ScoreRefs then
// writes scores into a caller's slice indexed by ref, so that fusing BM25
// with other per-document scores needs no map and no id lookup.
//
// Concurrency: an Index is safe for concurrent use. Search and Scores take a
// read lock, so any number of them run in parallel; Add and Remove take the
// write lock only for the update itself (the text is analysed before the lock
// is taken), so writers are serialised and briefly exclude readers.
package bm25

import (
	"cmp"
	"container/heap"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/higmem/higmem/internal/textnorm"
)

// Default parameters.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// Options configures an Index. The zero value selects the defaults.
type Options struct {
	// K1 is the term-frequency saturation, positive; 0 means DefaultK1.
	K1 float64
	// B is the length normalisation in (0, 1]; 0 means DefaultB, and a
	// negative value means no length normalisation (b = 0).
	B float64
	// Analyzer turns text into index terms; nil means textnorm.Terms. It
	// must be deterministic and safe for concurrent use.
	Analyzer func(text string) []string
}

// Hit is one search result.
type Hit struct {
	ID    string
	Score float64
}

// Index is an incremental BM25 index. Create one with New.
type Index struct {
	k1, b   float64
	analyze func(string) []string

	mu   sync.RWMutex
	ids  map[string]int32 // id -> slot in docs
	docs []doc            // by slot; removed documents stay until compaction
	lens []int32          // by slot: number of terms, or -1 once removed
	refs []int32          // by slot: the caller's ref, or -1 (apart from docs, so that scoring by ref reads 4 bytes a posting)
	// identRefs is set while every document's ref is its slot (as a
	// space's turns are after a load; removed documents aside): scoring
	// by ref is then scoring by slot, and needs no refs.
	identRefs bool
	live      int   // documents not removed
	totalLen  int64 // sum of lengths of live documents
	termIDs   map[string]int32
	terms     []term
	dead      int // postings that belong to removed documents
	postings  int // all postings, live and dead
	// idBytes and termBytes are the bytes of the ids and term strings
	// the index holds (for Bytes).
	idBytes, termBytes int64
	compacts           int // number of compactions, for tests

	// bufs holds *searchBuf. It is a pointer so that the runtime's list of
	// pools does not keep a dropped index alive.
	bufs *sync.Pool
}

type doc struct {
	id    string
	terms []int32 // distinct term ids, for Remove
}

type posting struct {
	doc int32
	tf  int32
}

type term struct {
	postings []posting // ascending doc slot
	// lens holds each posting's document length (lens[slot]), -1 once
	// the document is removed: read in order as the postings are, where
	// a look-up by slot would gather from all over the index.
	lens []int32
	df   int32 // live documents containing the term
}

// searchBuf is per-search scratch space: an accumulator indexed by document
// slot, kept all-zero between searches, and the list of slots touched.
type searchBuf struct {
	acc     []float64
	touched []int
}

// New returns an empty index.
func New(opts Options) *Index {
	ix := &Index{
		k1:      opts.K1,
		b:       opts.B,
		analyze: opts.Analyzer,
		ids:     make(map[string]int32),
		termIDs: make(map[string]int32),
		bufs:    new(sync.Pool),

		identRefs: true,
	}
	if ix.k1 == 0 {
		ix.k1 = DefaultK1
	}
	switch {
	case ix.b == 0:
		ix.b = DefaultB
	case ix.b < 0:
		ix.b = 0
	}
	if ix.analyze == nil {
		ix.analyze = textnorm.Terms
	}
	return ix
}

// Add indexes text under id. If id is already present, its document is
// replaced. A text without terms is still counted as a document.
func (ix *Index) Add(id, text string) { ix.AddRef(id, -1, text) }

// AddRef indexes text under id like Add, with a ref (see ScoreRefs); a
// negative ref means none.
func (ix *Index) AddRef(id string, ref int, text string) {
	a := ix.analyzeDoc(text)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.insertLocked(id, ref, a)
}

// Doc is a document for AddBatch.
type Doc struct {
	ID   string
	Ref  int // negative for none
	Text string
}

// AddBatch indexes docs in order, as many calls of AddRef would, analysing
// their texts on up to GOMAXPROCS goroutines first. It is how a large index
// is built quickly.
func (ix *Index) AddBatch(docs []Doc) {
	as := make([]analyzed, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs)/256)
	if workers <= 1 {
		for i, d := range docs {
			as[i] = ix.analyzeDoc(d.Text)
		}
	} else {
		var wg sync.WaitGroup
		per := (len(docs) + workers - 1) / workers
		for lo := 0; lo < len(docs); lo += per {
			wg.Go(func() {
				for i := lo; i < min(lo+per, len(docs)); i++ {
					as[i] = ix.analyzeDoc(docs[i].Text)
				}
			})
		}
		wg.Wait()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.addFreshLocked(docs, as) {
		return
	}
	for i, d := range docs {
		ix.insertLocked(d.ID, d.Ref, as[i])
	}
}

// addFreshLocked builds an empty index from a batch of distinct ids (how a
// space's index is built when it loads) and reports whether it did; else it
// leaves the index as it was. The result is what insertLocked builds
// document by document (the same slots, term ids, postings and counts),
// but each term's postings are sized to its document count up front and
// cut from one allocation, as are the documents' term lists, so that no
// slice grows along the way.
func (ix *Index) addFreshLocked(docs []Doc, as []analyzed) bool {
	if len(docs) == 0 || len(ix.docs) != 0 || len(ix.ids) != 0 || len(ix.terms) != 0 || len(docs) > math.MaxInt32 {
		return false
	}
	ids := make(map[string]int32, len(docs))
	for i, d := range docs {
		if _, dup := ids[d.ID]; dup {
			return false // a later document replaces an earlier one
		}
		ids[d.ID] = int32(i)
	}
	total := 0
	for i := range as {
		total += len(as[i].terms)
	}
	// Term ids in first-appearance order, the documents' term lists, and
	// the number of postings of each term.
	dterms := make([]int32, total)
	var count []int32
	ix.docs = make([]doc, len(docs))
	ix.lens = make([]int32, len(docs))
	ix.refs = make([]int32, len(docs))
	off := 0
	for i, d := range docs {
		a := &as[i]
		r := int32(-1)
		if d.Ref >= 0 && d.Ref <= math.MaxInt32 {
			r = int32(d.Ref)
		}
		tl := dterms[off : off+len(a.terms) : off+len(a.terms)]
		off += len(a.terms)
		for j, t := range a.terms {
			tid, ok := ix.termIDs[t]
			if !ok {
				tid = int32(len(count))
				// A copy: analyzers may return substrings of the text.
				ix.termIDs[strings.Clone(t)] = tid
				ix.termBytes += int64(len(t))
				count = append(count, 0)
			}
			count[tid]++
			tl[j] = tid
		}
		ix.docs[i] = doc{id: d.ID, terms: tl}
		ix.refs[i] = r
		ix.lens[i] = int32(a.n)
		ix.idBytes += int64(len(d.ID))
		ix.totalLen += int64(a.n)
	}
	slab, lslab := make([]posting, total), make([]int32, total)
	ix.terms = make([]term, len(count))
	for tid, c := range count {
		ix.terms[tid] = term{postings: slab[:0:c], lens: lslab[:0:c], df: c}
		slab, lslab = slab[c:], lslab[c:]
	}
	for i := range ix.docs {
		for j, tid := range ix.docs[i].terms {
			tr := &ix.terms[tid]
			tr.postings = append(tr.postings, posting{doc: int32(i), tf: as[i].tf[j]})
			tr.lens = append(tr.lens, ix.lens[i])
		}
	}
	ix.ids = ids
	ix.live = len(docs)
	ix.postings = total
	ix.identRefs = identity(ix.refs, ix.lens)
	return true
}

// analyzed is a document's distinct terms in first-appearance order with
// their frequencies, and its length in terms.
type analyzed struct {
	terms []string
	tf    []int32
	n     int
}

func (ix *Index) analyzeDoc(text string) analyzed {
	terms := ix.analyze(text)
	a := analyzed{n: len(terms), terms: make([]string, 0, len(terms)), tf: make([]int32, 0, len(terms))}
	var pos map[string]int
	if len(terms) > 32 {
		pos = make(map[string]int, len(terms))
	}
	for _, t := range terms {
		// Most documents are short: a linear search beats a map.
		var j int
		if pos != nil {
			var ok bool
			if j, ok = pos[t]; !ok {
				j = -1
				pos[t] = len(a.terms)
			}
		} else {
			j = slices.Index(a.terms, t)
		}
		if j < 0 {
			a.terms = append(a.terms, t)
			a.tf = append(a.tf, 1)
			continue
		}
		a.tf[j]++
	}
	return a
}

func (ix *Index) insertLocked(id string, ref int, a analyzed) {
	if slot, ok := ix.ids[id]; ok {
		ix.removeLocked(slot)
	}
	slot := int32(len(ix.docs))
	r := int32(-1)
	if ref >= 0 && ref <= math.MaxInt32 {
		r = int32(ref)
	}
	d := doc{id: id, terms: make([]int32, 0, len(a.terms))}
	for j, t := range a.terms {
		tid, ok := ix.termIDs[t]
		if !ok {
			tid = int32(len(ix.terms))
			// A copy: analyzers may return substrings of the text.
			ix.termIDs[strings.Clone(t)] = tid
			ix.termBytes += int64(len(t))
			ix.terms = append(ix.terms, term{})
		}
		tr := &ix.terms[tid]
		tr.postings = append(tr.postings, posting{doc: slot, tf: a.tf[j]})
		tr.lens = append(tr.lens, int32(a.n))
		tr.df++
		d.terms = append(d.terms, tid)
	}
	ix.postings += len(a.terms)
	ix.docs = append(ix.docs, d)
	ix.lens = append(ix.lens, int32(a.n))
	ix.refs = append(ix.refs, r)
	ix.identRefs = ix.identRefs && r == slot
	ix.ids[id] = slot
	ix.idBytes += int64(len(id))
	ix.live++
	ix.totalLen += int64(a.n)
	ix.maybeCompactLocked()
}

// Remove deletes the document with the given id, if any, and reports whether
// it was present.
func (ix *Index) Remove(id string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.ids[id]
	if !ok {
		return false
	}
	ix.removeLocked(slot)
	ix.maybeCompactLocked()
	return true
}

func (ix *Index) removeLocked(slot int32) {
	d := &ix.docs[slot]
	for _, tid := range d.terms {
		tr := &ix.terms[tid]
		tr.df--
		if j, ok := slices.BinarySearchFunc(tr.postings, slot, func(p posting, slot int32) int { return cmp.Compare(p.doc, slot) }); ok {
			tr.lens[j] = -1
		}
	}
	ix.dead += len(d.terms)
	ix.live--
	ix.totalLen -= int64(ix.lens[slot])
	delete(ix.ids, d.id)
	ix.idBytes -= int64(len(d.id))
	ix.lens[slot] = -1
	d.terms = nil
}

// maybeCompactLocked rebuilds the postings without removed documents once
// they make up more than half of all postings (amortised O(1) per removal).
func (ix *Index) maybeCompactLocked() {
	if ix.dead < 1024 || ix.dead*2 < ix.postings {
		if ix.live == 0 && len(ix.docs) > 0 {
			ix.resetLocked()
		}
		return
	}
	remap := make([]int32, len(ix.docs))
	docs := make([]doc, 0, ix.live)
	lens := make([]int32, 0, ix.live)
	refs := make([]int32, 0, ix.live)
	for i, d := range ix.docs {
		remap[i] = -1
		if ix.lens[i] >= 0 {
			remap[i] = int32(len(docs))
			docs = append(docs, d)
			lens = append(lens, ix.lens[i])
			refs = append(refs, ix.refs[i])
		}
	}
	// Term ids keep their relative order; unused terms are dropped.
	termRemap := make([]int32, len(ix.terms))
	terms := make([]term, 0, len(ix.terms))
	for tid := range ix.terms {
		old := ix.terms[tid]
		if old.df == 0 {
			termRemap[tid] = -1
			continue
		}
		ps, ls := make([]posting, 0, old.df), make([]int32, 0, old.df)
		for j, p := range old.postings {
			if s := remap[p.doc]; s >= 0 {
				ps = append(ps, posting{doc: s, tf: p.tf})
				ls = append(ls, old.lens[j])
			}
		}
		termRemap[tid] = int32(len(terms))
		terms = append(terms, term{postings: ps, lens: ls, df: old.df})
	}
	termIDs := make(map[string]int32, len(terms))
	ix.termBytes = 0
	for t, tid := range ix.termIDs {
		if nt := termRemap[tid]; nt >= 0 {
			termIDs[t] = nt
			ix.termBytes += int64(len(t))
		}
	}
	for i := range docs {
		for j, tid := range docs[i].terms {
			docs[i].terms[j] = termRemap[tid]
		}
		ix.ids[docs[i].id] = int32(i)
	}
	ix.docs, ix.lens, ix.refs, ix.terms, ix.termIDs = docs, lens, refs, terms, termIDs
	ix.postings -= ix.dead
	ix.dead = 0
	ix.compacts++
	ix.identRefs = identity(ix.refs, ix.lens)
}

func (ix *Index) resetLocked() {
	ix.docs = nil
	ix.lens = nil
	ix.refs = nil
	ix.terms = nil
	ix.termIDs = make(map[string]int32)
	ix.ids = make(map[string]int32)
	ix.postings, ix.dead, ix.totalLen, ix.live = 0, 0, 0, 0
	ix.idBytes, ix.termBytes = 0, 0
	ix.identRefs = true
}

// identity reports whether refs[i] == i for every document i not removed
// (lens[i] >= 0; the removed ones score nothing).
func identity(refs, lens []int32) bool {
	for i, r := range refs {
		if int(r) != i && lens[i] >= 0 {
			return false
		}
	}
	return true
}

// MapRefs gives every document that has a ref the ref f(ref) (a negative
// result leaves it without one). A caller whose refs are positions in its
// own slice calls it after inserting or removing items among them.
func (ix *Index) MapRefs(f func(ref int) int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for i, ref := range ix.refs {
		if ref < 0 || ix.lens[i] < 0 {
			continue
		}
		r := f(int(ref))
		if r < 0 || r > math.MaxInt32 {
			r = -1
		}
		ix.refs[i] = int32(r)
	}
	ix.identRefs = identity(ix.refs, ix.lens)
}

// Bytes estimates the memory the index holds, in O(1): its documents and
// postings, its id and term maps with their strings (removed documents
// count until compaction drops them). It is what a cache of indexes
// weighs them by.
func (ix *Index) Bytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	const (
		docBytes   = 40 // id, the header of terms
		termBytes  = 32 // the header of postings, df
		entryBytes = 40 // a map entry of a string and an int32, with the map's slack
	)
	return int64(cap(ix.docs))*docBytes + int64(cap(ix.lens)+cap(ix.refs))*4 + int64(ix.postings)*(8+4+4) + // postings, their lengths and doc.terms
		int64(cap(ix.terms))*termBytes + int64(len(ix.ids)+len(ix.termIDs))*entryBytes + ix.idBytes + ix.termBytes
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Search returns the k best-scoring documents for query, best first. Ties are
// broken by id in ascending byte order, so results do not depend on insertion
// order. k <= 0 returns every matching document. Documents sharing no term
// with the query are never returned.
func (ix *Index) Search(query string, k int) []Hit {
	qterms := queryTerms(ix.analyze(query))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	buf := ix.search(qterms)
	if buf == nil {
		return nil
	}
	defer ix.release(buf)

	n := len(buf.touched)
	if k <= 0 || k > n {
		k = n
	}
	var hits []Hit
	if k == n {
		hits = make([]Hit, n)
		for i, slot := range buf.touched {
			hits[i] = Hit{ID: ix.docs[slot].id, Score: buf.acc[slot]}
		}
	} else {
		h := make(minHits, 0, k)
		for _, slot := range buf.touched {
			c := Hit{ID: ix.docs[slot].id, Score: buf.acc[slot]}
			if len(h) < k {
				heap.Push(&h, c)
			} else if better(c, h[0]) {
				h[0] = c
				heap.Fix(&h, 0)
			}
		}
		hits = []Hit(h)
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return hits
}

// Scores returns the score of every document that shares at least one term
// with query, keyed by id, for score fusion.
func (ix *Index) Scores(query string) map[string]float64 {
	qterms := queryTerms(ix.analyze(query))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	buf := ix.search(qterms)
	if buf == nil {
		return map[string]float64{}
	}
	defer ix.release(buf)
	out := make(map[string]float64, len(buf.touched))
	for _, slot := range buf.touched {
		out[ix.docs[slot].id] = buf.acc[slot]
	}
	return out
}

// ScoreRefs sets dst[ref] to the score of every document that has a ref
// below len(dst) and shares at least one term with query, appends those refs
// to touched and returns it. dst must be zero at those refs (callers keep
// it zeroed and clear the touched entries after use); other entries are
// left alone. Refs must be unique among the documents. Scores equal those
// of Scores exactly.
func (ix *Index) ScoreRefs(query string, dst []float64, touched []int) []int {
	touched, _ = ix.ScoreRefsTop(query, dst, touched)
	return touched
}

// ScoreRefsTop is ScoreRefs, and also returns the greatest score it set
// (0 when it set none): since every score is positive, the greatest of
// the values it writes along the way, worked out as they are written
// rather than in a pass over dst.
func (ix *Index) ScoreRefsTop(query string, dst []float64, touched []int) ([]int, float64) {
	qterms := queryTerms(ix.analyze(query))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	touched, top, _ := ix.accumulateLocked(qterms, dst, touched, true, -1)
	return touched, top
}

// ScoreRefsFew is ScoreRefsTop for a caller that needs the refs it sets
// only while they are few (to clear them one by one, say): it lists them
// in touched while they cannot be more than most, and listed reports
// whether touched lists every ref it set; when not, touched lists some of
// them (it stops listing before a query term whose documents could take
// the list past most). The scores are those of ScoreRefs either way.
func (ix *Index) ScoreRefsFew(query string, dst []float64, touched []int, most int) (out []int, top float64, listed bool) {
	qterms := queryTerms(ix.analyze(query))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.accumulateLocked(qterms, dst, touched, true, max(most, 0))
}

type queryTerm struct {
	text  string
	count int
}

// queryTerms groups repeated terms, keeping first-appearance order so that
// floating-point sums are always taken in the same order.
func queryTerms(terms []string) []queryTerm {
	out := make([]queryTerm, 0, len(terms))
	for _, t := range terms {
		found := false
		for i := range out {
			if out[i].text == t {
				out[i].count++
				found = true
				break
			}
		}
		if !found {
			out = append(out, queryTerm{text: t, count: 1})
		}
	}
	return out
}

// search scores every document that matches qterms into a pooled buffer
// indexed by slot; it returns nil when nothing matches. The caller holds
// the read lock and must pass a non-nil result to release.
func (ix *Index) search(qterms []queryTerm) *searchBuf {
	if ix.live == 0 || len(qterms) == 0 {
		return nil
	}
	var buf *searchBuf
	if v := ix.bufs.Get(); v != nil {
		buf = v.(*searchBuf)
	} else {
		buf = &searchBuf{}
	}
	if cap(buf.acc) < len(ix.docs) {
		buf.acc = make([]float64, len(ix.docs)+len(ix.docs)/4)
	}
	buf.touched, _, _ = ix.accumulateLocked(qterms, buf.acc[:len(ix.docs)], buf.touched[:0], false, -1)
	if len(buf.touched) == 0 {
		ix.bufs.Put(buf)
		return nil
	}
	return buf
}

// accumulateLocked adds the BM25 score of every document that matches
// qterms to dst, term by term in the order of qterms (so that sums are
// always taken in the same order), appends to touched every entry of dst
// it makes non-zero, and returns touched and the greatest value it wrote
// (0 when none). With most >= 0 it stops listing entries before a term
// whose postings could take touched past most entries, and listed is then
// false. A document's entry is its slot, or with byRef its ref (documents
// without a ref, or with one beyond dst, are skipped). The entries it
// writes must be zero on entry. The caller holds the read lock.
func (ix *Index) accumulateLocked(qterms []queryTerm, dst []float64, touched []int, byRef bool, most int) (out []int, top float64, listed bool) {
	listed = true
	if ix.live == 0 {
		return touched, top, listed
	}
	n := float64(ix.live)
	avgdl := float64(ix.totalLen) / n
	k1, b := ix.k1, ix.b
	refs := ix.refs
	// Refs equal to the slots: scored by slot, but skipped beyond dst.
	ident := byRef && ix.identRefs
	// The first term scored finds dst zero at every entry it scores, and
	// scores each at most once when the entries are slots: the kernel
	// need not read them.
	fresh := !byRef || ident
	// Per-document length factor k1*(1-b+b*|d|/avgdl) = c0 + c1*|d|.
	c0, c1 := k1*(1-b), 0.0
	if avgdl > 0 {
		c1 = k1 * b / avgdl
	}
	for _, qt := range qterms {
		tid, ok := ix.termIDs[qt.text]
		if !ok {
			continue
		}
		tr := &ix.terms[tid]
		if tr.df == 0 {
			continue
		}
		df := float64(tr.df)
		w := float64(qt.count) * math.Log(1+(n-df+0.5)/(df+0.5))
		w *= k1 + 1
		// A slot joins touched when this term makes it non-zero: written
		// at the end of the list every time, kept by moving the end past
		// it (a branch here would be mispredicted about as often as
		// not).
		k := len(touched)
		if listed && most >= 0 && k+len(tr.postings) > most {
			listed = false
		}
		if listed {
			touched = slices.Grow(touched, len(tr.postings))[:k+len(tr.postings)]
		}
		sc := termScorer{w: w, c0: c0, c1: c1, fresh: fresh, list: listed}
		fresh = false
		var t float64
		switch {
		case ident:
			k, t = sc.addByIdent(tr.postings, tr.lens, refs, dst, touched, k)
		case byRef:
			k, t = sc.addByRef(tr.postings, tr.lens, refs, dst, touched, k)
		default:
			k, t = sc.addBySlot(tr.postings, tr.lens, dst, touched, k)
		}
		top = max(top, t)
		if listed {
			touched = touched[:k]
		}
	}
	return touched, top, listed
}

// termScorer scores one query term's postings: w is the term's idf times
// k1+1 (and its count in the query), c0 + c1*|d| the document's length
// factor. Its loops are functions of their own so that the compiler keeps
// their state in registers (inside accumulateLocked it spilled the loop's
// index and the length slice's pointer, a store and loads a posting).
type termScorer struct {
	w, c0, c1 float64
	// fresh is set when dst is 0 at every entry the postings score and
	// no two postings score one entry (the first term scored by slot):
	// the kernel then writes 0+s without reading dst.
	fresh bool
	// list is set when the entries made non-zero go to touched; else
	// touched is not written (and may be nil) and k stays.
	list bool
}

// addBySlot adds each posting's score to dst at its document's slot,
// writes the slot to touched[k] and moves k past it when dst was 0 there
// (a branch would be mispredicted about as often as not; only with
// sc.list). It returns k
// and the greatest value it wrote to dst (0 when none). lens holds the
// postings' document lengths (term.lens); removed documents (-1) are
// skipped. touched must have room for every posting from k. With AVX-512
// it scores eight postings at a time (scoreAVX512), with the same results
// bit for bit; addBySlotGo is the loop in Go.
func (sc termScorer) addBySlot(ps []posting, lens []int32, dst []float64, touched []int, k int) (int, float64) {
	top := 0.0
	if useScoreAVX512 && len(ps) >= 8 {
		ps, lens, k, top = sc.addAVX512(ps, lens, nil, nil, dst, touched, k)
	}
	k, t := sc.addBySlotGo(ps, lens, dst, touched, k)
	return k, max(top, t)
}

// addByRef is addBySlot by ref (refs by slot): documents without a ref,
// or with one beyond dst, are skipped too.
func (sc termScorer) addByRef(ps []posting, lens, refs []int32, dst []float64, touched []int, k int) (int, float64) {
	return sc.addRefs(ps, lens, refs, refs, dst, touched, k)
}

// addByIdent is addByRef where every document's ref is its slot
// (Index.identRefs): the kernel scores by slot, reading no refs, and
// leaves the groups with a slot beyond dst to addByRefGo, which skips it.
func (sc termScorer) addByIdent(ps []posting, lens, refs []int32, dst []float64, touched []int, k int) (int, float64) {
	return sc.addRefs(ps, lens, nil, refs, dst, touched, k)
}

// addRefs is addByRef (kernelRefs the refs) or addByIdent (kernelRefs
// nil): the kernel reads kernelRefs, addByRefGo the refs.
func (sc termScorer) addRefs(ps []posting, lens, kernelRefs, refs []int32, dst []float64, touched []int, k int) (int, float64) {
	top := 0.0
	if useScoreAVX512 && len(ps) >= 8 {
		ps, lens, k, top = sc.addAVX512(ps, lens, kernelRefs, refs, dst, touched, k)
	}
	k, t := sc.addByRefGo(ps, lens, refs, dst, touched, k)
	return k, max(top, t)
}

// addAVX512 is addBySlot (refs and goRefs nil), addByRef (refs and goRefs
// the refs) or addByIdent (refs nil, goRefs the refs) on the postings of
// ps eight at a time, with scoreAVX512 and the Go loop for the groups it
// leaves; it returns the postings left (fewer than eight) with their
// lengths, k and the greatest value written.
func (sc termScorer) addAVX512(ps []posting, lens, refs, goRefs []int32, dst []float64, touched []int, k int) ([]posting, []int32, int, float64) {
	if sc.list {
		touched = touched[:k+len(ps)]
	}
	lens = lens[:len(ps)]
	a := scoreArgs{
		dst: unsafe.SliceData(dst),
		w:   sc.w, c0: sc.c0, c1: sc.c1,
	}
	if sc.fresh {
		a.fresh = 1
	}
	if !sc.list {
		a.nolist = 1
	}
	var maxDoc int
	switch {
	case refs != nil:
		maxDoc = len(refs)
		a.refs = unsafe.SliceData(refs)
		a.maxRef = uint32(min(len(dst), 1<<31))
	case goRefs != nil:
		maxDoc = min(len(goRefs), len(dst))
	default:
		maxDoc = len(dst)
	}
	a.maxDoc = uint32(min(maxDoc, math.MaxUint32))
	top := 0.0
	for len(ps) >= 8 {
		a.ps, a.lens, a.n = &ps[0], &lens[0], int64(len(ps)&^7)
		if sc.list {
			a.touched = &touched[k]
		}
		scoreAVX512(&a)
		k += int(a.k)
		for _, t := range a.top {
			top = max(top, t)
		}
		ps, lens = ps[a.done:], lens[a.done:]
		if a.done < a.n {
			// Two postings with one entry, or a slot out of range: the
			// group in Go, as it comes.
			var t float64
			if goRefs == nil {
				k, t = sc.addBySlotGo(ps[:8], lens[:8], dst, touched, k)
			} else {
				k, t = sc.addByRefGo(ps[:8], lens[:8], goRefs, dst, touched, k)
			}
			top = max(top, t)
			ps, lens = ps[8:], lens[8:]
		}
	}
	return ps, lens, k, top
}

// addBySlotGo is addBySlot in Go, one posting after the other.
func (sc termScorer) addBySlotGo(ps []posting, lens []int32, dst []float64, touched []int, k int) (int, float64) {
	w, c0, c1, list := sc.w, sc.c0, sc.c1, sc.list
	top := 0.0
	lens = lens[:len(ps)]
	for j, p := range ps {
		dl := lens[j]
		if dl < 0 {
			continue
		}
		e := int(p.doc)
		tf := float64(p.tf)
		s := w * tf / (tf + c0 + c1*float64(dl))
		v := dst[e]
		if list {
			touched[k] = e
			k += b2i(v == 0)
		}
		v += s
		dst[e] = v
		top = max(top, v)
	}
	return k, top
}

// addByRefGo is addByRef in Go, one posting after the other.
func (sc termScorer) addByRefGo(ps []posting, lens, refs []int32, dst []float64, touched []int, k int) (int, float64) {
	w, c0, c1, list := sc.w, sc.c0, sc.c1, sc.list
	top := 0.0
	// dst's bounds checked by the ref's test.
	lens = lens[:len(ps)]
	for j, p := range ps {
		dl, e := lens[j], int(refs[p.doc])
		if dl < 0 || uint(e) >= uint(len(dst)) {
			continue
		}
		tf := float64(p.tf)
		s := w * tf / (tf + c0 + c1*float64(dl))
		v := dst[e]
		if list {
			touched[k] = e
			k += b2i(v == 0)
		}
		v += s
		dst[e] = v
		top = max(top, v)
	}
	return k, top
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// release zeroes the touched accumulator slots and returns buf to the pool.
func (ix *Index) release(buf *searchBuf) {
	for _, slot := range buf.touched {
		buf.acc[slot] = 0
	}
	buf.touched = buf.touched[:0]
	ix.bufs.Put(buf)
}

// better reports whether a ranks before b: higher score, then smaller id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return cmp.Less(a.ID, b.ID)
}

// minHits is a heap whose root is the worst hit kept so far.
type minHits []Hit

func (h minHits) Len() int           { return len(h) }
func (h minHits) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHits) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHits) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *minHits) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
