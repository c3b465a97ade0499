package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// skipNoAVX512 skips a test of the AVX-512 kernels on a CPU without them.
func skipNoAVX512(t *testing.T) {
	t.Helper()
	if !useAVX512 {
		t.Skip("no AVX-512 (F, BW, VL, VNNI) on this CPU")
	}
}

// TestDotI8AVX512 checks dotI8AVX512 against dotI8AVX2, dotI8SSE2 and
// plain Go on random rows and at the extremes, with dimensions that leave
// a last 16 bytes and every row count to 9 (the two-row loop and the last
// row).
func TestDotI8AVX512(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(51, 52))
	for _, dim := range []int{16, 32, 48, 64, 80, 256, 368, 384, 400} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 8, 9} {
			for _, kind := range []string{"random", "max", "min"} {
				p := make([]int16, dim)
				codes := make([]int8, n*dim)
				for j := range p {
					p[j] = int16(r.IntN(65535) - 32767)
				}
				for j := range codes {
					codes[j] = int8(r.IntN(256) - 128)
				}
				// The largest sums the caller allows: |p| <= MaxInt32/(dim*127).
				pm := int16(min(32767, math.MaxInt32/(dim*128)))
				switch kind {
				case "max":
					for j := range p {
						p[j] = pm
					}
					for j := range codes {
						codes[j] = 127
					}
				case "min":
					for j := range p {
						p[j] = pm
					}
					for j := range codes {
						codes[j] = -128
					}
				default:
					for j := range p {
						p[j] = int16(int(p[j]) * int(pm) / 32767)
					}
				}
				got, avx2, sse2, want := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
				dotI8AVX512(p, codes, dim, got)
				dotI8AVX2(p, codes, dim, avx2)
				dotI8SSE2(p, codes, dim, sse2)
				for i := range n {
					var s int64
					for j := range dim {
						s += int64(p[j]) * int64(codes[i*dim+j])
					}
					want[i] = int32(s)
				}
				if !slices.Equal(got, want) || !slices.Equal(avx2, want) || !slices.Equal(sse2, want) {
					t.Fatalf("dim %d, %d rows, %s: AVX-512 %v, AVX2 %v, SSE2 %v, want %v", dim, n, kind, got, avx2, sse2, want)
				}
			}
		}
	}
}

// TestZmmQuery checks the reordered query bytes against the codes'
// layout: dotU4Go's sums equal those of the bytes in scan4AVX512's order.
func TestZmmQuery(t *testing.T) {
	for _, rowBytes := range []int{32, 64, 96, 192} {
		p := make([]int8, 2*rowBytes)
		for j := range p {
			p[j] = int8(j)
		}
		z := zmmQuery(p)
		for j := range z {
			// Byte j of z: chunk j/128 (or the last 64), then the low
			// nibbles' codes (byte k of block k/32 of the chunk), then the
			// high ones'.
			c, k := j/128*128, j%128
			want := c + k
			if c+128 <= len(p) {
				half, lane := k/64, k%64
				want = c + lane/32*64 + half*32 + lane%32
			}
			if int(z[j]) != int(int8(want)) {
				t.Fatalf("%d bytes a row: byte %d is %d, want %d", rowBytes, j, z[j], int8(want))
			}
		}
	}
}

// scan4With runs sc.block with the AVX-512 kernel on or off, and with it
// on, its high nibbles taken by GF2P8AFFINEQB (gfni) or by a shift.
func scan4With(avx512, gfni bool, sc *scan4, q4 *quant4, est, err []float64, b, e int, floor, maxLow float64, l *list4) float64 {
	defer func(old, oldGF bool) { useAVX512, useGFNI = old, oldGF }(useAVX512, useGFNI)
	useAVX512, useGFNI = avx512, gfni
	return sc.block(q4, est, err, b, e, floor, maxLow, l)
}

// gfniModes are the values of useGFNI the AVX-512 tests try: false, and
// true where the CPU has GFNI.
func gfniModes() []bool {
	if useGFNI {
		return []bool{false, true}
	}
	return []bool{false}
}

