//go:build !amd64

package offline

// useBoundsAVX2 is false off amd64 (scoreBoundsSingle runs in Go).
var useBoundsAVX2 = false

// useBoundsAVX512 is false off amd64.
var useBoundsAVX512 = false

type boundsArgs struct {
	rel                                           *float64
	links, cues, named, vis                       *uint8
	words, event                                  *int32
	best                                          *float64
	maxEvent                                      int64
	lt                                            *[lengthTableSize]float64
	out                                           *float64
	n                                             int64
	prev, next, question, counted, dated, speaker [4]float64
	far, es                                       [4]float64
	factors                                       [16]float64
	top                                           [8]float64
	arg                                           [8]int64
	long                                          uint32
}

func scoreBounds4AVX2(a *boundsArgs) { panic("unreachable") }

type relBoundsArgs struct {
	hi, lex, relHi    *float64
	events            *int32
	eb                *float64
	eLo, eHi          int64
	maxLo, mean, perD float64
	invLex            float64
	top, over         *int
	n                 int64
	ntop, nover       int64
	pre               *int
	preAt             float64
	npre              int64
}

func relBounds4AVX2(a *relBoundsArgs) { panic("unreachable") }

func listAtLeast4AVX2(xs *float64, n int, floor float64, dst *int) int { panic("unreachable") }

func maxAbove4AVX2(xs *float64, n int) float64 { panic("unreachable") }

func scoreBounds8AVX512(a *boundsArgs) { panic("unreachable") }

func listAtLeast8AVX512(xs *float64, n int, floor float64, dst *int) int { panic("unreachable") }

func relBounds8AVX512(a *relBoundsArgs) { panic("unreachable") }

func speakers16AVX512(ids *int32, dst *bool, n int, named *int32, k int) {
	panic("unreachable")
}
