package minilm

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/cputime"
)

// dequantize returns the float weight scale[o]·q[o][k] of an int8 or
// int16 layer.
func dequantize[T int8 | int16](q []T, scale []float32, out, in int) []float32 {
	w := make([]float32, out*in)
	for o := 0; o < out; o++ {
		for k := 0; k < in; k++ {
			w[o*in+k] = scale[o] * float32(q[o*in+k])
		}
	}
	return w
}

// quantizeRowsRef quantises x (rows × in) as an int8 layer does and
// returns its reconstruction mn + s·u, row by row.
func quantizeRowsRef(x []float32, rows, in int) []float32 {
	return reconstructRows(x, rows, in, 255, quantRowGo)
}

// quantizeRows16Ref is quantizeRowsRef for an int16 layer.
func quantizeRows16Ref(x []float32, rows, in int) []float32 {
	return reconstructRows(x, rows, in, q16ActMax, quantRow16Go)
}

// reconstructRows quantises each row of x (rows × in) over its own range
// to [0, top] with quant and returns the reconstruction mn + s·u.
func reconstructRows[T uint8 | int16](x []float32, rows, in int, top float32, quant func(x []float32, dst []T, mn, inv float32)) []float32 {
	out := make([]float32, rows*in)
	u := make([]T, in)
	for r := 0; r < rows; r++ {
		xr := x[r*in : (r+1)*in]
		mn, mx := minMaxGo(xr)
		var s, inv float32
		if mx > mn {
			s = (mx - mn) / top
			inv = 1 / s
		}
		quant(xr, u, mn, inv)
		for k := range u {
			out[r*in+k] = mn + s*float32(u[k])
		}
	}
	return out
}

// TestQLinearMatchesNaive checks the int8 layer against float arithmetic on
// the same quantised operands: the integer sums are exact, so the only
// difference is float32 rounding.
func TestQLinearMatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, tc := range []struct{ rows, in, out int }{
			{1, 8, 16}, {3, 5, 32}, {4, 7, 48}, {5, 384, 384}, {6, 384, 1152}, {7, 1536, 384}, {13, 3, 40}, {41, 384, 1536}, {2, 64, 8},
		} {
			x := randSlice(r, roundUp(tc.rows, qRows)*tc.in)
			for i := range x {
				x[i] *= 3 // a range past [-1, 1]
			}
			x[0] = 40 // an outlier
			w := randSlice(r, tc.out*tc.in)
			b := randSlice(r, tc.out)
			q, scale := quantizeWeights(w, tc.out, tc.in)
			l, err := newQLinear(q, scale, b, tc.out, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			s := &qscratch{a: make([]uint8, roundUp(tc.rows, qRows)*l.kp), rs: make([]float32, roundUp(tc.rows, qRows)), rm: make([]float32, roundUp(tc.rows, qRows))}
			got := make([]float32, roundUp(tc.rows, qRows)*tc.out)
			l.forward(got, x, tc.rows, s)
			want := naiveLinear(quantizeRowsRef(x, tc.rows, tc.in), dequantize(q, scale, tc.out, tc.in), b, tc.rows, tc.in, tc.out)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%+v: y[%d] = %v, want %v", tc, i, got[i], want[i])
				}
			}
			// And the float layer on the unquantised input is near.
			exact := naiveLinear(x, w, b, tc.rows, tc.in, tc.out)
			var se, ss float64
			for i := range exact {
				d := float64(got[i] - exact[i])
				se += d * d
				ss += float64(exact[i]) * float64(exact[i])
			}
			if rel := math.Sqrt(se / ss); rel > 0.05 {
				t.Errorf("%+v: relative error %.3f against float", tc, rel)
			}
		}
	})
}

