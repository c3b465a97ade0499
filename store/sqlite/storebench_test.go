package sqlite_test

import (
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/storetest"
)

// BenchmarkStore runs storetest.Bench on a file, to compare with the
// other backends (see BENCHMARKS.md).
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return openFile(b) })
}
