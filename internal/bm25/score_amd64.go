package bm25

import "golang.org/x/sys/cpu"

// useScoreAVX512 reports whether termScorer's loops run scoreAVX512 on
// their postings eight at a time (the tail of fewer than eight in Go); the
// scores and touched lists are the same, bit for bit. A variable so that
// the tests can compare both paths.
var useScoreAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512CD

// scoreArgs are scoreAVX512's arguments and results (the assembly reads
// the fields by their offsets, go_asm.h).
type scoreArgs struct {
	ps   *posting
	n    int64  // postings at ps, a positive multiple of 8
	lens *int32 // the postings' document lengths (term.lens), n of them
	refs *int32 // by slot, or nil to score by slot
	// maxDoc bounds the postings' slots: len(refs) by ref, len(dst) by
	// slot (and no more than len(refs) by ident). A group of eight with
	// a slot at or beyond it stops the kernel (the Go loop then panics
	// as it would have, or by ident skips the slot).
	maxDoc uint32
	// maxRef bounds the refs: min(len(dst), 1<<31); refs at or beyond it
	// are skipped (by ref only).
	maxRef    uint32
	dst       *float64
	touched   *int // the entry k of the callers' touched (room for n)
	w, c0, c1 float64
	// fresh is 1 when dst is 0 at every entry the postings score
	// (termScorer.fresh): the kernel adds the scores to 0, not to
	// dst's entries, which it does not read.
	fresh int64
	// nolist is 1 when the kernel lists no entries (termScorer.list
	// unset): touched is not written and k stays 0.
	nolist int64
	// top holds per lane the greatest of 0 and the values the kernel
	// wrote to dst (out).
	top [8]float64
	// k is how many refs or slots the kernel listed at touched (out), done
	// how many postings it scored (out): n, or less when it stopped at a
	// group it leaves to Go (two postings with one entry of dst, or a slot
	// out of range).
	k, done int64
}

// scoreAVX512 is termScorer.addBySlotGo (refs nil) or addByRefGo on
// a.n postings, eight at a time: the lengths loaded, the refs gathered (VPGATHERDD),
// the scores with the Go loop's operations in its order (no fused
// multiply-add), the entries of dst gathered and scattered back
// (VGATHERDPD, VSCATTERDPD; with fresh not gathered but taken as 0),
// the new entries compressed into touched, the greatest value written
// per lane kept in top. It
// stops before a group in which two scored postings have the same entry of
// dst (VPCONFLICTD; their adds must be taken one after the other) or a
// slot is out of range. The CPU must have AVX512F, VL and CD.
//
//go:noescape
func scoreAVX512(a *scoreArgs)
