//go:build !amd64

package vec

func dotI8(p []int16, codes []int8, dim int, out []int32) {
	for r := range out {
		var s int32
		for j, c := range codes[r*dim : (r+1)*dim] {
			s += int32(p[j]) * int32(c)
		}
		out[r] = s
	}
}

func dotU4(p []int8, codes []byte, rowBytes int, out []int32) { dotU4Go(p, codes, rowBytes, out) }

func (sc *scan4) block(q4 *quant4, est, err []float64, b, e int, floor, maxLow float64, l *list4) float64 {
	return sc.blockGo(q4, est, err, b, e, floor, maxLow, l)
}

// useAVX2 is false: the Go loops run everywhere.
const useAVX2 = false

// useAVX512 is false: no AVX-512 kernels off amd64.
const useAVX512 = false

func zmmQuery(p []int8) []int8 { return nil }

func dotI8RowsAVX512(p []int16, codes []int8, dim int, rows, out []int32, terms *termsI8, ahead int) {
	panic("unreachable")
}

func rescanAVX512(a *rescanArgs) { panic("unreachable") }

func pickAVX512(rows *int32, est, err *float64, n int, floor float64, sel, at *int32) int {
	panic("unreachable")
}
