package bm25

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// have512 is useScoreAVX512 as the CPU sets it.
var have512 = useScoreAVX512

// skipNoScoreAVX512 skips a test of scoreAVX512 on a CPU without it.
func skipNoScoreAVX512(t testing.TB) {
	t.Helper()
	if !useScoreAVX512 {
		t.Skip("no AVX-512 (F, VL, CD) on this CPU")
	}
}

// scoreCase is one term's postings scored into dst, as accumulateLocked
// scores them: by slot when refs is nil, by ident when ident (refs then
// equal to the slots), listing the entries in touched unless unlisted
// (run sets sc.list).
type scoreCase struct {
	sc         termScorer
	ps         []posting
	lens, refs []int32
	ident      bool
	unlisted   bool
	dst        []float64 // on entry
	k          int       // entries already in touched
}

// run scores c with the kernel (fast) or the Go loop alone, on copies,
// and returns dst, touched[:k] and the greatest value written; a panic
// comes back as its message (and touched nil: the entries past k are not
// the same).
func (c *scoreCase) run(fast bool) (dst []float64, touched []int, top float64, panicked string) {
	defer func(old bool) { useScoreAVX512 = old }(useScoreAVX512)
	useScoreAVX512 = fast
	dst = slices.Clone(c.dst)
	touched = make([]int, c.k+len(c.ps))
	for i := range c.k {
		touched[i] = -100 - i
	}
	sc, k0 := c.sc, c.k
	sc.list = !c.unlisted
	if c.unlisted {
		// Not written: nil, and k must stay.
		touched, k0 = nil, 0
	}
	defer func() {
		if p := recover(); p != nil {
			panicked, touched = fmt.Sprint(p), nil
		}
	}()
	// The postings' lengths, as term.lens holds them (a slot past the
	// documents gets one, so that its panic is the refs' or dst's).
	lens := make([]int32, len(c.ps))
	for j, p := range c.ps {
		if int(p.doc) < len(c.lens) {
			lens[j] = c.lens[p.doc]
		}
	}
	var k int
	switch {
	case c.refs == nil:
		k, top = sc.addBySlot(c.ps, lens, dst, touched, k0)
	case c.ident:
		k, top = sc.addByIdent(c.ps, lens, c.refs, dst, touched, k0)
	default:
		k, top = sc.addByRef(c.ps, lens, c.refs, dst, touched, k0)
	}
	if c.unlisted && k != 0 {
		panic(fmt.Sprintf("unlisted, yet k %d", k))
	}
	return dst, touched[:k], top, ""
}

// check fails t unless the kernel's dst, touched and greatest value
// written equal the Go loop's, bit for bit (or both panic alike), and that
// value is the greatest of 0 and the entries the scores changed.
func (c *scoreCase) check(t testing.TB, name string) {
	t.Helper()
	dst, touched, top, p := c.run(true)
	wantDst, wantTouched, wantTop, wantP := c.run(false)
	if p != wantP {
		t.Fatalf("%s: panic %q with AVX-512, %q in Go", name, p, wantP)
	}
	if !slices.Equal(touched, wantTouched) {
		t.Fatalf("%s: touched %v with AVX-512, %v in Go", name, touched, wantTouched)
	}
	for i := range dst {
		if math.Float64bits(dst[i]) != math.Float64bits(wantDst[i]) {
			t.Fatalf("%s: dst[%d] = %v with AVX-512, %v in Go", name, i, dst[i], wantDst[i])
		}
	}
	if math.Float64bits(top) != math.Float64bits(wantTop) {
		t.Fatalf("%s: greatest value written %v with AVX-512, %v in Go", name, top, wantTop)
	}
	if p != "" {
		return
	}
	changed := 0.0
	for i := range dst {
		if dst[i] != c.dst[i] {
			changed = max(changed, dst[i])
		}
	}
	if top != changed {
		t.Fatalf("%s: greatest value written %v, greatest entry changed %v", name, top, changed)
	}
}

