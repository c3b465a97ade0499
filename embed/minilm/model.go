package minilm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/embed"
)

// ModelName is the directory name of all-MiniLM-L6-v2 under a models root.
const ModelName = "all-MiniLM-L6-v2"

// DefaultMaxSeqLen is the token limit ([CLS] and [SEP] included) used when
// the model directory does not say (sentence-transformers' max_seq_length
// for all-MiniLM-L6-v2).
const DefaultMaxSeqLen = 256

// DefaultRoot returns the default models root, $(os.UserCacheDir)/higmem/models.
func DefaultRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("minilm: locating the cache directory: %w", err)
	}
	return filepath.Join(dir, "higmem", "models"), nil
}

// ModelDir returns the directory of all-MiniLM-L6-v2 under a models root.
func ModelDir(root string) string { return filepath.Join(root, ModelName) }

// Pooling selects how token vectors become one sentence vector.
type Pooling int

const (
	// PoolingAuto follows 1_Pooling/config.json, mean pooling when absent.
	PoolingAuto Pooling = iota
	// PoolingMean averages the token vectors ([CLS] and [SEP] included), as
	// all-MiniLM-L6-v2 does.
	PoolingMean
	// PoolingCLS takes the [CLS] vector, as bge-small-en-v1.5 does.
	PoolingCLS
)

// Options configures Load. The zero value follows the model directory.
type Options struct {
	// MaxSeqLen caps the tokens per text, [CLS] and [SEP] included. Zero
	// means sentence_bert_config.json's max_seq_length, else
	// DefaultMaxSeqLen; it never exceeds max_position_embeddings.
	MaxSeqLen int
	// Pooling selects the pooling; PoolingAuto reads 1_Pooling/config.json.
	Pooling Pooling
	// Workers bounds the goroutines one Embed call uses; zero means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Name is the model name used in ID; empty means the directory's base
	// name.
	Name string
	// Precision selects float32, int8 or int16 linear layers; the zero
	// value follows the weights file.
	Precision Precision
}

// Precision selects the arithmetic of a model's linear layers (quant.go).
type Precision int

const (
	// PrecisionAuto runs a model as its file stores it: int8 linear layers
	// for a quantised ONNX file (e5-small-v2-q); for a float file, int16
	// layers (PrecisionInt16) where they are the faster, on CPUs with
	// AVX-512 VNNI or with AVX2 but not AVX-512, and float32 otherwise (on
	// AVX-512 without VNNI, float32's AVX-512 kernel is as fast as the
	// int16 AVX2 one).
	PrecisionAuto Precision = iota
	// PrecisionFloat32 runs every layer in float32, a quantised file's
	// weights dequantised.
	PrecisionFloat32
	// PrecisionInt8 runs the linear layers in int8, a float file's weights
	// smoothed (SmoothQuant, from a calibration at the first load, see
	// calibrate.go) and quantised per output column at load time (to 7
	// bits, as the quantised e5-small-v2 file stores them); the
	// embeddings, attention products, LayerNorm and GELU stay float32.
	PrecisionInt8
	// PrecisionInt16 runs the linear layers of a float file with int16
	// weights (quantised per output column at load time) and 13-bit
	// inputs (quant16.go). Its kernel is AVX-512 VNNI (VPDPWSSD) where the
	// CPU has it (AVX-512 F, BW, VL and VNNI: about 2.5 times float32's
	// texts per CPU second on an Intel Xeon with AVX-512), else AVX2
	// (VPMADDWD: about 1.4 times float32 on an AMD Zen 3, no faster than
	// float32's AVX-512 kernel on AVX-512 CPUs), else portable Go; every
	// kernel gives the same bits. Its vectors are within a few 1e-6 of 1 −
	// cosine of the float ones: the same vectors for retrieval, so the
	// model keeps the float model's ID. The rest (attention products,
	// LayerNorm, GELU) stays float32.
	PrecisionInt16
)

// Model is a BERT sentence encoder loaded from a sentence-transformers
// model directory. It implements embed.Embedder and is safe for concurrent
// use.
type Model struct {
	cfg        bertConfig
	name       string
	maxLen     int
	cls        bool
	lowerInput bool
	workers    int
	// queryPrompt and docPrompt are put before the texts of EmbedQuery
	// and Embed (stConfig).
	queryPrompt, docPrompt string
	tok                    *Tokenizer
	// int8 runs the linear layers with integer products, int16 ones when
	// wide is set too; idSuffix marks, in ID, vectors other than the
	// file's (":int8s", ":f32"; int16 layers make the float file's).
	int8, wide bool
	idSuffix   string

	wordEmb, posEmb, typeEmb []float32
	embLNg, embLNb           []float32
	layers                   []encoderLayer

	spaces sync.Pool // *workspace
}

