//go:build !amd64

package rank

// useAVX2 is false: the Go loops run everywhere.
const useAVX2 = false

func lexMaxAVX2(lex []float64) (maxBits, or uint64) { panic("unreachable") }

func blockBoundsAVX2(lex, hi []float64, inv float64, bs int, bmax []float64) (nan bool) {
	panic("unreachable")
}

func atLeastAVX2(hi []float64, base int, floor float64, out []int32) int {
	panic("unreachable")
}