// randomScoreCase returns a case of n postings over docs documents:
// distinct ascending slots (as an index holds them) or, with repeats,
// slots drawn at random; some documents removed, some without a ref, some
// refs beyond dst, refs drawn from few values when dup (so that one group
// has two postings with one entry) or ascending with the slots (as the
// engine's mostly are, some equal to the one before) when sorted, and some
// entries of dst already scored by an earlier term.
func randomScoreCase(r *rand.Rand, n, docs int, byRef, repeats, dup, sorted bool) *scoreCase {
	c := &scoreCase{
		// Awkward factors, so that any other order of the operations
		// rounds differently.
		sc:   termScorer{w: 0.1 + 7*r.Float64(), c0: 0.3 * r.Float64(), c1: r.Float64() / (1 + 20*r.Float64())},
		lens: make([]int32, docs),
		k:    r.IntN(5),
	}
	for i := range c.lens {
		c.lens[i] = int32(r.IntN(60))
		if r.IntN(6) == 0 {
			c.lens[i] = -1
		}
	}
	ndst := docs
	if byRef {
		ndst = 1 + r.IntN(docs+docs/2+1)
		c.refs = make([]int32, docs)
		next := int32(0)
		for i := range c.refs {
			switch x := r.IntN(10); {
			case sorted && x > 1:
				c.refs[i] = next
				next += int32(r.IntN(3))
			case x == 0:
				c.refs[i] = -1
			case x == 1:
				c.refs[i] = int32(ndst + r.IntN(50)) // beyond dst
			case dup:
				c.refs[i] = int32(r.IntN(min(ndst, 12)))
			default:
				c.refs[i] = int32(r.IntN(ndst))
			}
		}
	}
	c.dst = make([]float64, ndst)
	for i := range c.dst {
		if r.IntN(3) == 0 {
			c.dst[i] = r.Float64() * 10
		}
	}
	var slots []int
	if repeats {
		for range n {
			slots = append(slots, r.IntN(docs))
		}
	} else {
		slots = r.Perm(docs)[:n]
		slices.Sort(slots)
	}
	for _, s := range slots {
		c.ps = append(c.ps, posting{doc: int32(s), tf: int32(1 + r.IntN(4))})
	}
	return c
}

// TestScoreAVX512 checks termScorer's loops with scoreAVX512 against the
// Go loops, bit for bit: by slot and by ref, on every number of postings
// to 40 and longer, with removed documents, documents without a ref, refs
// beyond dst, refs shared by several documents and repeated slots (groups
// the kernel leaves to Go), refs ascending with the slots (some equal
// neighbours), entries already scored, and no postings.
func TestScoreAVX512(t *testing.T) {
	skipNoScoreAVX512(t)
	r := rand.New(rand.NewPCG(71, 72))
	sizes := []int{0, 255, 1000, 4000}
	for n := range 41 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		for trial := range 20 {
			byRef, repeats, dup, sorted := trial%2 == 1, trial%3 == 2, trial%4 == 3, trial%5 < 2
			docs := n + r.IntN(3*n+2)
			c := randomScoreCase(r, n, docs, byRef, repeats, dup, sorted)
			c.unlisted = trial%7 == 6
			c.check(t, fmt.Sprintf("n=%d trial %d (by ref %v, repeats %v, dup %v, sorted %v, unlisted %v)", n, trial, byRef, repeats, dup, sorted, c.unlisted))
		}
	}
}

// TestScoreAVX512OutOfRange checks that a slot beyond the lengths (or,
// by slot, beyond dst) panics with the kernel as it does in Go, after the
// same groups.
func TestScoreAVX512OutOfRange(t *testing.T) {
	skipNoScoreAVX512(t)
	r := rand.New(rand.NewPCG(73, 74))
	for _, byRef := range []bool{false, true} {
		c := randomScoreCase(r, 40, 100, byRef, false, false, false)
		c.ps[21].doc = 100
		c.check(t, fmt.Sprintf("slot past lens, by ref %v", byRef))
		if !byRef {
			c.ps[21].doc = 50
			c.dst = c.dst[:50]
			c.check(t, "slot past dst")
		}
	}
}

