package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
)

// bigTurnData writes the mini dataset with its first turn made n bytes
// long (multi-byte runes, so that a cut can fall inside one) and returns
// its path.
func bigTurnData(t *testing.T, n int) string {
	t.Helper()
	raw, err := os.ReadFile(miniData)
	if err != nil {
		t.Fatal(err)
	}
	var wire []map[string]any
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	turn := wire[0]["conversation"].(map[string]any)["session_1"].([]any)[0].(map[string]any)
	long := turn["text"].(string) + " " + strings.Repeat("café über naïve ", n/18+1)
	long = strings.ToValidUTF8(long[:n], "")
	turn["text"] = long + strings.Repeat(".", n-len(long))
	out, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOverCapTurnDoesNotFailTheEval: a 100 KiB turn (over the engine's
// 64 KiB cap) is cut to the cap for every system, with a logged count,
// instead of failing the memory build of its conversation.
func TestOverCapTurnDoesNotFailTheEval(t *testing.T) {
	data := bigTurnData(t, 100<<10)
	var log strings.Builder
	rep, err := Run(context.Background(), Config{
		Data: data, Out: t.TempDir(), Log: &log,
		Systems: []string{"offline", "hybrid-topk", "dense-topk", "bm25-topk", "oracle"},
		Env:     Env{Embedder: hashing.New(64), K: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Systems {
		if s.Skipped != "" || s.Failed > 0 || s.FailedBuilds > 0 || s.Questions != 17 {
			t.Errorf("%s: %d questions, %d failed, %d builds failed (%s) %s", s.System, s.Questions, s.Failed, s.FailedBuilds, s.FirstError, s.Skipped)
		}
	}
	if c := rep.Runs[0].Config.CutTurns; c != 1 {
		t.Errorf("cut_turns %d, want 1", c)
	}
	if !strings.Contains(log.String(), "cut 1 turns over the engine's per-turn cap of 65536 bytes") ||
		!strings.Contains(log.String(), "the largest held 102400 bytes") {
		t.Errorf("log does not say what was cut:\n%s", log.String())
	}
	// A run without long turns cuts nothing and says nothing.
	log.Reset()
	rep, err = Run(context.Background(), Config{Data: miniData, Out: t.TempDir(), Log: &log, Systems: []string{"bm25-topk"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Config.CutTurns != 0 || strings.Contains(log.String(), "cut") {
		t.Errorf("cut turns in the mini dataset: %d, log %q", rep.Runs[0].Config.CutTurns, log.String())
	}
}
