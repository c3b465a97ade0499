package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDecodeLEIntoMatchesSlow checks that DecodeLEInto (a byte copy
// on a little-endian machine) gives the bits decodeLESlow gives, for
// random bytes (NaN payloads, infinities and subnormals included), at every
// length and at offsets into a larger matrix.
func TestDecodeLEIntoMatchesSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		b := make([]byte, 4*n+3) // longer than needed: the tail is not read
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if n > 2 {
			copy(b[0:4], []byte{1, 0, 192, 127}) // a NaN with a payload
			copy(b[4:8], []byte{0, 0, 128, 255}) // -Inf
			copy(b[8:12], []byte{1, 0, 0, 0})    // the least subnormal
		}
		want := make([]float32, n)
		decodeLESlow(want, b)
		got := make([]float32, 3*n+1)
		DecodeLEInto(got[n:2*n], b)
		for i := range n {
			if math.Float32bits(got[n+i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: value %d is %08x, want %08x", n, i, math.Float32bits(got[n+i]), math.Float32bits(want[i]))
			}
		}
		for i, x := range got {
			if (i < n || i >= 2*n) && x != 0 {
				t.Fatalf("n=%d: wrote outside the destination at %d", n, i)
			}
		}
	}
}

func TestDecodeLERow(t *testing.T) {
	vals := []float32{1.5, -2, 3}
	data := EncodeLE(vals)
	asked := 0
	rowOf := func(i int) func(string) int {
		return func(id string) int {
			asked++
			if id != "x" {
				t.Fatalf("row asked for %q", id)
			}
			return i
		}
	}
	dst := make([]float32, 2*3)
	if !DecodeLERow(dst, 3, rowOf(1), "x", data) || !slices.Equal(dst[3:], vals) || !slices.Equal(dst[:3], []float32{0, 0, 0}) {
		t.Fatalf("row 1: %v", dst)
	}
	for _, c := range []struct {
		name string
		row  int
		data []byte
		ask  int
	}{
		{"short data", 0, data[:8], 0},
		{"skipped", -1, data, 1},
		{"past the matrix", 2, data, 1},
	} {
		asked = 0
		clear(dst)
		if DecodeLERow(dst, 3, rowOf(c.row), "x", c.data) || slices.ContainsFunc(dst, func(v float32) bool { return v != 0 }) || asked != c.ask {
			t.Errorf("%s: written, or row asked %d times (want %d): %v", c.name, asked, c.ask, dst)
		}
	}
}
