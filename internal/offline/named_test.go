package offline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpeakersInto checks SpeakersInto against a plain loop, on both of
// its paths where the CPU has AVX-512: ids out of named's range (negative
// or past it), up to and past maxNamedSIMD named speakers, named tables
// shorter and longer than 256, and lengths that are not multiples of 16.
func TestSpeakersInto(t *testing.T) {
	defer func(old bool) { useBoundsAVX512 = old }(useBoundsAVX512)
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 500 {
		speakers := r.IntN(300)
		named := make([]bool, speakers)
		marks := []int{0, 1, 2, 3, maxNamedSIMD, maxNamedSIMD + 1, speakers}[r.IntN(7)]
		for range marks {
			if speakers > 0 {
				named[r.IntN(speakers)] = true
			}
		}
		ids := make([]int32, r.IntN(200))
		for i := range ids {
			ids[i] = int32(r.IntN(speakers+20)) - 10
		}
		if trial%10 == 0 {
			// Every speaker named, and ids out of range whose low byte
			// is a named one.
			for i := range named {
				named[i] = true
			}
			for i := range ids {
				ids[i] = []int32{-1, -256, 256, 257, 511, 1 << 20, int32(speakers)}[r.IntN(7)]
			}
		}
		want := make([]bool, len(ids))
		for i, id := range ids {
			want[i] = id >= 0 && int(id) < len(named) && named[id]
		}
		for _, simd := range []bool{false, useBoundsAVX512} {
			useBoundsAVX512 = simd
			got := SpeakersInto([]bool{true, true}, ids, named)
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d (avx512 %v): ids %v named %v: got %v, want %v", trial, simd, ids, named, got, want)
			}
		}
	}
}

// BenchmarkSpeakersInto marks the turns of one named speaker of two
// among 100,000, as a question naming a person does on the bench's space.
func BenchmarkSpeakersInto(b *testing.B) {
	defer func(old bool) { useBoundsAVX512 = old }(useBoundsAVX512)
	r := rand.New(rand.NewPCG(23, 24))
	ids := make([]int32, 100000)
	for i := range ids {
		ids[i] = int32(r.IntN(2))
	}
	named := []bool{false, true}
	dst := make([]bool, len(ids))
	for _, simd := range []bool{false, useBoundsAVX512} {
		useBoundsAVX512 = simd
		b.Run(map[bool]string{false: "go", true: "avx512"}[simd], func(b *testing.B) {
			for b.Loop() {
				dst = SpeakersInto(dst, ids, named)
			}
		})
	}
}
