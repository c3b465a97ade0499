package vec

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// How the stores keep a vector: its float32 values, little-endian, one
// after the other (a blob in SQLite, bytea in PostgreSQL).

// EncodeLE packs values as little-endian float32s.
func EncodeLE(vs []float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// nativeLittleEndian reports whether this machine lays out a float32 in
// memory as vectors are stored, so that a stored vector can be copied into
// a []float32 byte for byte.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// DecodeLEInto unpacks len(dst) float32s from b, which holds at least
// 4*len(dst) bytes written by EncodeLE. On a little-endian machine it copies
// the bytes (loading a space decodes every vector); elsewhere it decodes
// them one by one (decodeLESlow). Both give the same bits, NaNs included.
func DecodeLEInto(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	if nativeLittleEndian && len(dst) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(b)), b)
		return
	}
	decodeLESlow(dst, b)
}

// decodeLESlow is DecodeLEInto on any machine, one value at a time.
func decodeLESlow(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// DecodeLERow decodes a stored vector into a matrix of rows of dim values,
// as a store's VectorsInto places each vector it reads: data must hold dim
// values (else row is not asked and nothing is written), and row(id) names
// the row, which must lie within dst (-1 skips the vector). It reports
// whether the vector was written.
func DecodeLERow(dst []float32, dim int, row func(id string) int, id string, data []byte) bool {
	if len(data) != 4*dim {
		return false
	}
	i := row(id)
	if i < 0 || (i+1)*dim > len(dst) {
		return false
	}
	DecodeLEInto(dst[i*dim:(i+1)*dim], data)
	return true
}
