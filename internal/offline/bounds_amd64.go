package offline

import "golang.org/x/sys/cpu"

// useBoundsAVX2 reports whether scoreBoundsSingle may run
// scoreBounds4AVX2.
var useBoundsAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// boundsArgs are scoreBounds4AVX2's arguments and results (the
// assembly reads the fields by their offsets, go_asm.h).
type boundsArgs struct {
	// rel points at the relevance two turns before the first turn; the
	// others at the first turn's entry.
	rel                     *float64
	links, cues, named, vis *uint8
	words, event            *int32
	best                    *float64
	maxEvent                int64 // len(best) - 1
	w                       *[64][4]float64
	g                       *[16]float64
	lt                      *[lengthTableSize]float64
	es                      float64
	out                     *float64
	n                       int64 // a positive multiple of 4
	// top and arg are, per lane (turns k with k%4 == lane), the best
	// positive bound and its first turn (0 and 0 when none); long ORs
	// the words.
	top  [4]float64
	arg  [4]int64
	long uint32
}

// scoreBounds4AVX2 is scoreBoundsSingle's two loops on n turns, four at a
// time: the neighbour weights, event bests and factors gathered from
// their tables, the sums with fused multiply-adds (a bound: relMargin
// covers their rounding as it covers the Go loops'). The CPU must have
// AVX2 and FMA.
//
//go:noescape
func scoreBounds4AVX2(a *boundsArgs)
