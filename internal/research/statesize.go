package research

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/store/sqlite"
)

// StateCase is one measurement of MeasureStates: K spaces of N synthetic
// turns built in Mode, with a hashing embedder of Dim dimensions (none when
// 0), loaded under Options.CacheBytes Bound.
type StateCase struct {
	Mode  higmem.Mode
	Dim   int
	K, N  int
	Bound int64
}

// MeasureStates builds the spaces of c in a SQLite file in dir, loads them
// into a fresh Memory, asks each one question, and returns the Go heap they
// take after a collection (HeapAlloc, and HeapInuse) and the cache's
// estimate of it (CacheStats.Bytes, what Options.CacheBytes bounds).
func MeasureStates(ctx context.Context, dir string, c StateCase) (heap, inuse, estimate int64, err error) {
	st, err := sqlite.Open(ctx, filepath.Join(dir, "states.db"), sqlite.Options{})
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	opts := func() higmem.Options {
		o := higmem.Options{Store: st, Mode: c.Mode, CacheBytes: c.Bound}
		if c.Dim > 0 {
			o.Embedder = hashing.New(c.Dim)
		}
		if c.Mode != higmem.ModeOffline {
			o.MemoryModel = llmfake.NewScripted()
		}
		return o
	}
	conv := synth.Generate(synth.Options{Turns: c.N, Seed: 1})
	if err := buildStates(ctx, opts(), conv, c.K); err != nil {
		return 0, 0, 0, err
	}
	questions := make([]string, c.K)
	for i := range questions {
		questions[i] = conv.Questions[0].Text
	}
	if c.Dim > 0 {
		// Store the copies' vectors (Import leaves them to the first use),
		// so that the measured loads read them.
		m, err := higmem.Open(ctx, opts())
		if err != nil {
			return 0, 0, 0, err
		}
		for i := range c.K {
			if _, err := m.Retrieve(ctx, higmem.Space{UserID: fmt.Sprint("u", i)}, "x", higmem.RetrieveOptions{}); err != nil {
				m.Close()
				return 0, 0, 0, err
			}
		}
		m.Close()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := higmem.Open(ctx, opts())
	if err != nil {
		return 0, 0, 0, err
	}
	defer m.Close()
	for i, q := range questions {
		if _, err := m.Retrieve(ctx, higmem.Space{UserID: fmt.Sprint("u", i)}, q, higmem.RetrieveOptions{}); err != nil {
			return 0, 0, 0, err
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	inuse = int64(after.HeapInuse) - int64(before.HeapInuse)
	estimate = m.CacheStats().Bytes
	runtime.KeepAlive(m)
	return heap, inuse, estimate, nil
}

// buildStates stores k spaces of conv: one built session by session, the
// others copies of it (Import of its export), which is quicker.
func buildStates(ctx context.Context, o higmem.Options, conv synth.Conversation, k int) error {
	w, err := higmem.Open(ctx, o)
	if err != nil {
		return err
	}
	defer w.Close()
	first := higmem.Space{UserID: "u0"}
	for lo := 0; lo < len(conv.Turns); {
		hi := lo + 1
		for hi < len(conv.Turns) && conv.Turns[hi].SessionID == conv.Turns[lo].SessionID {
			hi++
		}
		if _, err := w.Add(ctx, first, conv.Turns[lo:hi]); err != nil {
			return err
		}
		lo = hi
	}
	var export bytes.Buffer
	if err := w.Export(ctx, first, &export); err != nil {
		return err
	}
	for i := 1; i < k; i++ {
		if _, err := w.Import(ctx, higmem.Space{UserID: fmt.Sprint("u", i)}, bytes.NewReader(export.Bytes())); err != nil {
			return err
		}
	}
	return nil
}