// TestQuantRowVariants checks that the assembly quantiser rounds and clamps
// exactly as the portable one.
func TestQuantRowVariants(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randSlice(r, 32*7+5)
	x[3], x[40] = -2, 2
	x[41], x[42] = 1e6, float32(math.Inf(1))
	mn, mx := minMaxGo(x[:40])
	inv := 255 / (mx - mn)
	want := make([]uint8, len(x))
	quantRowGo(x, want, mn, inv)
	var got []uint8
	kernelVariants(t, func(t *testing.T) {
		g := make([]uint8, len(x))
		quantRow(x, g, mn, inv)
		if got != nil && !slices.Equal(g, got) {
			t.Fatal("quantRow differs between variants")
		}
		got = g
		if !slices.Equal(g, want) {
			t.Fatalf("quantRow = %v, want %v", g[:48], want[:48])
		}
		for _, n := range []int{1, 8, 16, 37, 40, 41, 100, len(x)} {
			lo, hi := minMax(x[:n])
			wlo, whi := minMaxGo(x[:n])
			if lo != wlo || hi != whi {
				t.Errorf("minMax(x[:%d]) = %v, %v; want %v, %v", n, lo, hi, wlo, whi)
			}
		}
	})
	if want[3] != 0 || want[41] != 255 || want[42] != 0 {
		t.Errorf("clamping: %d %d %d", want[3], want[41], want[42])
	}
}

// TestQuantizeWeightsExact checks that quantising weights that are already
// int8 times per-row scales, as a quantised file's dequantised weights
// are, gives them back exactly.
func TestQuantizeWeightsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const out, in = 5, 37
	q := make([]int8, out*in)
	scale := make([]float32, out)
	for o := range out {
		scale[o] = r.Float32() / 100
		for k := range in {
			q[o*in+k] = int8(r.IntN(2*qMaxWeight+1) - qMaxWeight)
		}
		q[o*in+r.IntN(in)] = qMaxWeight // the row's maximum, as the file has it
	}
	q2, s2 := quantizeWeights(dequantize(q, scale, out, in), out, in)
	if !slices.Equal(q, q2) || !slices.Equal(scale, s2) {
		t.Errorf("quantize(dequantize(q)) differs from q")
	}
}

// onnxBytesInit encodes an int8 or uint8 TensorProto with raw_data.
func onnxBytesInit(name string, dtype uint64, dims []int, vals []byte) []byte {
	var t protoWriter
	for _, x := range dims {
		t.varint(1, uint64(x))
	}
	t.varint(2, dtype)
	t.bytes(8, []byte(name))
	t.bytes(9, vals)
	return t
}