var _ embed.QueryEmbedder = (*Model)(nil)

type encoderLayer struct {
	qkv, attnOut, inter, out     *linear
	qqkv, qattnOut, qinter, qout *qlinear // the integer layers, when Model.int8
	ln1g, ln1b, ln2g, ln2b       []float32
}

// modelFiles are the files Load cannot do without, besides the weights
// (weightFiles).
var modelFiles = []string{"config.json", "vocab.txt"}

// weightFiles are the files Load reads the weights from, the first present:
// the Hugging Face safetensors file or an ONNX export (onnx.go).
var weightFiles = []struct {
	name string
	read func(path string) (map[string]tensor, error)
}{{"model.safetensors", readSafetensors}, {"model.onnx", readONNX}}

// Load reads a sentence-transformers BERT model directory (config.json,
// vocab.txt, model.safetensors and the optional sentence-transformers
// configs). It returns an error wrapping embed.ErrNoModel when a required
// file is missing.
func Load(dir string, opts Options) (*Model, error) {
	for _, f := range modelFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("minilm: %s has no %s: %w (%s)", dir, f, embed.ErrNoModel, fetchHint(dir))
		} else if err != nil {
			return nil, fmt.Errorf("minilm: loading %s: %w", dir, err)
		}
	}
	m := &Model{name: opts.Name, workers: opts.Workers}
	if m.name == "" {
		m.name = filepath.Base(filepath.Clean(dir))
	}
	if m.workers <= 0 {
		m.workers = runtime.GOMAXPROCS(0)
	}
	if ok, err := readOptionalJSON(filepath.Join(dir, "config.json"), &m.cfg); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("minilm: %s has no config.json: %w", dir, embed.ErrNoModel)
	}
	if err := m.cfg.validate(); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	st, err := readSTConfig(dir)
	if err != nil {
		return nil, err
	}
	m.lowerInput = st.LowerInput
	m.queryPrompt, m.docPrompt = st.QueryPrompt, st.DocumentPrompt
	switch opts.Pooling {
	case PoolingAuto:
		m.cls = st.CLSPooling
	case PoolingCLS:
		m.cls = true
	case PoolingMean:
	default:
		return nil, fmt.Errorf("minilm: unknown pooling %d", opts.Pooling)
	}
	m.maxLen = firstPositive(opts.MaxSeqLen, st.MaxSeqLength, DefaultMaxSeqLen)
	m.maxLen = min(m.maxLen, m.cfg.MaxPositionEmbeddings)
	if m.maxLen < 2 {
		return nil, fmt.Errorf("minilm: max sequence length %d leaves no room for [CLS] and [SEP]", m.maxLen)
	}
	m.tok, err = LoadTokenizer(filepath.Join(dir, "vocab.txt"), TokenizerOptions{Lowercase: st.TokenizerLower, MaxLen: m.maxLen})
	if err != nil {
		return nil, err
	}
	ts, err := readWeights(dir)
	if err != nil {
		return nil, err
	}
	quantFile := false
	for _, t := range ts {
		quantFile = quantFile || t.q != nil
	}
	switch opts.Precision {
	case PrecisionAuto:
		m.int8 = quantFile
		if !quantFile && int16Faster() {
			m.int8, m.wide = true, true
		}
	case PrecisionFloat32:
		m.int8 = false
		if quantFile {
			m.idSuffix = ":f32"
		}
	case PrecisionInt8:
		m.int8 = true
		if !quantFile {
			m.idSuffix = ":int8s"
		}
	case PrecisionInt16:
		if quantFile {
			return nil, fmt.Errorf("%w: int16 layers need a float weights file; %s holds int8 weights", ErrBadConfig, dir)
		}
		m.int8, m.wide = true, true
	default:
		return nil, fmt.Errorf("minilm: unknown precision %d", opts.Precision)
	}
	var amax []layerMaxima
	if m.int8 && !m.wide && !quantFile {
		// Calibrate: run the float layers on calibText for the largest
		// input of each linear layer, which smooths its int8 form; or
		// read what an earlier load of the same files found.
		key := m.calibrationKey(dir)
		if amax = m.readCalibration(dir, key); amax == nil {
			m.int8 = false
			if err := m.setWeights(ts, nil); err != nil {
				return nil, fmt.Errorf("%w (in %s)", err, dir)
			}
			amax = m.calibrate()
			m.int8, m.layers = true, nil
			m.writeCalibration(dir, key, amax)
		}
	}
	if err := m.setWeights(ts, amax); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	if m.tok.VocabSize() > m.cfg.VocabSize {
		return nil, fmt.Errorf("%w: vocab.txt has %d tokens, the model %d (in %s)", ErrBadConfig, m.tok.VocabSize(), m.cfg.VocabSize, dir)
	}
	return m, nil
}

