package minilm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// protoWriter builds protobuf messages for the ONNX tests.
type protoWriter []byte

func (w *protoWriter) key(field, wire int) {
	*w = binary.AppendUvarint(*w, uint64(field<<3|wire))
}

func (w *protoWriter) varint(field int, v uint64) {
	w.key(field, 0)
	*w = binary.AppendUvarint(*w, v)
}

func (w *protoWriter) bytes(field int, b []byte) {
	w.key(field, 2)
	*w = binary.AppendUvarint(*w, uint64(len(b)))
	*w = append(*w, b...)
}

// onnxInit encodes a float TensorProto; packed chooses packed dims and
// float_data over one varint per dim and raw_data.
func onnxInit(name string, dims []int, vals []float32, packed bool) []byte {
	var t protoWriter
	if packed {
		var d []byte
		for _, x := range dims {
			d = binary.AppendUvarint(d, uint64(x))
		}
		t.bytes(1, d)
	} else {
		for _, x := range dims {
			t.varint(1, uint64(x))
		}
	}
	t.varint(2, onnxFloat)
	t.bytes(8, []byte(name))
	var raw []byte
	for _, v := range vals {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	if packed {
		t.bytes(4, raw)
	} else {
		t.bytes(9, raw)
	}
	return t
}

// onnxNode encodes a NodeProto.
func onnxNode(name, op string, inputs ...string) []byte {
	var n protoWriter
	for _, in := range inputs {
		n.bytes(1, []byte(in))
	}
	n.bytes(2, []byte(name+"_output_0"))
	n.bytes(3, []byte(name))
	n.bytes(4, []byte(op))
	return n
}

// writeONNX exports a tiny model's weights the way torch.onnx does: the
// linear layers' weights as anonymous, input-major operands of MatMul nodes,
// the rest under their own names, and an integer position_ids constant.
func writeONNX(t *testing.T, tm *tinyModel, path string) {
	t.Helper()
	var g protoWriter
	names := make([]string, 0, len(tm.w))
	for name := range tm.w {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		vals := make([]float32, len(tm.w[name]))
		for j, v := range tm.w[name] {
			vals[j] = float32(v)
		}
		shape := tinyShape(tm, name)
		if strings.HasPrefix(name, "encoder.") && strings.HasSuffix(name, ".weight") && len(shape) == 2 {
			anon := fmt.Sprintf("onnx::MatMul_%d", 1000+i)
			node := "/" + strings.ReplaceAll(strings.TrimSuffix(name, ".weight"), ".", "/") + "/MatMul"
			node = strings.Replace(node, "/layer/", "/layer.", 1)
			g.bytes(1, onnxNode(node, "MatMul", "/prev_output_0", anon))
			g.bytes(5, onnxInit(anon, []int{shape[1], shape[0]}, transpose(vals, shape[0], shape[1]), i%2 == 0))
			continue
		}
		g.bytes(5, onnxInit(name, shape, vals, i%2 == 0))
	}
	g.bytes(1, onnxNode("/embeddings/Add", "Add", "a", "b"))
	var pos protoWriter
	pos.varint(1, 1)
	pos.varint(1, uint64(tm.cfg.maxPos))
	pos.varint(2, 7)
	pos.bytes(8, []byte("embeddings.position_ids"))
	pos.bytes(9, make([]byte, 8*tm.cfg.maxPos))
	g.bytes(5, pos)
	var m protoWriter
	m.varint(1, 8) // ir_version
	m.bytes(7, g)
	if err := os.WriteFile(path, m, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyShape returns the shape newTinyModel gave a weight.
func tinyShape(tm *tinyModel, name string) []int {
	h, in := tm.cfg.hidden, tm.cfg.inter
	switch {
	case name == "embeddings.word_embeddings.weight":
		return []int{tm.vocab, h}
	case name == "embeddings.position_embeddings.weight":
		return []int{tm.cfg.maxPos, h}
	case name == "embeddings.token_type_embeddings.weight":
		return []int{2, h}
	case strings.HasSuffix(name, "intermediate.dense.weight"):
		return []int{in, h}
	case strings.HasSuffix(name, "output.dense.weight") && !strings.Contains(name, "attention"):
		return []int{h, in}
	case strings.HasSuffix(name, "intermediate.dense.bias"):
		return []int{in}
	case strings.HasSuffix(name, "LayerNorm.weight"), strings.HasSuffix(name, "LayerNorm.bias"), strings.HasSuffix(name, ".bias"):
		return []int{h}
	}
	return []int{h, h}
}

// TestONNXMatchesSafetensors loads one tiny model from its safetensors file
// and from an ONNX export of it: the vectors must be the same.
func TestONNXMatchesSafetensors(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 8, layers: 2, heads: 2, inter: 16, maxPos: 32})
	onnxDir := t.TempDir()
	for _, f := range []string{"vocab.txt", "config.json", filepath.Join("1_Pooling", "config.json")} {
		b, err := os.ReadFile(filepath.Join(tm.dir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(onnxDir, f), b)
	}
	writeONNX(t, tm, filepath.Join(onnxDir, "model.onnx"))

	ref, err := Load(tm.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(onnxDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"hello world", "the quick brown fox", "a"}
	want, err := ref.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := got.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if !slices.Equal(vs[i], want[i]) {
			t.Errorf("%q: ONNX model gives %v, safetensors %v", texts[i], vs[i][:4], want[i][:4])
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestONNXErrors covers files this reader refuses.
func TestONNXErrors(t *testing.T) {
	graph := func(parts ...[]byte) []byte {
		var g protoWriter
		for _, p := range parts {
			g.bytes(5, p)
		}
		var m protoWriter
		m.bytes(7, g)
		return m
	}
	var external protoWriter
	external.varint(1, 2)
	external.varint(2, onnxFloat)
	external.bytes(8, []byte("w"))
	external.varint(14, 1)
	for name, b := range map[string][]byte{
		"no graph":          {0x08, 0x01},
		"truncated":         graph(onnxInit("w", []int{2}, []float32{1, 2}, false))[:9],
		"short data":        graph(onnxInit("w", []int{3}, []float32{1, 2}, false)),
		"external data":     graph(external),
		"duplicate name":    graph(onnxInit("w", []int{1}, []float32{1}, false), onnxInit("w", []int{1}, []float32{2}, true)),
		"bad wire type":     {0x0f},
		"overlong length":   {0x3a, 0xff, 0x01},
		"truncated fixed64": {0x09, 0x01},
	} {
		if _, err := decodeONNX(b); !errors.Is(err, errONNX) {
			t.Errorf("%s: err %v, want errONNX", name, err)
		}
	}
	if _, err := readONNX(filepath.Join(t.TempDir(), "none.onnx")); err == nil {
		t.Error("missing file: no error")
	}
}

// FuzzDecodeONNX checks that no input makes the reader panic.
func FuzzDecodeONNX(f *testing.F) {
	var g protoWriter
	g.bytes(1, onnxNode("/encoder/layer.0/output/dense/MatMul", "MatMul", "x", "onnx::MatMul_1"))
	g.bytes(5, onnxInit("onnx::MatMul_1", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}, false))
	g.bytes(5, onnxInit("b", []int{3}, []float32{1, 2, 3}, true))
	var m protoWriter
	m.bytes(7, g)
	f.Add([]byte(m))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := decodeONNX(b)
		if err != nil {
			return
		}
		for name, tn := range ts {
			n := 1
			for _, d := range tn.shape {
				n *= d
			}
			if n != len(tn.data) {
				t.Fatalf("%s: %d values for shape %v", name, len(tn.data), tn.shape)
			}
		}
	})
}
