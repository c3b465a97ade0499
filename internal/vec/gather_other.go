//go:build !amd64

package vec

// useDotsAt is false: DotsAt runs Dot row by row off amd64.
var useDotsAt = false

func dotRowsAt(q []float32, data []float32, dim int, rows []int32, out []float32) {
	panic("unreachable")
}
