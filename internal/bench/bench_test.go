package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
)

// TestRunSmall runs the whole measurement on a tiny space in every mode and
// checks that every figure is filled in and plausible.
func TestRunSmall(t *testing.T) {
	var dump bytes.Buffer
	rs, err := Run(t.Context(), Config{Sizes: []int{120}, Queries: 5, DelayQueries: 1, Delay: 1, Dir: t.TempDir(), Dump: &dump})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3 modes", len(rs))
	}
	for _, r := range rs {
		if r.Events == 0 || r.IngestEngineTPS <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.EngineP50 <= 0 || r.EngineP99 < r.EngineP50 ||
			r.ColdOpen <= 0 || r.DiskBytesPerTurn <= 0 || r.HeapBytes == 0 {
			t.Errorf("%s: incomplete result %+v", r.Mode, r)
		}
		switch r.Mode {
		case higmem.ModeOffline:
			if r.IngestCallsPerTurn != 0 || r.CallsPerQ != 0 || r.EngineP50 != r.P50 {
				t.Errorf("offline: LLM calls or engine time apart from wall: %+v", r)
			}
		case higmem.ModePaper:
			if r.IngestCallsPerTurn < 3 || r.Rounds != 4 {
				t.Errorf("paper: %.2f calls/turn, %.1f rounds; want ≥ 3 and 4", r.IngestCallsPerTurn, r.Rounds)
			}
		case higmem.ModeDefault:
			if r.IngestCallsPerTurn >= 1 || r.Rounds != 2 || r.CallsPerQ == 0 {
				t.Errorf("default: %.2f calls/turn, %.1f rounds, %.1f calls/q; want < 1, 2 and some", r.IngestCallsPerTurn, r.Rounds, r.CallsPerQ)
			}
		}
	}
	tab := Table(rs)
	if strings.Count(tab, "\n") != 11 {
		t.Errorf("tables have %d lines:\n%s", strings.Count(tab, "\n"), tab)
	}
	// One dump line per timed question, with the evidence.
	lines := strings.Split(strings.TrimSpace(dump.String()), "\n")
	if len(lines) != 3*5 {
		t.Fatalf("%d dump lines, want 15", len(lines))
	}
	var d dumped
	if err := json.Unmarshal([]byte(lines[0]), &d); err != nil || d.Question == "" || len(d.Stages) == 0 {
		t.Fatalf("dump line %q: %v", lines[0], err)
	}
}

// TestRunCapped checks the ingest cap: an LLM mode above it is measured on
// the offline-built space, or skipped without one.
func TestRunCapped(t *testing.T) {
	rs, err := Run(t.Context(), Config{Sizes: []int{60}, Modes: []higmem.Mode{higmem.ModeDefault, higmem.ModeOffline},
		MaxLLMIngest: 10, Queries: 3, DelayQueries: 1, Delay: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Mode != higmem.ModeOffline || rs[1].Mode != higmem.ModeDefault {
		t.Fatalf("results %+v, want offline then default", rs)
	}
	if d := rs[1]; d.IngestNote == "" || d.IngestWall != 0 || d.P50 <= 0 || d.EngineP50 <= 0 || d.CallsPerQ == 0 || d.Events != rs[0].Events {
		t.Errorf("default above the cap: %+v", d)
	}
	capped, err := Run(t.Context(), Config{Sizes: []int{50}, Modes: []higmem.Mode{higmem.ModePaper}, MaxLLMIngest: 10, Queries: 2, Dir: t.TempDir()})
	if err != nil || len(capped) != 1 || capped[0].Skipped == "" {
		t.Fatalf("cap without offline: %+v %v", capped, err)
	}
	if tab := Table(capped); !strings.Contains(tab, "capped") {
		t.Errorf("table does not say why:\n%s", tab)
	}
}

// TestRunReuse checks that --reuse measures a kept file without ingesting.
func TestRunReuse(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Sizes: []int{40}, Modes: []higmem.Mode{higmem.ModeOffline}, Queries: 2, Dir: dir}
	first, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Reuse = true
	again, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].IngestNote == "" || again[0].IngestWall != 0 || again[0].Events != first[0].Events || again[0].P50 <= 0 {
		t.Errorf("reuse: %+v, first %+v", again[0], first[0])
	}
}