// readWeights reads the first of weightFiles present in dir.
func readWeights(dir string) (map[string]tensor, error) {
	for _, wf := range weightFiles {
		p := filepath.Join(dir, wf.name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("minilm: loading %s: %w", dir, err)
		}
		return wf.read(p)
	}
	return nil, fmt.Errorf("minilm: %s has neither model.safetensors nor model.onnx: %w (%s)", dir, embed.ErrNoModel, fetchHint(dir))
}

// fetchHint says how to fetch the model of dir, named by its base name.
func fetchHint(dir string) string {
	switch name := filepath.Base(filepath.Clean(dir)); name {
	case ModelName, E5ModelName, E5QuantModelName:
		return "run `higmem models fetch --model " + name + "`"
	}
	return "`higmem models fetch` fetches " + E5ModelName + " and " + ModelName
}

// firstPositive returns the first positive value, or 0.
func firstPositive(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}

// weightSet looks tensors up by name, accepting the "bert." prefix and the
// old gamma/beta LayerNorm names, and checks their shapes.
type weightSet struct {
	ts  map[string]tensor
	err error
}

func (w *weightSet) get(name string, shape ...int) []float32 {
	if t := w.find(name, shape); t != nil {
		return t.data
	}
	return nil
}

// tensor returns the tensor get(name) found (nil after an error).
func (w *weightSet) tensor(name string) *tensor {
	if w.err != nil {
		return nil
	}
	for _, c := range []string{name, "bert." + name} {
		if t, ok := w.ts[c]; ok {
			return &t
		}
	}
	return nil
}

func (w *weightSet) find(name string, shape []int) *tensor {
	if w.err != nil {
		return nil
	}
	cands := []string{name, "bert." + name}
	if alt, ok := strings.CutSuffix(name, "LayerNorm.weight"); ok {
		cands = append(cands, alt+"LayerNorm.gamma", "bert."+alt+"LayerNorm.gamma")
	} else if alt, ok := strings.CutSuffix(name, "LayerNorm.bias"); ok {
		cands = append(cands, alt+"LayerNorm.beta", "bert."+alt+"LayerNorm.beta")
	}
	for _, c := range cands {
		t, ok := w.ts[c]
		if !ok {
			continue
		}
		if !slices.Equal(t.shape, shape) {
			w.err = fmt.Errorf("%w: tensor %s has shape %v, want %v", ErrBadConfig, c, t.shape, shape)
			return nil
		}
		return &t
	}
	w.err = fmt.Errorf("%w: model.safetensors has no tensor %s", ErrBadConfig, name)
	return nil
}

