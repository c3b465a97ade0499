package offline

// SpeakersInto writes to dst[i] whether ids[i] is one of the speakers
// marked in named (ids out of named's range are not) and returns dst
// (reallocated when short): the question's speaker marks of the turns, a
// pass over every turn of the space. Sixteen turns at a time with AVX-512
// where the CPU has it and the question names at most maxNamedSIMD
// speakers (a comparison each), else with a table of the first 256 ids or
// named itself.
func SpeakersInto(dst []bool, ids []int32, named []bool) []bool {
	if cap(dst) < len(ids) {
		dst = make([]bool, len(ids), len(ids)+len(ids)/4)
	}
	dst = dst[:len(ids)]
	var marked [maxNamedSIMD]int32
	k := 0
	for id, ok := range named {
		if ok {
			if k == len(marked) || int64(id) > 1<<31-1 {
				k = -1
				break
			}
			marked[k] = int32(id)
			k++
		}
	}
	q := 0
	if k >= 0 && useBoundsAVX512 {
		q = len(ids) &^ 15
		if q > 0 {
			speakers16AVX512(&ids[0], &dst[0], q, &marked[0], k)
		}
	}
	speakersGo(dst[q:], ids[q:], named)
	return dst
}

// maxNamedSIMD is the most speakers SpeakersInto's AVX-512 path compares
// with.
const maxNamedSIMD = 8

// speakersGo is SpeakersInto in Go: its reference, and its remainder.
func speakersGo(dst []bool, ids []int32, named []bool) {
	dst = dst[:len(ids)]
	if len(named) <= 256 {
		// Ids below len(named) index a table by their low byte, read
		// without bounds checks; the others are not named.
		var tab [256]bool
		copy(tab[:], named)
		for i, id := range ids {
			dst[i] = uint32(id) < uint32(len(named)) && tab[uint8(id)]
		}
		return
	}
	for i, id := range ids {
		dst[i] = uint32(id) < uint32(len(named)) && named[id]
	}
}