// TestScoreAVX512Fresh checks the kernel on the first term scored by slot
// or by ident (termScorer.fresh: dst zero at every posting's entry, which
// it does not read) against the Go loops, bit for bit, and by ident (refs
// equal to the slots, dst sometimes shorter than the documents) without
// fresh too.
func TestScoreAVX512Fresh(t *testing.T) {
	skipNoScoreAVX512(t)
	r := rand.New(rand.NewPCG(77, 78))
	sizes := []int{255, 1000, 4000}
	for n := range 41 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		for trial := range 12 {
			ident, fresh := trial%2 == 1, trial%3 != 2
			docs := n + r.IntN(3*n+2)
			c := randomScoreCase(r, n, docs, false, false, false, true)
			c.sc.fresh = fresh
			c.unlisted = trial%5 == 4
			if ident {
				c.ident = true
				c.refs = make([]int32, docs)
				for i := range c.refs {
					c.refs[i] = int32(i)
				}
				if trial%4 == 1 {
					c.dst = c.dst[:r.IntN(docs+1)] // slots beyond dst
				}
			}
			if fresh {
				for _, p := range c.ps {
					if int(p.doc) < len(c.dst) {
						c.dst[p.doc] = 0
					}
				}
			}
			c.check(t, fmt.Sprintf("n=%d trial %d (ident %v, fresh %v, unlisted %v)", n, trial, ident, fresh, c.unlisted))
		}
	}
}

// TestScoreRefsAVX512 checks ScoreRefs, Scores and Search on a corpus
// with the kernel against them in Go.
func TestScoreRefsAVX512(t *testing.T) {
	skipNoScoreAVX512(t)
	defer func(old bool) { useScoreAVX512 = old }(useScoreAVX512)
	docs, queries := synthCorpus(5000)
	ix := New(Options{})
	batch := make([]Doc, len(docs))
	for i, d := range docs {
		batch[i] = Doc{ID: fmt.Sprint(i), Ref: (i * 7) % 4500, Text: d} // some refs shared
	}
	ix.AddBatch(batch)
	for i := range 300 {
		ix.Remove(fmt.Sprint(i * 13))
	}
	for _, q := range queries {
		var dst [2][]float64
		var touched [2][]int
		var scores [2]map[string]float64
		var hits [2][]Hit
		for j, fast := range []bool{false, true} {
			useScoreAVX512 = fast
			dst[j] = make([]float64, 4000)
			touched[j] = ix.ScoreRefs(q, dst[j], nil)
			scores[j] = ix.Scores(q)
			hits[j] = ix.Search(q, 0)
		}
		if !slices.Equal(touched[0], touched[1]) || !slices.EqualFunc(dst[0], dst[1], func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b)
		}) {
			t.Fatalf("%q: ScoreRefs differ with AVX-512", q)
		}
		if len(scores[0]) != len(scores[1]) {
			t.Fatalf("%q: Scores has %d documents with AVX-512, %d in Go", q, len(scores[1]), len(scores[0]))
		}
		for id, s := range scores[0] {
			if math.Float64bits(scores[1][id]) != math.Float64bits(s) {
				t.Fatalf("%q: Scores[%s] = %v with AVX-512, %v in Go", q, id, scores[1][id], s)
			}
		}
		if !slices.Equal(hits[0], hits[1]) {
			t.Fatalf("%q: Search differs with AVX-512", q)
		}
	}
}

