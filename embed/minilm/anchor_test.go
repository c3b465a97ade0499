package minilm

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkONNXAnchor measures this package's e5-small-v2 against ONNX
// Runtime embedding the same token ids from the same model file with the
// same number of threads, in one run that alternates the two, and reports
// the ratio of their texts/s for short chat turns (15-40 tokens) and for
// 512-token passages. ONNX Runtime runs in a Python worker
// (scripts/onnx-anchor/ort_worker.py); scripts/onnx-anchor.sh installs it
// into a virtual environment and runs this benchmark:
//
//	scripts/onnx-anchor.sh            # or, by hand:
//	HIGMEM_ONNX_PYTHON=VENV/bin/python go test -run '^$' -bench ONNXAnchor -benchtime 5x -cpu 2 ./embed/minilm
//
// Each iteration is one round: for each set, both sides embed it, the order
// alternating from round to round; the metrics are the medians over the
// rounds and the log gives each round and the min-max spread. ONNX Runtime
// runs in each of the configurations HIGMEM_ANCHOR_ORT lists, BATCH:spin or
// BATCH:nospin (default "8:spin,8:nospin": length-sorted padded batches of
// 8 texts, the intra-op threads spinning while they wait, as by default, or
// sleeping, which is faster on a busy machine), and its best configuration
// in the round is the anchor. HIGMEM_ANCHOR_MODEL names the model
// directory under the models root (default e5-small-v2; e5-small-v2-q for
// the quantised file, which both sides then run in int8),
// HIGMEM_ANCHOR_PRECISION runs this package's side with another Precision
// (float32, int16 or int8: the float file quantised at load, against ONNX
// Runtime in float; unset, what Load picks),
// and HIGMEM_ANCHOR_MIN_COS is the cosine both sides' vectors must reach on
// every text (default 0.9999, that of TestE5Golden). It skips without
// HIGMEM_ONNX_PYTHON or without the model.
func BenchmarkONNXAnchor(b *testing.B) {
	python := os.Getenv("HIGMEM_ONNX_PYTHON")
	if python == "" {
		b.Skip("set HIGMEM_ONNX_PYTHON to a python with onnxruntime (scripts/onnx-anchor.sh)")
	}
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			b.Skipf("no models root: %v", err)
		}
	}
	dir := filepath.Join(root, cmp.Or(os.Getenv("HIGMEM_ANCHOR_MODEL"), E5ModelName))
	onnxFile := filepath.Join(dir, "model.onnx")
	if _, err := os.Stat(onnxFile); err != nil {
		b.Skipf("no ONNX model in %s: %v", dir, err)
	}
	minCos := 0.9999
	if s := os.Getenv("HIGMEM_ANCHOR_MIN_COS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatalf("HIGMEM_ANCHOR_MIN_COS: %v", err)
		}
		minCos = v
	}
	variants, err := parseORTVariants(cmp.Or(os.Getenv("HIGMEM_ANCHOR_ORT"), "8:spin,8:nospin"))
	if err != nil {
		b.Fatal(err)
	}
	var prec Precision
	switch p := os.Getenv("HIGMEM_ANCHOR_PRECISION"); p {
	case "":
	case "int8":
		prec = PrecisionInt8
	case "int16":
		prec = PrecisionInt16
	case "float32":
		prec = PrecisionFloat32
	default:
		b.Fatalf("HIGMEM_ANCHOR_PRECISION %q: want int8, int16 or float32", p)
	}
	threads := runtime.GOMAXPROCS(0)
	m, err := Load(dir, Options{Workers: threads, Precision: prec})
	if err != nil {
		b.Fatal(err)
	}
	w := startORTWorker(b, python)
	var load struct {
		Version string `json:"version"`
	}
	w.call(map[string]any{"cmd": "load", "model": onnxFile, "threads": threads}, &load)
	b.Logf("ONNX Runtime %s and %s, %d threads each, model %s", load.Version, m.ID(), threads, onnxFile)

	sets := []anchorSet{
		{name: "short", texts: anchorTurns(64)},
		{name: "long", texts: anchorPassages(8)},
	}
	for i := range sets {
		s := &sets[i]
		// Longest first, as Embed orders its work: ONNX Runtime's padded
		// batches then hold texts of about one length.
		slices.SortStableFunc(s.texts, func(x, y string) int { return len(m.encodeText(m.docPrompt, y)) - len(m.encodeText(m.docPrompt, x)) })
		ids := make([][]int32, len(s.texts))
		for j, t := range s.texts {
			ids[j] = m.encodeText(m.docPrompt, t)
			s.tokens += len(ids[j])
		}
		w.call(map[string]any{"cmd": "set", "name": s.name, "ids": ids}, nil)
		b.Logf("%s: %d texts, %.1f tokens a text (%d-%d)", s.name, len(ids), float64(s.tokens)/float64(len(ids)), len(ids[len(ids)-1]), len(ids[0]))
	}

	ctx := context.Background()
	round := 0
	for b.Loop() {
		for i := range sets {
			s := &sets[i]
			check := round == 0
			goFirst := round%2 == 1
			var goVecs [][]float32
			var goSec float64
			runGo := func() {
				start := time.Now()
				if goVecs, err = m.Embed(ctx, s.texts); err != nil {
					b.Fatal(err)
				}
				goSec = time.Since(start).Seconds()
			}
			if goFirst {
				runGo()
			}
			bestORT := 0.0
			var perBatch []string
			for _, v := range variants {
				var r struct {
					Seconds float64     `json:"seconds"`
					Vectors [][]float32 `json:"vectors"`
				}
				w.call(map[string]any{"cmd": "run", "name": s.name, "batch": v.batch, "spin": v.spin, "vectors": check}, &r)
				rate := float64(len(s.texts)) / r.Seconds
				bestORT = max(bestORT, rate)
				perBatch = append(perBatch, fmt.Sprintf("%s %.2f", v, rate))
				if check {
					s.ortVecs = append(s.ortVecs, r.Vectors)
				}
			}
			if !goFirst {
				runGo()
			}
			if check {
				for _, ov := range s.ortVecs {
					worst := 1.0
					for j := range goVecs {
						worst = min(worst, cosine(goVecs[j], ov[j]))
					}
					if worst < minCos {
						b.Fatalf("%s: a vector has cosine %.6f with ONNX Runtime's, want ≥ %v", s.name, worst, minCos)
					}
					s.worstCos = min(cmp.Or(s.worstCos, 1), worst)
				}
			}
			goRate := float64(len(s.texts)) / goSec
			s.goRates = append(s.goRates, goRate)
			s.ortRates = append(s.ortRates, bestORT)
			s.ratios = append(s.ratios, goRate/bestORT)
			b.Logf("round %d %s: higmem %.1f texts/s, ONNX Runtime %s texts/s: ratio %.3f", round, s.name, goRate, strings.Join(perBatch, ", "), goRate/bestORT)
		}
		round++
	}
	for _, s := range sets {
		b.ReportMetric(median(s.ratios), "ratio-"+s.name)
		b.ReportMetric(median(s.goRates), "higmem-"+s.name+"-texts/s")
		b.ReportMetric(median(s.ortRates), "ort-"+s.name+"-texts/s")
		b.Logf("%s: higmem/ONNX Runtime texts/s ratio median %.3f (min %.3f, max %.3f over %d rounds); higmem median %.1f, ONNX Runtime %.1f texts/s; vectors' min cosine %.6f",
			s.name, median(s.ratios), slices.Min(s.ratios), slices.Max(s.ratios), len(s.ratios), median(s.goRates), median(s.ortRates), s.worstCos)
	}
}

