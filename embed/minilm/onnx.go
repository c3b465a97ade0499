package minilm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// A BERT model exported to ONNX (as the Maven packages of e5-small-v2
// carry it) keeps its weights as the graph's initializers. The biases and
// LayerNorm parameters keep their Hugging Face names; the weights of the
// linear layers become anonymous right-hand operands of MatMul nodes
// ("onnx::MatMul_1525"), stored input-major, and get their names back from
// the node that consumes them ("/encoder/layer.0/attention/self/query/MatMul"
// is encoder.layer.0.attention.self.query.weight). readONNX reads just
// that much of the ONNX protobuf: the graph's nodes and initializers.
//
// A quantised export (ONNX Runtime's quantize_dynamic, as the jar of
// E5QuantArtifact carries e5-small-v2) keeps each linear weight as int8
// "W_quantized", the right-hand operand of a MatMulInteger node
// (".../query/MatMul_quant"), with per-column float scales "W_scale" and zero
// points "W_zero_point" (all zero); and the embedding tables as uint8
// "NAME_quantized" with one scale and zero point each, dequantised by a
// DequantizeLinear node after their Gather. readONNX returns the linear
// weights both dequantised and as int8 (tensor.q), and the tables
// dequantised.

// errONNX is wrapped by the errors of a malformed or unsupported ONNX file.
var errONNX = errors.New("minilm: unsupported ONNX model")

// ONNX TensorProto data types this reader accepts.
const (
	onnxFloat = 1
	onnxUint8 = 2
	onnxInt8  = 3
)

// readONNX reads the float weights of an ONNX file under their Hugging Face
// names, with the linear layers' weights transposed to Hugging Face's
// output-major layout.
func readONNX(path string) (map[string]tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	ts, err := decodeONNX(b)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return ts, nil
}

// onnxTensor is an initializer as stored: its name, shape and raw data.
type onnxTensor struct {
	name  string
	dims  []int
	dtype uint64
	raw   []byte
	float []float32 // float_data, when raw is empty
	ints  []int64   // int32_data (which also holds 8-bit types), when raw is empty
}