func (m *Model) setWeights(ts map[string]tensor, amax []layerMaxima) error {
	c := &m.cfg
	h, inter := c.HiddenSize, c.IntermediateSize
	w := &weightSet{ts: ts}
	var qerr error
	// qlin builds the int8 layer of the weights named names (their rows
	// concatenated), taking the file's int8 values when it has them, and
	// otherwise quantising the float ones, smoothed by the input maxima am
	// when set (smoothScales).
	qlin := func(am []float32, b []float32, out, in int, names ...string) *qlinear {
		if !m.int8 || w.err != nil || qerr != nil {
			return nil
		}
		if m.wide {
			var fw []float32
			for _, name := range names {
				fw = append(fw, w.tensor(name).data...)
			}
			q, scale := quantizeWeights16(fw, out, in)
			l, err := newQLinear16(q, scale, b, out, in)
			if err != nil {
				qerr = err
			}
			return l
		}
		var q []int8
		var scale []float32
		var smooth []float32
		allFloat := true
		for _, name := range names {
			allFloat = allFloat && w.tensor(name).q == nil
		}
		if allFloat && am != nil {
			// Smoothed: every input column k scaled by s[k] in the
			// weights, by 1/s[k] in the inputs (quant.go).
			var fw []float32
			for _, name := range names {
				fw = append(fw, w.tensor(name).data...)
			}
			s := smoothScales(am, fw, out, in)
			for o := 0; o < out; o++ {
				row := fw[o*in : (o+1)*in]
				for k := range row {
					row[k] *= s[k]
				}
			}
			smooth = make([]float32, in)
			for k, v := range s {
				smooth[k] = 1 / v
			}
			q, scale = quantizeWeights(fw, out, in)
		} else {
			for _, name := range names {
				t := w.tensor(name)
				tq, ts := t.q, t.scale
				if tq == nil {
					tq, ts = quantizeWeights(t.data, t.shape[0], t.shape[1])
				}
				q, scale = append(q, tq...), append(scale, ts...)
			}
		}
		l, err := newQLinear(q, scale, b, out, in)
		if err != nil {
			qerr = err
			return nil
		}
		l.smooth = smooth
		return l
	}
	m.wordEmb = w.get("embeddings.word_embeddings.weight", c.VocabSize, h)
	m.posEmb = w.get("embeddings.position_embeddings.weight", c.MaxPositionEmbeddings, h)
	if c.TypeVocabSize > 0 {
		m.typeEmb = w.get("embeddings.token_type_embeddings.weight", c.TypeVocabSize, h)[:h:h]
	} else {
		m.typeEmb = make([]float32, h)
	}
	m.embLNg = w.get("embeddings.LayerNorm.weight", h)
	m.embLNb = w.get("embeddings.LayerNorm.bias", h)
	for i := 0; i < c.NumHiddenLayers && w.err == nil; i++ {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		q := w.get(p+"attention.self.query.weight", h, h)
		k := w.get(p+"attention.self.key.weight", h, h)
		v := w.get(p+"attention.self.value.weight", h, h)
		qb := w.get(p+"attention.self.query.bias", h)
		kb := w.get(p+"attention.self.key.bias", h)
		vb := w.get(p+"attention.self.value.bias", h)
		ow := w.get(p+"attention.output.dense.weight", h, h)
		ob := w.get(p+"attention.output.dense.bias", h)
		iw := w.get(p+"intermediate.dense.weight", inter, h)
		ib := w.get(p+"intermediate.dense.bias", inter)
		fw := w.get(p+"output.dense.weight", h, inter)
		fb := w.get(p+"output.dense.bias", h)
		l := encoderLayer{
			ln1g: w.get(p+"attention.output.LayerNorm.weight", h),
			ln1b: w.get(p+"attention.output.LayerNorm.bias", h),
			ln2g: w.get(p+"output.LayerNorm.weight", h),
			ln2b: w.get(p+"output.LayerNorm.bias", h),
		}
		if w.err != nil {
			break
		}
		// Q, K and V become one h → 3h layer: one pass over the input.
		if m.int8 {
			var am layerMaxima
			if i < len(amax) {
				am = amax[i]
			}
			l.qqkv = qlin(am[0], slices.Concat(qb, kb, vb), 3*h, h, p+"attention.self.query.weight", p+"attention.self.key.weight", p+"attention.self.value.weight")
			l.qattnOut = qlin(am[1], ob, h, h, p+"attention.output.dense.weight")
			l.qinter = qlin(am[2], ib, inter, h, p+"intermediate.dense.weight")
			l.qout = qlin(am[3], fb, h, inter, p+"output.dense.weight")
		} else {
			l.qkv = newLinear(slices.Concat(q, k, v), slices.Concat(qb, kb, vb), 3*h, h)
			l.attnOut = newLinear(ow, ob, h, h)
			l.inter = newLinear(iw, ib, inter, h)
			l.out = newLinear(fw, fb, h, inter)
		}
		m.layers = append(m.layers, l)
	}
	if w.err != nil {
		return w.err
	}
	return qerr
}

// Dim reports the embedding size (384 for all-MiniLM-L6-v2).
func (m *Model) Dim() int { return m.cfg.HiddenSize }

