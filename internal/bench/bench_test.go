package bench

import (
	"strings"
	"testing"

	"github.com/higmem/higmem"
)

// TestRunSmall runs the whole measurement on a tiny space in every mode and
// checks that every figure is filled in and plausible.
func TestRunSmall(t *testing.T) {
	rs, err := Run(t.Context(), Config{Sizes: []int{120}, Queries: 5, DelayQueries: 1, Delay: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3 modes", len(rs))
	}
	for _, r := range rs {
		if r.Events == 0 || r.IngestEngineTPS <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.ColdOpen <= 0 || r.DiskBytesPerTurn <= 0 {
			t.Errorf("%s: incomplete result %+v", r.Mode, r)
		}
		switch r.Mode {
		case higmem.ModeOffline:
			if r.IngestCallsPerTurn != 0 || r.CallsPerQ != 0 {
				t.Errorf("offline made LLM calls: %+v", r)
			}
		case higmem.ModePaper:
			if r.IngestCallsPerTurn < 3 || r.Rounds != 4 {
				t.Errorf("paper: %.2f calls/turn, %.1f rounds; want ≥ 3 and 4", r.IngestCallsPerTurn, r.Rounds)
			}
		case higmem.ModeDefault:
			if r.IngestCallsPerTurn >= 1 || r.Rounds != 2 {
				t.Errorf("default: %.2f calls/turn, %.1f rounds; want < 1 and 2", r.IngestCallsPerTurn, r.Rounds)
			}
		}
	}
	tab := Table(rs)
	if strings.Count(tab, "\n") != 5 {
		t.Errorf("table has %d lines:\n%s", strings.Count(tab, "\n"), tab)
	}
	capped, err := Run(t.Context(), Config{Sizes: []int{50}, Modes: []higmem.Mode{higmem.ModePaper}, MaxLLMIngest: 10, Queries: 2, Dir: t.TempDir()})
	if err != nil || len(capped) != 1 || capped[0].Skipped == "" {
		t.Fatalf("cap: %+v %v", capped, err)
	}
}