// writeQuantizedONNX exports a tiny model's weights as ONNX Runtime's
// quantize_dynamic does (per_channel, reduce_range): the linear weights as
// int8 right-hand operands of MatMulInteger nodes with per-column scales
// and zero points, the embedding tables as uint8 with one scale and zero
// point each, the rest as float. It returns the float weights the file
// stands for, by name.
func writeQuantizedONNX(t *testing.T, tm *tinyModel, path string) map[string][]float32 {
	t.Helper()
	var g protoWriter
	names := slices.Sorted(maps.Keys(tm.w))
	stands := map[string][]float32{}
	for i, name := range names {
		vals := make([]float32, len(tm.w[name]))
		for j, v := range tm.w[name] {
			vals[j] = float32(v)
		}
		shape := tinyShape(tm, name)
		switch {
		case strings.HasPrefix(name, "encoder.") && strings.HasSuffix(name, ".weight") && len(shape) == 2:
			q, scale := quantizeWeights(vals, shape[0], shape[1])
			anon := fmt.Sprintf("onnx::MatMul_%d", 1000+i)
			node := "/" + strings.ReplaceAll(strings.TrimSuffix(name, ".weight"), ".", "/") + "/MatMul_quant"
			node = strings.Replace(node, "/layer/", "/layer.", 1)
			g.bytes(1, onnxNode(node, "MatMulInteger", "/prev_quantized", anon+"_quantized", "/prev_zero_point", anon+"_zero_point"))
			qt := transpose(q, shape[0], shape[1]) // input-major
			raw := make([]byte, len(qt))
			for j, v := range qt {
				raw[j] = byte(v)
			}
			g.bytes(5, onnxBytesInit(anon+"_quantized", onnxInt8, []int{shape[1], shape[0]}, raw))
			g.bytes(5, onnxInit(anon+"_scale", []int{shape[0]}, scale, i%2 == 0))
			g.bytes(5, onnxBytesInit(anon+"_zero_point", onnxInt8, []int{shape[0]}, make([]byte, shape[0])))
			stands[name] = dequantize(q, scale, shape[0], shape[1])
		case strings.HasPrefix(name, "embeddings.") && strings.HasSuffix(name, "_embeddings.weight"):
			mn, mx := minMaxGo(vals)
			s := (mx - mn) / 255
			zp := uint8(math.Round(float64(-mn / s)))
			raw := make([]byte, len(vals))
			deq := make([]float32, len(vals))
			for j, v := range vals {
				u := math.Round(float64(v/s)) + float64(zp)
				raw[j] = uint8(max(0, min(255, u)))
				deq[j] = float32(int(raw[j])-int(zp)) * s
			}
			g.bytes(1, onnxNode("/"+name+"/Gather", "Gather", name+"_quantized", "input_ids"))
			g.bytes(5, onnxBytesInit(name+"_quantized", onnxUint8, shape, raw))
			g.bytes(5, onnxInit(name+"_scale", nil, []float32{s}, false))
			g.bytes(5, onnxBytesInit(name+"_zero_point", onnxUint8, nil, []byte{zp}))
			stands[name] = deq
		default:
			g.bytes(5, onnxInit(name, shape, vals, i%2 == 0))
			stands[name] = vals
		}
	}
	var m protoWriter
	m.varint(1, 8)
	m.bytes(7, g)
	if err := os.WriteFile(path, m, 0o644); err != nil {
		t.Fatal(err)
	}
	return stands
}

// TestQuantizedONNX loads a tiny model exported as quantize_dynamic does:
// it runs in int8 by itself, its weights are those the file stands for,
// and its vectors are near those of float arithmetic on the same weights
// (PrecisionFloat32) and of the float model it was made from.
func TestQuantizedONNX(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 32})
	dir := t.TempDir()
	for _, f := range []string{"vocab.txt", "config.json", filepath.Join("1_Pooling", "config.json")} {
		b, err := os.ReadFile(filepath.Join(tm.dir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), b)
	}
	stands := writeQuantizedONNX(t, tm, filepath.Join(dir, "model.onnx"))

	ts, err := readONNX(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range stands {
		got, ok := ts[name]
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		if !slices.Equal(got.data, want) {
			t.Errorf("%s: %v, want %v", name, got.data[:4], want[:4])
		}
		if q := strings.HasPrefix(name, "encoder.") && strings.HasSuffix(name, ".weight") && len(got.shape) == 2; q != (got.q != nil) {
			t.Errorf("%s: int8 values %v, want %v", name, got.q != nil, q)
		}
	}

	kernelVariants(t, func(t *testing.T) {
		ctx := context.Background()
		qm, err := Load(dir, Options{Name: "tiny-q"})
		if err != nil {
			t.Fatal(err)
		}
		fm, err := Load(dir, Options{Name: "tiny-q", Precision: PrecisionFloat32})
		if err != nil {
			t.Fatal(err)
		}
		orig, err := Load(tm.dir, Options{Name: "tiny"})
		if err != nil {
			t.Fatal(err)
		}
		if !qm.int8 || fm.int8 || qm.ID() != "minilm:tiny-q:32" || fm.ID() != "minilm:tiny-q:32:f32" {
			t.Errorf("int8 %v %v, IDs %q %q", qm.int8, fm.int8, qm.ID(), fm.ID())
		}
		qv, err := qm.Embed(ctx, tinyTexts)
		if err != nil {
			t.Fatal(err)
		}
		fv, _ := fm.Embed(ctx, tinyTexts)
		ov, _ := orig.Embed(ctx, tinyTexts)
		for i, text := range tinyTexts {
			if c := cosine(qv[i], fv[i]); c < 0.999 {
				t.Errorf("%q: int8 against float arithmetic on the same weights: cosine %.5f", text, c)
			}
			if c := cosine(qv[i], ov[i]); c < 0.99 {
				t.Errorf("%q: int8 against the float model: cosine %.5f", text, c)
			}
		}
	})
}

