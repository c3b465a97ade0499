package higmem

import (
	"fmt"
	"slices"
	"testing"

	"github.com/higmem/higmem/internal/bm25"
)

// TestScratchLexReuse checks that a scratch scoring a large index, then a
// small one with most documents matching (cleared wholesale), then the
// large one again, gives each time the scores of a fresh scratch, zero
// wherever nothing matched.
func TestScratchLexReuse(t *testing.T) {
	index := func(n int, word func(i int) string) *bm25.Index {
		ix := bm25.New(bm25.Options{})
		for i := range n {
			ix.AddRef(fmt.Sprint(i), i, word(i)+" filler text")
		}
		return ix
	}
	big := index(4000, func(i int) string {
		if i%7 == 0 {
			return "lake"
		}
		return "hill"
	})
	small := index(900, func(int) string { return "lake boat" })
	sc := &scratch{}
	for step, c := range []struct {
		ix    *bm25.Index
		n     int
		query string
	}{{big, 4000, "hill lake"}, {small, 900, "lake"}, {big, 4000, "lake"}, {small, 900, "river"}, {big, 4000, "boat"}} {
		got, touched := sc.lexScores(c.ix, c.n, c.query)
		want, wantTouched := (&scratch{}).lexScores(c.ix, c.n, c.query)
		if !slices.Equal(got, want) || !slices.Equal(touched, wantTouched) {
			t.Fatalf("step %d (%q, %d docs): scores differ from a fresh scratch's", step, c.query, c.n)
		}
		for i, x := range sc.lex[len(sc.lex):cap(sc.lex)] {
			if x != 0 {
				t.Fatalf("step %d: lex[%d] = %v past the length", step, len(sc.lex)+i, x)
			}
		}
	}
}
