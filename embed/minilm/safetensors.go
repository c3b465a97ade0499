package minilm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// ErrBadSafetensors is returned for a malformed .safetensors file.
var ErrBadSafetensors = errors.New("minilm: malformed safetensors file")

// maxHeaderSize bounds the JSON header (the format allows 100 MB).
const maxHeaderSize = 100 << 20

// tensor is a float32 tensor in row-major order.
type tensor struct {
	shape []int
	data  []float32
	// q and scale are a quantised file's int8 weight (the shape of data)
	// and its per-row scales: data[r][c] = scale[r]·q[r][c].
	q     []int8
	scale []float32
}

type tensorInfo struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// readSafetensors reads every floating-point tensor (F32, F16, BF16) of a
// safetensors file, converted to float32. Tensors of other types (such as
// the I64 position_ids buffer) are skipped.
func readSafetensors(path string) (map[string]tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	ts, err := decodeSafetensors(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return ts, nil
}

// decodeSafetensors reads a safetensors image of the given size: an 8-byte
// little-endian header length, a JSON header mapping names to dtype, shape
// and data offsets, then the data.
func decodeSafetensors(r io.ReaderAt, size int64) (map[string]tensor, error) {
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("%w: reading header length: %v", ErrBadSafetensors, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeaderSize || int64(n) > size-8 {
		return nil, fmt.Errorf("%w: header length %d (file size %d)", ErrBadSafetensors, n, size)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("%w: reading header: %v", ErrBadSafetensors, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("%w: header JSON: %v", ErrBadSafetensors, err)
	}
	base := 8 + int64(n)
	names := make([]string, 0, len(raw))
	for name := range raw {
		if name != "__metadata__" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make(map[string]tensor, len(names))
	var buf []byte
	for _, name := range names {
		var info tensorInfo
		if err := json.Unmarshal(raw[name], &info); err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %v", ErrBadSafetensors, name, err)
		}
		var width int
		switch info.DType {
		case "F32":
			width = 4
		case "F16", "BF16":
			width = 2
		default:
			continue
		}
		count := 1
		for _, d := range info.Shape {
			if d < 0 || d > math.MaxInt32 || (d > 0 && count > math.MaxInt32/d) {
				return nil, fmt.Errorf("%w: tensor %q: bad shape %v", ErrBadSafetensors, name, info.Shape)
			}
			count *= d
		}
		start, end := info.Offsets[0], info.Offsets[1]
		if start < 0 || end < start || end-start != int64(count*width) || base+end > size {
			return nil, fmt.Errorf("%w: tensor %q: offsets %v do not fit shape %v %s in a %d-byte file",
				ErrBadSafetensors, name, info.Offsets, info.Shape, info.DType, size)
		}
		if cap(buf) < int(end-start) {
			buf = make([]byte, end-start)
		}
		buf = buf[:end-start]
		if _, err := r.ReadAt(buf, base+start); err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %v", ErrBadSafetensors, name, err)
		}
		data := make([]float32, count)
		switch info.DType {
		case "F32":
			for i := range data {
				data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
		case "F16":
			for i := range data {
				data[i] = f16ToF32(binary.LittleEndian.Uint16(buf[2*i:]))
			}
		case "BF16":
			for i := range data {
				data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(buf[2*i:])) << 16)
			}
		}
		out[name] = tensor{shape: append([]int(nil), info.Shape...), data: data}
	}
	return out, nil
}

// f16ToF32 converts an IEEE 754 half-precision value to float32.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0: // ±0
		return math.Float32frombits(sign)
	default: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	}
}