// TestInt8MatchesNaive runs a float tiny model in int8 (PrecisionInt8)
// against the float reference encoder: near, and its ID says int8.
func TestInt8MatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12})
		m, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionInt8})
		if err != nil {
			t.Fatal(err)
		}
		if m.ID() != "minilm:tiny:12:int8s" {
			t.Errorf("ID %q", m.ID())
		}
		checkNearNaive(t, tm, m, 0.99)
	})
}

// BenchmarkQGemm measures 80×k · k×out products (a window-sized text) with
// the float, int8 and int16 layers, reporting multiply-adds per CPU second (the
// machine's other load does not count).
func BenchmarkQGemm(b *testing.B) {
	for _, sh := range []struct{ in, out int }{{384, 1152}, {384, 1536}, {1536, 384}} {
		r := rand.New(rand.NewPCG(5, 6))
		rows := 80
		x := randSlice(r, wsRows(rows)*sh.in)
		w, bias := randSlice(r, sh.out*sh.in), randSlice(r, sh.out)
		fl := newLinear(w, bias, sh.out, sh.in)
		q, sc := quantizeWeights(w, sh.out, sh.in)
		ql, err := newQLinear(q, sc, bias, sh.out, sh.in)
		if err != nil {
			b.Fatal(err)
		}
		q16, sc16 := quantizeWeights16(w, sh.out, sh.in)
		ql16, err := newQLinear16(q16, sc16, bias, sh.out, sh.in)
		if err != nil {
			b.Fatal(err)
		}
		s := &qscratch{a: make([]uint8, wsRows(rows)*ql.kp), rs: make([]float32, wsRows(rows)), rm: make([]float32, wsRows(rows))}
		y := make([]float32, wsRows(rows)*sh.out)
		for _, v := range []struct {
			name string
			f    func()
		}{{"f32", func() { fl.forward(y, x, rows) }}, {"int8", func() { ql.forward(y, x, rows, s) }}, {"int16", func() { ql16.forward(y, x, rows, s) }}, {"int16-novnni", func() {
			saved := useVNNI
			useVNNI = false
			ql16.forward(y, x, rows, s)
			useVNNI = saved
		}}} {
			b.Run(fmt.Sprintf("%dx%d/%s", sh.in, sh.out, v.name), func(b *testing.B) {
				c0 := cputime.Process()
				for b.Loop() {
					v.f()
				}
				if c := cputime.Process() - c0; c > 0 {
					b.ReportMetric(float64(b.N)*float64(rows*sh.in*sh.out)/c.Seconds()/1e9, "GMAC/cpu-s")
				}
			})
		}
	}
}

