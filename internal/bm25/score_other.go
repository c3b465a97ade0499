//go:build !amd64

package bm25

// useScoreAVX512 is false off amd64 (termScorer's loops run in Go).
var useScoreAVX512 = false

type scoreArgs struct {
	ps             *posting
	n              int64
	lens, refs     *int32
	maxDoc, maxRef uint32
	dst            *float64
	touched        *int
	w, c0, c1      float64
	fresh, nolist  int64
	top            [8]float64
	k, done        int64
}

func scoreAVX512(a *scoreArgs) { panic("unreachable") }
