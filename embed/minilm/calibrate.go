package minilm

import (
	"context"
	_ "embed"
	"math"
	"strings"
	"sync"
)

// Calibration of the int8 layers.
//
// A float model run in int8 (PrecisionInt8) quantises each linear layer's
// input row by row. BERT's layer inputs have a few columns far larger
// than the rest, and a row's one range then rounds every other column
// coarsely. SmoothQuant (Xiao et al., 2023) divides each input column by a
// scale and multiplies the weights' column by it (smoothScales); the
// scales come from the largest input each column takes on a few texts,
// run through the float layers once at load.
//
// calibTexts are those texts: thirty chat turns, questions and
// assistant-style replies, written for this purpose (none is taken from
// an evaluation set). On e5-small-v2 the smoothing halves the int8
// vectors' distance from the float ones (BENCHMARKS.md, "int8
// e5-small-v2 with SmoothQuant").
//
//go:embed calib.txt
var calibText string

// layerMaxima holds, for one encoder layer, the largest |input| by column
// of its four linear layers: Q|K|V, attention output, intermediate and
// output.
type layerMaxima [4][]float32

// calibrate runs the model's float layers on calibText, one line at a
// time on up to Options.Workers goroutines, and returns the largest |input|
// of every linear layer (the same whatever the order: a maximum).
func (m *Model) calibrate() []layerMaxima {
	texts := strings.Split(strings.TrimSpace(calibText), "\n")
	workers := max(1, min(m.workers, len(texts)))
	maps := make([]map[*linear][]float32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ws := m.workspace()
			ws.amax = make(map[*linear][]float32)
			v := make([]float32, m.cfg.HiddenSize)
			for i := w; i < len(texts); i += workers {
				m.encode(context.Background(), ws, m.encodeText(m.docPrompt, texts[i]), v)
			}
			maps[w] = ws.amax
		})
	}
	wg.Wait()
	merged := maps[0]
	for _, am := range maps[1:] {
		for f, xs := range am {
			if merged[f] == nil {
				merged[f] = xs
				continue
			}
			for k, v := range xs {
				merged[f][k] = max(merged[f][k], v)
			}
		}
	}
	out := make([]layerMaxima, len(m.layers))
	for i, l := range m.layers {
		out[i] = layerMaxima{merged[l.qkv], merged[l.attnOut], merged[l.inter], merged[l.out]}
	}
	return out
}

// observeMax raises amax[f] to the largest |x| of each column of the
// first rows rows of x (row stride f.in).
func observeMax(amax map[*linear][]float32, f *linear, x []float32, rows int) {
	m := amax[f]
	if m == nil {
		m = make([]float32, f.in)
		amax[f] = m
	}
	for r := 0; r < rows; r++ {
		for k, v := range x[r*f.in : (r+1)*f.in] {
			m[k] = max(m[k], float32(math.Abs(float64(v))))
		}
	}
}
