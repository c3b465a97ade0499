package minilm

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
// calibText holds those texts, one a line: thirty chat turns, questions
// and assistant-style replies, written for this purpose (none is taken
// from an evaluation set). On e5-small-v2 the smoothing halves the int8
// vectors' distance from the float ones (BENCHMARKS.md, "int8
// e5-small-v2 with SmoothQuant").
//
//go:embed calib.txt
var calibText string

// calibrationFile is the file, in the model's directory, that keeps what
// calibrate found, so that later loads skip it (about a CPU second). It is
// a cache: its first line names the calibration texts, the scheme and
// the weight file's size and modification time, and a file whose first
// line differs is computed again and replaced. A directory that cannot be
// written only costs the calibration at every load.
const calibrationFile = "int8s-calibration.bin"

// calibrationKey is the first line of the calibration file that fits the
// model loaded from dir: what decides the layers' inputs on the
// calibration texts (the texts, the document prompt and lowercasing, by
// SHA-256, and the token limit), the smoothing's α, and the weight file's
// name, size and modification time.
func (m *Model) calibrationKey(dir string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%q %q %v", calibText, m.docPrompt, m.lowerInput)))
	key := fmt.Sprintf("higmem int8s calibration v1 %x max=%d α=%g", sum[:8], m.maxLen, smoothAlpha)
	for _, wf := range weightFiles {
		if fi, err := os.Stat(filepath.Join(dir, wf.name)); err == nil {
			return fmt.Sprintf("%s %s %d %d\n", key, wf.name, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return key + "\n"
}

// calibrationLens are the lengths of one layer's maxima.
func (m *Model) calibrationLens() [4]int {
	h := m.cfg.HiddenSize
	return [4]int{h, h, h, m.cfg.IntermediateSize}
}

// readCalibration returns the maxima the calibration file of dir holds
// under key, or nil.
func (m *Model) readCalibration(dir, key string) []layerMaxima {
	b, err := os.ReadFile(filepath.Join(dir, calibrationFile))
	if err != nil || !bytes.HasPrefix(b, []byte(key)) {
		return nil
	}
	b = b[len(key):]
	lens := m.calibrationLens()
	per := 4 * (lens[0] + lens[1] + lens[2] + lens[3])
	if len(b) != m.cfg.NumHiddenLayers*per {
		return nil
	}
	out := make([]layerMaxima, m.cfg.NumHiddenLayers)
	for i := range out {
		for j, n := range lens {
			xs := make([]float32, n)
			for k := range xs {
				xs[k] = math.Float32frombits(binary.LittleEndian.Uint32(b))
				b = b[4:]
			}
			out[i][j] = xs
		}
	}
	return out
}

// writeCalibration keeps amax in the calibration file of dir under key,
// through a temporary file renamed over it; it fails silently (the file
// is a cache).
func (m *Model) writeCalibration(dir, key string, amax []layerMaxima) {
	b := []byte(key)
	for _, l := range amax {
		for _, xs := range l {
			for _, v := range xs {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
	}
	f, err := os.CreateTemp(dir, calibrationFile+".*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Chmod(0o644) // as the model's own files
	}
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, calibrationFile)) != nil {
		os.Remove(f.Name())
	}
}

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
