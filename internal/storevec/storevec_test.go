package storevec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPermuteRows checks Permute against moving the rows into a new
// matrix, on random permutations of every small size.
func TestPermuteRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for _, dim := range []int{1, 3} {
			data := make([]float32, n*dim)
			for i := range data {
				data[i] = float32(i)
			}
			src := make([]int32, n)
			for i, p := range rng.Perm(n) {
				src[i] = int32(p)
			}
			want := make([]float32, 0, n*dim)
			for _, k := range src {
				want = append(want, data[int(k)*dim:(int(k)+1)*dim]...)
			}
			Permute(data, dim, src)
			if !slices.Equal(data, want) {
				t.Fatalf("n %d dim %d src %v:\ngot  %v\nwant %v", n, dim, src, data, want)
			}
		}
	}
}