// TestScan4AVX512 checks the fused first pass with AVX-512 (eight rows at
// a time, then AVX2, then Go; the high nibbles by a shift, and by
// GF2P8AFFINEQB where the CPU has GFNI) against it without (AVX2, then Go)
// and against blockGo, bit for bit: estimates, bounds, upper bounds alone,
// the largest lower bound and the list, on rows of 32 to 224 bytes (a last
// 32 bytes or not), rows that are not finite, blocks of 8 to 23 rows and
// blockRows, and floors from -Inf to +Inf and NaN.
func TestScan4AVX512(t *testing.T) {
	skipNoAVX512(t)
	r := rand.New(rand.NewPCG(53, 54))
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	sameList := func(a, b list4) bool {
		return slices.Equal(a.rows, b.rows) && slices.EqualFunc(a.est, b.est, same) && slices.EqualFunc(a.err, b.err, same)
	}
	floors := []float64{math.Inf(-1), -0.05, 0, 0.02, 0.1, math.Inf(1), math.NaN()}
	for _, dim := range []int{16, 64, 96, 256, 320, 384, 416} {
		n := blockRows + 29
		m := Matrix{Dim: dim}
		for i, v := range tieredRows(r, "clustered", n, dim) {
			if i%13 == 6 {
				v[i%dim] = float32(math.Inf(-1))
			}
			m.Append(v)
		}
		m.QuantizeFrom(1)
		q4 := &m.q.q4
		for _, q := range tieredRows(r, "random", 2, dim) {
			p := make([]int8, 2*q4.rowBytes)
			var psum int32
			for j, x := range q {
				p[j] = int8(math.Round(float64(x) * 127 / 0.3))
				psum += int32(p[j])
			}
			sc := scan4{p: p, c: bound4{t: 0.3 / 127, qnorm: 1, ql1: 10, qerr: 0.01, eps: 1e-15, off: 8 * psum}}
			for _, k := range []int{8, 9, 11, 12, 15, 16, 20, 23, blockRows} {
				for _, floor := range floors {
					b := r.IntN(n - k + 1)
					type run struct {
						est, err, hi []float64
						l, lh        list4
						low, lowH    float64
					}
					do := func(f func(est, err []float64, l *list4) float64) run {
						x := run{est: make([]float64, n), err: make([]float64, n), hi: make([]float64, n), l: list4Of(-1), lh: list4Of(-1)}
						x.low = f(x.est, x.err, &x.l)
						x.lowH = f(x.hi, nil, &x.lh)
						return x
					}
					runs := []run{
						do(func(est, err []float64, l *list4) float64 {
							return scan4With(false, false, &sc, q4, est, err, b, b+k, floor, -0.5, l)
						}),
						do(func(est, err []float64, l *list4) float64 { return sc.blockGo(q4, est, err, b, b+k, floor, -0.5, l) }),
					}
					for _, gf := range gfniModes() {
						z := do(func(est, err []float64, l *list4) float64 {
							return scan4With(true, gf, &sc, q4, est, err, b, b+k, floor, -0.5, l)
						})
						for v, o := range runs {
							if !same(z.low, o.low) || !same(z.lowH, o.lowH) || !sameList(z.l, o.l) || !sameList(z.lh, o.lh) ||
								!slices.EqualFunc(z.est, o.est, same) || !slices.EqualFunc(z.err, o.err, same) || !slices.EqualFunc(z.hi, o.hi, same) {
								t.Fatalf("dim %d, rows %d to %d, floor %v: AVX-512 (GFNI %v) differs from %s: lower bound %v (%v), list %v; want %v (%v), %v",
									dim, b, b+k, floor, gf, []string{"AVX2", "Go"}[v], z.low, z.lowH, z.l, o.low, o.lowH, o.l)
							}
						}
					}
				}
			}
		}
	}
}

// TestScan4AVX512Extremes checks the AVX-512 first pass where its sums are
// largest (every code 15, every query byte 127 or -128) against blockGo.
func TestScan4AVX512Extremes(t *testing.T) {
	skipNoAVX512(t)
	for _, dim := range []int{64, 320, 512, 4096} {
		for _, pv := range []int8{127, -128} {
			n := 16
			q4, sc := extremeScan4(n, dim, pv)
			est, err := make([]float64, n), make([]float64, n)
			est2, err2 := make([]float64, n), make([]float64, n)
			var list2 list4
			low2 := sc.blockGo(q4, est2, err2, 0, n, math.Inf(-1), math.Inf(-1), &list2)
			for _, gf := range gfniModes() {
				var list list4
				low := scan4With(true, gf, sc, q4, est, err, 0, n, math.Inf(-1), math.Inf(-1), &list)
				if low != low2 || !slices.Equal(list.rows, list2.rows) || !slices.Equal(est, est2) || !slices.Equal(err, err2) {
					t.Fatalf("dim %d, query %d, GFNI %v: %v ± %v (lower bound %v), Go %v ± %v (%v)", dim, pv, gf, est, err, low, est2, err2, low2)
				}
			}
		}
	}
}