// ortVariant is one way ONNX Runtime runs in BenchmarkONNXAnchor.
type ortVariant struct {
	batch int
	spin  bool
}

func (v ortVariant) String() string {
	if v.spin {
		return fmt.Sprintf("%d:spin", v.batch)
	}
	return fmt.Sprintf("%d:nospin", v.batch)
}

// parseORTVariants parses a list such as "8:spin,1:nospin".
func parseORTVariants(list string) ([]ortVariant, error) {
	var vs []ortVariant
	for _, f := range strings.Split(list, ",") {
		bs, mode, _ := strings.Cut(strings.TrimSpace(f), ":")
		n, err := strconv.Atoi(bs)
		if err != nil || n < 1 || (mode != "spin" && mode != "nospin") {
			return nil, fmt.Errorf("HIGMEM_ANCHOR_ORT: %q is not BATCH:spin or BATCH:nospin", f)
		}
		vs = append(vs, ortVariant{batch: n, spin: mode == "spin"})
	}
	return vs, nil
}

// anchorSet is one set of texts of BenchmarkONNXAnchor and what was measured
// on it.
type anchorSet struct {
	name                      string
	texts                     []string
	tokens                    int
	ortVecs                   [][][]float32
	worstCos                  float64
	goRates, ortRates, ratios []float64
}

