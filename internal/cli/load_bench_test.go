package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/synth"
)

// BenchmarkServeLoad measures `higmem serve` processes on loopback sharing
// one database: 1 and 3 servers on PostgreSQL (when HIGMEM_TEST_POSTGRES
// names one), 1 and 3 on one SQLite file, offline mode. Each sub-benchmark
// reports requests/s and p50/p95 latency; requests go round-robin to the
// servers from 8 clients at once. add posts one turn into one of 8 spaces;
// search asks a 2,000-turn space; ingest posts LoCoMo sample 0 (419 turns,
// from the file HIGMEM_LOCOMO_DATA names; skipped without it) in
// batches of 20 into one space and reports turns/s. Bounded: b.N requests
// (use -benchtime=300x), one sample.
//
//	HIGMEM_TEST_POSTGRES=postgres://... go test -run '^$' -bench BenchmarkServeLoad -benchtime 300x ./internal/cli
func BenchmarkServeLoad(b *testing.B) {
	dbs := map[string]func(b *testing.B) string{
		"sqlite": func(b *testing.B) string { return filepath.Join(b.TempDir(), "m.db") },
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		dbs["postgres"] = func(b *testing.B) string { return pgtest.SchemaDSN(b) }
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		open, ok := dbs[backend]
		if !ok {
			continue
		}
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/servers=%d", backend, n), func(b *testing.B) {
				env := map[string]string{"HIGMEM_DB": open(b), "HIGMEM_MODELS_DIR": filepath.Join(b.TempDir(), "models")}
				var clients []*api.Client
				for range n {
					_, url := startServe(b, env, "--no-auth")
					clients = append(clients, api.NewClient(url, "", nil))
				}
				seed := synth.Generate(synth.Options{Turns: 2000, Seed: 1})
				for i := 0; i < len(seed.Turns); i += 500 {
					if _, err := clients[0].Add(b.Context(), api.AddRequest{UserID: "seeded", Turns: apiTurns(seed.Turns[i:min(i+500, len(seed.Turns))])}); err != nil {
						b.Fatal(err)
					}
				}
				b.Run("add", func(b *testing.B) {
					loadRun(b, clients, func(c *api.Client, i int) error {
						_, err := c.Add(b.Context(), api.AddRequest{UserID: fmt.Sprintf("u%d", i%8), Turn: &api.TurnInput{
							Speaker: "Alice", Text: fmt.Sprintf("Load turn %d: I walked %d km by the river today.", i, i%17)}})
						return err
					})
				})
				b.Run("search", func(b *testing.B) {
					loadRun(b, clients, func(c *api.Client, i int) error {
						q := seed.Questions[i%len(seed.Questions)].Text
						_, err := c.Search(b.Context(), api.SearchRequest{UserID: "seeded", Question: q})
						return err
					})
				})
				b.Run("ingest", func(b *testing.B) { loadIngest(b, clients) })
			})
		}
	}
}

// loadRun makes b.N requests with op from 8 goroutines, round-robin over
// clients, and reports requests/s, p50-ms and p95-ms.
func loadRun(b *testing.B, clients []*api.Client, op func(c *api.Client, i int) error) {
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(clients[i%len(clients)], i); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100])/1e6, "p95-ms")
	b.ReportMetric(0, "ns/op")
}

// loadIngest posts LoCoMo sample 0 in batches of 20 (per session, in
// order within each session), sessions round-robin over the servers, all
// into one new space per iteration; it reports turns/s.
func loadIngest(b *testing.B, clients []*api.Client) {
	path := os.Getenv("HIGMEM_LOCOMO_DATA")
	if path == "" {
		b.Skip("set HIGMEM_LOCOMO_DATA to a LoCoMo file (none is in the repository)")
	}
	samples, err := locomo.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	s := samples[0]
	var batches [][]api.TurnInput
	for _, sess := range s.Sessions {
		when, _ := sess.Time()
		var cur []api.TurnInput
		for k, t := range sess.Turns {
			cur = append(cur, api.TurnInput{SessionID: fmt.Sprintf("session_%d", sess.N), Speaker: t.Speaker,
				Text: t.Content(), OccurredAt: when.Add(time.Duration(k) * time.Second)})
			if len(cur) == 20 {
				batches, cur = append(batches, cur), nil
			}
		}
		if len(cur) > 0 {
			batches = append(batches, cur)
		}
	}
	b.ResetTimer()
	var turns int
	start := time.Now()
	for it := range b.N {
		var wg sync.WaitGroup
		for ci, c := range clients {
			wg.Go(func() {
				for bi := ci; bi < len(batches); bi += len(clients) {
					if _, err := c.Add(b.Context(), api.AddRequest{UserID: fmt.Sprintf("ingest%d", it), Turns: batches[bi]}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, bt := range batches {
			turns += len(bt)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(turns)/time.Since(start).Seconds(), "turns/s")
	b.ReportMetric(0, "ns/op")
}

// apiTurns converts generated turns to the wire form.
func apiTurns(in []higmem.TurnInput) []api.TurnInput {
	out := make([]api.TurnInput, len(in))
	for i, t := range in {
		out[i] = api.TurnInput{ID: t.ID, SessionID: t.SessionID, Speaker: t.Speaker, Text: t.Text, Time: t.Time, OccurredAt: t.OccurredAt}
	}
	return out
}
