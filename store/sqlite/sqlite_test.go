package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
	"github.com/higmem/higmem/store/storetest"
)

// openFile opens a store in a new file under t.TempDir.
func openFile(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "higmem.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformanceFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFile(t) })
}

func TestConformanceMemory(t *testing.T) {
	storetest.RunOptions(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlite.Memory, sqlite.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{SerialReads: true})
}