// TestScoreRefsIdent checks ScoreRefsTop on an index whose refs are its
// slots (Index.identRefs: scored by slot, the first term without reading
// dst) against the Go loops alone, bit for bit, and its greatest score
// against dst's: after a batch, with removed documents, with dst shorter
// than the documents, after adds that keep the refs the slots and one that
// does not, after MapRefs moves the refs and back, and after a compaction
// (its slots moved, then the refs mapped to them).
func TestScoreRefsIdent(t *testing.T) {
	defer func(old bool) { useScoreAVX512 = old }(useScoreAVX512)
	docs, queries := synthCorpus(3000)
	ix := New(Options{})
	batch := make([]Doc, len(docs))
	for i, d := range docs {
		batch[i] = Doc{ID: fmt.Sprint(i), Ref: i, Text: d}
	}
	ix.AddBatch(batch)
	check := func(stage string, ident bool) {
		t.Helper()
		if ix.identRefs != ident {
			t.Fatalf("%s: identRefs %v, want %v", stage, ix.identRefs, ident)
		}
		if err := termLensErr(ix); err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		n, scored := int(slices.Max(ix.refs))+1, 0
		for _, size := range []int{n, n - n/4} {
			for _, q := range append(queries[:16:16], queries[0]+" "+queries[1]) {
				var dst [2][]float64
				var touched [2][]int
				var top [2]float64
				for j, fast := range []bool{false, true} {
					useScoreAVX512 = fast && have512
					dst[j] = make([]float64, size)
					touched[j], top[j] = ix.ScoreRefsTop(q, dst[j], nil)
				}
				if !slices.Equal(touched[0], touched[1]) || !slices.EqualFunc(dst[0], dst[1], func(a, b float64) bool {
					return math.Float64bits(a) == math.Float64bits(b)
				}) {
					t.Fatalf("%s, %d entries, %q: ScoreRefsTop differs from Go's", stage, size, q)
				}
				greatest := slices.Max(append(dst[0], 0))
				scored += len(touched[0])
				if top[0] != greatest || top[1] != greatest {
					t.Fatalf("%s, %d entries, %q: greatest score %v (Go %v), want %v", stage, size, q, top[1], top[0], greatest)
				}
			}
		}
		if scored == 0 {
			t.Fatalf("%s: nothing scored", stage)
		}
	}
	check("batch", true)
	for i := range 40 {
		ix.Remove(fmt.Sprint(i * 31))
	}
	check("removed", true)
	ix.AddRef("new", len(ix.docs), docs[5])
	ix.AddRef("7", len(ix.docs), docs[6]) // a replacement
	check("added", true)
	ix.MapRefs(func(ref int) int { return ref + 3 })
	check("refs moved", false)
	ix.MapRefs(func(ref int) int { return ref - 3 })
	check("refs moved back", true)
	for i := range 2400 {
		ix.Remove(fmt.Sprint(i))
	}
	if ix.compacts == 0 {
		t.Fatal("no compaction")
	}
	check("compacted", false) // the refs kept, the slots moved
	slotOf := map[int]int{}
	for _, slot := range ix.ids {
		slotOf[int(ix.refs[slot])] = int(slot)
	}
	ix.MapRefs(func(ref int) int { return slotOf[ref] })
	check("refs the slots again", true)
	ix.AddRef("other", 5, docs[8])
	check("ref not the slot", false)
}

