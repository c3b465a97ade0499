package minilm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// stTensor is a tensor to write into a test safetensors file. raw holds the
// little-endian bytes.
type stTensor struct {
	dtype string
	shape []int
	raw   []byte
}

func f32Tensor(shape []int, data []float32) stTensor {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return stTensor{"F32", shape, raw}
}

func u16Tensor(dtype string, shape []int, data []uint16) stTensor {
	raw := make([]byte, 2*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint16(raw[2*i:], v)
	}
	return stTensor{dtype, shape, raw}
}

// encodeSafetensors builds a safetensors image. Tensors are laid out in
// sorted name order.
func encodeSafetensors(t testing.TB, ts map[string]stTensor) []byte {
	t.Helper()
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		x := ts[n]
		hdr[n] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int{len(data), len(data) + len(x.raw)}}
		data = append(data, x.raw...)
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 { // the format pads the header with spaces
		h = append(h, ' ')
	}
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint64(len(h)))
	out.Write(h)
	out.Write(data)
	return out.Bytes()
}

// halfValue decodes an IEEE half the slow, obvious way.
func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m/1024, -14)
	case 0x1f:
		if m == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+m/1024, e-15)
}

func TestF16ToF32AllValues(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got := float64(f16ToF32(uint16(h)))
		want := halfValue(uint16(h))
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("f16 %#04x: %v, want NaN", h, got)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("f16 %#04x: %v, want %v", h, got, want)
		}
	}
}

func TestReadSafetensors(t *testing.T) {
	img := encodeSafetensors(t, map[string]stTensor{
		"a.weight":     f32Tensor([]int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}),
		"b.half":       u16Tensor("F16", []int{3}, []uint16{0x3c00, 0xc000, 0x3555}), // 1, -2, 0.33325195
		"c.bf16":       u16Tensor("BF16", []int{2}, []uint16{0x3f80, 0xc0a0}),        // 1, -5
		"position_ids": {"I64", []int{1, 2}, make([]byte, 16)},
		"empty":        f32Tensor([]int{0}, nil),
	})
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := readSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, shape []int, want []float32) {
		t.Helper()
		x, ok := ts[name]
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		if !slices.Equal(x.shape, shape) || !slices.Equal(x.data, want) {
			t.Errorf("%s = %v %v, want %v %v", name, x.shape, x.data, shape, want)
		}
	}
	check("a.weight", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5})
	check("b.half", []int{3}, []float32{1, -2, float32(halfValue(0x3555))})
	check("c.bf16", []int{2}, []float32{1, -5})
	check("empty", []int{0}, []float32{})
	if _, ok := ts["position_ids"]; ok {
		t.Error("I64 tensor returned; want it skipped")
	}
	if _, ok := ts["__metadata__"]; ok {
		t.Error("__metadata__ returned as a tensor")
	}
}

func TestReadSafetensorsMalformed(t *testing.T) {
	good := encodeSafetensors(t, map[string]stTensor{"w": f32Tensor([]int{2}, []float32{1, 2})})
	hdrLen := binary.LittleEndian.Uint64(good)
	withHeader := func(h string) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, uint64(len(h)))
		b.WriteString(h)
		b.Write(make([]byte, 8))
		return b.Bytes()
	}
	tests := []struct {
		name string
		img  []byte
	}{
		{"short file", good[:5]},
		{"header longer than file", append(binary.LittleEndian.AppendUint64(nil, 1<<20), good[8:]...)},
		{"truncated data", good[:8+hdrLen+4]},
		{"bad JSON", withHeader(`{"w":`)},
		{"offsets do not match shape", withHeader(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`)},
		{"negative offsets", withHeader(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}`)},
		{"negative shape", withHeader(`{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`)},
		{"tensor not an object", withHeader(`{"w":[1,2]}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeSafetensors(bytes.NewReader(tc.img), int64(len(tc.img)))
			if !errors.Is(err, ErrBadSafetensors) {
				t.Errorf("err = %v, want ErrBadSafetensors", err)
			}
		})
	}
}

func FuzzDecodeSafetensors(f *testing.F) {
	f.Add(encodeSafetensors(f, map[string]stTensor{
		"w": f32Tensor([]int{2}, []float32{1, 2}),
		"h": u16Tensor("F16", []int{1}, []uint16{0x3c00}),
	}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, img []byte) {
		ts, err := decodeSafetensors(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		for name, x := range ts {
			n := 1
			for _, d := range x.shape {
				n *= d
			}
			if n != len(x.data) {
				t.Fatalf("%s: shape %v but %d values", name, x.shape, len(x.data))
			}
		}
	})
}