// decodeONNX decodes a serialised ModelProto (see readONNX).
func decodeONNX(b []byte) (map[string]tensor, error) {
	var graph []byte
	err := protoFields(b, func(field int, wire int, v uint64, data []byte) error {
		if field == 7 && wire == 2 {
			graph = data
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, fmt.Errorf("%w: no graph", errONNX)
	}
	var inits []onnxTensor
	matmul := map[string]string{} // initializer name → the MatMul or MatMulInteger node's name
	err = protoFields(graph, func(field int, wire int, v uint64, data []byte) error {
		switch {
		case field == 1 && wire == 2:
			return decodeNode(data, matmul)
		case field == 5 && wire == 2:
			t, err := decodeTensor(data)
			if err != nil {
				return err
			}
			inits = append(inits, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*onnxTensor, len(inits))
	for i := range inits {
		byName[inits[i].name] = &inits[i]
	}
	out := make(map[string]tensor, len(inits))
	for _, t := range inits {
		var q []int8
		var scale []float32
		var vals []float32
		var err error
		switch {
		case t.dtype == onnxFloat:
			vals, err = t.values()
		case t.dtype == onnxInt8 && matmul[t.name] != "":
			q, scale, vals, err = t.quantizedWeight(byName)
		case t.dtype == onnxUint8 && strings.HasSuffix(t.name, "_quantized"):
			vals, err = t.quantizedTable(byName)
			t.name = strings.TrimSuffix(t.name, "_quantized")
		default:
			continue // position ids, zero points and other integer constants
		}
		if err != nil {
			return nil, err
		}
		name, shape := t.name, t.dims
		if node, ok := matmul[t.name]; ok {
			if len(shape) != 2 {
				return nil, fmt.Errorf("%w: MatMul weight %s has shape %v", errONNX, t.name, shape)
			}
			name = hfLinearName(node)
			vals, shape = transpose(vals, shape[0], shape[1]), []int{shape[1], shape[0]}
			if q != nil {
				q = transpose(q, shape[1], shape[0])
			}
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: two weights named %s", errONNX, name)
		}
		out[name] = tensor{shape: shape, data: vals, q: q, scale: scale}
	}
	return out, nil
}

// decodeNode records, for a MatMul node whose second input is a weight,
// that weight's node name.
func decodeNode(b []byte, matmul map[string]string) error {
	var inputs []string
	var name, op string
	err := protoFields(b, func(field int, wire int, v uint64, data []byte) error {
		if wire != 2 {
			return nil
		}
		switch field {
		case 1:
			inputs = append(inputs, string(data))
		case 3:
			name = string(data)
		case 4:
			op = string(data)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if op == "MatMul" && len(inputs) == 2 && strings.HasSuffix(name, "/MatMul") {
		matmul[inputs[1]] = name
	}
	if op == "MatMulInteger" && len(inputs) >= 2 && strings.HasSuffix(name, "/MatMul_quant") {
		matmul[inputs[1]] = strings.TrimSuffix(name, "_quant")
	}
	return nil
}

// hfLinearName turns a MatMul node's name into its weight's Hugging Face
// name: "/encoder/layer.0/attention/self/query/MatMul" becomes
// "encoder.layer.0.attention.self.query.weight".
func hfLinearName(node string) string {
	s := strings.TrimSuffix(strings.TrimPrefix(node, "/"), "/MatMul")
	return strings.ReplaceAll(s, "/", ".") + ".weight"
}

// decodeTensor decodes a TensorProto.
func decodeTensor(b []byte) (onnxTensor, error) {
	var t onnxTensor
	err := protoFields(b, func(field int, wire int, v uint64, data []byte) error {
		switch field {
		case 1: // dims: packed or one varint each
			if wire == 0 {
				t.dims = append(t.dims, int(v))
				return nil
			}
			for len(data) > 0 {
				d, n := binary.Uvarint(data)
				if n <= 0 {
					return fmt.Errorf("%w: bad dims", errONNX)
				}
				t.dims, data = append(t.dims, int(d)), data[n:]
			}
		case 2:
			t.dtype = v
		case 4: // float_data, packed
			if wire == 5 {
				t.float = append(t.float, math.Float32frombits(uint32(v)))
				return nil
			}
			for ; len(data) >= 4; data = data[4:] {
				t.float = append(t.float, math.Float32frombits(binary.LittleEndian.Uint32(data)))
			}
		case 5: // int32_data: packed or one varint each
			if wire == 0 {
				t.ints = append(t.ints, int64(int32(v)))
				return nil
			}
			for len(data) > 0 {
				d, n := binary.Uvarint(data)
				if n <= 0 {
					return fmt.Errorf("%w: bad int32_data", errONNX)
				}
				t.ints, data = append(t.ints, int64(int32(d))), data[n:]
			}
		case 8:
			t.name = string(data)
		case 9:
			t.raw = data
		case 14:
			if v != 0 {
				return fmt.Errorf("%w: tensor %s keeps its data in an external file", errONNX, t.name)
			}
		}
		return nil
	})
	return t, err
}

// values returns the tensor's float32 values, checking their count against
// its shape.
func (t onnxTensor) values() ([]float32, error) {
	n, err := t.count()
	if err != nil {
		return nil, err
	}
	vals := t.float
	if len(t.raw) > 0 {
		if len(t.raw) != 4*n {
			return nil, fmt.Errorf("%w: tensor %s has %d bytes for shape %v", errONNX, t.name, len(t.raw), t.dims)
		}
		vals = make([]float32, n)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.raw[4*i:]))
		}
	}
	if len(vals) != n {
		return nil, fmt.Errorf("%w: tensor %s has %d values for shape %v", errONNX, t.name, len(vals), t.dims)
	}
	return vals, nil
}

// quantizedWeight reads an int8 MatMulInteger weight (in × out) and its
// per-column scales: the int8 values, the scales, and the dequantised
// weight.
func (t onnxTensor) quantizedWeight(byName map[string]*onnxTensor) (q []int8, scale, vals []float32, err error) {
	base := strings.TrimSuffix(t.name, "_quantized")
	raw, err := t.bytes(onnxInt8)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(t.dims) != 2 {
		return nil, nil, nil, fmt.Errorf("%w: MatMulInteger weight %s has shape %v", errONNX, t.name, t.dims)
	}
	cols := t.dims[1]
	st, zt := byName[base+"_scale"], byName[base+"_zero_point"]
	if st == nil || st.dtype != onnxFloat {
		return nil, nil, nil, fmt.Errorf("%w: MatMulInteger weight %s has no float scale %s_scale", errONNX, t.name, base)
	}
	if scale, err = st.values(); err != nil {
		return nil, nil, nil, err
	}
	if len(scale) == 1 {
		scale = slices.Repeat(scale, cols)
	}
	if len(scale) != cols {
		return nil, nil, nil, fmt.Errorf("%w: %s has %d scales for %d columns", errONNX, t.name, len(scale), cols)
	}
	if zt != nil {
		zp, err := zt.bytes(zt.dtype)
		if err != nil {
			return nil, nil, nil, err
		}
		if slices.ContainsFunc(zp, func(b byte) bool { return b != 0 }) {
			return nil, nil, nil, fmt.Errorf("%w: MatMulInteger weight %s has a non-zero zero point", errONNX, t.name)
		}
	}
	q = make([]int8, len(raw))
	vals = make([]float32, len(raw))
	for i, b := range raw {
		q[i] = int8(b)
		vals[i] = float32(q[i]) * scale[i%cols]
	}
	return q, scale, vals, nil
}

// quantizedTable reads a uint8 table dequantised by its one scale and zero
// point (NAME_scale, NAME_zero_point).
func (t onnxTensor) quantizedTable(byName map[string]*onnxTensor) ([]float32, error) {
	base := strings.TrimSuffix(t.name, "_quantized")
	raw, err := t.bytes(onnxUint8)
	if err != nil {
		return nil, err
	}
	st, zt := byName[base+"_scale"], byName[base+"_zero_point"]
	if st == nil || zt == nil || st.dtype != onnxFloat || zt.dtype != onnxUint8 {
		return nil, fmt.Errorf("%w: uint8 table %s has no float scale and uint8 zero point", errONNX, t.name)
	}
	sv, err := st.values()
	if err != nil {
		return nil, err
	}
	zv, err := zt.bytes(onnxUint8)
	if err != nil {
		return nil, err
	}
	if len(sv) != 1 || len(zv) != 1 {
		return nil, fmt.Errorf("%w: uint8 table %s has %d scales and %d zero points, want one each", errONNX, t.name, len(sv), len(zv))
	}
	vals := make([]float32, len(raw))
	for i, b := range raw {
		vals[i] = float32(int(b)-int(zv[0])) * sv[0]
	}
	return vals, nil
}

// bytes returns the values of an int8 or uint8 tensor of type dtype as
// bytes, checking their count against its shape.
func (t onnxTensor) bytes(dtype uint64) ([]byte, error) {
	if t.dtype != dtype {
		return nil, fmt.Errorf("%w: tensor %s has type %d, want %d", errONNX, t.name, t.dtype, dtype)
	}
	n, err := t.count()
	if err != nil {
		return nil, err
	}
	b := t.raw
	if len(b) == 0 && len(t.ints) > 0 {
		b = make([]byte, len(t.ints))
		for i, v := range t.ints {
			b[i] = byte(v)
		}
	}
	if len(b) != n {
		return nil, fmt.Errorf("%w: tensor %s has %d bytes for shape %v", errONNX, t.name, len(b), t.dims)
	}
	return b, nil
}

// count returns the number of values the tensor's shape holds.
func (t onnxTensor) count() (int, error) {
	n := 1
	for _, d := range t.dims {
		if d <= 0 || n > math.MaxInt32/d {
			return 0, fmt.Errorf("%w: tensor %s has shape %v", errONNX, t.name, t.dims)
		}
		n *= d
	}
	return n, nil
}

// transpose returns the rows×cols matrix m transposed.
func transpose[T any](m []T, rows, cols int) []T {
	out := make([]T, len(m))
	for r := range rows {
		for c := range cols {
			out[c*rows+r] = m[r*cols+c]
		}
	}
	return out
}

// protoFields calls fn for each field of a serialised protobuf message: its
// number, wire type, value (varint and fixed types) and bytes
// (length-delimited types).
func protoFields(b []byte, fn func(field, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: bad field key", errONNX)
		}
		b = b[n:]
		field, wire := int(key>>3), int(key&7)
		var v uint64
		var data []byte
		switch wire {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("%w: bad varint", errONNX)
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return fmt.Errorf("%w: truncated fixed64", errONNX)
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return fmt.Errorf("%w: truncated field %d", errONNX, field)
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return fmt.Errorf("%w: truncated fixed32", errONNX)
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		default:
			return fmt.Errorf("%w: wire type %d", errONNX, wire)
		}
		if err := fn(field, wire, v, data); err != nil {
			return err
		}
	}
	return nil
}
