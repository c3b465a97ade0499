package minilm

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// linearError runs l on the rows of x (rows × in) and returns the largest
// distance from the float product x·Wᵀ + b, relative to the product's
// largest magnitude.
func linearError(t *testing.T, l *qlinear, x, w, b []float32, rows, in, out int) float64 {
	t.Helper()
	s := &qscratch{a: make([]uint8, roundUp(rows, qRows)*l.kp), rs: make([]float32, roundUp(rows, qRows)), rm: make([]float32, roundUp(rows, qRows))}
	got := make([]float32, roundUp(rows, qRows)*out)
	l.forward(got, x, rows, s)
	want := naiveLinear(x, w, b, rows, in, out)
	var worst, big float64
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			worst = max(worst, math.Abs(float64(got[r*out+o]-want[r*out+o])))
			big = max(big, math.Abs(float64(want[r*out+o])))
		}
	}
	return worst / big
}

// TestSmoothedQLinear checks SmoothQuant's scales on a layer whose input
// has one column 60 times the others (as BERT's layer inputs have): the
// smoothed int8 layer computes the float product, and closer than the
// plain one, whose row ranges the outlier column stretches.
func TestSmoothedQLinear(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		const rows, in, out = 12, 96, 48
		x := randSlice(r, roundUp(rows, qRows)*in)
		for i := 0; i < rows; i++ {
			x[i*in+7] *= 60
		}
		w, b := randSlice(r, out*in), randSlice(r, out)
		amax := make([]float32, in)
		for i := 0; i < rows; i++ {
			for k := range in {
				amax[k] = max(amax[k], float32(math.Abs(float64(x[i*in+k]))))
			}
		}
		q, scale := quantizeWeights(w, out, in)
		plain, err := newQLinear(q, scale, b, out, in)
		if err != nil {
			t.Fatal(err)
		}
		s := smoothScales(amax, w, out, in)
		if s[7] < 4*s[0] {
			t.Fatalf("scale of the outlier column %g, of another %g: want it several times larger", s[7], s[0])
		}
		sw := make([]float32, len(w))
		for o := range out {
			for k := range in {
				sw[o*in+k] = w[o*in+k] * s[k]
			}
		}
		q, scale = quantizeWeights(sw, out, in)
		smoothed, err := newQLinear(q, scale, b, out, in)
		if err != nil {
			t.Fatal(err)
		}
		smoothed.smooth = make([]float32, in)
		for k, v := range s {
			smoothed.smooth[k] = 1 / v
		}
		ep, es := linearError(t, plain, x, w, b, rows, in, out), linearError(t, smoothed, x, w, b, rows, in, out)
		if es > 0.02 || es > 0.6*ep {
			t.Errorf("relative error %.4f smoothed, %.4f plain: want the smoothed one small and well below", es, ep)
		}
	})
}

// TestSmoothScalesNeutral checks smoothScales' edges: a column never seen
// or of zero weights keeps scale 1, and equal ranges give equal scales.
func TestSmoothScalesNeutral(t *testing.T) {
	w := []float32{1, 0, 2, -4, 0, 2} // 2 × 3
	s := smoothScales([]float32{4, 5, 0}, w, 2, 3)
	if want := []float32{float32(math.Sqrt(4.0 / 4)), 1, 1}; !slices.Equal(s, want) {
		t.Errorf("scales %v, want %v", s, want)
	}
}

