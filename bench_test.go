package higmem_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/bench"
	"github.com/higmem/higmem/internal/cputime"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store/sqlite"
)

// benchSizes returns the space sizes of the retrieval and cold-open
// benchmarks: -bench-turns (comma-separated, e.g. "1000,100000"),
// else 1,000 and 10,000. Building 100,000 turns takes about a minute;
// higmem bench measures that size by default.
func benchSizes(b *testing.B) []int {
	sizes, err := bench.ParseSizes(*benchTurns, []int{1000, 10000})
	if err != nil {
		b.Fatalf("-bench-turns: %v", err)
	}
	return sizes
}

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
					o.MemoryModel = llmtest.NewScripted()
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

// BenchmarkRetrieve measures one retrieval per mode at each size (see
// benchSizes), with the scripted LLM answering at once, on a SQLite file
// built in offline mode (as higmem bench measures LLM modes above its
// ingest cap).
func BenchmarkRetrieve(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes(b) {
		conv := synth.Generate(synth.Options{Turns: n, Seed: 1})
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
		if err != nil {
			b.Fatal(err)
		}
		addAll(b, m, conv.Turns)
		m.Close()
		for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				o := higmem.Options{Store: st, Mode: mode, Embedder: hashing.New(0)}
				if mode != higmem.ModeOffline {
					o.MemoryModel = llmtest.NewScripted()
				}
				rm, err := higmem.Open(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				defer rm.Close()
				if _, err := rm.Retrieve(ctx, sp, conv.Questions[0].Text, higmem.RetrieveOptions{}); err != nil {
					b.Fatal(err) // loads the space
				}
				i := 0
				for b.Loop() {
					q := conv.Questions[i%len(conv.Questions)].Text
					i++
					if _, err := rm.Retrieve(ctx, sp, q, higmem.RetrieveOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		st.Close()
	}
}

// BenchmarkRetrieveStored measures retrieval on a space that
// higmem bench built and kept (-bench-db, e.g. D/offline-100000.db
// after higmem bench --dir D), so that two builds time the same space
// without building it: the bench's questions in turn, wall time per
// retrieval and, on unix, the process's CPU time per retrieval
// (cpu-ms/op, which other jobs on a shared machine disturb less than the
// wall time). -bench-mode sets the mode (offline by default; an LLM
// mode with the scripted LLM answering at once, as higmem bench's).
// Skipped without -bench-db:
//
//	go test -run '^$' -bench RetrieveStored . -bench-db D/offline-100000.db [-bench-mode default]
func BenchmarkRetrieveStored(b *testing.B) {
	path := *benchDB
	if path == "" {
		b.Skip("-bench-db is not set")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	// -bench-embedder-id names the hashing embedder as another
	// model, so that the engine takes that model's paths (the learned
	// stage of e5-small-v2: "minilm:e5-small-v2:512"). The first open
	// re-embeds the space under the new name: use a copy of the file.
	// -bench-no-stage sets Ablations.NoStage.
	var emb embed.Embedder = hashing.New(0)
	if id := *benchEmbedderID; id != "" {
		emb = namedEmbedder{emb, id}
	}
	o := higmem.Options{Store: st, Embedder: emb, Mode: higmem.Mode(*benchMode),
		Ablations: higmem.Ablations{NoStage: *benchNoStage}}
	if o.Mode != higmem.ModeOffline {
		o.MemoryModel = llmtest.NewScripted()
	}
	m, err := higmem.Open(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	space := higmem.Space{UserID: "bench"} // higmem bench's space
	stats, err := m.Stats(ctx, space)
	if err != nil {
		b.Fatal(err)
	}
	if stats.Turns == 0 {
		b.Fatalf("%s: no turns in higmem bench's space", path)
	}
	conv := synth.Generate(synth.Options{Turns: stats.Turns, Seed: 1})
	warm := conv.Questions[:1] // loads the space
	if *benchWarm {
		// Every question once: what a question reads on first need (the
		// turn vectors, the annotations) is read before timing, so that
		// two runs of different lengths differ by their questions alone.
		warm = conv.Questions
	}
	for _, q := range warm {
		if _, err := m.Retrieve(ctx, space, q.Text, higmem.RetrieveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	before := cputime.Process()
	i := 0
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := m.Retrieve(ctx, space, conv.Questions[i%len(conv.Questions)].Text, higmem.RetrieveOptions{}); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		i++
	}
	if cpu := cputime.Process() - before; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(i), "cpu-ms/op")
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[(len(took)*95+99)/100-1].Microseconds())/1e3, "p95-ms")
}

// namedEmbedder is an embedder under another ID.
type namedEmbedder struct {
	embed.Embedder
	id string
}

func (e namedEmbedder) ID() string { return e.id }

// BenchmarkColdOpen measures opening a stored space of each size (see
// benchSizes): a new Memory on the SQLite file up to its first retrieval.
func BenchmarkColdOpen(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			conv := synth.Generate(synth.Options{Turns: n, Seed: 1})
			path := filepath.Join(b.TempDir(), "m.db")
			ctx := context.Background()
			st, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
			if err != nil {
				b.Fatal(err)
			}
			addAll(b, m, conv.Turns)
			st.Close()
			for b.Loop() {
				st, err := sqlite.Open(ctx, path, sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Retrieve(ctx, sp, conv.Questions[0].Text, higmem.RetrieveOptions{}); err != nil {
					b.Fatal(err)
				}
				m.Close()
				st.Close()
			}
		})
	}
}

// BenchmarkConcurrentAdds adds id-less one-turn batches to one space from 1
// and 4 writers, each a Memory with its own SQLite store on one file (as
// separate processes would be; "shared" gives the 4 Memories one store, as
// goroutines of one process would), offline mode without an embedder. It
// reports turns/s over all writers.
func BenchmarkConcurrentAdds(b *testing.B) {
	const each = 20
	for _, c := range []struct {
		writers int
		shared  bool
	}{{1, false}, {4, false}, {4, true}} {
		name := fmt.Sprint("writers=", c.writers)
		if c.shared {
			name += ",shared"
		}
		writers := c.writers
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "shared.db")
			var mems []*higmem.Memory
			var shared *sqlite.Store
			for range writers {
				s := shared
				if s == nil {
					var err error
					if s, err = sqlite.Open(context.Background(), path, sqlite.Options{}); err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					if c.shared {
						shared = s
					}
				}
				m, err := higmem.Open(context.Background(), higmem.Options{Store: s})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				mems = append(mems, m)
			}
			turns := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for w, m := range mems {
					wg.Go(func() {
						for i := range each {
							in := []higmem.TurnInput{{Speaker: "Ann", Text: fmt.Sprintf("writer %d turn %d: we talked about the garden again", w, i)}}
							if _, err := m.Add(context.Background(), sp, in); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				turns += writers * each
			}
			b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkCatchUp measures the first search after another writer (a
// second Memory on the same SQLite file) appended turns to a space of 2,000
// turns: caught up in place from the store's journal (foreign=1,
// foreign=100: turns in one Add), against a search with nothing to catch
// up (foreign=0) and loading the space afresh (reload). Offline mode, no
// embedder. `higmem bench --writers` measures deletes and imports too, at
// larger sizes.
func BenchmarkCatchUp(b *testing.B) {
	ctx := context.Background()
	conv := synth.Generate(synth.Options{Turns: 2100, Seed: 1})
	seed, extra := conv.Turns[:2000], conv.Turns[2000:]
	path := filepath.Join(b.TempDir(), "shared.db")
	var stores [2]*sqlite.Store
	for i := range stores {
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	writer, err := higmem.Open(ctx, higmem.Options{Store: stores[1]})
	if err != nil {
		b.Fatal(err)
	}
	defer writer.Close()
	addAll(b, writer, seed)
	q := conv.Questions[0].Text
	for _, n := range []int{0, 1, 100} {
		b.Run(fmt.Sprint("foreign=", n), func(b *testing.B) {
			reader, err := higmem.Open(ctx, higmem.Options{Store: stores[0]})
			if err != nil {
				b.Fatal(err)
			}
			defer reader.Close()
			if _, err := reader.Retrieve(ctx, sp, q, higmem.RetrieveOptions{}); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				if n > 0 {
					b.StopTimer()
					in := make([]higmem.TurnInput, n)
					for j := range in {
						in[j] = extra[(i*n+j)%len(extra)]
						in[j].ID = fmt.Sprintf("x%d-%d-%d", n, i, j)
					}
					if _, err := writer.Add(ctx, sp, in); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if _, err := reader.Retrieve(ctx, sp, q, higmem.RetrieveOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("reload", func(b *testing.B) {
		for b.Loop() {
			reader, err := higmem.Open(ctx, higmem.Options{Store: stores[0]})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := reader.Retrieve(ctx, sp, q, higmem.RetrieveOptions{}); err != nil {
				b.Fatal(err)
			}
			reader.Close()
		}
	})
}