// BenchmarkKernels512 times the first pass (block over 100k rows of 256
// dimensions, the floor at 0.3: about 1% of the rows listed; with AVX2,
// and with AVX-512 with and without GFNI; and over its first 8192 rows,
// which stay in L2), the int8
// rescan of 2000 scattered rows (dotI8Rows: with AVX-512 one call that
// prefetches, with AVX2 dotI8 a row at a time) and of one row (dotI8),
// with the AVX-512 kernels and with the AVX2 ones.
func BenchmarkKernels512(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512 (F, BW, VL, VNNI) on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	n, dim := benchKernelRows, 256
	m := Matrix{Dim: dim}
	for _, v := range tieredRows(r, "sparse", n, dim) {
		m.Append(v)
	}
	m.QuantizeFrom(1)
	q4 := &m.q.q4
	p := make([]int8, 2*q4.rowBytes)
	var psum int32
	for j, x := range tieredRows(r, "sparse", 1, dim)[0] {
		p[j] = int8(math.Round(float64(x) * 127 / 0.3))
		psum += int32(p[j])
	}
	sc := scan4{p: p, c: bound4{t: 0.3 / 127, qnorm: 1, ql1: 10, qerr: 0.01, eps: 1e-15, off: 8 * psum}}
	hi := make([]float64, n)
	p16 := make([]int16, dim)
	for j := range p16 {
		p16[j] = int16(r.IntN(2001) - 1000)
	}
	var out [1]int32
	// The first pass with AVX2, with AVX-512 taking the high nibbles by a
	// shift, and (where the CPU has GFNI) by GF2P8AFFINEQB.
	type mode struct {
		name       string
		avx512, gf bool
	}
	modes := []mode{{"avx2", false, false}, {"avx512-shift", true, false}}
	if useGFNI {
		modes = append(modes, mode{"avx512", true, true})
	}
	// scan4 reads all the rows (12.8 MB at 100k rows: from L3), scan4-8k
	// the first 8192 (1 MB: from L2 once warm), the kernel's own speed.
	for _, rows := range []int{n, min(n, 8192)} {
		name := map[bool]string{true: "scan4/", false: "scan4-8k/"}[rows == n]
		for _, md := range modes {
			b.Run(name+md.name, func(b *testing.B) {
				defer func(old, oldGF bool) { useAVX512, useGFNI = old, oldGF }(useAVX512, useGFNI)
				useAVX512, useGFNI = md.avx512, md.gf
				l := getList4()
				for b.Loop() {
					l.rows, l.est, l.err = l.rows[:0], l.est[:0], l.err[:0]
					for lo := 0; lo < rows; lo += blockRows {
						sc.block(q4, hi, nil, lo, min(lo+blockRows, rows), 0.3, math.Inf(-1), l)
					}
				}
				b.ReportMetric(float64(len(l.rows)), "listed")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
	for _, avx512 := range []bool{false, true} {
		name := map[bool]string{false: "avx2", true: "avx512"}[avx512]
		b.Run("dotI8Rows/"+name, func(b *testing.B) {
			defer func(old bool) { useAVX512 = old }(useAVX512)
			useAVX512 = avx512
			rows, dots := make([]int32, 2000), make([]int32, 2000)
			for j := range rows {
				rows[j] = int32(r.IntN(n))
			}
			for b.Loop() {
				dotI8Rows(p16, m.q, dim, rows, dots)
			}
		})
		b.Run("dotI8/"+name, func(b *testing.B) {
			defer func(old bool) { useAVX512 = old }(useAVX512)
			useAVX512 = avx512
			i := 0
			for b.Loop() {
				dotI8(p16, m.q.codes[i*dim:(i+1)*dim], dim, out[:])
				i = (i + 7919) % n
			}
		})
	}
}

// benchKernelRows is the rows BenchmarkKernels512 scans.
var benchKernelRows = 100000

// TestDotI8Rows checks the rescan's batched dot products (with AVX-512,
// dotI8RowsAVX512; without, dotI8 a row at a time) against plain Go on
// scattered and repeated rows, 1 to 17 of them (fewer and more than its
// prefetch distance, 1 to 16 rows), dimensions with a last 16 bytes.
func TestDotI8Rows(t *testing.T) {
	defer func(old bool, ahead int) { useAVX512, rescanAhead = old, ahead }(useAVX512, rescanAhead)
	r := rand.New(rand.NewPCG(55, 56))
	for _, dim := range []int{16, 48, 64, 256, 368} {
		n := 50
		p := make([]int16, dim)
		for j := range p {
			p[j] = int16(r.IntN(2*4000+1) - 4000)
		}
		q := newQuant(n, dim, n)
		for j := range q.codes {
			q.codes[j] = int8(r.IntN(256) - 128)
		}
		for _, k := range []int{1, 2, 3, 4, 5, 8, 11, 12, 13, 17} {
			rows := make([]int32, k)
			for j := range rows {
				rows[j] = int32(r.IntN(n))
			}
			rows[k-1] = int32(n - 1) // the last row, at the end of codes
			want := make([]int32, k)
			for j, i := range rows {
				for c := range dim {
					want[j] += int32(p[c]) * int32(q.codes[int(i)*dim+c])
				}
			}
			for _, avx512 := range []bool{false, useAVX512} {
				for _, ahead := range []int{1, 4, 12, 16} {
					useAVX512, rescanAhead = avx512, ahead
					got := make([]int32, k)
					dotI8Rows(p, q, dim, rows, got)
					if !slices.Equal(got, want) {
						t.Fatalf("AVX-512 %v, %d ahead, dim %d, rows %v: %v, want %v", avx512, ahead, dim, rows, got, want)
					}
				}
			}
		}
	}
}

// TestRescan checks the tiered scan's fused int8 rescan (rescanAVX512)
// against rescanGo bit for bit: the estimates and bounds written (upper
// bounds alone, or both), the rows left alone, the largest lower bound;
// dimensions with a last 16 bytes, a row that is not finite, 4-bit
// bounds above and below the int8 ones, lists shorter and longer than the
// prefetch distance, repeated rows.
func TestRescan(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 (F, BW, VL, VNNI) on this CPU")
	}
	defer func(old bool, ahead int) { useAVX512, rescanAhead = old, ahead }(useAVX512, rescanAhead)
	r := rand.New(rand.NewPCG(71, 72))
	for _, dim := range []int{16, 48, 256, 368} {
		n := 300
		m := Matrix{Dim: dim}
		for i, v := range tieredRows(r, "sparse", n, dim) {
			if i == 5 {
				v = slices.Clone(v)
				v[1] = float32(math.NaN())
			}
			m.Append(v)
		}
		m.QuantizeFrom(1)
		for trial := range 40 {
			q := tieredRows(r, "clustered", 1, dim)[0]
			p16, t16, qnorm, _ := int16Query(q)
			k := 1 + r.IntN(60)
			if trial%5 == 0 {
				k = 1 + r.IntN(3)
			}
			l := &list4{}
			for range k {
				i := r.IntN(n)
				if trial%7 == 0 {
					i = 5
				}
				// 4-bit bounds around the int8 ones (about 0.01).
				l.add(i, r.Float64()-0.5, r.Float64()*0.02)
			}
			l.pick(-0.3 + 0.6*r.Float64())
			if len(l.sel) == 0 {
				continue
			}
			maxLow := math.Inf(-1)
			if trial%3 == 0 {
				maxLow = r.Float64() - 0.5
			}
			for _, both := range []bool{false, true} {
				est0 := make([]float64, n)
				for i := range est0 {
					est0[i] = r.Float64()
				}
				var err0 []float64
				if both {
					err0 = slices.Clone(est0)
				}
				estW, errW := slices.Clone(est0), slices.Clone(err0)
				useAVX512 = false
				want := m.rescanGo(p16, t16, qnorm, l, estW, errW, maxLow)
				for _, ahead := range []int{1, 12} {
					useAVX512, rescanAhead = true, ahead
					estG, errG := slices.Clone(est0), slices.Clone(err0)
					got := m.rescan(p16, t16, qnorm, l, estG, errG, maxLow)
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("dim %d trial %d: largest lower bound %v, want %v", dim, trial, got, want)
					}
					for i := range estW {
						if math.Float64bits(estG[i]) != math.Float64bits(estW[i]) || both && math.Float64bits(errG[i]) != math.Float64bits(errW[i]) {
							t.Fatalf("dim %d trial %d both %v, row %d: %v, %v, want %v, %v", dim, trial, both, i, estG[i], errG, estW[i], errW)
						}
					}
				}
			}
		}
	}
}

// TestListPickAVX512 is TestListPick without AVX-512 and (where the CPU
// has it) with: list4.pick eight rows at a time (pickAVX512).
func TestListPickAVX512(t *testing.T) {
	defer func(old bool) { useAVX512 = old }(useAVX512)
	for _, avx512 := range []bool{false, useAVX512} {
		useAVX512 = avx512
		testListPick(t)
	}
}