// TestResidualLayerNormAndSoftmaxVariants checks the vector passes of a
// layer's residual LayerNorm and of softmax against float64 arithmetic,
// with the assembly and the portable kernels, on lengths that leave tails.
func TestResidualLayerNormAndSoftmaxVariants(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{3, 8, 16, 21, 40, 384} {
			const rows = 3
			x, y := randSlice(r, rows*n), randSlice(r, rows*n)
			g, b := randSlice(r, n), randSlice(r, n)
			want := make([]float64, rows*n)
			for row := 0; row < rows; row++ {
				var sum float64
				for i := 0; i < n; i++ {
					sum += float64(x[row*n+i]) + float64(y[row*n+i])
				}
				mean := sum / float64(n)
				var ss float64
				for i := 0; i < n; i++ {
					d := float64(x[row*n+i]) + float64(y[row*n+i]) - mean
					ss += d * d
				}
				inv := 1 / math.Sqrt(ss/float64(n)+1e-12)
				for i := 0; i < n; i++ {
					want[row*n+i] = (float64(x[row*n+i])+float64(y[row*n+i])-mean)*inv*float64(g[i]) + float64(b[i])
				}
			}
			residualLayerNorm(x, y, rows, n, g, b, 1e-12)
			for i := range want {
				if math.Abs(float64(x[i])-want[i]) > 2e-5 {
					t.Fatalf("n %d: LayerNorm(x+y)[%d] = %v, want %v", n, i, x[i], want[i])
				}
			}
			s := randSlice(r, n)
			for i := range s {
				s[i] *= 10
			}
			mx := math.Inf(-1)
			for _, v := range s {
				mx = max(mx, float64(v))
			}
			if got := maxf(s); float64(got) != mx {
				t.Errorf("n %d: maxf %v, want %v", n, got, mx)
			}
			e := make([]float64, n)
			var sum float64
			for i, v := range s {
				e[i] = math.Exp(float64(v) - mx)
				sum += e[i]
			}
			softmax(s)
			for i := range s {
				if math.Abs(float64(s[i])-e[i]/sum) > 1e-6 {
					t.Fatalf("n %d: softmax[%d] = %v, want %v", n, i, s[i], e[i]/sum)
				}
			}
		}
	})
}

// TestQGemmBlocksMatchesBlockByBlock checks that qgemmBlocks gives, bit for
// bit, what qgemm4x16 gives called block by block (as qlinear.forward did
// before it), so that moving the loop into the kernel changes no vector.
func TestQGemmBlocksMatchesBlockByBlock(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, tc := range []struct{ nb, kg, ldc int }{{1, 1, 16}, {1, 96, 16}, {3, 96, 48}, {20, 96, 1152}, {7, 384, 384}, {2, 0, 16}} {
			lda := 4*tc.kg + 4 // rows longer than the products read
			rows := tc.nb * qRows
			a := make([]uint8, rows*lda)
			for i := range a {
				a[i] = uint8(r.IntN(256))
			}
			b := make([]int8, max(tc.kg, 1)*64)
			for i := range b {
				b[i] = int8(r.IntN(2*qMaxWeight+1) - qMaxWeight)
			}
			rs, rm := randSlice(r, rows), randSlice(r, rows)
			cs, csum, bias := randSlice(r, panelWidth), randSlice(r, panelWidth), randSlice(r, panelWidth)
			want := randSlice(r, rows*tc.ldc)
			got := slices.Clone(want)
			for i := range tc.nb {
				row := i * qRows
				qgemm4x16(tc.kg, a[row*lda:], lda, b, want[row*tc.ldc:], tc.ldc, rs[row:], rm[row:], cs, csum, bias)
			}
			qgemmBlocks(tc.nb, tc.kg, a, lda, b, got, tc.ldc, rs, rm, cs, csum, bias)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v: c[%d] = %v, block by block %v", tc, i, got[i], want[i])
				}
			}
		}
	})
}

// checkNearNaive checks that m embeds every one of tinyTexts at a cosine
// of at least minCos with tm's float64 reference encoder.
func checkNearNaive(t *testing.T, tm *tinyModel, m *Model, minCos float64) {
	t.Helper()
	got, err := m.Embed(context.Background(), tinyTexts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range tinyTexts {
		want := tm.naiveEncode(m.Tokenizer().Encode(text), false)
		w32 := make([]float32, len(want))
		for d, v := range want {
			w32[d] = float32(v)
		}
		if c := cosine(got[i], w32); c < minCos {
			t.Errorf("%q: cosine %.7f with the float reference", text, c)
		}
	}
}