// ID names the model and its settings, e.g. "minilm:all-MiniLM-L6-v2:256",
// with ":cls" appended under CLS pooling, ":int8s" (smoothed int8) when a float model runs
// in int8 (PrecisionInt8) and ":f32" when a quantised one runs in float32.
func (m *Model) ID() string {
	id := "minilm:" + m.name + ":" + strconv.Itoa(m.maxLen)
	if m.cls {
		id += ":cls"
	}
	return id + m.idSuffix
}

// MaxSeqLen reports the token limit per text, [CLS] and [SEP] included.
func (m *Model) MaxSeqLen() int { return m.maxLen }

// Tokenizer returns the model's tokenizer (to count tokens, for example).
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one L2-normalised vector per text, in input order, each
// text preceded by the model's document prompt (none for
// all-MiniLM-L6-v2, "passage: " for e5-small-v2). Texts longer than
// MaxSeqLen tokens are truncated, as sentence-transformers does. The work is
// spread over up to Options.Workers goroutines, longest texts first; each
// text runs alone, without padding. Embed stops early and returns the
// context's error when ctx is done.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.embed(ctx, m.docPrompt, texts)
}

// EmbedQuery is Embed for questions: each text is preceded by the model's
// query prompt ("query: " for e5-small-v2) instead of its document prompt.
// For a model without prompts it is Embed.
func (m *Model) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return m.embed(ctx, m.queryPrompt, texts)
}

// embed embeds texts, each preceded by prompt.
func (m *Model) embed(ctx context.Context, prompt string, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("minilm: embedding: %w", err)
	}
	ids := make([][]int32, len(texts))
	order := make([]int, len(texts))
	for i, t := range texts {
		ids[i] = m.encodeText(prompt, t)
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(ids[b]) - len(ids[a]) })

	var next atomic.Int64
	work := func() {
		ws := m.workspace()
		defer m.spaces.Put(ws)
		for {
			k := int(next.Add(1) - 1)
			if k >= len(order) || ctx.Err() != nil {
				return
			}
			i := order[k]
			v := make([]float32, m.cfg.HiddenSize)
			if m.encode(ctx, ws, ids[i], v) {
				out[i] = v
			}
		}
	}
	workers := min(m.workers, len(texts))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("minilm: embedding: %w", err)
	}
	return out, nil
}

// encodeText returns the token ids the model embeds for text preceded by
// prompt.
func (m *Model) encodeText(prompt, text string) []int32 {
	text = prompt + text
	if m.lowerInput {
		text = strings.ToLower(text)
	}
	return m.tok.Encode(text)
}

// workspace holds the activations of one sequence. Buffers hold
// wsRows(maxLen) rows (see linear.forward and qlinear.forward).
type workspace struct {
	x, qkv, ctx, tmp, inter []float32
	scores                  []float32 // attention scores, row stride roundUp(n, 16)
	kpack, vpack, zeros     []float32 // packed Kᵀ and V of one head; a zero bias
	q                       qscratch  // quantised rows of the int8 layers
	// amax, during calibration only, gets the largest |input| of each
	// float layer, by column.
	amax map[*linear][]float32
}

// wsRows is the rows of a workspace for sequences of up to n tokens: both
// the float micro-kernel's blocks of kernelRows and the int8 one's of qRows
// fit.
func wsRows(n int) int { return roundUp(n, kernelRows*qRows) }

func (m *Model) workspace() *workspace {
	if ws, ok := m.spaces.Get().(*workspace); ok {
		return ws
	}
	rows := wsRows(m.maxLen)
	h := m.cfg.HiddenSize
	lp := roundUp(m.maxLen, panelWidth)
	dhPad := roundUp(h/m.cfg.NumAttentionHeads, panelWidth)
	return &workspace{
		x:      make([]float32, rows*h),
		qkv:    make([]float32, rows*3*h),
		ctx:    make([]float32, rows*h),
		tmp:    make([]float32, rows*h),
		inter:  make([]float32, rows*m.cfg.IntermediateSize),
		scores: make([]float32, rows*lp),
		kpack:  make([]float32, lp*dhPad),
		vpack:  make([]float32, dhPad*m.maxLen),
		zeros:  make([]float32, max(lp, dhPad)),
		q: qscratch{
			a:  make([]uint8, rows*roundUp(max(h, m.cfg.IntermediateSize), 4)),
			rs: make([]float32, rows),
			rm: make([]float32, rows),
		},
	}
}

