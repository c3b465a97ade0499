package higmem_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store/sqlite"
)

// addAll ingests a conversation one session per Add.
func addAll(b *testing.B, m *higmem.Memory, turns []higmem.TurnInput) {
	b.Helper()
	for len(turns) > 0 {
		k := 1
		for k < len(turns) && turns[k].SessionID == turns[0].SessionID {
			k++
		}
		if _, err := m.Add(context.Background(), sp, turns[:k]); err != nil {
			b.Fatal(err)
		}
		turns = turns[k:]
	}
}

// BenchmarkAdd measures ingest per mode on 1,000 synthetic turns (scripted
// LLM answering at once, hashing embedder, in-memory store).
func BenchmarkAdd(b *testing.B) {
	conv := synth.Generate(synth.Options{Turns: 1000, Seed: 1})
	for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper} {
		b.Run(string(mode), func(b *testing.B) {
			for b.Loop() {
				o := higmem.Options{Mode: mode, Embedder: hashing.New(0)}
				if mode != higmem.ModeOffline {
					o.Memory = llmtest.NewScripted()
				}
				m, err := higmem.Open(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				addAll(b, m, conv.Turns)
				m.Close()
			}
			b.ReportMetric(float64(len(conv.Turns)*b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkRetrieve measures one retrieval per mode at 1k and 10k turns.
func BenchmarkRetrieve(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		conv := synth.Generate(synth.Options{Turns: n, Seed: 1})
		m, err := higmem.Open(context.Background(), higmem.Options{Embedder: hashing.New(0)})
		if err != nil {
			b.Fatal(err)
		}
		addAll(b, m, conv.Turns)
		for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				// Reuse the offline-built memory through an export.
				o := higmem.Options{Mode: mode, Embedder: hashing.New(0)}
				if mode != higmem.ModeOffline {
					o.Memory = llmtest.NewScripted()
				}
				rm := reopen(b, m, o)
				i := 0
				for b.Loop() {
					q := conv.Questions[i%len(conv.Questions)].Text
					i++
					if _, err := rm.Retrieve(context.Background(), sp, q, higmem.RetrieveOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		m.Close()
	}
}

// reopen copies a memory into a new one with other options.
func reopen(b *testing.B, m *higmem.Memory, o higmem.Options) *higmem.Memory {
	b.Helper()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(m.Export(context.Background(), sp, pw)) }()
	rm, err := higmem.Open(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rm.Import(context.Background(), sp, pr); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rm.Close() })
	return rm
}

// BenchmarkColdOpen measures opening a stored 10k-turn space: a new Memory
// on the SQLite file up to its first retrieval.
func BenchmarkColdOpen(b *testing.B) {
	conv := synth.Generate(synth.Options{Turns: 10000, Seed: 1})
	path := filepath.Join(b.TempDir(), "m.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m, _ := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
	addAll(b, m, conv.Turns)
	st.Close()
	for b.Loop() {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m, _ := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
		if _, err := m.Retrieve(ctx, sp, conv.Questions[0].Text, higmem.RetrieveOptions{}); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}
