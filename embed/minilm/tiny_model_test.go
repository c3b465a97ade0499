package minilm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
)

// A tiny random BERT written to a temporary directory lets the whole
// Load/Embed path run without the real weights, against naiveEncode, a
// float64 transcription of the BERT forward pass.

type tinyConfig struct {
	hidden, layers, heads, inter, maxPos int
	prefix                               string // "" or "bert."
	half                                 bool   // store weights as F16
	cls                                  bool   // 1_Pooling says CLS
	maxSeq                               int    // sentence_bert_config max_seq_length
}

type tinyModel struct {
	cfg   tinyConfig
	vocab int
	w     map[string][]float64 // by name without prefix
	dir   string
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newTinyModel(t testing.TB, cfg tinyConfig) *tinyModel {
	t.Helper()
	vocabBytes, err := os.ReadFile(filepath.Join("testdata", "tiny_vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := strings.Count(string(vocabBytes), "\n")
	tm := &tinyModel{cfg: cfg, vocab: vocab, w: map[string][]float64{}, dir: t.TempDir()}
	r := rand.New(rand.NewPCG(7, uint64(cfg.hidden)))
	tensors := map[string]stTensor{}
	add := func(name string, scale, offset float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		vals := make([]float64, n)
		if cfg.half {
			hs := make([]uint16, n)
			for i := range hs {
				// A finite half near offset ± scale.
				hs[i] = f32ToHalfTest(float32(offset + scale*(2*r.Float64()-1)))
				vals[i] = halfValue(hs[i])
			}
			tensors[cfg.prefix+name] = u16Tensor("F16", shape, hs)
		} else {
			fs := make([]float32, n)
			for i := range fs {
				fs[i] = float32(offset + scale*(2*r.Float64()-1))
				vals[i] = float64(fs[i])
			}
			tensors[cfg.prefix+name] = f32Tensor(shape, fs)
		}
		tm.w[name] = vals
	}
	h, in := cfg.hidden, cfg.inter
	add("embeddings.word_embeddings.weight", 1, 0, vocab, h)
	add("embeddings.position_embeddings.weight", 0.5, 0, cfg.maxPos, h)
	add("embeddings.token_type_embeddings.weight", 0.5, 0, 2, h)
	add("embeddings.LayerNorm.weight", 0.2, 1, h)
	add("embeddings.LayerNorm.bias", 0.2, 0, h)
	for l := 0; l < cfg.layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		s := 1 / math.Sqrt(float64(h))
		for _, m := range []string{"query", "key", "value"} {
			add(p+"attention.self."+m+".weight", 2*s, 0, h, h)
			add(p+"attention.self."+m+".bias", 0.1, 0, h)
		}
		add(p+"attention.output.dense.weight", s, 0, h, h)
		add(p+"attention.output.dense.bias", 0.1, 0, h)
		add(p+"attention.output.LayerNorm.weight", 0.2, 1, h)
		add(p+"attention.output.LayerNorm.bias", 0.2, 0, h)
		add(p+"intermediate.dense.weight", 2*s, 0, in, h)
		add(p+"intermediate.dense.bias", 0.1, 0, in)
		add(p+"output.dense.weight", 1/math.Sqrt(float64(in)), 0, h, in)
		add(p+"output.dense.bias", 0.1, 0, h)
		add(p+"output.LayerNorm.weight", 0.2, 1, h)
		add(p+"output.LayerNorm.bias", 0.2, 0, h)
	}
	tensors[cfg.prefix+"embeddings.position_ids"] = stTensor{"I64", []int{1, cfg.maxPos}, make([]byte, 8*cfg.maxPos)}
	if err := os.WriteFile(filepath.Join(tm.dir, "model.safetensors"), encodeSafetensors(t, tensors), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tm.dir, "vocab.txt"), vocabBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(tm.dir, "config.json"), map[string]any{
		"model_type": "bert", "hidden_act": "gelu", "hidden_size": h, "num_hidden_layers": cfg.layers,
		"num_attention_heads": cfg.heads, "intermediate_size": in, "max_position_embeddings": cfg.maxPos,
		"layer_norm_eps": 1e-12, "vocab_size": vocab, "type_vocab_size": 2, "position_embedding_type": "absolute",
	})
	if cfg.maxSeq > 0 {
		writeJSON(t, filepath.Join(tm.dir, "sentence_bert_config.json"), map[string]any{"max_seq_length": cfg.maxSeq, "do_lower_case": false})
	}
	writeJSON(t, filepath.Join(tm.dir, "1_Pooling", "config.json"), map[string]any{
		"word_embedding_dimension": h, "pooling_mode_cls_token": cfg.cls, "pooling_mode_mean_tokens": !cfg.cls,
	})
	return tm
}

// f32ToHalfTest rounds a float32 in the normal half range to a half by
// truncation (exactness does not matter: the test decodes what it wrote).
func f32ToHalfTest(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	if exp <= 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// naiveEncode is the BERT sentence encoder written out in float64.
func (tm *tinyModel) naiveEncode(ids []int32, cls bool) []float64 {
	c := tm.cfg
	h, n, dh := c.hidden, len(ids), c.hidden/c.heads
	w := tm.w
	ln := func(x []float64, g, b []float64) {
		var mean, vr float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		for _, v := range x {
			vr += (v - mean) * (v - mean)
		}
		vr /= float64(len(x))
		for i := range x {
			x[i] = (x[i]-mean)/math.Sqrt(vr+1e-12)*g[i] + b[i]
		}
	}
	lin := func(x []float64, wt, b []float64, out int) []float64 {
		y := make([]float64, out)
		for o := range y {
			y[o] = b[o]
			for k, v := range x {
				y[o] += v * wt[o*len(x)+k]
			}
		}
		return y
	}
	xs := make([][]float64, n)
	for t, id := range ids {
		x := make([]float64, h)
		for i := range x {
			x[i] = w["embeddings.word_embeddings.weight"][int(id)*h+i] + w["embeddings.position_embeddings.weight"][t*h+i] + w["embeddings.token_type_embeddings.weight"][i]
		}
		ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
		xs[t] = x
	}
	for l := 0; l < c.layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		q, k, v := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for t := range xs {
			q[t] = lin(xs[t], w[p+"attention.self.query.weight"], w[p+"attention.self.query.bias"], h)
			k[t] = lin(xs[t], w[p+"attention.self.key.weight"], w[p+"attention.self.key.bias"], h)
			v[t] = lin(xs[t], w[p+"attention.self.value.weight"], w[p+"attention.self.value.bias"], h)
		}
		next := make([][]float64, n)
		for i := 0; i < n; i++ {
			ctx := make([]float64, h)
			for hd := 0; hd < c.heads; hd++ {
				s := make([]float64, n)
				mx := math.Inf(-1)
				for j := 0; j < n; j++ {
					for d := 0; d < dh; d++ {
						s[j] += q[i][hd*dh+d] * k[j][hd*dh+d]
					}
					s[j] /= math.Sqrt(float64(dh))
					mx = max(mx, s[j])
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for j := range s {
					for d := 0; d < dh; d++ {
						ctx[hd*dh+d] += s[j] / sum * v[j][hd*dh+d]
					}
				}
			}
			a := lin(ctx, w[p+"attention.output.dense.weight"], w[p+"attention.output.dense.bias"], h)
			for d := range a {
				a[d] += xs[i][d]
			}
			ln(a, w[p+"attention.output.LayerNorm.weight"], w[p+"attention.output.LayerNorm.bias"])
			m := lin(a, w[p+"intermediate.dense.weight"], w[p+"intermediate.dense.bias"], c.inter)
			for d := range m {
				m[d] = m[d] * 0.5 * (1 + math.Erf(m[d]/math.Sqrt2))
			}
			o := lin(m, w[p+"output.dense.weight"], w[p+"output.dense.bias"], h)
			for d := range o {
				o[d] += a[d]
			}
			ln(o, w[p+"output.LayerNorm.weight"], w[p+"output.LayerNorm.bias"])
			next[i] = o
		}
		xs = next
	}
	out := make([]float64, h)
	if cls {
		copy(out, xs[0])
	} else {
		for _, x := range xs {
			for d := range out {
				out[d] += x[d] / float64(n)
			}
		}
	}
	var norm float64
	for _, v := range out {
		norm += v * v
	}
	for d := range out {
		out[d] /= math.Sqrt(norm)
	}
	return out
}

var tinyTexts = []string{
	"Hello, World!",
	"[Image: a dog] unaffable cafe",
	"",
	"hello hello hello world world , ! a dog a dog e-mail hello world hello", // truncated
	"我 안 dog's",
}

func TestTinyModelMatchesNaive(t *testing.T) {
	tests := []struct {
		name string
		cfg  tinyConfig
		opts Options
	}{
		{"mean f32", tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12}, Options{}},
		{"cls f16 bert prefix", tinyConfig{hidden: 48, layers: 1, heads: 3, inter: 80, maxPos: 20, prefix: "bert.", half: true, cls: true}, Options{}},
		{"odd sizes, mean forced", tinyConfig{hidden: 20, layers: 2, heads: 2, inter: 36, maxPos: 9, cls: true}, Options{Pooling: PoolingMean, Workers: 3}},
	}
	for _, tc := range tests {
		kernelVariants(t, func(t *testing.T) {
			t.Run(tc.name, func(t *testing.T) {
				tm := newTinyModel(t, tc.cfg)
				m, err := Load(tm.dir, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if m.Dim() != tc.cfg.hidden {
					t.Errorf("Dim = %d, want %d", m.Dim(), tc.cfg.hidden)
				}
				got, err := m.Embed(context.Background(), tinyTexts)
				if err != nil {
					t.Fatal(err)
				}
				cls := tc.cfg.cls && tc.opts.Pooling != PoolingMean
				for i, text := range tinyTexts {
					ids := m.Tokenizer().Encode(text)
					if len(ids) > m.MaxSeqLen() {
						t.Fatalf("%q: %d ids > MaxSeqLen %d", text, len(ids), m.MaxSeqLen())
					}
					want := tm.naiveEncode(ids, cls)
					for d := range want {
						if math.Abs(float64(got[i][d])-want[d]) > 2e-4 {
							t.Fatalf("%q: v[%d] = %v, want %v", text, d, got[i][d], want[d])
						}
					}
				}
			})
		})
	}
}

func TestTinyModelSettings(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 16, layers: 1, heads: 2, inter: 32, maxPos: 10, maxSeq: 12, cls: true})
	m, err := Load(tm.dir, Options{Name: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	// max_seq_length 12 is capped by max_position_embeddings 10.
	if m.MaxSeqLen() != 10 || m.ID() != "minilm:tiny:10:cls" {
		t.Errorf("MaxSeqLen %d ID %q, want 10 and minilm:tiny:10:cls", m.MaxSeqLen(), m.ID())
	}
	m, err = Load(tm.dir, Options{MaxSeqLen: 4, Pooling: PoolingMean})
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxSeqLen() != 4 || m.ID() != "minilm:"+filepath.Base(tm.dir)+":4" {
		t.Errorf("MaxSeqLen %d ID %q", m.MaxSeqLen(), m.ID())
	}
	if ids := m.Tokenizer().Encode("hello world hello"); len(ids) != 4 {
		t.Errorf("ids %v, want 4 after truncation", ids)
	}
}

func TestEmbedOrderConcurrencyAndEmpty(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16})
	m, err := Load(tm.dir, Options{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got, err := m.Embed(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Embed(nil) = %v, %v", got, err)
	}
	// Many texts of varied lengths, embedded together and one at a time
	// from several goroutines at once: same vectors, input order.
	var texts []string
	for i := 0; i < 40; i++ {
		texts = append(texts, strings.Repeat("hello world ", i%7)+tinyTexts[i%len(tinyTexts)])
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			batch, err := m.Embed(ctx, texts)
			if err != nil {
				errs <- err
				return
			}
			for i, text := range texts {
				one, err := m.Embed(ctx, []string{text})
				if err != nil {
					errs <- err
					return
				}
				if !slices.Equal(one[0], batch[i]) {
					errs <- fmt.Errorf("text %d: batch vector differs from single vector", i)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestEmbedCancelled(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 16, layers: 1, heads: 2, inter: 32, maxPos: 16})
	m, err := Load(tm.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestLoadBadModels(t *testing.T) {
	base := tinyConfig{hidden: 16, layers: 1, heads: 2, inter: 32, maxPos: 16}
	tests := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   error
	}{
		{"no safetensors", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) }, embed.ErrNoModel},
		{"tanh gelu", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"hidden_act": "gelu_new", "hidden_size": 16,
				"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 16, "vocab_size": 29})
		}, ErrBadConfig},
		{"heads do not divide hidden", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"hidden_size": 16,
				"num_hidden_layers": 1, "num_attention_heads": 3, "intermediate_size": 32, "max_position_embeddings": 16, "vocab_size": 29})
		}, ErrBadConfig},
		{"more layers than tensors", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"hidden_size": 16,
				"num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 16, "vocab_size": 29})
		}, ErrBadConfig},
		{"wrong intermediate size", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"hidden_size": 16,
				"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 48, "max_position_embeddings": 16, "vocab_size": 29})
		}, ErrBadConfig},
		{"corrupt safetensors", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte("not a model"), 0o644)
		}, ErrBadSafetensors},
		{"bad pooling json", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), []byte("{"), 0o644)
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTinyModel(t, base)
			tc.mutate(t, tm.dir)
			_, err := Load(tm.dir, Options{})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}