// anchorTurns returns n chat turns of 8 to 30 words (about 15 to 40 tokens
// with the passage prompt), deterministically.
func anchorTurns(n int) []string {
	words := anchorWords()
	r := rand.New(rand.NewPCG(7, 7))
	out := make([]string, n)
	for i := range out {
		out[i] = anchorText(r, words, 8+r.IntN(23))
	}
	return out
}

// anchorPassages returns n texts of 600 words, which the tokenizer
// truncates to 512 tokens.
func anchorPassages(n int) []string {
	words := anchorWords()
	r := rand.New(rand.NewPCG(8, 8))
	out := make([]string, n)
	for i := range out {
		out[i] = anchorText(r, words, 600)
	}
	return out
}

func anchorWords() []string {
	return strings.Fields(`hey mel good to see you how have you been i went to a support group
		yesterday and it was so powerful wow that's cool caroline what happened that was so awesome
		did you hear any inspiring stories the transgender stories were so inspiring i was so happy
		and thankful for all the support love that painting so cool you found such a helpful group
		what's it done for you we went camping with the kids last weekend and roasted marshmallows
		by the lake my daughter painted a sunset at her art class i'm thinking about adopting a dog
		from the shelter next month after my counseling certification exam in june pottery
		Biscuit greyhound neighbour Jonas Friday concert violin Seattle 2023 marathon`)
}

// anchorText joins k words drawn by r, with some punctuation.
func anchorText(r *rand.Rand, words []string, k int) string {
	var b strings.Builder
	for j := 0; j < k; j++ {
		if j > 0 {
			b.WriteByte(' ')
		}
		w := words[r.IntN(len(words))]
		if j == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if r.IntN(8) == 0 {
			b.WriteString([]string{",", "!", "?", "."}[r.IntN(4)])
		}
	}
	return b.String()
}

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ortWorker is the ONNX Runtime worker process of BenchmarkONNXAnchor.
type ortWorker struct {
	tb  testing.TB
	in  *json.Encoder
	out *bufio.Scanner
}

// startORTWorker starts scripts/onnx-anchor/ort_worker.py under python; the
// process ends when the benchmark does.
func startORTWorker(tb testing.TB, python string) *ortWorker {
	tb.Helper()
	script := filepath.Join("..", "..", "scripts", "onnx-anchor", "ort_worker.py")
	cmd := exec.Command(python, script)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting the ONNX Runtime worker: %v", err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	return &ortWorker{tb: tb, in: json.NewEncoder(stdin), out: sc}
}

// call sends one request and decodes the reply into v (if not nil),
// failing the benchmark on an error.
func (w *ortWorker) call(req map[string]any, v any) {
	w.tb.Helper()
	if err := w.in.Encode(req); err != nil {
		w.tb.Fatalf("ONNX Runtime worker: %v", err)
	}
	if !w.out.Scan() {
		w.tb.Fatalf("ONNX Runtime worker ended: %v", w.out.Err())
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	line := w.out.Bytes()
	if err := json.Unmarshal(line, &status); err != nil || !status.OK {
		w.tb.Fatalf("ONNX Runtime worker: %s %v (%.200s)", status.Error, err, line)
	}
	if v != nil {
		if err := json.Unmarshal(line, v); err != nil {
			w.tb.Fatal(err)
		}
	}
}