// TestCalibrateObservesInputs checks the calibration pass on a tiny model:
// every linear layer of every encoder layer gets one maximum per input
// column, the same on one worker or several, and the first layer's Q|K|V maxima are those of the embeddings'
// LayerNorm output over the calibration texts, computed here apart.
func TestCalibrateObservesInputs(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12})
	m, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionFloat32})
	if err != nil {
		t.Fatal(err)
	}
	m.workers = 1
	am := m.calibrate()
	m.workers = 3
	for i, l := range m.calibrate() {
		for j := range l {
			if !slices.Equal(l[j], am[i][j]) {
				t.Errorf("layer %d, linear %d: maxima on 3 workers differ from 1's", i, j)
			}
		}
	}
	if len(am) != 2 {
		t.Fatalf("%d layers of maxima, want 2", len(am))
	}
	for i, l := range am {
		for j, want := range []int{32, 32, 32, 64} {
			if len(l[j]) != want || slices.Max(l[j]) <= 0 {
				t.Errorf("layer %d, linear %d: %d maxima (largest %v), want %d, some positive", i, j, len(l[j]), l[j], want)
			}
		}
	}
	h := 32
	want := make([]float32, h)
	for _, text := range strings.Split(strings.TrimSpace(calibText), "\n") {
		ids := m.encodeText(m.docPrompt, text)
		x := make([]float32, len(ids)*h)
		for t, id := range ids {
			for i := range h {
				x[t*h+i] = m.wordEmb[int(id)*h+i] + m.posEmb[t*h+i] + m.typeEmb[i]
			}
		}
		layerNorm(x, len(ids), h, m.embLNg, m.embLNb, m.cfg.LayerNormEps)
		for i, v := range x {
			want[i%h] = max(want[i%h], float32(math.Abs(float64(v))))
		}
	}
	if !slices.Equal(am[0][0], want) {
		t.Errorf("layer 0 Q|K|V maxima %v, want %v", am[0][0], want)
	}
}

// e5Texts are texts the int8 fidelity test embeds: none is among the
// calibration texts.
var e5Texts = []string{
	"Did you ever hear back from the landlord about the broken heater?",
	"We went hiking near Boulder last Sunday and saw two moose by the river.",
	"I'm starting a pottery class on Tuesday evenings, wish me luck!",
	"My son just got into the robotics club at his school.",
	"No worries, let's reschedule for next Friday at noon.",
	"Here is a short checklist for your first marathon: sleep well the two nights before, eat a familiar breakfast three hours before the start, start slower than you think you should, drink at every other station, and plan to meet your family at a fixed spot after the finish line.",
	"A good way to compare two job offers is to list the total compensation, including health insurance and retirement matching, then weigh the commute, the growth opportunities and how you felt about the people you met during the interviews.",
	"CHANDLER: Could this BE any more awkward? MONICA: Yes. Yes it could.",
	"She told me the wedding will be in Lisbon in June 2024.",
	"Thanks, the tomato soup recipe turned out great, even my picky niece had seconds.",
	"How do I keep basil alive indoors during the winter?",
	"Keep it on the sunniest windowsill you have, water only when the top of the soil is dry, and pinch off the flower buds so the plant keeps putting its energy into leaves.",
}

// TestE5Int8NearFloat checks on the real e5-small-v2 (when fetched) that
// its smoothed int8 form (PrecisionInt8) stays near the float model: mean
// 1 − cosine under 6.5e-4 on e5Texts. Without the smoothing it is about
// 9e-4 (BENCHMARKS.md, "int8 e5-small-v2 with SmoothQuant").
func TestE5Int8NearFloat(t *testing.T) {
	root, err := DefaultRoot()
	if err != nil {
		t.Skipf("no models root: %v", err)
	}
	f, err := Load(E5ModelDir(root), Options{})
	if err != nil {
		t.Skipf("e5-small-v2 not fetched in %s (`higmem models fetch --model e5-small-v2`): %v", E5ModelDir(root), err)
	}
	q, err := Load(E5ModelDir(root), Options{Precision: PrecisionInt8})
	if err != nil {
		t.Fatal(err)
	}
	if q.ID() != "minilm:e5-small-v2:512:int8s" {
		t.Errorf("ID %q", q.ID())
	}
	ctx := context.Background()
	_, mean, worst := embedDistance(ctx, t, f, q, e5Texts)
	t.Logf("1 − cosine: mean %.2e, worst %.2e", mean, worst)
	if mean > 6.5e-4 || worst > 2e-3 {
		t.Errorf("int8 against float: mean 1 − cosine %.2e, worst %.2e; want under 6.5e-4 and 2e-3", mean, worst)
	}
}