// TestScoreRefsFew checks ScoreRefsFew against ScoreRefsTop, with the
// kernel and in Go: the same scores and greatest score, bit for bit; with
// listed, every ref set (no more than most), else a prefix of them; and
// listed whenever most leaves room for every posting. By ident (refs the
// slots) and by ref (refs shuffled).
func TestScoreRefsFew(t *testing.T) {
	defer func(old bool) { useScoreAVX512 = old }(useScoreAVX512)
	docs, queries := synthCorpus(3000)
	r := rand.New(rand.NewPCG(79, 80))
	perm := r.Perm(len(docs))
	for _, ident := range []bool{true, false} {
		ix := New(Options{})
		batch := make([]Doc, len(docs))
		for i, d := range docs {
			batch[i] = Doc{ID: fmt.Sprint(i), Ref: i, Text: d}
			if !ident {
				batch[i].Ref = perm[i]
			}
		}
		ix.AddBatch(batch)
		unlisted := 0
		for _, fast := range []bool{false, true} {
			useScoreAVX512 = fast && have512
			for _, q := range queries {
				want := make([]float64, len(docs))
				wantTouched, wantTop := ix.ScoreRefsTop(q, want, nil)
				for _, most := range []int{0, 5, 40, 200, len(docs), 1 << 30} {
					dst := make([]float64, len(docs))
					out, top, listed := ix.ScoreRefsFew(q, dst, nil, most)
					if !slices.EqualFunc(dst, want, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) || math.Float64bits(top) != math.Float64bits(wantTop) {
						t.Fatalf("ident %v, fast %v, %q, most %d: scores differ from ScoreRefsTop's", ident, fast, q, most)
					}
					switch {
					case listed && (!slices.Equal(out, wantTouched) || len(out) > most):
						t.Fatalf("ident %v, fast %v, %q, most %d: listed %v, want %v", ident, fast, q, most, out, wantTouched)
					case !listed && (most >= 1<<30 || !slices.Equal(out, wantTouched[:len(out)])):
						t.Fatalf("ident %v, fast %v, %q, most %d: not listed, with %v of %v", ident, fast, q, most, out, wantTouched)
					case !listed:
						unlisted++
					}
				}
			}
		}
		if unlisted == 0 {
			t.Fatalf("ident %v: every list complete", ident)
		}
	}
}

// FuzzScoreAVX512 checks the kernel against the Go loops on cases built
// from the fuzzer's bytes: a header of the factors and shape, then per
// posting its slot step (or slot), tf, and its document's length and ref
// (or ref step); the shape's bits choose by ref, repeated slots, sorted
// refs, unlisted (no touched list) and, by slot without repeats, fresh.
func FuzzScoreAVX512(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a"))
	r := rand.New(rand.NewPCG(75, 76))
	for range 8 {
		b := make([]byte, 16+4*r.IntN(60))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		skipNoScoreAVX512(t)
		if len(b) < 16 {
			return
		}
		h := binary.LittleEndian.Uint64(b)
		c := &scoreCase{
			sc: termScorer{
				w:  0.05 + float64(h&0xffff)/1000,
				c0: float64(h>>16&0xffff) / 50000,
				c1: float64(h>>32&0xffff) / 3e5,
			},
			k: int(h >> 48 & 3),
		}
		mode := b[8]
		byRef, repeats := mode&1 != 0, mode&2 != 0
		c.unlisted = mode&0x40 != 0
		ndst := 1 + int(b[9])
		b = b[16:]
		n := len(b) / 4
		docs := 1
		for i := range n {
			p := b[4*i : 4*i+4]
			d := int(p[0])
			if !repeats && i > 0 {
				d = int(c.ps[i-1].doc) + 1 + int(p[0]&7)
			}
			docs = max(docs, d+1)
			c.ps = append(c.ps, posting{doc: int32(d), tf: int32(1 + p[1]&15)})
		}
		c.lens = make([]int32, docs)
		if byRef {
			c.refs = make([]int32, docs)
			for i := range c.refs {
				c.refs[i] = -1
			}
		} else {
			ndst = docs
		}
		for i := range c.lens {
			c.lens[i] = -1
		}
		sorted, next := mode&0x80 != 0, int32(0)
		for i, p := range c.ps {
			q := b[4*i : 4*i+4]
			c.lens[p.doc] = int32(q[2]) - 8 // some removed
			switch {
			case byRef && sorted && q[3] >= 8:
				c.refs[p.doc] = next // ascending, some equal neighbours
				next += int32(q[3] & 3)
			case byRef:
				c.refs[p.doc] = int32(q[3]) - 4 // some none, some beyond dst, some shared
			}
		}
		c.dst = make([]float64, ndst)
		for i := range c.dst {
			if i%5 == int(mode>>2)%5 {
				c.dst[i] = float64(i) / 3
			}
		}
		if mode&0x20 != 0 && !byRef && !repeats {
			// The first term scored by slot (fresh): dst 0 at its
			// postings' entries.
			c.sc.fresh = true
			for _, p := range c.ps {
				c.dst[p.doc] = 0
			}
		}
		c.check(t, "fuzz")
	})
}