// dense applies layer f, or its int8 form q when the model runs in int8.
func (ws *workspace) dense(f *linear, q *qlinear, dst, x []float32, rows int) {
	if q != nil {
		q.forward(dst, x, rows, &ws.q)
		return
	}
	if ws.amax != nil {
		observeMax(ws.amax, f, x, rows)
	}
	f.forward(dst, x, rows)
}

// encode runs the encoder on one token sequence and writes the pooled,
// normalised vector to v. It reports false if ctx was cancelled midway.
func (m *Model) encode(ctx context.Context, ws *workspace, ids []int32, v []float32) bool {
	h := m.cfg.HiddenSize
	n := len(ids)
	x := ws.x
	for t, id := range ids {
		row := x[t*h : (t+1)*h]
		word := m.wordEmb[int(id)*h : (int(id)+1)*h]
		pos := m.posEmb[t*h : (t+1)*h]
		for i := range row {
			row[i] = word[i] + pos[i] + m.typeEmb[i]
		}
	}
	layerNorm(x, n, h, m.embLNg, m.embLNb, m.cfg.LayerNormEps)

	for li := range m.layers {
		if ctx.Err() != nil {
			return false
		}
		l := &m.layers[li]
		ws.dense(l.qkv, l.qqkv, ws.qkv, x, n)
		m.attention(ws, n)
		ws.dense(l.attnOut, l.qattnOut, ws.tmp, ws.ctx, n)
		residualLayerNorm(x, ws.tmp, n, h, l.ln1g, l.ln1b, m.cfg.LayerNormEps)

		ws.dense(l.inter, l.qinter, ws.inter, x, n)
		gelu(ws.inter[:n*m.cfg.IntermediateSize])
		ws.dense(l.out, l.qout, ws.tmp, ws.inter, n)
		residualLayerNorm(x, ws.tmp, n, h, l.ln2g, l.ln2b, m.cfg.LayerNormEps)
	}

	if m.cls {
		copy(v, x[:h])
	} else {
		clear(v)
		for t := 0; t < n; t++ {
			addInto(v, x[t*h:(t+1)*h])
		}
		inv := 1 / float32(n)
		for i := range v {
			v[i] *= inv
		}
	}
	normalize(v)
	return true
}

// attention computes multi-head self-attention from the packed Q|K|V rows
// in ws.qkv into ws.ctx (n × hidden). Both products of each head run on the
// matrix micro-kernel: Kᵀ (scaled by 1/√d) and V are packed into panels,
// then scores = Q·Kᵀ, a softmax per row, and ctx = P·V.
func (m *Model) attention(ws *workspace, n int) {
	h := m.cfg.HiddenSize
	heads := m.cfg.NumAttentionHeads
	dh := h / heads
	dhPad := roundUp(dh, panelWidth)
	scale := float32(1 / math.Sqrt(float64(dh)))
	lp := roundUp(n, panelWidth) // scores row stride
	qkv, scores := ws.qkv, ws.scores
	kp := ws.kpack[:lp*dh]
	vp := ws.vpack[:dhPad*n]
	zeros := ws.zeros[:max(lp, dhPad)]
	for hd := 0; hd < heads; hd++ {
		off := hd * dh
		// Kᵀ as a dh × n matrix in panels of 16 keys: kp[j/16][d][j%16].
		packKT(kp, qkv[h+off:], 3*h, n, dh, scale)
		matmulPacked(scores, lp, qkv[off:], 3*h, n, dh, kp, zeros, lp)
		for i := 0; i < n; i++ {
			softmax(scores[i*lp : i*lp+n])
		}
		// V as an n × dh matrix in panels of 16 columns: vp[c/16][j][c%16].
		for j := 0; j < n; j++ {
			vr := qkv[j*3*h+2*h+off : j*3*h+2*h+off+dh]
			for c0 := 0; c0 < dh; c0 += panelWidth {
				dst := vp[c0*n+j*panelWidth : c0*n+(j+1)*panelWidth]
				clear(dst[copy(dst, vr[c0:]):])
			}
		}
		matmulPacked(ws.ctx[off:], h, scores, lp, n, n, vp, zeros, dh)
	}
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// addInto computes dst[i] += src[i].
func addInto(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// normalize scales v to unit L2 norm (torch.nn.functional.normalize, eps
// 1e-12).
func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := float32(1 / max(math.Sqrt(ss), 1e-12))
	for i := range v {
		v[i] *= inv
	}
}
