package vec

// The selection of EstimateTiered's int8 rescan: of the rows the first
// pass listed (with a provisional floor), those whose upper bound reaches
// the final floor.

// pick sets l.sel and l.at to the rows of l.rows whose est+err reaches
// floor, in order, and their places in l.rows: without a branch on the
// comparison (about half of the rows listed pass it, at random, on the
// bench's slow questions, a mispredicted branch each), by writing every
// row and advancing past those kept; with AVX-512 eight rows at a time
// (pickAVX512). pickRef is its reference.
func (l *list4) pick(floor float64) {
	n := len(l.rows)
	if cap(l.sel) < n {
		l.sel = make([]int32, n, n+n/4)
	}
	if cap(l.at) < n {
		l.at = make([]int32, n, n+n/4)
	}
	sel, at := l.sel[:n], l.at[:n]
	est, err := l.est[:n], l.err[:n]
	j, k0 := 0, 0
	if useAVX512 && n >= 8 {
		// Eight at a time with AVX-512 (the same rows), the rest below.
		k0 = n &^ 7
		j = pickAVX512(&l.rows[0], &est[0], &err[0], k0, floor, &sel[0], &at[0])
	}
	for k := k0; k < n; k++ {
		// j <= k < n: in range.
		sel[j], at[j] = l.rows[k], int32(k)
		if est[k]+err[k] >= floor {
			j++
		}
	}
	l.sel, l.at = sel[:j], at[:j]
}

// pickRef is pick with a branch: its reference.
func (l *list4) pickRef(floor float64) {
	l.sel, l.at = l.sel[:0], l.at[:0]
	for k, i := range l.rows {
		if l.est[k]+l.err[k] >= floor {
			l.sel, l.at = append(l.sel, i), append(l.at, int32(k))
		}
	}
}