// TestRunGap: with a gap before each timed question the run takes at
// least the gaps (offline: Queries of them, the first question is the cold
// open's) and still times every question.
func TestRunGap(t *testing.T) {
	cfg := Config{Sizes: []int{40}, Modes: []higmem.Mode{higmem.ModeOffline}, Queries: 4, Dir: t.TempDir(), Gap: 30 * time.Millisecond}
	if _, err := Run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Reuse = true
	t0 := time.Now()
	rs, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < 4*cfg.Gap || rs[0].P50 <= 0 {
		t.Errorf("4 questions with %v gaps took %v (p50 %v)", cfg.Gap, el, rs[0].P50)
	}
}

// TestRunProfileTrace: --profile and --trace write a CPU profile of each
// phase measured and a runtime trace of the timed retrievals, non-empty.
func TestRunProfileTrace(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	cfg := Config{Sizes: []int{40}, Modes: []higmem.Mode{higmem.ModeOffline}, Queries: 3, Dir: dir, ProfileDir: out, TraceDir: out}
	if _, err := Run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cpu-40-offline-ingest.pprof", "cpu-40-offline-open.pprof", "cpu-40-offline-retrieve.pprof", "trace-40-offline-retrieve.out"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		} else if fi.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
	}
}

// TestRunWritersSmall runs the many-writers measurements on tiny sizes and
// checks that every figure is filled in: each run also checks its own
// outcome (the reader sees every foreign turn, every writer's turn is
// stored once, every space answers).
func TestRunWritersSmall(t *testing.T) {
	var steps []string
	r, err := RunWriters(t.Context(), WritersConfig{
		Sizes: []int{100, 200}, Queries: 5, Foreign: []int{1, 40}, ForeignDeletes: []int{1, 10}, Repeat: 2,
		WriterTurns: 40, Spaces: 8, SpaceTurns: 20, CacheBytes: 64 << 10,
		Dir: t.TempDir(), Progress: func(s string) { steps = append(steps, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Version) != 2 || r.Version[1].Turns != 200 {
		t.Fatalf("version check rows %+v, want 100 and 200 turns", r.Version)
	}
	for _, v := range r.Version {
		if v.CheckP50 <= 0 || v.CheckP95 < v.CheckP50 || v.SearchP50 <= 0 || v.SearchP95 < v.SearchP50 || v.Operations != 5 {
			t.Errorf("incomplete version check %+v", v)
		}
	}
	if len(r.CatchUp) != 2 {
		t.Fatalf("catch-up results %+v, want one per size", r.CatchUp)
	}
	for i, c := range r.CatchUp {
		if c.BaseTurns != []int{100, 200}[i] || c.Steady <= 0 || c.Reload <= 0 || len(c.Rows) != 6 {
			t.Fatalf("catch-up %+v", c)
		}
		for j, row := range c.Rows {
			want := []struct {
				kind string
				n    int
			}{{"add", 1}, {"add", 40}, {"delete", 1}, {"delete", 10}, {"import", 1}, {"import", 40}}[j]
			if row.Kind != want.kind || row.Foreign != want.n || row.Times != 2 || row.Search <= 0 || row.Write <= 0 {
				t.Errorf("catch-up row %+v, want %s of %d, timed twice", row, want.kind, want.n)
			}
		}
	}
	if len(r.Ingest) != 3 {
		t.Fatalf("ingest rows %+v", r.Ingest)
	}
	for _, g := range r.Ingest {
		if g.Turns != 40 || g.TurnsPerSec <= 0 || g.Wall <= 0 {
			t.Errorf("ingest row %+v", g)
		}
	}
	if m := r.Memory; m == nil || m.Spaces != 8 || m.SpaceTurns != 20 || m.HeapBytes == 0 || m.Pass <= 0 || m.Build <= 0 {
		t.Errorf("memory %+v", m)
	}
	var tab bytes.Buffer
	WritersTable(&tab, r)
	for _, want := range []string{"| 200 |", "| 200 | add 40 | 2 |", "| 100 | delete 10 | 2 |", "| 200 | import 40 | 2 |", "| 4 | 4 | 40 |", "| 8 | 20 | 0 MiB |"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}

	// One part alone; the catch-up without the version run is refused.
	r, err = RunWriters(t.Context(), WritersConfig{Parts: []string{"ingest"}, WriterTurns: 8, Dir: t.TempDir()})
	if err != nil || len(r.Ingest) != 3 || r.Memory != nil || len(r.Version) != 0 || len(r.CatchUp) != 0 {
		t.Errorf("ingest alone: %+v, %v", r, err)
	}
	if _, err := RunWriters(t.Context(), WritersConfig{Parts: []string{"catchup"}}); err == nil {
		t.Error("catch-up without the version run: no error")
	}
}
