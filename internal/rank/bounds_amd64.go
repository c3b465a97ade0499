package rank

import "golang.org/x/sys/cpu"

// useAVX2 reports whether lexRange and blockBounds run their AVX2 kernels
// (lexMaxAVX2, blockBoundsAVX2) rather than Go loops; the results are the
// same. A variable so that the tests can compare both.
var useAVX2 = cpu.X86.HasAVX2

// lexMaxAVX2 returns the largest of the words of lex as signed integers
// (at least 0) and their bitwise or; len(lex) is a multiple of 8.
//
//go:noescape
func lexMaxAVX2(lex []float64) (maxBits, or uint64)

// blockBoundsAVX2 is blockBounds over len(bmax) blocks of bs rows each (bs
// a positive multiple of 8, lex and hi holding len(bmax)*bs rows), except
// that a block holding a NaN bound is not mended: it reports whether one
// does.
//
//go:noescape
func blockBoundsAVX2(lex, hi []float64, inv float64, bs int, bmax []float64) (nan bool)

// atLeastAVX2 writes base+i for the indexes i of the rows of hi that are
// at least floor into out, in order, and returns their number; len(hi) is
// a multiple of 8 and len(out) at least len(hi).
//
//go:noescape
func atLeastAVX2(hi []float64, base int, floor float64, out []int32) int