// TestCalibrationFile checks the calibration cache: the first int8 load of
// a float model writes it; a later load reads it (maxima changed in the
// file change its vectors); and a weight file with another modification
// time, or another token limit, makes the load calibrate again and
// rewrite the file.
func TestCalibrationFile(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12})
	load := func() []float32 {
		t.Helper()
		m, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionInt8})
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.Embed(context.Background(), tinyTexts[:1])
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	path := filepath.Join(tm.dir, calibrationFile)
	first := load()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no calibration file after the first load: %v", err)
	}
	key, _, _ := strings.Cut(string(b), "\n")
	if want := 2 * 4 * (32 + 32 + 32 + 64); len(b) != len(key)+1+want {
		t.Fatalf("calibration file of %d bytes, want %d after its first line", len(b)-len(key)-1, want)
	}
	if again := load(); !slices.Equal(again, first) {
		t.Errorf("a load from the calibration file embeds otherwise than the load that wrote it")
	}
	// Every maximum 1 (the bits of float32 1.0): the smoothing changes.
	forged := []byte(key + "\n")
	for range (len(b) - len(key) - 1) / 4 {
		forged = binary.LittleEndian.AppendUint32(forged, math.Float32bits(1))
	}
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := load(); slices.Equal(got, first) {
		t.Errorf("the load ignored the calibration file")
	}
	// Another token limit: its own calibration, under its own key.
	if _, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionInt8, MaxSeqLen: 4}); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(path); bytes.Equal(b2, forged) || !strings.Contains(string(b2), " max=4 ") {
		t.Errorf("a model of another token limit used the calibration file of 12 tokens")
	}
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another modification time of the weights: calibrated again.
	wpath := filepath.Join(tm.dir, "model.safetensors")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(wpath, later, later); err != nil {
		t.Fatal(err)
	}
	if got := load(); !slices.Equal(got, first) {
		t.Errorf("after the weights changed, the load kept the old calibration")
	}
	if b2, _ := os.ReadFile(path); bytes.Equal(b2, forged) || bytes.Equal(b2, b) {
		t.Errorf("the calibration file was not rewritten under the new key")
	}
}

// TestMulMinMax checks the smoothing's scaling pass (AVX2 and Go) against
// plain float32 products, bit for bit, on lengths around the 8-wide blocks.
func TestMulMinMax(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, n := range []int{1, 7, 8, 9, 16, 23, 384, 1536} {
			x, s := randSlice(r, n), randSlice(r, n)
			dst := make([]float32, n+3)
			mn, mx := mulMinMax(dst, x, s)
			want := make([]float32, n)
			for i := range want {
				want[i] = x[i] * s[i]
			}
			if !slices.Equal(dst[:n], want) || mn != slices.Min(want) || mx != slices.Max(want) {
				t.Errorf("n %d: products %v min %g max %g, want %v %g %g", n, dst[:n], mn, mx, want, slices.Min(want), slices.Max(want))
			}
			if dst[n] != 0 {
				t.Errorf("n %d: wrote past the row", n)
			}
		}
	})
}

// embedDistance embeds texts with the reference model f and with q and
// returns q's vectors with the mean and the worst 1 − cosine between the
// two models' vectors of a text.
func embedDistance(ctx context.Context, t *testing.T, f, q *Model, texts []string) (qv [][]float32, mean, worst float64) {
	t.Helper()
	fv, err := f.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if qv, err = q.Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	for i := range fv {
		d := 1 - cosine(fv[i], qv[i])
		mean += d / float64(len(fv))
		worst = max(worst, d)
	}
	return qv, mean, worst
}
