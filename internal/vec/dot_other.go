//go:build !amd64

package vec

func dotRows(q []float32, data []float32, dim int, out []float32) {
	for r := range out {
		out[r] = Dot(q[:dim], data[r*dim:(r+1)*dim])
	}
}

const haveDotRows = false
