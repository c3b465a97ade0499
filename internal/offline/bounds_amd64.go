package offline

import "golang.org/x/sys/cpu"

// useBoundsAVX2 reports whether scoreBoundsSingle may run
// scoreBounds4AVX2.
var useBoundsAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useBoundsAVX512 reports whether the AVX-512 kernels (scoreBounds8AVX512,
// listAtLeast8AVX512) run before the AVX2 ones, eight turns at a time, with
// the same values bit for bit. A variable so that the tests can compare
// both paths.
var useBoundsAVX512 = useBoundsAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL

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
	lt                      *[lengthTableSize]float64
	out                     *float64
	n                       int64 // a positive multiple of 4
	// The factors the kernel selects per turn by one bit (VPERMILPD reads
	// bit 1 of each lane's control and picks within each 128-bit half):
	// each is {f0, f1, f0, f1}, f1 where the bit is set. prev and next are
	// the shares of the runs just before and after (by linkPrevAsks and
	// linkNextAsks), question (times relMargin), counted, dated and
	// speaker the factors (by the cue bits and the speaker mark; 1, 1 when
	// the question has no such cue). far and es are Tuning.Far and
	// EventShare in every lane.
	prev, next, question, counted, dated, speaker [4]float64
	far, es                                       [4]float64
	// factors are the products of the factors scoreBounds4AVX2 picks by
	// cue byte (bits 0 to 2: question, counted, dated) and speaker mark
	// (bit 3) for scoreBounds8AVX512, in its order (boundFactors).
	factors [16]float64
	// top and arg are, per lane (turns k with k%4 == lane, or k%8 for
	// scoreBounds8AVX512), the best positive bound and its first turn (0
	// and 0 when none); long ORs the words.
	top  [8]float64
	arg  [8]int64
	long uint32
}

// scoreBounds4AVX2 is scoreBoundsSingle's two loops on n turns, four at a
// time, without table gathers: each neighbour's relevance kept or zeroed
// by its link bit (VBLENDVPD on the bit shifted to the sign), the shares
// and factors picked from two constants by one bit each (VPERMILPD), the
// event bests and length factors gathered; the sums with fused
// multiply-adds and the factors multiplied in another order than the
// tables' (a bound: relMargin covers their rounding as it covers the Go
// loops'). The CPU must have AVX2 and FMA.
//
//go:noescape
func scoreBounds4AVX2(a *boundsArgs)

// relBoundsArgs are relBounds4AVX2's arguments and results.
type relBoundsArgs struct {
	// hi (the cosines' upper bounds), lex and relHi point at the first
	// unit's entry, events and eb are nil without events; eb[eLo:eHi]
	// are the event bests owned (0 <= eLo <= eHi <= len(eb)).
	hi, lex, relHi    *float64
	events            *int32
	eb                *float64
	eLo, eHi          int64
	maxLo, mean, perD float64
	invLex            float64
	// top has room for n rows, over for n units, listed as offsets from
	// the first unit.
	top, over *int
	n         int64 // a positive multiple of 4
	// ntop and nover are how many rows and units were listed.
	ntop, nover int64
	// pre, when not nil, has room for n units, listed as offsets from the
	// first where their bound is at least preAt (npre of them), by
	// relBounds8AVX512 only.
	pre   *int
	preAt float64
	npre  int64
}

// relBounds4AVX2 is singlesGo on n units, four at a time: the cosine
// bounds, the rows listed at or above maxLo, the relevance bounds with
// relevanceBound.of's operations in its order (no fused multiply-adds:
// the same values), and each unit's event best where the event is owned,
// one unit after the other (the units of other events, not negative,
// listed in over). The CPU must have AVX2.
//
//go:noescape
func relBounds4AVX2(a *relBoundsArgs)

// listAtLeast4AVX2 writes to dst the offsets i < n of the xs at least
// floor, in order, and returns how many; n is a positive multiple of 4 and
// dst has room for n. The CPU must have AVX2.
//
//go:noescape
func listAtLeast4AVX2(xs *float64, n int, floor float64, dst *int) int

// maxAbove4AVX2 returns the greatest of 0 and the xs[:n] above it (NaN
// ignored, as the loop `if x > m { m = x }` from m = 0); n is a positive
// multiple of 8. The CPU must have AVX2.
//
//go:noescape
func maxAbove4AVX2(xs *float64, n int) float64

// scoreBounds8AVX512 is scoreBounds4AVX2 eight turns at a time (n a
// positive multiple of 8), each turn's bound the same, bit for bit. The CPU
// must have AVX512F, BW and VL.
//
//go:noescape
func scoreBounds8AVX512(a *boundsArgs)

// listAtLeast8AVX512 is listAtLeast4AVX2 eight at a time (n a positive
// multiple of 8). The CPU must have AVX512F.
//
//go:noescape
func listAtLeast8AVX512(xs *float64, n int, floor float64, dst *int) int

// relBounds8AVX512 is relBounds4AVX2 eight units at a time (n a positive
// multiple of 8), the same values. The CPU must have AVX512F, BW and VL.
//
//go:noescape
func relBounds8AVX512(a *relBoundsArgs)

// speakers16AVX512 writes dst[i] = (ids[i] is one of the k ids of named)
// for i below n, a positive multiple of 16, sixteen at a time; k is 0 to
// maxNamedSIMD. The CPU must have AVX512F and AVX512BW.
//
//go:noescape
func speakers16AVX512(ids *int32, dst *bool, n int, named *int32, k int)
